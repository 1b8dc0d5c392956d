// Matrix products: mm, addmm, bmm, baddbmm, matmul (any ranks, batch
// broadcasting), linear.
#pragma once

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

Status mm_out(const Tensor& a, const Tensor& b, Tensor& out);
// out = beta * self + alpha * (a @ b); self broadcasts to [M, N].
Status addmm_out(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha, Tensor& out);
Status bmm_out(const Tensor& a, const Tensor& b, Tensor& out);
Status baddbmm_out(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha, Tensor& out);
// torch.matmul's result shape (1-D operands are promoted and the added dim
// removed again; batch dims broadcast).
Result<std::vector<int64_t>> matmul_shape(const Tensor& a, const Tensor& b);
Status matmul_out(const Tensor& a, const Tensor& b, Tensor& out);
// out[..., N] = input[..., K] @ weight[N, K]^T (+ bias[N]).
Status linear_out(const Tensor& input, const Tensor& weight, const Tensor* bias, Tensor& out);

}  // namespace lathe::kernels
