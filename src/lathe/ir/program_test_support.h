// Shared by the tests that build programs (header only; not part of the
// library): a fixture with a fresh `ep` and its builder `b` for every test,
// instead of every test declaring the same two, and the printed signature
// of build_simple_linear's program.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph_builder.h"

namespace lathe::testing {

class ProgramTest : public ::testing::Test {
 protected:
  ExportedProgram ep;
  GraphBuilder b{ep};
};

// How print_program shows the inputs of build_simple_linear's program
// (hand-checked against linear-rewrite.md §1); a rewrite leaves them as they are.
inline const std::string kSimpleLinearInputs =
    "inputs:\n"
    "  %p_linear_weight: f32[3, 3]  parameter linear.weight\n"
    "  %p_linear_bias: f32[3]  parameter linear.bias\n"
    "  %arg: f32[2, 3]  user_input\n";

}  // namespace lathe::testing
