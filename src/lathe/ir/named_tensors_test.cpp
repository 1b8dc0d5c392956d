#include "lathe/ir/named_tensors.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

Tensor sized(int64_t n) { return Tensor::empty(DType::Float32, {n}); }

TEST(NamedTensors, KeepsInsertionOrderAndReplacesInPlace) {
  NamedTensors t;
  t.set("b.weight", sized(1));
  t.set("a.weight", sized(2));
  t.set("b.weight", sized(3));  // replaced where it was
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.entries()[0].first, "b.weight");
  EXPECT_EQ(t.entries()[0].second.numel(), 3);
  EXPECT_EQ(t.entries()[1].first, "a.weight");
  EXPECT_EQ(t.find("a.weight")->numel(), 2);
  EXPECT_EQ(t.find("c.weight"), nullptr);
  EXPECT_FALSE(NamedTensors().contains("x"));
}

// Past many growths and an erase in the middle, every name still finds its
// own tensor and the order is that of insertion.
TEST(NamedTensors, FindsEveryNameAfterGrowingAndErasing) {
  NamedTensors t;
  const int n = 5000;
  for (int i = 0; i < n; ++i) t.set("layers." + std::to_string(i) + ".weight", sized(i + 1));
  EXPECT_TRUE(t.erase("layers.17.weight"));
  EXPECT_FALSE(t.erase("layers.17.weight"));
  ASSERT_EQ(t.size(), static_cast<size_t>(n - 1));
  for (int i = 0; i < n; ++i) {
    const Tensor* found = t.find("layers." + std::to_string(i) + ".weight");
    if (i == 17) {
      EXPECT_EQ(found, nullptr);
    } else {
      ASSERT_NE(found, nullptr) << i;
      EXPECT_EQ(found->numel(), i + 1);
    }
  }
  EXPECT_EQ(t.entries()[17].first, "layers.18.weight");
}

}  // namespace
}  // namespace lathe
