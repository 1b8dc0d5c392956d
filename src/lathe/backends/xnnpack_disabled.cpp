// Built instead of the XNNPACK backend when LATHE_WITH_XNNPACK is OFF: the
// backend keeps its name, so `lathe lower --backend xnnpack` and `lathe run`
// on an archive lowered elsewhere say why they cannot, instead of "unknown
// backend". The thread setting does nothing.
#include "lathe/backends/xnnpack_backend.h"

namespace lathe {

namespace {
Error disabled() {
  return Error("xnnpack: this Lathe was built without the XNNPACK backend (LATHE_WITH_XNNPACK=OFF; it needs "
               "libxnnpack-dev at configure time: bash scripts/setup-deps.sh, then reconfigure with it ON)");
}
}  // namespace

Status XnnpackBackend::available() const { return disabled(); }
NodeSupport XnnpackBackend::support(const Node&, const Constness&) const {
  return NodeSupport::no("Lathe was built without XNNPACK");
}
std::vector<std::string> XnnpackBackend::ops_to_keep() const { return {}; }
Result<std::vector<std::byte>> XnnpackBackend::preprocess(const DelegateSubgraph&) const { return disabled(); }
Result<std::unique_ptr<DelegateHandle>> XnnpackBackend::init(const DelegateInitArgs&) const { return disabled(); }

const XnnpackBackend& xnnpack_backend() {
  static const XnnpackBackend backend;
  return backend;
}

void set_xnnpack_threads(int) {}
int xnnpack_threads() { return 0; }

}  // namespace lathe
