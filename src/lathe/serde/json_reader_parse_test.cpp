// json::Document::parse bounds the nesting of every document; a large one is
// bounded on a second thread while simdjson indexes it, and must be refused
// the same way, with the same message, as a small one.
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

}  // namespace
}  // namespace lathe
