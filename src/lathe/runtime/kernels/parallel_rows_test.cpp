// parallel_for_each_row (kernels/util.h): elementwise kernels split their
// rows, or their one contiguous row, over the intra-op pool once a loop has
// kParallelElements or more. Each case is checked element by element
// against values worked out by hand, at 1, 2 and 3 threads, on shapes that
// take each path: one long row, many rows, broadcast and transposed
// operands, a row count that does not divide evenly.
#include <gtest/gtest.h>

#include <cmath>

#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/unary.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/parallel.h"

namespace lathe::kernels {
namespace {

struct RestoreThreads {
  int before = num_threads();
  ~RestoreThreads() { set_num_threads(before); }
};

// x[i] = i (as float) in a tensor of `sizes`.
Tensor iota(std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(DType::Float32, std::move(sizes));
  float* p = mdata<float>(t);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(i);
  return t;
}

const float* values(const Tensor& t) { return cdata<float>(t); }

constexpr int kThreadCounts[] = {1, 2, 3};

TEST(ParallelRows, OneLongContiguousRowIsSplit) {
  RestoreThreads restore;
  const int64_t n = 5 * kParallelElements + 7;  // uneven chunks
  const Tensor a = iota({n});
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor out = Tensor::empty(DType::Float32, {n});
    ASSERT_TRUE(binary_out(BinaryOp::Add, a, a, DType::Float32, out).ok());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(values(out)[i], 2.0f * static_cast<float>(i)) << i << ", " << threads;
  }
}

// a [R, C] + b [C] (broadcast over rows), R rows of C: out[r][c] = r*C + 2c.
TEST(ParallelRows, ManyBroadcastRowsAreSplit) {
  RestoreThreads restore;
  const int64_t rows = 1001, cols = 131;  // 131k elements, a prime row count
  const Tensor a = iota({rows, cols});
  const Tensor b = iota({cols});
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor out = Tensor::empty(DType::Float32, {rows, cols});
    ASSERT_TRUE(binary_out(BinaryOp::Add, a, b, DType::Float32, out).ok());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(values(out)[r * cols + c], static_cast<float>(r * cols + 2 * c)) << r << "," << c << ", " << threads;
  }
}

// A transposed source into a contiguous destination: the rows are strided
// (the odometer starts mid-tensor in every chunk but the first).
TEST(ParallelRows, ATransposedCopyLandsEveryElement) {
  RestoreThreads restore;
  const int64_t rows = 300, cols = 257;
  const Tensor a = iota({rows, cols});
  Tensor at = a;  // a^T as a view: [cols, rows]
  at.sizes = {cols, rows};
  at.strides = {1, cols};
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor out = Tensor::empty(DType::Float32, {cols, rows});
    ASSERT_TRUE(copy_into(at, out).ok());
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = 0; j < rows; ++j)
        ASSERT_EQ(values(out)[i * rows + j], static_cast<float>(j * cols + i)) << i << "," << j << ", " << threads;
  }
}

// where over [2, 3, R, C] with a condition broadcast from [R, 1]: odd rows
// take a, even rows take b; and relu in place over the result.
TEST(ParallelRows, WhereAndAnInPlaceUnaryOverBroadcastOperands) {
  RestoreThreads restore;
  const int64_t R = 97, C = 129;
  const Tensor a = iota({2, 3, R, C});
  Tensor b = Tensor::empty(DType::Float32, {1});
  mdata<float>(b)[0] = -1.0f;
  Tensor cond = Tensor::empty(DType::Bool, {R, 1});
  for (int64_t r = 0; r < R; ++r) mdata<bool>(cond)[r] = r % 2 == 1;
  for (int threads : kThreadCounts) {
    set_num_threads(threads);
    Tensor out = Tensor::empty(DType::Float32, {2, 3, R, C});
    ASSERT_TRUE(where_out(cond, a, b, out).ok());
    ASSERT_TRUE(unary_out(UnaryOp::Relu, out, out).ok());
    for (int64_t i = 0; i < out.numel(); ++i) {
      const int64_t r = (i / C) % R;
      ASSERT_EQ(values(out)[i], r % 2 == 1 ? static_cast<float>(i) : 0.0f) << i << ", " << threads;
    }
  }
}

}  // namespace
}  // namespace lathe::kernels
