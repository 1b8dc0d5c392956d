// The Vulkan backend: GLSL compute shaders (compiled to SPIR-V at build
// time, carried in the library) run through the plain Vulkan C API, on any
// Vulkan 1.0 device with a compute queue. Tested on Mesa's lavapipe (a CPU
// implementation), so it runs wherever Debian's mesa-vulkan-drivers does.
//
// Claims float32 nodes with concrete shapes (activations stay NCHW, as in
// PyTorch, so views are free):
//   linear; mm / addmm against a constant mat2    -> linear    (weight repacked to [K, N] at load)
//   convolution (2-D, or 1-D as 2-D over a unit   -> conv2d    (any groups: depthwise too),
//     height) + a following eval batch norm                      batch norm folded into its weights at load
//   an eval batch norm with nothing to fold into  -> channel_affine (scale/shift from the statistics at load)
//   relu / hardtanh / clamp after one of those    -> fused as the op's output bounds
//   add / sub / mul / div (.Tensor; broadcasting,  -> binary
//     or a number as `other`)
//   relu, clamp, hardtanh, hardswish, sigmoid,     -> unary
//     tanh, gelu, silu, hardsigmoid
//   softmax over the last dim, layer_norm          -> softmax, layer_norm (a workgroup per row)
//   mean over dims (and adaptive_avg_pool2d to 1x1) -> mean
//   max_pool2d (indices unused), avg_pool2d        -> pool2d (padding, dilation, ceil_mode,
//                                                     count_include_pad, divisor_override)
//   permute, cat, slice; view / reshape / flatten  -> copy (a strided copy); the views alias
//     / squeeze / unsqueeze / clone (inside a group)   their input's buffer (no work)
//
// Constant weights only: a linear / mm / addmm / convolution / batch norm
// whose weight, bias or statistics are not compile-time constants
// (Constness: computed at run time, a mutated buffer, a user input) is
// never claimed, and --explain names the operand and where it comes from.
// init() checks again (a payload may be hand-made) and fails naming the op,
// the operand and its producer.
//
// At init (program load): every buffer of the delegate is allocated once
// (device memory for weights and intermediates, host-visible memory for
// the delegate's runtime inputs and outputs), weights are repacked and
// uploaded once, and one command buffer is recorded. Each call copies the
// inputs in, submits that command buffer once, waits, and copies the
// outputs out. Everything is released with the handle (the program).
//
// Device choice: LATHE_VULKAN_DEVICE (an index into the device list, or a
// case-insensitive part of a device's name); else the first discrete GPU,
// then integrated, virtual, CPU.
//
// Payload ops (payload.h), their `ints` and `floats`:
//   linear          ints {M, K, N, transposed}  floats {lo, hi}        inputs input, weight, [bias]
//                   (transposed: mat2 [K, N] as mm/addmm give it; else weight [N, K])
//   conv2d          ints {N, C, H, W, CO, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G}
//                   floats {lo, hi, bn_eps}    inputs input, weight, [bias], [bn_weight, bn_bias,
//                                              bn_running_mean, bn_running_var]
//   channel_affine  ints {N, C, inner}   floats {eps, lo, hi}      inputs self, weight, bias, running_mean, running_var
//   binary          ints {op (0 add 1 sub 2 mul 3 div), b_scalar, rank, out[rank], a[rank], b[rank] unless b_scalar}
//                   floats {alpha, scalar, lo, hi}                inputs self, [other]
//   unary           ints {op (shaders/unary_ops.def)}  floats {lo, hi}   inputs self
//   softmax         ints {rows, C}                                 inputs self
//   layer_norm      ints {rows, D}  floats {eps}                    inputs self, [weight], [bias]
//   mean            ints {rank, sizes[rank], reduced[rank] (0/1)}   inputs self
//   pool2d          ints {is_max, planes, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW,
//                         count_include_pad, divisor_override}       inputs self
//   permute         ints {dims[rank]}                               inputs self
//   cat             ints {dim}                                      inputs tensor...
//   slice           ints {dim, start, step}                         inputs self
//   view            ints {}  (the output aliases the input)         inputs self
#pragma once

#include <string>
#include <vector>

#include "lathe/backends/backend.h"

namespace lathe {

class VulkanBackend : public Backend {
 public:
  std::string_view name() const override { return "vulkan"; }
  Status available() const override;
  NodeSupport support(const Node& node, const Constness& constness) const override;
  std::vector<std::string> ops_to_keep() const override;
  std::vector<std::string> claimed_ops() const override;
  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& subgraph) const override;
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const override;
};

// The one backend instance (stateless; the Vulkan device it opens on first
// use is shared by every delegate in the process).
// Without Vulkan (LATHE_WITH_VULKAN=OFF) an UnbuiltBackend (backend.h).
const Backend& vulkan_backend();

// What the Vulkan loader sees, without opening a device: whether any
// driver (ICD) is installed, and each device's name and type. Tests skip
// (saying this message) only when no driver is installed at all.
struct VulkanDeviceInfo {
  std::string name;
  std::string type;  // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
};
struct VulkanProbe {
  bool driver_installed = false;  // false only when the loader finds no driver at all
  std::string message;  // why not, when not
  std::vector<VulkanDeviceInfo> devices;
};
VulkanProbe probe_vulkan();

// The device delegates run on ("llvmpipe (LLVM 15.0.6, 256 bits) [CPU]"),
// opening it if needed; an error when there is none or LATHE_VULKAN_DEVICE
// names none.
Result<std::string> vulkan_device_description();

}  // namespace lathe
