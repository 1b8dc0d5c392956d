// Shared by the quantized kernel tests: the cases of
// testdata/quantized_linear_cases.json (tools/make_quantized_linear_cases.py,
// PyTorch 2.13 + torchao 0.18) read into tensors, and the instruction-set
// paths this CPU runs.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/kernels/util.h"
#include "support/testing.h"

namespace lathe::quantized_test {

using Json = nlohmann::json;
using kernels::simd::Isa;

// The cases whose "op" is `op`.
inline std::vector<Json> cases(const std::string& op) {
  static const Json all = [] {
    std::ifstream in(testing::source_path("src/lathe/runtime/testdata/quantized_linear_cases.json"));
    return Json::parse(in)["cases"];
  }();
  std::vector<Json> out;
  for (const Json& c : all) {
    if (c["op"] == op) out.push_back(c);
  }
  return out;
}

inline Tensor floats(const Json& values, std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(DType::Float32, std::move(sizes));
  float* p = kernels::mdata<float>(t);
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.numel()); ++i) p[i] = values[i].get<float>();
  return t;
}

// A tensor from a hex string of its bytes (int8 / uint8 data).
inline Tensor bytes(const std::string& hex, DType dtype, std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(dtype, std::move(sizes));
  uint8_t* p = kernels::mdata<uint8_t>(t);
  for (size_t i = 0; i + 1 < hex.size() && i / 2 < t.nbytes(); i += 2) {
    p[i / 2] = static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return t;
}

// A case of x [M, K] times an int8 weight w [N, K] with per-channel float
// scales s [N], and PyTorch's results: its own kernel's, and float64 on the
// dequantized weight.
struct Int8ChannelCase {
  int64_t M, N, K;
  Tensor x, w, s, pytorch, dequantized;
};

inline Int8ChannelCase int8_channel_case(const Json& c) {
  const int64_t M = c["m"], N = c["n"], K = c["k"];
  return {M, N, K, floats(c["x"], {M, K}), bytes(c["w"], DType::Int8, {N, K}), floats(c["scales"], {N}),
          floats(c["pytorch"], {M, N}), floats(c["dequantized"], {M, N})};
}

// max |a - b| / max |ref| (float32 tensors of one size).
inline double rel_diff(const Tensor& a, const Tensor& b, const Tensor& ref) {
  double d = 0, scale = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    d = std::max(d, std::abs(double(kernels::cdata<float>(a)[i]) - kernels::cdata<float>(b)[i]));
    scale = std::max(scale, std::abs(double(kernels::cdata<float>(ref)[i])));
  }
  return d / scale;
}

// Scalar, then every wider path this CPU runs.
inline std::vector<Isa> isas_here() {
  std::vector<Isa> v{Isa::Scalar};
  for (Isa i : {Isa::Avx2, Isa::Avx512, Isa::Avx512Vnni}) {
    if (kernels::simd::best_isa() >= i) v.push_back(i);
  }
  return v;
}

}  // namespace lathe::quantized_test
