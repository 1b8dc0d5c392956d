// What json::Reader keeps in memory: strings without escapes are read where
// they stand in the text (escaped ones are still unescaped), and
// json::release_index_before drops the token index behind the reader
// without changing what it reads next.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lathe/serde/json_reader.h"

namespace lathe {
namespace {

// Text followed by the padding simdjson may read past the end.
struct PaddedText {
  std::string bytes;
  std::string_view text;
  explicit PaddedText(std::string t) : bytes(t + std::string(64, ' ')), text(bytes.data(), t.size()) {}
};

double rss_anon_mib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kib = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "RssAnon:", 8) == 0) kib = std::strtod(line + 8, nullptr);
  }
  std::fclose(f);
  return kib / 1024;
}

TEST(JsonReaderMemory, StringsWithoutEscapesAreViewsOfTheText) {
  PaddedText t(R"(["plain", "with \"quote\"", "caf\u00e9", ""])");
  auto doc = json::Document::parse(t.text, "t.json", 64);
  ASSERT_TRUE(doc.ok()) << doc.error().message();
  auto root = (*doc)->root();
  ASSERT_TRUE(root.ok());
  json::Reader r("t.json");
  std::vector<std::string_view> got;
  ASSERT_TRUE(r.for_each_element(*root, JsonPath{}, [&](json::Value& v, const JsonPath& p) -> Status {
                 LATHE_ASSIGN_OR_RETURN(std::string_view s, r.string(v, p));
                 got.push_back(s);
                 return Status::Ok();
               }).ok());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], "plain");
  EXPECT_EQ(got[1], "with \"quote\"");
  EXPECT_EQ(got[2], "caf\xc3\xa9");
  EXPECT_EQ(got[3], "");
  // The plain ones point into the text itself; the escaped ones cannot.
  EXPECT_EQ(got[0].data(), t.text.data() + 2);
  EXPECT_TRUE(got[1].data() < t.text.data() || got[1].data() >= t.text.data() + t.text.size());
}

TEST(JsonReaderMemory, ANonStringIsStillRefused_NEG) {
  PaddedText t(R"({"name": 12})");
  auto doc = json::Document::parse(t.text, "t.json", 64);
  ASSERT_TRUE(doc.ok());
  auto root = (*doc)->root();
  ASSERT_TRUE(root.ok());
  json::Reader r("t.json");
  Status s = r.for_each_member(*root, JsonPath{}, [&](std::string_view, json::Value& v, const JsonPath& p) -> Status {
    auto got = r.string(v, p);
    return got.ok() ? Status::Ok() : Status(got.error());
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "t.json: $.name: expected a string");
}

// [0,1,2,...]: two tokens a number, so the index (four bytes a token) is
// several times the text.
std::string counting_array(int64_t n) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(i % 10);
  }
  return s + "]";
}

TEST(JsonReaderMemory, ReleasingTheIndexBehindFreesItAndReadingGoesOn) {
  constexpr int64_t kCount = int64_t{6} << 20;  // 12 MB of text, 48 MB of index
  PaddedText t(counting_array(kCount));
  auto doc = json::Document::parse(t.text, "t.json", 64);
  ASSERT_TRUE(doc.ok()) << doc.error().message();
  auto root = (*doc)->root();
  ASSERT_TRUE(root.ok());
  json::Reader r("t.json");
  int64_t index = 0, wrong = 0;
  double before = 0, after = 0;
  ASSERT_TRUE(r.for_each_element(*root, JsonPath{}, [&](json::Value& v, const JsonPath& p) -> Status {
                 if (index == kCount - 1000) {
                   before = rss_anon_mib();
                   json::release_index_before(v);
                   after = rss_anon_mib();
                 }
                 LATHE_ASSIGN_OR_RETURN(int64_t x, r.int64(v, p));
                 wrong += x != index % 10;
                 ++index;
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(index, kCount);
  EXPECT_EQ(wrong, 0);
  // Nearly all of the 48 MB index lay behind; at least half must be gone.
  EXPECT_GT(before - after, 24.0) << "RssAnon " << before << " -> " << after << " MiB";
  // A rewind indexes the text afresh: every element reads again.
  auto again = (*doc)->rewind();
  ASSERT_TRUE(again.ok());
  int64_t count = 0, sum = 0;
  ASSERT_TRUE(r.for_each_element(*again, JsonPath{}, [&](json::Value& v, const JsonPath& p) -> Status {
                 LATHE_ASSIGN_OR_RETURN(int64_t x, r.int64(v, p));
                 sum += x;
                 ++count;
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(count, kCount);
  EXPECT_EQ(sum, (kCount / 10) * 45 + (kCount % 10) * (kCount % 10 - 1) / 2);
}

// Near the start of a document there is nothing far enough behind to drop.
TEST(JsonReaderMemory, NothingIsReleasedWithinTheMarginBehind_NEG) {
  PaddedText t(counting_array(1000));
  auto doc = json::Document::parse(t.text, "t.json", 64);
  ASSERT_TRUE(doc.ok());
  auto root = (*doc)->root();
  ASSERT_TRUE(root.ok());
  json::Reader r("t.json");
  int64_t index = 0, wrong = 0;
  ASSERT_TRUE(r.for_each_element(*root, JsonPath{}, [&](json::Value& v, const JsonPath& p) -> Status {
                 json::release_index_before(v);  // every time: must change nothing
                 LATHE_ASSIGN_OR_RETURN(int64_t x, r.int64(v, p));
                 wrong += x != index % 10;
                 ++index;
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(index, 1000);
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace lathe
