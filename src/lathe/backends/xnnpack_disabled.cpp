// Built instead of the XNNPACK backend when LATHE_WITH_XNNPACK is OFF: the
// backend is an UnbuiltBackend (backend.h) that says why; the thread
// setting does nothing.
#include "lathe/backends/xnnpack_backend.h"

namespace lathe {

const Backend& xnnpack_backend() {
  static const UnbuiltBackend backend(
      "xnnpack",
      "xnnpack: this Lathe was built without the XNNPACK backend (LATHE_WITH_XNNPACK=OFF; it needs libxnnpack-dev "
      "at configure time: bash scripts/setup-deps.sh, then reconfigure with it ON)");
  return backend;
}

void set_xnnpack_threads(int) {}
int xnnpack_threads() { return 0; }

}  // namespace lathe
