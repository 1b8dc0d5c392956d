// Op name -> kernel. The executor dispatches every node through a registry;
// the portable kernels (runtime/kernels/) fill the default one, and later
// kernel libraries (XNNPACK, quantized) copy it and override entries.
//
// A registered kernel is an *adapter*: it reads the node's arguments through
// a KernelCall, computes output shapes, asks the executor for output memory
// and calls an out-variant kernel function (kernels/*.h), which tests can
// also call directly.
#pragma once

#include <map>
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

struct KernelInfo {
  KernelFn fn = nullptr;
  OutputAlias alias = OutputAlias::None;
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
