// Program state that the graph writes through in place.
//
// torch.export's default output (the export IR) keeps in-place ops: a KV
// cache is updated with `index_put_` / `index_copy_` / `copy_` straight into
// its buffer, often through a view (`k_cache[:, :, pos]`), and the signature
// has no BUFFER_MUTATION output for it — the write itself is the mutation.
// (After run_decompositions() the same update is a functional op plus a
// mutation output, which the executor writes back after each call.)
#pragma once

#include <set>
#include <string>

#include "lathe/ir/exported_program.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

// True for an ATen in-place overload: `aten.<name>_.<overload>` (add_, index_put_,
// copy_...), which writes through its first argument and returns it.
bool is_in_place_op(const Node& n);

// The targets of the buffers and parameters that some in-place op of the top
// graph writes, directly or through a chain of views (any node whose kernel
// in `kernels` may return a view of its first input).
std::set<std::string> state_written_in_place(const ExportedProgram& ep, const KernelRegistry& kernels);

}  // namespace lathe
