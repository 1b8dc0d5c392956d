// Executor: runs one method of a loaded program on the portable kernels (or
// any KernelRegistry).
//
//   auto ex = Executor::create(ep);          // plan once: kernels, slots, memory
//   auto out = (*ex)->run({x});              // run many times
//
// * Inputs and outputs are the *user* inputs and outputs, in signature
//   order. Parameters, constants and buffers are bound from the program's
//   state, read in place from the mapped weights (never copied).
// * Buffer mutations are written back after every call into state the
//   executor owns (a buffer is copied out of the mapped file the first time
//   it is written), so the next call sees them. The ExportedProgram is only
//   read: several executors may run concurrently over one loaded program.
// * An op with no kernel fails create(), naming every such op and node.
// * Every call is checked before it runs (input_check.h): dtype, rank and
//   static sizes, and each symbolic dim against its symbol's range.
// * Sizes are those of the call: kernels size their outputs from their
//   inputs, and buffers of symbolic-size intermediates grow to the largest
//   call seen (graph_plan.h). torch.cond / while_loop run their subgraphs
//   (control_flow.h).
// * The program must outlive the executor. One executor runs one call at a
//   time; use one executor per thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
#include "lathe/runtime/delegate.h"
#include "lathe/runtime/evalue.h"
#include "lathe/runtime/graph_plan.h"
#include "lathe/runtime/input_check.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

struct ExecutorOptions {
  const KernelRegistry* kernels = nullptr;  // nullptr: portable_kernels()
  // Let intermediates share buffers when their lifetimes allow; off, every
  // kernel output gets fresh memory on every call (for isolating planner bugs).
  bool plan_memory = true;
  // Runs lathe.delegate.<backend> nodes (see delegate.h); nullptr: a
  // program with delegate nodes fails create(), naming them.
  const DelegateRegistry* delegates = nullptr;
  // GraphPlanOptions::max_loop_iterations: a while_loop still running after
  // this many iterations is an error naming the node.
  int64_t max_loop_iterations = int64_t{1} << 24;
  // GraphPlanOptions::max_elements_per_node: a node that would touch more
  // elements (broadcast views at their full size) is an error naming it.
  int64_t max_elements_per_node = kDefaultMaxElementsPerNode;
  // GraphPlanOptions::interrupted.
  std::function<bool()> interrupted;
};

class Executor {
 public:
  static Result<std::unique_ptr<Executor>> create(const ExportedProgram& program, ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // User inputs in, user outputs out (tensors, or ints for SymInt inputs
  // and outputs). Returned tensors may be views of the inputs or of the
  // program's weights; they never alias memory the next call reuses.
  Result<std::vector<EValue>> run(const std::vector<EValue>& inputs);
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);

  const std::vector<IoInfo>& user_inputs() const;
  const std::vector<IoInfo>& user_outputs() const;
  // The current value of a buffer (after the calls so far), or nullptr.
  const Tensor* buffer(const std::string& name) const;
  // Names of the buffers the program mutates, in output order.
  std::vector<std::string> mutated_buffers() const;
  // Forgets every buffer mutation: back to the program's initial state.
  void reset_state();
  const MemoryStats& memory_stats() const;

  struct Impl;

 private:
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lathe
