// Symbolic-shape ops: sizes and strides read at run time, the Python
// operators torch.export emits for arithmetic on SymInts ("_operator.mul",
// "torch.sym_max"...), scalar extraction and runtime assertions.
#include <cmath>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

namespace {

// sym_size.int / sym_stride.int: one of self's sizes or strides.
template <bool kStride>
Status sym_dim_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(self->sizes.size())));
  if (self->sizes.empty()) return make_error(std::string(kStride ? "sym_stride" : "sym_size") + ": a 0-d tensor has no dims");
  return c.set_output(0, EValue(kStride ? self->strides[d] : self->sizes[d]));
}

Status sym_numel_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  return c.set_output(0, EValue(self->numel()));
}

Status sym_storage_offset_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  return c.set_output(0, EValue(self->storage_offset));
}

// A number from an EValue: ints and bools stay integral.
struct Num {
  bool is_int;
  int64_t i;
  double d;
};

Result<Num> num(const EValue& v) {
  if (v.is_int()) return Num{true, v.to_int(), static_cast<double>(v.to_int())};
  if (v.is_bool()) return Num{true, v.to_bool() ? 1 : 0, v.to_bool() ? 1.0 : 0.0};
  if (v.is_double()) return Num{false, saturating_cast<int64_t>(v.to_double()), v.to_double()};
  return make_error("expected a number, got " + v.describe());
}

enum class PyOp { Add, Sub, Mul, FloorDiv, Mod, TrueDiv, Pow, Max, Min, Eq, Ne, Lt, Le, Gt, Ge, And, Or };

// Python's integers never overflow; Lathe's symbolic integers are int64, so
// a result that does not fit is an error, never a wrapped (wrong) size.
Status exact(KernelCall& c, std::optional<int64_t> r, int64_t a, const char* op, int64_t b) {
  if (!r) {
    if (b == 0 && (std::string_view(op) == "//" || std::string_view(op) == "%")) return make_error("integer division by zero");
    return make_error("integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) +
                      " does not fit in 64 bits");
  }
  return c.set_output(0, EValue(*r));
}

template <PyOp op>
Status py_binary(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(EValue av, c.arg_value(0));
  LATHE_ASSIGN_OR_RETURN(EValue bv, c.arg_value(1));
  LATHE_ASSIGN_OR_RETURN(Num a, num(av));
  LATHE_ASSIGN_OR_RETURN(Num b, num(bv));
  const bool ints = a.is_int && b.is_int;
  auto out = [&](auto v) { return c.set_output(0, EValue(v)); };
  switch (op) {
    case PyOp::Add: return ints ? exact(c, checked_add(a.i, b.i), a.i, "+", b.i) : out(a.d + b.d);
    case PyOp::Sub: return ints ? exact(c, checked_sub(a.i, b.i), a.i, "-", b.i) : out(a.d - b.d);
    case PyOp::Mul: return ints ? exact(c, checked_mul(a.i, b.i), a.i, "*", b.i) : out(a.d * b.d);
    case PyOp::FloorDiv:
    case PyOp::Mod:
      if (ints) {
        if (op == PyOp::FloorDiv) return exact(c, checked_floor_div(a.i, b.i), a.i, "//", b.i);
        return exact(c, checked_floor_mod(a.i, b.i), a.i, "%", b.i);
      } else {
        const double q = std::floor(a.d / b.d);
        return op == PyOp::FloorDiv ? out(q) : out(a.d - q * b.d);
      }
    case PyOp::TrueDiv: return out(a.d / b.d);
    case PyOp::Pow:
      if (ints && b.i >= 0) return exact(c, checked_pow(a.i, b.i), a.i, "**", b.i);
      return out(std::pow(a.d, b.d));
    case PyOp::Max: return ints ? out(std::max(a.i, b.i)) : out(std::max(a.d, b.d));
    case PyOp::Min: return ints ? out(std::min(a.i, b.i)) : out(std::min(a.d, b.d));
    case PyOp::Eq: return out(ints ? a.i == b.i : a.d == b.d);
    case PyOp::Ne: return out(ints ? a.i != b.i : a.d != b.d);
    case PyOp::Lt: return out(ints ? a.i < b.i : a.d < b.d);
    case PyOp::Le: return out(ints ? a.i <= b.i : a.d <= b.d);
    case PyOp::Gt: return out(ints ? a.i > b.i : a.d > b.d);
    case PyOp::Ge: return out(ints ? a.i >= b.i : a.d >= b.d);
    case PyOp::And: return out(a.d != 0 && b.d != 0);
    case PyOp::Or: return out(a.d != 0 || b.d != 0);
  }
  return make_error("unknown operator");
}

enum class PyUnary { Neg, Not, Ceil, Floor, ToFloat, ToInt, Sqrt };

template <PyUnary op>
Status py_unary(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(EValue av, c.arg_value(0));
  LATHE_ASSIGN_OR_RETURN(Num a, num(av));
  switch (op) {
    case PyUnary::Neg: return a.is_int ? exact(c, checked_sub(0, a.i), 0, "-", a.i) : c.set_output(0, EValue(-a.d));
    case PyUnary::Not: return c.set_output(0, EValue(a.d == 0));
    case PyUnary::Ceil: return c.set_output(0, EValue(a.is_int ? a.i : static_cast<int64_t>(std::ceil(a.d))));
    case PyUnary::Floor: return c.set_output(0, EValue(a.is_int ? a.i : static_cast<int64_t>(std::floor(a.d))));
    case PyUnary::ToFloat: return c.set_output(0, EValue(a.d));
    case PyUnary::ToInt: return c.set_output(0, EValue(a.is_int ? a.i : static_cast<int64_t>(a.d)));
    case PyUnary::Sqrt: return c.set_output(0, EValue(std::sqrt(a.d)));
  }
  return make_error("unknown operator");
}

// aten._local_scalar_dense / item: the single element of a tensor.
Status item_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  if (self->numel() != 1) return make_error("item: tensor with " + std::to_string(self->numel()) + " elements");
  if (self->dtype == DType::Bool) return c.set_output(0, EValue(*cdata<bool>(*self)));
  const Tensor d = as_dtype(*self, DType::Float64);
  if (is_integral(self->dtype, false)) {
    const Tensor i = as_dtype(*self, DType::Int64);
    return c.set_output(0, EValue(*cdata<int64_t>(i)));
  }
  return c.set_output(0, EValue(*cdata<double>(d)));
}

Status assert_scalar_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(EValue v, c.arg_value(0));
  LATHE_ASSIGN_OR_RETURN(Num n, num(v));
  if (n.d == 0) {
    LATHE_ASSIGN_OR_RETURN(std::string msg, c.string_arg("assert_msg", std::string("assertion failed")));
    return make_error("runtime assertion failed: " + msg);
  }
  return Status::Ok();
}

Status assert_async_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  const Tensor b = as_dtype(*self, DType::Bool);
  if (self->numel() != 1 || !*cdata<bool>(b)) {
    LATHE_ASSIGN_OR_RETURN(std::string msg, c.string_arg("assert_msg", std::string("assertion failed")));
    return make_error("runtime assertion failed: " + msg);
  }
  return Status::Ok();
}

// sym_constrain_range(size, min, max): checks the value is in range.
Status constrain_range_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(int64_t v, c.int_arg("size"));
  LATHE_ASSIGN_OR_RETURN(auto lo, c.optional_int("min"));
  LATHE_ASSIGN_OR_RETURN(auto hi, c.optional_int("max"));
  if ((lo && v < *lo) || (hi && v > *hi)) {
    return make_error("value " + std::to_string(v) + " outside its constrained range [" +
                      (lo ? std::to_string(*lo) : std::string("-inf")) + ", " + (hi ? std::to_string(*hi) : std::string("inf")) +
                      "]");
  }
  return Status::Ok();
}

Status noop_kernel(KernelCall&) { return Status::Ok(); }

}  // namespace

void register_sym_kernels(KernelRegistry& r) {
  register_overloads(r, "sym_size", {"int"}, sym_dim_kernel<false>);
  register_overloads(r, "sym_stride", {"int"}, sym_dim_kernel<true>);
  register_overloads(r, "sym_numel", {"default"}, sym_numel_kernel);
  register_overloads(r, "sym_storage_offset", {"default"}, sym_storage_offset_kernel);
  register_overloads(r, "_local_scalar_dense", {"default"}, item_kernel);
  register_overloads(r, "item", {"default"}, item_kernel);
  register_overloads(r, "_assert_scalar", {"default"}, assert_scalar_kernel);
  register_overloads(r, "_assert_async", {"msg"}, assert_async_kernel);
  register_overloads(r, "sym_constrain_range", {"default"}, constrain_range_kernel);
  register_overloads(r, "sym_constrain_range_for_size", {"default"}, constrain_range_kernel);
  register_overloads(r, "_assert_tensor_metadata", {"default"}, noop_kernel);
  r.set("_operator.add", {py_binary<PyOp::Add>});
  r.set("_operator.sub", {py_binary<PyOp::Sub>});
  r.set("_operator.mul", {py_binary<PyOp::Mul>});
  r.set("_operator.floordiv", {py_binary<PyOp::FloorDiv>});
  r.set("_operator.mod", {py_binary<PyOp::Mod>});
  r.set("_operator.truediv", {py_binary<PyOp::TrueDiv>});
  r.set("_operator.pow", {py_binary<PyOp::Pow>});
  r.set("_operator.eq", {py_binary<PyOp::Eq>});
  r.set("_operator.ne", {py_binary<PyOp::Ne>});
  r.set("_operator.lt", {py_binary<PyOp::Lt>});
  r.set("_operator.le", {py_binary<PyOp::Le>});
  r.set("_operator.gt", {py_binary<PyOp::Gt>});
  r.set("_operator.ge", {py_binary<PyOp::Ge>});
  r.set("_operator.and_", {py_binary<PyOp::And>});
  r.set("_operator.or_", {py_binary<PyOp::Or>});
  r.set("torch.sym_max", {py_binary<PyOp::Max>});
  r.set("torch.sym_min", {py_binary<PyOp::Min>});
  r.set("_operator.neg", {py_unary<PyUnary::Neg>});
  r.set("torch.sym_not", {py_unary<PyUnary::Not>});
  r.set("math.ceil", {py_unary<PyUnary::Ceil>});
  r.set("math.floor", {py_unary<PyUnary::Floor>});
  r.set("torch.sym_float", {py_unary<PyUnary::ToFloat>});
  r.set("torch.sym_int", {py_unary<PyUnary::ToInt>});
  r.set("torch._sym_sqrt", {py_unary<PyUnary::Sqrt>});
}

}  // namespace lathe::kernels
