#include "lathe/runtime/kernels/gemm.h"

#include <algorithm>
#include <vector>

#include "lathe/runtime/kernels/gemm_blocked.h"
#include "lathe/runtime/kernels/simd.h"
#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

namespace {

using simd::load8;
using simd::store8;
using simd::v8;

// Rows [m0, m1) of C = A @ B with A rows contiguous (lda) and B rows
// contiguous (ldb): 4x16 register blocks of C, each a sum over all of K.
LATHE_SIMD_CLONES
void nn_rows(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t K, const float* A, int64_t lda, const float* B,
             int64_t ldb, float* C, int64_t ldc) {
  int64_t i = m0;
  for (; i + 4 <= m1; i += 4) {
    const float* a0 = A + i * lda;
    const float* a1 = a0 + lda;
    const float* a2 = a1 + lda;
    const float* a3 = a2 + lda;
    int64_t j = n0;
    for (; j + 16 <= n1; j += 16) {
      v8 c00 = {}, c01 = {}, c10 = {}, c11 = {}, c20 = {}, c21 = {}, c30 = {}, c31 = {};
      for (int64_t k = 0; k < K; ++k) {
        const v8 b0 = load8(B + k * ldb + j), b1 = load8(B + k * ldb + j + 8);
        const v8 x0 = v8{} + a0[k], x1 = v8{} + a1[k], x2 = v8{} + a2[k], x3 = v8{} + a3[k];
        c00 += x0 * b0; c01 += x0 * b1;
        c10 += x1 * b0; c11 += x1 * b1;
        c20 += x2 * b0; c21 += x2 * b1;
        c30 += x3 * b0; c31 += x3 * b1;
      }
      store8(C + i * ldc + j, c00); store8(C + i * ldc + j + 8, c01);
      store8(C + (i + 1) * ldc + j, c10); store8(C + (i + 1) * ldc + j + 8, c11);
      store8(C + (i + 2) * ldc + j, c20); store8(C + (i + 2) * ldc + j + 8, c21);
      store8(C + (i + 3) * ldc + j, c30); store8(C + (i + 3) * ldc + j + 8, c31);
    }
    for (int r = 0; r < 4; ++r) {
      for (int64_t jj = j; jj < n1; ++jj) {
        float s = 0;
        for (int64_t k = 0; k < K; ++k) s += A[(i + r) * lda + k] * B[k * ldb + jj];
        C[(i + r) * ldc + jj] = s;
      }
    }
  }
  for (; i < m1; ++i) {
    const float* a = A + i * lda;
    int64_t j = n0;
    for (; j + 16 <= n1; j += 16) {
      v8 c0 = {}, c1 = {};
      for (int64_t k = 0; k < K; ++k) {
        const v8 x = v8{} + a[k];
        c0 += x * load8(B + k * ldb + j);
        c1 += x * load8(B + k * ldb + j + 8);
      }
      store8(C + i * ldc + j, c0);
      store8(C + i * ldc + j + 8, c1);
    }
    for (; j < n1; ++j) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += a[k] * B[k * ldb + j];
      C[i * ldc + j] = s;
    }
  }
}

// C[i, j] = dot(A row i, W row j) for B = W^T with W rows contiguous (ldw).
LATHE_SIMD_CLONES
void nt_rows(int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t K, const float* A, int64_t lda, const float* W,
             int64_t ldw, float* C, int64_t ldc) {
  for (int64_t i = m0; i < m1; ++i) {
    const float* a = A + i * lda;
    int64_t j = n0;
    for (; j + 4 <= n1; j += 4) {
      const float* w0 = W + j * ldw;
      float t[4];
      simd::dot4(a, w0, w0 + ldw, w0 + 2 * ldw, w0 + 3 * ldw, 0, K, t);
      for (int r = 0; r < 4; ++r) C[i * ldc + j + r] = t[r];
    }
    for (; j < n1; ++j) C[i * ldc + j] = simd::dot1(a, W + j * ldw, 0, K);
  }
}

// Copies a strided matrix into contiguous rows.
std::vector<float> pack(const MatView& m, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const float* p = static_cast<const float*>(m.data);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = p[r * m.row_stride + c * m.col_stride];
  return out;
}

// C = A @ B through the row kernels above (K > 0).
void gemm_rows(int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc) {
  std::vector<float> a_packed, b_packed;
  const float* a = static_cast<const float*>(A.data);
  int64_t lda = A.row_stride;
  if (A.col_stride != 1 && K > 1) {
    a_packed = pack(A, M, K);
    a = a_packed.data();
    lda = K;
  }
  const float* b = static_cast<const float*>(B.data);
  const bool b_transposed = B.row_stride == 1 && B.col_stride != 1 && N > 1;
  int64_t ldb = b_transposed ? B.col_stride : B.row_stride;
  if (!b_transposed && B.col_stride != 1 && N > 1) {
    b_packed = pack(B, K, N);
    b = b_packed.data();
    ldb = N;
  }
  // Split the larger of M and N across threads, in blocks the kernels like.
  const int64_t flops = M * N * K;
  const int64_t threads = flops < 32768 ? 1 : num_threads();
  auto run = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    if (b_transposed) nt_rows(m0, m1, n0, n1, K, a, lda, b, ldb, C, ldc);
    else nn_rows(m0, m1, n0, n1, K, a, lda, b, ldb, C, ldc);
  };
  if (threads <= 1) {
    run(0, M, 0, N);
  } else if (M >= 8 * threads) {
    const int64_t blocks = (M + 3) / 4;
    parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) { run(b0 * 4, std::min(M, b1 * 4), 0, N); });
  } else {
    const int64_t blocks = (N + 15) / 16;
    parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) { run(0, M, b0 * 16, std::min(N, b1 * 16)); });
  }
}

}  // namespace

void gemm_f32(int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc, const float* bias) {
  if (M == 0 || N == 0) return;
  // Two rows or more: the blocked GEMM, which packs B a block at a time
  // and reads it once for all rows. One row is a matrix-vector product,
  // bound by reading B; the row kernels below stream B as it lies. So do
  // a few columns, where most of a 16- or 32-wide tile would be padding.
  if (K == 0 || (M >= 2 && N >= 8)) {
    GemmEpilogue e;
    e.bias = bias;
    gemm_blocked(N <= 16 ? gemm_tiles_narrow() : gemm_tiles(), M, N, K, A, B, C, ldc, e);  // K == 0: C = bias, or 0
    return;
  }
  gemm_rows(M, N, K, A, B, C, ldc);
  if (!bias) return;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] += bias[j];
}

}  // namespace lathe::kernels
