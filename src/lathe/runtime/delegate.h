// Delegates: the runtime's half of the backend interface.
//
// A lowered program replaces a group of nodes by one delegate-call node
//
//   outs... = lathe.delegate.<backend>(payload=<uint8 constant>, inputs=[v0, v1, ...])
//
// whose `payload` is a lifted uint8 tensor constant (the backend's record,
// written once as a constants record of the archive) and whose `inputs` are
// every value the group reads — runtime values and constant weights alike,
// so a weight stays in the program's state once and the payload refers to it
// by position. The runtime owns this interface so it can execute such a
// node without knowing any backend: backends (src/lathe/backends) implement
// DelegateRuntime, the CLI puts them in a DelegateRegistry and hands it to
// the Executor (ExecutorOptions::delegates).
//
//   Executor::create  -> DelegateRuntime::init(node, payload, operands)   prepack, per node, once
//   Executor::run     -> DelegateHandle::execute(call)                    per call
//   ~Executor         -> ~DelegateHandle                                  destroy
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/runtime/kernel_call.h"

namespace lathe {

inline constexpr std::string_view kDelegateTargetPrefix = ops::lathe_ops::kDelegatePrefix;

// "xnnpack" for "lathe.delegate.xnnpack" (with or without "torch.ops."), else "".
std::string_view delegate_backend_name(std::string_view target);

// One entry of the node's `inputs` list, as the executor sees it at create().
struct DelegateOperand {
  const Value* value = nullptr;
  // The tensor bound from the program's state (parameter, buffer, lifted
  // constant) when the operand is a placeholder of one; nullptr for user
  // inputs and computed values. A mutated buffer is bound too (its initial
  // value): deciding what is a compile-time constant is the backend's job.
  const Tensor* state = nullptr;
};

struct DelegateInitArgs {
  const ExportedProgram& program;
  const Node& node;
  std::span<const std::byte> payload;
  std::vector<DelegateOperand> operands;  // aligned with the node's `inputs`
};

// One initialised delegate node. execute() reads the node's `inputs` through
// the call (call.tensor_list("inputs")) and writes every output with
// call.alloc_output(i, ...). Destroyed with the executor.
class DelegateHandle {
 public:
  virtual ~DelegateHandle() = default;
  virtual Status execute(KernelCall& call) = 0;
};

class DelegateRuntime {
 public:
  virtual ~DelegateRuntime() = default;
  virtual std::string_view name() const = 0;
  virtual Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const = 0;
};

// Backend name -> runtime. Holds pointers; the runtimes outlive it.
class DelegateRegistry {
 public:
  void add(const DelegateRuntime* runtime);
  const DelegateRuntime* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, const DelegateRuntime*, std::less<>> runtimes_;
};

// Initialises the delegate-call node `n` of `program` with `runtime`: its
// payload (a uint8 constant of the program) and, per operand, the state
// tensor it is bound to. What Executor::create does per delegate node, and
// what lower does to check the delegates it made load.
Result<std::unique_ptr<DelegateHandle>> init_delegate_node(const DelegateRuntime& runtime, const ExportedProgram& program,
                                                           const Node& n);

}  // namespace lathe
