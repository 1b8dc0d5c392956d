// The op catalogue: every operator Lathe names by hand, spelled once.
//
// Passes match ops, backends claim and lower them, the runtime dispatches
// on them. Before this file each of those wrote the op names (and the
// "torch.ops." prefix, and what counts as a layout-only op) for itself, so a
// spelling had to be changed in many places. Now:
//
//   - how a target is spelled: strip_torch_ops / full_target / split_target;
//   - the ops themselves, interned (ops::aten::addmm ...): compare them with
//     Node::op_target(), a pointer comparison; .str() is the full target;
//   - the argument names Lathe reads or writes (ops::arg::self ...);
//   - what Lathe knows about an op from its name alone: layout-only,
//     quantize-family, free of effects (removable when unused), an
//     allocation whose contents are unspecified;
//   - the permutation a t / permute / transpose node applies.
//
// The portable kernels register under their own names (runtime/kernels/*:
// each registration is the one place that kernel's op is named); the ops
// here are those named anywhere else (passes, backends, the runtime's
// control flow and delegates).
//
// The interned targets are inline variables: a translation unit that
// includes this header may use them in its own static initialisers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/ir/op_target.h"

namespace lathe {

class Node;

namespace ops {

// ---- spelling ------------------------------------------------------------------------------

// Serialized ATen / custom ops carry it; Python-level targets
// ("_operator.mul", "math.ceil", "torch.sym_max") do not.
inline constexpr std::string_view kTorchOpsPrefix = "torch.ops.";

// "torch.ops.aten.addmm.default" -> "aten.addmm.default"; anything else as it is.
std::string_view strip_torch_ops(std::string_view target);
// The name a node's target is shown and registered by: strip_torch_ops of the full target.
std::string_view op_name(OpTarget target);
// The same op, spelled with or without "torch.ops." (higher-order ops are
// written without it, but a hand-made file may add it).
bool same_op(OpTarget a, OpTarget b);
// "aten.addmm.default" -> "torch.ops.aten.addmm.default". Text that is
// already prefixed, and Python-level targets, are returned as they are.
std::string full_target(std::string_view op);

// namespace.name.overload, with or without "torch.ops." ("aten.add.Tensor"
// -> {aten, add, Tensor}; "_operator.mul" -> {_operator, mul, ""}).
struct TargetParts {
  std::string_view ns, name, overload;
};
TargetParts split_target(std::string_view target);
// "torch.ops.aten.view.default" -> "view"; "" outside the aten namespace
// (and for Python-level targets).
std::string_view aten_op_name(std::string_view target);

// ---- the ops -------------------------------------------------------------------------------
// Named after the op, with the overload appended unless it is "default"
// (add_Tensor, squeeze_dim), as ATen's own C++ names them.

namespace aten {
inline const OpTarget _assert_tensor_metadata{"torch.ops.aten._assert_tensor_metadata.default"};
inline const OpTarget adaptive_avg_pool2d{"torch.ops.aten.adaptive_avg_pool2d.default"};
inline const OpTarget add_Tensor{"torch.ops.aten.add.Tensor"};
inline const OpTarget add__Tensor{"torch.ops.aten.add_.Tensor"};
inline const OpTarget addmm{"torch.ops.aten.addmm.default"};
inline const OpTarget alias{"torch.ops.aten.alias.default"};
inline const OpTarget avg_pool2d{"torch.ops.aten.avg_pool2d.default"};
inline const OpTarget batch_norm{"torch.ops.aten.batch_norm.default"};
inline const OpTarget bmm{"torch.ops.aten.bmm.default"};
inline const OpTarget cat{"torch.ops.aten.cat.default"};
inline const OpTarget clamp{"torch.ops.aten.clamp.default"};
inline const OpTarget clone{"torch.ops.aten.clone.default"};
inline const OpTarget constant_pad_nd{"torch.ops.aten.constant_pad_nd.default"};
inline const OpTarget contiguous{"torch.ops.aten.contiguous.default"};
inline const OpTarget conv1d{"torch.ops.aten.conv1d.default"};
inline const OpTarget conv2d{"torch.ops.aten.conv2d.default"};
inline const OpTarget convolution{"torch.ops.aten.convolution.default"};
inline const OpTarget detach{"torch.ops.aten.detach.default"};
inline const OpTarget div_Tensor{"torch.ops.aten.div.Tensor"};
inline const OpTarget dropout{"torch.ops.aten.dropout.default"};
inline const OpTarget expand{"torch.ops.aten.expand.default"};
inline const OpTarget expand_copy{"torch.ops.aten.expand_copy.default"};
inline const OpTarget flatten_using_ints{"torch.ops.aten.flatten.using_ints"};
inline const OpTarget gelu{"torch.ops.aten.gelu.default"};
inline const OpTarget hardsigmoid{"torch.ops.aten.hardsigmoid.default"};
inline const OpTarget hardswish{"torch.ops.aten.hardswish.default"};
inline const OpTarget hardtanh{"torch.ops.aten.hardtanh.default"};
inline const OpTarget _int_mm{"torch.ops.aten._int_mm.default"};
inline const OpTarget layer_norm{"torch.ops.aten.layer_norm.default"};
inline const OpTarget linear{"torch.ops.aten.linear.default"};
inline const OpTarget log_softmax_int{"torch.ops.aten.log_softmax.int"};
inline const OpTarget _log_softmax{"torch.ops.aten._log_softmax.default"};
inline const OpTarget matmul{"torch.ops.aten.matmul.default"};
inline const OpTarget max_pool2d{"torch.ops.aten.max_pool2d.default"};
inline const OpTarget max_pool2d_with_indices{"torch.ops.aten.max_pool2d_with_indices.default"};
inline const OpTarget mean_dim{"torch.ops.aten.mean.dim"};
inline const OpTarget mm{"torch.ops.aten.mm.default"};
inline const OpTarget mul_Tensor{"torch.ops.aten.mul.Tensor"};
inline const OpTarget native_batch_norm{"torch.ops.aten.native_batch_norm.default"};
inline const OpTarget _native_batch_norm_legit_no_training{
    "torch.ops.aten._native_batch_norm_legit_no_training.default"};
inline const OpTarget native_layer_norm{"torch.ops.aten.native_layer_norm.default"};
inline const OpTarget pad{"torch.ops.aten.pad.default"};
inline const OpTarget permute{"torch.ops.aten.permute.default"};
inline const OpTarget permute_copy{"torch.ops.aten.permute_copy.default"};
inline const OpTarget relu{"torch.ops.aten.relu.default"};
inline const OpTarget relu_{"torch.ops.aten.relu_.default"};
inline const OpTarget reshape{"torch.ops.aten.reshape.default"};
inline const OpTarget roll{"torch.ops.aten.roll.default"};
inline const OpTarget scaled_dot_product_attention{"torch.ops.aten.scaled_dot_product_attention.default"};
inline const OpTarget sigmoid{"torch.ops.aten.sigmoid.default"};
inline const OpTarget silu{"torch.ops.aten.silu.default"};
inline const OpTarget slice_Tensor{"torch.ops.aten.slice.Tensor"};
inline const OpTarget softmax_int{"torch.ops.aten.softmax.int"};
inline const OpTarget _softmax{"torch.ops.aten._softmax.default"};
inline const OpTarget squeeze_dim{"torch.ops.aten.squeeze.dim"};
inline const OpTarget squeeze_dims{"torch.ops.aten.squeeze.dims"};
inline const OpTarget squeeze{"torch.ops.aten.squeeze.default"};
inline const OpTarget sub_Tensor{"torch.ops.aten.sub.Tensor"};
inline const OpTarget t{"torch.ops.aten.t.default"};
inline const OpTarget t_copy{"torch.ops.aten.t_copy.default"};
inline const OpTarget tanh{"torch.ops.aten.tanh.default"};
inline const OpTarget to_dtype{"torch.ops.aten.to.dtype"};
inline const OpTarget _to_copy{"torch.ops.aten._to_copy.default"};
inline const OpTarget transpose_int{"torch.ops.aten.transpose.int"};
inline const OpTarget unsqueeze{"torch.ops.aten.unsqueeze.default"};
inline const OpTarget _unsafe_view{"torch.ops.aten._unsafe_view.default"};
inline const OpTarget view{"torch.ops.aten.view.default"};
inline const OpTarget _weight_int8pack_mm{"torch.ops.aten._weight_int8pack_mm.default"};
inline const OpTarget where_Scalar{"torch.ops.aten.where.Scalar"};
}  // namespace aten

namespace quantized_decomposed {
inline const OpTarget dequantize_per_channel{"torch.ops.quantized_decomposed.dequantize_per_channel.default"};
inline const OpTarget dequantize_per_channel_group{
    "torch.ops.quantized_decomposed.dequantize_per_channel_group.default"};
}  // namespace quantized_decomposed

// torchao's quantization primitives (torchao 0.18 exports).
namespace torchao {
inline const OpTarget choose_qparams_affine{"torch.ops.torchao.choose_qparams_affine.default"};
inline const OpTarget quantize_affine{"torch.ops.torchao.quantize_affine.default"};
inline const OpTarget dequantize_affine{"torch.ops.torchao.dequantize_affine.default"};
}  // namespace torchao

// Lathe's own ops.
namespace lathe_ops {
// (Tensor self, Tensor mat2, Tensor scales, float eps) -> Tensor; see runtime/kernels/dynamic_int8.h.
inline const OpTarget dynamic_int8_mm{"torch.ops.lathe.dynamic_int8_mm.default"};
// (Tensor self, Tensor mat2, Tensor scales, int group_size) -> Tensor; see runtime/kernels/quantized_linear.h.
inline const OpTarget weight_int4_group_mm{"torch.ops.lathe.weight_int4_group_mm.default"};
// A delegate call is "lathe.delegate.<backend>" (see runtime/delegate.h).
inline constexpr std::string_view kDelegatePrefix = "lathe.delegate.";
}  // namespace lathe_ops

// Higher-order ops are written without "torch.ops.".
namespace higher_order {
inline const OpTarget cond{"higher_order.cond"};
inline const OpTarget while_loop{"higher_order.while_loop"};
// Region markers torch.export keeps around a subgraph (torch.no_grad(),
// torch.autocast(...)): wrap_with_set_grad_enabled(enabled, graph, *args),
// wrap_with_autocast(device_type, dtype, enabled, cache_enabled, graph, *args).
inline const OpTarget wrap_with_set_grad_enabled{"higher_order.wrap_with_set_grad_enabled"};
inline const OpTarget wrap_with_autocast{"higher_order.wrap_with_autocast"};
// Loops over the leading dim: scan(combine_graph, init[], xs[], additional[])
// -> (final carries..., stacked per-step outputs...); map_impl(body_graph,
// xs[], args[]) -> stacked outputs.
inline const OpTarget scan{"higher_order.scan"};
inline const OpTarget map_impl{"higher_order.map_impl"};
inline const OpTarget auto_functionalized_v2{"higher_order.auto_functionalized_v2"};
// auto_functionalized and auto_functionalized_v2 share it.
inline constexpr std::string_view kAutoFunctionalizedPrefix = "higher_order.auto_functionalized";
}  // namespace higher_order

// ---- argument names ---------------------------------------------------------------------------
// The schema names of the arguments Lathe reads or writes outside the
// kernels (whose registrations name their own).

namespace arg {
inline constexpr std::string_view alpha = "alpha";
inline constexpr std::string_view approximate = "approximate";
inline constexpr std::string_view attn_mask = "attn_mask";
inline constexpr std::string_view beta = "beta";
inline constexpr std::string_view bias = "bias";
inline constexpr std::string_view count_include_pad = "count_include_pad";
inline constexpr std::string_view ceil_mode = "ceil_mode";
inline constexpr std::string_view dilation = "dilation";
inline constexpr std::string_view dim = "dim";
inline constexpr std::string_view dim0 = "dim0";
inline constexpr std::string_view dim1 = "dim1";
inline constexpr std::string_view dims = "dims";
inline constexpr std::string_view divisor_override = "divisor_override";
inline constexpr std::string_view dropout_p = "dropout_p";
inline constexpr std::string_view dtype = "dtype";
inline constexpr std::string_view enable_gqa = "enable_gqa";
inline constexpr std::string_view eps = "eps";
inline constexpr std::string_view group_size = "group_size";
inline constexpr std::string_view groups = "groups";
inline constexpr std::string_view half_to_float = "half_to_float";
inline constexpr std::string_view input = "input";
inline constexpr std::string_view inputs = "inputs";  // a delegate call's operands
inline constexpr std::string_view is_causal = "is_causal";
inline constexpr std::string_view kernel_size = "kernel_size";
inline constexpr std::string_view key = "key";
inline constexpr std::string_view mat1 = "mat1";
inline constexpr std::string_view mat2 = "mat2";
inline constexpr std::string_view max = "max";
inline constexpr std::string_view max_val = "max_val";
inline constexpr std::string_view min = "min";
inline constexpr std::string_view min_val = "min_val";
inline constexpr std::string_view mode = "mode";
inline constexpr std::string_view normalized_shape = "normalized_shape";
inline constexpr std::string_view other = "other";
inline constexpr std::string_view output_padding = "output_padding";
inline constexpr std::string_view output_size = "output_size";
inline constexpr std::string_view p = "p";
inline constexpr std::string_view pad = "pad";
inline constexpr std::string_view padding = "padding";
inline constexpr std::string_view payload = "payload";  // a delegate call's record
inline constexpr std::string_view query = "query";
inline constexpr std::string_view running_mean = "running_mean";
inline constexpr std::string_view running_var = "running_var";
inline constexpr std::string_view scale = "scale";
inline constexpr std::string_view scales = "scales";
inline constexpr std::string_view self = "self";
inline constexpr std::string_view shape = "shape";
inline constexpr std::string_view shifts = "shifts";
inline constexpr std::string_view size = "size";
inline constexpr std::string_view start = "start";
inline constexpr std::string_view step = "step";
inline constexpr std::string_view stride = "stride";
inline constexpr std::string_view tensors = "tensors";
inline constexpr std::string_view train = "train";
inline constexpr std::string_view training = "training";
inline constexpr std::string_view transposed = "transposed";
inline constexpr std::string_view value = "value";
inline constexpr std::string_view weight = "weight";
}  // namespace arg

// ---- what an op's name says about it ------------------------------------------------------------

// aten ops that only change how existing elements are addressed (views,
// reshapes, transposes, expand, slices, clones and their _copy forms): no
// arithmetic. constant_propagation leaves them at the edge of a folded region.
bool is_layout_only(std::string_view target);
// The view-like ops XNNPACK copies inside a delegate (view, reshape,
// flatten, (un)squeeze, clone, contiguous).
bool is_reshape(OpTarget target);
// t, t_copy, permute, permute_copy: how torch.export writes a weight's
// transpose (permute's dims still need checking).
bool is_transpose_or_permute(OpTarget target);
// quantize / dequantize, per tensor, per channel or per group.
bool is_quantize(std::string_view target);
// The inference batch norms torch.export writes: batch_norm (kept whole),
// native_batch_norm (training=False) and _native_batch_norm_legit_no_training.
bool is_batch_norm(OpTarget target);
// An aten or quantized_decomposed op that is pure: no effect, no randomness,
// not in place, not an out= variant. Python operators and unknown
// namespaces are not (nothing is known of them).
bool is_effect_free(std::string_view target);
// empty, empty_like, ...: the contents are unspecified, so two such calls
// are never the same value.
bool is_allocation(std::string_view target);

// The dims a permuting node applies to its input, for t / t_copy, permute /
// permute_copy and transpose.int / transpose_copy.int (normalised to
// 0..rank-1), or nullopt if `n` is not one or its rank is unknown.
std::optional<std::vector<int64_t>> permutation_of(const Node& n);

}  // namespace ops
}  // namespace lathe
