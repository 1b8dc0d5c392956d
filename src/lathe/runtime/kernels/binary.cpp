#include "lathe/runtime/kernels/binary.h"

#include <cmath>
#include <limits>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

bool is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt:
    case BinaryOp::Ge: case BinaryOp::LogicalAnd: case BinaryOp::LogicalOr: case BinaryOp::LogicalXor:
      return true;
    default:
      return false;
  }
}

bool is_floating_only(BinaryOp op) {
  return op == BinaryOp::Atan2 || op == BinaryOp::Hypot || op == BinaryOp::Copysign;
}

Tensor scalar_tensor(const Scalar& s, DType dtype) {
  Tensor t = Tensor::empty(dtype, {});
  (void)dispatch_storage(dtype, "scalar_tensor", [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      *mdata<T>(t) = T(static_cast<float>(s.to_double()));
    } else {
      *mdata<T>(t) = s.to<T>();
    }
    return Status::Ok();
  });
  return t;
}

namespace {

// The row loop shared by every binary op; the common layouts (all
// contiguous, one side a broadcast scalar) get loops the compiler can
// vectorise.
template <typename T, typename O, typename F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  std::array<std::vector<int64_t>, 3> st{out.strides, broadcast_strides(a, out.sizes), broadcast_strides(b, out.sizes)};
  O* po = mdata<O>(out);
  const T* pa = cdata<T>(a);
  const T* pb = cdata<T>(b);
  parallel_for_each_row<3>(out.sizes, st, [&](const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& s) {
    O* __restrict o = po + off[0];
    const T* __restrict x = pa + off[1];
    const T* __restrict y = pb + off[2];
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const T yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const T xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]], y[i * s[2]]);
    }
  });
}

template <typename T>
T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // ATen's div_floor_floating: exact for representable quotients.
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  } else {
    return wrapping_floor_div(a, b);  // INT_MIN // -1 wraps, as in PyTorch
  }
}

template <typename T>
T remainder(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T mod = std::fmod(a, b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  } else {
    return wrapping_floor_mod(a, b);
  }
}

template <typename T>
T int_pow(T base, T exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? T(-1) : T(1);
    return 0;
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = wrapping_mul(result, base);
    exp >>= 1;
    base = wrapping_mul(base, base);
  }
  return result;
}

bool divisor_has_zero(const Tensor& b) {
  bool zero = false;
  (void)dispatch<Types::All>(b.dtype, "div", [&](auto tag) -> Status {
    using T = decltype(tag);
    std::array<std::vector<int64_t>, 1> st{b.strides};
    const T* p = cdata<T>(b);
    for_each_row<1>(b.sizes, st, [&](const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>& s) {
      for (int64_t i = 0; i < n; ++i) zero = zero || p[off[0] + i * s[0]] == T(0);
    });
    return Status::Ok();
  });
  return zero;
}

Error unsupported_for(const Tensor& a) {
  return make_error("this op is not defined for " + std::string(dtype_name(a.dtype)) + " operands");
}

// add / sub with alpha (bool: logical or; sub refused).
template <typename T>
Status apply_add_sub(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out, Scalar alpha_s) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == BinaryOp::Sub) return make_error("sub of bool tensors is not supported; use logical_xor");
    binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return x || y; });
  } else {
    const T alpha = alpha_s.to<T>();
    const bool sub = op == BinaryOp::Sub;
    // Integers wrap as in PyTorch (int_arith.h); floats are plain + and *.
    if (alpha == T(1)) {
      if (sub) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return wrapping_sub(x, y); });
      else binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return wrapping_add(x, y); });
    } else {
      if (sub) binary_loop<T, T>(a, b, out, [alpha](T x, T y) -> T { return wrapping_sub(x, wrapping_mul(alpha, y)); });
      else binary_loop<T, T>(a, b, out, [alpha](T x, T y) -> T { return wrapping_add(x, wrapping_mul(alpha, y)); });
    }
  }
  return Status::Ok();
}

// div (true), div with rounding, remainder, fmod.
template <typename T>
Status apply_division(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  if (op == BinaryOp::Div) {
    if constexpr (kFloat) {
      binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return x / y; });
      return Status::Ok();
    } else {
      return make_error("true division needs a floating compute type");
    }
  }
  if constexpr (std::is_same_v<T, bool>) {
    return unsupported_for(a);
  } else {
    if constexpr (!kFloat) {
      if (divisor_has_zero(b)) return make_error("ZeroDivisionError: integer division by zero");
    }
    if (op == BinaryOp::DivTrunc) {
      if constexpr (kFloat) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return std::trunc(x / y); });
      else binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return wrapping_trunc_div(x, y); });
    } else if (op == BinaryOp::DivFloor) {
      binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return floor_div<T>(x, y); });
    } else if (op == BinaryOp::Remainder) {
      binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return remainder<T>(x, y); });
    } else {
      if constexpr (kFloat) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return std::fmod(x, y); });
      else binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return wrapping_trunc_mod(x, y); });
    }
    return Status::Ok();
  }
}

// Comparisons and logical ops: a bool result.
template <typename T>
Status apply_comparison(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  switch (op) {
    case BinaryOp::Eq: binary_loop<T, bool>(a, b, out, [](T x, T y) { return x == y; }); return Status::Ok();
    case BinaryOp::Ne: binary_loop<T, bool>(a, b, out, [](T x, T y) { return x != y; }); return Status::Ok();
    case BinaryOp::Lt: binary_loop<T, bool>(a, b, out, [](T x, T y) { return x < y; }); return Status::Ok();
    case BinaryOp::Le: binary_loop<T, bool>(a, b, out, [](T x, T y) { return x <= y; }); return Status::Ok();
    case BinaryOp::Gt: binary_loop<T, bool>(a, b, out, [](T x, T y) { return x > y; }); return Status::Ok();
    case BinaryOp::Ge: binary_loop<T, bool>(a, b, out, [](T x, T y) { return x >= y; }); return Status::Ok();
    case BinaryOp::LogicalAnd:
      binary_loop<T, bool>(a, b, out, [](T x, T y) { return x != T(0) && y != T(0); });
      return Status::Ok();
    case BinaryOp::LogicalOr:
      binary_loop<T, bool>(a, b, out, [](T x, T y) { return x != T(0) || y != T(0); });
      return Status::Ok();
    case BinaryOp::LogicalXor:
      binary_loop<T, bool>(a, b, out, [](T x, T y) { return (x != T(0)) != (y != T(0)); });
      return Status::Ok();
    default: return unsupported_for(a);
  }
}

template <typename T>
Status apply_bitwise(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) {
  if constexpr (std::is_floating_point_v<T>) {
    return unsupported_for(a);
  } else {
    if (op == BinaryOp::BitwiseAnd) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return static_cast<T>(x & y); });
    if (op == BinaryOp::BitwiseOr) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return static_cast<T>(x | y); });
    if (op == BinaryOp::BitwiseXor) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return static_cast<T>(x ^ y); });
    return Status::Ok();
  }
}

template <typename T>
Status apply_typed(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out, Scalar alpha_s) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return apply_add_sub<T>(op, a, b, out, alpha_s);
    case BinaryOp::Mul:
      if constexpr (kBool) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return x && y; });
      else binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return wrapping_mul(x, y); });
      return Status::Ok();
    case BinaryOp::Div:
    case BinaryOp::DivTrunc:
    case BinaryOp::DivFloor:
    case BinaryOp::Remainder:
    case BinaryOp::Fmod: return apply_division<T>(op, a, b, out);
    case BinaryOp::Pow:
      if constexpr (kBool) return unsupported_for(a);
      else if constexpr (kFloat) {
        // ATen squares for an exponent of 2 (RMSNorm's pow(x, 2)): x * x is
        // correctly rounded, where powf can be an ulp off, and a few times
        // faster.
        if (b.numel() == 1 && *cdata<T>(b) == T(2)) binary_loop<T, T>(a, b, out, [](T x, T) -> T { return x * x; });
        else binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return std::pow(x, y); });
      } else {
        binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return int_pow<T>(x, y); });
      }
      return Status::Ok();
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      const bool mx = op == BinaryOp::Maximum;
      binary_loop<T, T>(a, b, out, [mx](T x, T y) -> T {
        if constexpr (kFloat) {
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return mx ? (x > y ? x : y) : (x < y ? x : y);
      });
      return Status::Ok();
    }
    case BinaryOp::BitwiseAnd:
    case BinaryOp::BitwiseOr:
    case BinaryOp::BitwiseXor: return apply_bitwise<T>(op, a, b, out);
    case BinaryOp::Atan2:
    case BinaryOp::Hypot:
    case BinaryOp::Copysign:
      if constexpr (!kFloat) {
        return make_error("atan2/hypot/copysign need a floating compute type");
      } else {
        if (op == BinaryOp::Atan2) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return std::atan2(x, y); });
        if (op == BinaryOp::Hypot) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return std::hypot(x, y); });
        if (op == BinaryOp::Copysign) binary_loop<T, T>(a, b, out, [](T x, T y) -> T { return std::copysign(x, y); });
        return Status::Ok();
      }
    case BinaryOp::Prelu:
      if constexpr (kBool) return unsupported_for(a);
      else binary_loop<T, T>(a, b, out, [](T x, T w) -> T { return x > T(0) ? x : static_cast<T>(wrapping_mul(w, x)); });  // integers wrap
      return Status::Ok();
    default: return apply_comparison<T>(op, a, b, out);
  }
}

}  // namespace

Status binary_out(BinaryOp op, const Tensor& a_in, const Tensor& b_in, DType compute, Tensor& out, Scalar alpha) {
  LATHE_RETURN_IF_ERROR(check_input(a_in, "binary op", "self"));
  LATHE_RETURN_IF_ERROR(check_input(b_in, "binary op", "other"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(a_in.sizes, b_in.sizes));
  LATHE_RETURN_IF_ERROR(check_out(out, is_comparison(op) ? DType::Bool : compute, shape, "binary op"));
  const Tensor a = as_dtype(a_in, compute);
  const Tensor b = as_dtype(b_in, compute);
  return dispatch<Types::All>(compute, "binary op",
                  [&](auto tag) -> Status { return apply_typed<decltype(tag)>(op, a, b, out, alpha); });
}

Status where_out(const Tensor& cond_in, const Tensor& a_in, const Tensor& b_in, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(cond_in, "where", "condition"));
  LATHE_RETURN_IF_ERROR(check_input(a_in, "where", "self"));
  LATHE_RETURN_IF_ERROR(check_input(b_in, "where", "other"));
  if (cond_in.dtype != DType::Bool && cond_in.dtype != DType::UInt8) {
    return make_error("where: condition must be bool, got " + std::string(dtype_name(cond_in.dtype)));
  }
  LATHE_ASSIGN_OR_RETURN(auto s1, broadcast_shapes(cond_in.sizes, a_in.sizes));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(s1, b_in.sizes));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, shape, "where"));
  const Tensor cond = as_dtype(cond_in, DType::Bool);
  const Tensor a = as_dtype(a_in, out.dtype);
  const Tensor b = as_dtype(b_in, out.dtype);
  return dispatch<Types::All>(out.dtype, "where", [&](auto tag) -> Status {
    using T = decltype(tag);
    std::array<std::vector<int64_t>, 4> st{out.strides, broadcast_strides(cond, shape), broadcast_strides(a, shape),
                                           broadcast_strides(b, shape)};
    T* po = mdata<T>(out);
    const bool* pc = cdata<bool>(cond);
    const T* pa = cdata<T>(a);
    const T* pb = cdata<T>(b);
    parallel_for_each_row<4>(shape, st, [&](const std::array<int64_t, 4>& off, int64_t n, const std::array<int64_t, 4>& s) {
      for (int64_t i = 0; i < n; ++i) {
        po[off[0] + i * s[0]] = pc[off[1] + i * s[1]] ? pa[off[2] + i * s[2]] : pb[off[3] + i * s[3]];
      }
    });
    return Status::Ok();
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

// A Tensor-or-Scalar operand (add.Tensor's other may be a literal number
// in exported graphs, and add.Scalar's always is).
struct Operand {
  const Tensor* t = nullptr;
  Scalar s;
  void add_to(ResultType& rt) const {
    if (t) rt.add(*t);
    else rt.add(s);
  }
  Tensor as(DType dtype) const { return t ? *t : scalar_tensor(s, dtype); }
  std::vector<int64_t> sizes() const { return t ? t->sizes : std::vector<int64_t>{}; }
};

Result<Operand> operand(KernelCall& c, const char* name) {
  if (c.is_tensor(name)) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* t, c.tensor(name));
    return Operand{t, {}};
  }
  LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar(name));
  return Operand{nullptr, s};
}

Status run_binary(KernelCall& c, BinaryOp op, bool has_alpha, bool reverse, const char* a_name = "self",
                  const char* b_name = "other") {
  LATHE_ASSIGN_OR_RETURN(Operand a, operand(c, a_name));
  LATHE_ASSIGN_OR_RETURN(Operand b, operand(c, b_name));
  if (reverse) std::swap(a, b);
  ResultType rt;
  a.add_to(rt);
  b.add_to(rt);
  DType compute = rt.get();
  if (op == BinaryOp::Div) {
    LATHE_ASSIGN_OR_RETURN(std::string mode, c.string_arg("rounding_mode", std::string()));
    if (mode == "trunc") op = BinaryOp::DivTrunc;
    else if (mode == "floor") op = BinaryOp::DivFloor;
    else if (!mode.empty()) return c.arg_error("rounding_mode", "unknown mode '" + mode + "'");
    if (op == BinaryOp::Div && is_integral(compute, true)) compute = DType::Float32;
  }
  if (op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr || op == BinaryOp::LogicalXor) compute = DType::Bool;
  if (is_floating_only(op) && is_integral(compute, true)) compute = DType::Float32;
  Scalar alpha = Scalar::from_int(1);
  if (has_alpha) {
    LATHE_ASSIGN_OR_RETURN(alpha, c.scalar("alpha", Scalar::from_int(1)));
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(a.sizes(), b.sizes()));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, is_comparison(op) ? DType::Bool : compute, shape));
  return binary_out(op, a.as(compute), b.as(compute), compute, *out, alpha);
}

template <BinaryOp op, bool alpha = false, bool reverse = false>
Status binary_kernel(KernelCall& c) {
  return run_binary(c, op, alpha, reverse);
}

Status where_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* cond, c.tensor("condition"));
  LATHE_ASSIGN_OR_RETURN(Operand a, operand(c, "self"));
  LATHE_ASSIGN_OR_RETURN(Operand b, operand(c, "other"));
  ResultType rt;
  a.add_to(rt);
  b.add_to(rt);
  DType dtype = rt.get();
  LATHE_ASSIGN_OR_RETURN(auto s1, broadcast_shapes(cond->sizes, a.sizes()));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(s1, b.sizes()));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dtype, shape));
  return where_out(*cond, a.as(dtype), b.as(dtype), *out);
}

// masked_fill(self, mask, value): where(mask, value, self) in self's shape
// and dtype; the mask must broadcast to self, not the other way round.
Status masked_fill_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* mask, c.tensor("mask"));
  LATHE_ASSIGN_OR_RETURN(Operand value, operand(c, "value"));
  if (value.t && !value.t->sizes.empty()) {
    return c.arg_error("value", "must be a 0-d tensor, got " + shape_string(value.t->sizes));
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(self->sizes, mask->sizes));
  if (shape != self->sizes) {
    return make_error("masked_fill: mask " + shape_string(mask->sizes) + " does not broadcast to " +
                      shape_string(self->sizes));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return where_out(*mask, value.as(self->dtype), *self, *out);
}

// prelu(self, weight): weight holds one value, or one per channel (dim 1
// of self), and broadcasts along that dim; _prelu_kernel gets a weight that
// already broadcasts to self.
Status prelu_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.tensor("weight"));
  LATHE_RETURN_IF_ERROR(check_input(*weight, "prelu", "weight"));
  Tensor w = *weight;
  const bool pre_broadcast = c.node().target().find("_prelu_kernel") != std::string::npos;
  if (!pre_broadcast) {
    if (weight->sizes.size() > 1) return c.arg_error("weight", "must be 0-d or 1-d, got " + shape_string(weight->sizes));
    const int64_t n = weight->numel();
    if (n != 1) {
      const int64_t channels = self->sizes.size() > 1 ? self->sizes[1] : 1;
      if (self->sizes.empty() || n != channels) {
        return c.arg_error("weight", "has " + std::to_string(n) + " elements, input " + shape_string(self->sizes) +
                                         " has " + std::to_string(channels) + " channels");
      }
      std::vector<int64_t> shape(self->sizes.size() - 1, 1);  // [C, 1, ...] aligns with dim 1
      shape[0] = n;
      w = make_view(*weight, shape, std::vector<int64_t>(shape.size(), 0), weight->storage_offset);
      w.strides[0] = weight->strides[0];
    } else {
      w = make_view(*weight, {}, {}, weight->storage_offset);
    }
  }
  ResultType rt;
  rt.add(*self);
  rt.add(w);
  const DType dt = rt.get();
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(self->sizes, w.sizes));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, shape));
  return binary_out(BinaryOp::Prelu, *self, w, dt, *out);
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  register_overloads(r, "add", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Add, true>);
  register_overloads(r, "sub", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Sub, true>);
  register_overloads(r, "rsub", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Sub, true, true>);
  register_overloads(r, "mul", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Mul>);
  register_overloads(r, "div", {"Tensor", "Scalar", "Tensor_mode", "Scalar_mode"}, binary_kernel<BinaryOp::Div>);
  register_overloads(r, "floor_divide", {"default", "Scalar"}, binary_kernel<BinaryOp::DivFloor>);
  register_overloads(r, "remainder", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Remainder>);
  register_overloads(r, "fmod", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Fmod>);
  register_overloads(r, "maximum", {"default"}, binary_kernel<BinaryOp::Maximum>);
  register_overloads(r, "minimum", {"default"}, binary_kernel<BinaryOp::Minimum>);
  register_overloads(r, "pow", {"Tensor_Tensor", "Tensor_Scalar"},
                     [](KernelCall& c) { return run_binary(c, BinaryOp::Pow, false, false, "self", "exponent"); });
  register_overloads(r, "pow", {"Scalar"},
                     [](KernelCall& c) { return run_binary(c, BinaryOp::Pow, false, false, "self", "exponent"); });
  register_overloads(r, "eq", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Eq>);
  register_overloads(r, "ne", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Ne>);
  register_overloads(r, "lt", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Lt>);
  register_overloads(r, "le", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Le>);
  register_overloads(r, "gt", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Gt>);
  register_overloads(r, "ge", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Ge>);
  register_overloads(r, "logical_and", {"default"}, binary_kernel<BinaryOp::LogicalAnd>);
  register_overloads(r, "logical_or", {"default"}, binary_kernel<BinaryOp::LogicalOr>);
  register_overloads(r, "logical_xor", {"default"}, binary_kernel<BinaryOp::LogicalXor>);
  register_overloads(r, "bitwise_and", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::BitwiseAnd>);
  register_overloads(r, "bitwise_or", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::BitwiseOr>);
  register_overloads(r, "bitwise_xor", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::BitwiseXor>);
  // The Python-operator spellings (x & y, x | y, x ^ y) torch.export keeps.
  register_overloads(r, "__and__", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::BitwiseAnd>);
  register_overloads(r, "__or__", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::BitwiseOr>);
  register_overloads(r, "__xor__", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::BitwiseXor>);
  register_overloads(r, "max", {"other"}, binary_kernel<BinaryOp::Maximum>);
  register_overloads(r, "min", {"other"}, binary_kernel<BinaryOp::Minimum>);
  register_overloads(r, "atan2", {"default"}, binary_kernel<BinaryOp::Atan2>);
  register_overloads(r, "hypot", {"default"}, binary_kernel<BinaryOp::Hypot>);
  register_overloads(r, "copysign", {"Tensor", "Scalar"}, binary_kernel<BinaryOp::Copysign>);
  register_overloads(r, "prelu", {"default"}, prelu_kernel);
  register_overloads(r, "_prelu_kernel", {"default"}, prelu_kernel);
  register_overloads(r, "where", {"self", "ScalarSelf", "ScalarOther", "Scalar"}, where_kernel);
  register_overloads(r, "masked_fill", {"Scalar", "Tensor"}, masked_fill_kernel);
}

}  // namespace lathe::kernels
