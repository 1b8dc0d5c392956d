#pragma once

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// Every element of `out` (contiguous, writable) set to `value`, converted
// to out's dtype as PyTorch's fill_ converts it.
Status fill_tensor(Tensor& out, const Scalar& value);

}  // namespace lathe::kernels
