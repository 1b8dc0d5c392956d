// The quantized linear kernels (kernels/quantized_linear.h) against PyTorch
// 2.13: testdata/quantized_linear_cases.json (tools/make_quantized_linear_cases.py)
// holds PyTorch's outputs and the float64 product with the dequantized
// weight. Every instruction-set path this CPU runs (scalar, AVX2, AVX-512,
// and AVX-512 VNNI, whose 4-bit kernel takes x as int8 limbs) is checked against the scalar one and against PyTorch, and must stay as
// close to the dequantized reference as PyTorch's own kernel is.
#include "lathe/runtime/kernels/quantized_linear.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/parallel.h"
#include "lathe/runtime/quantized_test_support.h"

namespace lathe {
namespace {

using namespace quantized_test;

// How far from the dequantized reference a path may be: PyTorch's own
// kernels are within 3.4e-7 of it on these cases (the test prints each);
// Lathe's paths must be within 1e-6, and within 1e-6 of PyTorch's output.
constexpr double kTolerance = 1e-6;

// Runs `call(isa, out)` on every path and checks it.
template <typename Call>
void check_paths(const Json& c, const Tensor& pytorch, const Tensor& dequantized, const std::string& what, Call call) {
  const int64_t M = c["m"], N = c["n"];
  Tensor scalar = Tensor::empty(DType::Float32, {M, N});
  ASSERT_TRUE(call(Isa::Scalar, scalar).ok());
  for (Isa isa : isas_here()) {
    SCOPED_TRACE(what + " on " + kernels::simd::isa_name(isa));
    Tensor out = Tensor::empty(DType::Float32, {M, N});
    Status s = call(isa, out);
    ASSERT_TRUE(s.ok()) << s.error().message();
    const double vs_deq = rel_diff(out, dequantized, dequantized), pt_vs_deq = rel_diff(pytorch, dequantized, dequantized);
    EXPECT_LE(rel_diff(out, scalar, dequantized), kTolerance);
    EXPECT_LE(rel_diff(out, pytorch, dequantized), kTolerance);
    EXPECT_LE(vs_deq, kTolerance) << "PyTorch's own kernel: " << pt_vs_deq;
    std::printf("  %-44s %-12s vs dequantized: lathe %.2e, pytorch %.2e\n", what.c_str(), kernels::simd::isa_name(isa),
                vs_deq, pt_vs_deq);
  }
}

std::string label(const Json& c) {
  std::string s = c["op"].get<std::string>() + " " + std::to_string(c["m"].get<int>()) + "x" +
                  std::to_string(c["n"].get<int>()) + "x" + std::to_string(c["k"].get<int>());
  if (c.contains("group")) s += " g" + std::to_string(c["group"].get<int>());
  return s;
}

TEST(QuantizedLinear, Int8PackMmMatchesPyTorchOnEveryPath) {
  int seen = 0;
  for (const Json& c : cases("int8pack")) {
    const Int8ChannelCase k = int8_channel_case(c);
    check_paths(c, k.pytorch, k.dequantized, label(c),
                [&](Isa isa, Tensor& out) { return kernels::weight_int8pack_mm_out(k.x, k.w, k.s, out, isa); });
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(QuantizedLinear, Int4PackMmForCpuReadsEachOfPyTorchsLayouts) {
  int seen = 0;
  const std::pair<const char*, kernels::TorchInt4Layout> layouts[] = {
      {"avx512", kernels::TorchInt4Layout::Avx512},
      {"avx2", kernels::TorchInt4Layout::Avx2},
      {"default", kernels::TorchInt4Layout::Plain}};
  for (const Json& c : cases("int4pack")) {
    const int64_t M = c["m"], N = c["n"], K = c["k"], g = c["group"];
    const Tensor x = floats(c["x"], {M, K}), sz = floats(c["sz"], {K / g, N, 2});
    for (const auto& [name, layout] : layouts) {
      const Json& l = c["layouts"][name];
      const Tensor w = bytes(l["packed"], DType::UInt8, {N, K / 2});
      check_paths(c, floats(l["pytorch"], {M, N}), floats(c["dequantized"], {M, N}), label(c) + " " + name,
                  [&](Isa isa, Tensor& out) {
                    return kernels::weight_int4pack_mm_for_cpu_out(x, w, g, sz, out, layout, isa);
                  });
    }
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(QuantizedLinear, Int4GroupMmMatchesPyTorchsLinearOfTheDequantizedWeight) {
  int seen = 0;
  for (const Json& c : cases("int4group")) {
    const int64_t M = c["m"], N = c["n"], K = c["k"], g = c["group"];
    const Tensor x = floats(c["x"], {M, K}), s = floats(c["scales"], {N, K / g});
    const Tensor w = bytes(c["w"], DType::Int8, {N, K});
    check_paths(c, floats(c["pytorch"], {M, N}), floats(c["dequantized"], {M, N}), label(c),
                [&](Isa isa, Tensor& out) { return kernels::weight_int4_group_mm_out(x, w, s, g, out, isa); });
    ++seen;
  }
  EXPECT_EQ(seen, 3);
}

// A one-node program whose weight is a parameter: the executor repacks it
// once at plan time (KernelInfo::prepare), so a later change to the stored
// tensor goes unseen; a runtime weight is packed per call. Both give the
// kernel's result.
TEST(QuantizedLinear, ExecutorRepacksConstantWeightsOnceAndRuntimeWeightsPerCall) {
  const std::vector<Json> all = cases("int8pack");
  const Json* c = nullptr;
  for (const Json& k : all) {
    if (k["m"] == 3) c = &k;
  }
  ASSERT_NE(c, nullptr);
  const int64_t M = (*c)["m"], N = (*c)["n"], K = (*c)["k"];
  const Tensor x = floats((*c)["x"], {M, K}), s = floats((*c)["scales"], {N});
  const Tensor w = bytes((*c)["w"], DType::Int8, {N, K});
  Tensor expected = Tensor::empty(DType::Float32, {M, N});
  ASSERT_TRUE(kernels::weight_int8pack_mm_out(x, w, s, expected).ok());
  for (bool constant : {true, false}) {
    SCOPED_TRACE(constant ? "parameter weight" : "runtime weight");
    ExportedProgram ep;
    GraphBuilder b(ep);
    Value* xv = b.user_input("x", {M, K});
    Value* wv = constant ? b.parameter("w", {N, K}, DType::Int8) : b.user_input("w", {N, K}, DType::Int8);
    Value* sv = b.parameter("s", {N});
    if (constant) ep.parameters.set("w", kernels::contiguous_copy(w));  // its own storage: zeroed below
    ep.parameters.set("s", s);
    b.user_output(b.call("aten._weight_int8pack_mm.default", {{"self", xv}, {"mat2", wv}, {"scales", sv}}, {M, N}));
    auto ex = Executor::create(ep);
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    std::vector<Tensor> in{x};
    if (!constant) in.push_back(w);
    for (int call = 0; call < 2; ++call) {
      auto r = (*ex)->run(in);
      ASSERT_TRUE(r.ok()) << r.error().message();
      EXPECT_EQ(rel_diff((*r)[0], expected, expected), 0.0);
    }
    if (constant) {
      // Zero the stored weight: the packed copy is what the kernel reads.
      Tensor stored = *ep.parameters.find("w");
      std::fill_n(kernels::mdata<int8_t>(stored), stored.numel(), int8_t{0});
      auto r = (*ex)->run(in);
      ASSERT_TRUE(r.ok()) << r.error().message();
      EXPECT_EQ(rel_diff((*r)[0], expected, expected), 0.0);
    }
  }
}

// Threads split the output channels (groups of panels): every output is
// computed by one thread with the same code, so two threads give the
// one-thread result bit for bit. Shapes large enough to be split.
TEST(QuantizedLinear, TwoThreadsGiveTheOneThreadResult) {
  const int64_t M = 3, N = 200, K = 256;
  const Tensor x = GraphBuilder::deterministic_tensor("x", DType::Float32, {M, K});
  const Tensor q8 = GraphBuilder::deterministic_tensor("q8", DType::Int8, {N, K});
  const Tensor s8 = GraphBuilder::deterministic_tensor("s8", DType::Float32, {N});
  Tensor q4 = Tensor::empty(DType::Int8, {N, K});
  for (int64_t i = 0; i < N * K; ++i) kernels::mdata<int8_t>(q4)[i] = static_cast<int8_t>(i * 7 % 16 - 8);
  const Tensor s4 = GraphBuilder::deterministic_tensor("s4", DType::Float32, {N, K / 32});
  auto both = [&](Tensor& o8, Tensor& o4) {
    ASSERT_TRUE(kernels::weight_int8pack_mm_out(x, q8, s8, o8).ok());
    ASSERT_TRUE(kernels::weight_int4_group_mm_out(x, q4, s4, 32, o4).ok());
  };
  Tensor one8 = Tensor::empty(DType::Float32, {M, N}), one4 = Tensor::empty(DType::Float32, {M, N});
  Tensor two8 = Tensor::empty(DType::Float32, {M, N}), two4 = Tensor::empty(DType::Float32, {M, N});
  const int before = num_threads();
  set_num_threads(1);
  both(one8, one4);
  set_num_threads(2);
  both(two8, two4);
  set_num_threads(before);
  EXPECT_EQ(rel_diff(two8, one8, one8), 0.0);
  EXPECT_EQ(rel_diff(two4, one4, one4), 0.0);
}

// The GEMV rows (one or two) stream their panels with software prefetch,
// four k a line, then finish the k that do not fill a line: every path
// against the scalar one where K leaves 1, 2 and 3 such k.
TEST(QuantizedLinear, Int8FewRowsMatchScalarWhateverKLeavesOver) {
  for (int64_t M : {1, 2}) {
    for (int64_t K : {61, 202, 4099}) {
      SCOPED_TRACE("M " + std::to_string(M) + " K " + std::to_string(K));
      const int64_t N = 70;
      const Tensor x = GraphBuilder::deterministic_tensor("x", DType::Float32, {M, K});
      const Tensor q = GraphBuilder::deterministic_tensor("q", DType::Int8, {N, K});
      const Tensor s = GraphBuilder::deterministic_tensor("s", DType::Float32, {N});
      Tensor scalar = Tensor::empty(DType::Float32, {M, N});
      ASSERT_TRUE(kernels::weight_int8pack_mm_out(x, q, s, scalar, Isa::Scalar).ok());
      for (Isa isa : isas_here()) {
        Tensor out = Tensor::empty(DType::Float32, {M, N});
        ASSERT_TRUE(kernels::weight_int8pack_mm_out(x, q, s, out, isa).ok());
        EXPECT_LE(rel_diff(out, scalar, scalar), kTolerance) << kernels::simd::isa_name(isa);
      }
    }
  }
}

TEST(QuantizedLinear, BadInt4PackArgumentsAreErrors_NEG) {
  Tensor x = Tensor::empty(DType::Float32, {2, 64});
  Tensor w = Tensor::empty(DType::UInt8, {16, 32});
  Tensor sz = Tensor::empty(DType::Float32, {2, 16, 2});
  Tensor out = Tensor::empty(DType::Float32, {2, 16});
  Status s = kernels::weight_int4pack_mm_for_cpu_out(x, w, 48, sz, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "_weight_int4pack_mm_for_cpu: qGroupSize must be 32, 64, 128 or 256, got 48");
  Tensor sz_bad = Tensor::empty(DType::Float32, {2, 16, 1});
  s = kernels::weight_int4pack_mm_for_cpu_out(x, w, 32, sz_bad, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "_weight_int4pack_mm_for_cpu: qScaleAndZeros [2, 16, 1] must be [2, 16, 2]");
  Tensor w_bad = Tensor::empty(DType::UInt8, {16, 16});
  s = kernels::weight_int4pack_mm_for_cpu_out(x, w_bad, 32, sz, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "_weight_int4pack_mm_for_cpu: mat2 [16, 16] must be [N, K / 2] for self [2, 64]");
  Tensor w12 = Tensor::empty(DType::UInt8, {12, 32});
  Tensor sz12 = Tensor::empty(DType::Float32, {2, 12, 2});
  Tensor out12 = Tensor::empty(DType::Float32, {2, 12});
  s = kernels::weight_int4pack_mm_for_cpu_out(x, w12, 32, sz12, out12);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "_weight_int4pack_mm_for_cpu: K 64 must be a multiple of qGroupSize 32 and N 12 a multiple of 16");
}

}  // namespace
}  // namespace lathe
