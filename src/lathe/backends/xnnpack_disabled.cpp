// Built instead of the XNNPACK backend when LATHE_WITH_XNNPACK is OFF:
// builtin_delegates() is then empty, and the thread setting does nothing.
#include "lathe/backends/xnnpack_backend.h"

namespace lathe {

void set_xnnpack_threads(int) {}
int xnnpack_threads() { return 0; }

}  // namespace lathe
