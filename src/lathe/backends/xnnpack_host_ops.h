// Host ops: the ops a claimed group needs that February 2022's XNNPACK has
// no operator for (layer_norm, gelu, permute, reshape, roll, bmm,
// scaled_dot_product_attention). The delegate runs them with Lathe's
// portable kernels, on its own buffers, between its XNNPACK operators.
//
// Why claim them at all: without them a transformer or a Swin block splits
// into one delegate per linear, and every split pays a graph break and, for
// 4-D values, a layout change in and out of NHWC. With them the group stays
// whole; the numbers are the portable kernels' (PyTorch's), by construction.
//
// Payload records (values carry the logical, PyTorch-order sizes; every
// host op reads and writes contiguous, NCHW-order buffers). The parameters
// are xnnpack_params.h's host-op structs:
//   layer_norm  in: self [weight] [bias]   LayerNorm
//   gelu        in: self                   Gelu
//   permute     in: self                   Permute
//   reshape     in: self                   (a copy; sizes from the values)
//   roll        in: self                   Roll
//   bmm         in: self mat2
//   sdpa        in: query key value [mask] Sdpa
// and three that work on the buffer's own layout (NCHW or channels-last),
// given as flat extents, so a channels-last group need not change layout:
//   concat      in: x0 x1 ...              Concat
//   slice       in: self                   Slice
//   channel_affine in: self weight bias running_mean running_var
//                                          ChannelAffine (an eval batch norm
//                                          that no convolution absorbs)
#pragma once

#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "lathe/backends/payload.h"
#include "lathe/backends/xnnpack_kinds.h"
#include "lathe/backends/xnnpack_params.h"
#include "lathe/core/tensor.h"

namespace lathe {


// A host op as init() accepted it: its parameters parsed (monostate for
// reshape and bmm, which take none).
struct HostOpCall {
  HostOp op;
  std::variant<std::monostate, xnnpack_params::LayerNorm, xnnpack_params::Gelu, xnnpack_params::Permute,
               xnnpack_params::Roll, xnnpack_params::Sdpa, xnnpack_params::Concat, xnnpack_params::Slice,
               xnnpack_params::ChannelAffine>
      params;
};

// At init: operand counts, parameters and shapes agree, so run_host_op()
// cannot read or write out of bounds whatever the payload says.
Result<HostOpCall> check_host_op(HostOp op, const PayloadOp& pop, const std::vector<PayloadValue>& values);

// `in` are the operands in payload order (`pop` gives their roles), `out`
// the result (contiguous, writable, shaped as its payload value).
Status run_host_op(const HostOpCall& call, const PayloadOp& pop, const std::vector<const Tensor*>& in, Tensor& out);

}  // namespace lathe
