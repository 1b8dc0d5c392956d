// The integer parameters of each XNNPACK payload op, by name. A payload
// stores them as one flat int64 list (payload.h); this file is the one place
// that order is written: the lowering builds a struct and calls to_ints(),
// init() calls parse_*(), which checks the count and that every entry is a
// sane size (0 <= x < 2^32) before anything reads it.
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

std::vector<int64_t> to_ints(const FullyConnected& p);
std::vector<int64_t> to_ints(const Conv2d& p);
std::vector<int64_t> to_ints(const Pool2d& p);
std::vector<int64_t> to_ints(const GlobalPool& p);
std::vector<int64_t> to_ints(const Softmax& p);
std::vector<int64_t> to_ints(const Elementwise& p);
std::vector<int64_t> to_ints(const Layout& p);
std::vector<int64_t> to_ints(const Binary& p);
std::vector<int64_t> to_ints(const ConstantPad& p);

Result<FullyConnected> parse_fully_connected(const std::vector<int64_t>& ints);
Result<Conv2d> parse_conv2d(const std::vector<int64_t>& ints);
Result<Pool2d> parse_pool2d(const std::vector<int64_t>& ints);
Result<GlobalPool> parse_global_pool(const std::vector<int64_t>& ints);
Result<Softmax> parse_softmax(const std::vector<int64_t>& ints);
Result<Elementwise> parse_elementwise(const std::vector<int64_t>& ints);
Result<Layout> parse_layout(const std::vector<int64_t>& ints);
Result<Binary> parse_binary(const std::vector<int64_t>& ints, size_t max_rank);
Result<ConstantPad> parse_constant_pad(const std::vector<int64_t>& ints, size_t max_rank);

}  // namespace lathe::xnnpack_params
