// json::nesting_beyond, which bounds every document before simdjson parses
// it, against a plain byte-at-a-time reference, including texts that cross
// its 64-byte blocks in every way (strings, escapes, closers at depth 0).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "lathe/serde/json_reader.h"

namespace lathe {
namespace {

// The rule, as simply as it can be written.
std::optional<size_t> reference(const std::string& text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

TEST(JsonNesting, FindsTheFirstByteBeyondTheLimit) {
  EXPECT_EQ(json::nesting_beyond("[[[]]]", 3), std::nullopt);
  EXPECT_EQ(json::nesting_beyond("[[[[]]]]", 3), std::optional<size_t>(3));
  // Brackets in strings, escaped quotes, closers at depth 0 do not count.
  EXPECT_EQ(json::nesting_beyond(R"(]]]["[[[\"[[", {"a": "\\"}])", 2), std::nullopt);
  std::string deep = "{\"k\": \"" + std::string(100, '[') + "\", \"x\": " + std::string(300, '[');
  EXPECT_EQ(json::nesting_beyond(deep, 256), std::optional<size_t>(deep.find("\"x\": ") + 5 + 255));
}

TEST(JsonNesting, AgreesWithTheReferenceOnRandomText) {
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  const char alphabet[] = "[]{}\"\\ax,:";
  for (int t = 0; t < 20000; ++t) {
    std::string text(next() % 400, ' ');
    // Mostly one kind of text per case: long plain runs exercise whole blocks.
    const uint32_t kinds = 2 + next() % 9;
    for (char& c : text) c = alphabet[next() % kinds];
    const size_t max_depth = next() % 12;
    ASSERT_EQ(json::nesting_beyond(text, max_depth), reference(text, max_depth)) << text << " limit " << max_depth;
  }
}

}  // namespace
}  // namespace lathe
