// The multiply-adds a contraction (matmul, linear, convolution) would do,
// from its operands' sizes, for the per-node work limit (graph_plan.h):
// two operands of a few hundred MB each can mean hours of arithmetic that
// no element count shows (issue 33, the hostile probe's contractions).
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "lathe/core/tensor.h"

namespace lathe {

// How many multiply-adds per element a node may do beyond touching it: a
// node within max_elements_per_node elements may do up to this many times
// as many multiply-adds (2^34 x 16 = 2^38 by default, ~275 G: a Llama-7B
// projection over 4,096 tokens is 185 G; the portable GEMM here runs ~10-50
// G a second, so the limit ends a hostile contraction within seconds to
// a minute or so).
inline constexpr int64_t kMultiplyAddsPerElementLimit = 16;

// `op`'s multiply-adds given its tensor operands by argument name
// (`operand(name)`, nullptr when absent), saturating at INT64_MAX; nullopt
// for an op that is not a contraction. Convolutions are bounded from above
// (stride 1: every input position meets the whole kernel).
std::optional<int64_t> contraction_multiply_adds(std::string_view op,
                                                 const std::function<const Tensor*(std::string_view)>& operand);

}  // namespace lathe
