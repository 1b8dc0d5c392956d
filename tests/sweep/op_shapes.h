// Shape inference for the sweep's op recipes: the output shape of an op and
// the shapes of the tensors it owns, from its operands' shapes. The
// generator asks it before adding an op; the builder asks it again, so a
// shrunk recipe whose sizes no longer fit is rejected, not built wrong.
#pragma once

#include <cstdint>
#include <vector>

#include "lathe/core/result.h"
#include "sweep/program_spec.h"

namespace lathe::sweep {

struct Shape {
  std::vector<int64_t> d;
  // The strides PyTorch gives the result (views keep their input's memory);
  // empty: contiguous. Written into the value's metadata, which passes read
  // (decompose views a contiguous input, reshapes any other).
  std::vector<int64_t> strides;
  int64_t numel() const;
  int rank() const { return static_cast<int>(d.size()); }
  std::vector<int64_t> effective_strides() const;
  bool contiguous() const;  // size-1 dims ignored, as PyTorch does
};

struct OpShapes {
  Shape out;
  std::vector<std::vector<int64_t>> weights;  // one per tensor the op owns, in OpSpec::weights order
  std::vector<bool> positive;                 // that tensor must hold positive values (a variance, a divisor)
};

Result<OpShapes> op_shapes(const OpSpec& op, const std::vector<Shape>& args);

// conv2d's groups for a group mode (0: 1, 1: depthwise, 2: the largest of 4, 3, 2 dividing channels).
int64_t conv_groups(int64_t mode, int64_t channels);
// Output length of a window op (pooling, convolution) along one dim; 0 if empty.
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);
// Broadcast two shapes; error if they do not broadcast.
Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace lathe::sweep
