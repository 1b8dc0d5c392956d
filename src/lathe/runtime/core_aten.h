// The core ATen opset: the forward, functional overloads PyTorch tags
// torch.Tag.core, the ops run_decompositions() lowers every program to
// (generated from torch 2.13 by tools/make_core_aten_list.py). Every one has
// a portable kernel except the few listed in core_aten_gaps(), each with its
// reason; tests/torch/core_aten_test.py holds both lists to the truth.
#pragma once

#include <string_view>
#include <vector>

namespace lathe {

struct CoreAtenGap {
  std::string_view op;      // "aten._fft_r2c.default"
  std::string_view reason;  // why Lathe has no kernel for it
};

const std::vector<std::string_view>& core_aten_ops();
const std::vector<CoreAtenGap>& core_aten_gaps();
// The torch release core_aten_ops() was generated from.
std::string_view core_aten_torch_version();

}  // namespace lathe
