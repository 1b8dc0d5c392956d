// JsonDecodeOptions::read_past: the text the decoder does not need in memory
// (all of it once indexed, then what it has gone past), so an archive reader
// can drop those pages.
#include <gtest/gtest.h>

#include <vector>

#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/serde/payload_config.h"
#include "lathe/serde/program_json.h"

namespace lathe {
namespace {

// A chain of `n` relus: about 420 bytes of program JSON per node.
std::string chain_json(int n) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* h = b.user_input("x", {2, 3});
  for (int i = 0; i < n; ++i) h = b.call("aten.relu.default", {{"self", h}}, std::vector<int64_t>{2, 3});
  b.user_output(h);
  return encode_program_json(ep);
}

TEST(ProgramJsonReadPast, ReportsTheWholeTextThenRisingPositionsAboutEveryMebibyteAndDecodesTheSame) {
  const std::string text = chain_json(10000);
  ASSERT_GT(text.size(), size_t{3} << 20) << "the test needs a text of several MiB";
  // Readable bytes after the text, as a zip record has: parsed in place.
  const std::string padded = text + std::string(64, ' ');
  std::vector<size_t> reported;
  JsonDecodeOptions options;
  options.readable_after = 64;
  options.read_past = [&](size_t at) { reported.push_back(at); };
  auto decoded = decode_program_json(std::string_view(padded.data(), text.size()), options);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  // First the whole text (the parser's first pass has read it all), then
  // the decoder's own progress.
  ASSERT_GE(reported.size(), text.size() / (size_t{1} << 20));
  EXPECT_EQ(reported[0], text.size());
  for (size_t i = 1; i < reported.size(); ++i) {
    EXPECT_LT(reported[i], text.size());
    EXPECT_GE(reported[i], i * (size_t{1} << 20)) << i;  // at least a MiB further each time
    if (i > 1) {
      EXPECT_GT(reported[i], reported[i - 1]);
    }
  }
  EXPECT_EQ(encode_program_json(**decoded), text);
}

// Text the parser had to copy (no padding after it) gives no positions:
// they would be in the copy, not in the caller's bytes.
TEST(ProgramJsonReadPast, ACopiedTextReportsNothing_NEG) {
  const std::string text = chain_json(6000);
  std::vector<size_t> reported;
  JsonDecodeOptions options;
  options.readable_after = 0;
  options.read_past = [&](size_t at) { reported.push_back(at); };
  auto decoded = decode_program_json(std::string_view(text), options);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  EXPECT_TRUE(reported.empty());
}

// A weights config of 30,000 entries (about 8 MB): the same reports, and
// the same config, as without them.
TEST(PayloadConfigReadPast, ReportsTheWholeTextThenRisingPositionsAndDecodesTheSame) {
  PayloadConfig config;
  for (int i = 0; i < 30000; ++i) {
    Tensor t;
    t.dtype = DType::Float32;
    t.sizes = {32, 32};
    t.strides = {32, 1};
    config.emplace_back("layers." + std::to_string(i) + ".weight",
                        PayloadMeta{"weight_" + std::to_string(i), true, false, intern_tensor_meta(payload_tensor_meta(t))});
  }
  const std::string text = encode_payload_config(config);
  ASSERT_GT(text.size(), size_t{4} << 20);
  const std::string padded = text + std::string(64, ' ');
  std::vector<size_t> reported;
  auto decoded = decode_payload_config(std::string_view(padded.data(), text.size()), "c.json", 64,
                                       [&](size_t at) { reported.push_back(at); });
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  ASSERT_GE(reported.size(), text.size() / (size_t{1} << 20));
  EXPECT_EQ(reported[0], text.size());
  for (size_t i = 1; i < reported.size(); ++i) {
    EXPECT_LT(reported[i], text.size());
    EXPECT_GE(reported[i], i * (size_t{1} << 20)) << i;
  }
  EXPECT_EQ(encode_payload_config(*decoded), text);
  // Copied (no readable bytes after it): nothing reported, same config.
  std::vector<size_t> none;
  auto copied = decode_payload_config(text, "c.json", 0, [&](size_t at) { none.push_back(at); });
  ASSERT_TRUE(copied.ok());
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(encode_payload_config(*copied), text);
}

}  // namespace
}  // namespace lathe
