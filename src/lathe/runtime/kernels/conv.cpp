#include "lathe/runtime/kernels/conv.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "lathe/runtime/kernels/gemm.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"
#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

namespace {

// Everything as 2-D: a 1-D conv is a 2-D conv with H = KH = 1.
struct Geometry {
  int64_t N, Cin, H, W, Cout, KH, KW, OH, OW, G;
  int64_t sH, sW, pH, pW, dH, dW, opH, opW;
};

Result<Geometry> geometry(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  const size_t r = input.sizes.size();
  if (r != 3 && r != 4) return make_error("convolution: input must be 3-D or 4-D (batched 1-D/2-D), got " + shape_string(input.sizes));
  if (weight.sizes.size() != r) {
    return make_error("convolution: weight " + shape_string(weight.sizes) + " does not match input " + shape_string(input.sizes));
  }
  const size_t sd = r - 2;
  auto pick = [&](const std::vector<int64_t>& v, size_t i, int64_t dflt, const char* what) -> Result<int64_t> {
    if (v.empty()) return dflt;
    if (v.size() == 1) return v[0];
    if (v.size() != sd) return make_error(std::string("convolution: ") + what + " has " + std::to_string(v.size()) + " values for " + std::to_string(sd) + " spatial dims");
    return v[i];
  };
  Geometry g{};
  g.N = input.sizes[0];
  g.Cin = input.sizes[1];
  g.G = p.groups;
  g.H = sd == 2 ? input.sizes[2] : 1;
  g.W = input.sizes[r - 1];
  g.KH = sd == 2 ? weight.sizes[2] : 1;
  g.KW = weight.sizes[r - 1];
  const size_t h = 0, w = sd - 1;
  if (sd == 2) {
    LATHE_ASSIGN_OR_RETURN(g.sH, pick(p.stride, h, 1, "stride"));
    LATHE_ASSIGN_OR_RETURN(g.pH, pick(p.padding, h, 0, "padding"));
    LATHE_ASSIGN_OR_RETURN(g.dH, pick(p.dilation, h, 1, "dilation"));
    LATHE_ASSIGN_OR_RETURN(g.opH, pick(p.output_padding, h, 0, "output_padding"));
  } else {
    g.sH = g.dH = 1;
    g.pH = g.opH = 0;
  }
  LATHE_ASSIGN_OR_RETURN(g.sW, pick(p.stride, w, 1, "stride"));
  LATHE_ASSIGN_OR_RETURN(g.pW, pick(p.padding, w, 0, "padding"));
  LATHE_ASSIGN_OR_RETURN(g.dW, pick(p.dilation, w, 1, "dilation"));
  LATHE_ASSIGN_OR_RETURN(g.opW, pick(p.output_padding, w, 0, "output_padding"));
  if (g.G <= 0 || g.Cin % g.G != 0) return make_error("convolution: groups " + std::to_string(g.G) + " do not divide " + std::to_string(g.Cin) + " input channels");
  if (g.sH <= 0 || g.sW <= 0 || g.dH <= 0 || g.dW <= 0 || g.pH < 0 || g.pW < 0) {
    return make_error("convolution: stride and dilation must be positive, padding non-negative");
  }
  // Attributes come from the file: bounding them (and the sizes) keeps the
  // output-size arithmetic below far from int64 overflow, and a padding of
  // 2^31 from asking for an output larger than any machine's memory. No real
  // network pads, strides or dilates by more than 2^20.
  constexpr int64_t kMaxAttr = int64_t{1} << 20, kMaxSize = int64_t{1} << 31;
  using Attr = std::pair<int64_t, const char*>;
  for (auto [v, what] : std::initializer_list<Attr>{{g.sH, "stride"}, {g.sW, "stride"}, {g.pH, "padding"},
                                                    {g.pW, "padding"}, {g.dH, "dilation"}, {g.dW, "dilation"},
                                                    {g.opH, "output_padding"}, {g.opW, "output_padding"}}) {
    if (v > kMaxAttr || v < 0) {
      return make_error(std::string("convolution: ") + what + " " + std::to_string(v) + " is out of range [0, 2^20]");
    }
  }
  for (int64_t v : {g.H, g.W, g.KH, g.KW}) {
    if (v > kMaxSize) return make_error("convolution: input " + shape_string(input.sizes) + " or weight " + shape_string(weight.sizes) + " is too large");
  }
  if (!p.transposed) {
    g.Cout = weight.sizes[0];
    if (weight.sizes[1] * g.G != g.Cin || g.Cout % g.G != 0) {
      return make_error("convolution: weight " + shape_string(weight.sizes) + " does not fit " + std::to_string(g.Cin) +
                        " input channels in " + std::to_string(g.G) + " groups");
    }
    g.OH = (g.H + 2 * g.pH - g.dH * (g.KH - 1) - 1) / g.sH + 1;
    g.OW = (g.W + 2 * g.pW - g.dW * (g.KW - 1) - 1) / g.sW + 1;
  } else {
    if (weight.sizes[0] != g.Cin) return make_error("convolution (transposed): weight " + shape_string(weight.sizes) + " does not fit " + std::to_string(g.Cin) + " input channels");
    g.Cout = weight.sizes[1] * g.G;
    g.OH = (g.H - 1) * g.sH - 2 * g.pH + g.dH * (g.KH - 1) + g.opH + 1;
    g.OW = (g.W - 1) * g.sW - 2 * g.pW + g.dW * (g.KW - 1) + g.opW + 1;
  }
  if (g.OH <= 0 || g.OW <= 0) {
    return make_error("convolution: input " + shape_string(input.sizes) + " is too small for kernel " + shape_string(weight.sizes));
  }
  return g;
}

// Reference loop for any float type; also the transposed form.
template <typename T>
void conv_direct(const Geometry& g, bool transposed, const T* x, const T* w, T* y) {
  const int64_t cin_g = g.Cin / g.G, cout_g = g.Cout / g.G;
  std::fill(y, y + g.N * g.Cout * g.OH * g.OW, T(0));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t gr = 0; gr < g.G; ++gr)
      for (int64_t oc = 0; oc < cout_g; ++oc)
        for (int64_t ic = 0; ic < cin_g; ++ic)
          for (int64_t kh = 0; kh < g.KH; ++kh)
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              const int64_t ci = gr * cin_g + ic, co = gr * cout_g + oc;
              if (!transposed) {
                const T wv = w[((co * cin_g + ic) * g.KH + kh) * g.KW + kw];
                for (int64_t oh = 0; oh < g.OH; ++oh) {
                  const int64_t ih = oh * g.sH - g.pH + kh * g.dH;
                  if (ih < 0 || ih >= g.H) continue;
                  for (int64_t ow = 0; ow < g.OW; ++ow) {
                    const int64_t iw = ow * g.sW - g.pW + kw * g.dW;
                    if (iw < 0 || iw >= g.W) continue;
                    y[((n * g.Cout + co) * g.OH + oh) * g.OW + ow] += x[((n * g.Cin + ci) * g.H + ih) * g.W + iw] * wv;
                  }
                }
              } else {
                const T wv = w[((ci * cout_g + oc) * g.KH + kh) * g.KW + kw];
                for (int64_t ih = 0; ih < g.H; ++ih) {
                  const int64_t oh = ih * g.sH - g.pH + kh * g.dH;
                  if (oh < 0 || oh >= g.OH) continue;
                  for (int64_t iw = 0; iw < g.W; ++iw) {
                    const int64_t ow = iw * g.sW - g.pW + kw * g.dW;
                    if (ow < 0 || ow >= g.OW) continue;
                    y[((n * g.Cout + co) * g.OH + oh) * g.OW + ow] += x[((n * g.Cin + ci) * g.H + ih) * g.W + iw] * wv;
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

void conv_gemm_f32(const Geometry& g, const float* x, const float* w, float* y) {
  const int64_t cin_g = g.Cin / g.G, cout_g = g.Cout / g.G;
  const int64_t K = cin_g * g.KH * g.KW, P = g.OH * g.OW;
  const bool pointwise = g.KH == 1 && g.KW == 1 && g.sH == 1 && g.sW == 1 && g.pH == 0 && g.pW == 0;
  std::vector<float> cols(pointwise ? 0 : static_cast<size_t>(K * P));
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t gr = 0; gr < g.G; ++gr) {
      const float* xg = x + (n * g.Cin + gr * cin_g) * g.H * g.W;
      const float* b = xg;
      if (!pointwise) {
        // im2col: row (c, kh, kw) holds that tap's input for every output pixel.
        for (int64_t c = 0; c < cin_g; ++c)
          for (int64_t kh = 0; kh < g.KH; ++kh)
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              float* row = cols.data() + ((c * g.KH + kh) * g.KW + kw) * P;
              for (int64_t oh = 0; oh < g.OH; ++oh) {
                const int64_t ih = oh * g.sH - g.pH + kh * g.dH;
                float* r = row + oh * g.OW;
                if (ih < 0 || ih >= g.H) {
                  std::fill(r, r + g.OW, 0.0f);
                  continue;
                }
                const float* xr = xg + (c * g.H + ih) * g.W;
                for (int64_t ow = 0; ow < g.OW; ++ow) {
                  const int64_t iw = ow * g.sW - g.pW + kw * g.dW;
                  r[ow] = (iw >= 0 && iw < g.W) ? xr[iw] : 0.0f;
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

}  // namespace

Result<std::vector<int64_t>> conv_output_shape(const Tensor& input, const Tensor& weight, const ConvParams& p) {
  LATHE_ASSIGN_OR_RETURN(Geometry g, geometry(input, weight, p));
  if (input.sizes.size() == 3) return std::vector<int64_t>{g.N, g.Cout, g.OW};
  return std::vector<int64_t>{g.N, g.Cout, g.OH, g.OW};
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
      if (!p.transposed && g.Cin / g.G == 1 && g.N > 0) {
        conv_depthwise_f32(g, cdata<float>(input), cdata<float>(weight), mdata<float>(out));
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
    const int64_t P = g.OH * g.OW;
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t c = 0; c < g.Cout; ++c) {
        T* yp = y + (n * g.Cout + c) * P;
        for (int64_t i = 0; i < P; ++i) yp[i] += bp[c];
      }
    return Status::Ok();
  });
}

namespace {

// aten.convolution and the conv1d/conv2d front ends (which also accept an
// unbatched input).
Status conv_kernel_impl(KernelCall& c, bool generic) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  ConvParams p;
  LATHE_ASSIGN_OR_RETURN(p.stride, c.int_list("stride", {1}));
  LATHE_ASSIGN_OR_RETURN(p.padding, c.int_list("padding", {0}));
  LATHE_ASSIGN_OR_RETURN(p.dilation, c.int_list("dilation", {1}));
  LATHE_ASSIGN_OR_RETURN(p.groups, c.int_arg("groups", 1));
  if (generic) {
    LATHE_ASSIGN_OR_RETURN(p.transposed, c.bool_arg("transposed", false));
    LATHE_ASSIGN_OR_RETURN(p.output_padding, c.int_list("output_padding", {0}));
  }
  Tensor x = *input;
  const bool unbatched = !generic && x.sizes.size() + 1 == weight->sizes.size();
  if (unbatched) {
    LATHE_ASSIGN_OR_RETURN(x, unsqueeze_view(x, 0));
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
  register_overloads(r, "convolution", {"default"}, [](KernelCall& c) { return conv_kernel_impl(c, true); });
  register_overloads(r, "conv1d", {"default"}, [](KernelCall& c) { return conv_kernel_impl(c, false); });
  register_overloads(r, "conv2d", {"default"}, [](KernelCall& c) { return conv_kernel_impl(c, false); });
}

}  // namespace lathe::kernels
