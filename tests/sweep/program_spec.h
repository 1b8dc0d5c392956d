// The recipe of a random program: plain data that program_builder.h turns
// into an ir::Program, program_generator.h draws from a seed, and the
// shrinker edits (drop ops or outputs, smaller sizes) and rebuilds.
//
//   MethodSpec "forward"
//     inputs   x0 [2,3,8,8]   x1 [4,16]          user inputs (activations)
//     op 0     conv2d(v0)  weights {Parameter, Constant}    -> v2
//     op 1     linear(v1)  weights {RuntimeComputed}        -> v3
//     outputs  v2, v3
//
// Values are numbered inputs first, then one per op. An op names only its
// activation operands; the tensors it owns (weights, biases, statistics)
// get shapes derived from its operands (op_shapes.h), so shrinking an input
// size shrinks every weight along with it. Each owned tensor has a
// WeightKind saying where it comes from in the built program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::sweep {

enum class WeightKind {
  Parameter,        // a parameter (state dict)
  Buffer,           // a buffer nobody mutates (persistent or not): a constant
  Constant,         // a lifted tensor constant
  MutableBuffer,    // a buffer updated in place (a buffer_mutation output)
  UserInput,        // passed by the caller
  FoldedFromState,  // computed from parameters/constants only (constant_propagation folds it)
  RuntimeComputed,  // computed at run time from a user input (never a compile-time constant)
};
inline constexpr int kWeightKinds = 7;
const char* weight_kind_name(WeightKind k);

enum class OpKind {
  Linear,       // p: out, has_bias
  Addmm,        // p: out, layout (0 permute(W), 1 t(W), 2 W as [in,out]), beta/alpha != 1
  Mm,           // p: out, layout
  Bmm,          // p: out
  Binary,       // p: op (add sub mul div), other (0 activation, 1 weight, 2 scalar), mask, dropped dims, alpha
  Unary,        // p: which (see unary_op_name)
  Conv2d,       // p: out_mult, k, stride, pad, dilation, group mode (1, depthwise, grouped), has_bias
  BatchNorm,    // p: eps choice; variant: legit_no_training, batch_norm, native_batch_norm
  MaxPool,      // p: k, stride, pad, dilation, ceil; variant: with_indices, max_pool2d
  AvgPool,      // p: k, stride, pad, ceil, count_include_pad
  LayerNorm,    // p: normalized dims, has_weight, has_bias; variant: layer_norm, native_layer_norm
  Softmax,      // p: dim; variant: _softmax, softmax.int, _log_softmax
  Permute,      // p: the permutation
  Transpose,    // p: d0, d1; variant: transpose.int, t
  Reshape,      // p: mode (0 merge [a,b], 1 split a by b, 2 flatten), a, b; variant: view, reshape
  Cat,          // p: dim, mode (0 activation, 1 weight of size p2, 2 self), size
  Slice,        // p: dim, start, end, step
  Mean,         // p: dim mask, keepdim
  StateUpdate,  // a running statistic: b = 0.9 b + 0.1 mean(x) (buffer_mutation); value: new b
  Unsqueeze,    // p: dim
};
inline constexpr int kOpKinds = 20;
const char* op_kind_name(OpKind k);
const char* unary_op_name(int64_t which);  // "aten.relu.default", ...
inline constexpr int kUnaryOps = 11;

struct OpSpec {
  OpKind kind = OpKind::Unary;
  std::vector<int> args;             // activation operands (value numbers)
  std::vector<int64_t> p;            // parameters, per kind (above)
  std::vector<WeightKind> weights;   // one per tensor the op owns
  int variant = 0;                   // which spelling (conv2d or convolution, ...)
};

struct MethodSpec {
  std::string name = "forward";
  std::vector<std::vector<int64_t>> inputs;  // user activation inputs
  std::vector<OpSpec> ops;                   // value inputs.size() + i
  std::vector<int> outputs;                  // user outputs (value numbers; repeats allowed)
  int value_count() const { return static_cast<int>(inputs.size() + ops.size()); }
};

struct ProgramSpec {
  uint64_t seed = 0;
  std::vector<MethodSpec> methods;
};

// A readable dump, one line per input/op/output (saved next to failures).
std::string to_string(const ProgramSpec& spec);
// Ops over all methods.
size_t op_count(const ProgramSpec& spec);

}  // namespace lathe::sweep
