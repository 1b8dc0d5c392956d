// Program state that the graph writes through in place.
//
// torch.export's default output (the export IR) keeps in-place ops: a KV
// cache is updated with `index_put_` / `index_copy_` / `copy_` straight into
// its buffer (or, for transformers' static cache, into a lifted tensor
// constant), often through a view (`k_cache[:, :, pos]`), and the signature
// has no BUFFER_MUTATION output for it: the write itself is the mutation.
// (After run_decompositions() the same update is a functional op plus a
// mutation output.) The constness analysis counts such state as mutable,
// and the executor gives it an owned, writable copy that persists across
// calls; both ask here.
#pragma once

#include <set>
#include <string>

#include "lathe/ir/exported_program.h"

namespace lathe {

// True for an ATen in-place overload: `aten.<name>_.<overload>` (add_,
// index_put_, copy_, _index_put_impl_...), which writes through its first
// argument; not the Python-operator spellings (`__and__`).
bool is_in_place_op(const Node& n);

// The targets of the buffers, parameters and lifted tensor constants that an
// in-place op of the top graph writes, directly or through a chain of
// layout-only ops (views, and conservatively the copies among them) or
// other in-place ops' results.
std::set<std::string> state_written_in_place(const ExportedProgram& ep);

}  // namespace lathe
