// The default pipeline (`lathe transform --passes default`), in order:
//
//   decompose                          composites -> core ATen, except the
//                                      keep-list
//   constant_propagation               fold what only constants compute
//   remove_redundant_views             view/permute chains, t(t(x))
//   common_subexpression_elimination   merge identical pure nodes
//   addmm_mm_to_linear                 addmm/mm(x, t(w)) -> linear, constant w
//   bmm_to_linear                      bmm/matmul against an expanded constant -> linear
//   sdpa_grouped_query                 attention over repeat_kv copies reads the
//                                      grouped key/value heads in place
//   remove_dead_code                   drop what nobody reads any more
//
// Why this order (each pass prepares the next):
//   - decompose first, so every later pass sees one spelling of each op
//     (t and transpose are permute, linear is permute + addmm) and the
//     constant part of a composite can be folded;
//   - constant_propagation before the linear rewrite: a weight computed from
//     parameters only (w = p1 @ p2.T) becomes a lifted constant, so
//     addmm_mm_to_linear can prove it constant; it leaves the transposes at
//     the edge of what it folds, so the addmm(b, x, t(w)) pattern survives;
//   - remove_redundant_views before CSE: collapsed chains make more nodes
//     identical; and before the linear rewrite, which looks through exactly
//     one transpose (t(t(w)) would hide the weight);
//   - CSE before the linear rewrite, so a weight transposed twice is
//     transposed once and both matmuls see the same transpose;
//   - addmm_mm_to_linear recomposes what decompose split (unless linear was
//     kept whole), now with constness decided on folded constants;
//   - sdpa_grouped_query anywhere after decompose (it reads core ATen's
//     reshape/expand/unsqueeze) and before remove_dead_code;
//   - remove_dead_code last: transposes the linear rewrite no longer reads,
//     the key/value copies grouped attention no longer reads,
//     and anything else the passes above left unused.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/passes/pass.h"

namespace lathe {

inline constexpr const char* kDefaultPipelineName = "default";
inline constexpr const char* kDefaultPipeline =
    "inline_grad_regions,decompose,constant_propagation,remove_redundant_views,common_subexpression_elimination,"
    "addmm_mm_to_linear,bmm_to_linear,sdpa_grouped_query,remove_dead_code";

// Replaces each item "default" of a comma-separated pass list with the
// default pipeline ("default,foo" -> "decompose,...,remove_dead_code,foo").
std::string expand_pipeline(const std::string& comma_separated);

// Options the pipeline's passes take from the command line.
struct PipelineOptions {
  // decompose: ops to leave whole ("aten.linear.default").
  std::vector<std::string> keep;
};

// Applies `options` to the passes of a list that take them (every decompose
// gets the keep-list). A keep-list with no decompose in the list is an
// error: it would silently do nothing.
Status configure_passes(std::vector<std::unique_ptr<Pass>>& passes, const PipelineOptions& options);

// "a,b , c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& comma_separated);
// The same, keeping empty items (as "") for callers that refuse them.
std::vector<std::string> split_comma_list(const std::string& comma_separated);

}  // namespace lathe
