// Resampling kernels. Every output element is a weighted sum of input taps
// along each spatial dim (nearest: one tap of weight 1, gathered as a copy;
// linear: 2; cubic: 4), with the source positions torch computes: from
// in/out, or from 1/scale when the caller gave a scale, or from
// (in-1)/(out-1) with align_corners.
#include "lathe/runtime/kernels/upsample.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "lathe/ir/argument.h"
#include "lathe/runtime/kernels/pad.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

namespace {

// Source step per output step (torch's compute_scales_value).
// `scale` <= 0: none given.
template <typename S>
S scale_value(double scale, int64_t in, int64_t out) {
  if (scale > 0) return static_cast<S>(1.0 / scale);
  return static_cast<S>(in) / static_cast<S>(out);
}

template <typename S>
S area_scale(double scale, int64_t in, int64_t out, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<S>(in - 1) / static_cast<S>(out - 1) : S(0);
  return scale_value<S>(scale, in, out);
}

// Continuous source position of output index o (half-pixel centres unless
// align_corners). Linear clamps at 0; cubic keeps the negative position
// (its taps are clamped instead).
template <typename S>
S source_position(S scale, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<S>(o);
  const S src = scale * (static_cast<S>(o) + S(0.5)) - S(0.5);
  return (!cubic && src < 0) ? S(0) : src;
}

int64_t nearest_source(int64_t o, int64_t in, int64_t out, double scale, bool exact) {
  if (!exact && out == in) return o;
  if (!exact && out == 2 * in) return o >> 1;
  // torch computes nearest positions in float whatever the dtype.
  const float s = scale_value<float>(scale, in, out);
  const float pos = exact ? (static_cast<float>(o) + 0.5f) * s : static_cast<float>(o) * s;
  return std::min(static_cast<int64_t>(std::floor(pos)), in - 1);
}

// The scale of spatial dim d, 0 when none was given.
double scale_at(const UpsampleParams& p, size_t d) {
  if (d >= p.scales.size() || !p.scales[d].has_value()) return 0.0;
  return *p.scales[d];
}

// Keys' cubic convolution weights (A = -0.75) for a tap at distance t
// (0 <= t < 1) past the second of four taps.
template <typename S>
void cubic_weights(S t, S w[4]) {
  const S A = S(-0.75);
  auto near = [&](S x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };        // |x| <= 1
  auto far = [&](S x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// One spatial dim's taps: for output index o, idx/w[o * n + t].
template <typename S>
struct Taps {
  int64_t n = 0;
  std::vector<int64_t> idx;
  std::vector<S> w;
};

template <typename S>
Taps<S> make_taps(int64_t in, int64_t out, double scale, const UpsampleParams& p) {
  Taps<S> t;
  const bool cubic = p.mode == UpsampleMode::Cubic;
  t.n = cubic ? 4 : 2;
  const S sc = area_scale<S>(scale, in, out, p.align_corners);
  for (int64_t o = 0; o < out; ++o) {
    const S src = source_position<S>(sc, o, p.align_corners, cubic);
    const int64_t i0 = static_cast<int64_t>(std::floor(src));
    if (cubic) {
      S w[4];
      cubic_weights<S>(src - static_cast<S>(i0), w);
      for (int64_t k = 0; k < 4; ++k) {
        t.idx.push_back(std::clamp<int64_t>(i0 - 1 + k, 0, in - 1));
        t.w.push_back(w[k]);
      }
    } else {
      const S l1 = std::clamp<S>(src - static_cast<S>(i0), S(0), S(1));
      t.idx.push_back(i0);
      t.idx.push_back(i0 + (i0 < in - 1 ? 1 : 0));
      t.w.push_back(S(1) - l1);
      t.w.push_back(l1);
    }
  }
  return t;
}

// Weighted sum over the taps of dims d.. for output position pos.
template <typename T, typename S>
S interpolate(const T* x, const std::vector<Taps<S>>& taps, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& pos, size_t d) {
  const Taps<S>& t = taps[d];
  S acc = 0;
  for (int64_t k = 0; k < t.n; ++k) {
    const int64_t j = pos[d] * t.n + k;
    const T* xk = x + t.idx[j] * strides[d];
    acc += t.w[j] * (d + 1 == taps.size() ? static_cast<S>(*xk) : interpolate<T, S>(xk, taps, strides, pos, d + 1));
  }
  return acc;
}

Status interpolate_out(const Tensor& input_raw, const std::vector<int64_t>& output_size, const UpsampleParams& p,
                       Tensor& out, const char* op) {
  const Tensor input = as_contiguous(input_raw);
  const size_t k = output_size.size(), lead = input.sizes.size() - k;
  const std::vector<int64_t> in_sp(input.sizes.begin() + static_cast<int64_t>(lead), input.sizes.end());
  const std::vector<int64_t> in_strides(input.strides.begin() + static_cast<int64_t>(lead), input.strides.end());
  const int64_t planes = numel_of(std::vector<int64_t>(input.sizes.begin(), input.sizes.begin() + static_cast<int64_t>(lead)));
  const int64_t in_plane = numel_of(in_sp), out_plane = numel_of(output_size);
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    std::vector<Taps<T>> taps;
    for (size_t d = 0; d < k; ++d) {
      taps.push_back(make_taps<T>(in_sp[d], output_size[d], scale_at(p, d), p));
    }
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    // Planes (batch x channel) are independent.
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(out_plane, 1));
    parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> pos(k, 0);
      for (int64_t pl = begin; pl < end; ++pl) {
        std::fill(pos.begin(), pos.end(), 0);
        for (int64_t o = 0; o < out_plane; ++o) {
          y[pl * out_plane + o] = interpolate<T, T>(x + pl * in_plane, taps, in_strides, pos, 0);
          for (size_t d = k; d-- > 0;) {
            if (++pos[d] < output_size[d]) break;
            pos[d] = 0;
          }
        }
      }
    });
    return Status::Ok();
  });
}

}  // namespace

Result<std::vector<int64_t>> upsample_shape(const Tensor& input, const std::vector<int64_t>& output_size, const char* op) {
  const size_t k = output_size.size();
  if (k < 1 || k > 3 || input.sizes.size() != k + 2) {
    return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " does not fit " + std::to_string(k) + " output sizes");
  }
  std::vector<int64_t> shape(input.sizes.begin(), input.sizes.begin() + 2);
  for (size_t d = 0; d < k; ++d) {
    if (input.sizes[d + 2] <= 0 || output_size[d] <= 0) {
      return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " and output size " + shape_string(output_size) +
                        " must have positive spatial sizes");
    }
    if (output_size[d] > (int64_t{1} << 31)) return make_error(std::string(op) + ": output size " + shape_string(output_size) + " is too large");
    shape.push_back(output_size[d]);
  }
  if (input.sizes[1] <= 0) return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " has no channels");
  return shape;
}

Status upsample_out(const Tensor& input, const std::vector<int64_t>& output_size, const UpsampleParams& p, Tensor& out,
                    const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_ASSIGN_OR_RETURN(auto shape, upsample_shape(input, output_size, op));
  if (!p.scales.empty() && p.scales.size() != output_size.size()) {
    return make_error(std::string(op) + ": " + std::to_string(p.scales.size()) + " scales for " + std::to_string(output_size.size()) + " dims");
  }
  LATHE_RETURN_IF_ERROR(check_out(out, input.dtype, shape, op));
  if (p.mode == UpsampleMode::Nearest || p.mode == UpsampleMode::NearestExact) {
    std::vector<std::vector<int64_t>> idx(output_size.size());
    for (size_t d = 0; d < output_size.size(); ++d) {
      const double scale = scale_at(p, d);
      for (int64_t o = 0; o < output_size[d]; ++o) {
        idx[d].push_back(nearest_source(o, input.sizes[d + 2], output_size[d], scale, p.mode == UpsampleMode::NearestExact));
      }
    }
    return gather_last_dims(input, idx, out, op);
  }
  if (out.numel() == 0) return Status::Ok();
  return interpolate_out(input, output_size, p, out, op);
}

// ---- grid_sampler_2d --------------------------------------------------------

namespace {

// Grid coordinate in [-1, 1] to pixel position.
template <typename S>
S unnormalize(S coord, int64_t size, bool align_corners) {
  if (align_corners) return (coord + 1) / 2 * static_cast<S>(size - 1);
  return ((coord + 1) * static_cast<S>(size) - 1) / 2;
}

// Mirrors `x` into [low, high] given as twice their values.
template <typename S>
S reflect(S x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return S(0);
  const S lo = static_cast<S>(twice_low) / 2, span = static_cast<S>(twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const S extra = std::fmod(x, span);
  const S flips = std::floor(x / span);  // kept a float: x may be huge or NaN
  return std::fmod(flips, S(2)) == 0 ? extra + lo : span - extra + lo;
}

// Applies the padding mode to a pixel position (zeros: unchanged; the
// caller drops taps outside the image).
template <typename S>
S pad_position(S x, int64_t size, int64_t padding, bool align_corners) {
  if (padding == 0) return x;
  if (padding == 2) x = align_corners ? reflect<S>(x, 0, 2 * (size - 1)) : reflect<S>(x, -1, 2 * size - 1);
  // Clipped as torch does: NaN lands on 0.
  return x > 0 ? std::min(x, static_cast<S>(size - 1)) : S(0);
}

// Pixel index of an integral-valued position; positions beyond any image
// saturate and NaN lies outside (a float-to-int conversion out of range is
// undefined).
template <typename S>
int64_t pixel(S x) {
  constexpr S kFar = S(int64_t{1} << 40);
  if (std::isnan(x)) return -(int64_t{1} << 40);
  return x < -kFar ? -(int64_t{1} << 40) : x > kFar ? (int64_t{1} << 40) : static_cast<int64_t>(x);
}

template <typename T>
struct Plane {
  const T* x;
  int64_t H, W, sH, sW;
  // Value at integer pixel (h, w), 0 outside.
  T at(int64_t h, int64_t w) const { return (h >= 0 && h < H && w >= 0 && w < W) ? x[h * sH + w * sW] : T(0); }
};

template <typename T>
T sample_bilinear(const Plane<T>& pl, T ix, T iy) {
  const T fx0 = std::floor(ix), fy0 = std::floor(iy);
  const int64_t w0 = pixel(fx0), h0 = pixel(fy0);
  const T fx = ix - fx0, fy = iy - fy0;
  return pl.at(h0, w0) * (1 - fx) * (1 - fy) + pl.at(h0, w0 + 1) * fx * (1 - fy) + pl.at(h0 + 1, w0) * (1 - fx) * fy +
         pl.at(h0 + 1, w0 + 1) * fx * fy;
}

// Bicubic taps are padded one by one (the position itself is not).
template <typename T>
T sample_bicubic(const Plane<T>& pl, T ix, T iy, int64_t padding, bool align_corners) {
  const T fx0 = std::floor(ix), fy0 = std::floor(iy);
  T wx[4], wy[4];
  cubic_weights<T>(ix - fx0, wx);
  cubic_weights<T>(iy - fy0, wy);
  T acc = 0;
  for (int64_t i = 0; i < 4; ++i) {
    const T py = pad_position<T>(fy0 - 1 + static_cast<T>(i), pl.H, padding, align_corners);
    T row = 0;
    for (int64_t j = 0; j < 4; ++j) {
      const T px = pad_position<T>(fx0 - 1 + static_cast<T>(j), pl.W, padding, align_corners);
      row += wx[j] * pl.at(pixel(std::floor(py)), pixel(std::floor(px)));
    }
    acc += wy[i] * row;
  }
  return acc;
}

}  // namespace

Status grid_sampler_2d_out(const Tensor& input, const Tensor& grid, int64_t interpolation, int64_t padding,
                           bool align_corners, Tensor& out) {
  const char* op = "grid_sampler_2d";
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_RETURN_IF_ERROR(check_input(grid, op, "grid"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(input, grid, op));
  if (input.sizes.size() != 4 || grid.sizes.size() != 4 || grid.sizes[3] != 2 || grid.sizes[0] != input.sizes[0]) {
    return make_error(std::string(op) + ": needs input [N, C, H, W] and grid [N, Ho, Wo, 2], got " + shape_string(input.sizes) +
                      " and " + shape_string(grid.sizes));
  }
  if (input.sizes[2] <= 0 || input.sizes[3] <= 0) return make_error(std::string(op) + ": input " + shape_string(input.sizes) + " has an empty plane");
  if (interpolation < 0 || interpolation > 2) return make_error(std::string(op) + ": interpolation_mode must be 0, 1 or 2");
  if (padding < 0 || padding > 2) return make_error(std::string(op) + ": padding_mode must be 0, 1 or 2");
  const int64_t N = input.sizes[0], C = input.sizes[1], H = input.sizes[2], W = input.sizes[3];
  const int64_t OH = grid.sizes[1], OW = grid.sizes[2];
  LATHE_RETURN_IF_ERROR(check_out(out, input.dtype, {N, C, OH, OW}, op));
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    const T* g = cdata<T>(grid);
    T* y = mdata<T>(out);
    // Output rows are independent.
    const int64_t grain = std::max<int64_t>(1, 1024 / std::max<int64_t>(OW * C, 1));
    parallel_for(0, N * OH, grain, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / OH, oh = row % OH;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const T* gp = g + n * grid.strides[0] + oh * grid.strides[1] + ow * grid.strides[2];
          T ix = unnormalize<T>(gp[0], W, align_corners), iy = unnormalize<T>(gp[grid.strides[3]], H, align_corners);
          if (interpolation != 2) {
            ix = pad_position<T>(ix, W, padding, align_corners);
            iy = pad_position<T>(iy, H, padding, align_corners);
          }
          for (int64_t ch = 0; ch < C; ++ch) {
            const Plane<T> pl{x + n * input.strides[0] + ch * input.strides[1], H, W, input.strides[2], input.strides[3]};
            T v;
            if (interpolation == 0) {
              v = sample_bilinear<T>(pl, ix, iy);
            } else if (interpolation == 1) {
              v = pl.at(pixel(std::nearbyint(iy)), pixel(std::nearbyint(ix)));
            } else {
              v = sample_bicubic<T>(pl, ix, iy, padding, align_corners);
            }
            y[((n * C + ch) * OH + oh) * OW + ow] = v;
          }
        }
      }
    });
    return Status::Ok();
  });
}

// ---- registered adapters ------------------------------------------------------

namespace {

Result<const Tensor*> input_arg(KernelCall& c) {
  return c.has("input") ? c.tensor("input") : c.tensor("self");
}

// The .vec overloads: output_size or scale_factors (float[] literal), one
// per spatial dim; with scale_factors the output is floor(in * scale) and
// the scales drive the source positions.
Status vec_sizes(KernelCall& c, const Tensor& x, size_t k, std::vector<int64_t>& size, UpsampleParams& p) {
  // Read into `size` directly: GCC 12 at -O3 reports a copy out of an
  // optional<vector> as maybe-uninitialized (a false positive).
  const Argument* given = c.node().input("output_size");
  const bool have_size = given && !given->is_none();
  if (have_size) {
    LATHE_ASSIGN_OR_RETURN(size, c.int_list("output_size"));
  }
  const Argument* sf = c.node().input("scale_factors");
  const FloatList* factors = sf ? sf->get_if<FloatList>() : nullptr;
  if (sf && !sf->is_none() && !factors) return c.arg_error("scale_factors", "must be a literal float list");
  if (have_size == (factors != nullptr)) return c.arg_error("output_size", "exactly one of output_size and scale_factors must be given");
  if (x.sizes.size() != k + 2) return c.arg_error("input", "must be " + std::to_string(k + 2) + "-D, got " + shape_string(x.sizes));
  if (have_size) {
    if (size.size() != k) return c.arg_error("output_size", "needs " + std::to_string(k) + " values");
    return Status::Ok();
  }
  if (factors->items.size() != k) return c.arg_error("scale_factors", "needs " + std::to_string(k) + " values");
  for (size_t d = 0; d < k; ++d) {
    const double s = factors->items[d];
    const double n = static_cast<double>(x.sizes[d + 2]) * s;
    if (!(s > 0)) return c.arg_error("scale_factors", "must be positive");
    if (!(n < 2147483648.0)) return c.arg_error("scale_factors", "make an output dim of 2^31 or more");
    size.push_back(static_cast<int64_t>(n));
    p.scales.emplace_back(s);
  }
  return Status::Ok();
}

// The .default overloads: output_size plus optional per-dim scales.
Status default_sizes(KernelCall& c, size_t k, std::vector<int64_t>& size, UpsampleParams& p) {
  LATHE_ASSIGN_OR_RETURN(size, c.int_list("output_size"));
  if (size.size() != k) return c.arg_error("output_size", "needs " + std::to_string(k) + " values");
  static const char* const names1[] = {"scales"};
  static const char* const names2[] = {"scales_h", "scales_w"};
  static const char* const names3[] = {"scales_d", "scales_h", "scales_w"};
  const char* const* names = k == 1 ? names1 : k == 2 ? names2 : names3;
  for (size_t d = 0; d < k; ++d) {
    LATHE_ASSIGN_OR_RETURN(auto s, c.optional_double(names[d]));
    p.scales.push_back(s);
  }
  return Status::Ok();
}

template <size_t k, UpsampleMode mode, bool vec>
Status upsample_kernel(KernelCall& c) {
  const std::string op = c.node().op_name();
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, input_arg(c));
  UpsampleParams p;
  p.mode = mode;
  if constexpr (mode == UpsampleMode::Linear || mode == UpsampleMode::Cubic) {
    LATHE_ASSIGN_OR_RETURN(p.align_corners, c.bool_arg("align_corners"));
  }
  std::vector<int64_t> size;
  if constexpr (vec) {
    LATHE_RETURN_IF_ERROR(vec_sizes(c, *x, k, size, p));
  } else {
    LATHE_RETURN_IF_ERROR(default_sizes(c, k, size, p));
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, upsample_shape(*x, size, op.c_str()));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x->dtype, shape));
  return upsample_out(*x, size, p, *out, op.c_str());
}

Status grid_sampler_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* grid, c.tensor("grid"));
  LATHE_ASSIGN_OR_RETURN(int64_t interp, c.int_arg("interpolation_mode"));
  LATHE_ASSIGN_OR_RETURN(int64_t padding, c.int_arg("padding_mode"));
  LATHE_ASSIGN_OR_RETURN(bool align, c.bool_arg("align_corners"));
  // grid_sampler (what F.grid_sample exports as) is grid_sampler_2d on 4-D input.
  if (x->sizes.size() != 4 || grid->sizes.size() != 4) {
    return c.arg_error("grid", "input and grid must be 4-D (5-D volumetric sampling has no kernel), got " +
                                   shape_string(x->sizes) + " and " + shape_string(grid->sizes));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x->dtype, {x->sizes[0], x->sizes[1], grid->sizes[1], grid->sizes[2]}));
  return grid_sampler_2d_out(*x, *grid, interp, padding, align, *out);
}

}  // namespace

void register_upsample_kernels(KernelRegistry& r) {
  using M = UpsampleMode;
  register_overloads(r, "upsample_nearest1d", {"vec"}, upsample_kernel<1, M::Nearest, true>);
  register_overloads(r, "upsample_nearest1d", {"default"}, upsample_kernel<1, M::Nearest, false>);
  register_overloads(r, "upsample_nearest2d", {"vec"}, upsample_kernel<2, M::Nearest, true>);
  register_overloads(r, "upsample_nearest2d", {"default"}, upsample_kernel<2, M::Nearest, false>);
  register_overloads(r, "upsample_nearest3d", {"vec"}, upsample_kernel<3, M::Nearest, true>);
  register_overloads(r, "upsample_nearest3d", {"default"}, upsample_kernel<3, M::Nearest, false>);
  register_overloads(r, "_upsample_nearest_exact2d", {"vec"}, upsample_kernel<2, M::NearestExact, true>);
  register_overloads(r, "_upsample_nearest_exact2d", {"default"}, upsample_kernel<2, M::NearestExact, false>);
  register_overloads(r, "_upsample_nearest_exact1d", {"vec"}, upsample_kernel<1, M::NearestExact, true>);
  register_overloads(r, "_upsample_nearest_exact1d", {"default"}, upsample_kernel<1, M::NearestExact, false>);
  register_overloads(r, "_upsample_nearest_exact3d", {"vec"}, upsample_kernel<3, M::NearestExact, true>);
  register_overloads(r, "_upsample_nearest_exact3d", {"default"}, upsample_kernel<3, M::NearestExact, false>);
  register_overloads(r, "upsample_linear1d", {"vec"}, upsample_kernel<1, M::Linear, true>);
  register_overloads(r, "upsample_linear1d", {"default"}, upsample_kernel<1, M::Linear, false>);
  register_overloads(r, "upsample_bilinear2d", {"vec"}, upsample_kernel<2, M::Linear, true>);
  register_overloads(r, "upsample_bilinear2d", {"default"}, upsample_kernel<2, M::Linear, false>);
  register_overloads(r, "upsample_trilinear3d", {"vec"}, upsample_kernel<3, M::Linear, true>);
  register_overloads(r, "upsample_trilinear3d", {"default"}, upsample_kernel<3, M::Linear, false>);
  register_overloads(r, "upsample_bicubic2d", {"vec"}, upsample_kernel<2, M::Cubic, true>);
  register_overloads(r, "upsample_bicubic2d", {"default"}, upsample_kernel<2, M::Cubic, false>);
  register_overloads(r, "grid_sampler_2d", {"default"}, grid_sampler_kernel);
  register_overloads(r, "grid_sampler", {"default"}, grid_sampler_kernel);
}

}  // namespace lathe::kernels
