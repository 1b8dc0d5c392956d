#include "lathe/ir/op_target.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace lathe {
namespace {

TEST(OpTarget, SameTextIsTheSameTarget) {
  std::string a = "torch.ops.aten.addmm.default";
  OpTarget x(a), y(std::string_view("torch.ops.aten.addmm.default"));
  EXPECT_TRUE(x == y);
  EXPECT_EQ(x.id(), y.id());
  EXPECT_EQ(x.str(), a);
  EXPECT_TRUE(x == std::string_view(a));
}

TEST(OpTarget, DifferentTextIsADifferentTarget_NEG) {
  OpTarget x("torch.ops.aten.addmm.default"), y("torch.ops.aten.mm.default");
  EXPECT_FALSE(x == y);
  EXPECT_NE(x.id(), y.id());
  EXPECT_FALSE(x == std::string_view("torch.ops.aten.addmm"));
}

TEST(OpTarget, EmptyByDefault) {
  OpTarget e;
  EXPECT_TRUE(e.empty());
  EXPECT_TRUE(e == OpTarget(""));
  EXPECT_FALSE(OpTarget("x").empty());
}

TEST(OpTarget, InterningFromManyThreadsAgrees) {
  std::vector<const void*> ids(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ids.size(); ++i)
    threads.emplace_back([&ids, i] {
      for (int k = 0; k < 1000; ++k) OpTarget("lathe.test.op_" + std::to_string(k));
      ids[i] = OpTarget("lathe.test.op_500").id();
    });
  for (auto& t : threads) t.join();
  for (const void* id : ids) EXPECT_EQ(id, ids[0]);
}

}  // namespace
}  // namespace lathe
