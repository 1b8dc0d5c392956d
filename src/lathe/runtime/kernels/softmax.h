// softmax and log_softmax along one dim.
#pragma once

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// out = softmax(in, dim) (or log_softmax); in is converted to out's dtype.
// Subtracts the row max first; rows that are all -inf give NaN, as in ATen.
// With `safe` (_safe_softmax), such rows give zeros instead.
Status softmax_out(const Tensor& in, int64_t dim, bool log, Tensor& out, bool safe = false);

}  // namespace lathe::kernels
