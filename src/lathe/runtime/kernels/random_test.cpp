// Lathe's random kernels: Philox4x32-10 against the published known-answer
// vector, then distributions on ~100k samples (moments within a few
// standard errors), ranges, permutations, dropout's mask/output agreement,
// and reproducibility: the same seed gives the same numbers, another seed
// others. The streams are Lathe's own, so nothing is compared with PyTorch.
#include "lathe/runtime/kernels/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe::kernels {
namespace {

constexpr int64_t kN = 100000;

struct Moments {
  double mean = 0, var = 0;
};

template <typename T>
Moments moments(const Tensor& t) {
  const T* p = cdata<T>(t);
  const int64_t n = t.numel();
  Moments m;
  for (int64_t i = 0; i < n; ++i) m.mean += static_cast<double>(p[i]);
  m.mean /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) m.var += (static_cast<double>(p[i]) - m.mean) * (static_cast<double>(p[i]) - m.mean);
  m.var /= static_cast<double>(n - 1);
  return m;
}

// |mean - want| within 5 standard errors of a distribution of variance `var`.
void expect_mean(double got, double want, double var, int64_t n) {
  EXPECT_NEAR(got, want, 5.0 * std::sqrt(var / static_cast<double>(n)));
}

TEST(RandomPhilox, KnownAnswer) {
  // Random123's kat_vectors: philox4x32 10, counter and key zero.
  const auto r = philox4x32_10({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

TEST(RandomUniform, RangeAndMoments) {
  set_random_seed(1);
  Tensor t = Tensor::empty(DType::Float32, {kN});
  ASSERT_TRUE(uniform_out(t, 0.0, 1.0).ok());
  const float* p = cdata<float>(t);
  for (int64_t i = 0; i < kN; ++i) ASSERT_TRUE(p[i] >= 0.0f && p[i] < 1.0f) << p[i];
  const Moments m = moments<float>(t);
  expect_mean(m.mean, 0.5, 1.0 / 12, kN);
  EXPECT_NEAR(m.var, 1.0 / 12, 0.002);

  Tensor d = Tensor::empty(DType::Float64, {100, 1000});
  ASSERT_TRUE(uniform_out(d, -3.0, 5.0).ok());
  const double* q = cdata<double>(d);
  for (int64_t i = 0; i < d.numel(); ++i) ASSERT_TRUE(q[i] >= -3.0 && q[i] < 5.0) << q[i];
  expect_mean(moments<double>(d).mean, 1.0, 64.0 / 12, d.numel());
}

TEST(RandomNormal, Moments) {
  set_random_seed(2);
  Tensor t = Tensor::empty(DType::Float32, {kN});
  ASSERT_TRUE(normal_out(t, 0.0, 1.0).ok());
  const Moments m = moments<float>(t);
  expect_mean(m.mean, 0.0, 1.0, kN);
  EXPECT_NEAR(m.var, 1.0, 5.0 * std::sqrt(2.0 / kN));
  // The tails: about 4.55% beyond 2 sigma.
  int64_t beyond = 0;
  for (int64_t i = 0; i < kN; ++i) beyond += std::abs(cdata<float>(t)[i]) > 2.0f;
  EXPECT_NEAR(static_cast<double>(beyond) / kN, 0.0455, 0.004);

  Tensor s = Tensor::empty(DType::Float64, {kN});
  ASSERT_TRUE(normal_out(s, 3.0, 2.0).ok());
  const Moments ms = moments<double>(s);
  expect_mean(ms.mean, 3.0, 4.0, kN);
  EXPECT_NEAR(ms.var, 4.0, 4.0 * 5.0 * std::sqrt(2.0 / kN));
  EXPECT_FALSE(normal_out(s, 0.0, -1.0).ok());
}

TEST(RandomRandint, RangeAndUniformity) {
  set_random_seed(3);
  Tensor t = Tensor::empty(DType::Int64, {kN});
  ASSERT_TRUE(randint_out(t, -3, 7).ok());
  std::vector<int64_t> counts(10, 0);
  for (int64_t i = 0; i < kN; ++i) {
    const int64_t v = cdata<int64_t>(t)[i];
    ASSERT_TRUE(v >= -3 && v < 7) << v;
    ++counts[static_cast<size_t>(v + 3)];
  }
  // Each value 1/10 of the draws: binomial standard error sqrt(n p (1-p)).
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c), kN / 10.0, 5.0 * std::sqrt(kN * 0.09));
  Tensor u8 = Tensor::empty(DType::UInt8, {1000});
  ASSERT_TRUE(randint_out(u8, 0, 256).ok());
  EXPECT_FALSE(randint_out(u8, 0, 257).ok());  // 256 does not fit uint8
  EXPECT_FALSE(randint_out(t, 5, 5).ok());
  Tensor f = Tensor::empty(DType::Float32, {100});
  ASSERT_TRUE(randint_out(f, 0, 3).ok());
  for (int64_t i = 0; i < 100; ++i) {
    const float v = cdata<float>(f)[i];
    EXPECT_TRUE(v == 0.0f || v == 1.0f || v == 2.0f) << v;
  }
}

TEST(RandomRandperm, IsAPermutation) {
  set_random_seed(4);
  for (int64_t n : {0, 1, 2, 17, 1000}) {
    Tensor t = Tensor::empty(DType::Int64, {n});
    ASSERT_TRUE(randperm_out(t).ok());
    std::vector<int64_t> v(cdata<int64_t>(t), cdata<int64_t>(t) + n);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i) << "n=" << n;
  }
  // Not the identity, and every position sees every value about equally.
  Tensor t = Tensor::empty(DType::Int32, {1000});
  ASSERT_TRUE(randperm_out(t).ok());
  int64_t fixed = 0;
  for (int32_t i = 0; i < 1000; ++i) fixed += cdata<int32_t>(t)[i] == i;
  EXPECT_LT(fixed, 10);
  std::vector<int64_t> first(4, 0);
  for (int k = 0; k < 4000; ++k) {
    Tensor s = Tensor::empty(DType::Int64, {4});
    ASSERT_TRUE(randperm_out(s).ok());
    ++first[static_cast<size_t>(cdata<int64_t>(s)[0])];
  }
  for (int64_t c : first) EXPECT_NEAR(static_cast<double>(c), 1000.0, 5.0 * std::sqrt(4000 * 0.1875));
  Tensor small = Tensor::empty(DType::Int8, {300});
  EXPECT_FALSE(randperm_out(small).ok());  // 299 does not fit int8
}

TEST(RandomBernoulli, RateAndProbabilities) {
  set_random_seed(5);
  Tensor t = Tensor::empty(DType::Float32, {kN});
  ASSERT_TRUE(bernoulli_out(nullptr, 0.3, t).ok());
  double ones = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const float v = cdata<float>(t)[i];
    ASSERT_TRUE(v == 0.0f || v == 1.0f);
    ones += v;
  }
  expect_mean(ones / kN, 0.3, 0.21, kN);
  // Per-element probabilities: 0 and 1 are exact.
  Tensor probs = Tensor::empty(DType::Float64, {3, kN / 3});
  double* p = mdata<double>(probs);
  for (int64_t i = 0; i < probs.numel(); ++i) p[i] = i < kN / 3 ? 0.0 : (i < 2 * (kN / 3) ? 1.0 : 0.75);
  Tensor b = Tensor::empty(DType::Bool, {3, kN / 3});
  ASSERT_TRUE(bernoulli_out(&probs, 0.0, b).ok());
  int64_t c[3] = {0, 0, 0};
  for (int64_t i = 0; i < b.numel(); ++i) c[i / (kN / 3)] += cdata<bool>(b)[i];
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[1], kN / 3);
  expect_mean(static_cast<double>(c[2]) / (kN / 3), 0.75, 0.1875, kN / 3);
  EXPECT_FALSE(bernoulli_out(nullptr, 1.5, t).ok());
  p[0] = -0.1;
  EXPECT_FALSE(bernoulli_out(&probs, 0.0, b).ok());
}

TEST(RandomDropout, MaskAndScaling) {
  set_random_seed(6);
  Tensor x = Tensor::empty(DType::Float32, {kN});
  for (int64_t i = 0; i < kN; ++i) mdata<float>(x)[i] = 1.0f + static_cast<float>(i % 7);
  Tensor out = Tensor::empty(DType::Float32, {kN});
  Tensor mask = Tensor::empty(DType::Bool, {kN});
  ASSERT_TRUE(dropout_out(x, 0.25, out, mask).ok());
  int64_t kept = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const float want = cdata<bool>(mask)[i] ? cdata<float>(x)[i] / 0.75f : 0.0f;
    ASSERT_NEAR(cdata<float>(out)[i], want, 1e-6f * want) << i;
    kept += cdata<bool>(mask)[i];
  }
  expect_mean(static_cast<double>(kept) / kN, 0.75, 0.1875, kN);
  // p = 1 drops everything; p = 0 keeps everything unscaled.
  ASSERT_TRUE(dropout_out(x, 1.0, out, mask).ok());
  for (int64_t i = 0; i < kN; ++i) ASSERT_TRUE(!cdata<bool>(mask)[i] && cdata<float>(out)[i] == 0.0f);
  ASSERT_TRUE(dropout_out(x, 0.0, out, mask).ok());
  for (int64_t i = 0; i < kN; ++i) ASSERT_TRUE(cdata<bool>(mask)[i] && cdata<float>(out)[i] == cdata<float>(x)[i]);
  EXPECT_FALSE(dropout_out(x, 1.5, out, mask).ok());
}

TEST(RandomSeed, SameSeedSameNumbersOtherSeedOthers) {
  auto draw = [](uint64_t seed) {
    set_random_seed(seed);
    Tensor a = Tensor::empty(DType::Float32, {64});
    Tensor b = Tensor::empty(DType::Float32, {64});
    EXPECT_TRUE(uniform_out(a, 0.0, 1.0).ok());
    EXPECT_TRUE(normal_out(b, 0.0, 1.0).ok());
    std::vector<float> v(cdata<float>(a), cdata<float>(a) + 64);
    v.insert(v.end(), cdata<float>(b), cdata<float>(b) + 64);
    return v;
  };
  const auto first = draw(42), again = draw(42), other = draw(43);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  EXPECT_EQ(random_seed(), 43u);
  // Successive calls continue the stream rather than repeating it.
  EXPECT_NE(std::vector<float>(first.begin(), first.begin() + 64), std::vector<float>(first.begin() + 64, first.end()));
  set_random_seed(kDefaultRandomSeed);
}

TEST(RandomDtypes, FloatingOnlyWhereRequired) {
  Tensor i = Tensor::empty(DType::Int64, {4});
  EXPECT_FALSE(uniform_out(i, 0.0, 1.0).ok());
  EXPECT_FALSE(normal_out(i, 0.0, 1.0).ok());
  Tensor h = Tensor::empty(DType::Float16, {1000});
  ASSERT_TRUE(uniform_out(h, 0.0, 1.0).ok());
  for (int64_t k = 0; k < 1000; ++k) {
    const float v = cdata<Half>(h)[k];
    ASSERT_TRUE(v >= 0.0f && v < 1.0f) << v;
  }
  Tensor empty = Tensor::empty(DType::Float32, {0, 3});
  EXPECT_TRUE(normal_out(empty, 0.0, 1.0).ok());
}

TEST(RandomSeed, ConcurrentCallsShareNoNumbers) {
  // Each call reserves its own run of counters, so four threads drawing
  // together get exactly the numbers of one sequential draw of all of them.
  constexpr int kThreads = 4, kCalls = 50, kEach = 100;
  auto sorted_values = [](const std::vector<Tensor>& ts) {
    std::vector<double> v;
    for (const Tensor& t : ts) v.insert(v.end(), cdata<double>(t), cdata<double>(t) + t.numel());
    std::sort(v.begin(), v.end());
    return v;
  };
  set_random_seed(77);
  std::vector<Tensor> parallel(kThreads * kCalls);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&parallel, k] {
      for (int i = 0; i < kCalls; ++i) {
        Tensor t = Tensor::empty(DType::Float64, {kEach});
        EXPECT_TRUE(uniform_out(t, 0.0, 1.0).ok());
        parallel[static_cast<size_t>(k * kCalls + i)] = t;
      }
    });
  }
  for (auto& t : threads) t.join();
  set_random_seed(77);
  Tensor all = Tensor::empty(DType::Float64, {kThreads * kCalls * kEach});
  ASSERT_TRUE(uniform_out(all, 0.0, 1.0).ok());
  const std::vector<double> a = sorted_values(parallel), b = sorted_values({all});
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end());  // no value drawn twice
  set_random_seed(kDefaultRandomSeed);
}

// The registered adapters, through a one-node program: argument names,
// defaults and output dtypes.
// `input`, if given, is the op's first argument (named "input" for
// dropout, "self" otherwise).
std::vector<Tensor> run_node(const std::string& op, std::vector<GraphBuilder::Arg> args, std::vector<TensorMeta> outs,
                             const std::vector<Tensor>& inputs = {}) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  if (!inputs.empty()) {
    Value* v = b.user_input("x", GraphBuilder::tensor_meta(inputs[0].sizes, inputs[0].dtype));
    args.insert(args.begin(), GraphBuilder::Arg(op.find("dropout") != std::string::npos ? "input" : "self", v));
  }
  std::vector<Value*> values = outs.size() == 1 ? std::vector<Value*>{b.call(op, args, outs[0])} : b.call_multi(op, args, outs);
  for (Value* v : values) b.user_output(v);
  auto ex = Executor::create(ep);
  EXPECT_TRUE(ex.ok()) << ex.error().message();
  if (!ex.ok()) return {};
  auto got = (*ex)->run(inputs);
  EXPECT_TRUE(got.ok()) << got.error().message();
  return got.ok() ? *got : std::vector<Tensor>{};
}

TEST(RandomKernels, AdaptersHonourArguments) {
  using GB = GraphBuilder;
  auto rand = run_node("aten.rand.default",
                       {{"size", IntList{{3, 4}}}, {"dtype", ScalarTypeArg{DType::Float64}, ArgKind::Keyword}},
                       {GB::tensor_meta({3, 4}, DType::Float64)});
  ASSERT_EQ(rand.size(), 1u);
  EXPECT_EQ(rand[0].dtype, DType::Float64);
  for (int64_t i = 0; i < 12; ++i) EXPECT_TRUE(cdata<double>(rand[0])[i] >= 0.0 && cdata<double>(rand[0])[i] < 1.0);

  auto perm = run_node("aten.randperm.default", {{"n", int64_t{10}}}, {GB::tensor_meta({10}, DType::Int64)});
  ASSERT_EQ(perm.size(), 1u);
  std::vector<int64_t> v(cdata<int64_t>(perm[0]), cdata<int64_t>(perm[0]) + 10);
  std::sort(v.begin(), v.end());
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(v[i], i);

  auto ri = run_node("aten.randint.low", {{"low", int64_t{-2}}, {"high", int64_t{3}}, {"size", IntList{{200}}}},
                     {GB::tensor_meta({200}, DType::Int64)});
  ASSERT_EQ(ri.size(), 1u);
  for (int64_t i = 0; i < 200; ++i) EXPECT_TRUE(cdata<int64_t>(ri[0])[i] >= -2 && cdata<int64_t>(ri[0])[i] < 3);

  Tensor x = Tensor::empty(DType::Float32, {1000});
  std::fill(mdata<float>(x), mdata<float>(x) + 1000, 2.0f);
  auto like = run_node("aten.randn_like.default", {}, {GB::tensor_meta({1000}, DType::Float32)}, {x});
  ASSERT_EQ(like.size(), 1u);
  EXPECT_EQ(like[0].sizes, x.sizes);

  // native_dropout: train omitted counts as training (ATen's bool? train).
  auto drop = run_node("aten.native_dropout.default", {{"p", 0.5}},
                       {GB::tensor_meta({1000}, DType::Float32), GB::tensor_meta({1000}, DType::Bool)}, {x});
  ASSERT_EQ(drop.size(), 2u);
  int64_t kept = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    const bool m = cdata<bool>(drop[1])[i];
    kept += m;
    EXPECT_EQ(cdata<float>(drop[0])[i], m ? 4.0f : 0.0f);
  }
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
  auto eval = run_node("aten.native_dropout.default", {{"p", 0.5}, {"train", false}},
                       {GB::tensor_meta({1000}, DType::Float32), GB::tensor_meta({1000}, DType::Bool)}, {x});
  ASSERT_EQ(eval.size(), 2u);
  for (int64_t i = 0; i < 1000; ++i) EXPECT_TRUE(cdata<bool>(eval[1])[i] && cdata<float>(eval[0])[i] == 2.0f);

  auto bern = run_node("aten.bernoulli.p", {{"p", 0.25}}, {GB::tensor_meta({1000}, DType::Float32)}, {x});
  ASSERT_EQ(bern.size(), 1u);
  for (int64_t i = 0; i < 1000; ++i) EXPECT_TRUE(cdata<float>(bern[0])[i] == 0.0f || cdata<float>(bern[0])[i] == 1.0f);

  auto uni = run_node("aten.uniform.default", {{"from", -1.0}, {"to", 1.0}}, {GB::tensor_meta({1000}, DType::Float32)}, {x});
  ASSERT_EQ(uni.size(), 1u);
  for (int64_t i = 0; i < 1000; ++i) EXPECT_TRUE(cdata<float>(uni[0])[i] >= -1.0f && cdata<float>(uni[0])[i] < 1.0f);
}

TEST(RandomKernels, BadArgumentsAreErrors) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  b.user_output(b.call("aten.randint.low", {{"low", int64_t{3}}, {"high", int64_t{3}}, {"size", IntList{{2}}}},
                       GraphBuilder::tensor_meta({2}, DType::Int64)));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto got = (*ex)->run(std::vector<Tensor>{});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message().find("randint"), std::string::npos) << got.error().message();
}

TEST(RandomKernels, EachRunDrawsNewNumbers) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  b.user_output(b.call("aten.randn.default", {{"size", IntList{{8}}}}, GraphBuilder::tensor_meta({8}, DType::Float32)));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto first = (*ex)->run(std::vector<Tensor>{});
  auto second = (*ex)->run(std::vector<Tensor>{});
  ASSERT_TRUE(first.ok() && second.ok());
  const std::vector<float> a(cdata<float>((*first)[0]), cdata<float>((*first)[0]) + 8);
  const std::vector<float> c(cdata<float>((*second)[0]), cdata<float>((*second)[0]) + 8);
  EXPECT_NE(a, c);
}

TEST(RandomKernels, CpuStridedOnly) {
  for (bool bad_device : {false, true}) {
    ExportedProgram ep;
    GraphBuilder b(ep);
    std::vector<GraphBuilder::Arg> args{{"size", IntList{{2}}}};
    if (bad_device) args.emplace_back("device", DeviceArg{Device{"cuda", 0}}, ArgKind::Keyword);
    else args.emplace_back("layout", LayoutArg{1}, ArgKind::Keyword);  // torch.sparse_coo
    b.user_output(b.call("aten.randn.default", args, GraphBuilder::tensor_meta({2}, DType::Float32)));
    auto ex = Executor::create(ep);
    if (!ex.ok()) continue;  // refused when planning is as good
    auto got = (*ex)->run(std::vector<Tensor>{});
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error().message().find(bad_device ? "device" : "layout"), std::string::npos) << got.error().message();
  }
}

TEST(RandomKernels, Registered) {
  for (const char* op : {"aten.rand.default", "aten.randn.default", "aten.rand_like.default", "aten.randn_like.default",
                         "aten.randint.default", "aten.randint.low", "aten.randperm.default", "aten.bernoulli.p",
                         "aten.bernoulli.default", "aten.normal_functional.default", "aten.uniform.default",
                         "aten.native_dropout.default"}) {
    EXPECT_NE(portable_kernels().find(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace lathe::kernels
