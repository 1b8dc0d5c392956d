#include "lathe/runtime/kernels/norm.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/simd.h"

// AVX-512, AVX2 + FMA and baseline clones of the float layer-norm rows,
// chosen when the library is loaded (simd.h).
#define LATHE_NORM_CLONES LATHE_WIDE_CLONES

namespace lathe::kernels {

namespace {

// A 1-D per-channel parameter as doubles (nullptr: `fill`).
Result<std::vector<double>> channel_values(const Tensor* t, int64_t n, double fill, const char* op, const char* arg) {
  std::vector<double> out(static_cast<size_t>(n), fill);
  if (!t) return out;
  LATHE_RETURN_IF_ERROR(check_input(*t, op, arg));
  if (t->numel() != n) {
    return make_error(std::string(op) + ": " + arg + " has " + std::to_string(t->numel()) + " elements, expected " +
                      std::to_string(n));
  }
  Tensor c = as_contiguous(as_dtype(*t, DType::Float64));
  const double* p = cdata<double>(c);
  out.assign(p, p + n);
  return out;
}

Status check_channels_input(const Tensor& input, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input, op, "input"));
  if (input.sizes.size() < 2) return make_error(std::string(op) + ": input must have at least 2 dims, got " + shape_string(input.sizes));
  return Status::Ok();
}

// Layer norm over M rows of N: statistics in double (the mean, then the
// squared deviations from it), output in T, as ATen's CPU kernel rounds.
// mean and rstd (M values each) may be nullptr.
template <typename T>
void layer_norm_rows(const T* x, T* y, int64_t M, int64_t N, const T* w, const T* b, T eps, T* mean, T* rstd) {
  for (int64_t i = 0; i < M; ++i) {
    const T* xr = x + i * N;
    double s = 0;
    for (int64_t j = 0; j < N; ++j) s += xr[j];
    const double mu = s / static_cast<double>(N);
    double ss = 0;
    for (int64_t j = 0; j < N; ++j) ss += (xr[j] - mu) * (xr[j] - mu);
    const T rs = T(1) / std::sqrt(static_cast<T>(ss / static_cast<double>(N)) + eps);
    const T shift = -rs * static_cast<T>(mu);
    for (int64_t j = 0; j < N; ++j) y[i * N + j] = (xr[j] * rs + shift) * w[j] + b[j];
    if (mean) mean[i] = static_cast<T>(mu);
    if (rstd) rstd[i] = rs;
  }
}

typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));

// The sum of the lanes by halving: three dependent adds, not seven (on
// rows of 64 the reductions cost as much as the passes over the row).
// (clang, which builds the fuzzers, spells GCC's __builtin_shuffle
// __builtin_shufflevector.)
#if defined(__clang__)
#define LATHE_NORM_PERMUTE(x, ...) __builtin_shufflevector(x, x, __VA_ARGS__)
#else
#define LATHE_NORM_PERMUTE(x, ...) __builtin_shuffle(x, v8l{__VA_ARGS__})
#endif
[[gnu::always_inline]] inline double hsum(v8d v) {
  v += LATHE_NORM_PERMUTE(v, 4, 5, 6, 7, 0, 1, 2, 3);
  v += LATHE_NORM_PERMUTE(v, 2, 3, 0, 1, 6, 7, 4, 5);
  v += LATHE_NORM_PERMUTE(v, 1, 0, 3, 2, 5, 4, 7, 6);
  return v[0];
}
#undef LATHE_NORM_PERMUTE

// The same for float, eight lanes at a time: the sums in double lanes,
// the output in float ones.
LATHE_NORM_CLONES
void layer_norm_rows_f32(const float* x, float* y, int64_t M, int64_t N, const float* w, const float* b, float eps,
                         float* mean, float* rstd) {
  using simd::load8;
  using simd::v8;
  const int64_t full = N / 8 * 8;
  for (int64_t i = 0; i < M; ++i) {
    const float* xr = x + i * N;
    v8d vs = {};
    for (int64_t j = 0; j < full; j += 8) vs += __builtin_convertvector(load8(xr + j), v8d);
    double s = hsum(vs);
    for (int64_t j = full; j < N; ++j) s += xr[j];
    const double mu = s / static_cast<double>(N);
    v8d vss = {};
    for (int64_t j = 0; j < full; j += 8) {
      const v8d d = __builtin_convertvector(load8(xr + j), v8d) - mu;
      vss += d * d;
    }
    double ss = hsum(vss);
    for (int64_t j = full; j < N; ++j) ss += (xr[j] - mu) * (xr[j] - mu);
    const float rs = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(N)) + eps);
    // (x - mean) rs, not x rs - mean rs: these clones contract x rs + shift
    // into an FMA, which leaves the product's rounding error where x equals
    // the mean (a row of one, or a constant row) instead of exactly 0.
    const float muf = static_cast<float>(mu);
    float* yr = y + i * N;
    for (int64_t j = 0; j < full; j += 8) simd::store8(yr + j, ((load8(xr + j) - muf) * rs) * load8(w + j) + load8(b + j));
    for (int64_t j = full; j < N; ++j) yr[j] = ((xr[j] - muf) * rs) * w[j] + b[j];
    if (mean) mean[i] = static_cast<float>(mu);
    if (rstd) rstd[i] = rs;
  }
}

}  // namespace

Status layer_norm_out(const Tensor& input_raw, const std::vector<int64_t>& normalized_shape, const Tensor* weight,
                      const Tensor* bias, double eps, Tensor& out, Tensor* mean, Tensor* rstd) {
  LATHE_RETURN_IF_ERROR(check_input(input_raw, "layer_norm", "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, "layer_norm", "input"));
  const size_t r = input_raw.sizes.size(), k = normalized_shape.size();
  bool ok = k <= r;
  for (size_t i = 0; ok && i < k; ++i) ok = input_raw.sizes[r - k + i] == normalized_shape[i];
  if (!ok) {
    return make_error("layer_norm: normalized_shape " + shape_string(normalized_shape) + " does not end input shape " +
                      shape_string(input_raw.sizes));
  }
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, input_raw.sizes, "layer_norm"));
  std::vector<int64_t> stat_shape(input_raw.sizes.begin(), input_raw.sizes.end() - static_cast<int64_t>(k));
  stat_shape.resize(r, 1);
  if (mean) LATHE_RETURN_IF_ERROR(check_out(*mean, input_raw.dtype, stat_shape, "layer_norm"));
  if (rstd) LATHE_RETURN_IF_ERROR(check_out(*rstd, input_raw.dtype, stat_shape, "layer_norm"));
  const int64_t N = numel_of(normalized_shape);
  const int64_t M = N == 0 ? 0 : input_raw.numel() / N;
  LATHE_ASSIGN_OR_RETURN(auto w, channel_values(weight, N, 1.0, "layer_norm", "weight"));
  LATHE_ASSIGN_OR_RETURN(auto b, channel_values(bias, N, 0.0, "layer_norm", "bias"));
  const Tensor input = as_contiguous(input_raw);
  return dispatch<Types::Float>(input.dtype, "layer_norm", [&](auto tag) -> Status {
    using T = decltype(tag);
    const std::vector<T> wt(w.begin(), w.end()), bt(b.begin(), b.end());
    T* mp = mean ? mdata<T>(*mean) : nullptr;
    T* rp = rstd ? mdata<T>(*rstd) : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      layer_norm_rows_f32(cdata<T>(input), mdata<T>(out), M, N, wt.data(), bt.data(), static_cast<T>(eps), mp, rp);
    } else {
      layer_norm_rows<T>(cdata<T>(input), mdata<T>(out), M, N, wt.data(), bt.data(), static_cast<T>(eps), mp, rp);
    }
    return Status::Ok();
  });
}

Result<ChannelStats> batch_norm_stats(const Tensor& input) {
  LATHE_RETURN_IF_ERROR(check_channels_input(input, "batch_norm"));
  const int64_t C = input.sizes[1];
  ChannelStats st;
  st.mean.assign(C, 0);
  st.var.assign(C, 0);
  st.count = C == 0 ? 0 : input.numel() / C;
  const Tensor x = as_contiguous(as_dtype(input, DType::Float64));
  const double* p = cdata<double>(x);
  const int64_t N = input.sizes[0], inner = N == 0 || C == 0 ? 0 : st.count / N;
  for (int64_t c = 0; c < C; ++c) {
    double s = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) s += p[(n * C + c) * inner + i];
    const double m = st.count ? s / static_cast<double>(st.count) : 0.0;
    double ss = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) ss += (p[(n * C + c) * inner + i] - m) * (p[(n * C + c) * inner + i] - m);
    st.mean[c] = m;
    st.var[c] = st.count ? ss / static_cast<double>(st.count) : 0.0;
  }
  return st;
}

Status batch_norm_apply(const Tensor& input_raw, const std::vector<double>& mean, const std::vector<double>& var,
                        const Tensor* weight, const Tensor* bias, double eps, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_channels_input(input_raw, "batch_norm"));
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, input_raw.sizes, "batch_norm"));
  const int64_t C = input_raw.sizes[1];
  if (static_cast<int64_t>(mean.size()) != C || static_cast<int64_t>(var.size()) != C) {
    return make_error("batch_norm: statistics have " + std::to_string(mean.size()) + " channels, input has " + std::to_string(C));
  }
  LATHE_ASSIGN_OR_RETURN(auto w, channel_values(weight, C, 1.0, "batch_norm", "weight"));
  LATHE_ASSIGN_OR_RETURN(auto b, channel_values(bias, C, 0.0, "batch_norm", "bias"));
  const Tensor input = as_contiguous(input_raw);
  const int64_t N = input.sizes[0];
  const int64_t inner = N * C == 0 ? 0 : input.numel() / (N * C);
  return dispatch<Types::Float>(input.dtype, "batch_norm", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    for (int64_t c = 0; c < C; ++c) {
      // ATen's inference form: alpha = w * invstd, beta = b - mean * alpha.
      const T invstd = T(1) / std::sqrt(static_cast<T>(var[c]) + static_cast<T>(eps));
      const T alpha = static_cast<T>(w[c]) * invstd;
      const T beta = static_cast<T>(b[c]) - static_cast<T>(mean[c]) * alpha;
      for (int64_t n = 0; n < N; ++n) {
        const T* xs = x + (n * C + c) * inner;
        T* ys = y + (n * C + c) * inner;
        for (int64_t i = 0; i < inner; ++i) ys[i] = xs[i] * alpha + beta;
      }
    }
    return Status::Ok();
  });
}

Status group_norm_out(const Tensor& input_raw, const Tensor* weight, const Tensor* bias, int64_t groups, double eps,
                      Tensor& out, Tensor* mean, Tensor* rstd) {
  LATHE_RETURN_IF_ERROR(check_channels_input(input_raw, "group_norm"));
  const int64_t N = input_raw.sizes[0], C = input_raw.sizes[1];
  if (groups <= 0 || C % groups != 0) {
    return make_error("group_norm: " + std::to_string(C) + " channels do not split into " + std::to_string(groups) + " groups");
  }
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, input_raw.sizes, "group_norm"));
  if (mean) LATHE_RETURN_IF_ERROR(check_out(*mean, input_raw.dtype, {N, groups}, "group_norm"));
  if (rstd) LATHE_RETURN_IF_ERROR(check_out(*rstd, input_raw.dtype, {N, groups}, "group_norm"));
  LATHE_ASSIGN_OR_RETURN(auto w, channel_values(weight, C, 1.0, "group_norm", "weight"));
  LATHE_ASSIGN_OR_RETURN(auto b, channel_values(bias, C, 0.0, "group_norm", "bias"));
  const Tensor input = as_contiguous(input_raw);
  const int64_t HxW = N * C == 0 ? 0 : input.numel() / (N * C);
  const int64_t cpg = C / groups;
  return dispatch<Types::Float>(input.dtype, "group_norm", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t g = 0; g < groups; ++g) {
        const T* xs = x + (n * C + g * cpg) * HxW;
        const int64_t count = cpg * HxW;
        double s = 0;
        for (int64_t i = 0; i < count; ++i) s += xs[i];
        const double mu = count ? s / static_cast<double>(count) : 0.0;
        double ss = 0;
        for (int64_t i = 0; i < count; ++i) ss += (xs[i] - mu) * (xs[i] - mu);
        const T rs = T(1) / std::sqrt(static_cast<T>(count ? ss / static_cast<double>(count) : 0.0) + static_cast<T>(eps));
        if (mean) mdata<T>(*mean)[n * groups + g] = static_cast<T>(mu);
        if (rstd) mdata<T>(*rstd)[n * groups + g] = rs;
        for (int64_t c = 0; c < cpg; ++c) {
          const int64_t ch = g * cpg + c;
          const T scale = rs * static_cast<T>(w[ch]);
          const T shift = static_cast<T>(b[ch]) - scale * static_cast<T>(mu);
          for (int64_t i = 0; i < HxW; ++i) y[(n * C + ch) * HxW + i] = xs[c * HxW + i] * scale + shift;
        }
      }
    }
    return Status::Ok();
  });
}

Status weight_norm_out(const Tensor& v_raw, const Tensor& g_raw, int64_t dim, Tensor& w, Tensor* norm) {
  LATHE_RETURN_IF_ERROR(check_input(v_raw, "weight_norm", "v"));
  LATHE_RETURN_IF_ERROR(check_input(g_raw, "weight_norm", "g"));
  LATHE_RETURN_IF_ERROR(check_floating(v_raw, "weight_norm", "v"));
  const int64_t r = static_cast<int64_t>(v_raw.sizes.size());
  // dim -1 is ATen's "no dim": one norm over the whole tensor, not the last dim.
  int64_t outer = 1, len = 1, inner = v_raw.numel();
  if (dim != -1) {
    if (dim < 0 || dim >= std::max<int64_t>(r, 1)) return make_error("weight_norm: dim " + std::to_string(dim) + " out of range");
    outer = 1;
    len = r == 0 ? 1 : v_raw.sizes[dim];
    inner = 1;
    for (int64_t k = 0; k < dim; ++k) outer *= v_raw.sizes[k];
    for (int64_t k = dim + 1; k < r; ++k) inner *= v_raw.sizes[k];
  }
  if (g_raw.numel() != len) {
    return make_error("weight_norm: g has " + std::to_string(g_raw.numel()) + " elements, expected " + std::to_string(len));
  }
  LATHE_RETURN_IF_ERROR(check_out(w, v_raw.dtype, v_raw.sizes, "weight_norm"));
  if (norm) LATHE_RETURN_IF_ERROR(check_out(*norm, g_raw.dtype, g_raw.sizes, "weight_norm"));
  const Tensor v = as_contiguous(v_raw);
  LATHE_ASSIGN_OR_RETURN(auto g, channel_values(&g_raw, len, 1.0, "weight_norm", "g"));
  std::vector<double> sq(static_cast<size_t>(len), 0.0);
  return dispatch<Types::Float>(v.dtype, "weight_norm", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(v);
    T* y = mdata<T>(w);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < len; ++k) {
        const T* xs = x + (o * len + k) * inner;
        for (int64_t i = 0; i < inner; ++i) sq[k] += static_cast<double>(xs[i]) * static_cast<double>(xs[i]);
      }
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < len; ++k) {
        const T scale = static_cast<T>(g[k] / std::sqrt(sq[k]));
        const int64_t base = (o * len + k) * inner;
        for (int64_t i = 0; i < inner; ++i) y[base + i] = x[base + i] * scale;
      }
    }
    if (!norm) return Status::Ok();
    Tensor n = Tensor::empty(DType::Float64, g_raw.sizes);
    for (int64_t k = 0; k < len; ++k) mdata<double>(n)[k] = std::sqrt(sq[k]);
    return copy_into(n, *norm);
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

Status native_layer_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(auto shape, c.int_list("normalized_shape"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.optional_tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps", 1e-5));
  if (shape.size() > input->sizes.size()) return make_error("layer_norm: normalized_shape longer than the input rank");
  std::vector<int64_t> stat(input->sizes.begin(), input->sizes.end() - static_cast<int64_t>(shape.size()));
  stat.resize(input->sizes.size(), 1);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  Tensor* mean = nullptr;
  Tensor* rstd = nullptr;
  if (c.output_count() >= 3) {
    LATHE_ASSIGN_OR_RETURN(mean, c.alloc_output(1, input->dtype, stat));
    LATHE_ASSIGN_OR_RETURN(rstd, c.alloc_output(2, input->dtype, stat));
  }
  return layer_norm_out(*input, shape, weight, bias, eps, *out, mean, rstd);
}

struct BatchNormArgs {
  const Tensor* input;
  const Tensor* weight;
  const Tensor* bias;
  const Tensor* running_mean = nullptr;
  const Tensor* running_var = nullptr;
  bool training = false;
  double momentum = 0.1, eps = 1e-5;
};

Result<BatchNormArgs> batch_norm_args(KernelCall& c, bool has_running, bool has_training) {
  BatchNormArgs a{};
  LATHE_ASSIGN_OR_RETURN(a.input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(a.weight, c.optional_tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(a.bias, c.optional_tensor("bias"));
  if (has_running) {
    LATHE_ASSIGN_OR_RETURN(a.running_mean, c.optional_tensor("running_mean"));
    LATHE_ASSIGN_OR_RETURN(a.running_var, c.optional_tensor("running_var"));
  }
  if (has_training) {
    LATHE_ASSIGN_OR_RETURN(a.training, c.bool_arg("training"));
  }
  LATHE_ASSIGN_OR_RETURN(a.momentum, c.double_arg("momentum", 0.1));
  LATHE_ASSIGN_OR_RETURN(a.eps, c.double_arg("eps", 1e-5));
  LATHE_RETURN_IF_ERROR(check_channels_input(*a.input, "batch_norm"));
  if (!a.training && (!a.running_mean || !a.running_var)) {
    return make_error("batch_norm: inference needs running_mean and running_var");
  }
  return a;
}

// The batch-norm family shares one body. Outputs, in schema order:
//   out, save_mean, save_invstd [, new_running_mean, new_running_var]
// save_* are [C] batch statistics in training and empty [0] in inference
// (ATen's CPU convention). Only the functional form returns updated running
// statistics; the in-place forms would write into the program's buffers,
// which the runtime never does, so their training mode leaves them as is.
Status batch_norm_run(KernelCall& c, const BatchNormArgs& a, bool functional) {
  const int64_t C = a.input->sizes[1];
  std::vector<double> mean, var;
  ChannelStats st;
  if (a.training) {
    LATHE_ASSIGN_OR_RETURN(st, batch_norm_stats(*a.input));
    mean = st.mean;
    var = st.var;
  } else {
    LATHE_ASSIGN_OR_RETURN(mean, channel_values(a.running_mean, C, 0.0, "batch_norm", "running_mean"));
    LATHE_ASSIGN_OR_RETURN(var, channel_values(a.running_var, C, 1.0, "batch_norm", "running_var"));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a.input->dtype, a.input->sizes));
  LATHE_RETURN_IF_ERROR(batch_norm_apply(*a.input, mean, var, a.weight, a.bias, a.eps, *out));
  if (c.output_count() < 3) return Status::Ok();
  const DType dt = a.input->dtype;
  const std::vector<int64_t> stat_shape{a.training ? C : 0};
  LATHE_ASSIGN_OR_RETURN(Tensor * save_mean, c.alloc_output(1, dt, stat_shape));
  LATHE_ASSIGN_OR_RETURN(Tensor * save_invstd, c.alloc_output(2, dt, stat_shape));
  auto fill = [&](Tensor& t, const std::vector<double>& v) {
    Tensor d = Tensor::empty(DType::Float64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), mdata<double>(d));
    return copy_into(d, t);
  };
  if (a.training) {
    std::vector<double> invstd(C);
    for (int64_t k = 0; k < C; ++k) invstd[k] = 1.0 / std::sqrt(var[k] + a.eps);
    LATHE_RETURN_IF_ERROR(fill(*save_mean, mean));
    LATHE_RETURN_IF_ERROR(fill(*save_invstd, invstd));
  }
  if (!functional || c.output_count() < 5) return Status::Ok();
  std::vector<double> rm, rv;
  LATHE_ASSIGN_OR_RETURN(rm, channel_values(a.running_mean, C, 0.0, "batch_norm", "running_mean"));
  LATHE_ASSIGN_OR_RETURN(rv, channel_values(a.running_var, C, 1.0, "batch_norm", "running_var"));
  if (a.training) {
    const double n = static_cast<double>(st.count);
    for (int64_t k = 0; k < C; ++k) {
      rm[k] = a.momentum * mean[k] + (1 - a.momentum) * rm[k];
      rv[k] = a.momentum * var[k] * (n > 1 ? n / (n - 1) : 1.0) + (1 - a.momentum) * rv[k];
    }
  }
  const DType sdt = a.running_mean ? a.running_mean->dtype : dt;
  LATHE_ASSIGN_OR_RETURN(Tensor * new_rm, c.alloc_output(3, sdt, {C}));
  LATHE_RETURN_IF_ERROR(fill(*new_rm, rm));
  LATHE_ASSIGN_OR_RETURN(Tensor * new_rv, c.alloc_output(4, sdt, {C}));
  return fill(*new_rv, rv);
}

Status native_batch_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(BatchNormArgs a, batch_norm_args(c, true, true));
  return batch_norm_run(c, a, false);
}
Status legit_no_training_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(BatchNormArgs a, batch_norm_args(c, true, false));
  return batch_norm_run(c, a, false);
}
Status legit_no_stats_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(BatchNormArgs a, batch_norm_args(c, false, true));
  a.training = true;  // without running stats there are only batch stats
  return batch_norm_run(c, a, false);
}
Status legit_functional_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(BatchNormArgs a, batch_norm_args(c, true, true));
  return batch_norm_run(c, a, true);
}

Status group_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.optional_tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  LATHE_ASSIGN_OR_RETURN(int64_t groups, c.int_arg("group"));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps"));
  LATHE_RETURN_IF_ERROR(check_channels_input(*input, "group_norm"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  LATHE_ASSIGN_OR_RETURN(Tensor * mean, c.alloc_output(1, input->dtype, {input->sizes[0], groups}));
  LATHE_ASSIGN_OR_RETURN(Tensor * rstd, c.alloc_output(2, input->dtype, {input->sizes[0], groups}));
  return group_norm_out(*input, weight, bias, groups, eps, *out, mean, rstd);
}

// group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled): the
// output of native_group_norm without its statistics.
Status group_norm_single_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(int64_t groups, c.int_arg("num_groups"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.optional_tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps", 1e-5));
  LATHE_RETURN_IF_ERROR(check_channels_input(*input, "group_norm"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  return group_norm_out(*input, weight, bias, groups, eps, *out, nullptr, nullptr);
}

// instance_norm: with use_input_stats, statistics per (sample, channel),
// which is group norm with one channel per group; without, the running
// statistics per channel, as batch norm in inference. The running stats are
// never updated (the runtime does not write the program's buffers).
Status instance_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.optional_tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* running_mean, c.optional_tensor("running_mean"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* running_var, c.optional_tensor("running_var"));
  LATHE_ASSIGN_OR_RETURN(bool use_input_stats, c.bool_arg("use_input_stats"));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps"));
  LATHE_RETURN_IF_ERROR(check_channels_input(*input, "instance_norm"));
  const int64_t C = input->sizes[1];
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  if (use_input_stats) return group_norm_out(*input, weight, bias, C, eps, *out, nullptr, nullptr);
  if (!running_mean || !running_var) {
    return c.arg_error("running_mean", "use_input_stats=False needs running_mean and running_var");
  }
  LATHE_ASSIGN_OR_RETURN(auto mean, channel_values(running_mean, C, 0.0, "instance_norm", "running_mean"));
  LATHE_ASSIGN_OR_RETURN(auto var, channel_values(running_var, C, 1.0, "instance_norm", "running_var"));
  return batch_norm_apply(*input, mean, var, weight, bias, eps, *out);
}

// _weight_norm(v, g, dim) -> w; _weight_norm_interface -> (w, norm).
Status weight_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* v, c.tensor("v"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* g, c.tensor("g"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim", 0));
  if (dim < -1) {
    LATHE_ASSIGN_OR_RETURN(dim, normalize_dim(dim, static_cast<int64_t>(v->sizes.size())));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * w, c.alloc_output(0, v->dtype, v->sizes));
  Tensor* norm = nullptr;
  if (c.output_count() > 1) {
    LATHE_ASSIGN_OR_RETURN(norm, c.alloc_output(1, g->dtype, g->sizes));
  }
  return weight_norm_out(*v, *g, dim, *w, norm);
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  register_overloads(r, "native_layer_norm", {"default"}, native_layer_norm_kernel);
  register_overloads(r, "layer_norm", {"default"}, native_layer_norm_kernel);
  register_overloads(r, "native_batch_norm", {"default"}, native_batch_norm_kernel);
  register_overloads(r, "batch_norm", {"default"}, native_batch_norm_kernel);
  register_overloads(r, "_native_batch_norm_legit_no_training", {"default"}, legit_no_training_kernel);
  register_overloads(r, "_native_batch_norm_legit", {"default"}, native_batch_norm_kernel);
  register_overloads(r, "_native_batch_norm_legit", {"no_stats"}, legit_no_stats_kernel);
  register_overloads(r, "_native_batch_norm_legit_functional", {"default"}, legit_functional_kernel);
  register_overloads(r, "native_group_norm", {"default"}, group_norm_kernel);
  register_overloads(r, "group_norm", {"default"}, group_norm_single_kernel);
  register_overloads(r, "instance_norm", {"default"}, instance_norm_kernel);
  register_overloads(r, "_weight_norm", {"default"}, weight_norm_kernel);
  register_overloads(r, "_weight_norm_interface", {"default"}, weight_norm_kernel);
}

}  // namespace lathe::kernels
