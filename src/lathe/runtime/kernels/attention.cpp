// scaled_dot_product_attention (math form) and its CPU flash-attention
// spelling, which returns the row logsumexp too:
//
//   scores = q @ k^T * scale  (+ mask: additive, or -inf where a bool mask is false)
//   out    = softmax(scores) @ v
//
// A few query rows (a decode step) read K and V in place instead
// (attention_few_queries.h). Otherwise, per (batch, head) matrix: K^T and
// V are packed once for the GEMM tiles
// (gemm_blocked.h), then query rows go through in blocks whose scores fit
// in L1 (kScoreBlock): scores = Q K^T, the row pass turns them into
// softmax numerators (attention_rows.h: scale, mask, max, exp, sum in two
// vectorised sweeps), out = numerators @ V, each output row divided by its
// sum. So the score matrix never leaves L1 and no pass normalises it.
// q, k and v are read in place, whatever their strides.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "lathe/runtime/kernels/attention.h"
#include "lathe/runtime/kernels/attention_few_queries.h"
#include "lathe/runtime/kernels/attention_rows.h"
#include "lathe/runtime/kernels/gemm_blocked.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

namespace {

// Scores per block of query rows: 16 KiB, so a block stays in L1 beside
// the packed K^T and V panels it meets.
constexpr int64_t kScoreBlock = 4096;

// Element offset of each matrix (last two dims) of t from t.data(), batch
// dims flattened in order.
std::vector<int64_t> matrix_offsets(const Tensor& t) {
  std::vector<int64_t> offs{0};
  for (size_t d = 0; d + 2 < t.sizes.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(offs.size() * static_cast<size_t>(t.sizes[d]));
    for (int64_t o : offs)
      for (int64_t i = 0; i < t.sizes[d]; ++i) next.push_back(o + i * t.strides[d]);
    offs = std::move(next);
  }
  return offs;
}

// A rank-r operand's matrices: base pointer, batch offsets, row and column strides.
struct Operand {
  const float* base;
  std::vector<int64_t> offs;
  int64_t rs, cs;
  explicit Operand(const Tensor& t)
      : base(cdata<float>(t)), offs(matrix_offsets(t)), rs(t.strides[t.sizes.size() - 2]), cs(t.strides.back()) {}
  const float* at(int64_t b) const { return base + offs[static_cast<size_t>(b)]; }
};

struct Problem {
  int64_t L, S, E, Ev;
  float scale;
  bool causal;
  Operand q, k, v;
  const Operand* mask;  // additive, [B, L, S] as strided matrices with contiguous rows; or nullptr
  float* out;         // [B, L, Ev]
  float* lse;         // [B, L], or nullptr
  int64_t q_heads = 1, group = 1;  // grouped-query attention: query heads per key/value head
  // The key/value matrix query matrix b reads.
  int64_t kv(int64_t b) const { return group == 1 ? b : (b / q_heads) * (q_heads / group) + (b % q_heads) / group; }
};

// Query rows [i0, i0 + m) of matrix b, given K^T and V packed.
void attend_rows(const Problem& p, int64_t b, int64_t i0, int64_t m, const PackedB& kt, const PackedB& vp, float* scores,
                 float* inv_sums) {
  const SoftmaxRows& rows = softmax_rows();
  gemm_packed(m, MatView{p.q.at(b) + i0 * p.q.rs, p.q.rs, p.q.cs}, kt, scores, p.S);
  for (int64_t i = 0; i < m; ++i) {
    float* row = scores + i * p.S;
    const int64_t n = p.causal ? std::min(p.S, i0 + i + 1) : p.S;  // causal: key j <= query i
    float mx = 0;
    float sum = rows.numerators(row, n, p.scale, p.mask ? p.mask->at(b) + (i0 + i) * p.mask->rs : nullptr, &mx);
    std::fill(row + n, row + p.S, 0.0f);
    if (sum == 0) sum = 1;  // a masked-out row: numerators 0, output 0
    inv_sums[i] = 1.0f / sum;
    if (p.lse) p.lse[b * p.L + i0 + i] = mx + std::log(sum);
  }
  float* o = p.out + (b * p.L + i0) * p.Ev;
  gemm_packed(m, MatView{scores, p.S, 1}, vp, o, p.Ev);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < p.Ev; ++j) o[i * p.Ev + j] *= inv_sums[i];
}

// Query row i of matrix b with K and V read in place (attention_few_queries.h).
void attend_row_in_place(const Problem& p, int64_t b, int64_t i, float* q_row, float* scores) {
  const SoftmaxRows& rows = softmax_rows();
  const float* q = p.q.at(b) + i * p.q.rs;
  for (int64_t e = 0; e < p.E; ++e) q_row[e] = q[e * p.q.cs];
  const int64_t n = p.causal ? std::min(p.S, i + 1) : p.S;  // causal: key j <= query i
  query_key_scores(q_row, p.k.at(p.kv(b)), p.k.rs, n, p.E, scores);
  float mx = 0;
  float sum = rows.numerators(scores, n, p.scale, p.mask ? p.mask->at(b) + i * p.mask->rs : nullptr, &mx);
  if (sum == 0) sum = 1;  // a masked-out row: numerators 0, output 0
  if (p.lse) p.lse[b * p.L + i] = mx + std::log(sum);
  float* o = p.out + (b * p.L + i) * p.Ev;
  weighted_value_rows(scores, p.v.at(p.kv(b)), p.v.rs, n, p.Ev, o);
  const float inv = 1.0f / sum;
  for (int64_t e = 0; e < p.Ev; ++e) o[e] *= inv;
}

// Matrices [b0, b1).
void attend(const Problem& p, int64_t b0, int64_t b1) {
  if (p.L < kFewQueryRows && p.k.cs == 1 && p.v.cs == 1) {
    std::vector<float> q_row(static_cast<size_t>(p.E)), scores(static_cast<size_t>(p.S));
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t i = 0; i < p.L; ++i) attend_row_in_place(p, b, i, q_row.data(), scores.data());
    return;
  }
  const TileSet& tiles = gemm_tiles();
  int64_t block = std::clamp<int64_t>(kScoreBlock / std::max<int64_t>(p.S, 1), 1, std::max<int64_t>(p.L, 1));
  if (block > tiles.mr) block -= block % tiles.mr;
  std::vector<float> scores(static_cast<size_t>(block * p.S)), inv_sums(static_cast<size_t>(block));
  for (int64_t b = b0; b < b1; ++b) {
    const PackedB kt = PackedB::pack(tiles, p.E, p.S, MatView{p.k.at(p.kv(b)), p.k.cs, p.k.rs});  // K^T: [E, S]
    const PackedB vp =
        PackedB::pack(p.Ev <= 16 ? gemm_tiles_narrow() : tiles, p.S, p.Ev, MatView{p.v.at(p.kv(b)), p.v.rs, p.v.cs});
    for (int64_t i0 = 0; i0 < p.L; i0 += block) {
      attend_rows(p, b, i0, std::min(block, p.L - i0), kt, vp, scores.data(), inv_sums.data());
    }
  }
}

Status check_shapes(const SdpaArgs& a) {
  const Tensor& q = *a.q;
  const size_t r = q.sizes.size();
  if (r < 2 || a.k->sizes.size() != r || a.v->sizes.size() != r) {
    return make_error("scaled_dot_product_attention: query, key and value need the same rank >= 2");
  }
  LATHE_RETURN_IF_ERROR(check_dtype(q, DType::Float32, "scaled_dot_product_attention", "query"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(q, *a.k, "scaled_dot_product_attention"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(q, *a.v, "scaled_dot_product_attention"));
  if (a.dropout_p > 0) return make_error("scaled_dot_product_attention: dropout_p > 0 is not supported (random)");
  std::vector<int64_t> batch(q.sizes.begin(), q.sizes.end() - 2);
  if (a.enable_gqa) {
    // Key and value heads (dim -3) divide the query's; the rest match.
    if (r < 3) return make_error("scaled_dot_product_attention: enable_gqa needs a heads dim (rank >= 3)");
    const int64_t kv_heads = a.k->sizes[r - 3];
    if (kv_heads <= 0 || a.v->sizes[r - 3] != kv_heads || q.sizes[r - 3] % kv_heads != 0) {
      return make_error("scaled_dot_product_attention: enable_gqa with " + std::to_string(q.sizes[r - 3]) +
                        " query heads needs key and value with the same number of heads dividing it; got " +
                        std::to_string(kv_heads) + " and " + std::to_string(a.v->sizes[r - 3]));
    }
    batch[r - 3] = kv_heads;
  }
  if (std::vector<int64_t>(a.k->sizes.begin(), a.k->sizes.end() - 2) != batch ||
      std::vector<int64_t>(a.v->sizes.begin(), a.v->sizes.end() - 2) != batch) {
    return make_error("scaled_dot_product_attention: query, key and value batch dims differ" +
                      std::string(a.enable_gqa ? "" : " (heads that differ need enable_gqa)"));
  }
  if (a.k->sizes[r - 1] != q.sizes[r - 1] || a.v->sizes[r - 2] != a.k->sizes[r - 2]) {
    return make_error("scaled_dot_product_attention: shapes " + shape_string(q.sizes) + ", " + shape_string(a.k->sizes) +
                      ", " + shape_string(a.v->sizes) + " do not fit");
  }
  return Status::Ok();
}

// The mask broadcast to `shape` ([batch..., L, S]), as additive float values.
// A float32 mask whose rows are contiguous is viewed in place, broadcast
// dims with stride 0: a [1, 1, L, S] mask shared by every head (what
// sdpa_additive_mask makes of a transformers mask) is not copied once per
// head on every call. A bool mask is turned into 0 / -inf at its own size
// first, then viewed the same way. Any other mask is materialised.
Result<Tensor> additive_mask(const Tensor& mask, const std::vector<int64_t>& shape) {
  LATHE_ASSIGN_OR_RETURN(auto bs, broadcast_shapes(mask.sizes, shape));
  if (bs != shape) {
    return make_error("scaled_dot_product_attention: mask " + shape_string(mask.sizes) + " does not broadcast to " + shape_string(shape));
  }
  if (mask.dtype == DType::Bool) {
    Tensor m = Tensor::empty(DType::Bool, mask.sizes);
    LATHE_RETURN_IF_ERROR(copy_into(mask, m));
    Tensor add = Tensor::empty(DType::Float32, mask.sizes);
    const bool* mp = cdata<bool>(m);
    float* ap = mdata<float>(add);
    const int64_t n = m.numel();
    for (int64_t i = 0; i < n; ++i) ap[i] = mp[i] ? 0.0f : -std::numeric_limits<float>::infinity();
    return additive_mask(add, shape);
  }
  if (mask.dtype == DType::Float32) {
    std::vector<int64_t> strides = broadcast_strides(mask, shape);
    if (strides.back() == 1) return make_view(mask, shape, std::move(strides), mask.storage_offset);
  }
  Tensor add = Tensor::empty(DType::Float32, shape);
  LATHE_RETURN_IF_ERROR(copy_into(mask, add));
  return add;
}

}  // namespace

Status sdpa(const SdpaArgs& a, Tensor& out, Tensor* logsumexp) {
  LATHE_RETURN_IF_ERROR(check_shapes(a));
  const size_t r = a.q->sizes.size();
  const std::vector<int64_t> batch(a.q->sizes.begin(), a.q->sizes.end() - 2);
  const int64_t L = a.q->sizes[r - 2], E = a.q->sizes[r - 1], S = a.k->sizes[r - 2], Ev = a.v->sizes[r - 1];
  std::vector<int64_t> oshape = batch;
  oshape.push_back(L);
  oshape.push_back(Ev);
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, oshape, "scaled_dot_product_attention"));
  Tensor add_mask;
  std::optional<Operand> mask;
  if (a.mask) {
    std::vector<int64_t> mshape = batch;
    mshape.push_back(L);
    mshape.push_back(S);
    LATHE_ASSIGN_OR_RETURN(add_mask, additive_mask(*a.mask, mshape));
    mask.emplace(add_mask);
  }
  const float scale = static_cast<float>(a.scale.value_or(1.0 / std::sqrt(static_cast<double>(E))));
  Problem p{L, S, E, Ev, scale, a.causal, Operand(*a.q), Operand(*a.k), Operand(*a.v),
            mask ? &*mask : nullptr, mdata<float>(out),
            logsumexp ? mdata<float>(*logsumexp) : nullptr};
  if (a.enable_gqa) {
    p.q_heads = a.q->sizes[r - 3];
    p.group = p.q_heads / a.k->sizes[r - 3];
  }
  // Matrices are independent: threads take whole ones.
  parallel_for(0, numel_of(batch), 1, [&](int64_t b0, int64_t b1) { attend(p, b0, b1); });
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
  LATHE_ASSIGN_OR_RETURN(a.enable_gqa, c.bool_arg("enable_gqa", false));
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
