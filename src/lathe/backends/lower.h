// Lowering a program to a backend, method by method:
//
//   decompose(keep = backend.ops_to_keep())
//   addmm_mm_to_linear, remove_dead_code   (addmm(b, x, t(w)) -> linear(x, w, b):
//                                           the form backends prepack, §2)
//   partition(backend)                     claimed groups -> delegate-call nodes
//   verify
//
// The result is an ordinary Program: write it with write_pt2, run it with an
// Executor given a DelegateRegistry that has the backend.
#pragma once

#include <optional>

#include <string>
#include <vector>

#include "lathe/backends/backend.h"
#include "lathe/backends/partitioner.h"
#include "lathe/ir/program.h"
#include "lathe/passes/pass.h"

namespace lathe {

struct MethodLowering {
  std::string method;
  PartitionReport report;
};

struct LowerResult {
  std::vector<MethodLowering> methods;
  std::vector<ExplainRecord> pass_records;  // what the pre-passes rewrote or kept, and why
};

// Every method, or only `method` when not empty.
Result<LowerResult> lower_program(Program& program, const Backend& backend, const std::string& method = "");

// One line per node: "claimed (delegate 0): fully_connected, ..." or "not claimed: <why>".
std::string explain_lowering(const MethodLowering& m);
// One node's line of explain_lowering, without its newline:
// "model: aten.mm.default 'mm' not claimed: <why>".
std::string explain_decision(const std::string& method, const NodeDecision& d);

// A registry with every backend Lathe ships (xnnpack, vulkan).
const DelegateRegistry& builtin_delegates();
// The built-in backends and every one registered so far (a copy: later
// registrations do not change it).
DelegateRegistry all_delegates();
// By name ("xnnpack", "vulkan", or a registered one); nullptr if unknown.
const Backend* find_backend(const std::string& name);
// Adds a backend of the caller's own, process-wide and for the rest of the
// process (lowered programs may refer to it by name). Its name must be new
// and not empty.
Status register_backend(std::shared_ptr<const Backend> backend);

}  // namespace lathe
