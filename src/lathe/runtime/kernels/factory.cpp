// Tensor constructors (full, zeros, ones, empty, *_like, new_*, arange,
// scalar_tensor, fill) and the triangular masks tril/triu. "empty" tensors
// are zero-filled: a reference runtime stays deterministic.
#include <cmath>

#include "lathe/runtime/kernels/factory.h"

#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

Status fill_tensor(Tensor& out, const Scalar& value) {
  return dispatch_storage(out.dtype, "full", [&](auto tag) -> Status {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) v = T(static_cast<float>(value.to_double()));
    else v = value.to<T>();
    T* p = mdata<T>(out);
    std::fill(p, p + out.numel(), v);
    return Status::Ok();
  });
}

namespace {

DType dtype_of_scalar(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::Bool: return DType::Bool;
    case Scalar::Kind::Int: return DType::Int64;
    default: return DType::Float32;
  }
}


// full / zeros / ones / empty and their *_like / new_* forms:
//   kSize: size comes from "size" (else from self); kValue: fill from
//   "fill_value" (else `fixed`); dtype from "dtype", else self's, else the
//   fill value's kind (full) or float32.
template <bool kSize, bool kLike, int kFixed /* -1: fill_value */>
Status constructor_kernel(KernelCall& c) {
  const Tensor* self = nullptr;
  if (kLike) {
    LATHE_ASSIGN_OR_RETURN(self, c.tensor("self"));
  }
  std::vector<int64_t> size;
  if (kSize) {
    LATHE_ASSIGN_OR_RETURN(size, c.int_list("size"));
  } else {
    size = self->sizes;
  }
  Scalar value = Scalar::from_int(kFixed < 0 ? 0 : kFixed);
  if (kFixed < 0) {
    LATHE_ASSIGN_OR_RETURN(value, c.scalar("fill_value"));
  }
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  DType dt = dtype ? *dtype : self ? self->dtype : kFixed < 0 ? dtype_of_scalar(value) : DType::Float32;
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, size));
  return fill_tensor(*out, value);
}

Status empty_strided_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("size"));
  LATHE_ASSIGN_OR_RETURN(auto stride, c.int_list("stride"));
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dtype.value_or(DType::Float32), size));
  LATHE_RETURN_IF_ERROR(fill_tensor(*out, Scalar::from_int(0)));
  // Keep the requested strides when they address the same dense storage
  // (a permuted layout); anything else stays contiguous.
  Tensor t = *out;
  t.strides = stride;
  if (stride.size() == size.size() && t.check_fits().ok()) *out = t;
  return Status::Ok();
}

Status fill_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  Scalar value;
  if (c.is_tensor("value")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* v, c.tensor("value"));
    if (v->numel() != 1) return c.arg_error("value", "must have one element");
    Tensor d = as_dtype(*v, DType::Float64);
    value = v->dtype == DType::Bool || is_integral(v->dtype, false)
                ? Scalar::from_int(static_cast<int64_t>(*cdata<double>(d)))
                : Scalar::from_double(*cdata<double>(d));
  } else {
    LATHE_ASSIGN_OR_RETURN(value, c.scalar("value"));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return fill_tensor(*out, value);
}

Status arange_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Scalar end, c.scalar("end"));
  LATHE_ASSIGN_OR_RETURN(Scalar start, c.scalar("start", Scalar::from_int(0)));
  LATHE_ASSIGN_OR_RETURN(Scalar step, c.scalar("step", Scalar::from_int(1)));
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  const bool floating = start.is_floating() || end.is_floating() || step.is_floating();
  const DType dt = dtype.value_or(floating ? DType::Float32 : DType::Int64);
  if (step.to_double() == 0) return c.arg_error("step", "must be non-zero");
  const double span = (end.to_double() - start.to_double()) / step.to_double();
  if (span < 0) {
    return make_error("arange: upper bound and step have inconsistent signs");
  }
  int64_t n = 0;
  if (!floating) {
    const int64_t s = start.to_int(), e = end.to_int(), st = step.to_int();
    n = st > 0 ? (e > s ? (e - s + st - 1) / st : 0) : (e < s ? (s - e - st - 1) / -st : 0);
  } else {
    n = static_cast<int64_t>(std::ceil(span));
  }
  n = std::max<int64_t>(n, 0);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, {n}));
  return dispatch<Types::Numeric>(dt, "arange", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* p = mdata<T>(*out);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(start.to_double() + static_cast<double>(i) * step.to_double());
      } else if (!floating) {
        p[i] = static_cast<T>(start.to_int() + i * step.to_int());
      } else {
        p[i] = static_cast<T>(start.to_double() + static_cast<double>(i) * step.to_double());
      }
    }
    return Status::Ok();
  });
}

Status scalar_tensor_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("s"));
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dtype.value_or(DType::Float32), std::vector<int64_t>{}));
  return fill_tensor(*out, s);
}

// tril/triu over the last two dims: keep j - i <= diagonal (tril) or >= (triu).
template <bool lower>
Status tri_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t diagonal, c.int_arg("diagonal", 0));
  const size_t r = self->sizes.size();
  if (r < 2) return make_error(std::string(lower ? "tril" : "triu") + ": input must have at least 2 dims");
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  LATHE_RETURN_IF_ERROR(copy_into(*self, *out));
  const int64_t R = self->sizes[r - 2], C = self->sizes[r - 1];
  const int64_t planes = R * C == 0 ? 0 : out->numel() / (R * C);
  const size_t es = dtype_size(out->dtype);
  std::byte* base = out->storage->mutable_data() + out->storage_offset * static_cast<int64_t>(es);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j) {
        const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
        if (!keep) std::memset(base + ((p * R + i) * C + j) * static_cast<int64_t>(es), 0, es);
      }
  return Status::Ok();
}

}  // namespace

void register_factory_kernels(KernelRegistry& r) {
  register_overloads(r, "full", {"default"}, constructor_kernel<true, false, -1>);
  register_overloads(r, "zeros", {"default"}, constructor_kernel<true, false, 0>);
  register_overloads(r, "ones", {"default"}, constructor_kernel<true, false, 1>);
  register_overloads(r, "empty", {"memory_format", "default"}, constructor_kernel<true, false, 0>);
  register_overloads(r, "full_like", {"default"}, constructor_kernel<false, true, -1>);
  register_overloads(r, "zeros_like", {"default"}, constructor_kernel<false, true, 0>);
  register_overloads(r, "ones_like", {"default"}, constructor_kernel<false, true, 1>);
  register_overloads(r, "empty_like", {"default"}, constructor_kernel<false, true, 0>);
  register_overloads(r, "new_full", {"default"}, constructor_kernel<true, true, -1>);
  register_overloads(r, "new_zeros", {"default"}, constructor_kernel<true, true, 0>);
  register_overloads(r, "new_ones", {"default"}, constructor_kernel<true, true, 1>);
  register_overloads(r, "new_empty", {"default"}, constructor_kernel<true, true, 0>);
  register_overloads(r, "empty_strided", {"default"}, empty_strided_kernel);
  register_overloads(r, "fill", {"Scalar", "Tensor"}, fill_kernel);
  register_overloads(r, "arange", {"default", "start", "start_step"}, arange_kernel);
  register_overloads(r, "scalar_tensor", {"default"}, scalar_tensor_kernel);
  register_overloads(r, "tril", {"default"}, tri_kernel<true>);
  register_overloads(r, "triu", {"default"}, tri_kernel<false>);
}

}  // namespace lathe::kernels
