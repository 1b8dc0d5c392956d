// lathe.dynamic_int8_mm and aten._int_mm (kernels/dynamic_int8.h) against
// what PyTorch 2.13 computes for torchao 0.18's dynamic int8 linear
// (testdata/quantized_linear_cases.json, "dyn8": choose_qparams_affine,
// quantize_affine, _int_mm and the two multiplies, run op by op). Every step
// is the same float32 arithmetic and the integer sums are exact, so every
// path must give PyTorch's numbers bit for bit.
#include "lathe/runtime/kernels/dynamic_int8.h"

#include <gtest/gtest.h>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/quantized_test_support.h"

namespace lathe {
namespace {

using namespace quantized_test;

TEST(DynamicInt8, MatchesTorchaosDynamicLinearBitForBitOnEveryPath) {
  int seen = 0;
  for (const Json& c : cases("dyn8")) {
    const auto [M, N, K, x, w, s, pytorch, deq] = int8_channel_case(c);
    for (Isa isa : isas_here()) {
      SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " on " +
                   kernels::simd::isa_name(isa));
      Tensor out = Tensor::empty(DType::Float32, {M, N});
      Status st = kernels::dynamic_int8_mm_out(x, w, s, c["eps"].get<double>(), out, isa);
      ASSERT_TRUE(st.ok()) << st.error().message();
      EXPECT_EQ(rel_diff(out, pytorch, pytorch), 0.0);
      std::printf("  dyn8 %-12s %-12s vs float64 with the float weight: %.2e (quantizing the activations)\n",
                  (std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K)).c_str(),
                  kernels::simd::isa_name(isa), rel_diff(out, deq, deq));
    }
    ++seen;
  }
  EXPECT_EQ(seen, 3);
}

// _int_mm on a transposed weight view, as torchao's export calls it.
TEST(DynamicInt8, IntMmIsExactOnATransposedView) {
  Tensor a = Tensor::empty(DType::Int8, {2, 3});
  Tensor w = Tensor::empty(DType::Int8, {2, 3});  // [N, K]; mat2 = w^T
  const int8_t av[] = {1, -2, 3, -128, 127, 0}, wv[] = {4, 5, -6, 127, -128, 1};
  std::copy(av, av + 6, kernels::mdata<int8_t>(a));
  std::copy(wv, wv + 6, kernels::mdata<int8_t>(w));
  const Tensor wt = kernels::make_view(w, {3, 2}, {1, 3}, 0);
  Tensor out = Tensor::empty(DType::Int32, {2, 2});
  ASSERT_TRUE(kernels::int_mm_out(a, wt, out).ok());
  // row 0: 4 - 10 - 18 = -24; 127 + 256 + 3 = 386. row 1: -512 + 635 = 123; -16256 - 16256 = -32512
  const int32_t* o = kernels::cdata<int32_t>(out);
  EXPECT_EQ(std::vector<int32_t>(o, o + 4), (std::vector<int32_t>{-24, 386, 123, -32512}));
}

TEST(DynamicInt8, BadArgumentsAreErrors_NEG) {
  Tensor x = Tensor::empty(DType::Float32, {2, 8});
  Tensor w = Tensor::empty(DType::Int8, {3, 4});
  Tensor s = Tensor::empty(DType::Float32, {3});
  Tensor out = Tensor::empty(DType::Float32, {2, 3});
  Status st = kernels::dynamic_int8_mm_out(x, w, s, 1e-7, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(),
            "dynamic_int8_mm: self [2, 8], mat2 [3, 4] and scales [3] do not fit [M, K], [N, K], [N]");
  Tensor wf = Tensor::empty(DType::Float32, {3, 8});
  st = kernels::dynamic_int8_mm_out(x, wf, s, 1e-7, out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("mat2"), std::string::npos) << st.error().message();
  Tensor a = Tensor::empty(DType::Int8, {2, 3}), b = Tensor::empty(DType::Int8, {4, 2});
  Tensor o = Tensor::empty(DType::Int32, {2, 2});
  st = kernels::int_mm_out(a, b, o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "_int_mm: self [2, 3] and mat2 [4, 2] cannot be multiplied");
}

// Through the executor: the constant weight is packed for vpdpbusd once,
// at plan time (zeroing the stored tensor afterwards changes nothing).
TEST(DynamicInt8, ExecutorPacksTheConstantWeightOnce) {
  const Json c = cases("dyn8").at(1);
  const int64_t M = c["m"], N = c["n"], K = c["k"];
  const Tensor x = floats(c["x"], {M, K}), s = floats(c["scales"], {N});
  const Tensor pytorch = floats(c["pytorch"], {M, N});
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* xv = b.user_input("x", {M, K});
  Value* wv = b.parameter("w", {N, K}, DType::Int8);
  Value* sv = b.parameter("s", {N});
  ep.parameters.set("w", bytes(c["w"], DType::Int8, {N, K}));
  ep.parameters.set("s", s);
  b.user_output(b.call("lathe.dynamic_int8_mm.default",
                       {{"self", xv}, {"mat2", wv}, {"scales", sv}, {"eps", Argument(c["eps"].get<double>())}}, {M, N}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor stored = *ep.parameters.find("w");
  std::fill_n(kernels::mdata<int8_t>(stored), stored.numel(), int8_t{0});
  auto r = (*ex)->run(std::vector<Tensor>{x});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(rel_diff((*r)[0], pytorch, pytorch), 0.0);
}

}  // namespace
}  // namespace lathe
