#include "lathe/backends/xnnpack_kinds.h"

#include <array>

namespace lathe {

namespace {

struct KindRow {
  XnnpackKind kind;
  std::string_view name;
  std::optional<HostOp> host;
};

constexpr KindRow kRows[] = {
#define LATHE_XNNPACK_OP(name, payload_name) {XnnpackKind::name, payload_name, std::nullopt},
#define LATHE_XNNPACK_HOST_OP(name, payload_name) {XnnpackKind::name, payload_name, HostOp::name},
#include "lathe/backends/xnnpack_ops.def"
};

}  // namespace

std::string_view xnnpack_kind_name(XnnpackKind kind) { return kRows[static_cast<size_t>(kind)].name; }

std::string_view host_op_name(HostOp op) {
  for (const KindRow& r : kRows) {
    if (r.host == op) return r.name;
  }
  return "?";
}

std::optional<XnnpackKind> xnnpack_kind_named(std::string_view name) {
  for (const KindRow& r : kRows) {
    if (r.name == name) return r.kind;
  }
  return std::nullopt;
}

std::optional<HostOp> host_op_of(XnnpackKind kind) { return kRows[static_cast<size_t>(kind)].host; }

}  // namespace lathe
