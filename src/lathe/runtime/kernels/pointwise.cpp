// Elementwise ops torch.export keeps whole in its default output (they have
// no core-ATen form of their own: run_decompositions() spells them with
// where/mul/exp...): the shrink and threshold activations, celu, selu,
// log_sigmoid, glu, nan_to_num, and the three-operand addcmul, addcdiv and
// lerp. Each computes in the promoted floating type, as ATen's CPU kernels
// do, over operands broadcast to the output shape.
#include <cmath>
#include <limits>

#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

namespace {

// `t` as a contiguous tensor of `dtype` and `sizes` (broadcast).
Tensor broadcast_to(const Tensor& t, DType dtype, const std::vector<int64_t>& sizes) {
  Tensor out = Tensor::empty(dtype, sizes);
  Status s = copy_into(t, out);
  (void)s;  // the callers checked that `t` broadcasts to `sizes`
  return out;
}

// out = f(x) for each element, in x's floating dtype (integers: float32).
template <typename F>
Status float_map(KernelCall& c, const char* op, F f) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, op, "self"));
  const DType dt = is_integral(self->dtype, true) ? DType::Float32 : self->dtype;
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, self->sizes));
  const Tensor x = as_contiguous(as_dtype(*self, dt));
  return dispatch<Types::Float>(dt, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* px = cdata<T>(x);
    T* po = mdata<T>(*out);
    for (int64_t i = 0, n = x.numel(); i < n; ++i) po[i] = f(px[i]);
    return Status::Ok();
  });
}

Status hardshrink_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(double l, c.double_arg("lambd", 0.5));
  return float_map(c, "hardshrink", [l](auto x) { return (x >= -l && x <= l) ? decltype(x)(0) : x; });
}

Status softshrink_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(double l, c.double_arg("lambd", 0.5));
  if (l < 0) return c.arg_error("lambd", "must be non-negative, got " + std::to_string(l));
  return float_map(c, "softshrink", [l](auto x) {
    using T = decltype(x);
    return x > T(l) ? x - T(l) : (x < T(-l) ? x + T(l) : x * T(0));  // x * 0: NaN stays NaN, as in torch
  });
}

Status celu_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(double alpha, c.double_arg("alpha", 1.0));
  if (alpha == 0) return c.arg_error("alpha", "ZeroDivisionError: alpha cannot be 0 for CELU");
  return float_map(c, "celu", [alpha](auto x) {
    using T = decltype(x);
    return x > T(0) ? x : T(alpha) * std::expm1(x / T(alpha));
  });
}

// The constants of Klambauer et al., as torch defines them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

Status selu_kernel(KernelCall& c) {
  return float_map(c, "selu", [](auto x) {
    using T = decltype(x);
    return T(kSeluScale) * (x > T(0) ? x : T(kSeluAlpha) * std::expm1(x));
  });
}

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): finite for every x.
Status log_sigmoid_kernel(KernelCall& c) {
  return float_map(c, "log_sigmoid", [](auto x) {
    using T = decltype(x);
    return std::min(x, T(0)) - std::log1p(std::exp(-std::abs(x)));
  });
}

// threshold keeps the input's dtype (integers too): x > threshold ? x : value.
Status threshold_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "threshold", "self"));
  LATHE_ASSIGN_OR_RETURN(Scalar th, c.scalar("threshold"));
  LATHE_ASSIGN_OR_RETURN(Scalar value, c.scalar("value"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  const Tensor x = as_contiguous(*self);
  return dispatch<Types::Numeric>(self->dtype, "threshold", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T t = th.to<T>(), v = value.to<T>();
    const T* px = cdata<T>(x);
    T* po = mdata<T>(*out);
    for (int64_t i = 0, n = x.numel(); i < n; ++i) po[i] = px[i] > t ? px[i] : v;
    return Status::Ok();
  });
}

// nan_to_num: NaN -> nan (0), +inf -> posinf, -inf -> neginf (defaults: the
// dtype's largest and lowest finite values). Integers pass through.
Status nan_to_num_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "nan_to_num", "self"));
  LATHE_ASSIGN_OR_RETURN(std::optional<double> nan, c.optional_double("nan"));
  LATHE_ASSIGN_OR_RETURN(std::optional<double> posinf, c.optional_double("posinf"));
  LATHE_ASSIGN_OR_RETURN(std::optional<double> neginf, c.optional_double("neginf"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  if (is_integral(self->dtype, true)) return copy_into(*self, *out);
  const Tensor x = as_contiguous(*self);
  return dispatch<Types::Float>(self->dtype, "nan_to_num", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T vn = static_cast<T>(nan.value_or(0.0));
    const T vp = posinf ? static_cast<T>(*posinf) : std::numeric_limits<T>::max();
    const T vm = neginf ? static_cast<T>(*neginf) : std::numeric_limits<T>::lowest();
    const T* px = cdata<T>(x);
    T* po = mdata<T>(*out);
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      const T v = px[i];
      po[i] = std::isnan(v) ? vn : (v == std::numeric_limits<T>::infinity() ? vp : (v == -std::numeric_limits<T>::infinity() ? vm : v));
    }
    return Status::Ok();
  });
}

// glu(x, dim) = a * sigmoid(b), a and b the two halves of x along dim.
Status glu_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "glu", "self"));
  LATHE_RETURN_IF_ERROR(check_floating(*self, "glu", "self"));
  LATHE_ASSIGN_OR_RETURN(int64_t raw_dim, c.int_arg("dim", -1));
  if (self->sizes.empty()) return c.arg_error("self", "glu does not support 0-dimensional tensors");
  LATHE_ASSIGN_OR_RETURN(int64_t dim, normalize_dim(raw_dim, static_cast<int64_t>(self->sizes.size())));
  const int64_t size = self->sizes[dim];
  if (size % 2 != 0) {
    return c.arg_error("self", "halving dimension " + std::to_string(raw_dim) + " must be even, but it is " + std::to_string(size));
  }
  std::vector<int64_t> half = self->sizes;
  half[dim] = size / 2;
  const Tensor a = as_contiguous(make_view(*self, half, self->strides, self->storage_offset));
  const Tensor b = as_contiguous(make_view(*self, half, self->strides, self->storage_offset + half[dim] * self->strides[dim]));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, half));
  return dispatch<Types::Float>(self->dtype, "glu", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *pa = cdata<T>(a), *pb = cdata<T>(b);
    T* po = mdata<T>(*out);
    for (int64_t i = 0, n = a.numel(); i < n; ++i) po[i] = pa[i] / (T(1) + std::exp(-pb[i]));
    return Status::Ok();
  });
}

// The three operands of addcmul/addcdiv/lerp, promoted and broadcast.
struct Ternary {
  DType dtype;
  std::vector<int64_t> sizes;
  Tensor a, b, w;  // contiguous, `dtype`, `sizes`
};

Result<Ternary> ternary(const Tensor& a, const Tensor& b, const Tensor* w, const Scalar* ws) {
  ResultType rt;
  rt.add(a);
  rt.add(b);
  if (w) rt.add(*w);
  if (ws) rt.add(*ws);
  Ternary t;
  t.dtype = rt.get();
  LATHE_ASSIGN_OR_RETURN(t.sizes, broadcast_shapes(a.sizes, b.sizes));
  if (w) {
    LATHE_ASSIGN_OR_RETURN(t.sizes, broadcast_shapes(t.sizes, w->sizes));
  }
  t.a = broadcast_to(a, t.dtype, t.sizes);
  t.b = broadcast_to(b, t.dtype, t.sizes);
  if (w) t.w = broadcast_to(*w, t.dtype, t.sizes);
  return t;
}

// addcmul: self + value * t1 * t2; addcdiv: self + value * t1 / t2.
template <bool kDivide>
Status addc_kernel(KernelCall& c) {
  const char* op = kDivide ? "addcdiv" : "addcmul";
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* t1, c.tensor("tensor1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* t2, c.tensor("tensor2"));
  LATHE_ASSIGN_OR_RETURN(Scalar value, c.scalar("value", Scalar::from_int(1)));
  for (const Tensor* t : {self, t1, t2}) LATHE_RETURN_IF_ERROR(check_input(*t, op, "tensor"));
  if (kDivide && is_integral(t1->dtype, true) && is_integral(t2->dtype, true)) {
    return c.arg_error("tensor1", "addcdiv of integer tensors is not supported (torch refuses it too)");
  }
  LATHE_ASSIGN_OR_RETURN(Ternary p, ternary(*t1, *t2, self, nullptr));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, p.dtype, p.sizes));
  return dispatch<Types::Numeric>(p.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T v = value.to<T>();
    const T *x = cdata<T>(p.w), *a = cdata<T>(p.a), *b = cdata<T>(p.b);
    T* o = mdata<T>(*out);
    for (int64_t i = 0, n = numel_of(p.sizes); i < n; ++i) {
      if constexpr (kDivide) o[i] = x[i] + v * (a[i] / b[i]);
      else o[i] = x[i] + v * a[i] * b[i];
    }
    return Status::Ok();
  });
}

// lerp: start + weight * (end - start), in the two-sided form ATen uses
// (exact at weight 1).
Status lerp_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* start, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* end, c.tensor("end"));
  const bool tensor_weight = c.is_tensor("weight");
  const Tensor* w = nullptr;
  Scalar ws;
  if (tensor_weight) {
    LATHE_ASSIGN_OR_RETURN(w, c.tensor("weight"));
  } else {
    LATHE_ASSIGN_OR_RETURN(ws, c.scalar("weight"));
  }
  for (const Tensor* t : {start, end}) {
    LATHE_RETURN_IF_ERROR(check_input(*t, "lerp", "self"));
    LATHE_RETURN_IF_ERROR(check_floating(*t, "lerp", "self"));
  }
  LATHE_ASSIGN_OR_RETURN(Ternary p, ternary(*start, *end, w, tensor_weight ? nullptr : &ws));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, p.dtype, p.sizes));
  return dispatch<Types::Float>(p.dtype, "lerp", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T *a = cdata<T>(p.a), *b = cdata<T>(p.b), *pw = tensor_weight ? cdata<T>(p.w) : nullptr;
    const T scalar_w = tensor_weight ? T(0) : ws.to<T>();
    T* o = mdata<T>(*out);
    for (int64_t i = 0, n = numel_of(p.sizes); i < n; ++i) {
      const T wt = pw ? pw[i] : scalar_w;
      const T diff = b[i] - a[i];
      o[i] = std::abs(wt) < T(0.5) ? a[i] + wt * diff : b[i] - diff * (T(1) - wt);
    }
    return Status::Ok();
  });
}

}  // namespace

void register_pointwise_kernels(KernelRegistry& r) {
  register_overloads(r, "hardshrink", {"default"}, hardshrink_kernel);
  register_overloads(r, "softshrink", {"default"}, softshrink_kernel);
  register_overloads(r, "celu", {"default"}, celu_kernel);
  register_overloads(r, "selu", {"default"}, selu_kernel);
  register_overloads(r, "log_sigmoid", {"default"}, log_sigmoid_kernel);
  register_overloads(r, "threshold", {"default"}, threshold_kernel);
  register_overloads(r, "nan_to_num", {"default"}, nan_to_num_kernel);
  register_overloads(r, "glu", {"default"}, glu_kernel);
  register_overloads(r, "addcmul", {"default"}, addc_kernel<false>);
  register_overloads(r, "addcdiv", {"default"}, addc_kernel<true>);
  register_overloads(r, "lerp", {"Scalar", "Tensor"}, lerp_kernel);
}

}  // namespace lathe::kernels
