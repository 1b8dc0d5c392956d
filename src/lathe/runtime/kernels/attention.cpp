// scaled_dot_product_attention (math form) and its CPU flash-attention
// spelling, which returns the row logsumexp too:
//
//   scores = q @ k^T * scale  (+ mask: additive, or -inf where a bool mask is false)
//   out    = softmax(scores) @ v
#include <cmath>
#include <limits>

#include "lathe/runtime/kernels/attention.h"
#include "lathe/runtime/kernels/gemm.h"
#include "lathe/runtime/kernels/vector_math.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

Status sdpa(const SdpaArgs& a, Tensor& out, Tensor* logsumexp) {
  const Tensor& q0 = *a.q;
  const size_t r = q0.sizes.size();
  if (r < 2 || a.k->sizes.size() != r || a.v->sizes.size() != r) {
    return make_error("scaled_dot_product_attention: query, key and value need the same rank >= 2");
  }
  LATHE_RETURN_IF_ERROR(check_dtype(q0, DType::Float32, "scaled_dot_product_attention", "query"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(q0, *a.k, "scaled_dot_product_attention"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(q0, *a.v, "scaled_dot_product_attention"));
  if (a.dropout_p > 0) return make_error("scaled_dot_product_attention: dropout_p > 0 is not supported (random)");
  const std::vector<int64_t> batch(q0.sizes.begin(), q0.sizes.end() - 2);
  if (std::vector<int64_t>(a.k->sizes.begin(), a.k->sizes.end() - 2) != batch ||
      std::vector<int64_t>(a.v->sizes.begin(), a.v->sizes.end() - 2) != batch) {
    return make_error("scaled_dot_product_attention: query, key and value batch dims differ (grouped-query attention is not supported)");
  }
  const int64_t L = q0.sizes[r - 2], E = q0.sizes[r - 1], S = a.k->sizes[r - 2], Ev = a.v->sizes[r - 1];
  if (a.k->sizes[r - 1] != E || a.v->sizes[r - 2] != S) {
    return make_error("scaled_dot_product_attention: shapes " + shape_string(q0.sizes) + ", " + shape_string(a.k->sizes) +
                      ", " + shape_string(a.v->sizes) + " do not fit");
  }
  std::vector<int64_t> oshape = batch;
  oshape.push_back(L);
  oshape.push_back(Ev);
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, oshape, "scaled_dot_product_attention"));
  const Tensor q = as_contiguous(q0), k = as_contiguous(*a.k), v = as_contiguous(*a.v);
  const int64_t B = numel_of(batch);
  // The mask broadcast to [batch..., L, S], as additive float values.
  Tensor add_mask;
  if (a.mask) {
    std::vector<int64_t> mshape = batch;
    mshape.push_back(L);
    mshape.push_back(S);
    LATHE_ASSIGN_OR_RETURN(auto bs, broadcast_shapes(a.mask->sizes, mshape));
    if (bs != mshape) return make_error("scaled_dot_product_attention: mask " + shape_string(a.mask->sizes) + " does not broadcast to " + shape_string(mshape));
    add_mask = Tensor::empty(DType::Float32, mshape);
    if (a.mask->dtype == DType::Bool) {
      Tensor m = Tensor::empty(DType::Bool, mshape);
      LATHE_RETURN_IF_ERROR(copy_into(*a.mask, m));
      const bool* mp = cdata<bool>(m);
      float* ap = mdata<float>(add_mask);
      for (int64_t i = 0; i < m.numel(); ++i) ap[i] = mp[i] ? 0.0f : -std::numeric_limits<float>::infinity();
    } else {
      LATHE_RETURN_IF_ERROR(copy_into(*a.mask, add_mask));
    }
  }
  const float scale = static_cast<float>(a.scale.value_or(1.0 / std::sqrt(static_cast<double>(E))));
  std::vector<float> scores(static_cast<size_t>(L * S));
  float* o = mdata<float>(out);
  for (int64_t b = 0; b < B; ++b) {
    const float* qb = cdata<float>(q) + b * L * E;
    const float* kb = cdata<float>(k) + b * S * E;
    const float* vb = cdata<float>(v) + b * S * Ev;
    gemm_f32(L, S, E, MatView{qb, E, 1}, MatView{kb, 1, E}, scores.data(), S);
    for (int64_t i = 0; i < L; ++i) {
      float* row = scores.data() + i * S;
      const float* mrow = a.mask ? cdata<float>(add_mask) + (b * L + i) * S : nullptr;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        float s = row[j] * scale;
        if (mrow) s += mrow[j];
        if (a.causal && j > i) s = -std::numeric_limits<float>::infinity();
        row[j] = s;
        mx = std::max(mx, s);
      }
      for (int64_t j = 0; j < S; ++j) row[j] -= mx;
      exp_f32(row, row, S);
      double sum = 0;
      for (int64_t j = 0; j < S; ++j) sum += row[j];
      const float inv = 1.0f / static_cast<float>(sum);
      for (int64_t j = 0; j < S; ++j) row[j] *= inv;
      if (logsumexp) mdata<float>(*logsumexp)[b * L + i] = mx + static_cast<float>(std::log(sum));
    }
    gemm_f32(L, Ev, S, MatView{scores.data(), S, 1}, MatView{vb, Ev, 1}, o + b * L * Ev, Ev);
  }
  return Status::Ok();
}

namespace {

Result<SdpaArgs> sdpa_args(KernelCall& c) {
  SdpaArgs a{};
  LATHE_ASSIGN_OR_RETURN(a.q, c.tensor("query"));
  LATHE_ASSIGN_OR_RETURN(a.k, c.tensor("key"));
  LATHE_ASSIGN_OR_RETURN(a.v, c.tensor("value"));
  LATHE_ASSIGN_OR_RETURN(a.mask, c.optional_tensor("attn_mask"));
  LATHE_ASSIGN_OR_RETURN(a.dropout_p, c.double_arg("dropout_p", 0.0));
  LATHE_ASSIGN_OR_RETURN(a.causal, c.bool_arg("is_causal", false));
  LATHE_ASSIGN_OR_RETURN(a.scale, c.optional_double("scale"));
  LATHE_ASSIGN_OR_RETURN(bool gqa, c.bool_arg("enable_gqa", false));
  if (gqa) return make_error("scaled_dot_product_attention: enable_gqa is not supported");
  if (a.q->sizes.size() < 2 || a.v->sizes.size() < 2) return make_error("scaled_dot_product_attention: operands need rank >= 2");
  return a;
}

std::vector<int64_t> out_shape(const SdpaArgs& a) {
  std::vector<int64_t> s(a.q->sizes.begin(), a.q->sizes.end() - 1);
  s.push_back(a.v->sizes.back());
  return s;
}

Status sdpa_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(SdpaArgs a, sdpa_args(c));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a.q->dtype, out_shape(a)));
  return sdpa(a, *out, nullptr);
}

Status flash_cpu_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(SdpaArgs a, sdpa_args(c));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a.q->dtype, out_shape(a)));
  std::vector<int64_t> lse_shape(a.q->sizes.begin(), a.q->sizes.end() - 1);
  LATHE_ASSIGN_OR_RETURN(Tensor * lse, c.alloc_output(1, DType::Float32, lse_shape));
  return sdpa(a, *out, lse);
}

}  // namespace

void register_attention_kernels(KernelRegistry& r) {
  register_overloads(r, "scaled_dot_product_attention", {"default"}, sdpa_kernel);
  register_overloads(r, "_scaled_dot_product_flash_attention_for_cpu", {"default"}, flash_cpu_kernel);
}

}  // namespace lathe::kernels
