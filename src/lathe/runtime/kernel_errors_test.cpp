// Hand-checked tests of the kernels' shared pieces and refusals: argument
// checks, type promotion, 16-bit float conversion, view strides, and the
// ops whose PyTorch result is random (empty*) or which PyTorch refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/contraction.h"
#include "lathe/runtime/kernels/conv.h"
#include "lathe/runtime/kernels/copy.h"
#include "lathe/runtime/kernels/index.h"
#include "lathe/runtime/kernels/matmul.h"
#include "lathe/runtime/kernels/pool.h"
#include "lathe/runtime/kernels/recurrent.h"
#include "lathe/runtime/kernels/softmax.h"
#include "lathe/runtime/kernels/unary.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe::kernels {
namespace {

Tensor f32(std::vector<int64_t> sizes) { return Tensor::empty(DType::Float32, std::move(sizes)); }

TEST(KernelChecks, ShapeMismatchesAreErrorsNotReads) {
  Tensor out = f32({2, 5});
  Status mm = mm_out(f32({2, 3}), f32({4, 5}), out);
  ASSERT_FALSE(mm.ok());
  EXPECT_EQ(mm.error().message(), "mm: shapes [2, 3] and [4, 5] cannot be multiplied");
  Status wrong_out = mm_out(f32({2, 3}), f32({3, 5}), out = f32({5, 2}));
  ASSERT_FALSE(wrong_out.ok());
  EXPECT_EQ(wrong_out.error().message(), "mm: out is float32 [5, 2], expected float32 [2, 5]");
  Tensor b = f32({3});
  Status bc = binary_out(BinaryOp::Add, f32({2, 4}), b, DType::Float32, out = f32({2, 4}));
  ASSERT_FALSE(bc.ok());
  EXPECT_EQ(bc.error().message(), "shapes [2, 4] and [3] do not broadcast");
}

TEST(KernelChecks, OutOfRangeIndicesAreErrors) {
  Tensor w = f32({10, 4});
  Tensor idx = Tensor::empty(DType::Int64, {2});
  kernels::mdata<int64_t>(idx)[1] = 10;
  Tensor out = f32({2, 4});
  Status e = embedding_out(w, idx, out);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message(), "embedding: index 10 is out of bounds for size 10");
  kernels::mdata<int64_t>(idx)[1] = -1;
  Tensor sel = f32({10, 2});
  Status s = index_select_out(w, 1, idx, sel);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "index_select: index -1 is out of bounds for size 4");
  auto select = select_view(w, 0, 10);
  ASSERT_FALSE(select.ok());
  EXPECT_EQ(select.error().message(), "select: index 10 out of range for dim 0 of size 10");
}

TEST(KernelChecks, IntegerDivisionByZeroIsAnError) {
  Tensor a = Tensor::empty(DType::Int64, {2});
  Tensor b = Tensor::empty(DType::Int64, {2});
  kernels::mdata<int64_t>(b)[0] = 1;  // b = [1, 0]
  Tensor out = Tensor::empty(DType::Int64, {2});
  Status s = binary_out(BinaryOp::DivFloor, a, b, DType::Int64, out);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "ZeroDivisionError: integer division by zero");
}

// torch.pow(x, 2) on the CPU is x * x (ATen's pow_tensor_scalar special
// case); glibc's powf(x, 2) is an ulp above it at x = 0x1.007p-31 (PyTorch
// 2.13: torch.pow(tensor([0x1.007p-31]), 2) == 0x1.00e03p-62).
TEST(KernelChecks, PowerOfTwoIsTheCorrectlyRoundedSquare) {
  Tensor x = f32({3});
  float* px = mdata<float>(x);
  px[0] = 0x1.007p-31f, px[1] = -1.5f, px[2] = std::numeric_limits<float>::quiet_NaN();
  Tensor two = Tensor::empty(DType::Float32, {});
  *mdata<float>(two) = 2.0f;
  Tensor out = f32({3});
  ASSERT_TRUE(binary_out(BinaryOp::Pow, x, two, DType::Float32, out).ok());
  EXPECT_EQ(cdata<float>(out)[0], 0x1.00e03p-62f);
  EXPECT_EQ(cdata<float>(out)[1], 2.25f);
  EXPECT_TRUE(std::isnan(cdata<float>(out)[2]));
  *mdata<float>(two) = 3.0f;  // other exponents still go through pow
  ASSERT_TRUE(binary_out(BinaryOp::Pow, x, two, DType::Float32, out).ok());
  EXPECT_EQ(cdata<float>(out)[1], -3.375f);
}

TEST(KernelChecks, MappedWeightsAreNeverWritten) {
  auto keep = std::make_shared<std::vector<std::byte>>(16);
  Tensor mapped;
  mapped.storage = Storage::view(keep, keep->data(), keep->size());
  mapped.sizes = {4};
  mapped.strides = {1};
  Status s = copy_into(f32({4}), mapped);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "copy: output is read-only (a view of mapped weights?)");
}

TEST(KernelChecks, ViewRefusesLayoutsThatNeedACopy) {
  Tensor t = f32({3, 4});
  auto tt = transpose_view(t, 0, 1);
  ASSERT_TRUE(tt.ok());
  auto v = view_view(*tt, {12});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message().find("use reshape"), std::string::npos);
  // [4, 3] transposed storage viewed as [2, 2, 3]: splitting dim 0 is fine.
  auto ok = view_view(*tt, {2, 2, 3});
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->strides, (std::vector<int64_t>{2, 1, 4}));
  auto bad_expand = expand_view(f32({3, 2}), {3, 4});
  ASSERT_FALSE(bad_expand.ok());
  EXPECT_EQ(bad_expand.error().message(), "expand: size 2 of dim 1 cannot expand to 4 ([3, 2] -> [3, 4])");
}

TEST(KernelChecks, ConvolutionChecksGroups) {
  ConvParams p;
  p.groups = 3;
  auto s = conv_output_shape(f32({1, 4, 5, 5}), f32({6, 2, 3, 3}), p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "convolution: groups 3 do not divide 4 input channels");
}

// A padding of 2^31 from a hostile file once asked for an output larger than
// any memory (std::bad_alloc); it is refused before any size is computed.
TEST(KernelChecks, ConvolutionRefusesAbsurdPadding) {
  ConvParams p;
  p.padding = {int64_t{1} << 31};
  auto s = conv_output_shape(f32({1, 2, 5, 5}), f32({4, 2, 3, 3}), p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "convolution: padding 2147483648 is out of range [0, 2^20]");
}

// Pooling attributes from a file are bounded like convolution's: a padding
// of -6e18 overflowed the padding check (found by fuzz_runtime), 2^62 the
// 3-D one.
TEST(KernelChecks, PoolingRefusesAbsurdAttributes_NEG) {
  const Tensor x = Tensor::empty(DType::Float32, {1, 1, 4, 4});
  PoolParams p;
  p.kernel = {2};
  p.padding = {-6229816719418382941};
  auto s = pool2d_shape(x, p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "pool2d: kernel_size, stride, padding and dilation must lie in [0, 2^20], got -6229816719418382941");
  p.padding = {0};
  p.stride = {int64_t{1} << 62};
  EXPECT_FALSE(pool2d_shape(x, p).ok());
  PoolParams p3;
  p3.kernel = {2};
  p3.padding = {int64_t{1} << 62};
  auto s3 = pool3d_shape(Tensor::empty(DType::Float32, {1, 1, 4, 4, 4}), p3, "max_pool3d");
  ASSERT_FALSE(s3.ok());
  EXPECT_EQ(s3.error().message(), "max_pool3d: kernel, stride, padding or dilation is out of range");
}

// neg and abs of the most negative integer wrap to itself, as in PyTorch
// (negating it overflowed: undefined behaviour, found by fuzz_runtime).
TEST(KernelChecks, NegAndAbsOfIntMinWrap_NEG) {
  for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs}) {
    Tensor x = Tensor::empty(DType::Int32, {2});
    mdata<int32_t>(x)[0] = std::numeric_limits<int32_t>::min();
    mdata<int32_t>(x)[1] = -5;
    Tensor y = Tensor::empty(DType::Int32, {2});
    ASSERT_TRUE(unary_out(op, x, y).ok());
    EXPECT_EQ(cdata<int32_t>(y)[0], std::numeric_limits<int32_t>::min());
    EXPECT_EQ(cdata<int32_t>(y)[1], 5);
  }
}

// Values fuzz_runtime found undefined behaviour on (each was UB, caught by
// UBSan in the fuzz and sanitizer builds); now each has PyTorch's result or,
// where PyTorch's is undefined too, a defined one.
TEST(KernelChecks, ExtremeValuesAreDefined_NEG) {
  // float -> int: NaN is 0, values past int64 saturate before narrowing.
  Tensor f = Tensor::empty(DType::Float32, {4});
  const float fv[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1e30f, -7.9f};
  std::copy(std::begin(fv), std::end(fv), mdata<float>(f));
  Tensor i = Tensor::empty(DType::Int64, {4});
  ASSERT_TRUE(copy_into(f, i).ok());
  EXPECT_EQ(cdata<int64_t>(i)[0], 0);
  EXPECT_EQ(cdata<int64_t>(i)[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(cdata<int64_t>(i)[3], -7);
  Tensor i8 = Tensor::empty(DType::Int8, {4});
  ASSERT_TRUE(copy_into(f, i8).ok());
  EXPECT_EQ(cdata<int8_t>(i8)[3], -7);

  // hardtanh of an integer tensor with bounds past its range.
  Tensor x = Tensor::empty(DType::Int32, {2});
  mdata<int32_t>(x)[0] = -3;
  mdata<int32_t>(x)[1] = 9;
  Tensor y = Tensor::empty(DType::Int32, {2});
  UnaryParams hp;
  hp.min_val = -1e30;
  hp.max_val = 1e30;
  ASSERT_TRUE(unary_out(UnaryOp::Hardtanh, x, y, hp).ok());
  EXPECT_EQ(cdata<int32_t>(y)[0], -3);
  EXPECT_EQ(cdata<int32_t>(y)[1], 9);

  // cosine_similarity along an empty dim: 0, without offsetting a null pointer.
  Tensor e = Tensor::empty(DType::Float32, {2, 0});
  Tensor cs = Tensor::empty(DType::Float32, {2});
  ASSERT_TRUE(cosine_similarity_out(e, e, 1, 1e-8, cs).ok());
  EXPECT_EQ(cdata<float>(cs)[0], 0.0f);

  // Integer cumsum, diff and mm wrap as PyTorch's do.
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* v = b.user_input("v", {2}, DType::Int64);
  Value* w = b.user_input("w", {2}, DType::Int64);
  Value* m = b.user_input("m", {1, 1}, DType::Int64);
  b.user_output(b.call("aten.cumsum.default", {{"self", v}, {"dim", int64_t{0}}}, {2}, DType::Int64));
  b.user_output(b.call("aten.diff.default", {{"self", w}}, {1}, DType::Int64));
  b.user_output(b.call("aten.mm.default", {{"self", m}, {"mat2", m}}, {1, 1}, DType::Int64));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor vin = Tensor::empty(DType::Int64, {2});
  mdata<int64_t>(vin)[0] = std::numeric_limits<int64_t>::max();
  mdata<int64_t>(vin)[1] = 1;
  Tensor win = Tensor::empty(DType::Int64, {2});
  mdata<int64_t>(win)[0] = std::numeric_limits<int64_t>::max();
  mdata<int64_t>(win)[1] = -2;
  Tensor min = Tensor::empty(DType::Int64, {1, 1});
  mdata<int64_t>(min)[0] = int64_t{1} << 62;
  auto r = (*ex)->run(std::vector<Tensor>{vin, win, min});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(cdata<int64_t>((*r)[0])[1], std::numeric_limits<int64_t>::min());  // INT64_MAX + 1
  EXPECT_EQ(cdata<int64_t>((*r)[1])[0], std::numeric_limits<int64_t>::max());  // -2 - INT64_MAX
  EXPECT_EQ(cdata<int64_t>((*r)[2])[0], 0);                                      // 2^124 mod 2^64
}

// fuzz_runtime found an int64 sum overflowing (undefined in C++). Integer
// sums, products, einsum contractions, outer and cross products wrap as
// PyTorch's do; hand-checked: INT64_MAX + 1 = INT64_MIN, 2^62 * 4 = 2^64 = 0.
TEST(KernelChecks, IntegerReductionsAndProductsWrap_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* v = b.user_input("v", {2}, DType::Int64);  // [INT64_MAX, 1]
  Value* p = b.user_input("p", {3}, DType::Int64);  // [2^62, 2^62, 2^62]
  Value* q = b.user_input("q", {3}, DType::Int64);  // [4, 4, 4]
  b.user_output(b.call("aten.sum.default", {{"self", v}}, {}, DType::Int64));
  b.user_output(b.call("aten.prod.default", {{"self", p}}, {}, DType::Int64));
  b.user_output(b.call("aten.einsum.default", {{"equation", std::string("i->")}, {"tensors", Argument(TensorList{{v}})}},
                       {}, DType::Int64));
  b.user_output(b.call("aten.outer.default", {{"self", p}, {"vec2", q}}, {3, 3}, DType::Int64));
  b.user_output(b.call("aten.linalg_cross.default", {{"self", p}, {"other", q}}, {3}, DType::Int64));
  Value* w = b.user_input("w", {1}, DType::Int64);  // [INT64_MAX]
  Value* neg = b.call("aten.neg.default", {{"self", q}}, {3}, DType::Int64);  // [-4, -4, -4]
  b.user_output(b.call("aten.prelu.default", {{"self", neg}, {"weight", w}}, {3}, DType::Int64, "prelu_wraps"));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto filled = [](std::vector<int64_t> xs) {
    Tensor t = Tensor::empty(DType::Int64, {static_cast<int64_t>(xs.size())});
    std::copy(xs.begin(), xs.end(), mdata<int64_t>(t));
    return t;
  };
  const int64_t big = int64_t{1} << 62;
  auto r = (*ex)->run(std::vector<Tensor>{filled({std::numeric_limits<int64_t>::max(), 1}), filled({big, big, big}),
                                          filled({4, 4, 4}), filled({std::numeric_limits<int64_t>::max()})});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(cdata<int64_t>((*r)[0])[0], std::numeric_limits<int64_t>::min());  // sum
  EXPECT_EQ(cdata<int64_t>((*r)[1])[0], 0);                                      // prod: 2^186 mod 2^64
  EXPECT_EQ(cdata<int64_t>((*r)[2])[0], std::numeric_limits<int64_t>::min());  // einsum sum
  EXPECT_EQ(cdata<int64_t>((*r)[3])[4], 0);                                      // 2^62 * 4
  EXPECT_EQ(cdata<int64_t>((*r)[4])[1], 0);                                      // 2^64 - 2^64
  // prelu (found by fuzz_runtime): -4 * INT64_MAX = 4 - 2^65, which is 4 mod 2^64.
  EXPECT_EQ(cdata<int64_t>((*r)[5])[0], 4);
}

// More of fuzz_runtime's: repeat counts whose total overflows int64 and a
// num_layers of 2^61 are errors; strides of an empty tensor whose other dims
// multiply past int64 saturate; softmax over an empty dim touches nothing.
TEST(KernelChecks, OverflowingCountsAreErrors_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2});
  b.user_output(b.call("aten.repeat_interleave.self_int",
                       {{"self", x}, {"repeats", int64_t{1} << 62}, {"dim", int64_t{0}}}, {4}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto r = (*ex)->run(std::vector<Tensor>{Tensor::empty(DType::Float32, {2})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("the repeats' total overflows int64"), std::string::npos) << r.error().message();

  {  // repeat: 3 * 7010977282404795301 overflows (fuzz_runtime)
    ExportedProgram ep2;
    GraphBuilder b2(ep2);
    Value* y = b2.user_input("y", {3});
    b2.user_output(b2.call("aten.repeat.default", {{"self", y}, {"repeats", IntList{{int64_t{7010977282404795301}}}}}, {3}));
    auto ex2 = Executor::create(ep2);
    ASSERT_TRUE(ex2.ok()) << ex2.error().message();
    auto r2 = (*ex2)->run(std::vector<Tensor>{Tensor::empty(DType::Float32, {3})});
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.error().message().find("dim 0: size 3 repeated 7010977282404795301 times overflows int64"), std::string::npos)
        << r2.error().message();
  }

  const auto strides = Tensor::contiguous_strides({0, int64_t{1} << 50, 65535, 65535});
  EXPECT_EQ(strides[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(strides[3], 1);

  RnnOptions rnn;
  rnn.num_layers = int64_t{1} << 61;
  auto shapes = rnn_shapes(rnn, Tensor::empty(DType::Float32, {2, 3}), {}, {});
  ASSERT_FALSE(shapes.ok());
  EXPECT_EQ(shapes.error().message(), "lstm: num_layers 2305843009213693952 is past 2^20");

  Tensor e = Tensor::empty(DType::Float32, {3, 0, 2});
  Tensor out = Tensor::empty(DType::Float32, {3, 0, 2});
  EXPECT_TRUE(softmax_out(e, 1, false, out).ok());

  // split_with_sizes whose sizes sum past int64 (fuzz_runtime): they do not
  // sum to the dim, whatever the overflow would have made of them.
  const int64_t near_max = std::numeric_limits<int64_t>::max() - 1;
  auto parts = split_with_sizes_view(Tensor::empty(DType::Float32, {2}), {near_max, near_max}, 0);
  ASSERT_FALSE(parts.ok());
  EXPECT_NE(parts.error().message().find("do not sum to dim size 2"), std::string::npos) << parts.error().message();

  // one_hot inferring its classes from a class value of INT64_MAX
  // (fuzz_runtime): INT64_MAX + 1 classes do not exist; the value is out of range.
  ExportedProgram ep3;
  GraphBuilder b3(ep3);
  Value* cls = b3.user_input("cls", {1}, DType::Int64);
  b3.user_output(b3.call("aten.one_hot.default", {{"self", cls}}, {1, 1}, DType::Int64));
  auto ex3 = Executor::create(ep3);
  ASSERT_TRUE(ex3.ok()) << ex3.error().message();
  Tensor c = Tensor::empty(DType::Int64, {1});
  mdata<int64_t>(c)[0] = std::numeric_limits<int64_t>::max();
  auto r3 = (*ex3)->run(std::vector<Tensor>{c});
  ASSERT_FALSE(r3.ok());
  EXPECT_NE(r3.error().message().find("class value 9223372036854775807 is out of range"), std::string::npos)
      << r3.error().message();
}

TEST(TensorAllocation, AbsurdSizesAreErrorsNotCrashes) {
  auto overflow = Tensor::try_empty(DType::Float32, {int64_t{1} << 40, int64_t{1} << 30});
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message(), "[1099511627776, 1073741824] float32 has more than 2^64 bytes");
  auto too_big = Tensor::try_empty(DType::Float32, {int64_t{1} << 40, 3});
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error().message().find("needs 13194139533312 bytes, more than the limit"), std::string::npos)
      << too_big.error().message();
  EXPECT_TRUE(Tensor::try_empty(DType::Float32, {2, 3}).ok());
}

// A float scalar from a file may be anything: mul(x, -1e308) cast it to
// int64 when it was read (undefined behaviour; found by
// fuzz_program_structure, fuzz/corpus/program_structure/regression_float_scalar_1e308.json).
// Past int64 it saturates, NaN is 0; narrower integer types wrap from int64
// as x86 PyTorch's do.
TEST(ScalarConversion, OutOfRangeFloatsAreDefined_NEG) {
  EXPECT_EQ(Scalar::from_double(-1e308).to_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Scalar::from_double(1e308).to_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Scalar::from_double(std::numeric_limits<double>::quiet_NaN()).to_int(), 0);
  EXPECT_EQ(Scalar::from_double(-2.5).to_int(), -2);
  EXPECT_EQ(Scalar::from_double(1e308).to<int64_t>(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Scalar::from_double(-1.0).to<uint8_t>(), 255);
  EXPECT_EQ(Scalar::from_double(300.0).to<int8_t>(), 44);
  EXPECT_EQ(Scalar::from_double(-1e308).to<double>(), -1e308);

  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2}, DType::Int64);
  b.user_output(b.call("aten.mul.Tensor", {{"self", x}, {"other", Argument(-1e308)}}, {2}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor in = Tensor::empty(DType::Int64, {2});
  auto r = (*ex)->run(std::vector<Tensor>{in});
  ASSERT_TRUE(r.ok()) << r.error().message();  // int64 * float scalar is float32, as in PyTorch
}

// The process-wide limit the fuzzers run under (fuzz/fuzz_runtime.cpp): a
// 4 KiB tensor is refused under a 1 KiB limit, and 0 restores the default.
TEST(TensorAllocation, ProcessWideLimit) {
  const uint64_t physical = Tensor::max_tensor_bytes();
  Tensor::set_max_tensor_bytes(1024);
  EXPECT_EQ(Tensor::max_tensor_bytes(), 1024u);
  auto refused = Tensor::try_empty(DType::Float32, {1024});
  EXPECT_TRUE(Tensor::try_empty(DType::Float32, {256}).ok());
  Tensor::set_max_tensor_bytes(0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "[1024] float32 needs 4096 bytes, more than the limit of 1024");
  EXPECT_EQ(Tensor::max_tensor_bytes(), physical);
}

// torch.promote_types and torch.result_type, as documented by PyTorch
// ("Type promotion" in the tensor attributes docs).
TEST(TypePromotion, FollowsPyTorch) {
  EXPECT_EQ(promote_types(DType::Int64, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int8), DType::Int16);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int32), DType::Int32);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Int32, DType::Float64), DType::Float64);
  auto rt = [](std::vector<Tensor> ts, std::vector<Scalar> ss) {
    ResultType r;
    for (const auto& t : ts) r.add(t);
    for (const auto& s : ss) r.add(s);
    return r.get();
  };
  // torch.tensor([1, 2], dtype=torch.int) + 1.0 -> float32
  EXPECT_EQ(rt({Tensor::empty(DType::Int32, {2})}, {Scalar::from_double(1.0)}), DType::Float32);
  // uint8 tensor + 0-d int64 tensor -> uint8 (dimensioned tensors win within a category)
  EXPECT_EQ(rt({Tensor::empty(DType::UInt8, {2}), Tensor::empty(DType::Int64, {})}, {}), DType::UInt8);
  // int32 tensor + 0-d float64 tensor -> float32? no: the default dtype only applies to
  // Python scalars; a 0-d float64 tensor promotes int32 to float64.
  EXPECT_EQ(rt({Tensor::empty(DType::Int32, {2}), Tensor::empty(DType::Float64, {})}, {}), DType::Float64);
  // float16 tensor * 2.5 stays float16
  EXPECT_EQ(rt({Tensor::empty(DType::Float16, {2})}, {Scalar::from_double(2.5)}), DType::Float16);
  // bool tensor + True stays bool; + 1 becomes int64
  EXPECT_EQ(rt({Tensor::empty(DType::Bool, {2})}, {Scalar::from_bool(true)}), DType::Bool);
  EXPECT_EQ(rt({Tensor::empty(DType::Bool, {2})}, {Scalar::from_int(1)}), DType::Int64);
}

// IEEE binary16 and bfloat16 encodings, checked by hand.
TEST(SixteenBitFloats, RoundToNearestEven) {
  EXPECT_EQ(Half(1.0f).bits, 0x3C00);
  EXPECT_EQ(Half(-2.0f).bits, 0xC000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7BFF);  // largest finite
  EXPECT_EQ(Half(65520.0f).bits, 0x7C00);  // rounds up to infinity
  EXPECT_EQ(Half(5.9604645e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, 0x3C00);  // tie -> even mantissa
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, 0x3C02);  // tie -> even mantissa (up)
  EXPECT_EQ(static_cast<float>(Half(0.333251953125f)), 0.333251953125f);
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16(3.14159265f).bits, 0x4049);  // 3.140625
  EXPECT_EQ(static_cast<float>(BFloat16(3.14159265f)), 3.140625f);
}

TEST(StridedLoops, ContiguousDimsMergeIntoOneRow) {
  std::vector<int64_t> sizes{2, 3, 4};
  std::array<std::vector<int64_t>, 2> st{Tensor::contiguous_strides(sizes), Tensor::contiguous_strides(sizes)};
  int rows = 0;
  for_each_row<2>(sizes, st, [&](const std::array<int64_t, 2>&, int64_t n, const std::array<int64_t, 2>& s) {
    ++rows;
    EXPECT_EQ(n, 24);
    EXPECT_EQ(s[0], 1);
  });
  EXPECT_EQ(rows, 1);
  // A transposed operand keeps rows of its inner dim.
  st[1] = {1, 2};
  std::vector<int64_t> sz2{2, 3};
  st[0] = {3, 1};
  rows = 0;
  for_each_row<2>(sz2, st, [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
    EXPECT_EQ(n, 3);
    EXPECT_EQ(s[1], 2);
    EXPECT_EQ(off[1], rows);
    ++rows;
  });
  EXPECT_EQ(rows, 2);
}

// _NEG: sizes and bounds at the edge of int64 are errors or exact results,
// never wrapped (narrow's start + length, a slice's step, a view whose
// element count an int64 cannot hold); torch raises for the first two.
TEST(KernelChecks, Int64EdgeSizesAreErrorsNotWrappedShapes_NEG) {
  auto run = [](const char* op, std::vector<GraphBuilder::Arg> args, std::vector<int64_t> meta) {
    ExportedProgram ep;
    GraphBuilder b(ep);
    Value* x = b.user_input("x", {4, 8});
    args.insert(args.begin(), {"self", x});
    b.user_output(b.call(op, std::move(args), std::move(meta)));
    auto ex = Executor::create(ep);
    EXPECT_TRUE(ex.ok()) << ex.error().message();
    return (*ex)->run(std::vector<Tensor>{f32({4, 8})});
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto narrow = run("aten.narrow.default", {{"dim", Argument(int64_t{1})}, {"start", Argument(int64_t{1})},
                                             {"length", Argument(kMax)}}, {4, 7});
  ASSERT_FALSE(narrow.ok());
  EXPECT_NE(narrow.error().message().find("narrow: start 1 + length 9223372036854775807 exceeds dim size 8"),
            std::string::npos) << narrow.error().message();
  auto slice = run("aten.slice.Tensor", {{"dim", Argument(int64_t{1})}, {"start", Argument(int64_t{2})},
                                          {"end", Argument(kMax)}, {"step", Argument(kMax)}}, {4, 1});
  ASSERT_TRUE(slice.ok()) << slice.error().message();
  EXPECT_EQ((*slice)[0].sizes, (std::vector<int64_t>{4, 1}));  // x[:, 2::huge] is column 2 alone
  auto expand = run("aten.expand.default", {{"size", IntList{{int64_t{1} << 62, int64_t{1} << 62, 4, 8}}}},
                    {1, 1, 4, 8});
  ASSERT_FALSE(expand.ok());
  EXPECT_NE(expand.error().message().find("has more elements than an int64 counts"), std::string::npos)
      << expand.error().message();
}

// An index past the negative end is reported as written: x[tensor([-9])] on
// size 8 names -9 (it was reported as -1, the value after wrapping once).
TEST(KernelChecks, NegativeIndexOutOfRangeIsReportedAsGiven_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {8});
  Value* i = b.user_input("i", {1}, DType::Int64);
  b.user_output(b.call("aten.index.Tensor", {{"self", x}, {"indices", OptionalTensorList{{i}}}}, {1}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor idx = Tensor::empty(DType::Int64, {1});
  mdata<int64_t>(idx)[0] = -9;
  auto out = (*ex)->run(std::vector<Tensor>{f32({8}), idx});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("index: index -9 is out of bounds for size 8"), std::string::npos)
      << out.error().message();
  mdata<int64_t>(idx)[0] = -8;  // the last one that wraps: fine
  EXPECT_TRUE((*ex)->run(std::vector<Tensor>{f32({8}), idx}).ok());
}

// PyTorch's empty* return uninitialised memory, so there is no reference to
// compare with; Lathe's are zero-filled so runs stay deterministic.
TEST(Factories, EmptyIsDeterministicZeros) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.empty.memory_format", {{"size", IntList{{2, 2}}}}, {2, 2}));
  b.user_output(b.call("aten.empty_like.default", {{"self", x}}, {2, 3}));
  b.user_output(b.call("aten.new_empty.default", {{"self", x}, {"size", IntList{{3}}}}, {3}));
  b.user_output(b.call("aten.new_ones.default", {{"self", x}, {"size", IntList{{2}}}}, {2}));
  b.user_output(b.call("aten.empty_strided.default", {{"size", IntList{{2, 3}}}, {"stride", IntList{{1, 2}}}}, {2, 3}));
  b.user_output(b.call("aten.empty.default", {{"size", IntList{{1}}}}, {1}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor xin = f32({2, 3});
  std::fill(mdata<float>(xin), mdata<float>(xin) + 6, 9.0f);
  auto out = (*ex)->run(std::vector<Tensor>{xin});
  ASSERT_TRUE(out.ok()) << out.error().message();
  const std::vector<float> expect_fill = {0, 0, 0, 1, 0, 0};
  for (size_t i = 0; i < out->size(); ++i) {
    Tensor c = as_contiguous((*out)[i]);
    for (int64_t k = 0; k < c.numel(); ++k) EXPECT_EQ(cdata<float>(c)[k], expect_fill[i]) << "output " << i;
  }
  EXPECT_EQ((*out)[4].strides, (std::vector<int64_t>{1, 2}));  // the requested (permuted) layout
}

// Training-mode dropout runs on Lathe's generator: every element is dropped
// (0) or kept and scaled by 1 / (1 - p) (hand-checked: 1 -> 2 at p = 0.5).
TEST(Dropout, TrainingModeDropsOrScalesEachElement) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4096});
  b.user_output(b.call("aten.dropout.default", {{"input", x}, {"p", Argument(0.5)}, {"train", Argument(true)}}, {4096}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor ones = f32({4096});
  std::fill(mdata<float>(ones), mdata<float>(ones) + 4096, 1.0f);
  auto out = (*ex)->run(std::vector<Tensor>{ones});
  ASSERT_TRUE(out.ok()) << out.error().message();
  int64_t kept = 0;
  for (int64_t k = 0; k < 4096; ++k) {
    const float v = cdata<float>((*out)[0])[k];
    ASSERT_TRUE(v == 0.0f || v == 2.0f) << v;
    kept += v != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / 4096, 0.5, 0.05);  // ~10 standard errors
}

// fuzz_runtime: cat of empty tensors along dim 0 copies into views of the
// empty output at a non-zero offset; an empty storage's data is null, and
// offsetting null is undefined (UBSan, in make sanitize, fails this).
TEST(EmptyTensors, CatOfEmptyPartsAtAnOffsetIsEmpty) {
  Tensor a = Tensor::empty(DType::BFloat16, {2, 0}), b = Tensor::empty(DType::BFloat16, {3, 0});
  Tensor out = Tensor::empty(DType::BFloat16, {5, 0});
  ASSERT_TRUE(cat_out({&a, &b}, 0, out).ok());
  EXPECT_EQ(out.sizes, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(out.numel(), 0);
}

}  // namespace
}  // namespace lathe::kernels
