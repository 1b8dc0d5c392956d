#include "lathe/ir/object_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace lathe {
namespace {

struct Item {
  int64_t a = 1;
  double b = 2;
  char pad[40];
};

TEST(ObjectPool, SlotsAreDistinctAlignedAndWritableAcrossChunks) {
  ObjectPool<Item> pool;
  std::set<void*> seen;
  std::vector<Item*> items;
  const size_t n = 3 * kChunkBytes / sizeof(Item);  // several full-size chunks
  for (size_t i = 0; i < n; ++i) {
    void* p = pool.allocate();
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(Item), 0u);
    ASSERT_TRUE(seen.insert(p).second) << "slot handed out twice";
    items.push_back(new (p) Item{static_cast<int64_t>(i), 0.5, {}});
  }
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(items[i]->a, static_cast<int64_t>(i));  // no slot overlaps another
}

TEST(ObjectPool, ReleasedSlotsAreReusedBeforeNewOnes) {
  ObjectPool<Item> pool;
  void* a = pool.allocate();
  void* b = pool.allocate();
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.allocate(), b);  // last released, first reused
  EXPECT_EQ(pool.allocate(), a);
  void* c = pool.allocate();
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
}

}  // namespace
}  // namespace lathe
