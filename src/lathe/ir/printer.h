// A readable, stable text form of the IR, for `lathe inspect` and golden
// tests. One line per input, node and output, PyTorch-graph style:
//
//   inputs:
//     %p_linear_weight: f32[3, 3]  parameter linear.weight
//     %arg: f32[2, 3]  user_input
//   nodes:
//     %permute_copy: f32[3, 3] = aten.permute_copy.default(%p_linear_weight, [1, 0])
//     %addmm: f32[2, 3] = aten.addmm.default(%p_linear_bias, %arg, %permute_copy)
//   outputs:
//     %addmm  user_output
//
// Positional arguments print bare, keyword (and unknown-kind) ones as
// name=value. Subgraphs of higher-order ops print indented under their node.
// The text depends only on the IR (no addresses, no hash order), so it diffs.
#pragma once

#include <string>

#include "lathe/core/dtype.h"
#include "lathe/ir/argument.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph.h"
#include "lathe/ir/program.h"

namespace lathe {

// Graph plus signature (spec kinds and targets beside inputs/outputs).
std::string print_program(const ExportedProgram& ep);
// Every method, each under a line "method <name>:" with its body indented.
std::string print_program(const Program& program);
// A bare graph (no specs).
std::string print_graph(const Graph& graph);
// The state tensors by section (parameters, buffers, constants, opaque),
// "  linear.weight: f32[3, 3]"; sections that are empty are left out.
std::string print_state(const ExportedProgram& ep);

// Building blocks, exposed for error messages and explain output.
std::string_view dtype_short_name(DType dtype);    // f32, bf16, i64, b8, ...
std::string format_dims(const std::vector<SymDim>& dims);  // "[2, s77]" (symbols in infix form)
std::string format_type(const Value& value);       // "f32[3, s0]", "SymInt(s0)", ...
std::string format_argument(const Argument& arg);  // "%x", "[1, 0]", "None", "2.5", "\"s\""
std::string format_double(double d);               // shortest text that round-trips; always looks like a float

}  // namespace lathe
