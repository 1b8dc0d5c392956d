#include "lathe/runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace lathe {
namespace {

// The example in memory_plan.h.
TEST(MemoryPlan, ReusesTheBufferOfADeadRoot) {
  BufferPlan p = plan_buffers({{100, 0, 2}, {50, 1, 4}, {80, 3, 4}});
  ASSERT_EQ(p.buffer_of.size(), 3u);
  EXPECT_EQ(p.buffer_of[0], 0);
  EXPECT_EQ(p.buffer_of[1], 1);
  EXPECT_EQ(p.buffer_of[2], 0);
  EXPECT_EQ(p.buffer_nbytes, (std::vector<size_t>{100, 50}));
}

TEST(MemoryPlan, RootReadAtANodeIsStillLiveThere) {
  // B is written by node 2, the last reader of A: they must not share.
  BufferPlan p = plan_buffers({{10, 0, 2}, {10, 2, 3}});
  EXPECT_NE(p.buffer_of[0], p.buffer_of[1]);
}

TEST(MemoryPlan, GrowsAFreeBufferRatherThanOpeningOne) {
  BufferPlan p = plan_buffers({{10, 0, 0}, {40, 1, 1}});
  EXPECT_EQ(p.buffer_of[0], p.buffer_of[1]);
  EXPECT_EQ(p.buffer_nbytes, (std::vector<size_t>{40}));
}

// Random lifetimes: overlapping roots never share, every buffer is large
// enough for each root it holds.
TEST(MemoryPlan, RandomLifetimesNeverOverlapInABuffer) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferRequest> reqs;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int64_t first = rng() % 40;
      reqs.push_back({static_cast<size_t>(1 + rng() % 1000), first, first + static_cast<int64_t>(rng() % 10)});
    }
    BufferPlan p = plan_buffers(reqs);
    for (int i = 0; i < n; ++i) {
      ASSERT_GE(p.buffer_of[i], 0);
      EXPECT_GE(p.buffer_nbytes[p.buffer_of[i]], reqs[i].nbytes);
      for (int j = i + 1; j < n; ++j) {
        const bool overlap = reqs[i].first <= reqs[j].last && reqs[j].first <= reqs[i].last;
        if (overlap) {
          EXPECT_NE(p.buffer_of[i], p.buffer_of[j]) << "round " << round << " roots " << i << ", " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lathe
