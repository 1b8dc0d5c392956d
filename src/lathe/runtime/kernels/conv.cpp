#include "lathe/runtime/kernels/conv.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>

#include "lathe/runtime/kernels/gemm.h"
#include "lathe/runtime/kernels/pad.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"
#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

namespace {

// Everything as 3-D: a 2-D conv has D = KD = 1, a 1-D conv also H = KH = 1.
struct Geometry {
  int64_t N, Cin, D, H, W, Cout, KD, KH, KW, OD, OH, OW, G;
  int64_t sD, sH, sW, pD, pH, pW, dD, dH, dW, opD, opH, opW;
};

// One spatial dim's attributes, resolved from a list of 1 or `sd` values.
struct DimAttr {
  int64_t in, k, s, p, d, op, out;
};

Result<int64_t> pick_attr(const std::vector<int64_t>& v, size_t i, size_t sd, int64_t dflt, const char* what) {
  if (v.empty()) return dflt;
  if (v.size() == 1) return v[0];
  if (v.size() != sd) {
    return make_error(std::string("convolution: ") + what + " has " + std::to_string(v.size()) + " values for " + std::to_string(sd) + " spatial dims");
  }
  return v[i];
}

// Attributes come from the file: bounding them (and the sizes) keeps the
// output-size arithmetic far from int64 overflow, and a padding of 2^31
// from asking for an output larger than any machine's memory. No real
// network pads, strides or dilates by more than 2^20.
Result<DimAttr> dim_attr(const Tensor& input, const Tensor& weight, const ConvParams& p, size_t i) {
  const size_t sd = input.sizes.size() - 2;
  DimAttr a{};
  a.in = input.sizes[2 + i];
  a.k = weight.sizes[2 + i];
  LATHE_ASSIGN_OR_RETURN(a.s, pick_attr(p.stride, i, sd, 1, "stride"));
  LATHE_ASSIGN_OR_RETURN(a.p, pick_attr(p.padding, i, sd, 0, "padding"));
  LATHE_ASSIGN_OR_RETURN(a.d, pick_attr(p.dilation, i, sd, 1, "dilation"));
  LATHE_ASSIGN_OR_RETURN(a.op, pick_attr(p.output_padding, i, sd, 0, "output_padding"));
  if (a.s <= 0 || a.d <= 0 || a.p < 0) return make_error("convolution: stride and dilation must be positive, padding non-negative");
  constexpr int64_t kMaxAttr = int64_t{1} << 20, kMaxSize = int64_t{1} << 31;
  using Attr = std::pair<int64_t, const char*>;
  for (auto [v, what] : std::initializer_list<Attr>{{a.s, "stride"}, {a.p, "padding"}, {a.d, "dilation"}, {a.op, "output_padding"}}) {
    if (v > kMaxAttr || v < 0) return make_error(std::string("convolution: ") + what + " " + std::to_string(v) + " is out of range [0, 2^20]");
  }
  if (a.k <= 0) return make_error("convolution: weight " + shape_string(weight.sizes) + " has an empty kernel");
  if (a.in > kMaxSize || a.k > kMaxSize) {
    return make_error("convolution: input " + shape_string(input.sizes) + " or weight " + shape_string(weight.sizes) + " is too large");
  }
  if (!p.transposed) {
    a.out = (a.in + 2 * a.p - a.d * (a.k - 1) - 1) / a.s + 1;
  } else {
    if (a.op >= a.s && a.op >= a.d) {
      return make_error("convolution (transposed): output_padding " + std::to_string(a.op) + " must be smaller than stride " +
                        std::to_string(a.s) + " or dilation " + std::to_string(a.d));
    }
    a.out = (a.in - 1) * a.s - 2 * a.p + a.d * (a.k - 1) + a.op + 1;
  }
  // (in + 2p - d(k-1) - 1) / s truncates towards 0: a kernel larger than
  // the padded input by less than s would still give 1.
  if (a.out <= 0 || (!p.transposed && a.in + 2 * a.p < a.d * (a.k - 1) + 1)) {
    return make_error("convolution: input " + shape_string(input.sizes) + " is too small for kernel " + shape_string(weight.sizes));
  }
  return a;
}

Result<Geometry> geometry(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  const size_t r = input.sizes.size();
  if (r < 3 || r > 5) return make_error("convolution: input must be 3-D, 4-D or 5-D (batched 1-D/2-D/3-D), got " + shape_string(input.sizes));
  if (weight.sizes.size() != r) {
    return make_error("convolution: weight " + shape_string(weight.sizes) + " does not match input " + shape_string(input.sizes));
  }
  const size_t sd = r - 2;
  DimAttr a[3] = {{1, 1, 1, 0, 1, 0, 1}, {1, 1, 1, 0, 1, 0, 1}, {1, 1, 1, 0, 1, 0, 1}};  // D, H, W
  for (size_t i = 0; i < sd; ++i) {
    LATHE_ASSIGN_OR_RETURN(a[3 - sd + i], dim_attr(input, weight, p, i));
  }
  Geometry g{};
  g.N = input.sizes[0];
  g.Cin = input.sizes[1];
  g.G = p.groups;
  if (g.G <= 0 || g.Cin % g.G != 0) return make_error("convolution: groups " + std::to_string(g.G) + " do not divide " + std::to_string(g.Cin) + " input channels");
  g.D = a[0].in, g.H = a[1].in, g.W = a[2].in;
  g.KD = a[0].k, g.KH = a[1].k, g.KW = a[2].k;
  g.OD = a[0].out, g.OH = a[1].out, g.OW = a[2].out;
  g.sD = a[0].s, g.sH = a[1].s, g.sW = a[2].s;
  g.pD = a[0].p, g.pH = a[1].p, g.pW = a[2].p;
  g.dD = a[0].d, g.dH = a[1].d, g.dW = a[2].d;
  g.opD = a[0].op, g.opH = a[1].op, g.opW = a[2].op;
  if (!p.transposed) {
    g.Cout = weight.sizes[0];
    if (weight.sizes[1] * g.G != g.Cin || g.Cout % g.G != 0) {
      return make_error("convolution: weight " + shape_string(weight.sizes) + " does not fit " + std::to_string(g.Cin) +
                        " input channels in " + std::to_string(g.G) + " groups");
    }
  } else {
    if (weight.sizes[0] != g.Cin) return make_error("convolution (transposed): weight " + shape_string(weight.sizes) + " does not fit " + std::to_string(g.Cin) + " input channels");
    g.Cout = weight.sizes[1] * g.G;
  }
  return g;
}

// Reference loop for any float type, any rank; also the transposed form,
// which scatters each input pixel through the kernel.
template <typename T>
void conv_direct(const Geometry& g, bool transposed, const T* x, const T* w, T* y) {
  const int64_t cin_g = g.Cin / g.G, cout_g = g.Cout / g.G;
  const int64_t in_plane = g.D * g.H * g.W, out_plane = g.OD * g.OH * g.OW;
  std::fill(y, y + g.N * g.Cout * out_plane, T(0));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t gr = 0; gr < g.G; ++gr)
      for (int64_t oc = 0; oc < cout_g; ++oc)
        for (int64_t ic = 0; ic < cin_g; ++ic) {
          const int64_t ci = gr * cin_g + ic, co = gr * cout_g + oc;
          const T* xp = x + (n * g.Cin + ci) * in_plane;
          T* yp = y + (n * g.Cout + co) * out_plane;
          const T* wp = transposed ? w + (ci * cout_g + oc) * g.KD * g.KH * g.KW : w + (co * cin_g + ic) * g.KD * g.KH * g.KW;
          for (int64_t kd = 0; kd < g.KD; ++kd)
            for (int64_t kh = 0; kh < g.KH; ++kh)
              for (int64_t kw = 0; kw < g.KW; ++kw) {
                const T wv = wp[(kd * g.KH + kh) * g.KW + kw];
                if (!transposed) {
                  for (int64_t od = 0; od < g.OD; ++od) {
                    const int64_t id = od * g.sD - g.pD + kd * g.dD;
                    if (id < 0 || id >= g.D) continue;
                    for (int64_t oh = 0; oh < g.OH; ++oh) {
                      const int64_t ih = oh * g.sH - g.pH + kh * g.dH;
                      if (ih < 0 || ih >= g.H) continue;
                      const T* xr = xp + (id * g.H + ih) * g.W;
                      T* yr = yp + (od * g.OH + oh) * g.OW;
                      for (int64_t ow = 0; ow < g.OW; ++ow) {
                        const int64_t iw = ow * g.sW - g.pW + kw * g.dW;
                        if (iw >= 0 && iw < g.W) yr[ow] += xr[iw] * wv;
                      }
                    }
                  }
                } else {
                  for (int64_t id = 0; id < g.D; ++id) {
                    const int64_t od = id * g.sD - g.pD + kd * g.dD;
                    if (od < 0 || od >= g.OD) continue;
                    for (int64_t ih = 0; ih < g.H; ++ih) {
                      const int64_t oh = ih * g.sH - g.pH + kh * g.dH;
                      if (oh < 0 || oh >= g.OH) continue;
                      const T* xr = xp + (id * g.H + ih) * g.W;
                      T* yr = yp + (od * g.OH + oh) * g.OW;
                      for (int64_t iw = 0; iw < g.W; ++iw) {
                        const int64_t ow = iw * g.sW - g.pW + kw * g.dW;
                        if (ow >= 0 && ow < g.OW) yr[ow] += xr[iw] * wv;
                      }
                    }
                  }
                }
              }
        }
}

// Depthwise (one input channel per group): per output channel, each kernel
// tap adds a shifted, strided copy of the input plane.
void conv_depthwise_f32(const Geometry& g, const float* x, const float* w, float* y) {
  const int64_t mult = g.Cout / g.G;
  parallel_for(0, g.N * g.Cout, 1, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t n = nc / g.Cout, co = nc % g.Cout, ci = co / mult;
      const float* xp = x + (n * g.Cin + ci) * g.H * g.W;
      float* yp = y + nc * g.OH * g.OW;
      std::fill(yp, yp + g.OH * g.OW, 0.0f);
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const float wv = w[(co * g.KH + kh) * g.KW + kw];
          // Output columns whose input column lies inside the plane.
          const int64_t off = kw * g.dW - g.pW;
          const int64_t ow0 = off >= 0 ? 0 : (-off + g.sW - 1) / g.sW;
          const int64_t lim = g.W - 1 - off;  // floor division needs lim >= 0
          const int64_t ow1 = lim < 0 ? 0 : std::min(g.OW, lim / g.sW + 1);
          for (int64_t oh = 0; oh < g.OH; ++oh) {
            const int64_t ih = oh * g.sH - g.pH + kh * g.dH;
            if (ih < 0 || ih >= g.H) continue;
            const float* xr = xp + ih * g.W + off;
            float* yr = yp + oh * g.OW;
            for (int64_t ow = ow0; ow < ow1; ++ow) yr[ow] += xr[ow * g.sW] * wv;
          }
        }
      }
    }
  });
}

// im2col + GEMM, 1-D to 3-D (lower ranks have D = KD = 1, H = KH = 1).
void conv_gemm_f32(const Geometry& g, const float* x, const float* w, float* y) {
  const int64_t cin_g = g.Cin / g.G, cout_g = g.Cout / g.G;
  const int64_t K = cin_g * g.KD * g.KH * g.KW, P = g.OD * g.OH * g.OW, in_plane = g.D * g.H * g.W;
  const bool pointwise = g.KD == 1 && g.KH == 1 && g.KW == 1 && g.sD == 1 && g.sH == 1 && g.sW == 1 && g.pD == 0 &&
                         g.pH == 0 && g.pW == 0;
  std::vector<float> cols(pointwise ? 0 : static_cast<size_t>(K * P));
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t gr = 0; gr < g.G; ++gr) {
      const float* xg = x + (n * g.Cin + gr * cin_g) * in_plane;
      const float* b = xg;
      if (!pointwise) {
        // im2col: row (c, kd, kh, kw) holds that tap's input for every output pixel.
        for (int64_t c = 0; c < cin_g; ++c)
          for (int64_t kd = 0; kd < g.KD; ++kd)
            for (int64_t kh = 0; kh < g.KH; ++kh)
              for (int64_t kw = 0; kw < g.KW; ++kw) {
                float* row = cols.data() + (((c * g.KD + kd) * g.KH + kh) * g.KW + kw) * P;
                for (int64_t od = 0; od < g.OD; ++od) {
                  const int64_t id = od * g.sD - g.pD + kd * g.dD;
                  for (int64_t oh = 0; oh < g.OH; ++oh) {
                    const int64_t ih = oh * g.sH - g.pH + kh * g.dH;
                    float* r = row + (od * g.OH + oh) * g.OW;
                    if (id < 0 || id >= g.D || ih < 0 || ih >= g.H) {
                      std::fill(r, r + g.OW, 0.0f);
                      continue;
                    }
                    const float* xr = xg + ((c * g.D + id) * g.H + ih) * g.W;
                    for (int64_t ow = 0; ow < g.OW; ++ow) {
                      const int64_t iw = ow * g.sW - g.pW + kw * g.dW;
                      r[ow] = (iw >= 0 && iw < g.W) ? xr[iw] : 0.0f;
                    }
                  }
                }
              }
        b = cols.data();
      }
      gemm_f32(cout_g, P, K, MatView{w + gr * cout_g * K, K, 1}, MatView{b, P, 1},
               y + (n * g.Cout + gr * cout_g) * P, P);
    }
  }
}

// Transposed: one GEMM per group gives, for every input pixel, its
// contribution through each kernel tap (W^T @ X: rows (oc, kd, kh, kw),
// columns the input pixels); col2im then adds each tap where it lands.
void conv_transposed_gemm_f32(const Geometry& g, const float* x, const float* w, float* y) {
  const int64_t cin_g = g.Cin / g.G, cout_g = g.Cout / g.G, taps = g.KD * g.KH * g.KW;
  const int64_t M = cout_g * taps, in_plane = g.D * g.H * g.W, out_plane = g.OD * g.OH * g.OW;
  std::vector<float> cols(static_cast<size_t>(M * in_plane));
  std::fill(y, y + g.N * g.Cout * out_plane, 0.0f);
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t gr = 0; gr < g.G; ++gr) {
      // weight[gr * cin_g + k] is row k of a [cin_g, M] matrix; A is its transpose.
      gemm_f32(M, in_plane, cin_g, MatView{w + gr * cin_g * M, 1, M}, MatView{x + (n * g.Cin + gr * cin_g) * in_plane, in_plane, 1},
               cols.data(), in_plane);
      for (int64_t oc = 0; oc < cout_g; ++oc) {
        float* yp = y + (n * g.Cout + gr * cout_g + oc) * out_plane;
        for (int64_t kd = 0; kd < g.KD; ++kd)
          for (int64_t kh = 0; kh < g.KH; ++kh)
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              const float* row = cols.data() + (((oc * g.KD + kd) * g.KH + kh) * g.KW + kw) * in_plane;
              for (int64_t id = 0; id < g.D; ++id) {
                const int64_t od = id * g.sD - g.pD + kd * g.dD;
                if (od < 0 || od >= g.OD) continue;
                for (int64_t ih = 0; ih < g.H; ++ih) {
                  const int64_t oh = ih * g.sH - g.pH + kh * g.dH;
                  if (oh < 0 || oh >= g.OH) continue;
                  const float* r = row + (id * g.H + ih) * g.W;
                  float* yr = yp + (od * g.OH + oh) * g.OW;
                  for (int64_t iw = 0; iw < g.W; ++iw) {
                    const int64_t ow = iw * g.sW - g.pW + kw * g.dW;
                    if (ow >= 0 && ow < g.OW) yr[ow] += r[iw];
                  }
                }
              }
            }
      }
    }
  }
}

}  // namespace

Result<std::vector<int64_t>> conv_output_shape(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  LATHE_ASSIGN_OR_RETURN(Geometry g, geometry(input, weight, p));
  if (input.sizes.size() == 3) return std::vector<int64_t>{g.N, g.Cout, g.OW};
  if (input.sizes.size() == 4) return std::vector<int64_t>{g.N, g.Cout, g.OH, g.OW};
  return std::vector<int64_t>{g.N, g.Cout, g.OD, g.OH, g.OW};
}

Status convolution_out(const Tensor& input_raw, const Tensor& weight_raw, const Tensor* bias, const ConvParams& p, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(input_raw, "convolution", "input"));
  LATHE_RETURN_IF_ERROR(check_input(weight_raw, "convolution", "weight"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, "convolution", "input"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(input_raw, weight_raw, "convolution"));
  LATHE_ASSIGN_OR_RETURN(Geometry g, geometry(input_raw, weight_raw, p));
  LATHE_ASSIGN_OR_RETURN(auto shape, conv_output_shape(input_raw, weight_raw, p));
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, shape, "convolution"));
  if (bias) {
    LATHE_RETURN_IF_ERROR(check_input(*bias, "convolution", "bias"));
    if (bias->numel() != g.Cout) return make_error("convolution: bias has " + std::to_string(bias->numel()) + " elements for " + std::to_string(g.Cout) + " channels");
  }
  const Tensor input = as_contiguous(input_raw), weight = as_contiguous(weight_raw);
  LATHE_RETURN_IF_ERROR(dispatch<Types::Float>(input.dtype, "convolution", [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>) {
      // The depthwise loop is written for 1-D and 2-D.
      const bool planar = input.sizes.size() <= 4;
      if (planar && !p.transposed && g.Cin / g.G == 1 && g.N > 0) {
        conv_depthwise_f32(g, cdata<float>(input), cdata<float>(weight), mdata<float>(out));
        return Status::Ok();
      }
      if (p.transposed && g.Cin > 0 && g.Cout > 0) {
        conv_transposed_gemm_f32(g, cdata<float>(input), cdata<float>(weight), mdata<float>(out));
        return Status::Ok();
      }
      if (!p.transposed) {
        conv_gemm_f32(g, cdata<float>(input), cdata<float>(weight), mdata<float>(out));
        return Status::Ok();
      }
    }
    conv_direct<T>(g, p.transposed, cdata<T>(input), cdata<T>(weight), mdata<T>(out));
    return Status::Ok();
  }));
  if (!bias) return Status::Ok();
  const Tensor b = as_contiguous(as_dtype(*bias, out.dtype));
  return dispatch<Types::Float>(out.dtype, "convolution", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = mdata<T>(out);
    const T* bp = cdata<T>(b);
    const int64_t P = g.OD * g.OH * g.OW;
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t c = 0; c < g.Cout; ++c) {
        T* yp = y + (n * g.Cout + c) * P;
        for (int64_t i = 0; i < P; ++i) yp[i] += bp[c];
      }
    return Status::Ok();
  });
}

namespace {

// Which schema a registered conv op has.
enum class Front {
  Generic,        // aten.convolution: batched only, transposed flag
  Forward,        // conv1d/2d/3d
  Transposed,     // conv_transpose1d/2d/3d
  PaddingString,  // conv1d/2d/3d.padding: padding is 'same' or 'valid'
};

// padding='valid' is no padding; 'same' (stride 1 only) pads
// dilation * (k - 1) in total per dim, the odd element at the end: `tail`
// gets the constant_pad_nd amounts of that extra end padding (all zero when
// every total is even) and p.padding the symmetric part.
Status string_padding(KernelCall& c, const Tensor& weight, size_t sd, ConvParams& p, std::vector<int64_t>& tail) {
  LATHE_ASSIGN_OR_RETURN(std::string mode, c.string_arg("padding", std::string("valid")));
  p.padding.assign(sd, 0);
  tail.assign(2 * sd, 0);
  if (mode == "valid") return Status::Ok();
  if (mode != "same") return c.arg_error("padding", "must be 'same' or 'valid', got '" + mode + "'");
  for (int64_t s : p.stride) {
    if (s != 1) return c.arg_error("padding", "'same' is not supported for strided convolutions");
  }
  for (size_t i = 0; i < sd; ++i) {
    const int64_t d = p.dilation.size() == 1 ? p.dilation[0] : (p.dilation.size() == sd ? p.dilation[i] : 1);
    const int64_t total = d * (weight.sizes[2 + i] - 1);
    if (d <= 0 || total < 0 || total > (int64_t{1} << 21)) return c.arg_error("dilation", "is out of range");
    p.padding[i] = total / 2;
    tail[2 * (sd - 1 - i) + 1] = total % 2;  // pairs run from the last dim backwards
  }
  return Status::Ok();
}

Result<ConvParams> conv_params(KernelCall& c, Front front) {
  ConvParams p;
  LATHE_ASSIGN_OR_RETURN(p.stride, c.int_list("stride", {1}));
  if (front != Front::PaddingString) {
    LATHE_ASSIGN_OR_RETURN(p.padding, c.int_list("padding", {0}));
  }
  LATHE_ASSIGN_OR_RETURN(p.dilation, c.int_list("dilation", {1}));
  LATHE_ASSIGN_OR_RETURN(p.groups, c.int_arg("groups", 1));
  if (front == Front::Generic) {
    LATHE_ASSIGN_OR_RETURN(p.transposed, c.bool_arg("transposed", false));
  }
  if (front == Front::Generic || front == Front::Transposed) {
    LATHE_ASSIGN_OR_RETURN(p.output_padding, c.int_list("output_padding", {0}));
  }
  if (front == Front::Transposed) p.transposed = true;
  return p;
}

// `sd` spatial dims (0: any, for aten.convolution). The front ends also
// accept an unbatched input.
template <Front front, size_t sd>
Status conv_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  LATHE_ASSIGN_OR_RETURN(ConvParams p, conv_params(c, front));
  Tensor x = *input;
  bool unbatched = false;
  if constexpr (front != Front::Generic) {
    if (weight->sizes.size() != sd + 2) return c.arg_error("weight", "must be " + std::to_string(sd + 2) + "-D, got " + shape_string(weight->sizes));
    if (x.sizes.size() != sd + 1 && x.sizes.size() != sd + 2) {
      return c.arg_error("input", "must be " + std::to_string(sd + 1) + "-D or " + std::to_string(sd + 2) + "-D, got " + shape_string(x.sizes));
    }
    unbatched = x.sizes.size() == sd + 1;
    if (unbatched) {
      LATHE_ASSIGN_OR_RETURN(x, unsqueeze_view(x, 0));
    }
  }
  if constexpr (front == Front::PaddingString) {
    std::vector<int64_t> tail;
    LATHE_RETURN_IF_ERROR(string_padding(c, *weight, sd, p, tail));
    if (std::any_of(tail.begin(), tail.end(), [](int64_t v) { return v != 0; })) {
      LATHE_ASSIGN_OR_RETURN(auto padded_shape, constant_pad_shape(x, tail));
      Tensor padded = Tensor::empty(x.dtype, padded_shape);
      LATHE_RETURN_IF_ERROR(constant_pad_out(x, tail, Scalar::from_int(0), padded));
      x = padded;
    }
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, conv_output_shape(x, *weight, p));
  if (unbatched) {
    Tensor tmp = Tensor::empty(x.dtype, shape);
    LATHE_RETURN_IF_ERROR(convolution_out(x, *weight, bias, p, tmp));
    shape.erase(shape.begin());
    LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x.dtype, shape));
    return copy_into(make_view(tmp, shape, Tensor::contiguous_strides(shape), 0), *out);
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x.dtype, shape));
  return convolution_out(x, *weight, bias, p, *out);
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  register_overloads(r, "convolution", {"default"}, conv_kernel<Front::Generic, 0>);
  register_overloads(r, "conv1d", {"default"}, conv_kernel<Front::Forward, 1>);
  register_overloads(r, "conv2d", {"default"}, conv_kernel<Front::Forward, 2>);
  register_overloads(r, "conv3d", {"default"}, conv_kernel<Front::Forward, 3>);
  register_overloads(r, "conv1d", {"padding"}, conv_kernel<Front::PaddingString, 1>);
  register_overloads(r, "conv2d", {"padding"}, conv_kernel<Front::PaddingString, 2>);
  register_overloads(r, "conv3d", {"padding"}, conv_kernel<Front::PaddingString, 3>);
  register_overloads(r, "conv_transpose1d", {"default"}, conv_kernel<Front::Transposed, 1>);
  register_overloads(r, "conv_transpose2d", {"input"}, conv_kernel<Front::Transposed, 2>);
  register_overloads(r, "conv_transpose3d", {"input"}, conv_kernel<Front::Transposed, 3>);
}

}  // namespace lathe::kernels
