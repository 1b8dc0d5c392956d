// The parameters of each payload op, by name. A payload stores them as one
// flat int64 list and one float64 list (payload.h); this file is the one
// place that order is written: the lowering builds a struct and calls
// to_ints() (XNNPACK operators) or to_record() (host ops), init() calls
// parse_*(), which checks the count and that every entry is in range before
// anything reads it (for XNNPACK operators: 0 <= x < 2^32).
#pragma once

#include <cstdint>
#include <vector>

#include "lathe/core/result.h"

namespace lathe::xnnpack_params {

struct FullyConnected {
  int64_t batch, input_channels, output_channels;
  bool transposed_weights;  // mm/addmm's [K, N] matrix
};

struct Conv2d {
  int64_t batch, height, width, input_channels, output_channels;
  int64_t kernel_h, kernel_w, stride_h, stride_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t dilation_h, dilation_w, groups, output_h, output_w;
};

struct Pool2d {
  int64_t batch, height, width, channels, kernel_h, kernel_w, stride_h, stride_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right, dilation_h, dilation_w, output_h, output_w;
};

struct GlobalPool {
  int64_t batch, pixels, channels;
};

struct Softmax {
  int64_t rows, channels;
};

// clamp / hardswish / sigmoid / hardsigmoid: one flat run of elements.
struct Elementwise {
  int64_t count;
};

// to_nhwc / to_nchw of a [N, C, H, W] value (a 3-D one as [N, C, 1, L]).
struct Layout {
  int64_t batch, channels, height, width;
};

// add / mul: each operand's shape in its stored layout (broadcast right-aligned).
struct Binary {
  std::vector<int64_t> shape_a, shape_b;
};

// constant_pad: the input's shape in its stored layout, padding before and after.
struct ConstantPad {
  std::vector<int64_t> sizes, pre, post;
};

// ---- host ops (xnnpack_host_ops.h): integer and float parameters ----
// reshape and bmm take none; shapes come from the payload's values.

// layer_norm over the last `normalized_rank` dims.
struct LayerNorm {
  int64_t normalized_rank;
  double eps;
};

struct Gelu {
  bool tanh;  // the tanh approximation
};

struct Permute {
  std::vector<int64_t> dims;  // normalised to 0..rank-1
};

struct Roll {
  std::vector<int64_t> shifts, dims;  // one shift per dim, at least one dim
};

// scaled_dot_product_attention.
struct Sdpa {
  bool causal;
  double scale;  // NaN: 1/sqrt(E), PyTorch's default
  bool enable_gqa = false;  // key/value heads divide the query's (a record without it: false)
};

// Inputs side by side in the buffer's own layout: each is `outer` rows of
// numel/outer floats.
struct Concat {
  int64_t outer;
};

// Each of `outer` rows of `row_in` floats keeps `row_out` of them from `offset`.
struct Slice {
  int64_t outer, row_in, offset, row_out;
};

// An eval batch norm no convolution absorbs: y = x * scale[c] + shift[c].
struct ChannelAffine {
  bool channels_last;
  int64_t batch, channels, spatial;
  double eps;
};

// A host op's record: its ints and floats.
struct HostRecord {
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

std::vector<int64_t> to_ints(const FullyConnected& p);
std::vector<int64_t> to_ints(const Conv2d& p);
std::vector<int64_t> to_ints(const Pool2d& p);
std::vector<int64_t> to_ints(const GlobalPool& p);
std::vector<int64_t> to_ints(const Softmax& p);
std::vector<int64_t> to_ints(const Elementwise& p);
std::vector<int64_t> to_ints(const Layout& p);
std::vector<int64_t> to_ints(const Binary& p);
std::vector<int64_t> to_ints(const ConstantPad& p);

HostRecord to_record(const LayerNorm& p);
HostRecord to_record(const Gelu& p);
HostRecord to_record(const Permute& p);
HostRecord to_record(const Roll& p);
HostRecord to_record(const Sdpa& p);
HostRecord to_record(const Concat& p);
HostRecord to_record(const Slice& p);
HostRecord to_record(const ChannelAffine& p);

Result<FullyConnected> parse_fully_connected(const std::vector<int64_t>& ints);
Result<Conv2d> parse_conv2d(const std::vector<int64_t>& ints);
Result<Pool2d> parse_pool2d(const std::vector<int64_t>& ints);
Result<GlobalPool> parse_global_pool(const std::vector<int64_t>& ints);
Result<Softmax> parse_softmax(const std::vector<int64_t>& ints);
Result<Elementwise> parse_elementwise(const std::vector<int64_t>& ints);
Result<Layout> parse_layout(const std::vector<int64_t>& ints);
Result<Binary> parse_binary(const std::vector<int64_t>& ints, size_t max_rank);
Result<ConstantPad> parse_constant_pad(const std::vector<int64_t>& ints, size_t max_rank);

// Counts and the ranges that need no shapes (xnnpack_host_ops.h checks
// the rest against the operands' shapes). Roll's shifts may be negative,
// Sdpa's scale NaN: these are not the fixed records above.
Result<LayerNorm> parse_layer_norm(const HostRecord& r);
Result<Gelu> parse_gelu(const HostRecord& r);
Result<Permute> parse_permute(const HostRecord& r);
Result<Roll> parse_roll(const HostRecord& r);
Result<Sdpa> parse_sdpa(const HostRecord& r);
Result<Concat> parse_concat(const HostRecord& r);
Result<Slice> parse_slice(const HostRecord& r);
Result<ChannelAffine> parse_channel_affine(const HostRecord& r);

}  // namespace lathe::xnnpack_params
