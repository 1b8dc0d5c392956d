#include "lathe/core/byte_source.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

std::vector<std::byte> bytes(size_t n, std::byte v) { return std::vector<std::byte>(n, v); }

TEST(ByteSource, StreamsAndReadsInMemoryAndProducedBytes) {
  ByteSource held(bytes(5, std::byte{1}));
  ByteSource made(5, [](const ByteSource::Sink& sink) -> Status {
    auto a = bytes(2, std::byte{1}), b = bytes(3, std::byte{1});
    LATHE_RETURN_IF_ERROR(sink(a));
    return sink(b);
  });
  EXPECT_EQ(held.size(), 5u);
  EXPECT_TRUE(held == made);
  auto all = made.read(5);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, bytes(5, std::byte{1}));
}

// read() refuses a declared size beyond its limit without producing
// anything; a producer that gives fewer or more bytes than declared fails.
TEST(ByteSource, DeclaredSizesAreChecked) {
  bool called = false;
  ByteSource huge(uint64_t{1} << 40, [&](const ByteSource::Sink&) {
    called = true;
    return Status::Ok();
  });
  auto r = huge.read(1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "is 1099511627776 bytes, more than the limit of 1048576");
  EXPECT_FALSE(called);
  ByteSource shorter(4, [](const ByteSource::Sink& sink) { return sink(bytes(3, std::byte{0})); });
  auto s = shorter.read(4);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "produced 3 of its 4 bytes");
  ByteSource longer(2, [](const ByteSource::Sink& sink) { return sink(bytes(3, std::byte{0})); });
  EXPECT_FALSE(longer.read(4).ok());
}

}  // namespace
}  // namespace lathe
