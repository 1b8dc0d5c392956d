// json::Document::parse bounds the nesting of every document; a large one is
// bounded on a second thread while simdjson indexes it, and must be refused
// the same way, with the same message, as a small one. That thread also
// faults in simdjson's token index ahead of its pass, which must leave every
// token where the pass put it.
#include <gtest/gtest.h>

#include <string>

#include "lathe/serde/json_reader.h"

namespace lathe {
namespace {

// `filler` bytes of a flat array, then `depth` nested arrays.
std::string deep_after(size_t filler, size_t depth) {
  std::string s = "[";
  while (s.size() < filler) s += "0,";
  s += std::string(depth, '[') + std::string(depth, ']') + "]";
  return s;
}

TEST(JsonDocumentParse, DeepNestingIsRefusedInSmallAndLargeDocuments_NEG) {
  for (size_t filler : {size_t{100}, size_t{3} << 20}) {
    const std::string text = deep_after(filler, json::kMaxDocumentNesting + 5);
    const std::string padded = text + std::string(64, ' ');
    auto doc = json::Document::parse(std::string_view(padded.data(), text.size()), "deep.json", 64);
    ASSERT_FALSE(doc.ok()) << filler;
    const size_t first_bracket = text.find("[[");
    EXPECT_EQ(doc.error().message(), "deep.json: JSON nested deeper than 1024 levels (at byte " +
                                         std::to_string(first_bracket + json::kMaxDocumentNesting - 1) + ")")
        << filler;
  }
}

TEST(JsonDocumentParse, NestingAtTheLimitIsAcceptedInSmallAndLargeDocuments) {
  for (size_t filler : {size_t{100}, size_t{3} << 20}) {
    const std::string text = deep_after(filler, json::kMaxDocumentNesting - 1);
    const std::string padded = text + std::string(64, ' ');
    auto doc = json::Document::parse(std::string_view(padded.data(), text.size()), "ok.json", 64);
    ASSERT_TRUE(doc.ok()) << filler << ": " << doc.error().message();
  }
}

// Reads every member back from a large document (the index faulted in on
// the second thread while it was written): strings with escapes, brackets
// and separators inside them, numbers and literals (which the prefault does
// not count), all where and as written.
TEST(JsonDocumentParse, LargeDocumentReadsBackExactly) {
  std::string text = "[";
  const size_t entries = 60000;
  for (size_t i = 0; i < entries; ++i) {
    if (i) text += ",";
    text += "{\"name\":\"v" + std::to_string(i) + "\",\"note\":\"a\\\"[{,:}]\\\\\",\"n\":" + std::to_string(i * 7) +
            ",\"ok\":" + (i % 2 ? "true" : "null") + ",\"xs\":[1,2.5,[]]}";
  }
  text += "]";
  ASSERT_GT(text.size(), size_t{1} << 20);  // large enough for the second thread
  const std::string padded = text + std::string(64, ' ');
  auto doc = json::Document::parse(std::string_view(padded.data(), text.size()), "large.json", 64);
  ASSERT_TRUE(doc.ok()) << doc.error().message();
  auto root = (*doc)->root();
  ASSERT_TRUE(root.ok());
  json::Reader r("large.json");
  size_t i = 0;
  JsonPath path;
  Status s = r.for_each_element(*root, path, [&](json::Value& e, const JsonPath& ep) -> Status {
    return r.for_each_member(e, ep, [&](std::string_view key, json::Value& x, const JsonPath& xp) -> Status {
      if (key == "name") {
        LATHE_ASSIGN_OR_RETURN(std::string_view v, r.string(x, xp));
        EXPECT_EQ(v, "v" + std::to_string(i));
      } else if (key == "note") {
        LATHE_ASSIGN_OR_RETURN(std::string_view v, r.string(x, xp));
        EXPECT_EQ(v, "a\"[{,:}]\\");
      } else if (key == "n") {
        LATHE_ASSIGN_OR_RETURN(int64_t v, r.int64(x, xp));
        EXPECT_EQ(v, static_cast<int64_t>(i * 7));
      } else if (key == "ok") {
        LATHE_ASSIGN_OR_RETURN(bool null, r.is_null(x, xp));
        EXPECT_EQ(null, i % 2 == 0);
      } else {
        LATHE_ASSIGN_OR_RETURN(std::string_view raw, r.raw_view(x, xp));
        EXPECT_EQ(raw, "[1,2.5,[]]");
        ++i;
      }
      return Status::Ok();
    });
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(i, entries);
}

}  // namespace
}  // namespace lathe
