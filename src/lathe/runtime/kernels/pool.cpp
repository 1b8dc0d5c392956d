#include "lathe/runtime/kernels/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

struct PoolGeom {
  int64_t planes, H, W, OH, OW, kH, kW, sH, sW, pH, pW, dH, dW;
};

// ATen's pooling_output_shape: with ceil_mode the last window must start
// inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Result<PoolGeom> pool_geom(const Tensor& input, const PoolParams& p) {
  const size_t r = input.sizes.size();
  if (r != 3 && r != 4) return make_error("pool2d: input must be 3-D or 4-D, got " + shape_string(input.sizes));
  auto two = [](const std::vector<int64_t>& v, int64_t dflt, size_t i) { return v.empty() ? dflt : v[v.size() == 1 ? 0 : i]; };
  if (p.kernel.empty() || p.kernel.size() > 2) return make_error("pool2d: kernel_size needs 1 or 2 values");
  PoolGeom g{};
  g.H = input.sizes[r - 2];
  g.W = input.sizes[r - 1];
  g.planes = input.numel() / std::max<int64_t>(g.H * g.W, 1);
  if (g.H * g.W == 0) g.planes = numel_of(std::vector<int64_t>(input.sizes.begin(), input.sizes.end() - 2));
  g.kH = two(p.kernel, 1, 0);
  g.kW = two(p.kernel, 1, 1);
  g.sH = two(p.stride, g.kH, 0);
  g.sW = two(p.stride, g.kW, 1);
  g.pH = two(p.padding, 0, 0);
  g.pW = two(p.padding, 0, 1);
  g.dH = two(p.dilation, 1, 0);
  g.dW = two(p.dilation, 1, 1);
  if (g.kH <= 0 || g.kW <= 0 || g.sH <= 0 || g.sW <= 0 || g.dH <= 0 || g.dW <= 0) {
    return make_error("pool2d: kernel, stride and dilation must be positive");
  }
  // From the file, like convolution's (conv.cpp): bounded, the output-size
  // arithmetic stays far from int64 overflow (a padding of -6e18 overflowed
  // the check below; found by fuzz_runtime).
  constexpr int64_t kMaxAttr = int64_t{1} << 20;
  for (int64_t v : {g.kH, g.kW, g.sH, g.sW, g.pH, g.pW, g.dH, g.dW}) {
    if (v < 0 || v > kMaxAttr) {
      return make_error("pool2d: kernel_size, stride, padding and dilation must lie in [0, 2^20], got " +
                        std::to_string(v));
    }
  }
  if (g.pH * 2 > g.kH || g.pW * 2 > g.kW) return make_error("pool2d: padding must be at most half the kernel size");
  g.OH = pooled_size(g.H, g.kH, g.pH, g.sH, g.dH, p.ceil_mode);
  g.OW = pooled_size(g.W, g.kW, g.pW, g.sW, g.dW, p.ceil_mode);
  if (g.OH <= 0 || g.OW <= 0) return make_error("pool2d: input " + shape_string(input.sizes) + " is too small");
  return g;
}

std::vector<int64_t> out_shape(const Tensor& in, int64_t oh, int64_t ow) {
  std::vector<int64_t> s(in.sizes.begin(), in.sizes.end() - 2);
  s.push_back(oh);
  s.push_back(ow);
  return s;
}

}  // namespace

Result<std::vector<int64_t>> pool2d_shape(const Tensor& input, const PoolParams& p) {
  LATHE_ASSIGN_OR_RETURN(PoolGeom g, pool_geom(input, p));
  return out_shape(input, g.OH, g.OW);
}

Status max_pool2d_out(const Tensor& input_raw, const PoolParams& p, Tensor& out, Tensor* indices) {
  LATHE_RETURN_IF_ERROR(check_input(input_raw, "max_pool2d", "input"));
  LATHE_ASSIGN_OR_RETURN(PoolGeom g, pool_geom(input_raw, p));
  const auto shape = out_shape(input_raw, g.OH, g.OW);
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, shape, "max_pool2d"));
  if (indices) LATHE_RETURN_IF_ERROR(check_out(*indices, DType::Int64, shape, "max_pool2d"));
  const Tensor input = as_contiguous(input_raw);
  return dispatch<Types::Numeric>(input.dtype, "max_pool2d", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    int64_t* ix = indices ? mdata<int64_t>(*indices) : nullptr;
    for (int64_t pl = 0; pl < g.planes; ++pl) {
      const T* xp = x + pl * g.H * g.W;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          // ATen's loop: start at -inf (lowest for ints) with the first
          // in-bounds position; a larger value or any NaN takes over.
          T best = std::numeric_limits<T>::lowest();
          if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
          int64_t ih0 = oh * g.sH - g.pH, iw0 = ow * g.sW - g.pW;
          while (ih0 < 0) ih0 += g.dH;
          while (iw0 < 0) iw0 += g.dW;
          int64_t best_i = ih0 * g.W + iw0;
          for (int64_t kh = 0; kh < g.kH; ++kh) {
            const int64_t ih = oh * g.sH - g.pH + kh * g.dH;
            if (ih < 0 || ih >= g.H) continue;
            for (int64_t kw = 0; kw < g.kW; ++kw) {
              const int64_t iw = ow * g.sW - g.pW + kw * g.dW;
              if (iw < 0 || iw >= g.W) continue;
              const T v = xp[ih * g.W + iw];
              bool take = v > best;
              if constexpr (std::is_floating_point_v<T>) take = take || std::isnan(v);
              if (take) {
                best = v;
                best_i = ih * g.W + iw;
              }
            }
          }
          y[(pl * g.OH + oh) * g.OW + ow] = best;
          if (ix) ix[(pl * g.OH + oh) * g.OW + ow] = best_i;
        }
    }
    return Status::Ok();
  });
}

Status avg_pool2d_out(const Tensor& input_raw, const PoolParams& p, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(input_raw, "avg_pool2d", "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, "avg_pool2d", "input"));
  LATHE_ASSIGN_OR_RETURN(PoolGeom g, pool_geom(input_raw, p));
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, out_shape(input_raw, g.OH, g.OW), "avg_pool2d"));
  if (p.divisor_override && *p.divisor_override == 0) return make_error("avg_pool2d: divisor must be non-zero");
  const Tensor input = as_contiguous(input_raw);
  return dispatch<Types::Float>(input.dtype, "avg_pool2d", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    for (int64_t pl = 0; pl < g.planes; ++pl) {
      const T* xp = x + pl * g.H * g.W;
      for (int64_t oh = 0; oh < g.OH; ++oh)
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          // ATen: the window clipped to the padded input sets pool_size;
          // clipped to the input it sets the summed region.
          int64_t h0 = oh * g.sH - g.pH, w0 = ow * g.sW - g.pW;
          int64_t h1 = std::min(h0 + g.kH, g.H + g.pH), w1 = std::min(w0 + g.kW, g.W + g.pW);
          const int64_t pool_size = (h1 - h0) * (w1 - w0);
          h0 = std::max<int64_t>(h0, 0);
          w0 = std::max<int64_t>(w0, 0);
          h1 = std::min(h1, g.H);
          w1 = std::min(w1, g.W);
          T sum = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += xp[ih * g.W + iw];
          int64_t div = p.divisor_override ? *p.divisor_override
                                           : (p.count_include_pad ? pool_size : (h1 - h0) * (w1 - w0));
          y[(pl * g.OH + oh) * g.OW + ow] = sum / static_cast<T>(div);
        }
    }
    return Status::Ok();
  });
}

Status adaptive_avg_pool2d_out(const Tensor& input_raw, const std::vector<int64_t>& output_size, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(input_raw, "adaptive_avg_pool2d", "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, "adaptive_avg_pool2d", "input"));
  const size_t r = input_raw.sizes.size();
  if ((r != 3 && r != 4) || output_size.size() != 2) {
    return make_error("adaptive_avg_pool2d: needs a 3-D/4-D input and 2 output sizes");
  }
  const int64_t H = input_raw.sizes[r - 2], W = input_raw.sizes[r - 1], OH = output_size[0], OW = output_size[1];
  if (H == 0 || W == 0 || OH < 0 || OW < 0) return make_error("adaptive_avg_pool2d: empty input plane");
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, out_shape(input_raw, OH, OW), "adaptive_avg_pool2d"));
  const Tensor input = as_contiguous(input_raw);
  const int64_t planes = input.numel() / (H * W);
  return dispatch<Types::Float>(input.dtype, "adaptive_avg_pool2d", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t h0 = (oh * H) / OH, h1 = ((oh + 1) * H + OH - 1) / OH;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t w0 = (ow * W) / OW, w1 = ((ow + 1) * W + OW - 1) / OW;
          T sum = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += x[(pl * H + ih) * W + iw];
          y[(pl * OH + oh) * OW + ow] = sum / static_cast<T>((h1 - h0) * (w1 - w0));
        }
      }
    return Status::Ok();
  });
}

// ---- 3-D pooling, adaptive max, col2im --------------------------------------

namespace {

// A [planes, D, H, W] view of a pooling input ([N, C, D, H, W] or
// [C, D, H, W]; the 2-D adaptive max pool uses D = 1) and its output extents.
struct Vol {
  int64_t planes, in[3], out[3];
};

Vol volume(const Tensor& input, size_t spatial) {
  Vol v{};
  const size_t r = input.sizes.size();
  v.planes = numel_of(std::vector<int64_t>(input.sizes.begin(), input.sizes.end() - static_cast<int64_t>(spatial)));
  for (size_t i = 0; i < 3; ++i) v.in[i] = v.out[i] = 1;
  for (size_t i = 0; i < spatial; ++i) v.in[3 - spatial + i] = input.sizes[r - spatial + i];
  return v;
}

std::vector<int64_t> vol_shape(const Tensor& in, size_t spatial, const int64_t* out) {
  std::vector<int64_t> s(in.sizes.begin(), in.sizes.end() - static_cast<int64_t>(spatial));
  s.insert(s.end(), out + 3 - spatial, out + 3);
  return s;
}

struct Pool3Geom {
  Vol v;
  int64_t k[3], s[3], p[3], d[3];
};

Result<Pool3Geom> pool3d_geom(const Tensor& input, const PoolParams& p, const char* op) {
  const size_t r = input.sizes.size();
  if (r != 4 && r != 5) return make_error(std::string(op) + ": input must be 4-D or 5-D, got " + shape_string(input.sizes));
  auto three = [](const std::vector<int64_t>& v, int64_t dflt, size_t i) { return v.empty() ? dflt : v[v.size() == 1 ? 0 : i]; };
  for (const auto* v : {&p.kernel, &p.stride, &p.padding, &p.dilation}) {
    if (v->size() != 0 && v->size() != 1 && v->size() != 3) return make_error(std::string(op) + ": kernel_size, stride, padding and dilation need 1 or 3 values");
  }
  if (p.kernel.empty()) return make_error(std::string(op) + ": kernel_size needs 1 or 3 values");
  Pool3Geom g{};
  g.v = volume(input, 3);
  for (size_t i = 0; i < 3; ++i) {
    g.k[i] = three(p.kernel, 1, i);
    g.s[i] = three(p.stride, g.k[i], i);
    g.p[i] = three(p.padding, 0, i);
    g.d[i] = three(p.dilation, 1, i);
    if (g.k[i] <= 0 || g.s[i] <= 0 || g.d[i] <= 0 || g.p[i] < 0) return make_error(std::string(op) + ": kernel, stride and dilation must be positive, padding non-negative");
    if (g.k[i] > (int64_t{1} << 20) || g.s[i] > (int64_t{1} << 20) || g.d[i] > (int64_t{1} << 20) || g.p[i] > (int64_t{1} << 20)) return make_error(std::string(op) + ": kernel, stride, padding or dilation is out of range");
    if (g.p[i] * 2 > g.k[i]) return make_error(std::string(op) + ": padding must be at most half the kernel size");
    if (g.v.in[i] <= 0) return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " has an empty spatial dim");
    g.v.out[i] = pooled_size(g.v.in[i], g.k[i], g.p[i], g.s[i], g.d[i], p.ceil_mode);
    if (g.v.out[i] <= 0) return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " is too small");
  }
  return g;
}

// Calls f(od, oh, ow, out_index) for every output position of a plane.
template <typename F>
void for_each_out(const Vol& v, F&& f) {
  int64_t o = 0;
  for (int64_t a = 0; a < v.out[0]; ++a)
    for (int64_t b = 0; b < v.out[1]; ++b)
      for (int64_t c = 0; c < v.out[2]; ++c) f(a, b, c, o++);
}

// Max over the taps of one window; NaN wins, ties keep the first.
template <typename T>
void window_max(const T* x, const Vol& v, const int64_t* start, const int64_t* count, const int64_t* step, T& best,
                int64_t& best_i) {
  best = std::numeric_limits<T>::lowest();
  if constexpr (std::is_floating_point_v<T>) best = -std::numeric_limits<T>::infinity();
  int64_t first[3];
  for (int i = 0; i < 3; ++i) {
    first[i] = start[i];
    while (first[i] < 0) first[i] += step[i];
  }
  best_i = (first[0] * v.in[1] + first[1]) * v.in[2] + first[2];
  for (int64_t a = 0; a < count[0]; ++a) {
    const int64_t id = start[0] + a * step[0];
    if (id < 0 || id >= v.in[0]) continue;
    for (int64_t b = 0; b < count[1]; ++b) {
      const int64_t ih = start[1] + b * step[1];
      if (ih < 0 || ih >= v.in[1]) continue;
      for (int64_t c = 0; c < count[2]; ++c) {
        const int64_t iw = start[2] + c * step[2];
        if (iw < 0 || iw >= v.in[2]) continue;
        const int64_t i = (id * v.in[1] + ih) * v.in[2] + iw;
        bool take = x[i] > best;
        if constexpr (std::is_floating_point_v<T>) take = take || std::isnan(x[i]);
        if (take) {
          best = x[i];
          best_i = i;
        }
      }
    }
  }
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
void adaptive_window(const Vol& v, const int64_t* o, int64_t* start, int64_t* count) {
  for (int i = 0; i < 3; ++i) {
    start[i] = (o[i] * v.in[i]) / v.out[i];
    count[i] = ((o[i] + 1) * v.in[i] + v.out[i] - 1) / v.out[i] - start[i];
  }
}

Result<Vol> adaptive_vol(const Tensor& input, const std::vector<int64_t>& output_size, size_t spatial, const char* op) {
  const size_t r = input.sizes.size();
  if ((r != spatial + 1 && r != spatial + 2) || output_size.size() != spatial) {
    return make_error(std::string(op) + ": needs a " + std::to_string(spatial + 1) + "-D or " + std::to_string(spatial + 2) +
                      "-D input and " + std::to_string(spatial) + " output sizes, got " + shape_string(input.sizes));
  }
  Vol v = volume(input, spatial);
  for (size_t i = 0; i < spatial; ++i) {
    v.out[3 - spatial + i] = output_size[i];
    if (output_size[i] < 0 || output_size[i] > (int64_t{1} << 31)) return make_error(std::string(op) + ": output_size " + shape_string(output_size) + " is out of range");
  }
  for (size_t i = 0; i < 3; ++i) {
    if (v.in[i] <= 0) return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " has an empty spatial dim");
  }
  return v;
}

}  // namespace

Result<std::vector<int64_t>> pool3d_shape(const Tensor& input, const PoolParams& p, const char* op) {
  LATHE_ASSIGN_OR_RETURN(Pool3Geom g, pool3d_geom(input, p, op));
  return vol_shape(input, 3, g.v.out);
}

Status max_pool3d_out(const Tensor& input_raw, const PoolParams& p, Tensor& out, Tensor* indices) {
  const char* op = "max_pool3d";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_ASSIGN_OR_RETURN(Pool3Geom g, pool3d_geom(input_raw, p, op));
  const auto shape = vol_shape(input_raw, 3, g.v.out);
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, shape, op));
  if (indices) LATHE_RETURN_IF_ERROR(check_out(*indices, DType::Int64, shape, op));
  const Tensor input = as_contiguous(input_raw);
  const int64_t in_plane = g.v.in[0] * g.v.in[1] * g.v.in[2], out_plane = g.v.out[0] * g.v.out[1] * g.v.out[2];
  return dispatch<Types::Numeric>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t pl = 0; pl < g.v.planes; ++pl) {
      const T* x = cdata<T>(input) + pl * in_plane;
      T* y = mdata<T>(out) + pl * out_plane;
      int64_t* ix = indices ? mdata<int64_t>(*indices) + pl * out_plane : nullptr;
      for_each_out(g.v, [&](int64_t a, int64_t b, int64_t c, int64_t o) {
        const int64_t start[3] = {a * g.s[0] - g.p[0], b * g.s[1] - g.p[1], c * g.s[2] - g.p[2]};
        int64_t best_i = 0;
        window_max(x, g.v, start, g.k, g.d, y[o], best_i);
        if (ix) ix[o] = best_i;
      });
    }
    return Status::Ok();
  });
}

Status avg_pool3d_out(const Tensor& input_raw, const PoolParams& p, Tensor& out) {
  const char* op = "avg_pool3d";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, op, "input"));
  LATHE_ASSIGN_OR_RETURN(Pool3Geom g, pool3d_geom(input_raw, p, op));
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, vol_shape(input_raw, 3, g.v.out), op));
  if (p.divisor_override && *p.divisor_override == 0) return make_error(std::string(op) + ": divisor must be non-zero");
  const Tensor input = as_contiguous(input_raw);
  const int64_t in_plane = g.v.in[0] * g.v.in[1] * g.v.in[2], out_plane = g.v.out[0] * g.v.out[1] * g.v.out[2];
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t pl = 0; pl < g.v.planes; ++pl) {
      const T* x = cdata<T>(input) + pl * in_plane;
      T* y = mdata<T>(out) + pl * out_plane;
      for_each_out(g.v, [&](int64_t a, int64_t b, int64_t c, int64_t o) {
        // As in 2-D: the window clipped to the padded input sets pool_size,
        // clipped to the input the summed region.
        const int64_t oi[3] = {a, b, c};
        int64_t lo[3], hi[3], pool_size = 1, inside = 1;
        for (int i = 0; i < 3; ++i) {
          lo[i] = oi[i] * g.s[i] - g.p[i];
          hi[i] = std::min(lo[i] + g.k[i], g.v.in[i] + g.p[i]);
          pool_size *= hi[i] - lo[i];
          lo[i] = std::max<int64_t>(lo[i], 0);
          hi[i] = std::min(hi[i], g.v.in[i]);
          inside *= std::max<int64_t>(hi[i] - lo[i], 0);
        }
        T sum = 0;
        for (int64_t id = lo[0]; id < hi[0]; ++id)
          for (int64_t ih = lo[1]; ih < hi[1]; ++ih)
            for (int64_t iw = lo[2]; iw < hi[2]; ++iw) sum += x[(id * g.v.in[1] + ih) * g.v.in[2] + iw];
        const int64_t div = p.divisor_override ? *p.divisor_override : (p.count_include_pad ? pool_size : inside);
        y[o] = sum / static_cast<T>(div);
      });
    }
    return Status::Ok();
  });
}

Status adaptive_avg_pool3d_out(const Tensor& input_raw, const std::vector<int64_t>& output_size, Tensor& out) {
  const char* op = "adaptive_avg_pool3d";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, op, "input"));
  LATHE_ASSIGN_OR_RETURN(Vol v, adaptive_vol(input_raw, output_size, 3, op));
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, vol_shape(input_raw, 3, v.out), op));
  const Tensor input = as_contiguous(input_raw);
  const int64_t in_plane = v.in[0] * v.in[1] * v.in[2], out_plane = v.out[0] * v.out[1] * v.out[2];
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t pl = 0; pl < v.planes; ++pl) {
      const T* x = cdata<T>(input) + pl * in_plane;
      T* y = mdata<T>(out) + pl * out_plane;
      for_each_out(v, [&](int64_t a, int64_t b, int64_t c, int64_t o) {
        const int64_t oi[3] = {a, b, c};
        int64_t st[3], n[3];
        adaptive_window(v, oi, st, n);
        T sum = 0;
        for (int64_t id = st[0]; id < st[0] + n[0]; ++id)
          for (int64_t ih = st[1]; ih < st[1] + n[1]; ++ih)
            for (int64_t iw = st[2]; iw < st[2] + n[2]; ++iw) sum += x[(id * v.in[1] + ih) * v.in[2] + iw];
        y[o] = sum / static_cast<T>(n[0] * n[1] * n[2]);
      });
    }
    return Status::Ok();
  });
}

Status adaptive_max_pool2d_out(const Tensor& input_raw, const std::vector<int64_t>& output_size, Tensor& out,
                               Tensor& indices) {
  const char* op = "adaptive_max_pool2d";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_ASSIGN_OR_RETURN(Vol v, adaptive_vol(input_raw, output_size, 2, op));
  const auto shape = vol_shape(input_raw, 2, v.out);
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, shape, op));
  LATHE_RETURN_IF_ERROR(check_out(indices, DType::Int64, shape, op));
  const Tensor input = as_contiguous(input_raw);
  const int64_t in_plane = v.in[1] * v.in[2], out_plane = v.out[1] * v.out[2];
  return dispatch<Types::Numeric>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const int64_t step[3] = {1, 1, 1};
    for (int64_t pl = 0; pl < v.planes; ++pl) {
      const T* x = cdata<T>(input) + pl * in_plane;
      T* y = mdata<T>(out) + pl * out_plane;
      int64_t* ix = mdata<int64_t>(indices) + pl * out_plane;
      for_each_out(v, [&](int64_t a, int64_t b, int64_t c, int64_t o) {
        const int64_t oi[3] = {a, b, c};
        int64_t st[3], n[3];
        adaptive_window(v, oi, st, n);
        window_max(x, v, st, n, step, y[o], ix[o]);
      });
    }
    return Status::Ok();
  });
}

Result<std::vector<int64_t>> col2im_shape(const Tensor& input, const Col2imParams& p) {
  const size_t r = input.sizes.size();
  auto two = [](const std::vector<int64_t>& v) { return v.size() == 2; };
  if (!two(p.output_size) || !two(p.kernel) || !two(p.dilation) || !two(p.padding) || !two(p.stride)) {
    return make_error("col2im: output_size, kernel_size, dilation, padding and stride need 2 values each");
  }
  if (r != 2 && r != 3) return make_error("col2im: input must be 2-D or 3-D, got " + shape_string(input.sizes));
  int64_t blocks = 1;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t out = p.output_size[i], k = p.kernel[i], d = p.dilation[i], pad = p.padding[i], s = p.stride[i];
    if (k <= 0 || d <= 0 || s <= 0 || pad < 0 || out <= 0) return make_error("col2im: kernel_size, dilation, stride and output_size must be positive, padding non-negative");
    constexpr int64_t kMax = int64_t{1} << 20;
    if (k > kMax || d > kMax || s > kMax || pad > kMax || out > (int64_t{1} << 31)) return make_error("col2im: an attribute is out of range");
    const int64_t span = out + 2 * pad - d * (k - 1) - 1;
    if (span < 0) return make_error("col2im: kernel does not fit the padded output " + shape_string(p.output_size));
    blocks *= span / s + 1;
  }
  const int64_t rows = input.sizes[r - 2], cols = input.sizes[r - 1], kk = p.kernel[0] * p.kernel[1];
  if (rows % kk != 0 || rows == 0) return make_error("col2im: input dim " + std::to_string(r - 2) + " (" + std::to_string(rows) + ") must be a positive multiple of the kernel size " + std::to_string(kk));
  if (cols != blocks) return make_error("col2im: input dim " + std::to_string(r - 1) + " (" + std::to_string(cols) + ") must equal the number of sliding blocks " + std::to_string(blocks));
  std::vector<int64_t> shape(input.sizes.begin(), input.sizes.end() - 2);
  shape.push_back(rows / kk);
  shape.push_back(p.output_size[0]);
  shape.push_back(p.output_size[1]);
  return shape;
}

Status col2im_out(const Tensor& input_raw, const Col2imParams& p, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(input_raw, "col2im", "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, "col2im", "input"));
  LATHE_ASSIGN_OR_RETURN(auto shape, col2im_shape(input_raw, p));
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, shape, "col2im"));
  const Tensor input = as_contiguous(input_raw);
  const int64_t H = p.output_size[0], W = p.output_size[1], kH = p.kernel[0], kW = p.kernel[1];
  const int64_t bH = (H + 2 * p.padding[0] - p.dilation[0] * (kH - 1) - 1) / p.stride[0] + 1;
  const int64_t bW = (W + 2 * p.padding[1] - p.dilation[1] * (kW - 1) - 1) / p.stride[1] + 1;
  const int64_t planes = numel_of(std::vector<int64_t>(shape.begin(), shape.end() - 2));  // batch * channels
  return dispatch<Types::Float>(input.dtype, "col2im", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = mdata<T>(out);
    std::fill(y, y + out.numel(), T(0));
    const T* x = cdata<T>(input);
    // Row (c, ki, kj) of the column matrix holds tap (ki, kj) of every block.
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t ki = 0; ki < kH; ++ki)
        for (int64_t kj = 0; kj < kW; ++kj) {
          const T* row = x + ((pl * kH + ki) * kW + kj) * bH * bW;
          for (int64_t bi = 0; bi < bH; ++bi) {
            const int64_t h = bi * p.stride[0] - p.padding[0] + ki * p.dilation[0];
            if (h < 0 || h >= H) continue;
            for (int64_t bj = 0; bj < bW; ++bj) {
              const int64_t w = bj * p.stride[1] - p.padding[1] + kj * p.dilation[1];
              if (w >= 0 && w < W) y[(pl * H + h) * W + w] += row[bi * bW + bj];
            }
          }
        }
    return Status::Ok();
  });
}

namespace {

Result<PoolParams> pool_params(KernelCall& c, bool is_max) {
  PoolParams p;
  LATHE_ASSIGN_OR_RETURN(p.kernel, c.int_list("kernel_size"));
  LATHE_ASSIGN_OR_RETURN(p.stride, c.int_list("stride", {}));
  LATHE_ASSIGN_OR_RETURN(p.padding, c.int_list("padding", {0}));
  LATHE_ASSIGN_OR_RETURN(p.ceil_mode, c.bool_arg("ceil_mode", false));
  if (is_max) {
    LATHE_ASSIGN_OR_RETURN(p.dilation, c.int_list("dilation", {1}));
  } else {
    LATHE_ASSIGN_OR_RETURN(p.count_include_pad, c.bool_arg("count_include_pad", true));
    LATHE_ASSIGN_OR_RETURN(p.divisor_override, c.optional_int("divisor_override"));
  }
  return p;
}

Status max_pool3d_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool_params(c, true));
  LATHE_ASSIGN_OR_RETURN(auto shape, pool3d_shape(*self, p, "max_pool3d"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(1, DType::Int64, shape));
  return max_pool3d_out(*self, p, *out, idx);
}

Status avg_pool3d_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool_params(c, false));
  LATHE_ASSIGN_OR_RETURN(auto shape, pool3d_shape(*self, p, "avg_pool3d"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return avg_pool3d_out(*self, p, *out);
}

// Output shape of an adaptive pool: the leading dims, then output_size.
Result<std::vector<int64_t>> adaptive_shape(KernelCall& c, const Tensor& self, size_t spatial, std::vector<int64_t>& size) {
  LATHE_ASSIGN_OR_RETURN(size, c.int_list("output_size"));
  if (size.size() == 1) size.assign(spatial, size[0]);
  if (size.size() != spatial) return c.arg_error("output_size", "needs " + std::to_string(spatial) + " values");
  if (self.sizes.size() != spatial + 1 && self.sizes.size() != spatial + 2) {
    return c.arg_error("self", "must be " + std::to_string(spatial + 1) + "-D or " + std::to_string(spatial + 2) + "-D, got " + shape_string(self.sizes));
  }
  std::vector<int64_t> shape(self.sizes.begin(), self.sizes.end() - static_cast<int64_t>(spatial));
  shape.insert(shape.end(), size.begin(), size.end());
  return shape;
}

Status adaptive_avg_pool3d_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  std::vector<int64_t> size;
  LATHE_ASSIGN_OR_RETURN(auto shape, adaptive_shape(c, *self, 3, size));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return adaptive_avg_pool3d_out(*self, size, *out);
}

Status adaptive_max_pool2d_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  std::vector<int64_t> size;
  LATHE_ASSIGN_OR_RETURN(auto shape, adaptive_shape(c, *self, 2, size));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(1, DType::Int64, shape));
  return adaptive_max_pool2d_out(*self, size, *out, *idx);
}

Status col2im_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  Col2imParams p;
  LATHE_ASSIGN_OR_RETURN(p.output_size, c.int_list("output_size"));
  LATHE_ASSIGN_OR_RETURN(p.kernel, c.int_list("kernel_size"));
  LATHE_ASSIGN_OR_RETURN(p.dilation, c.int_list("dilation"));
  LATHE_ASSIGN_OR_RETURN(p.padding, c.int_list("padding"));
  LATHE_ASSIGN_OR_RETURN(p.stride, c.int_list("stride"));
  // A single value stands for both dims (int[2] accepts one).
  for (auto* v : {&p.output_size, &p.kernel, &p.dilation, &p.padding, &p.stride}) {
    if (v->size() == 1) v->push_back((*v)[0]);
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, col2im_shape(*self, p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return col2im_out(*self, p, *out);
}

template <bool with_indices>
Status max_pool_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool_params(c, true));
  LATHE_ASSIGN_OR_RETURN(auto shape, pool2d_shape(*self, p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  Tensor* idx = nullptr;
  if (with_indices) {
    LATHE_ASSIGN_OR_RETURN(idx, c.alloc_output(1, DType::Int64, shape));
  }
  return max_pool2d_out(*self, p, *out, idx);
}

Status avg_pool_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool_params(c, false));
  LATHE_ASSIGN_OR_RETURN(auto shape, pool2d_shape(*self, p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return avg_pool2d_out(*self, p, *out);
}

Status adaptive_avg_pool_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("output_size"));
  if (size.size() == 1) size.push_back(size[0]);
  if (self->sizes.size() < 2 || size.size() != 2) return make_error("adaptive_avg_pool2d: bad input or output_size");
  std::vector<int64_t> shape(self->sizes.begin(), self->sizes.end() - 2);
  shape.insert(shape.end(), size.begin(), size.end());
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return adaptive_avg_pool2d_out(*self, size, *out);
}

// ---- 1-D pools: the 2-D kernels over a unit height ---------------------------
// [N, C, L] / [C, L] is viewed as [N, C, 1, L]; the window gets a height of 1.

// `t` with a unit dim inserted before its last one (a view).
Tensor with_unit_height(const Tensor& t) {
  std::vector<int64_t> sizes = t.sizes, strides = t.strides;
  sizes.insert(sizes.end() - 1, 1);
  strides.insert(strides.end() - 1, strides.empty() ? 1 : strides.back() * sizes.back());
  return make_view(t, sizes, strides, t.storage_offset);
}

Result<PoolParams> pool1d_params(KernelCall& c, const Tensor& self, bool is_max) {
  if (self.sizes.size() != 2 && self.sizes.size() != 3) {
    return c.arg_error("self", "expected a 2-D or 3-D input, got " + shape_string(self.sizes));
  }
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool_params(c, is_max));
  for (auto* v : {&p.kernel, &p.stride, &p.padding, &p.dilation}) {
    if (v->size() > 1) return c.arg_error("kernel_size", "a 1-D pool takes one value per argument");
  }
  auto widen = [](std::vector<int64_t>& v, int64_t unit) {
    if (!v.empty()) v.insert(v.begin(), unit);
  };
  widen(p.kernel, 1);
  widen(p.stride, 1);
  widen(p.padding, 0);
  widen(p.dilation, 1);
  return p;
}

// The 1-D output for a 2-D result shape [..., 1, L'].
std::vector<int64_t> drop_unit_height(std::vector<int64_t> shape) {
  shape.erase(shape.end() - 2);
  return shape;
}

template <bool is_max>
Status pool1d_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool1d_params(c, *self, is_max));
  const Tensor in = with_unit_height(*self);
  LATHE_ASSIGN_OR_RETURN(auto shape, pool2d_shape(in, p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, drop_unit_height(shape)));
  Tensor out2 = with_unit_height(*out);
  if constexpr (is_max) return max_pool2d_out(in, p, out2, nullptr);
  return avg_pool2d_out(in, p, out2);
}

template <bool is_max>
Status adaptive_pool1d_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("output_size"));
  if (size.size() != 1) return c.arg_error("output_size", "a 1-D adaptive pool takes one value");
  if (self->sizes.size() != 2 && self->sizes.size() != 3) {
    return c.arg_error("self", "expected a 2-D or 3-D input, got " + shape_string(self->sizes));
  }
  std::vector<int64_t> shape = self->sizes;
  shape.back() = size[0];
  const Tensor in = with_unit_height(*self);
  const std::vector<int64_t> size2 = {1, size[0]};
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  Tensor out2 = with_unit_height(*out);
  if constexpr (!is_max) {
    return adaptive_avg_pool2d_out(in, size2, out2);
  } else {
    LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(1, DType::Int64, shape));
    Tensor idx2 = with_unit_height(*idx);
    return adaptive_max_pool2d_out(in, size2, out2, idx2);  // h is 0: the indices are the positions along L
  }
}

Status max_pool3d_no_indices_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(PoolParams p, pool_params(c, true));
  LATHE_ASSIGN_OR_RETURN(auto shape, pool3d_shape(*self, p, "max_pool3d"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return max_pool3d_out(*self, p, *out, nullptr);
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  register_overloads(r, "max_pool1d", {"default"}, pool1d_kernel<true>);
  register_overloads(r, "avg_pool1d", {"default"}, pool1d_kernel<false>);
  register_overloads(r, "adaptive_avg_pool1d", {"default"}, adaptive_pool1d_kernel<false>);
  register_overloads(r, "adaptive_max_pool1d", {"default"}, adaptive_pool1d_kernel<true>);
  register_overloads(r, "max_pool3d", {"default"}, max_pool3d_no_indices_kernel);
  register_overloads(r, "max_pool2d", {"default"}, max_pool_kernel<false>);
  register_overloads(r, "max_pool2d_with_indices", {"default"}, max_pool_kernel<true>);
  register_overloads(r, "avg_pool2d", {"default"}, avg_pool_kernel);
  register_overloads(r, "adaptive_avg_pool2d", {"default"}, adaptive_avg_pool_kernel);
  register_overloads(r, "_adaptive_avg_pool2d", {"default"}, adaptive_avg_pool_kernel);
  register_overloads(r, "max_pool3d_with_indices", {"default"}, max_pool3d_kernel);
  register_overloads(r, "avg_pool3d", {"default"}, avg_pool3d_kernel);
  register_overloads(r, "adaptive_avg_pool3d", {"default"}, adaptive_avg_pool3d_kernel);
  register_overloads(r, "_adaptive_avg_pool3d", {"default"}, adaptive_avg_pool3d_kernel);
  register_overloads(r, "adaptive_max_pool2d", {"default"}, adaptive_max_pool2d_kernel);
  register_overloads(r, "col2im", {"default"}, col2im_kernel);
}

}  // namespace lathe::kernels
