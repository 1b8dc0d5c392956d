// Scans along one dim: cumsum and cumprod (RoBERTa's and Whisper's position
// ids are a cumsum of the padding mask), and diff (adjacent differences,
// with optional prepend/append). Each lane of the scan dim is walked in
// order, accumulating in the output dtype as ATen's CPU kernels do.
#include <type_traits>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

namespace {

// The dims around `dim` of a contiguous tensor: `outer` lanes before it,
// `inner` elements after it (a lane's stride).
struct Lanes {
  int64_t outer = 1, len = 1, inner = 1;
};

Lanes lanes_of(const std::vector<int64_t>& sizes, int64_t dim) {
  Lanes l;
  for (int64_t d = 0; d < dim; ++d) l.outer *= sizes[d];
  l.len = sizes.empty() ? 1 : sizes[dim];
  for (size_t d = dim + 1; d < sizes.size(); ++d) l.inner *= sizes[d];
  return l;
}

template <bool kProduct>
Status cumulative_kernel(KernelCall& c) {
  const char* op = kProduct ? "cumprod" : "cumsum";
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, op, "self"));
  LATHE_ASSIGN_OR_RETURN(int64_t raw_dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(auto requested, c.dtype_arg("dtype"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, normalize_dim(raw_dim, static_cast<int64_t>(self->sizes.size())));
  // Integer and bool inputs accumulate in int64 unless a dtype is given.
  const DType dt = requested ? *requested : (is_integral(self->dtype, true) ? DType::Int64 : self->dtype);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, self->sizes));
  const Tensor x = as_contiguous(as_dtype(*self, dt));
  const Lanes l = lanes_of(self->sizes, dim);
  return dispatch<Types::Numeric>(dt, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    // ATen's CPU scan accumulates float in double (acc_type<float>).
    using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
    const T* px = cdata<T>(x);
    T* po = mdata<T>(*out);
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const int64_t base = o * l.len * l.inner + i;
        Acc acc = kProduct ? Acc(1) : Acc(0);
        for (int64_t k = 0; k < l.len; ++k) {
          const int64_t at = base + k * l.inner;
          // Integers wrap as in PyTorch (int_arith.h; an int64 overflow was undefined).
          if constexpr (kProduct) acc = wrapping_mul(acc, static_cast<Acc>(px[at]));
          else acc = wrapping_add(acc, static_cast<Acc>(px[at]));
          po[at] = static_cast<T>(acc);
        }
      }
    }
    return Status::Ok();
  });
}

// diff(self, n, dim, prepend, append): n rounds of out[k] = x[k+1] - x[k]
// along dim, over cat(prepend, self, append); bool inputs take xor (torch's
// "subtraction" for bool).
Status diff_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "diff", "self"));
  LATHE_ASSIGN_OR_RETURN(int64_t n, c.int_arg("n", 1));
  LATHE_ASSIGN_OR_RETURN(int64_t raw_dim, c.int_arg("dim", -1));
  LATHE_ASSIGN_OR_RETURN(const Tensor* prepend, c.optional_tensor("prepend"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* append, c.optional_tensor("append"));
  if (self->sizes.empty()) return c.arg_error("self", "diff expects input to be at least one-dimensional");
  if (n < 0) return c.arg_error("n", "order must be non-negative but got " + std::to_string(n));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, normalize_dim(raw_dim, static_cast<int64_t>(self->sizes.size())));
  // The sequence to difference: prepend ++ self ++ append along dim.
  std::vector<const Tensor*> parts;
  for (const Tensor* t : {prepend, self, append}) {
    if (!t) continue;
    if (t->sizes.size() != self->sizes.size() || t->dtype != self->dtype) {
      return c.arg_error(t == prepend ? "prepend" : "append", "must have the rank and dtype of self");
    }
    for (size_t d = 0; d < t->sizes.size(); ++d) {
      if (static_cast<int64_t>(d) != dim && t->sizes[d] != self->sizes[d]) {
        return c.arg_error(t == prepend ? "prepend" : "append", "sizes " + shape_string(t->sizes) + " do not match self " +
                                                                  shape_string(self->sizes) + " outside dim " + std::to_string(dim));
      }
    }
    parts.push_back(t);
  }
  std::vector<int64_t> sizes = self->sizes;
  sizes[dim] = 0;
  for (const Tensor* t : parts) sizes[dim] += t->sizes[dim];
  Tensor seq = Tensor::empty(self->dtype, sizes);
  int64_t at = 0;
  for (const Tensor* t : parts) {
    std::vector<int64_t> strides = seq.strides;
    Tensor dst = make_view(seq, t->sizes, strides, at * seq.strides[dim]);
    LATHE_RETURN_IF_ERROR(copy_into(*t, dst));
    at += t->sizes[dim];
  }
  std::vector<int64_t> out_sizes = sizes;
  out_sizes[dim] = std::max<int64_t>(0, sizes[dim] - n);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, out_sizes));
  return dispatch<Types::All>(self->dtype, "diff", [&](auto tag) -> Status {
    using T = decltype(tag);
    std::vector<T> cur(cdata<T>(seq), cdata<T>(seq) + seq.numel());
    Lanes l = lanes_of(sizes, dim);
    for (int64_t round = 0; round < n && l.len > 0; ++round) {
      std::vector<T> next(static_cast<size_t>(l.outer * (l.len - 1) * l.inner));
      for (int64_t o = 0; o < l.outer; ++o)
        for (int64_t k = 0; k + 1 < l.len; ++k)
          for (int64_t i = 0; i < l.inner; ++i) {
            const T a = cur[(o * l.len + k) * l.inner + i], b = cur[(o * l.len + k + 1) * l.inner + i];
            if constexpr (std::is_same_v<T, bool>) next[(o * (l.len - 1) + k) * l.inner + i] = a != b;
            else next[(o * (l.len - 1) + k) * l.inner + i] = wrapping_sub(b, a);  // integers wrap as in PyTorch
          }
      cur.swap(next);
      --l.len;
    }
    std::copy(cur.begin(), cur.end(), mdata<T>(*out));
    return Status::Ok();
  });
}

}  // namespace

void register_scan_kernels(KernelRegistry& r) {
  register_overloads(r, "cumsum", {"default"}, cumulative_kernel<false>);
  register_overloads(r, "cumprod", {"default"}, cumulative_kernel<true>);
  register_overloads(r, "diff", {"default"}, diff_kernel);
}

}  // namespace lathe::kernels
