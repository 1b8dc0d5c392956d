// A KernelCall is one node's view of the running program: its arguments,
// resolved from the executor's slots (tensors, symbolic ints) or taken from
// the graph (literals), and its outputs.
//
// Arguments are looked up by schema name ("self", "other", "dim"); an
// argument missing from the node is at its schema default, which the kernel
// supplies (exported graphs omit defaulted arguments).
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/node.h"
#include "lathe/runtime/evalue.h"

namespace lathe {

// Output memory for a node, provided by the executor (planned slots) or by
// a test harness.
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  // A contiguous tensor for output `index` of the current node. Its
  // contents are unspecified: kernels write every element.
  virtual Result<Tensor> allocate(size_t index, DType dtype, const std::vector<int64_t>& sizes) = 0;
};

// A node argument with its slots: one per item of a list argument (Tensor[],
// Tensor?[], SymInt[]...), one for any other; -1 where the item is a
// literal or None.
struct BoundArgument {
  const NamedArgument* arg = nullptr;
  std::vector<int32_t> slots;
};

struct PreparedState;  // kernel_registry.h

class KernelCall {
 public:
  KernelCall(const Node& node, const std::vector<BoundArgument>& args, const std::vector<int32_t>& outputs,
             std::vector<EValue>& slots, OutputAllocator& allocator, const PreparedState* prepared = nullptr)
      : node_(node), args_(args), outputs_(outputs), slots_(slots), allocator_(allocator), prepared_(prepared) {}

  const Node& node() const { return node_; }
  // What the kernel's PrepareFn made for this node at plan time; nullptr if
  // it has none or made nothing.
  const PreparedState* prepared() const { return prepared_; }

  // ---- arguments ---------------------------------------------------------
  // True if the node passes `name` and it is not None.
  bool has(std::string_view name) const;
  // True if `name` is a tensor (a Scalar-or-Tensor slot, e.g. add's other).
  bool is_tensor(std::string_view name) const;
  Result<const Tensor*> tensor(std::string_view name) const;
  // nullptr when absent or None.
  Result<const Tensor*> optional_tensor(std::string_view name) const;
  // Tensor[]; with `allow_none`, None items (Tensor?[]) come back nullptr.
  Result<std::vector<const Tensor*>> tensor_list(std::string_view name, bool allow_none = false) const;
  Result<int64_t> int_arg(std::string_view name) const;
  Result<int64_t> int_arg(std::string_view name, int64_t default_value) const;
  Result<std::optional<int64_t>> optional_int(std::string_view name) const;
  // int[] / SymInt[]; a single int counts as a one-element list.
  Result<std::vector<int64_t>> int_list(std::string_view name) const;
  Result<std::vector<int64_t>> int_list(std::string_view name, std::vector<int64_t> default_value) const;
  Result<std::optional<std::vector<int64_t>>> optional_int_list(std::string_view name) const;
  Result<double> double_arg(std::string_view name, std::optional<double> default_value = std::nullopt) const;
  Result<std::optional<double>> optional_double(std::string_view name) const;
  Result<bool> bool_arg(std::string_view name, std::optional<bool> default_value = std::nullopt) const;
  Result<Scalar> scalar(std::string_view name, std::optional<Scalar> default_value = std::nullopt) const;
  Result<std::optional<Scalar>> optional_scalar(std::string_view name) const;
  Result<std::string> string_arg(std::string_view name, std::optional<std::string> default_value = std::nullopt) const;
  Result<std::optional<DType>> dtype_arg(std::string_view name) const;

  // Positional access, for Python-operator targets ("_operator.mul") whose
  // argument names are not part of any ATen schema.
  size_t arg_count() const { return args_.size(); }
  Result<EValue> arg_value(size_t index) const;
  // Every item of positional argument `index` (a list gives one EValue per
  // item, None for None items; a single value gives one). For higher-order
  // ops, whose arguments are unnamed and whose operands are Tensor[].
  Result<std::vector<EValue>> arg_items(size_t index) const;

  // ---- outputs -----------------------------------------------------------
  // Output positions flatten the node's outputs (a Tensor[] output counts
  // once per item).
  size_t output_count() const { return outputs_.size(); }
  // A fresh contiguous output stored in output slot `index`; the pointer is
  // valid until the next output is stored.
  Result<Tensor*> alloc_output(size_t index, DType dtype, const std::vector<int64_t>& sizes);
  // Stores a view, an input passed through, or a symbolic result.
  Status set_output(size_t index, EValue value);

  // "argument 'dim' of aten.sum.dim_IntList: <what>" style errors.
  Error arg_error(std::string_view name, const std::string& what) const;

 private:
  const BoundArgument* find(std::string_view name) const;
  Result<EValue> resolve_single(const BoundArgument& a, std::string_view name) const;

  const Node& node_;
  const std::vector<BoundArgument>& args_;
  const std::vector<int32_t>& outputs_;
  std::vector<EValue>& slots_;
  OutputAllocator& allocator_;
  const PreparedState* prepared_ = nullptr;
  std::list<Tensor> scratch_;  // outputs the graph does not name (stable addresses)
};

}  // namespace lathe
