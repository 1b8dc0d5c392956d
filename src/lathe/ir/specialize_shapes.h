// A program's symbolic sizes made concrete for given symbol values.
//
// A backend that plans for fixed sizes (XNNPACK's operators, Vulkan's
// pipelines) decides, lowers and prepacks on concrete sizes. A program
// exported with a Dim has expressions instead ("s77", "2*s77 - 1"), so the
// lowering decides on a copy specialised at the sizes torch.export saw (the
// hints it writes beside each expression), and a delegate of a dynamic
// program re-plans on a copy specialised at each call's sizes
// (backends/replanned_delegate.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

using SymbolValues = std::map<std::string, int64_t>;

// Whether a value of the top-level graph has a symbolic size, stride or
// offset, or is a symbolic int given by an expression.
bool has_symbolic_shapes(const ExportedProgram& ep);

// The free symbols of a tensor's sizes, strides and offset.
std::set<std::string> shape_symbols(const TensorMeta& meta);

// The symbol values torch.export saw: the hint of every size that is one
// symbol and nothing else. An error names a symbol that has none.
Result<SymbolValues> export_hints(const ExportedProgram& ep);

// Binds every symbol that is one whole size of `meta` to that size of
// `sizes`, then checks that every size of `meta` evaluates to the actual
// one. The error says which dim differs ("dim 1 is 7, but s0*2 = 8").
Status bind_symbols(const TensorMeta& meta, const std::vector<int64_t>& sizes, SymbolValues& symbols);

// Every symbolic size, stride and offset of the top-level graph's values
// becomes its value under `symbols`; so does every symbolic int value, and
// each argument naming one becomes a literal. An unbound symbol, or an
// expression this evaluator cannot compute, is an error naming the value.
Status specialize_shapes(ExportedProgram& ep, const SymbolValues& symbols);

}  // namespace lathe
