// Op name -> kernel. The executor dispatches every node through a registry;
// the portable kernels (runtime/kernels/) fill the default one, and later
// kernel libraries (XNNPACK, quantized) copy it and override entries.
//
// A registered kernel is an *adapter*: it reads the node's arguments through
// a KernelCall, computes output shapes, asks the executor for output memory
// and calls an out-variant kernel function (kernels/*.h), which tests can
// also call directly.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/runtime/kernel_call.h"

namespace lathe {

// Whether a kernel's tensor outputs may share storage with its tensor
// inputs. The memory planner keeps an aliased input alive as long as the
// output and never places a None output over a live input.
enum class OutputAlias {
  None,       // outputs are fresh memory
  View,       // outputs are views of the inputs (view, permute, split...)
  MaybeView,  // a view when the strides allow, else a copy (reshape, contiguous)
};

using KernelFn = Status (*)(KernelCall&);

// What a kernel derives once, when the executor plans a node, from operands
// that are constants of the program: a weight repacked into the layout the
// kernel's inner loop streams. The plan holds it for the executor's lifetime
// and hands it to every call (KernelCall::prepared()); the program and its
// saved weights are untouched.
struct PreparedState {
  virtual ~PreparedState() = default;
};

// At plan time: the tensor a node's named argument is bound to, when that
// argument is a parameter, a lifted constant or a buffer the program never
// mutates; nullptr for anything else (a runtime value, a mutated buffer).
using ConstantOperand = std::function<const Tensor*(std::string_view arg)>;

// nullptr state: nothing to prepare (the kernel works from its arguments).
// An error fails Executor::create, naming the node.
using PrepareFn = Result<std::shared_ptr<const PreparedState>> (*)(const Node&, const ConstantOperand&);

struct KernelInfo {
  KernelFn fn = nullptr;
  OutputAlias alias = OutputAlias::None;
  PrepareFn prepare = nullptr;
};

class KernelRegistry {
 public:
  // `op` as Node::op_name() spells it: "aten.addmm.default",
  // "_operator.mul"; a leading "torch.ops." is dropped. Replaces an entry.
  void set(std::string op, KernelInfo info);
  // By a node target (with or without "torch.ops."); nullptr if none.
  const KernelInfo* find(std::string_view target) const;
  std::vector<std::string> ops() const;
  size_t size() const { return kernels_.size(); }

 private:
  std::map<std::string, KernelInfo, std::less<>> kernels_;
};

// Every portable kernel. Built once, read-only afterwards, so executors on
// several threads may share it.
const KernelRegistry& portable_kernels();

}  // namespace lathe
