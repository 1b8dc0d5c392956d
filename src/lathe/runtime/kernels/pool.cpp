#include "lathe/runtime/kernels/pool.h"

#include <cmath>
#include <limits>

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

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  register_overloads(r, "max_pool2d", {"default"}, max_pool_kernel<false>);
  register_overloads(r, "max_pool2d_with_indices", {"default"}, max_pool_kernel<true>);
  register_overloads(r, "avg_pool2d", {"default"}, avg_pool_kernel);
  register_overloads(r, "adaptive_avg_pool2d", {"default"}, adaptive_avg_pool_kernel);
  register_overloads(r, "_adaptive_avg_pool2d", {"default"}, adaptive_avg_pool_kernel);
}

}  // namespace lathe::kernels
