// Evaluating the constant part of a program at compile time (the evaluator
// behind passes/constant_propagation.h, which sits below the runtime and so
// is handed these functions rather than calling them):
//
//   auto values = evaluate_closed_program(scratch);   // owned, contiguous
//
// A "closed" program takes no user inputs: every input is state (lifted
// constants, parameters, buffers). It runs once on the given kernels.
#pragma once

#include <string_view>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/exported_program.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

// Runs `program` once with no user inputs and returns its user outputs as
// fresh, owned, contiguous tensors (never views of the program's state or of
// executor memory), so they outlive both. A program with a user input, a
// non-tensor output or an op without a kernel is an error.
Result<std::vector<Tensor>> evaluate_closed_program(const ExportedProgram& program,
                                                    const KernelRegistry* kernels = nullptr);

// Whether `kernels` (nullptr: the portable kernels) can run a node with this
// target ("torch.ops.aten.mm.default").
bool has_kernel(std::string_view target, const KernelRegistry* kernels = nullptr);

}  // namespace lathe
