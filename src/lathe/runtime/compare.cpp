#include "lathe/runtime/compare.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "lathe/runtime/kernels/util.h"

namespace lathe {

std::string TensorDiff::describe() const {
  if (!dtype_ok) return "dtype differs";
  if (!shape_ok) return "shape differs";
  char buf[160];
  std::snprintf(buf, sizeof buf, "max abs %.3g, rel %.3g (max |ref| %.3g)", max_abs, rel, max_ref);
  std::string s = buf;
  if (mismatches) s += ", " + std::to_string(mismatches) + " element(s) off";
  return s;
}

TensorDiff compare_tensors(const Tensor& got, const Tensor& ref, const Tolerance& tol) {
  TensorDiff d;
  if (got.dtype != ref.dtype) {
    d.dtype_ok = d.ok = false;
    return d;
  }
  if (got.sizes != ref.sizes) {
    d.shape_ok = d.ok = false;
    return d;
  }
  const bool floating = !kernels::is_integral(got.dtype, true);
  const Tensor a = kernels::as_contiguous(kernels::as_dtype(got, DType::Float64));
  const Tensor b = kernels::as_contiguous(kernels::as_dtype(ref, DType::Float64));
  const double* pa = kernels::cdata<double>(a);
  const double* pb = kernels::cdata<double>(b);
  const int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(pb[i])) d.max_ref = std::max(d.max_ref, std::fabs(pb[i]));
  }
  const double bound = tol.atol + tol.rtol * d.max_ref;
  for (int64_t i = 0; i < n; ++i) {
    double e;
    if (std::isnan(pa[i]) || std::isnan(pb[i])) {
      e = std::isnan(pa[i]) && std::isnan(pb[i]) ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(pa[i]) || std::isinf(pb[i])) {
      e = pa[i] == pb[i] ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      e = std::fabs(pa[i] - pb[i]);
    }
    d.max_abs = std::max(d.max_abs, e);
    if (floating ? e > bound : e != 0) ++d.mismatches;
  }
  d.rel = d.max_ref > 0 ? d.max_abs / d.max_ref : (d.max_abs > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  d.ok = d.mismatches == 0;
  return d;
}

}  // namespace lathe
