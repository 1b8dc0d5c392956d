// Contractions and small composites torch.export leaves in its default
// (export IR) output: einsum, _trilinear, bilinear, outer, linalg_cross,
// cosine_similarity, pairwise_distance, cdist, rms_norm.
//
// einsum (and _trilinear and bilinear, which are einsums) labels every
// operand dim; a label repeated within one operand is its diagonal, size-1
// dims broadcast. Operands are contracted left to right: each pair is
// permuted into [batch, M, K] @ [batch, K, N] and multiplied with the GEMM
// of gemm.h; labels only one side has and nothing later needs are summed
// first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

// The equation's output shape for `operands` (checks the equation).
Result<std::vector<int64_t>> einsum_shape(const std::string& equation, const std::vector<const Tensor*>& operands);
Status einsum_out(const std::string& equation, const std::vector<const Tensor*>& operands, Tensor& out);

// _trilinear: i1, i2, i3 unsqueezed at their expand dims (to one rank),
// multiplied with broadcasting and summed over `sumdim` (removed).
struct TrilinearDims {
  std::vector<int64_t> expand1, expand2, expand3, sumdim;
};
Result<std::vector<int64_t>> trilinear_shape(const Tensor& i1, const Tensor& i2, const Tensor& i3, const TrilinearDims& d);
Status trilinear_out(const Tensor& i1, const Tensor& i2, const Tensor& i3, const TrilinearDims& d, Tensor& out);

// out[..., o] = sum_ij x1[..., i] w[o, i, j] x2[..., j] (+ bias).
Result<std::vector<int64_t>> bilinear_shape(const Tensor& x1, const Tensor& x2, const Tensor& weight);
Status bilinear_out(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor* bias, Tensor& out);

// out[i, j] = a[i] * b[j] (promoted dtype).
Status outer_out(const Tensor& a, const Tensor& b, Tensor& out);

// The cross product along `dim` (size 3), with broadcasting.
Result<std::vector<int64_t>> cross_shape(const Tensor& a, const Tensor& b, int64_t dim);
Status linalg_cross_out(const Tensor& a, const Tensor& b, int64_t dim, Tensor& out);

// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along `dim` (broadcast
// shapes; dim removed), torch 2.x's formula.
Result<std::vector<int64_t>> cosine_similarity_shape(const Tensor& x1, const Tensor& x2, int64_t dim);
Status cosine_similarity_out(const Tensor& x1, const Tensor& x2, int64_t dim, double eps, Tensor& out);

// ||x1 - x2 + eps||_p over the last dim of the broadcast shape.
Result<std::vector<int64_t>> pairwise_distance_shape(const Tensor& x1, const Tensor& x2, bool keepdim);
Status pairwise_distance_out(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim, Tensor& out);

// out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, batch dims
// broadcast. Computed directly for every p (ATen may use a GEMM form for
// p = 2, which is less accurate; both agree within float tolerance).
Result<std::vector<int64_t>> cdist_shape(const Tensor& x1, const Tensor& x2, double p);
Status cdist_out(const Tensor& x1, const Tensor& x2, double p, Tensor& out);

// x * rsqrt(mean(x^2) + eps) (* weight) over the trailing normalized_shape;
// eps nullopt is the dtype's machine epsilon.
Status rms_norm_out(const Tensor& input, const std::vector<int64_t>& normalized_shape, const Tensor* weight,
                    std::optional<double> eps, Tensor& out);

}  // namespace lathe::kernels
