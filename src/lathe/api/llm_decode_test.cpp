// LLM decoding through the public Runner (fixtures/llm, tools/export_llm.py):
// one token per call, the KV cache a buffer the program updates in place
// (export IR) or writes back (decomposed), as loaded, after the default
// passes and lowered to XNNPACK. The tokens are PyTorch's greedy decode of
// the eager module, recorded by the exporter (<name>.decode.json).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "lathe/lathe.h"
#include "support/testing.h"

namespace lathe {
namespace {

using ::lathe::testing::source_path;

struct Expected {
  std::vector<int64_t> prompt, tokens;
  int64_t new_tokens = 0;
};

Expected expected(const std::string& name) {
  std::ifstream in(source_path("fixtures/llm/" + name + ".decode.json"));
  const nlohmann::json j = nlohmann::json::parse(in);
  return {j["prompt"].get<std::vector<int64_t>>(), j["tokens"].get<std::vector<int64_t>>(), j["new_tokens"].get<int64_t>()};
}

Tensor int64_scalar_tensor(std::vector<int64_t> sizes, int64_t v) {
  Tensor t = Tensor::empty(DType::Int64, std::move(sizes));
  *reinterpret_cast<int64_t*>(t.storage->mutable_data() + t.storage_offset * 8) = v;
  return t;
}

int64_t argmax_last_row(const Tensor& logits) {
  const int64_t vocab = logits.sizes.back();
  EXPECT_TRUE(logits.is_contiguous());  // a runner's outputs are
  const float* row = reinterpret_cast<const float*>(logits.data()) + (logits.numel() - vocab);
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i) {
    if (row[i] > row[best]) best = i;
  }
  return best;
}

Result<std::vector<int64_t>> greedy(Runner& r, const Expected& e) {
  r.reset_state();
  std::vector<int64_t> out;
  int64_t token = e.prompt[0];
  for (int64_t pos = 0; pos < static_cast<int64_t>(e.prompt.size()) + e.new_tokens - 1; ++pos) {
    LATHE_ASSIGN_OR_RETURN(std::vector<Tensor> logits,
                           r.run(std::vector<Tensor>{int64_scalar_tensor({1, 1}, token), int64_scalar_tensor({1}, pos)}));
    const int64_t next = argmax_last_row(logits.at(0));
    if (pos + 1 < static_cast<int64_t>(e.prompt.size())) {
      token = e.prompt[pos + 1];
    } else {
      out.push_back(next);
      token = next;
    }
  }
  return out;
}

class LlmDecode : public ::testing::TestWithParam<std::string> {};

TEST_P(LlmDecode, RunnerDecodesPyTorchsTokensAsLoadedTransformedAndLowered) {
  const std::string name = GetParam();
  const Expected e = expected(name);
  for (const std::string form : {"as loaded", "default passes", "xnnpack"}) {
    SCOPED_TRACE(name + ", " + form);
    auto p = load(source_path("fixtures/llm/" + name + ".pt2"));
    ASSERT_TRUE(p.ok()) << p.error().message();
    if (form == "default passes") {
      TransformOptions o;
      o.passes = "default";
      auto rep = transform(*p, o);
      ASSERT_TRUE(rep.ok()) << rep.error().message();
    } else if (form == "xnnpack") {
      const std::vector<std::string> backends = available_backends();
      if (std::find(backends.begin(), backends.end(), "xnnpack") == backends.end()) {
        continue;  // built with LATHE_WITH_XNNPACK=OFF
      }
      auto rep = lower(*p);
      ASSERT_TRUE(rep.ok()) << rep.error().message();
    }
    auto r = Runner::create(*p);
    ASSERT_TRUE(r.ok()) << r.error().message();
    auto tokens = greedy(**r, e);
    ASSERT_TRUE(tokens.ok()) << tokens.error().message();
    EXPECT_EQ(*tokens, e.tokens);
    auto again = greedy(**r, e);  // reset_state() starts a new sequence from the initial cache
    ASSERT_TRUE(again.ok()) << again.error().message();
    EXPECT_EQ(*again, e.tokens);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LlmDecode,
                         ::testing::Values("et_llama", "et_llama_decomposed", "hf_llama", "hf_qwen2", "hf_gemma"));

}  // namespace
}  // namespace lathe
