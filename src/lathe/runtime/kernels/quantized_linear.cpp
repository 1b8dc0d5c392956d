#include "lathe/runtime/kernels/quantized_linear.h"

#include <algorithm>
#include <memory>

#include "lathe/runtime/kernels/quantized.h"
#include "lathe/runtime/kernels/quantized_panels.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

using qpanels::Int4Panels;
using qpanels::Int8Panels;
using qpanels::kPanel;
using qpanels::panels_of;

namespace {

// ---- repacking into the panel layouts -----------------------------------------

std::shared_ptr<const Int8Panels> pack_int8(const Tensor& w_raw) {
  const Tensor w = as_contiguous(w_raw);
  const int8_t* src = cdata<int8_t>(w);
  auto p = std::make_shared<Int8Panels>();
  p->n = w.sizes[0];
  p->k = w.sizes[1];
  p->data = qpanels::AlignedBytes(static_cast<size_t>(panels_of(p->n) * p->k * kPanel));
  int8_t* dst = reinterpret_cast<int8_t*>(p->data.data());
  for (int64_t n = 0; n < p->n; ++n) {
    int8_t* col = dst + (n / kPanel) * p->k * kPanel + n % kPanel;
    for (int64_t k = 0; k < p->k; ++k) col[k * kPanel] = src[n * p->k + k];
  }
  return p;
}

// A 4-bit panel set of n x k with `group`, its (scale, zero) per channel and
// group and 4-bit values from u(n, k) in [0, 15].
template <typename U, typename SZ>
std::shared_ptr<const Int4Panels> pack_int4(int64_t N, int64_t K, int64_t group, U u, SZ scale_zero) {
  auto p = std::make_shared<Int4Panels>();
  p->n = N;
  p->k = K;
  p->group = group;
  const int64_t panels = panels_of(N), groups = K / group;
  p->data = qpanels::AlignedBytes(static_cast<size_t>(panels * (K / 8) * kPanel * 4));
  p->scales.assign(panels * groups * kPanel, 0.0f);
  p->zeros.assign(panels * groups * kPanel, 0.0f);
  uint32_t* words = reinterpret_cast<uint32_t*>(p->data.data());
  for (int64_t n = 0; n < N; ++n) {
    const int64_t pn = n / kPanel, i = n % kPanel;
    uint32_t* col = words + pn * (K / 8) * kPanel + i;
    for (int64_t k = 0; k < K; ++k) col[(k / 8) * kPanel] |= static_cast<uint32_t>(u(n, k) & 0xF) << (4 * (k % 8));
    for (int64_t g = 0; g < groups; ++g) {
      const auto [s, z] = scale_zero(n, g);
      p->scales[(pn * groups + g) * kPanel + i] = s;
      p->zeros[(pn * groups + g) * kPanel + i] = z;
      p->zero_points = p->zero_points || z != 0.0f;
    }
  }
  return p;
}

// Lathe's op: q in [-8, 7] one per byte, w = q * scale.
std::shared_ptr<const Int4Panels> pack_int4_signed(const Tensor& q_raw, const Tensor& scales_raw, int64_t group) {
  const Tensor q = as_contiguous(q_raw), s = as_contiguous(scales_raw);
  const int8_t* qp = cdata<int8_t>(q);
  const float* sp = cdata<float>(s);
  const int64_t N = q.sizes[0], K = q.sizes[1], groups = K / group;
  return pack_int4(
      N, K, group, [&](int64_t n, int64_t k) { return static_cast<uint32_t>(qp[n * K + k] + 8); },
      [&](int64_t n, int64_t g) { return std::pair<float, float>{sp[n * groups + g], 0.0f}; });
}

// The 4-bit value of channel n, column k of PyTorch's packed [N, K / 2]
// bytes (TorchInt4Layout).
uint32_t torch_nibble(const uint8_t* b, int64_t N, int64_t K, int64_t n, int64_t k, TorchInt4Layout layout) {
  const int64_t block = layout == TorchInt4Layout::Avx512 ? 64 : 32;
  const int64_t i = n / block, c = n % block, width = std::min(block, N - i * block);
  const uint8_t* base = b + i * K * block / 2;
  int64_t byte = 0, shift = 0;
  if (width == block && layout == TorchInt4Layout::Avx512) {
    byte = k * 32 + (c / 16 % 2) * 16 + c % 16;
    shift = c / 32 * 4;
  } else if (width == block && layout == TorchInt4Layout::Avx2) {
    byte = k * 16 + c % 16;
    shift = c / 16 * 4;
  } else {
    byte = k * width / 2 + c / 2;
    shift = c % 2 * 4;
  }
  return (base[byte] >> shift) & 0xF;
}

std::shared_ptr<const Int4Panels> pack_int4_torch(const Tensor& w_raw, const Tensor& sz_raw, int64_t group,
                                                  TorchInt4Layout layout) {
  const Tensor w = as_contiguous(w_raw), sz = as_contiguous(sz_raw);
  const uint8_t* b = cdata<uint8_t>(w);
  const float* s = cdata<float>(sz);
  const int64_t N = w.sizes[0], K = w.sizes[1] * 2;
  return pack_int4(
      N, K, group, [&](int64_t n, int64_t k) { return torch_nibble(b, N, K, n, k, layout); },
      [&](int64_t n, int64_t g) { return std::pair<float, float>{s[(g * N + n) * 2], s[(g * N + n) * 2 + 1]}; });
}

// ---- running the panels ---------------------------------------------------------

// Calls fn(m0, p, count, rows) for every group of up to kPanelGroup panels
// from panel p (count of them) and every chunk of rows from m0 (rows: x,
// out and the last panel's width set); threads split the groups.
template <typename Fn>
void for_panel_groups(const float* x, int64_t M, int64_t K, float* out, int64_t N, Fn fn) {
  const int64_t group = qpanels::kPanelGroup;
  auto chunk = [&](int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p += group) {
      const int64_t count = std::min(group, p1 - p);
      qpanels::PanelRows rows;
      rows.x = x + m0 * K;
      rows.ldx = K;
      rows.m = m1 - m0;
      rows.out = out + m0 * N + p * kPanel;
      rows.ldo = N;
      rows.width = std::min(kPanel, N - (p + count - 1) * kPanel);
      fn(m0, p, count, rows);
    }
  };
  qpanels::for_row_chunks(M, N, K, 4, chunk, group);
}

void run_int8(const Tensor& x_raw, const Int8Panels& w, const Tensor& scales_raw, Tensor& out, simd::Isa isa) {
  const Tensor x = as_contiguous(x_raw), s = as_contiguous(scales_raw);
  const float* xp = cdata<float>(x);
  const float* sp = cdata<float>(s);
  float* op = mdata<float>(out);
  const int64_t M = x.sizes[0], N = w.n, K = w.k;
  const qpanels::Int8PanelFn fn = qpanels::int8_panel_fn(isa);
  for_panel_groups(xp, M, K, op, N, [&](int64_t, int64_t p, int64_t count, const qpanels::PanelRows& rows) {
    fn(w, p, count, sp + p * kPanel, rows);
  });
}

void run_int4(const Tensor& x_raw, const Int4Panels& w, Tensor& out, simd::Isa isa) {
  const Tensor x = as_contiguous(x_raw);
  const float* xp = cdata<float>(x);
  float* op = mdata<float>(out);
  const int64_t M = x.sizes[0], N = w.n, K = w.k, groups = w.groups();
  // The zero points multiply the sum of x over each group.
  std::vector<float> xsum(static_cast<size_t>(M * groups), 0.0f);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t k = 0; k < K; ++k) xsum[m * groups + k / w.group] += xp[m * K + k];
  }
  // With VNNI, x as int8 limbs in integer dot products (a third of the
  // float kernel's instructions); rows it cannot split take the float path.
  qpanels::ActivationLimbs limbs;
  if (const qpanels::Int4LimbsPanelFn vnni = qpanels::int4_limbs_panel_fn(isa);
      vnni && qpanels::split_into_limbs(xp, M, K, w.group, limbs)) {
    for_panel_groups(xp, M, K, op, N, [&](int64_t m0, int64_t p, int64_t count, const qpanels::PanelRows& rows) {
      const qpanels::LimbRows limb_rows{&limbs, m0, rows.m, xsum.data() + m0 * groups, rows.out, rows.ldo, rows.width};
      vnni(w, p, count, limb_rows);
    });
    return;
  }
  const qpanels::Int4PanelFn fn = qpanels::int4_panel_fn(isa);
  for_panel_groups(xp, M, K, op, N, [&](int64_t m0, int64_t p, int64_t count, const qpanels::PanelRows& rows) {
    fn(w, p, count, xsum.data() + m0 * groups, rows);
  });
}

// lathe.weight_int4_group_mm where the panels do not apply (K or the group
// not a multiple of 8): the same sums, one output at a time.
void int4_group_reference(const Tensor& x_raw, const Tensor& w_raw, const Tensor& s_raw, int64_t g, Tensor& out) {
  const Tensor x = as_contiguous(x_raw), w = as_contiguous(w_raw), s = as_contiguous(s_raw);
  const float* xp = cdata<float>(x);
  const int8_t* wp = cdata<int8_t>(w);
  const float* sp = cdata<float>(s);
  float* op = mdata<float>(out);
  const int64_t M = x.sizes[0], K = x.sizes[1], N = w.sizes[0], groups = K / g;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float total = 0;
      for (int64_t j = 0; j < groups; ++j) {
        float acc = 0;
        for (int64_t k = j * g; k < (j + 1) * g; ++k) acc += xp[m * K + k] * static_cast<float>(wp[n * K + k]);
        total += acc * sp[n * groups + j];
      }
      op[m * N + n] = total;
    }
  }
}

// ---- argument checks --------------------------------------------------------------

Status check_activation(const Tensor& x, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(x, op, "self"));
  LATHE_RETURN_IF_ERROR(check_rank(x, 2, op, "self"));
  return check_dtype(x, DType::Float32, op, "self");
}

Status check_mm_args(const Tensor& x, const Tensor& w, const Tensor& scales, const char* op) {
  LATHE_RETURN_IF_ERROR(check_activation(x, op));
  LATHE_RETURN_IF_ERROR(check_input(w, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_input(scales, op, "scales"));
  LATHE_RETURN_IF_ERROR(check_rank(w, 2, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(w, DType::Int8, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(scales, DType::Float32, op, "scales"));
  if (x.sizes[1] != w.sizes[1]) {
    return make_error(std::string(op) + ": self " + shape_string(x.sizes) + " and mat2 " + shape_string(w.sizes) +
                      " differ in K");
  }
  return Status::Ok();
}

Status check_int8_args(const Tensor& x, const Tensor& w, const Tensor& scales) {
  const char* op = "_weight_int8pack_mm";
  LATHE_RETURN_IF_ERROR(check_mm_args(x, w, scales, op));
  if (scales.sizes.size() != 1 || scales.sizes[0] != w.sizes[0]) {
    return make_error(std::string(op) + ": scales " + shape_string(scales.sizes) + " must be [" +
                      std::to_string(w.sizes[0]) + "]");
  }
  return Status::Ok();
}

// The group lathe.weight_int4_group_mm really uses, or an error.
Result<int64_t> int4_group_args(const Tensor& x, const Tensor& w, const Tensor& scales, int64_t group_size) {
  const char* op = "weight_int4_group_mm";
  LATHE_RETURN_IF_ERROR(check_mm_args(x, w, scales, op));
  const int64_t N = w.sizes[0], K = w.sizes[1];
  const int64_t g = effective_group_size(group_size, K, scales);
  if (g <= 0 || K % g != 0) {
    return make_error(std::string(op) + ": K " + std::to_string(K) + " is not a multiple of group_size " +
                      std::to_string(group_size));
  }
  if (scales.numel() != N * (K / g)) {
    return make_error(std::string(op) + ": scales " + shape_string(scales.sizes) + " must be [" + std::to_string(N) +
                      ", " + std::to_string(K / g) + "]");
  }
  return g;
}

bool int4_panels_fit(int64_t K, int64_t g) { return K % 8 == 0 && g % 8 == 0; }

Status check_int4pack_args(const Tensor& x, const Tensor& w, int64_t group, const Tensor& sz) {
  const char* op = "_weight_int4pack_mm_for_cpu";
  LATHE_RETURN_IF_ERROR(check_activation(x, op));
  LATHE_RETURN_IF_ERROR(check_input(w, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_input(sz, op, "qScaleAndZeros"));
  LATHE_RETURN_IF_ERROR(check_rank(w, 2, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(w, DType::UInt8, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(sz, DType::Float32, op, "qScaleAndZeros"));
  const int64_t K = x.sizes[1], N = w.sizes[0];
  if (w.sizes[1] * 2 != K) {
    return make_error(std::string(op) + ": mat2 " + shape_string(w.sizes) + " must be [N, K / 2] for self " +
                      shape_string(x.sizes));
  }
  if (group != 32 && group != 64 && group != 128 && group != 256) {
    return make_error(std::string(op) + ": qGroupSize must be 32, 64, 128 or 256, got " + std::to_string(group));
  }
  if (K % group != 0 || N % 16 != 0) {
    return make_error(std::string(op) + ": K " + std::to_string(K) + " must be a multiple of qGroupSize " +
                      std::to_string(group) + " and N " + std::to_string(N) + " a multiple of 16");
  }
  if (sz.sizes != std::vector<int64_t>{K / group, N, 2}) {
    return make_error(std::string(op) + ": qScaleAndZeros " + shape_string(sz.sizes) + " must be [" +
                      std::to_string(K / group) + ", " + std::to_string(N) + ", 2]");
  }
  return Status::Ok();
}

}  // namespace

TorchInt4Layout torch_int4_layout() {
  const simd::Isa isa = simd::best_isa();
  if (isa >= simd::Isa::Avx512) return TorchInt4Layout::Avx512;
  return isa == simd::Isa::Avx2 ? TorchInt4Layout::Avx2 : TorchInt4Layout::Plain;
}

Status weight_int8pack_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, Tensor& out, simd::Isa isa) {
  LATHE_RETURN_IF_ERROR(check_int8_args(x, w, scales));
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, {x.sizes[0], w.sizes[0]}, "_weight_int8pack_mm"));
  run_int8(x, *pack_int8(w), scales, out, isa);
  return Status::Ok();
}

Status weight_int4_group_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, int64_t group_size,
                                Tensor& out, simd::Isa isa) {
  LATHE_ASSIGN_OR_RETURN(int64_t g, int4_group_args(x, w, scales, group_size));
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, {x.sizes[0], w.sizes[0]}, "weight_int4_group_mm"));
  if (!int4_panels_fit(w.sizes[1], g)) {
    int4_group_reference(x, w, scales, g, out);
    return Status::Ok();
  }
  run_int4(x, *pack_int4_signed(w, scales, g), out, isa);
  return Status::Ok();
}

Status weight_int4pack_mm_for_cpu_out(const Tensor& x, const Tensor& w, int64_t group_size,
                                      const Tensor& scales_and_zeros, Tensor& out, TorchInt4Layout layout,
                                      simd::Isa isa) {
  LATHE_RETURN_IF_ERROR(check_int4pack_args(x, w, group_size, scales_and_zeros));
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, {x.sizes[0], w.sizes[0]}, "_weight_int4pack_mm_for_cpu"));
  run_int4(x, *pack_int4_torch(w, scales_and_zeros, group_size, layout), out, isa);
  return Status::Ok();
}

// ---- adapters: the weights repacked once per node ------------------------------------
namespace {

template <typename Panels>
struct PreparedPanels : PreparedState {
  explicit PreparedPanels(std::shared_ptr<const Panels> p) : panels(std::move(p)) {}
  std::shared_ptr<const Panels> panels;
};

template <typename Panels>
const Panels* prepared_panels(const KernelCall& c) {
  const auto* p = dynamic_cast<const PreparedPanels<Panels>*>(c.prepared());
  return p ? p->panels.get() : nullptr;
}

template <typename Panels>
Result<std::shared_ptr<const PreparedState>> prepared(std::shared_ptr<const Panels> p) {
  return std::shared_ptr<const PreparedState>(std::make_shared<PreparedPanels<Panels>>(std::move(p)));
}

bool usable(const Tensor* t, DType dtype, size_t rank) {
  return t && t->dtype == dtype && t->sizes.size() == rank && t->check_fits().ok();
}

// A constant weight that fails the checks is left to the call, which
// reports it with the call's own error.
Result<std::shared_ptr<const PreparedState>> prepare_int8(const Node&, const ConstantOperand& constant) {
  const Tensor* w = constant("mat2");
  if (!usable(w, DType::Int8, 2)) return std::shared_ptr<const PreparedState>();
  return prepared(pack_int8(*w));
}

Result<std::shared_ptr<const PreparedState>> prepare_int4_group(const Node& n, const ConstantOperand& constant) {
  const Tensor* w = constant("mat2");
  const Tensor* s = constant("scales");
  const Argument* g_arg = n.input("group_size");
  const int64_t* g = g_arg ? g_arg->get_if<int64_t>() : nullptr;
  if (!usable(w, DType::Int8, 2) || !s || s->dtype != DType::Float32 || !s->check_fits().ok() || !g)
    return std::shared_ptr<const PreparedState>();
  const int64_t N = w->sizes[0], K = w->sizes[1];
  const int64_t eg = effective_group_size(*g, K, *s);
  if (eg <= 0 || K % eg != 0 || s->numel() != N * (K / eg) || !int4_panels_fit(K, eg))
    return std::shared_ptr<const PreparedState>();
  return prepared(pack_int4_signed(*w, *s, eg));
}

Result<std::shared_ptr<const PreparedState>> prepare_int4pack(const Node& n, const ConstantOperand& constant) {
  const Tensor* w = constant("mat2");
  const Tensor* sz = constant("qScaleAndZeros");
  const Argument* g_arg = n.input("qGroupSize");
  const int64_t* g = g_arg ? g_arg->get_if<int64_t>() : nullptr;
  if (!usable(w, DType::UInt8, 2) || !usable(sz, DType::Float32, 3) || !g) return std::shared_ptr<const PreparedState>();
  Tensor x_like = Tensor::empty(DType::Float32, {0, w->sizes[1] * 2});
  if (!check_int4pack_args(x_like, *w, *g, *sz).ok()) return std::shared_ptr<const PreparedState>();
  return prepared(pack_int4_torch(*w, *sz, *g, torch_int4_layout()));
}

// The prepared panels, when they are the ones for this call's weight.
template <typename Panels>
const Panels* panels_for(const KernelCall& c, int64_t n, int64_t k) {
  const Panels* p = prepared_panels<Panels>(c);
  return p && p->n == n && p->k == k ? p : nullptr;
}

Status weight_int8pack_mm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("mat2"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* s, c.tensor("scales"));
  LATHE_RETURN_IF_ERROR(check_int8_args(*x, *w, *s));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Float32, {x->sizes[0], w->sizes[0]}));
  const Int8Panels* p = panels_for<Int8Panels>(c, w->sizes[0], w->sizes[1]);
  if (!p) return weight_int8pack_mm_out(*x, *w, *s, *out);
  run_int8(*x, *p, *s, *out, simd::best_isa());
  return Status::Ok();
}

// x [..., K] (like linear's input) seen as the matrix [M, K], and the
// output [..., N] as [M, N].
Tensor as_matrix(const Tensor& t, int64_t cols) {
  const Tensor c = as_contiguous(t);
  const int64_t rows = cols == 0 ? 0 : c.numel() / cols;
  return make_view(c, {rows, cols}, {cols, 1}, c.storage_offset);
}

Status weight_int4_group_mm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x_nd, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("mat2"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* s, c.tensor("scales"));
  LATHE_ASSIGN_OR_RETURN(int64_t group_size, c.int_arg("group_size"));
  LATHE_RETURN_IF_ERROR(check_input(*x_nd, "weight_int4_group_mm", "self"));
  if (x_nd->sizes.empty() || w->sizes.size() != 2) return c.arg_error("self", "must be [..., K] with mat2 [N, K]");
  const Tensor x = as_matrix(*x_nd, x_nd->sizes.back());
  LATHE_RETURN_IF_ERROR(int4_group_args(x, *w, *s, group_size));
  std::vector<int64_t> out_sizes = x_nd->sizes;
  out_sizes.back() = w->sizes[0];
  LATHE_ASSIGN_OR_RETURN(Tensor * out_nd, c.alloc_output(0, DType::Float32, out_sizes));
  Tensor out = as_matrix(*out_nd, w->sizes[0]);
  const Int4Panels* p = panels_for<Int4Panels>(c, w->sizes[0], w->sizes[1]);
  if (!p) return weight_int4_group_mm_out(x, *w, *s, group_size, out);
  run_int4(x, *p, out, simd::best_isa());
  return Status::Ok();
}

Status weight_int4pack_mm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("mat2"));
  LATHE_ASSIGN_OR_RETURN(int64_t group, c.int_arg("qGroupSize"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* sz, c.tensor("qScaleAndZeros"));
  LATHE_RETURN_IF_ERROR(check_int4pack_args(*x, *w, group, *sz));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Float32, {x->sizes[0], w->sizes[0]}));
  const Int4Panels* p = panels_for<Int4Panels>(c, w->sizes[0], w->sizes[1] * 2);
  if (!p) return weight_int4pack_mm_for_cpu_out(*x, *w, group, *sz, *out);
  run_int4(*x, *p, *out, simd::best_isa());
  return Status::Ok();
}

}  // namespace

void register_quantized_linear_kernels(KernelRegistry& r) {
  r.set("aten._weight_int8pack_mm.default", KernelInfo{weight_int8pack_mm_kernel, OutputAlias::None, prepare_int8});
  r.set("lathe.weight_int4_group_mm.default",
        KernelInfo{weight_int4_group_mm_kernel, OutputAlias::None, prepare_int4_group});
  r.set("aten._weight_int4pack_mm_for_cpu.default",
        KernelInfo{weight_int4pack_mm_kernel, OutputAlias::None, prepare_int4pack});
}

}  // namespace lathe::kernels
