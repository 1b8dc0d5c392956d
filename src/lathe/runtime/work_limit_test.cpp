// The per-node work limit (GraphPlanOptions::max_elements_per_node, issue
// 33 item 6): a broadcast view makes any element count from a few bytes,
// and allocations are capped but views are not, so a node is refused by
// the elements it would touch (operands and outputs at their logical
// sizes) before its kernel runs. Each count below is worked out by hand.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/runtime_test_support.h"

namespace lathe {
namespace {

using testing::float_tensor;
using testing::float_values;

// x [1, 8] -> expand(size) -> sum: a scalar, the sum of x times the copies.
void build_expand_sum(ExportedProgram& ep, std::vector<int64_t> size) {
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {1, 8});
  Value* e = b.call("aten.expand.default", {{"self", x}, {"size", IntList{size}}}, size);
  b.user_output(b.call("aten.sum.default", {{"self", e}}, std::vector<int64_t>{}));
}

Result<std::vector<Tensor>> run_expand_sum(std::vector<int64_t> size, ExecutorOptions options = {}) {
  ExportedProgram ep;
  build_expand_sum(ep, std::move(size));
  auto ex = Executor::create(ep, options);
  if (!ex.ok()) return ex.error();
  return (*ex)->run(std::vector<Tensor>{float_tensor({1, 8}, {1, 2, 3, 4, 5, 6, 7, 8})});
}

// The case: 2^43 elements from 32 bytes of input; summing them took
// about 85 minutes. Now the sum is refused before it reads one, naming the node,
// the count, the limit and how to raise it.
TEST(WorkLimit, ASumOverAHugeBroadcastViewIsRefusedAtOnce_NEG) {
  const auto start = std::chrono::steady_clock::now();
  auto out = run_expand_sum({int64_t{1} << 20, int64_t{1} << 20, 8});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message(),
            "node 'sum' (aten.sum.default): would touch at least 8796093022208 elements (tensor operands and "
            "outputs at their logical sizes, broadcast views included), more than the limit of 17179869184 per "
            "node (max_elements_per_node: raise it for a program you trust; lathe run --max-elements-per-node)");
  EXPECT_LT(seconds, 5.0);
}

// A view whose count an int64 cannot hold is refused by the view itself
// (checked_numel), never wrapped into a small count that passes the limit.
TEST(WorkLimit, ACountPastInt64IsAnErrorNotAWrappedCount_NEG) {
  ExecutorOptions no_limit;
  no_limit.max_elements_per_node = std::numeric_limits<int64_t>::max();
  auto out = run_expand_sum({int64_t{1} << 62, int64_t{1} << 62, 8}, no_limit);  // 2^127: wraps to 0
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("node 'expand' (aten.expand.default): the view [4611686018427387904, "
                                       "4611686018427387904, 8] has more elements than an int64 counts"),
            std::string::npos) << out.error().message();
}

TEST(WorkLimit, BroadcastViewsWithinTheLimitRun) {
  auto out = run_expand_sum({3, 4, 8});  // 96 copies of 1..8: 3 * 4 * 36
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(float_values((*out)[0]), std::vector<float>{432});
}

// sum over expand [2, 8] reads 16 elements and writes 1: 17 passes, 16 is
// refused after the operands are counted (17 > 16, the output's 1 counted
// as it is allocated) and 15 before (the operands alone are 16).
TEST(WorkLimit, TheLimitIsTheOptionsAndCountsOperandsAndOutputs) {
  ExecutorOptions o;
  o.max_elements_per_node = 17;
  auto at = run_expand_sum({2, 8}, o);
  ASSERT_TRUE(at.ok()) << at.error().message();
  EXPECT_EQ(float_values((*at)[0]), std::vector<float>{72});

  o.max_elements_per_node = 16;
  auto output_over = run_expand_sum({2, 8}, o);
  ASSERT_FALSE(output_over.ok());
  EXPECT_NE(output_over.error().message().find("node 'sum' (aten.sum.default): would touch at least 17 elements"),
            std::string::npos) << output_over.error().message();

  o.max_elements_per_node = 15;
  auto operands_over = run_expand_sum({2, 8}, o);
  ASSERT_FALSE(operands_over.ok());
  EXPECT_NE(operands_over.error().message().find("would touch at least 16 elements"), std::string::npos)
      << operands_over.error().message();
  EXPECT_NE(operands_over.error().message().find("more than the limit of 15 per node"), std::string::npos);
}

// Binary ops broadcast without a view node: add([1, 8], [4, 1]) reads 8 + 4
// and writes a fresh [4, 8], 32 more: 44 in all.
TEST(WorkLimit, ImplicitBroadcastCountsTheOutputItWrites) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {1, 8});
  Value* y = b.user_input("y", {4, 1});
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", y}}, {4, 8}));
  const std::vector<Tensor> inputs{float_tensor({1, 8}, std::vector<float>(8, 1)),
                                   float_tensor({4, 1}, std::vector<float>(4, 2))};
  for (int64_t limit : {int64_t{44}, int64_t{43}}) {
    ExecutorOptions o;
    o.max_elements_per_node = limit;
    auto ex = Executor::create(ep, o);
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    auto out = (*ex)->run(inputs);
    EXPECT_EQ(out.ok(), limit == 44) << (out.ok() ? "" : out.error().message());
  }
}

// x [1, 1] expanded to a [m, k] and [k, n] pair, multiplied: y = mm.
Result<std::vector<Tensor>> run_expanded_mm(int64_t m, int64_t k, int64_t n, ExecutorOptions options = {}) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {1, 1});
  Value* a = b.call("aten.expand.default", {{"self", x}, {"size", IntList{{m, k}}}}, {m, k});
  Value* c = b.call("aten.expand.default", {{"self", x}, {"size", IntList{{k, n}}}}, {k, n});
  b.user_output(b.call("aten.mm.default", {{"self", a}, {"mat2", c}}, {m, n}));
  auto ex = Executor::create(ep, options);
  if (!ex.ok()) return ex.error();
  return (*ex)->run(std::vector<Tensor>{float_tensor({1, 1}, {0.5f})});
}

// A contraction's work is its multiply-adds, which its element count does
// not show: [4096, 65536] x [65536, 4096] touches 2^29 elements (under the
// 2^34 limit) but is 2^40 multiply-adds (hours on the portable kernels).
// Refused before it runs, at 16 multiply-adds per element of the limit.
TEST(WorkLimit, AContractionIsLimitedByItsMultiplyAdds_NEG) {
  const auto start = std::chrono::steady_clock::now();
  auto out = run_expanded_mm(4096, 65536, 4096);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message(),
            "node 'mm' (aten.mm.default): would do at least 1099511627776 multiply-adds, more than the limit of "
            "274877906944 per node (16 x max_elements_per_node: raise it for a program you trust; lathe run "
            "--max-elements-per-node)");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  // The limit follows max_elements_per_node: 2^20 elements allow 2^24
  // multiply-adds; 512^3 = 2^27 is over, 64 * 512 * 64 = 2^21 is not.
  ExecutorOptions small;
  small.max_elements_per_node = int64_t{1} << 20;
  auto over = run_expanded_mm(512, 512, 512, small);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message().find("would do at least 134217728 multiply-adds"), std::string::npos)
      << over.error().message();
  auto within = run_expanded_mm(64, 512, 64, small);
  ASSERT_TRUE(within.ok()) << within.error().message();
  EXPECT_EQ(float_values((*within)[0])[0], 128.0f);  // 512 * 0.5 * 0.5
}

}  // namespace
}  // namespace lathe
