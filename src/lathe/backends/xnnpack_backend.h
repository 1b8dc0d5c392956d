// The XNNPACK backend (Debian's libxnnpack, February 2022 API). Built with
// LATHE_WITH_XNNPACK=OFF, xnnpack_backend() is an UnbuiltBackend
// (backend.h, xnnpack_disabled.cpp), as vulkan_backend() is without Vulkan.
//
// Claims float32 nodes with concrete shapes:
//   linear, mm / addmm with a constant mat2     -> fully_connected (prepacked; mm/addmm
//                                                  with XNN_FLAG_TRANSPOSE_WEIGHTS)
//   convolution (2-D, or 1-D as 2-D over a      -> convolution2d_nhwc (prepacked; depthwise
//     unit height; any groups)                     and grouped too), with a following eval
//     + a following eval batch norm                batch norm folded into its weights
//   a relu / hardtanh / clamp after one of those -> fused as the op's output min/max
//   add.Tensor, mul.Tensor (tensor operands)    -> add_nd / multiply_nd
//   relu, clamp, hardtanh, hardswish, sigmoid   -> clamp / hardswish / sigmoid
//   hardsigmoid                                 -> a loop of our own (not in this XNNPACK)
//   max_pool2d_with_indices (indices unused),   -> max_pooling2d / average_pooling2d
//     avg_pool2d (no padding), mean over H,W       global_average_pooling
//   _softmax / softmax over the last dim        -> softmax
//   constant_pad_nd (no cropping)               -> constant_pad_nd_x32, in the input's layout
//   layer_norm, gelu, roll, bmm,                -> host ops: Lathe's portable kernels run
//     scaled_dot_product_attention,                inside the delegate (xnnpack_host_ops.h);
//     permute / view / reshape after a claimed     this XNNPACK has no operator for them
//     node
// Inside a delegate, 4-D (and 1-D convolutions' 3-D) activations stay
// channels-last between convolutions, pools and pads; layout changes are explicit ops, and outputs leave as NCHW.
//
// A linear / mm / addmm / convolution / batch norm whose weight, bias or
// statistics are not compile-time constants (Constness) is never claimed.
// init() re-checks, because a payload may be hand-made: a runtime operand
// in a weight position fails with the node, the operand and its producer.
#pragma once

#include "lathe/backends/backend.h"

namespace lathe {

class XnnpackBackend : public Backend {
 public:
  std::string_view name() const override { return "xnnpack"; }
  NodeSupport support(const Node& node, const Constness& constness) const override;
  std::vector<std::string> ops_to_keep() const override;
  std::vector<std::string> claimed_ops() const override;
  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& subgraph) const override;
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const override;
};

// The one backend instance (stateless; safe to share).
const Backend& xnnpack_backend();

// XNNPACK runs on the process's one intra-op pool (runtime/parallel.h):
// these size that pool, the same as set_num_threads (n >= 1; default 1).
void set_xnnpack_threads(int n);
int xnnpack_threads();

}  // namespace lathe
