// The metadata (dtype, sizes) of what a call would produce, found by running
// it: a pass that creates a node must give its values metadata, and the
// portable kernels already know every op's shape and dtype rules, so they
// serve as the shape functions Lathe does not keep separately.
//
//   auto metas = infer_call_meta("torch.ops.aten.mul.Tensor", inputs, 1);
//
// The call runs once on zero-filled tensors shaped like its tensor operands
// (in a scratch program of lifted constants, so the program being rewritten
// is never touched), so every tensor operand needs metadata with concrete
// sizes; symbolic sizes, an op with no portable kernel, or a call the
// kernel refuses are errors saying so, and a caller passes the metadata
// itself (`like=` in Python) instead. The result is contiguous.
#pragma once

#include <string_view>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/argument.h"
#include "lathe/ir/tensor_meta.h"

namespace lathe {

// `outputs`: how many tensor values the call defines.
Result<std::vector<TensorMeta>> infer_call_meta(std::string_view target, const std::vector<NamedArgument>& inputs,
                                                size_t outputs);

}  // namespace lathe
