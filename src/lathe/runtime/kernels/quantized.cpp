#include "lathe/runtime/kernels/quantized.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

// ---- ranges and element access ------------------------------------------------

// torch.iinfo bounds of the dtypes _decomposed.py accepts.
std::optional<std::pair<int64_t, int64_t>> dtype_bounds(DType d) {
  switch (d) {
    case DType::UInt8: return std::pair<int64_t, int64_t>{0, 255};
    case DType::Int8: return std::pair<int64_t, int64_t>{-128, 127};
    case DType::UInt16: return std::pair<int64_t, int64_t>{0, 65535};
    case DType::Int16: return std::pair<int64_t, int64_t>{-32768, 32767};
    case DType::Int32: return std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
    default: return std::nullopt;
  }
}

// _quant_min_max_bounds_check.
Status check_range(const QuantRange& r, const char* op) {
  auto b = dtype_bounds(r.dtype);
  if (!b) return make_error(std::string(op) + ": unsupported quantized dtype " + std::string(dtype_name(r.dtype)));
  if (r.quant_min < b->first || r.quant_max > b->second) {
    return make_error(std::string(op) + ": quant range [" + std::to_string(r.quant_min) + ", " +
                      std::to_string(r.quant_max) + "] is outside " + std::string(dtype_name(r.dtype)) + "'s [" +
                      std::to_string(b->first) + ", " + std::to_string(b->second) + "]");
  }
  return Status::Ok();
}

// Calls f(T{}) with T the integer element type of a quantized tensor.
template <typename F>
Status dispatch_quantized(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::UInt16: return f(uint16_t{});
    case DType::Int32: return f(int32_t{});
    default: return make_error(std::string(op) + ": unsupported quantized dtype " + std::string(dtype_name(d)));
  }
}

// Calls f(C{}) with C the floating type of `d` (float32 or float64).
template <typename F>
Status dispatch_real(DType d, const char* op, const char* arg, F&& f) {
  if (d == DType::Float32) return f(float{});
  if (d == DType::Float64) return f(double{});
  return make_error(std::string(op) + ": " + arg + " must be float32 or float64, got " + std::string(dtype_name(d)));
}

// Every element of `t` (any layout) as a double / int64, in logical order.
std::vector<double> values_f64(const Tensor& t) {
  const Tensor c = as_contiguous(as_dtype(t, DType::Float64));
  const double* p = cdata<double>(c);
  return std::vector<double>(p, p + c.numel());
}
std::vector<int64_t> values_i64(const Tensor& t) {
  const Tensor c = as_contiguous(as_dtype(t, DType::Int64));
  const int64_t* p = cdata<int64_t>(c);
  return std::vector<int64_t>(p, p + c.numel());
}

Status check_quantized_input(const Tensor& input, const QuantRange& range, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_RETURN_IF_ERROR(check_range(range, op));
  if (input.dtype != range.dtype) {
    return make_error(std::string(op) + ": input is " + std::string(dtype_name(input.dtype)) + ", but dtype says " +
                      std::string(dtype_name(range.dtype)));
  }
  return Status::Ok();
}

Status check_float_input(const Tensor& input, const QuantRange& range, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(input, op, "input"));
  LATHE_RETURN_IF_ERROR(check_range(range, op));
  if (input.dtype != DType::Float32 && input.dtype != DType::Float16 && input.dtype != DType::BFloat16) {
    return make_error(std::string(op) + ": input must be float32 (or 16-bit float), got " +
                      std::string(dtype_name(input.dtype)));
  }
  return Status::Ok();
}

// Clamp to [quant_min, quant_max] (in C, like torch.clamp), then store.
template <typename Q, typename C>
Q saturate(C v, const QuantRange& r) {
  v = std::min(std::max(v, static_cast<C>(r.quant_min)), static_cast<C>(r.quant_max));
  return static_cast<Q>(v);
}

}  // namespace

int64_t effective_group_size(int64_t group_size, int64_t k, const Tensor& scales) {
  if (group_size > k && !scales.sizes.empty() && scales.sizes.back() == 1) return k;
  return group_size;
}

// ---- per tensor ------------------------------------------------------------------

Status quantize_per_tensor_out(const Tensor& input_raw, double scale, int64_t zero_point, QuantRange range,
                               Tensor& out) {
  const char* op = "quantize_per_tensor";
  LATHE_RETURN_IF_ERROR(check_float_input(input_raw, range, op));
  LATHE_RETURN_IF_ERROR(check_out(out, range.dtype, input_raw.sizes, op));
  const Tensor in = as_contiguous(as_dtype(input_raw, DType::Float32));
  // inv_scale = 1.0 / scale in Python (double), then a float32 multiply.
  const float inv = static_cast<float>(1.0 / scale);
  const float zp = static_cast<float>(zero_point);
  const float* x = cdata<float>(in);
  return dispatch_quantized(range.dtype, op, [&](auto tag) -> Status {
    using Q = decltype(tag);
    Q* y = mdata<Q>(out);
    for (int64_t i = 0, n = in.numel(); i < n; ++i) y[i] = saturate<Q>(std::nearbyint(x[i] * inv) + zp, range);
    return Status::Ok();
  });
}

Status dequantize_per_tensor_out(const Tensor& input_raw, double scale, int64_t zero_point, QuantRange range,
                                 Tensor& out) {
  const char* op = "dequantize_per_tensor";
  LATHE_RETURN_IF_ERROR(check_quantized_input(input_raw, range, op));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, input_raw.sizes, op));
  const Tensor in = as_contiguous(input_raw);
  return dispatch_real(out.dtype, op, "out_dtype", [&](auto otag) -> Status {
    using C = decltype(otag);
    // (input.to(out_dtype) - zero_point) * scale: both steps in C.
    const C zp = static_cast<C>(zero_point), s = static_cast<C>(scale);
    C* y = mdata<C>(out);
    return dispatch_quantized(range.dtype, op, [&](auto tag) -> Status {
      using Q = decltype(tag);
      const Q* q = cdata<Q>(in);
      for (int64_t i = 0, n = in.numel(); i < n; ++i) y[i] = (static_cast<C>(q[i]) - zp) * s;
      return Status::Ok();
    });
  });
}

// ---- per channel ----------------------------------------------------------------

namespace {

// Channel layout of a contiguous tensor along `axis`: element i is in
// channel (i / inner) % channels.
struct Channels {
  int64_t channels = 1, inner = 1;
};

Result<Channels> channels_of(const Tensor& input, int64_t axis, const Tensor& scales, const Tensor* zero_points,
                             const char* op) {
  const int64_t rank = static_cast<int64_t>(input.sizes.size());
  if (rank == 0) return make_error(std::string(op) + ": input must have at least 1 dimension");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(axis, rank));
  Channels c;
  c.channels = input.sizes[d];
  for (int64_t k = d + 1; k < rank; ++k) c.inner *= input.sizes[k];
  LATHE_RETURN_IF_ERROR(check_input(scales, op, "scales"));
  if (scales.sizes.size() != 1 || scales.sizes[0] != c.channels) {
    return make_error(std::string(op) + ": scales " + shape_string(scales.sizes) + " must be 1-D with one entry per " +
                      "channel of axis " + std::to_string(axis) + " (" + std::to_string(c.channels) + ")");
  }
  if (zero_points) {
    LATHE_RETURN_IF_ERROR(check_input(*zero_points, op, "zero_points"));
    if (zero_points->numel() != c.channels) {
      return make_error(std::string(op) + ": zero_points " + shape_string(zero_points->sizes) + " must have " +
                        std::to_string(c.channels) + " entries");
    }
  }
  return c;
}

// out[i] = (q[i] - zero_points[j]) * scales[j] with j = param(i): the
// difference in int64, wrapping as PyTorch's int64 tensor subtraction does
// (a zero point near INT64_MIN from a file is not undefined behaviour), the
// product in the scales' dtype, then cast to out's dtype
// (dequantize_per_channel and _per_channel_group alike).
template <typename Param>
Status dequantize_by(const Tensor& in, const Tensor& scales, const std::vector<int64_t>& zps, DType qdtype, Tensor& out,
                     const char* op, const char* out_arg, Param param) {
  return dispatch_real(scales.dtype, op, "scales", [&](auto stag) -> Status {
    using C = decltype(stag);
    const Tensor sc = as_contiguous(scales);
    const C* s = cdata<C>(sc);
    return dispatch_real(out.dtype, op, out_arg, [&](auto otag) -> Status {
      using O = decltype(otag);
      O* y = mdata<O>(out);
      return dispatch_quantized(qdtype, op, [&](auto tag) -> Status {
        using Q = decltype(tag);
        const Q* q = cdata<Q>(in);
        for (int64_t i = 0, n = in.numel(); i < n; ++i) {
          const int64_t j = param(i);
          const auto diff = static_cast<int64_t>(static_cast<uint64_t>(static_cast<int64_t>(q[i])) -
                                                 static_cast<uint64_t>(zps[j]));
          y[i] = static_cast<O>(static_cast<C>(diff) * s[j]);
        }
        return Status::Ok();
      });
    });
  });
}

}  // namespace

Status quantize_per_channel_out(const Tensor& input_raw, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                QuantRange range, Tensor& out) {
  const char* op = "quantize_per_channel";
  LATHE_RETURN_IF_ERROR(check_float_input(input_raw, range, op));
  LATHE_ASSIGN_OR_RETURN(Channels ch, channels_of(input_raw, axis, scales, &zero_points, op));
  LATHE_RETURN_IF_ERROR(check_out(out, range.dtype, input_raw.sizes, op));
  const Tensor in = as_contiguous(as_dtype(input_raw, DType::Float32));
  const std::vector<int64_t> zps = values_i64(zero_points);
  // input * (1.0 / scales): the reciprocal and the product in the scales'
  // dtype (float32 scales keep float32; float64 scales promote).
  return dispatch_real(scales.dtype, op, "scales", [&](auto stag) -> Status {
    using C = decltype(stag);
    const Tensor sc = as_contiguous(scales);
    const C* s = cdata<C>(sc);
    const float* x = cdata<float>(in);
    return dispatch_quantized(range.dtype, op, [&](auto tag) -> Status {
      using Q = decltype(tag);
      Q* y = mdata<Q>(out);
      for (int64_t i = 0, n = in.numel(); i < n; ++i) {
        const int64_t c = (i / ch.inner) % ch.channels;
        const C inv = C(1) / s[c];
        y[i] = saturate<Q>(std::nearbyint(static_cast<C>(x[i]) * inv) + static_cast<C>(zps[c]), range);
      }
      return Status::Ok();
    });
  });
}

Status dequantize_per_channel_out(const Tensor& input_raw, const Tensor& scales, const Tensor* zero_points,
                                  int64_t axis, QuantRange range, Tensor& out) {
  const char* op = "dequantize_per_channel";
  LATHE_RETURN_IF_ERROR(check_quantized_input(input_raw, range, op));
  LATHE_ASSIGN_OR_RETURN(Channels ch, channels_of(input_raw, axis, scales, zero_points, op));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, input_raw.sizes, op));
  const Tensor in = as_contiguous(input_raw);
  // (input - zero_points) is exact in int64; its product with the scales
  // runs in the scales' dtype; then .to(out_dtype).
  const std::vector<int64_t> zps = zero_points ? values_i64(*zero_points) : std::vector<int64_t>(ch.channels, 0);
  if (zero_points && !is_integral(zero_points->dtype, false)) {
    return make_error(std::string(op) + ": zero_points must be integers, got " +
                      std::string(dtype_name(zero_points->dtype)));
  }
  return dequantize_by(in, scales, zps, range.dtype, out, op, "out_dtype",
                       [&](int64_t i) { return (i / ch.inner) % ch.channels; });
}

Status dequantize_per_channel_group_out(const Tensor& input_raw, const Tensor& scales, const Tensor* zero_points,
                                        QuantRange range, int64_t group_size, Tensor& out) {
  const char* op = "dequantize_per_channel_group";
  LATHE_RETURN_IF_ERROR(check_quantized_input(input_raw, range, op));
  LATHE_RETURN_IF_ERROR(check_rank(input_raw, 2, op, "input"));
  LATHE_RETURN_IF_ERROR(check_input(scales, op, "scales"));
  const int64_t K = input_raw.sizes[1];
  const int64_t g = effective_group_size(group_size, K, scales);
  if (g <= 1) return make_error(std::string(op) + ": group_size must be > 1, got " + std::to_string(group_size));
  if (K % g != 0) {
    return make_error(std::string(op) + ": the last dimension " + std::to_string(K) + " is not a multiple of group_size " +
                      std::to_string(g));
  }
  const int64_t groups = input_raw.numel() / g;
  if (scales.numel() != groups) {
    return make_error(std::string(op) + ": scales " + shape_string(scales.sizes) + " must have " +
                      std::to_string(groups) + " entries (one per group of " + std::to_string(g) + ")");
  }
  if (zero_points) {
    LATHE_RETURN_IF_ERROR(check_input(*zero_points, op, "zero_points"));
    if (zero_points->numel() != groups || !is_integral(zero_points->dtype, false)) {
      return make_error(std::string(op) + ": zero_points must be " + std::to_string(groups) + " integers, got " +
                        std::string(dtype_name(zero_points->dtype)) + " " + shape_string(zero_points->sizes));
    }
  }
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, input_raw.sizes, op));
  const Tensor in = as_contiguous(input_raw);
  const std::vector<int64_t> zps = zero_points ? values_i64(*zero_points) : std::vector<int64_t>(groups, 0);
  // w.reshape(-1, g).sub(zp).mul(scales).to(output_dtype).
  return dequantize_by(in, scales, zps, range.dtype, out, op, "output_dtype", [&](int64_t i) { return i / g; });
}

// ---- adapters ------------------------------------------------------------------------
namespace {

Result<QuantRange> range_args(KernelCall& c) {
  QuantRange r;
  LATHE_ASSIGN_OR_RETURN(r.quant_min, c.int_arg("quant_min"));
  LATHE_ASSIGN_OR_RETURN(r.quant_max, c.int_arg("quant_max"));
  LATHE_ASSIGN_OR_RETURN(std::optional<DType> d, c.dtype_arg("dtype"));
  if (!d) return c.arg_error("dtype", "missing");
  r.dtype = *d;
  return r;
}

// The one value of a 1-element scale / zero_point tensor (.item()).
Result<double> item(KernelCall& c, const char* name) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* t, c.tensor(name));
  LATHE_RETURN_IF_ERROR(check_input(*t, "quantized_decomposed", name));
  if (t->numel() != 1) return c.arg_error(name, "expected one element, got " + shape_string(t->sizes));
  return values_f64(*t)[0];
}

Result<DType> out_dtype(KernelCall& c, const char* name) {
  LATHE_ASSIGN_OR_RETURN(std::optional<DType> d, c.dtype_arg(name));
  return d.value_or(DType::Float32);
}

// scale and zero_point: numbers (.default) or 1-element tensors (.tensor).
struct PerTensorParams {
  double scale = 0;
  int64_t zero_point = 0;
};

template <bool kTensorArgs>
Result<PerTensorParams> per_tensor_params(KernelCall& c) {
  PerTensorParams p;
  if constexpr (kTensorArgs) {
    LATHE_ASSIGN_OR_RETURN(p.scale, item(c, "scale"));
    LATHE_ASSIGN_OR_RETURN(double z, item(c, "zero_point"));
    // A NaN or a value past int64 (from a float tensor, or a file's int64
    // rounded up to 2^63) has no int64 to cast to.
    if (!(std::abs(z) < 9.2e18)) {
      return c.arg_error("zero_point", "holds " + std::to_string(z) + ", which is not an int64");
    }
    p.zero_point = static_cast<int64_t>(z);
  } else {
    LATHE_ASSIGN_OR_RETURN(p.scale, c.double_arg("scale"));
    LATHE_ASSIGN_OR_RETURN(p.zero_point, c.int_arg("zero_point"));
  }
  return p;
}

template <bool kTensorArgs>
Status quantize_per_tensor_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(QuantRange r, range_args(c));
  LATHE_ASSIGN_OR_RETURN(PerTensorParams p, per_tensor_params<kTensorArgs>(c));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, r.dtype, x->sizes));
  return quantize_per_tensor_out(*x, p.scale, p.zero_point, r, *out);
}

template <bool kTensorArgs>
Status dequantize_per_tensor_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(QuantRange r, range_args(c));
  LATHE_ASSIGN_OR_RETURN(PerTensorParams p, per_tensor_params<kTensorArgs>(c));
  LATHE_ASSIGN_OR_RETURN(DType od, out_dtype(c, "out_dtype"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, od, x->sizes));
  return dequantize_per_tensor_out(*x, p.scale, p.zero_point, r, *out);
}

// What quantize_per_channel and dequantize_per_channel both take;
// dequantize may omit the zero points (nullptr), quantize may not.
struct PerChannelArgs {
  const Tensor* x;
  const Tensor* scales;
  const Tensor* zero_points;
  int64_t axis;
  QuantRange range;
};

Result<PerChannelArgs> per_channel_args(KernelCall& c, bool zero_points_optional) {
  PerChannelArgs a;
  LATHE_ASSIGN_OR_RETURN(a.x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(a.scales, c.tensor("scales"));
  if (zero_points_optional) {
    LATHE_ASSIGN_OR_RETURN(a.zero_points, c.optional_tensor("zero_points"));
  } else {
    LATHE_ASSIGN_OR_RETURN(a.zero_points, c.tensor("zero_points"));
  }
  LATHE_ASSIGN_OR_RETURN(a.axis, c.int_arg("axis"));
  LATHE_ASSIGN_OR_RETURN(a.range, range_args(c));
  return a;
}

Status quantize_per_channel_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(PerChannelArgs a, per_channel_args(c, false));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a.range.dtype, a.x->sizes));
  return quantize_per_channel_out(*a.x, *a.scales, *a.zero_points, a.axis, a.range, *out);
}

Status dequantize_per_channel_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(PerChannelArgs a, per_channel_args(c, true));
  LATHE_ASSIGN_OR_RETURN(DType od, out_dtype(c, "out_dtype"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, od, a.x->sizes));
  return dequantize_per_channel_out(*a.x, *a.scales, a.zero_points, a.axis, a.range, *out);
}

Status dequantize_per_channel_group_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* s, c.tensor("scales"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* z, c.optional_tensor("zero_points"));
  LATHE_ASSIGN_OR_RETURN(QuantRange r, range_args(c));
  LATHE_ASSIGN_OR_RETURN(int64_t group_size, c.int_arg("group_size", 128));
  LATHE_ASSIGN_OR_RETURN(DType od, out_dtype(c, "output_dtype"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, od, x->sizes));
  return dequantize_per_channel_group_out(*x, *s, z, r, group_size, *out);
}

}  // namespace

// ---- fake quantization -----------------------------------------------------------

namespace {

// static_cast<int64_t> without undefined behaviour on NaN or huge values
// (which then land outside any quant range).
int64_t to_int64_saturated(double v) {
  if (std::isnan(v)) return INT64_MIN;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

}  // namespace

Status fake_quantize_out(const Tensor& input_raw, const Tensor& scale_raw, const Tensor& zp_raw, int64_t axis,
                         int64_t quant_min, int64_t quant_max, Tensor& out, Tensor* mask) {
  const char* op = "fake_quantize";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "self"));
  LATHE_RETURN_IF_ERROR(check_input(scale_raw, op, "scale"));
  LATHE_RETURN_IF_ERROR(check_input(zp_raw, op, "zero_point"));
  if (quant_min > quant_max) return make_error("fake_quantize: quant_min must not exceed quant_max");
  const int64_t r = static_cast<int64_t>(input_raw.sizes.size());
  int64_t channels = 1, inner = input_raw.numel();
  if (axis >= 0) {
    if (axis >= r) return make_error("fake_quantize: axis " + std::to_string(axis) + " out of range");
    channels = input_raw.sizes[axis];
    inner = 1;
    for (int64_t k = axis + 1; k < r; ++k) inner *= input_raw.sizes[k];
  }
  if (scale_raw.numel() != channels || zp_raw.numel() != channels) {
    return make_error("fake_quantize: scale and zero_point need " + std::to_string(channels) + " elements, got " +
                      std::to_string(scale_raw.numel()) + " and " + std::to_string(zp_raw.numel()));
  }
  LATHE_RETURN_IF_ERROR(check_out(out, input_raw.dtype, input_raw.sizes, op));
  if (mask) LATHE_RETURN_IF_ERROR(check_out(*mask, DType::Bool, input_raw.sizes, op));
  const bool float_zp = !is_integral(zp_raw.dtype, true);
  const Tensor scale = as_contiguous(as_dtype(scale_raw, DType::Float32));
  const Tensor zp = as_contiguous(as_dtype(zp_raw, DType::Float64));
  const Tensor input = as_contiguous(input_raw);
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(input);
    T* y = mdata<T>(out);
    bool* m = mask ? mdata<bool>(*mask) : nullptr;
    const int64_t n = input.numel();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ch = (i / inner) % channels;
      const float sc = cdata<float>(scale)[ch];
      const float inv_scale = 1.0f / sc;
      const double z = cdata<double>(zp)[ch];
      double qd;  // the quantized value before clamping
      if (float_zp) {
        qd = std::nearbyint(static_cast<float>(x[i] * inv_scale + static_cast<float>(z)));
      } else {
        // ATen: int zero_point + nearbyint(x * inv_scale), truncated to int64.
        const T sum = static_cast<T>(z) + std::nearbyint(static_cast<T>(x[i] * inv_scale));  // in T, as ATen
        qd = static_cast<double>(to_int64_saturated(static_cast<double>(sum)));
      }
      const bool inside = qd >= static_cast<double>(quant_min) && qd <= static_cast<double>(quant_max);
      const double q = std::min(std::max(qd, static_cast<double>(quant_min)), static_cast<double>(quant_max));
      y[i] = static_cast<T>((q - z) * static_cast<double>(sc));
      if (m) m[i] = inside;
    }
    return Status::Ok();
  });
}

namespace {

// fake_quantize_per_tensor_affine(self, scale, zero_point, quant_min,
// quant_max) with float/int literals (.default) or 1-element tensors
// (.tensor_qparams); per_channel(self, scale, zero_point, axis, ...). The
// cachemask forms also return the in-range mask.
template <bool per_channel>
Status fake_quantize_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  Tensor scale, zero_point;
  if (c.is_tensor("scale")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* s, c.tensor("scale"));
    LATHE_ASSIGN_OR_RETURN(const Tensor* z, c.tensor("zero_point"));
    scale = *s;
    zero_point = *z;
  } else {
    LATHE_ASSIGN_OR_RETURN(double s, c.double_arg("scale"));
    LATHE_ASSIGN_OR_RETURN(int64_t z, c.int_arg("zero_point"));
    scale = Tensor::empty(DType::Float64, {});
    *mdata<double>(scale) = s;
    zero_point = Tensor::empty(DType::Int64, {});
    *mdata<int64_t>(zero_point) = z;
  }
  int64_t axis = -1;
  if (per_channel) {
    LATHE_ASSIGN_OR_RETURN(int64_t a, c.int_arg("axis"));
    LATHE_ASSIGN_OR_RETURN(axis, normalize_dim(a, static_cast<int64_t>(self->sizes.size())));
  }
  LATHE_ASSIGN_OR_RETURN(int64_t quant_min, c.int_arg("quant_min"));
  LATHE_ASSIGN_OR_RETURN(int64_t quant_max, c.int_arg("quant_max"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  Tensor out_t = *out;
  Tensor* mask = nullptr;
  if (c.output_count() > 1) {
    LATHE_ASSIGN_OR_RETURN(mask, c.alloc_output(1, DType::Bool, self->sizes));
  }
  return fake_quantize_out(*self, scale, zero_point, axis, quant_min, quant_max, out_t, mask);
}

}  // namespace

void register_quantized_kernels(KernelRegistry& r) {
  register_overloads(r, "fake_quantize_per_tensor_affine", {"default", "tensor_qparams"}, fake_quantize_kernel<false>);
  register_overloads(r, "fake_quantize_per_tensor_affine_cachemask", {"default"}, fake_quantize_kernel<false>);
  register_overloads(r, "fake_quantize_per_channel_affine", {"default"}, fake_quantize_kernel<true>);
  register_overloads(r, "fake_quantize_per_channel_affine_cachemask", {"default"}, fake_quantize_kernel<true>);
  auto q = [&](const char* op, KernelFn fn) { r.set(std::string("quantized_decomposed.") + op, KernelInfo{fn}); };
  q("quantize_per_tensor.default", quantize_per_tensor_kernel<false>);
  q("quantize_per_tensor.tensor", quantize_per_tensor_kernel<true>);
  q("dequantize_per_tensor.default", dequantize_per_tensor_kernel<false>);
  q("dequantize_per_tensor.tensor", dequantize_per_tensor_kernel<true>);
  q("quantize_per_channel.default", quantize_per_channel_kernel);
  q("dequantize_per_channel.default", dequantize_per_channel_kernel);
  q("dequantize_per_channel_group.default", dequantize_per_channel_group_kernel);
}

}  // namespace lathe::kernels
