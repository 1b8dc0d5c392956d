// verify(): the structural invariants every pass must preserve.
//
// Run after loading, after every pass (tests and --verify) and before
// writing. Each failure is one Error whose message names the method, the
// spec or node (index and value names) and the rule that broke, e.g.
//   method 'forward': output spec 1 (buffer_mutation 'bn.running_mean', %add):
//     mutation outputs must come before user outputs (output spec 0 is user_output)
// The checker never dereferences a Value it has not found in the graph, so a
// dangling pointer left by a buggy rewrite is reported, not followed.
#pragma once

#include <string>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph.h"
#include "lathe/ir/program.h"

namespace lathe {

// One method: signature ↔ graph alignment, state, output order, mutation
// outputs, then the graph (and its subgraphs) as verify_graph() checks it,
// then the inputs' declared sizes and ranges (check_input_shapes).
Status verify(const ExportedProgram& ep, const std::string& method_name);
// Every method (at least one; names unique).
Status verify(const Program& program);
// A graph on its own (no signature): definition before use, membership,
// use-list consistency, metadata, unique names; subgraphs recursively.
// `where` prefixes messages ("method 'forward'", "pattern", ...).
Status verify_graph(const Graph& graph, const std::string& where);

// The state tensor a parameter, buffer or constant placeholder is bound to
// agrees with the placeholder's declared dtype and (all-concrete) shape:
//   state tensor 'linear.weight' has shape [3, 3] but the placeholder has [3, 4]
//   state tensor 'linear.weight' is float32 but the placeholder is int64
// verify() and the Executor (every run path) both apply it.
Status check_state_matches_placeholder(const std::string& target, const Tensor& t, const TensorMeta& meta);

// The order torch.export usually lays inputs out in: tokens, parameters,
// buffers, tensor constants and custom objects, then user inputs (and
// constant inputs, which are user inputs that were literals). It is not a
// requirement: real exports interleave lifted state in module attribute
// order, and verify() accepts any input order, as PyTorch does. The
// Rewriter and GraphBuilder insert new inputs by this key (before the first
// input of a later group), which keeps an already sorted program sorted.
int input_kind_order(InputKind kind);
// Outputs: tokens, then mutations (buffer/parameter/user input), then user
// and loss outputs, then gradients (joint graphs). verify() requires this
// order: PyTorch finds the mutation outputs by position.
int output_kind_order(OutputKind kind);
// Where a new input or output of `kind` goes in `ep`: after every spec of
// its group and the groups before it, in the orders above.
size_t input_insert_position(const ExportedProgram& ep, InputKind kind);
size_t output_insert_position(const ExportedProgram& ep, OutputKind kind);

}  // namespace lathe
