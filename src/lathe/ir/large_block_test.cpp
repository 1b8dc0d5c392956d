#include "lathe/ir/large_block.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace lathe {
namespace {

TEST(LargeBlock, LargeBlocksArePageAlignedZeroedAndWritable) {
  for (size_t bytes : {kLargeBlockBytes, 2 * kLargeBlockBytes, 6 * kLargeBlockBytes + 12345}) {
    auto* p = static_cast<unsigned char*>(map_large_block(bytes));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u) << bytes;
    EXPECT_EQ(p[0], 0);
    EXPECT_EQ(p[bytes - 1], 0);
    p[0] = 1;
    p[bytes - 1] = 2;  // the whole requested size is mapped
    EXPECT_EQ(p[0] + p[bytes - 1], 3);
    unmap_large_block(p, bytes);
  }
}

// A vector that grows from malloc-sized blocks into mapped ones keeps its
// contents across every reallocation, and shrinks back.
TEST(LargeBlock, VectorGrowsAcrossTheThresholdKeepingItsContents) {
  constexpr uint64_t k = 2654435761u;
  std::vector<uint64_t, LargeBlockAllocator<uint64_t>> v;
  const size_t n = 6 * kLargeBlockBytes / sizeof(uint64_t);
  for (size_t i = 0; i < n; ++i) v.push_back(i * k);
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(v[i], i * k);
  EXPECT_EQ(v.back(), (n - 1) * k);
  v.resize(10);
  v.shrink_to_fit();
  EXPECT_EQ(v[9], 9 * k);
}

}  // namespace
}  // namespace lathe
