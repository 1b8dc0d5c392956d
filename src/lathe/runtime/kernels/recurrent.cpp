#include "lathe/runtime/kernels/recurrent.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include "lathe/runtime/kernels/gemm_blocked.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/vector_math.h"

namespace lathe::kernels {

namespace {

// check_out, without the layout check for an empty output: with a zero in
// an inner dim, Tensor::is_contiguous() rejects the strides the executor
// allocates (Tensor::contiguous_strides), and nothing is written anyway.
Status check_result(const Tensor& out, DType dtype, const std::vector<int64_t>& sizes, const char* op) {
  if (numel_of(sizes) == 0 && out.dtype == dtype && out.sizes == sizes) return Status::Ok();
  return check_out(out, dtype, sizes, op);
}

const char* mode_name(RnnMode m) {
  switch (m) {
    case RnnMode::Lstm: return "lstm";
    case RnnMode::Gru: return "gru";
    case RnnMode::RnnTanh: return "rnn_tanh";
    case RnnMode::RnnRelu: return "rnn_relu";
  }
  return "rnn";
}

// Gate blocks per hidden unit in W_ih / W_hh.
int64_t gate_count(RnnMode m) { return m == RnnMode::Lstm ? 4 : m == RnnMode::Gru ? 3 : 1; }

// The sizes every check and loop shares.
struct Geometry {
  int64_t T = 0, B = 0, I = 0, H = 0, D = 1, L = 1, G = 1, per = 2;
  bool unbatched = false;
};

Status check_param(const Tensor* p, const std::vector<int64_t>& want, DType dtype, const char* op, size_t index) {
  const std::string what = std::string(op) + ": params[" + std::to_string(index) + "]";
  if (!p) return make_error(what + " is None");
  LATHE_RETURN_IF_ERROR(check_input(*p, op, "params"));
  if (p->sizes != want) {
    return make_error(what + " has shape " + shape_string(p->sizes) + ", expected " + shape_string(want));
  }
  if (p->dtype != dtype) {
    return make_error(what + " is " + std::string(dtype_name(p->dtype)) + ", input is " + std::string(dtype_name(dtype)));
  }
  return Status::Ok();
}

// Per layer and direction: w_ih [G * H, in], w_hh [G * H, H], biases [G * H].
Status check_params(const RnnOptions& opt, const Geometry& g, const std::vector<const Tensor*>& params, DType dtype,
                    const char* op) {
  for (int64_t l = 0; l < g.L; ++l) {
    const int64_t in = l == 0 ? g.I : g.D * g.H;
    for (int64_t d = 0; d < g.D; ++d) {
      const size_t k = static_cast<size_t>((l * g.D + d) * g.per);
      LATHE_RETURN_IF_ERROR(check_param(params[k], {g.G * g.H, in}, dtype, op, k));
      LATHE_RETURN_IF_ERROR(check_param(params[k + 1], {g.G * g.H, g.H}, dtype, op, k + 1));
      if (opt.has_biases) {
        LATHE_RETURN_IF_ERROR(check_param(params[k + 2], {g.G * g.H}, dtype, op, k + 2));
        LATHE_RETURN_IF_ERROR(check_param(params[k + 3], {g.G * g.H}, dtype, op, k + 3));
      }
    }
  }
  return Status::Ok();
}

std::vector<int64_t> state_shape(const Geometry& g) {
  return g.unbatched ? std::vector<int64_t>{g.L * g.D, g.H} : std::vector<int64_t>{g.L * g.D, g.B, g.H};
}

// hx: h0 (and c0 for LSTM), each of the state shape.
Status check_states(const RnnOptions& opt, const Geometry& g, const Tensor& input, const std::vector<const Tensor*>& hx,
                    const char* op) {
  const size_t states = opt.mode == RnnMode::Lstm ? 2 : 1;
  if (hx.size() != states) {
    return make_error(std::string(op) + ": hx has " + std::to_string(hx.size()) + " tensors, expected " + std::to_string(states));
  }
  for (size_t i = 0; i < states; ++i) {
    const char* arg = i == 0 ? "hx[0] (h0)" : "hx[1] (c0)";
    if (!hx[i]) return make_error(std::string(op) + ": " + arg + " is None");
    LATHE_RETURN_IF_ERROR(check_input(*hx[i], op, "hx"));
    LATHE_RETURN_IF_ERROR(check_dtype(*hx[i], input.dtype, op, "hx"));
    if (hx[i]->sizes != state_shape(g)) {
      return make_error(std::string(op) + ": " + arg + " has shape " + shape_string(hx[i]->sizes) + ", expected " +
                        shape_string(state_shape(g)) + " for input " + shape_string(input.sizes));
    }
  }
  return Status::Ok();
}

// The sizes of the call, after checking every operand.
Result<Geometry> geometry(const RnnOptions& opt, const Tensor& input, const std::vector<const Tensor*>& hx,
                          const std::vector<const Tensor*>& params) {
  const char* op = mode_name(opt.mode);
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input, op, "input"));
  Geometry g;
  g.unbatched = input.sizes.size() == 2;
  if (!g.unbatched && input.sizes.size() != 3) {
    return make_error(std::string(op) + ": input must be 3-D (or 2-D unbatched), got " + shape_string(input.sizes));
  }
  g.T = input.sizes[g.unbatched || !opt.batch_first ? 0 : 1];
  g.B = g.unbatched ? 1 : input.sizes[opt.batch_first ? 0 : 1];
  g.I = input.sizes.back();
  g.D = opt.bidirectional ? 2 : 1;
  g.L = opt.num_layers;
  g.G = gate_count(opt.mode);
  g.per = opt.has_biases ? 4 : 2;
  if (g.L < 1) return make_error(std::string(op) + ": num_layers must be at least 1, got " + std::to_string(g.L));
  // (from the file: a count of 2^61 overflowed the parameter count below)
  if (g.L > (int64_t{1} << 20)) return make_error(std::string(op) + ": num_layers " + std::to_string(g.L) + " is past 2^20");
  if (g.T == 0) return make_error(std::string(op) + ": expected sequence length to be larger than 0, input " + shape_string(input.sizes));
  const size_t expected = static_cast<size_t>(g.L * g.D * g.per);
  if (params.size() != expected) {
    if (opt.mode == RnnMode::Lstm && params.size() == static_cast<size_t>(g.L * g.D * (g.per + 1))) {
      return make_error("lstm: proj_size > 0 (a w_hr projection per layer) is not supported");
    }
    return make_error(std::string(op) + ": params has " + std::to_string(params.size()) + " tensors, expected " +
                      std::to_string(expected) + " for " + std::to_string(g.L) + " layer(s), " + std::to_string(g.D) +
                      " direction(s)" + (opt.has_biases ? " with biases" : " without biases"));
  }
  if (!params[1] || params[1]->sizes.size() != 2) return make_error(std::string(op) + ": params[1] (w_hh) must be 2-D");
  g.H = params[1]->sizes[1];
  LATHE_RETURN_IF_ERROR(check_params(opt, g, params, input.dtype, op));
  LATHE_RETURN_IF_ERROR(check_states(opt, g, input, hx, op));
  return g;
}

// C[M, N] = A[M, K] (contiguous) @ W^T + bias, W [N, K] in any layout.
template <typename T>
void project(int64_t M, int64_t N, int64_t K, const T* a, const Tensor& w, const T* bias, T* c) {
  if (M == 0 || N == 0) return;
  const MatView at{a, K, 1};
  const MatView wt{w.data(), w.strides[1], w.strides[0]};
  if constexpr (std::is_same_v<T, float>) {
    if (K > 0) {
      gemm_f32(M, N, K, at, wt, c, N, bias);
      return;
    }
  }
  gemm_ref<T>(M, N, K, at, wt, c, N);
  if (!bias) return;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) c[i * N + j] += bias[j];
}

// W_hh^T is the same every step: float batches of two rows or more
// multiply with it packed once (gemm_f32 would repack it per step).
std::optional<PackedB> pack_hidden(const Tensor& w, int64_t B, int64_t H, int64_t GH, float) {
  if (B < 2 || GH < 8 || H == 0) return std::nullopt;
  const MatView wt{w.data(), w.strides[1], w.strides[0]};
  return PackedB::pack(GH <= 16 ? gemm_tiles_narrow() : gemm_tiles(), H, GH, wt);
}
std::optional<PackedB> pack_hidden(const Tensor&, int64_t, int64_t, int64_t, double) { return std::nullopt; }

// out [B, GH] = h [B, H] @ W_hh^T + b_hh.
void project_hidden(const std::optional<PackedB>& packed, int64_t B, int64_t GH, int64_t H, const float* h,
                    const Tensor& w, const float* bias, float* out) {
  if (!packed) return project<float>(B, GH, H, h, w, bias, out);
  GemmEpilogue e;
  e.bias = bias;
  gemm_packed(B, MatView{h, H, 1}, *packed, out, GH, e);
}
void project_hidden(const std::optional<PackedB>&, int64_t B, int64_t GH, int64_t H, const double* h, const Tensor& w,
                    const double* bias, double* out) {
  project<double>(B, GH, H, h, w, bias, out);
}

// In place over n contiguous values; float runs vector_math's vectorised
// exp and tanh (as ATen's vectorised CPU sigmoid and tanh), double libm.
void sigmoid_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = -x[i];
  exp_f32(x, x, n);
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + x[i]);
}
void sigmoid_inplace(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0 / (1.0 + std::exp(-x[i]));
}
void tanh_inplace(float* x, int64_t n) { tanh_f32(x, x, n); }
void tanh_inplace(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

// One time step of the cell for every batch row: gx (input projection, with
// b_ih) and gh (hidden projection, with b_hh) are [B, G * H], gh is used as
// scratch; h and c ([B, H]) are updated in place. Each gate's activation
// runs over its whole block of H values.
template <typename T>
void cell_step(RnnMode mode, int64_t B, int64_t H, const T* gx, T* gh, T* h, T* c) {
  const int64_t G = gate_count(mode);
  for (int64_t b = 0; b < B; ++b) {
    const T* x = gx + b * G * H;
    T* r = gh + b * G * H;
    T* hb = h + b * H;
    switch (mode) {
      case RnnMode::Lstm: {  // r: i, f, g, o
        for (int64_t j = 0; j < 4 * H; ++j) r[j] += x[j];
        sigmoid_inplace(r, 2 * H);
        tanh_inplace(r + 2 * H, H);
        sigmoid_inplace(r + 3 * H, H);
        T* cb = c + b * H;
        for (int64_t j = 0; j < H; ++j) {
          cb[j] = r[H + j] * cb[j] + r[j] * r[2 * H + j];
          r[j] = cb[j];  // i is spent: tanh(c) goes there
        }
        tanh_inplace(r, H);
        for (int64_t j = 0; j < H; ++j) hb[j] = r[3 * H + j] * r[j];
        break;
      }
      case RnnMode::Gru: {  // r: r, z, then W_hn h + b_hn
        for (int64_t j = 0; j < 2 * H; ++j) r[j] += x[j];
        sigmoid_inplace(r, 2 * H);
        for (int64_t j = 0; j < H; ++j) r[2 * H + j] = x[2 * H + j] + r[j] * r[2 * H + j];
        tanh_inplace(r + 2 * H, H);
        // h' = n + z (h - n), ATen's form of (1 - z) n + z h.
        for (int64_t j = 0; j < H; ++j) hb[j] = r[2 * H + j] + r[H + j] * (hb[j] - r[2 * H + j]);
        break;
      }
      case RnnMode::RnnTanh:
        for (int64_t j = 0; j < H; ++j) hb[j] = x[j] + r[j];
        tanh_inplace(hb, H);
        break;
      case RnnMode::RnnRelu:
        for (int64_t j = 0; j < H; ++j) {
          const T v = x[j] + r[j];
          hb[j] = v < T(0) ? T(0) : v;  // NaN stays NaN
        }
        break;
    }
  }
}

// Contiguous values of a 1-D parameter (nullptr when absent); `keep` holds
// a copy made for a strided one.
template <typename T>
const T* bias_data(const Tensor* b, Tensor& keep) {
  if (!b) return nullptr;
  keep = as_contiguous(*b);
  return cdata<T>(keep);
}

// One direction of one layer over the whole sequence: x [T, B, in]
// (contiguous), y [T, B, D * H] written at column block `dir`; h and c
// ([B, H]) hold the initial state and end holding the final one.
template <typename T>
void run_direction(const RnnOptions& opt, const Geometry& g, int64_t in, int64_t dir, const T* x,
                   const std::vector<const Tensor*>& p, T* y, T* h, T* c) {
  const int64_t GH = g.G * g.H;
  Tensor keep_ih, keep_hh;
  const T* b_ih = opt.has_biases ? bias_data<T>(p[2], keep_ih) : nullptr;
  const T* b_hh = opt.has_biases ? bias_data<T>(p[3], keep_hh) : nullptr;
  std::vector<T> gx(static_cast<size_t>(g.T * g.B * GH)), gh(static_cast<size_t>(g.B * GH));
  project<T>(g.T * g.B, GH, in, x, *p[0], b_ih, gx.data());
  const std::optional<PackedB> w_hh = pack_hidden(*p[1], g.B, g.H, GH, T{});
  for (int64_t s = 0; s < g.T; ++s) {
    const int64_t t = dir == 0 ? s : g.T - 1 - s;
    project_hidden(w_hh, g.B, GH, g.H, h, *p[1], b_hh, gh.data());
    cell_step<T>(opt.mode, g.B, g.H, gx.data() + t * g.B * GH, gh.data(), h, c);
    for (int64_t b = 0; b < g.B; ++b) {
      T* dst = y + (t * g.B + b) * g.D * g.H + dir * g.H;
      for (int64_t j = 0; j < g.H; ++j) dst[j] = h[b * g.H + j];
    }
  }
}

template <typename T>
void run_layers(const RnnOptions& opt, const Geometry& g, const Tensor& input, const std::vector<const Tensor*>& hx,
                const std::vector<const Tensor*>& params, Tensor& output, Tensor& h_n, Tensor* c_n) {
  // The input as contiguous [T, B, I] (batch_first swaps the first two dims).
  Tensor x0 = input;
  if (!g.unbatched && opt.batch_first) {
    x0 = make_view(input, {input.sizes[1], input.sizes[0], input.sizes[2]},
                   {input.strides[1], input.strides[0], input.strides[2]}, input.storage_offset);
  }
  x0 = as_contiguous(x0);
  const Tensor h0 = as_contiguous(*hx[0]);
  const Tensor c0 = opt.mode == RnnMode::Lstm ? as_contiguous(*hx[1]) : Tensor{};
  const int64_t BH = g.B * g.H;
  std::vector<T> x(cdata<T>(x0), cdata<T>(x0) + x0.numel());
  std::vector<T> y(static_cast<size_t>(g.T * g.B * g.D * g.H));
  std::vector<T> h(static_cast<size_t>(BH)), c(static_cast<size_t>(BH));
  for (int64_t l = 0; l < g.L; ++l) {
    const int64_t in = l == 0 ? g.I : g.D * g.H;
    for (int64_t d = 0; d < g.D; ++d) {
      const int64_t k = l * g.D + d;
      std::vector<const Tensor*> p(params.begin() + k * g.per, params.begin() + (k + 1) * g.per);
      std::copy(cdata<T>(h0) + k * BH, cdata<T>(h0) + (k + 1) * BH, h.begin());
      if (c_n) std::copy(cdata<T>(c0) + k * BH, cdata<T>(c0) + (k + 1) * BH, c.begin());
      run_direction<T>(opt, g, in, d, x.data(), p, y.data(), h.data(), c.data());
      std::copy(h.begin(), h.end(), mdata<T>(h_n) + k * BH);
      if (c_n) std::copy(c.begin(), c.end(), mdata<T>(*c_n) + k * BH);
    }
    x.swap(y);  // this layer's output is the next one's input (every element written)
    y.resize(static_cast<size_t>(g.T * g.B * g.D * g.H));
  }
  // x holds the last layer's [T, B, D * H]; the output keeps the input's order.
  const int64_t row = g.D * g.H;
  T* out = mdata<T>(output);
  for (int64_t t = 0; t < g.T; ++t) {
    for (int64_t b = 0; b < g.B; ++b) {
      const int64_t o = opt.batch_first && !g.unbatched ? b * g.T + t : t * g.B + b;
      std::copy(x.begin() + (t * g.B + b) * row, x.begin() + (t * g.B + b + 1) * row, out + o * row);
    }
  }
}

}  // namespace

Result<RnnShapes> rnn_shapes(const RnnOptions& opt, const Tensor& input, const std::vector<const Tensor*>& hx,
                             const std::vector<const Tensor*>& params) {
  LATHE_ASSIGN_OR_RETURN(Geometry g, geometry(opt, input, hx, params));
  RnnShapes s;
  s.output = input.sizes;
  s.output.back() = g.D * g.H;
  s.state = state_shape(g);
  return s;
}

Status rnn_out(const RnnOptions& opt, const Tensor& input, const std::vector<const Tensor*>& hx,
               const std::vector<const Tensor*>& params, Tensor& output, Tensor& h_n, Tensor* c_n) {
  const char* op = mode_name(opt.mode);
  LATHE_ASSIGN_OR_RETURN(Geometry g, geometry(opt, input, hx, params));
  std::vector<int64_t> out_shape = input.sizes;
  out_shape.back() = g.D * g.H;
  LATHE_RETURN_IF_ERROR(check_result(output, input.dtype, out_shape, op));
  LATHE_RETURN_IF_ERROR(check_result(h_n, input.dtype, state_shape(g), op));
  if (opt.mode == RnnMode::Lstm) {
    if (!c_n) return make_error("lstm: c_n output is required");
    LATHE_RETURN_IF_ERROR(check_result(*c_n, input.dtype, state_shape(g), op));
  } else {
    c_n = nullptr;
  }
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    run_layers<T>(opt, g, input, hx, params, output, h_n, c_n);
    return Status::Ok();
  });
}

// ---- cells ---------------------------------------------------------------------------
namespace {

const char* cell_name(RnnMode m) {
  switch (m) {
    case RnnMode::Lstm: return "lstm_cell";
    case RnnMode::Gru: return "gru_cell";
    case RnnMode::RnnTanh: return "rnn_tanh_cell";
    case RnnMode::RnnRelu: return "rnn_relu_cell";
  }
  return "rnn_cell";
}

Status check_cell_tensor(const Tensor* t, const std::vector<int64_t>& want, DType dtype, const char* op, const char* arg) {
  if (!t) return make_error(std::string(op) + ": " + arg + " is None");
  LATHE_RETURN_IF_ERROR(check_input(*t, op, arg));
  LATHE_RETURN_IF_ERROR(check_dtype(*t, dtype, op, arg));
  if (t->sizes != want) {
    return make_error(std::string(op) + ": " + arg + " has shape " + shape_string(t->sizes) + ", expected " + shape_string(want));
  }
  return Status::Ok();
}

// The sizes of a cell call (B 1 for a 1-D input), after checking every operand.
Result<Geometry> cell_geometry(RnnMode mode, const Tensor& input, const std::vector<const Tensor*>& hx, const CellWeights& w) {
  const char* op = cell_name(mode);
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input, op, "input"));
  if (input.sizes.empty() || input.sizes.size() > 2) {
    return make_error(std::string(op) + ": input must be 1-D or 2-D, got " + shape_string(input.sizes));
  }
  Geometry g;
  g.T = 1;
  g.unbatched = input.sizes.size() == 1;
  g.B = g.unbatched ? 1 : input.sizes[0];
  g.I = input.sizes.back();
  g.G = gate_count(mode);
  if (!w.w_hh || w.w_hh->sizes.size() != 2) return make_error(std::string(op) + ": w_hh must be 2-D");
  g.H = w.w_hh->sizes[1];
  const int64_t GH = g.G * g.H;
  LATHE_RETURN_IF_ERROR(check_cell_tensor(w.w_ih, {GH, g.I}, input.dtype, op, "w_ih"));
  LATHE_RETURN_IF_ERROR(check_cell_tensor(w.w_hh, {GH, g.H}, input.dtype, op, "w_hh"));
  if (w.b_ih) LATHE_RETURN_IF_ERROR(check_cell_tensor(w.b_ih, {GH}, input.dtype, op, "b_ih"));
  if (w.b_hh) LATHE_RETURN_IF_ERROR(check_cell_tensor(w.b_hh, {GH}, input.dtype, op, "b_hh"));
  const size_t states = mode == RnnMode::Lstm ? 2 : 1;
  if (hx.size() != states) {
    return make_error(std::string(op) + ": hx has " + std::to_string(hx.size()) + " tensors, expected " + std::to_string(states));
  }
  const std::vector<int64_t> state = g.unbatched ? std::vector<int64_t>{g.H} : std::vector<int64_t>{g.B, g.H};
  for (size_t i = 0; i < states; ++i) LATHE_RETURN_IF_ERROR(check_cell_tensor(hx[i], state, input.dtype, op, "hx"));
  return g;
}

template <typename T>
void run_cell(RnnMode mode, const Geometry& g, const Tensor& input, const std::vector<const Tensor*>& hx,
              const CellWeights& w, Tensor& h_out, Tensor* c_out) {
  const int64_t GH = g.G * g.H, BH = g.B * g.H;
  const Tensor x = as_contiguous(input), h0 = as_contiguous(*hx[0]);
  Tensor keep_ih, keep_hh;
  std::vector<T> gx(static_cast<size_t>(g.B * GH)), gh(static_cast<size_t>(g.B * GH)), c(static_cast<size_t>(BH));
  project<T>(g.B, GH, g.I, cdata<T>(x), *w.w_ih, bias_data<T>(w.b_ih, keep_ih), gx.data());
  project<T>(g.B, GH, g.H, cdata<T>(h0), *w.w_hh, bias_data<T>(w.b_hh, keep_hh), gh.data());
  T* h = mdata<T>(h_out);
  std::copy(cdata<T>(h0), cdata<T>(h0) + BH, h);
  if (c_out) {
    const Tensor c0 = as_contiguous(*hx[1]);
    std::copy(cdata<T>(c0), cdata<T>(c0) + BH, c.begin());
  }
  cell_step<T>(mode, g.B, g.H, gx.data(), gh.data(), h, c.data());
  if (c_out) std::copy(c.begin(), c.end(), mdata<T>(*c_out));
}

}  // namespace

Result<std::vector<int64_t>> rnn_cell_shape(RnnMode mode, const Tensor& input, const std::vector<const Tensor*>& hx,
                                            const CellWeights& w) {
  LATHE_ASSIGN_OR_RETURN(Geometry g, cell_geometry(mode, input, hx, w));
  return g.unbatched ? std::vector<int64_t>{g.H} : std::vector<int64_t>{g.B, g.H};
}

Status rnn_cell_out(RnnMode mode, const Tensor& input, const std::vector<const Tensor*>& hx, const CellWeights& w,
                    Tensor& h_out, Tensor* c_out) {
  const char* op = cell_name(mode);
  LATHE_ASSIGN_OR_RETURN(Geometry g, cell_geometry(mode, input, hx, w));
  const std::vector<int64_t> state = g.unbatched ? std::vector<int64_t>{g.H} : std::vector<int64_t>{g.B, g.H};
  LATHE_RETURN_IF_ERROR(check_result(h_out, input.dtype, state, op));
  if (mode == RnnMode::Lstm) {
    if (!c_out) return make_error("lstm_cell: the c output is required");
    LATHE_RETURN_IF_ERROR(check_result(*c_out, input.dtype, state, op));
  } else {
    c_out = nullptr;
  }
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    run_cell<T>(mode, g, input, hx, w, h_out, c_out);
    return Status::Ok();
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

// Reads the arguments every recurrent op shares (after input, hx, params).
Result<RnnOptions> read_options(KernelCall& c, RnnMode mode) {
  RnnOptions opt;
  opt.mode = mode;
  LATHE_ASSIGN_OR_RETURN(opt.has_biases, c.bool_arg("has_biases"));
  LATHE_ASSIGN_OR_RETURN(opt.num_layers, c.int_arg("num_layers"));
  LATHE_ASSIGN_OR_RETURN(double dropout, c.double_arg("dropout"));
  LATHE_ASSIGN_OR_RETURN(bool train, c.bool_arg("train"));
  LATHE_ASSIGN_OR_RETURN(opt.bidirectional, c.bool_arg("bidirectional"));
  LATHE_ASSIGN_OR_RETURN(opt.batch_first, c.bool_arg("batch_first"));
  // torch applies dropout to every layer's output but the last, only when
  // training; an inference runtime has no random stream to match it with.
  if (train && dropout > 0 && opt.num_layers > 1) {
    return c.arg_error("dropout", "dropout " + std::to_string(dropout) +
                                      " between layers with train=True is not supported (inference runtime)");
  }
  return opt;
}

template <RnnMode kMode>
Status rnn_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  std::vector<const Tensor*> hx;
  if constexpr (kMode == RnnMode::Lstm) {
    LATHE_ASSIGN_OR_RETURN(hx, c.tensor_list("hx"));
  } else {
    LATHE_ASSIGN_OR_RETURN(const Tensor* h, c.tensor("hx"));
    hx = {h};
  }
  LATHE_ASSIGN_OR_RETURN(auto params, c.tensor_list("params"));
  LATHE_ASSIGN_OR_RETURN(RnnOptions opt, read_options(c, kMode));
  LATHE_ASSIGN_OR_RETURN(RnnShapes s, rnn_shapes(opt, *input, hx, params));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, s.output));
  LATHE_ASSIGN_OR_RETURN(Tensor * h_n, c.alloc_output(1, input->dtype, s.state));
  Tensor* c_n = nullptr;
  if constexpr (kMode == RnnMode::Lstm) {
    LATHE_ASSIGN_OR_RETURN(c_n, c.alloc_output(2, input->dtype, s.state));
  }
  return rnn_out(opt, *input, hx, params, *out, *h_n, c_n);
}

// lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell.
template <RnnMode kMode>
Status cell_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  std::vector<const Tensor*> hx;
  if constexpr (kMode == RnnMode::Lstm) {
    LATHE_ASSIGN_OR_RETURN(hx, c.tensor_list("hx"));
  } else {
    LATHE_ASSIGN_OR_RETURN(const Tensor* h, c.tensor("hx"));
    hx = {h};
  }
  CellWeights w;
  LATHE_ASSIGN_OR_RETURN(w.w_ih, c.tensor("w_ih"));
  LATHE_ASSIGN_OR_RETURN(w.w_hh, c.tensor("w_hh"));
  LATHE_ASSIGN_OR_RETURN(w.b_ih, c.optional_tensor("b_ih"));
  LATHE_ASSIGN_OR_RETURN(w.b_hh, c.optional_tensor("b_hh"));
  LATHE_ASSIGN_OR_RETURN(auto shape, rnn_cell_shape(kMode, *input, hx, w));
  LATHE_ASSIGN_OR_RETURN(Tensor * h_out, c.alloc_output(0, input->dtype, shape));
  Tensor* c_out = nullptr;
  if constexpr (kMode == RnnMode::Lstm) {
    LATHE_ASSIGN_OR_RETURN(c_out, c.alloc_output(1, input->dtype, shape));
  }
  return rnn_cell_out(kMode, *input, hx, w, *h_out, c_out);
}

}  // namespace

void register_recurrent_kernels(KernelRegistry& r) {
  register_overloads(r, "lstm_cell", {"default"}, cell_kernel<RnnMode::Lstm>);
  register_overloads(r, "gru_cell", {"default"}, cell_kernel<RnnMode::Gru>);
  register_overloads(r, "rnn_tanh_cell", {"default"}, cell_kernel<RnnMode::RnnTanh>);
  register_overloads(r, "rnn_relu_cell", {"default"}, cell_kernel<RnnMode::RnnRelu>);
  register_overloads(r, "lstm", {"input"}, rnn_kernel<RnnMode::Lstm>);
  register_overloads(r, "gru", {"input"}, rnn_kernel<RnnMode::Gru>);
  register_overloads(r, "rnn_tanh", {"input"}, rnn_kernel<RnnMode::RnnTanh>);
  register_overloads(r, "rnn_relu", {"input"}, rnn_kernel<RnnMode::RnnRelu>);
}

}  // namespace lathe::kernels
