#include "lathe/runtime/kernels/softmax.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/vector_math.h"

namespace lathe::kernels {

Status softmax_out(const Tensor& in_raw, int64_t dim, bool log, Tensor& out, bool safe) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "softmax", "self"));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, in_raw.sizes, "softmax"));
  const int64_t r = static_cast<int64_t>(in_raw.sizes.size());
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, r));
  const Tensor in = as_contiguous(as_dtype(in_raw, out.dtype));
  int64_t outer = 1, len = r == 0 ? 1 : in.sizes[d], inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= in.sizes[k];
  for (int64_t k = d + 1; k < r; ++k) inner *= in.sizes[k];
  if (len == 0) return Status::Ok();  // no elements, and no data to offset into
  return dispatch<Types::Float>(out.dtype, "softmax", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(in);
    T* y = mdata<T>(out);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* xs = x + o * len * inner + i;
        T* ys = y + o * len * inner + i;
        T mx = xs[0];
        for (int64_t k = 1; k < len; ++k) mx = std::max(mx, xs[k * inner]);
        if (safe && mx == -std::numeric_limits<T>::infinity()) {  // every entry masked out
          for (int64_t k = 0; k < len; ++k) ys[k * inner] = T(0);
          continue;
        }
        // Like ATen: exp(x - max) summed, then scaled by 1/sum.
        double sum = 0;
        const bool vectorised = std::is_same_v<T, float> && inner == 1 && !log;
        if constexpr (std::is_same_v<T, float>) {
          if (vectorised) {  // a contiguous row: the vectorised exp, in ys
            for (int64_t k = 0; k < len; ++k) ys[k] = xs[k] - mx;
            exp_f32(ys, ys, len);
            for (int64_t k = 0; k < len; ++k) sum += ys[k];
          }
        }
        for (int64_t k = 0; !vectorised && k < len; ++k) {
          const T e = std::exp(xs[k * inner] - mx);
          if (!log) ys[k * inner] = e;
          sum += e;
        }
        if (log) {
          const T lse = static_cast<T>(std::log(sum));
          for (int64_t k = 0; k < len; ++k) ys[k * inner] = xs[k * inner] - mx - lse;
        } else {
          const T inv = T(1) / static_cast<T>(sum);
          for (int64_t k = 0; k < len; ++k) ys[k * inner] *= inv;
        }
      }
    }
    return Status::Ok();
  });
}

namespace {

template <bool log, bool safe = false>
Status softmax_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));  // softmax.int only
  DType dt = dtype.value_or(self->dtype);
  if (is_integral(dt, true)) return make_error("softmax: needs a floating dtype, got " + std::string(dtype_name(dt)));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, self->sizes));
  return softmax_out(*self, dim, log, *out, safe);
}

}  // namespace

void register_softmax_kernels(KernelRegistry& r) {
  register_overloads(r, "_softmax", {"default"}, softmax_kernel<false>);
  register_overloads(r, "softmax", {"int"}, softmax_kernel<false>);
  register_overloads(r, "_log_softmax", {"default"}, softmax_kernel<true>);
  register_overloads(r, "_safe_softmax", {"default"}, softmax_kernel<false, true>);
  register_overloads(r, "log_softmax", {"int"}, softmax_kernel<true>);
}

}  // namespace lathe::kernels
