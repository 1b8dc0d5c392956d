#include "lathe/passes/sdpa_grouped_query.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

using testing::PassRun;

std::unique_ptr<Pass> grouped() { return std::make_unique<SdpaGroupedQuery>(); }

// transformers' repeat_kv of x [1, 2, 6, 8]: each of 2 heads copied `g` times.
Value* repeat_kv(GraphBuilder& b, Value* x, int64_t g, const std::string& name, int64_t dim = 2,
                 const std::string& reshape = "aten.reshape.default") {
  Value* u = b.call("aten.unsqueeze.default", {{"self", x}, {"dim", dim}}, {1, 2, 1, 6, 8}, DType::Float32, name + "_u");
  Value* e = b.call("aten.expand.default", {{"self", u}, {"size", IntList{{1, 2, g, 6, 8}}}}, {1, 2, g, 6, 8},
                    DType::Float32, name + "_e");
  return b.call(reshape, {{"self", e}, {"shape", IntList{{1, 2 * g, 6, 8}}}}, {1, 2 * g, 6, 8}, DType::Float32, name);
}

Value* attention(GraphBuilder& b, Value* q, Value* k, Value* v, const std::string& name) {
  return b.call("aten.scaled_dot_product_attention.default", {{"query", q}, {"key", k}, {"value", v}},
                {1, q->meta()->sizes[1].value(), 1, 8}, DType::Float32, name);
}

class SdpaGroupedQueryTest : public testing::ProgramTest {};

// A decode step of a model with 8 query heads and 2 key/value heads: the
// attention reads the cache itself; the copies are left to remove_dead_code.
TEST_F(SdpaGroupedQueryTest, RepeatKvCopiesAreReadInPlaceWithEnableGqa) {
  Value* q = b.user_input("q", {1, 8, 1, 8});
  Value* k = b.user_input("k", {1, 2, 6, 8});
  Value* v = b.user_input("v", {1, 2, 6, 8});
  Value* kr = repeat_kv(b, k, 4, "kr");
  Value* vr = repeat_kv(b, v, 4, "vr");
  b.user_output(attention(b, q, kr, vr, "a"));
  PassRun r = testing::expect_nodes_after(ep, grouped(),
      "nodes:\n"
      "  %kr_u: f32[1, 2, 1, 6, 8] = aten.unsqueeze.default(%k, 2)\n"
      "  %kr_e: f32[1, 2, 4, 6, 8] = aten.expand.default(%kr_u, [1, 2, 4, 6, 8])\n"
      "  %kr: f32[1, 8, 6, 8] = aten.reshape.default(%kr_e, [1, 8, 6, 8])\n"
      "  %vr_u: f32[1, 2, 1, 6, 8] = aten.unsqueeze.default(%v, 2)\n"
      "  %vr_e: f32[1, 2, 4, 6, 8] = aten.expand.default(%vr_u, [1, 2, 4, 6, 8])\n"
      "  %vr: f32[1, 8, 6, 8] = aten.reshape.default(%vr_e, [1, 8, 6, 8])\n"
      "  %a: f32[1, 8, 1, 8] = aten.scaled_dot_product_attention.default(%q, %k, %v, enable_gqa=True)\n"
      "outputs:\n"
      "  %a  user_output\n");
  EXPECT_EQ(r.rewritten, (std::vector<std::string>{
                             "aten.scaled_dot_product_attention.default 'a' reads key 'k' and value 'v' in place "
                             "(enable_gqa, 4 query heads per key/value head)",
                         }));
}

// _NEG: operands that are not both per-head copies, copies along another
// dim, or copies with fewer heads than the query keep the attention as it is.
TEST_F(SdpaGroupedQueryTest, AttentionsWithoutTwoMatchingHeadCopiesAreKept_NEG) {
  Value* q = b.user_input("q", {1, 8, 1, 8});
  Value* k = b.user_input("k", {1, 2, 6, 8});
  Value* v = b.user_input("v", {1, 2, 6, 8});
  Value* full = b.user_input("full", {1, 8, 6, 8});
  Value* k1 = repeat_kv(b, k, 4, "k1");
  b.user_output(attention(b, q, k1, full, "plain_value"));
  Value* k2 = repeat_kv(b, k, 4, "k2", 3);
  Value* v2 = repeat_kv(b, v, 4, "v2", 3);
  b.user_output(attention(b, q, k2, v2, "other_dim"));
  Value* k4 = repeat_kv(b, k, 2, "k4");
  Value* v4 = repeat_kv(b, v, 2, "v4");
  b.user_output(attention(b, q, k4, v4, "heads_differ"));
  PassRun r = testing::expect_unchanged(ep, grouped());
  ASSERT_EQ(r.kept.size(), 3u);
  EXPECT_EQ(r.kept[0], "aten.scaled_dot_product_attention.default 'plain_value' kept: value 'full' is not "
                       "reshape(expand(unsqueeze(...)))");
  EXPECT_EQ(r.kept[1], "aten.scaled_dot_product_attention.default 'other_dim' kept: key 'k2' does not copy the heads "
                       "(dim 1) of a rank-4 tensor");
  EXPECT_EQ(r.kept[2], "aten.scaled_dot_product_attention.default 'heads_differ' kept: the query's heads are not the "
                       "copies'");
}

}  // namespace
}  // namespace lathe
