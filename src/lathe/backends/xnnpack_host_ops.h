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
// Payload encoding (values carry the logical, PyTorch-order sizes; every
// host op reads and writes contiguous, NCHW-order buffers):
//   layer_norm  in: self [weight] [bias]  ints: {normalized rank}  floats: {eps}
//   gelu        in: self                  ints: {tanh approximation 0/1}
//   permute     in: self                  ints: dims
//   reshape     in: self                  (a copy; sizes from the values)
//   roll        in: self                  ints: {n, shifts[n], dims[n]}
//   bmm         in: self mat2
//   sdpa        in: query key value [mask] ints: {causal}  floats: {scale, or NaN: 1/sqrt(E)}
// and three that work on the buffer's own layout (NCHW or channels-last),
// given as flat extents, so a channels-last group need not change layout:
//   concat      in: x0 x1 ...             ints: {outer}   each input is outer rows of
//                                         numel/outer floats, laid side by side
//   slice       in: self                  ints: {outer, row_in, offset, row_out}
//   channel_affine in: self weight bias running_mean running_var
//                                         ints: {channels_last 0/1, N, C, spatial}  floats: {eps}
//               (an eval batch norm that no convolution absorbs)
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "lathe/backends/payload.h"
#include "lathe/core/tensor.h"

namespace lathe {

enum class HostOp { LayerNorm, Gelu, Permute, Reshape, Roll, Bmm, Sdpa, Concat, Slice, ChannelAffine };

std::optional<HostOp> host_op_named(std::string_view kind);

// At init: operand counts, parameters and shapes agree, so run() cannot
// read or write out of bounds whatever the payload says.
Status check_host_op(HostOp op, const PayloadOp& pop, const std::vector<PayloadValue>& values);

// `in` are the operands in payload order, `out` the result (contiguous,
// writable, shaped as its payload value).
Status run_host_op(HostOp op, const PayloadOp& pop, const std::vector<const Tensor*>& in, Tensor& out);

}  // namespace lathe
