// (being written: see register.h)
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

void register_contraction_kernels(KernelRegistry&) {}

}  // namespace lathe::kernels
