// (being written: see register.h)
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

void register_scan_kernels(KernelRegistry&) {}

}  // namespace lathe::kernels
