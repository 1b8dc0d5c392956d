#include "lathe/runtime/kernels/unary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/vector_math.h"

namespace lathe::kernels {

namespace {

enum class UnaryResult { Same, Bool, Float };

UnaryResult result_kind(UnaryOp op) {
  switch (op) {
#define LATHE_UNARY_OP(name, aten_name, result) case UnaryOp::name: return UnaryResult::result;
#define LATHE_UNARY_VARIANT(name, result) case UnaryOp::name: return UnaryResult::result;
#include "lathe/runtime/kernels/unary_ops.def"
  }
  return UnaryResult::Float;
}

template <typename T, typename O, typename F>
void unary_loop(const Tensor& in, Tensor& out, F f) {
  std::array<std::vector<int64_t>, 2> st{out.strides, in.strides};
  O* po = mdata<O>(out);
  const T* pi = cdata<T>(in);
  parallel_for_each_row<2>(out.sizes, st, [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
    O* __restrict o = po + off[0];
    const T* __restrict x = pi + off[1];
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(x[i * s[1]]);
    }
  });
}

// float rows with unit strides go through `rows(x, y, n)`, vectorised
// (vector_math.h); anything else, and other dtypes, through f per element.
template <typename T, typename R, typename F>
void unary_vec(const Tensor& in, Tensor& out, R rows, F f) {
  if constexpr (std::is_same_v<T, float>) {
    std::array<std::vector<int64_t>, 2> st{out.strides, in.strides};
    float* po = mdata<float>(out);
    const float* pi = cdata<float>(in);
    parallel_for_each_row<2>(out.sizes, st, [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
      if (s[0] == 1 && s[1] == 1) {
        rows(pi + off[1], po + off[0], n);
      } else {
        for (int64_t i = 0; i < n; ++i) po[off[0] + i * s[0]] = f(pi[off[1] + i * s[1]]);
      }
    });
  } else {
    unary_loop<T, T>(in, out, f);
  }
}

// y[i] = post(x[i], g(pre(x[i]))) for g = exp_f32 or tanh_f32, through a
// block on the stack (y may be x, so x[i] is read before y[i] is written).
template <typename Pre, typename G, typename Post>
void composed_rows(const float* x, float* y, int64_t n, Pre pre, G g, Post post) {
  constexpr int64_t kBlock = 256;
  float t[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    for (int64_t i = 0; i < m; ++i) t[i] = pre(x[i0 + i]);
    g(t, t, m);
    for (int64_t i = 0; i < m; ++i) y[i0 + i] = post(x[i0 + i], t[i]);
  }
}

bool is_classification(UnaryOp op) {
  return op == UnaryOp::IsNan || op == UnaryOp::IsInf || op == UnaryOp::IsFinite;
}

// erfinv: a rational first guess (Giles' single-precision form), then
// Newton steps on erf(x) - y in double, which converge to the correctly
// rounded float result and near it for double.
double erfinv_impl(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0 || y == -1.0) return std::copysign(std::numeric_limits<double>::infinity(), y);
  double w = -std::log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double k : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941}) {
      p = k + p * w;
    }
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double k : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682}) {
      p = k + p * w;
    }
  }
  double x = p * y;
  for (int it = 0; it < 3; ++it) {
    const double d = M_2_SQRTPI * std::exp(-x * x);
    if (d == 0.0) break;
    x -= (std::erf(x) - y) / d;
  }
  return x;
}

constexpr float kGeluBeta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
constexpr float kGeluKappa = 0.044715f;

// Formulas follow ATen's CPU kernels (computed in the element type, as
// ATen does for float), so results agree to an ulp or two.
template <typename T>
Status float_op(UnaryOp op, const Tensor& in, Tensor& out, const UnaryParams& p) {
  switch (op) {
    case UnaryOp::Exp: unary_vec<T>(in, out, exp_f32, [](T x) { return std::exp(x); }); break;
    case UnaryOp::Log: unary_loop<T, T>(in, out, [](T x) { return std::log(x); }); break;
    case UnaryOp::Log2: unary_loop<T, T>(in, out, [](T x) { return std::log2(x); }); break;
    case UnaryOp::Log1p: unary_loop<T, T>(in, out, [](T x) { return std::log1p(x); }); break;
    case UnaryOp::Expm1: unary_loop<T, T>(in, out, [](T x) { return std::expm1(x); }); break;
    case UnaryOp::Sqrt: unary_loop<T, T>(in, out, [](T x) { return std::sqrt(x); }); break;
    case UnaryOp::Rsqrt: unary_loop<T, T>(in, out, [](T x) { return T(1) / std::sqrt(x); }); break;
    case UnaryOp::Reciprocal: unary_loop<T, T>(in, out, [](T x) { return T(1) / x; }); break;
    case UnaryOp::Sin: unary_loop<T, T>(in, out, [](T x) { return std::sin(x); }); break;
    case UnaryOp::Cos: unary_loop<T, T>(in, out, [](T x) { return std::cos(x); }); break;
    case UnaryOp::Erf: unary_vec<T>(in, out, erf_f32, [](T x) { return std::erf(x); }); break;
    case UnaryOp::Sigmoid:
      unary_vec<T>(
          in, out,
          [](const float* x, float* y, int64_t n) {
            composed_rows(x, y, n, [](float v) { return -v; }, exp_f32, [](float, float e) { return 1.0f / (1.0f + e); });
          },
          [](T x) { return T(1) / (T(1) + std::exp(-x)); });
      break;
    case UnaryOp::Tanh: unary_vec<T>(in, out, tanh_f32, [](T x) { return std::tanh(x); }); break;
    case UnaryOp::Silu:
      unary_vec<T>(
          in, out,
          [](const float* x, float* y, int64_t n) {
            composed_rows(x, y, n, [](float v) { return -v; }, exp_f32, [](float v, float e) { return v / (1.0f + e); });
          },
          [](T x) { return x / (T(1) + std::exp(-x)); });
      break;
    case UnaryOp::Gelu:
      unary_vec<T>(in, out, gelu_f32, [](T x) { return x * T(0.5) * (T(1) + std::erf(x * T(M_SQRT1_2))); });
      break;
    case UnaryOp::GeluTanh:
      unary_vec<T>(
          in, out,
          [](const float* x, float* y, int64_t n) {
            composed_rows(
                x, y, n, [](float v) { return kGeluBeta * (v + kGeluKappa * v * v * v); }, tanh_f32,
                [](float v, float t) { return 0.5f * v * (1.0f + t); });
          },
          [](T x) {
            const T kBeta = T(M_SQRT2 * M_2_SQRTPI * 0.5);
            const T kKappa = T(0.044715);
            T inner = kBeta * (x + kKappa * x * x * x);
            return T(0.5) * x * (T(1) + std::tanh(inner));
          });
      break;
    case UnaryOp::Hardswish:
      unary_loop<T, T>(in, out, [](T x) { return x * std::min(std::max(x + T(3), T(0)), T(6)) / T(6); });
      break;
    case UnaryOp::Hardsigmoid:
      unary_loop<T, T>(in, out, [](T x) { return std::min(std::max(x + T(3), T(0)), T(6)) / T(6); });
      break;
    case UnaryOp::Elu: {
      // ATen: x > 0 ? x * scale : alpha * scale * expm1(x * input_scale).
      const T neg = static_cast<T>(p.alpha * p.scale), pos = static_cast<T>(p.scale), in_scale = static_cast<T>(p.input_scale);
      unary_loop<T, T>(in, out, [=](T x) { return x > T(0) ? x * pos : neg * std::expm1(x * in_scale); });
      break;
    }
    case UnaryOp::Softplus: {
      const T beta = static_cast<T>(p.beta), threshold = static_cast<T>(p.threshold);
      unary_loop<T, T>(in, out, [=](T x) { return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta; });
      break;
    }
    case UnaryOp::Mish:
      unary_loop<T, T>(in, out, [](T x) { return x * std::tanh(std::log1p(std::exp(x))); });
      break;
    case UnaryOp::Tan: unary_loop<T, T>(in, out, [](T x) { return std::tan(x); }); break;
    case UnaryOp::Asin: unary_loop<T, T>(in, out, [](T x) { return std::asin(x); }); break;
    case UnaryOp::Acos: unary_loop<T, T>(in, out, [](T x) { return std::acos(x); }); break;
    case UnaryOp::Atan: unary_loop<T, T>(in, out, [](T x) { return std::atan(x); }); break;
    case UnaryOp::Sinh: unary_loop<T, T>(in, out, [](T x) { return std::sinh(x); }); break;
    case UnaryOp::Cosh: unary_loop<T, T>(in, out, [](T x) { return std::cosh(x); }); break;
    case UnaryOp::Asinh: unary_loop<T, T>(in, out, [](T x) { return std::asinh(x); }); break;
    case UnaryOp::Acosh: unary_loop<T, T>(in, out, [](T x) { return std::acosh(x); }); break;
    case UnaryOp::Atanh: unary_loop<T, T>(in, out, [](T x) { return std::atanh(x); }); break;
    case UnaryOp::Log10: unary_loop<T, T>(in, out, [](T x) { return std::log10(x); }); break;
    case UnaryOp::Exp2: unary_loop<T, T>(in, out, [](T x) { return std::exp2(x); }); break;
    case UnaryOp::Erfinv:
      unary_loop<T, T>(in, out, [](T x) { return static_cast<T>(erfinv_impl(static_cast<double>(x))); });
      break;
    default:
      return make_error("internal: not a floating unary op");
  }
  return Status::Ok();
}

template <typename T>
Status same_dtype_op(UnaryOp op, const Tensor& in, Tensor& out, const UnaryParams& p) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  auto bad = [&] { return make_error("not defined for " + std::string(dtype_name(in.dtype))); };
  switch (op) {
    case UnaryOp::Neg:
      if constexpr (kBool) return bad();
      // Integers wrap as in PyTorch: -INT_MIN is INT_MIN (was undefined; found by fuzz_runtime).
      else if constexpr (kFloat || !std::is_integral_v<T>) unary_loop<T, T>(in, out, [](T x) { return static_cast<T>(-x); });
      else unary_loop<T, T>(in, out, [](T x) { return wrapping_sub(T(0), x); });
      break;
    case UnaryOp::Abs:
      if constexpr (kBool || std::is_unsigned_v<T>) unary_loop<T, T>(in, out, [](T x) { return x; });
      else if constexpr (kFloat || !std::is_integral_v<T>) unary_loop<T, T>(in, out, [](T x) { return static_cast<T>(x < 0 ? -x : x); });
      else unary_loop<T, T>(in, out, [](T x) { return x < 0 ? wrapping_sub(T(0), x) : x; });
      break;
    case UnaryOp::Relu:
      if constexpr (kBool) return bad();
      else unary_loop<T, T>(in, out, [](T x) {
        if constexpr (kFloat) {
          if (std::isnan(x)) return x;
        }
        return x > T(0) ? x : T(0);
      });
      break;
    case UnaryOp::Sign:
      if constexpr (kBool) unary_loop<T, T>(in, out, [](T x) { return x; });
      else unary_loop<T, T>(in, out, [](T x) { return static_cast<T>((T(0) < x) - (x < T(0))); });
      break;
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
      if constexpr (kFloat) {
        if (op == UnaryOp::Floor) unary_loop<T, T>(in, out, [](T x) { return std::floor(x); });
        if (op == UnaryOp::Ceil) unary_loop<T, T>(in, out, [](T x) { return std::ceil(x); });
        if (op == UnaryOp::Round) unary_loop<T, T>(in, out, [](T x) { return std::nearbyint(x); });  // half to even
        if (op == UnaryOp::Trunc) unary_loop<T, T>(in, out, [](T x) { return std::trunc(x); });
      } else {
        unary_loop<T, T>(in, out, [](T x) { return x; });
      }
      break;
    case UnaryOp::BitwiseNot:
      if constexpr (kFloat) return bad();
      else if constexpr (kBool) unary_loop<T, T>(in, out, [](T x) { return !x; });
      else unary_loop<T, T>(in, out, [](T x) { return static_cast<T>(~x); });
      break;
    case UnaryOp::LeakyRelu:
      if constexpr (!kFloat) return bad();
      else {
        const T slope = static_cast<T>(p.negative_slope);
        unary_loop<T, T>(in, out, [slope](T x) { return x > T(0) ? x : x * slope; });
      }
      break;
    case UnaryOp::Hardtanh:
    case UnaryOp::Relu6:
      if constexpr (kBool) return bad();
      else {
        // relu6 is hardtanh(0, 6)
        const bool six = op == UnaryOp::Relu6;
        // (bounds from the file: an integer tensor's are saturated, not cast past its range)
        auto bound = [](double v) {
          if constexpr (std::is_integral_v<T>) return saturating_cast<T>(v);
          else return static_cast<T>(v);
        };
        const T lo = bound(six ? 0.0 : p.min_val), hi = bound(six ? 6.0 : p.max_val);
        unary_loop<T, T>(in, out, [lo, hi](T x) {
          if constexpr (kFloat) {
            if (std::isnan(x)) return x;
          }
          return x < lo ? lo : (x > hi ? hi : x);
        });
      }
      break;
    default:
      return make_error("internal: not a dtype-preserving unary op");
  }
  return Status::Ok();
}

// isnan / isinf / isfinite: bool out; integers and bool are always finite.
Status classify_out(UnaryOp op, const Tensor& in, Tensor& out) {
  return dispatch_storage(in.dtype, "isnan/isinf/isfinite", [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const bool v = op == UnaryOp::IsFinite;
      unary_loop<T, bool>(in, out, [v](T) { return v; });
    } else {
      if (op == UnaryOp::IsNan) unary_loop<T, bool>(in, out, [](T x) { return std::isnan(static_cast<double>(x)); });
      if (op == UnaryOp::IsInf) unary_loop<T, bool>(in, out, [](T x) { return std::isinf(static_cast<double>(x)); });
      if (op == UnaryOp::IsFinite) {
        unary_loop<T, bool>(in, out, [](T x) { return std::isfinite(static_cast<double>(x)); });
      }
    }
    return Status::Ok();
  });
}

}  // namespace

DType unary_result_dtype(UnaryOp op, DType dtype) {
  const UnaryResult r = result_kind(op);
  if (r == UnaryResult::Bool) return DType::Bool;
  if (r == UnaryResult::Same) return dtype;
  return is_integral(dtype, true) ? DType::Float32 : dtype;
}

Status unary_out(UnaryOp op, const Tensor& in_raw, Tensor& out, const UnaryParams& params) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "unary op", "self"));
  const DType rd = unary_result_dtype(op, in_raw.dtype);
  LATHE_RETURN_IF_ERROR(check_out(out, rd, in_raw.sizes, "unary op"));
  if (op == UnaryOp::LogicalNot) {
    return dispatch<Types::All>(in_raw.dtype, "logical_not", [&](auto tag) -> Status {
      using T = decltype(tag);
      unary_loop<T, bool>(in_raw, out, [](T x) { return x == T(0); });
      return Status::Ok();
    });
  }
  if (is_classification(op)) return classify_out(op, in_raw, out);
  if (result_kind(op) == UnaryResult::Same) {
    return dispatch<Types::All>(rd, "unary op",
                    [&](auto tag) { return same_dtype_op<decltype(tag)>(op, in_raw, out, params); });
  }
  const Tensor in = as_dtype(in_raw, rd);
  return dispatch<Types::Float>(rd, "unary op", [&](auto tag) { return float_op<decltype(tag)>(op, in, out, params); });
}

Status clamp_out(const Tensor& in_raw, std::optional<Scalar> min, std::optional<Scalar> max, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "clamp", "self"));
  if (!min && !max) return make_error("clamp: at least one of min and max must be given");
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, in_raw.sizes, "clamp"));
  const Tensor in = as_dtype(in_raw, out.dtype);
  return dispatch<Types::Numeric>(out.dtype, "clamp", [&](auto tag) -> Status {
    using T = decltype(tag);
    const bool has_lo = min.has_value(), has_hi = max.has_value();
    const T lo = has_lo ? min->to<T>() : T(0), hi = has_hi ? max->to<T>() : T(0);
    unary_loop<T, T>(in, out, [=](T x) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x)) return x;
      }
      if (has_lo && x < lo) x = lo;
      if (has_hi && x > hi) x = hi;
      return x;
    });
    return Status::Ok();
  });
}

namespace {

template <UnaryOp op>
Status unary_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  UnaryParams p;
  if constexpr (op == UnaryOp::LeakyRelu) {
    LATHE_ASSIGN_OR_RETURN(p.negative_slope, c.double_arg("negative_slope", 0.01));
  } else if constexpr (op == UnaryOp::Hardtanh) {
    LATHE_ASSIGN_OR_RETURN(p.min_val, c.double_arg("min_val", -1.0));
    LATHE_ASSIGN_OR_RETURN(p.max_val, c.double_arg("max_val", 1.0));
  } else if constexpr (op == UnaryOp::Elu) {
    LATHE_ASSIGN_OR_RETURN(p.alpha, c.double_arg("alpha", 1.0));
    LATHE_ASSIGN_OR_RETURN(p.scale, c.double_arg("scale", 1.0));
    LATHE_ASSIGN_OR_RETURN(p.input_scale, c.double_arg("input_scale", 1.0));
  } else if constexpr (op == UnaryOp::Softplus) {
    LATHE_ASSIGN_OR_RETURN(p.beta, c.double_arg("beta", 1.0));
    LATHE_ASSIGN_OR_RETURN(p.threshold, c.double_arg("threshold", 20.0));
  }
  UnaryOp actual = op;
  if constexpr (op == UnaryOp::Gelu) {
    LATHE_ASSIGN_OR_RETURN(std::string approx, c.string_arg("approximate", std::string("none")));
    if (approx == "tanh") actual = UnaryOp::GeluTanh;
    else if (approx != "none") return c.arg_error("approximate", "unknown value '" + approx + "'");
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, unary_result_dtype(actual, self->dtype), self->sizes));
  return unary_out(actual, *self, *out, p);
}

Status clamp_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  const std::string& op = c.node().target();
  std::optional<Scalar> lo, hi;
  if (op.find("clamp_min") != std::string::npos) {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("min"));
    lo = s;
  } else if (op.find("clamp_max") != std::string::npos) {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("max"));
    hi = s;
  } else {
    LATHE_ASSIGN_OR_RETURN(lo, c.optional_scalar("min"));
    LATHE_ASSIGN_OR_RETURN(hi, c.optional_scalar("max"));
  }
  ResultType rt;
  rt.add(*self);
  if (lo) rt.add(*lo);
  if (hi) rt.add(*hi);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, rt.get(), self->sizes));
  return clamp_out(*self, lo, hi, *out);
}

// clamp.Tensor: minimum(maximum(self, min), max), broadcasting.
Status clamp_tensor_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* lo, c.optional_tensor("min"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* hi, c.optional_tensor("max"));
  if (!lo && !hi) return make_error("clamp: at least one of min and max must be given");
  ResultType rt;
  rt.add(*self);
  std::vector<int64_t> shape = self->sizes;
  for (const Tensor* b : {lo, hi}) {
    if (!b) continue;
    rt.add(*b);
    LATHE_ASSIGN_OR_RETURN(shape, broadcast_shapes(shape, b->sizes));
  }
  const DType dt = rt.get();
  Tensor cur = *self;
  if (lo) {
    Tensor tmp = Tensor::empty(dt, broadcast_shapes(cur.sizes, lo->sizes).value());
    LATHE_RETURN_IF_ERROR(binary_out(BinaryOp::Maximum, cur, *lo, dt, tmp));
    cur = tmp;
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, shape));
  if (hi) return binary_out(BinaryOp::Minimum, cur, *hi, dt, *out);
  return copy_into(cur, *out);
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
#define LATHE_UNARY_OP(name, aten_name, result) register_overloads(r, aten_name, {"default"}, unary_kernel<UnaryOp::name>);
#include "lathe/runtime/kernels/unary_ops.def"
  register_overloads(r, "clamp", {"default"}, clamp_kernel);
  register_overloads(r, "clamp_min", {"default"}, clamp_kernel);
  register_overloads(r, "clamp_max", {"default"}, clamp_kernel);
  register_overloads(r, "clamp", {"Tensor"}, clamp_tensor_kernel);
}

}  // namespace lathe::kernels
