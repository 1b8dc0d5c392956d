// The few functions of lathe/extend.h that are not a header of their own.
#include "lathe/extend.h"

#include "lathe/runtime/kernels/util.h"

namespace lathe {

Tensor contiguous_copy(const Tensor& t) { return kernels::contiguous_copy(t); }

}  // namespace lathe
