// Matrix multiply core shared by matmul, linear, conv and attention.
//
//   C[M,N] = A[M,K] @ B[K,N]      (C contiguous rows of stride ldc)
//
// A and B take any strides. float32 with two rows or more (and 8 columns
// or more) runs the blocked GEMM (gemm_blocked.h: B packed per call,
// AVX-512/AVX2 tiles chosen at run time); one row (a matrix-vector
// product, bound by reading B) streams B as it lies, with vectorised paths for B with contiguous rows and for B
// with contiguous columns (a transposed weight, t(W) as torch.export
// writes nn.Linear). Other dtypes use a plain triple loop. Accumulation is
// in the element type, like BLAS.
#pragma once

#include <cstdint>

#include "lathe/core/int_arith.h"

namespace lathe::kernels {

struct MatView {
  const void* data;
  int64_t row_stride;  // elements
  int64_t col_stride;
};

// bias: N values added to every row of C (the blocked GEMM adds them as its
// tiles start, not in a second pass), or nullptr.
void gemm_f32(int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc, const float* bias = nullptr);

template <typename T>
void gemm_ref(int64_t M, int64_t N, int64_t K, MatView A, MatView B, T* C, int64_t ldc) {
  const T* a = static_cast<const T*>(A.data);
  const T* b = static_cast<const T*>(B.data);
  for (int64_t i = 0; i < M; ++i) {
    T* c = C + i * ldc;
    for (int64_t j = 0; j < N; ++j) c[j] = T(0);
    for (int64_t k = 0; k < K; ++k) {
      const T av = a[i * A.row_stride + k * A.col_stride];
      // Integer products and sums wrap, as PyTorch's do (int_arith.h).
      for (int64_t j = 0; j < N; ++j) c[j] = wrapping_add(c[j], wrapping_mul(av, b[k * B.row_stride + j * B.col_stride]));
    }
  }
}

}  // namespace lathe::kernels
