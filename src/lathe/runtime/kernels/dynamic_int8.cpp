#include "lathe/runtime/kernels/dynamic_int8.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "lathe/runtime/kernels/quantized_panels.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

using qpanels::Int8VnniPanels;
using qpanels::kPanel;
using qpanels::panels_of;

namespace {

std::shared_ptr<const Int8VnniPanels> pack_vnni(const Tensor& w_raw) {
  const Tensor w = as_contiguous(w_raw);
  const int8_t* src = cdata<int8_t>(w);
  auto p = std::make_shared<Int8VnniPanels>();
  p->n = w.sizes[0];
  p->k = w.sizes[1];
  p->k4 = (p->k + 3) / 4;
  const int64_t panels = panels_of(p->n);
  p->data = qpanels::AlignedBytes(static_cast<size_t>(panels * p->k4 * kPanel * 4));
  p->offsets.assign(panels * kPanel, 0);
  int8_t* dst = reinterpret_cast<int8_t*>(p->data.data());
  for (int64_t n = 0; n < p->n; ++n) {
    const int64_t pn = n / kPanel, i = n % kPanel;
    int32_t sum = 0;
    for (int64_t k = 0; k < p->k; ++k) {
      dst[((pn * p->k4 + k / 4) * kPanel + i) * 4 + k % 4] = src[n * p->k + k];
      sum += src[n * p->k + k];
    }
    p->offsets[n] = 128 * sum;
  }
  return p;
}

// Rounds half to even without libm (baseline x86-64 has no roundss): exact
// for |v| <= 2^22, and quantized values stay within about 128.
inline float round_half_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}

// Each row of x quantized as torchao's per-token symmetric int8 (see the
// header), stored as u8 = q + 128 in rows of `ldx` bytes (padding: 128,
// i.e. q = 0), its scale in row_scales.
void quantize_rows(const float* x, int64_t M, int64_t K, float eps, uint8_t* xu, int64_t ldx, float* row_scales) {
  for (int64_t m = 0; m < M; ++m) {
    const float* row = x + m * K;
    float mn = 0, mx = 0;  // min(amin, 0), max(amax, 0)
    for (int64_t k = 0; k < K; ++k) {
      mn = std::min(mn, row[k]);
      mx = std::max(mx, row[k]);
    }
    const float scale = std::max(std::max(-mn, mx) / 127.5f, eps);
    const float inv = 1.0f / scale;
    uint8_t* q = xu + m * ldx;
    for (int64_t k = 0; k < K; ++k) {
      const float v = std::min(std::max(round_half_even(row[k] * inv), -128.0f), 127.0f);
      q[k] = static_cast<uint8_t>(static_cast<int>(v) + 128);
    }
    std::fill(q + K, q + ldx, uint8_t{128});
    row_scales[m] = scale;
  }
}

void run_dynamic(const Tensor& x_raw, const Int8VnniPanels& w, const Tensor& scales_raw, float eps, Tensor& out,
                 simd::Isa isa) {
  const Tensor x = as_contiguous(x_raw), s = as_contiguous(scales_raw);
  const int64_t M = x.sizes[0], N = w.n, K = w.k, ldx = w.k4 * 4;
  std::vector<uint8_t> xu(static_cast<size_t>(M * ldx));
  std::vector<float> row_scales(static_cast<size_t>(M));
  quantize_rows(cdata<float>(x), M, K, eps, xu.data(), ldx, row_scales.data());
  const float* sp = cdata<float>(s);
  float* op = mdata<float>(out);
  const qpanels::VnniPanelFn fn = qpanels::vnni_panel_fn(isa);
  qpanels::for_row_chunks(M, N, K, 1, [&](int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      qpanels::QuantizedRows r;
      r.x = xu.data() + m0 * ldx;
      r.ldx = ldx;
      r.row_scales = row_scales.data() + m0;
      r.m = m1 - m0;
      r.out = op + m0 * N + p * kPanel;
      r.ldo = N;
      r.width = std::min(kPanel, N - p * kPanel);
      fn(w, p, sp + p * kPanel, r);
    }
  });
}

Status check_dynamic_args(const Tensor& x, const Tensor& w, const Tensor& scales) {
  const char* op = "dynamic_int8_mm";
  LATHE_RETURN_IF_ERROR(check_input(x, op, "self"));
  LATHE_RETURN_IF_ERROR(check_input(w, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_input(scales, op, "scales"));
  LATHE_RETURN_IF_ERROR(check_rank(x, 2, op, "self"));
  LATHE_RETURN_IF_ERROR(check_rank(w, 2, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(x, DType::Float32, op, "self"));
  LATHE_RETURN_IF_ERROR(check_dtype(w, DType::Int8, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(scales, DType::Float32, op, "scales"));
  if (x.sizes[1] != w.sizes[1] || scales.numel() != w.sizes[0]) {
    return make_error(std::string(op) + ": self " + shape_string(x.sizes) + ", mat2 " + shape_string(w.sizes) +
                      " and scales " + shape_string(scales.sizes) + " do not fit [M, K], [N, K], [N]");
  }
  return Status::Ok();
}

}  // namespace

Status int_mm_out(const Tensor& a_raw, const Tensor& b_raw, Tensor& out) {
  const char* op = "_int_mm";
  LATHE_RETURN_IF_ERROR(check_input(a_raw, op, "self"));
  LATHE_RETURN_IF_ERROR(check_input(b_raw, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_rank(a_raw, 2, op, "self"));
  LATHE_RETURN_IF_ERROR(check_rank(b_raw, 2, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_dtype(a_raw, DType::Int8, op, "self"));
  LATHE_RETURN_IF_ERROR(check_dtype(b_raw, DType::Int8, op, "mat2"));
  const int64_t M = a_raw.sizes[0], K = a_raw.sizes[1], N = b_raw.sizes[1];
  if (b_raw.sizes[0] != K) {
    return make_error(std::string(op) + ": self " + shape_string(a_raw.sizes) + " and mat2 " +
                      shape_string(b_raw.sizes) + " cannot be multiplied");
  }
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Int32, {M, N}, op));
  const Tensor a = as_contiguous(a_raw);
  // mat2 as [N, K] rows (torchao passes t(weight): then this is no copy).
  const Tensor bt = as_contiguous(make_view(b_raw, {N, K}, {b_raw.strides[1], b_raw.strides[0]}, b_raw.storage_offset));
  const int8_t* ap = cdata<int8_t>(a);
  const int8_t* bp = cdata<int8_t>(bt);
  int32_t* o = mdata<int32_t>(out);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += int32_t{ap[m * K + k]} * bp[n * K + k];
      o[m * N + n] = acc;
    }
  }
  return Status::Ok();
}

Status dynamic_int8_mm_out(const Tensor& x, const Tensor& w, const Tensor& scales, double eps, Tensor& out,
                           simd::Isa isa) {
  LATHE_RETURN_IF_ERROR(check_dynamic_args(x, w, scales));
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, {x.sizes[0], w.sizes[0]}, "dynamic_int8_mm"));
  run_dynamic(x, *pack_vnni(w), scales, static_cast<float>(eps), out, isa);
  return Status::Ok();
}

// ---- adapters -------------------------------------------------------------------
namespace {

struct PreparedVnni : PreparedState {
  std::shared_ptr<const Int8VnniPanels> panels;
};

Result<std::shared_ptr<const PreparedState>> prepare_dynamic(const Node&, const ConstantOperand& constant) {
  const Tensor* w = constant("mat2");
  if (!w || w->dtype != DType::Int8 || w->sizes.size() != 2 || !w->check_fits().ok())
    return std::shared_ptr<const PreparedState>();
  auto state = std::make_shared<PreparedVnni>();
  state->panels = pack_vnni(*w);
  return std::shared_ptr<const PreparedState>(std::move(state));
}

Status dynamic_int8_mm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("mat2"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* s, c.tensor("scales"));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps"));
  LATHE_RETURN_IF_ERROR(check_dynamic_args(*x, *w, *s));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Float32, {x->sizes[0], w->sizes[0]}));
  const auto* prepared = dynamic_cast<const PreparedVnni*>(c.prepared());
  const Int8VnniPanels* p = prepared ? prepared->panels.get() : nullptr;
  if (!p || p->n != w->sizes[0] || p->k != w->sizes[1]) return dynamic_int8_mm_out(*x, *w, *s, eps, *out);
  run_dynamic(*x, *p, *s, static_cast<float>(eps), *out, simd::best_isa());
  return Status::Ok();
}

Status int_mm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* a, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* b, c.tensor("mat2"));
  LATHE_RETURN_IF_ERROR(check_rank(*a, 2, "_int_mm", "self"));
  LATHE_RETURN_IF_ERROR(check_rank(*b, 2, "_int_mm", "mat2"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Int32, {a->sizes[0], b->sizes[1]}));
  return int_mm_out(*a, *b, *out);
}

}  // namespace

void register_dynamic_int8_kernels(KernelRegistry& r) {
  register_overloads(r, "_int_mm", {"default"}, int_mm_kernel);
  r.set("lathe.dynamic_int8_mm.default", KernelInfo{dynamic_int8_mm_kernel, OutputAlias::None, prepare_dynamic});
}

}  // namespace lathe::kernels
