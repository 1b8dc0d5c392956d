#include "lathe/passes/sdpa_additive_mask.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/passes/pass_test_support.h"

namespace lathe {
namespace {

using testing::PassRun;

std::unique_ptr<Pass> additive() { return std::make_unique<SdpaAdditiveMask>(); }

Value* attention(GraphBuilder& b, Value* q, Value* mask, const std::string& name, DType dtype = DType::Float32) {
  return b.call("aten.scaled_dot_product_attention.default", {{"query", q}, {"key", q}, {"value", q}, {"attn_mask", mask}},
                {1, 2, 4, 8}, dtype, name);
}

class SdpaAdditiveMaskTest : public testing::ProgramTest {};

// Two layers share one bool mask: one where() is made, before the first.
TEST_F(SdpaAdditiveMaskTest, AttentionsOfOneBoolMaskShareOneAdditiveMask) {
  Value* x = b.user_input("x", {1, 2, 4, 8});
  Value* m = b.user_input("m", {1, 1, 4, 4}, DType::Bool);
  Value* a0 = attention(b, x, m, "a0");
  b.user_output(attention(b, a0, m, "a1"));
  PassRun r = testing::expect_nodes_after(ep, additive(),
      "nodes:\n"
      "  %m_additive: f32[1, 1, 4, 4] = aten.where.Scalar(%m, 0.0, -inf)\n"
      "  %a0: f32[1, 2, 4, 8] = aten.scaled_dot_product_attention.default(%x, %x, %x, %m_additive)\n"
      "  %a1: f32[1, 2, 4, 8] = aten.scaled_dot_product_attention.default(%a0, %a0, %a0, %m_additive)\n"
      "outputs:\n"
      "  %a1  user_output\n");
  EXPECT_EQ(r.rewritten, (std::vector<std::string>{
                             "aten.scaled_dot_product_attention.default 'a0' reads 'm_additive' = where('m', 0, -inf) instead of the bool mask",
                             "aten.scaled_dot_product_attention.default 'a1' reads 'm_additive' = where('m', 0, -inf) instead of the bool mask",
                         }));
}

// _NEG: a float mask is already additive, no mask is nothing to do, and a
// half-precision attention keeps its bool mask (where() would make float32).
TEST_F(SdpaAdditiveMaskTest, FloatMasksNoMaskAndOtherDtypesAreKept_NEG) {
  Value* x = b.user_input("x", {1, 2, 4, 8});
  Value* h = b.user_input("h", {1, 2, 4, 8}, DType::Float16);
  Value* fm = b.user_input("fm", {1, 1, 4, 4});
  Value* bm = b.user_input("bm", {1, 1, 4, 4}, DType::Bool);
  Value* a0 = attention(b, x, fm, "a0");
  Value* a1 = b.call("aten.scaled_dot_product_attention.default", {{"query", a0}, {"key", a0}, {"value", a0}}, {1, 2, 4, 8});
  b.user_output(a1);
  b.user_output(attention(b, h, bm, "half", DType::Float16));
  PassRun r = testing::expect_unchanged(ep, additive());
  EXPECT_EQ(r.kept, (std::vector<std::string>{
                        "aten.scaled_dot_product_attention.default 'half' kept its bool mask 'bm': the query is not float32",
                    }));
}

}  // namespace
}  // namespace lathe
