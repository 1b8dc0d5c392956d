// Comparing a computed tensor with a reference.
//
// Floating outputs are judged by their error relative to the output's
// scale: rel = max|got - ref| / max|ref|. An elementwise relative error is
// meaningless for entries that cancel to ~0 (a GEMM output, a centred
// activation), which is exactly where accumulation order shows. A result
// passes when max|got - ref| <= atol + rtol * max|ref|. NaN matches NaN and
// an infinity matches the same infinity. Integer and bool outputs must be
// equal.
#pragma once

#include <cstddef>
#include <string>

#include "lathe/core/tensor.h"

namespace lathe {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 0.0;
};

struct TensorDiff {
  bool shape_ok = true, dtype_ok = true;
  double max_abs = 0;  // max |got - ref| (inf on NaN/inf mismatches)
  double max_ref = 0;  // max |ref| over finite entries
  double rel = 0;      // max_abs / max_ref (0 when both are 0)
  size_t mismatches = 0;  // entries beyond the tolerance given to compare()
  bool ok = true;
  // "max abs 1.2e-07, rel 3.4e-08" or why it failed.
  std::string describe() const;
};

TensorDiff compare_tensors(const Tensor& got, const Tensor& ref, const Tolerance& tol = {});

}  // namespace lathe
