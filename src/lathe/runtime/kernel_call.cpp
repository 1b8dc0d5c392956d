#include "lathe/runtime/kernel_call.h"

#include <cmath>

namespace lathe {

std::string EValue::describe() const {
  switch (v.index()) {
    case 0: return "None";
    case 1: return "tensor " + std::string(dtype_name(tensor().dtype)) + " " + shape_string(tensor().sizes);
    case 2: return "int " + std::to_string(to_int());
    case 3: return "float " + std::to_string(to_double());
    default: return std::string("bool ") + (to_bool() ? "true" : "false");
  }
}

Error KernelCall::arg_error(std::string_view name, const std::string& what) const {
  return make_error("argument '" + std::string(name) + "': " + what);
}

const BoundArgument* KernelCall::find(std::string_view name) const {
  for (const auto& a : args_) {
    if (a.arg->name == name) return &a;
  }
  return nullptr;
}

namespace {
template <typename L>
EValue sym_literal(const SymArg<L>& s) {
  return EValue(s.literal());
}
}  // namespace

Result<EValue> KernelCall::resolve_single(const BoundArgument& a, std::string_view name) const {
  const Argument& arg = a.arg->arg;
  int32_t slot = a.slots.empty() ? -1 : a.slots[0];
  if (arg.is<TensorRef>() || arg.is<OptionalTensor>()) {
    if (slot < 0) return EValue();
    return slots_[slot];
  }
  if (auto* i = arg.get_if<int64_t>()) return EValue(*i);
  if (auto* d = arg.get_if<double>()) return EValue(*d);
  if (auto* b = arg.get_if<bool>()) return EValue(*b);
  if (auto* s = arg.get_if<SymIntArg>()) return s->is_value() ? slots_[slot] : sym_literal(*s);
  if (auto* s = arg.get_if<SymFloatArg>()) return s->is_value() ? slots_[slot] : sym_literal(*s);
  if (auto* s = arg.get_if<SymBoolArg>()) return s->is_value() ? slots_[slot] : sym_literal(*s);
  if (arg.is_none()) return EValue();
  return arg_error(name, "unsupported argument kind for a single value");
}

bool KernelCall::has(std::string_view name) const {
  const BoundArgument* a = find(name);
  if (!a || a->arg->arg.is_none()) return false;
  if (a->arg->arg.is<OptionalTensor>()) return !a->slots.empty() && a->slots[0] >= 0;
  return true;
}

bool KernelCall::is_tensor(std::string_view name) const {
  const BoundArgument* a = find(name);
  if (!a || a->slots.empty() || a->slots[0] < 0) return false;
  if (!a->arg->arg.is<TensorRef>() && !a->arg->arg.is<OptionalTensor>()) return false;
  return slots_[a->slots[0]].is_tensor();
}

Result<const Tensor*> KernelCall::tensor(std::string_view name) const {
  LATHE_ASSIGN_OR_RETURN(const Tensor* t, optional_tensor(name));
  if (!t) return arg_error(name, find(name) ? "expected a tensor, got None" : "missing");
  return t;
}

Result<const Tensor*> KernelCall::optional_tensor(std::string_view name) const {
  const BoundArgument* a = find(name);
  if (!a || a->arg->arg.is_none()) return static_cast<const Tensor*>(nullptr);
  if (!a->arg->arg.is<TensorRef>() && !a->arg->arg.is<OptionalTensor>()) {
    return arg_error(name, "expected a tensor argument");
  }
  if (a->slots.empty() || a->slots[0] < 0) return static_cast<const Tensor*>(nullptr);
  const EValue& v = slots_[a->slots[0]];
  if (!v.is_tensor()) return arg_error(name, "expected a tensor, got " + v.describe());
  return &v.tensor();
}

Result<std::vector<const Tensor*>> KernelCall::tensor_list(std::string_view name, bool allow_none) const {
  const BoundArgument* a = find(name);
  if (!a) return arg_error(name, "missing");
  if (!a->arg->arg.is<TensorList>() && !a->arg->arg.is<OptionalTensorList>()) {
    return arg_error(name, "expected a list of tensors");
  }
  std::vector<const Tensor*> out;
  for (int32_t s : a->slots) {
    if (s < 0) {
      if (!allow_none) return arg_error(name, "None in a tensor list");
      out.push_back(nullptr);
      continue;
    }
    if (!slots_[s].is_tensor()) return arg_error(name, "expected tensors, got " + slots_[s].describe());
    out.push_back(&slots_[s].tensor());
  }
  return out;
}

Result<std::optional<int64_t>> KernelCall::optional_int(std::string_view name) const {
  const BoundArgument* a = find(name);
  if (!a) return std::optional<int64_t>();
  LATHE_ASSIGN_OR_RETURN(EValue v, resolve_single(*a, name));
  if (v.is_none()) return std::optional<int64_t>();
  if (v.is_int()) return std::optional<int64_t>(v.to_int());
  if (v.is_bool()) return std::optional<int64_t>(v.to_bool() ? 1 : 0);
  return arg_error(name, "expected an int, got " + v.describe());
}

Result<int64_t> KernelCall::int_arg(std::string_view name) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_int(name));
  if (!v) return arg_error(name, "missing");
  return *v;
}

Result<int64_t> KernelCall::int_arg(std::string_view name, int64_t default_value) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_int(name));
  return v ? *v : default_value;
}

Result<std::optional<std::vector<int64_t>>> KernelCall::optional_int_list(std::string_view name) const {
  using Out = std::optional<std::vector<int64_t>>;
  const BoundArgument* a = find(name);
  if (!a || a->arg->arg.is_none()) return Out();
  const Argument& arg = a->arg->arg;
  if (auto* l = arg.get_if<IntList>()) return Out(l->items);
  if (auto* l = arg.get_if<SymIntList>()) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < l->items.size(); ++i) {
      const SymIntArg& s = l->items[i];
      if (!s.is_value()) {
        out.push_back(s.literal());
        continue;
      }
      const EValue& v = slots_[a->slots[i]];
      if (!v.is_int()) return arg_error(name, "item " + std::to_string(i) + " is " + v.describe());
      out.push_back(v.to_int());
    }
    return Out(std::move(out));
  }
  LATHE_ASSIGN_OR_RETURN(EValue v, resolve_single(*a, name));
  if (v.is_int()) return Out(std::vector<int64_t>{v.to_int()});
  return arg_error(name, "expected a list of ints");
}

Result<std::vector<int64_t>> KernelCall::int_list(std::string_view name) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_int_list(name));
  if (!v) return arg_error(name, "missing");
  return std::move(*v);
}

Result<std::vector<int64_t>> KernelCall::int_list(std::string_view name, std::vector<int64_t> default_value) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_int_list(name));
  return v ? std::move(*v) : std::move(default_value);
}

Result<std::optional<Scalar>> KernelCall::optional_scalar(std::string_view name) const {
  const BoundArgument* a = find(name);
  if (!a) return std::optional<Scalar>();
  LATHE_ASSIGN_OR_RETURN(EValue v, resolve_single(*a, name));
  if (v.is_none()) return std::optional<Scalar>();
  if (v.is_int()) return std::optional<Scalar>(Scalar::from_int(v.to_int()));
  if (v.is_double()) return std::optional<Scalar>(Scalar::from_double(v.to_double()));
  if (v.is_bool()) return std::optional<Scalar>(Scalar::from_bool(v.to_bool()));
  return arg_error(name, "expected a number, got " + v.describe());
}

Result<Scalar> KernelCall::scalar(std::string_view name, std::optional<Scalar> default_value) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_scalar(name));
  if (v) return *v;
  if (default_value) return *default_value;
  return arg_error(name, "missing");
}

Result<std::optional<double>> KernelCall::optional_double(std::string_view name) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_scalar(name));
  if (!v) return std::optional<double>();
  return std::optional<double>(v->to_double());
}

Result<double> KernelCall::double_arg(std::string_view name, std::optional<double> default_value) const {
  LATHE_ASSIGN_OR_RETURN(auto v, optional_double(name));
  if (v) return *v;
  if (default_value) return *default_value;
  return arg_error(name, "missing");
}

Result<bool> KernelCall::bool_arg(std::string_view name, std::optional<bool> default_value) const {
  const BoundArgument* a = find(name);
  if (a) {
    LATHE_ASSIGN_OR_RETURN(EValue v, resolve_single(*a, name));
    if (v.is_bool()) return v.to_bool();
    if (v.is_int()) return v.to_int() != 0;
    if (!v.is_none()) return arg_error(name, "expected a bool, got " + v.describe());
  }
  if (default_value) return *default_value;
  return arg_error(name, "missing");
}

Result<std::string> KernelCall::string_arg(std::string_view name, std::optional<std::string> default_value) const {
  const BoundArgument* a = find(name);
  if (a) {
    if (auto* s = a->arg->arg.get_if<std::string>()) return *s;
    if (!a->arg->arg.is_none()) return arg_error(name, "expected a string");
  }
  if (default_value) return *default_value;
  return arg_error(name, "missing");
}

Result<std::optional<DType>> KernelCall::dtype_arg(std::string_view name) const {
  const BoundArgument* a = find(name);
  if (!a || a->arg->arg.is_none()) return std::optional<DType>();
  if (auto* s = a->arg->arg.get_if<ScalarTypeArg>()) return std::optional<DType>(s->dtype);
  return arg_error(name, "expected a dtype");
}

Result<EValue> KernelCall::arg_value(size_t index) const {
  if (index >= args_.size()) return make_error("argument #" + std::to_string(index) + " missing");
  return resolve_single(args_[index], args_[index].arg->name);
}

Result<std::vector<EValue>> KernelCall::arg_items(size_t index) const {
  if (index >= args_.size()) return make_error("argument #" + std::to_string(index) + " missing");
  const BoundArgument& a = args_[index];
  const Argument& arg = a.arg->arg;
  if (!arg.is<TensorList>() && !arg.is<OptionalTensorList>()) {
    LATHE_ASSIGN_OR_RETURN(EValue v, resolve_single(a, a.arg->name));
    return std::vector<EValue>{std::move(v)};
  }
  std::vector<EValue> items;
  items.reserve(a.slots.size());
  for (int32_t s : a.slots) items.push_back(s >= 0 ? slots_[s] : EValue());
  return items;
}

Result<Tensor*> KernelCall::alloc_output(size_t index, DType dtype, const std::vector<int64_t>& sizes) {
  if (index >= outputs_.size()) {
    return make_error("output #" + std::to_string(index) + " out of range (node has " +
                      std::to_string(outputs_.size()) + ")");
  }
  for (int64_t s : sizes) {
    if (s < 0) return make_error("negative output size in " + shape_string(sizes));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor t, allocator_.allocate(index, dtype, sizes));
  int32_t slot = outputs_[index];
  if (slot < 0) {
    // An output the graph does not name (None in the schema): keep it in a
    // scratch slot so the pointer stays valid; nothing reads it.
    scratch_.push_back(std::move(t));
    return &scratch_.back();
  }
  slots_[slot] = EValue(std::move(t));
  return &slots_[slot].tensor();
}

Status KernelCall::set_output(size_t index, EValue value) {
  if (index >= outputs_.size()) {
    return make_error("output #" + std::to_string(index) + " out of range (node has " +
                      std::to_string(outputs_.size()) + ")");
  }
  if (outputs_[index] >= 0) slots_[outputs_[index]] = std::move(value);
  return Status::Ok();
}

}  // namespace lathe
