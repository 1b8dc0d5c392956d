// The XNNPACK payload's op kinds as enums, generated from xnnpack_ops.def,
// so the lowering and the runtime name each kind the same way: the string
// exists only in the payload record (payload.h), through these two functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lathe {

// Every kind: the XNNPACK operators first, then the host ops.
enum class XnnpackKind : uint8_t {
#define LATHE_XNNPACK_OP(name, payload_name) name,
#define LATHE_XNNPACK_HOST_OP(name, payload_name) name,
#include "lathe/backends/xnnpack_ops.def"
};

// The host ops alone (xnnpack_host_ops.h switches over them).
enum class HostOp : uint8_t {
#define LATHE_XNNPACK_HOST_OP(name, payload_name) name,
#include "lathe/backends/xnnpack_ops.def"
};

// The name a payload record stores ("fully_connected").
std::string_view xnnpack_kind_name(XnnpackKind kind);
std::string_view host_op_name(HostOp op);
// The kind a payload record names, or nullopt.
std::optional<XnnpackKind> xnnpack_kind_named(std::string_view name);
// The host op a kind is, or nullopt for an XNNPACK operator.
std::optional<HostOp> host_op_of(XnnpackKind kind);

}  // namespace lathe
