#include "lathe/runtime/kernels/affine_quant.h"

#include <cmath>
#include <limits>
#include <optional>

#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

// Calls f(i, b) for every element i (row-major) of `sizes` with b its
// block's row-major index.
template <typename F>
void for_each_block_element(const std::vector<int64_t>& sizes, const std::vector<int64_t>& block_size,
                            const std::vector<int64_t>& blocks, F f) {
  const size_t r = sizes.size();
  std::vector<int64_t> block_stride(r, 1), idx(r, 0);
  for (size_t d = r; d-- > 1;) block_stride[d - 1] = block_stride[d] * blocks[d];
  const int64_t n = numel_of(sizes);
  for (int64_t i = 0; i < n; ++i) {
    int64_t b = 0;
    for (size_t d = 0; d < r; ++d) b += idx[d] / block_size[d] * block_stride[d];
    f(i, b);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// Every element of an integer or float tensor as float (zero points).
std::vector<float> as_floats(const Tensor& t) {
  const Tensor c = as_contiguous(as_dtype(t, DType::Float32));
  const float* p = cdata<float>(c);
  return std::vector<float>(p, p + c.numel());
}

Status check_range(const AffineRange& r, const char* op) {
  int64_t lo = 0, hi = 0;
  switch (r.dtype) {
    case DType::Int8: lo = -128, hi = 127; break;
    case DType::UInt8: lo = 0, hi = 255; break;
    case DType::Int16: lo = -32768, hi = 32767; break;
    case DType::Int32: lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max(); break;
    default: return make_error(std::string(op) + ": unsupported quantized dtype " + std::string(dtype_name(r.dtype)));
  }
  if (r.quant_min < lo || r.quant_max > hi || r.quant_min > r.quant_max) {
    return make_error(std::string(op) + ": quant range [" + std::to_string(r.quant_min) + ", " +
                      std::to_string(r.quant_max) + "] is outside " + std::string(dtype_name(r.dtype)) + "'s");
  }
  return Status::Ok();
}

// Stores float v (already integral and in range) as `dtype` at element i.
void store_int(Tensor& out, int64_t i, float v) {
  switch (out.dtype) {
    case DType::Int8: mdata<int8_t>(out)[i] = static_cast<int8_t>(v); break;
    case DType::UInt8: mdata<uint8_t>(out)[i] = static_cast<uint8_t>(v); break;
    case DType::Int16: mdata<int16_t>(out)[i] = static_cast<int16_t>(v); break;
    case DType::Int32: mdata<int32_t>(out)[i] = static_cast<int32_t>(v); break;
    case DType::Int64: mdata<int64_t>(out)[i] = static_cast<int64_t>(v); break;
    default: mdata<float>(out)[i] = v; break;
  }
}

// The qparam tensors hold one value per block.
Status check_qparams(const Tensor& scale, const Tensor* zero_point, int64_t nblocks, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(scale, op, "scale"));
  LATHE_RETURN_IF_ERROR(check_dtype(scale, DType::Float32, op, "scale"));
  if (scale.numel() != nblocks) {
    return make_error(std::string(op) + ": scale " + shape_string(scale.sizes) + " must have one value per block (" +
                      std::to_string(nblocks) + ")");
  }
  if (zero_point && zero_point->numel() != 0) {
    LATHE_RETURN_IF_ERROR(check_input(*zero_point, op, "zero_point"));
    if (zero_point->numel() != nblocks) {
      return make_error(std::string(op) + ": zero_point " + shape_string(zero_point->sizes) +
                        " must have one value per block (" + std::to_string(nblocks) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int64_t>> affine_blocks(const std::vector<int64_t>& sizes, const std::vector<int64_t>& block_size,
                                           const char* op) {
  if (block_size.size() != sizes.size()) {
    return make_error(std::string(op) + ": block_size has " + std::to_string(block_size.size()) +
                      " entries for a " + std::to_string(sizes.size()) + "-D input");
  }
  std::vector<int64_t> blocks(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (block_size[d] <= 0 || sizes[d] % block_size[d] != 0) {
      return make_error(std::string(op) + ": block_size " + shape_string(block_size) + " does not tile input " +
                        shape_string(sizes));
    }
    blocks[d] = sizes[d] / block_size[d];
  }
  return blocks;
}

Status choose_qparams_affine_out(const Tensor& input_raw, AffineMapping mapping, const std::vector<int64_t>& block_size,
                                 AffineRange range, float eps, Tensor& scale, Tensor& zero_point) {
  const char* op = "choose_qparams_affine";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_RETURN_IF_ERROR(check_dtype(input_raw, DType::Float32, op, "input"));
  LATHE_RETURN_IF_ERROR(check_range(range, op));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> blocks, affine_blocks(input_raw.sizes, block_size, op));
  const int64_t nb = numel_of(blocks);
  if (scale.numel() != nb || zero_point.numel() != nb || scale.dtype != DType::Float32) {
    return make_error(std::string(op) + ": outputs must hold one float32 scale and zero point per block");
  }
  const Tensor in = as_contiguous(input_raw);
  const float* x = cdata<float>(in);
  std::vector<float> mn(nb, std::numeric_limits<float>::infinity()), mx(nb, -std::numeric_limits<float>::infinity());
  for_each_block_element(in.sizes, block_size, blocks, [&](int64_t i, int64_t b) {
    if (x[i] < mn[b] || std::isnan(x[i])) mn[b] = std::isnan(mn[b]) ? mn[b] : x[i];
    if (x[i] > mx[b] || std::isnan(x[i])) mx[b] = std::isnan(mx[b]) ? mx[b] : x[i];
  });
  const float qmin = static_cast<float>(range.quant_min), qmax = static_cast<float>(range.quant_max);
  float* s = mdata<float>(scale);
  for (int64_t b = 0; b < nb; ++b) {
    const float lo = std::min(mn[b], 0.0f), hi = std::max(mx[b], 0.0f);
    float sc = 0, zp = 0;
    if (mapping == AffineMapping::Asymmetric) {
      sc = std::max((hi - lo) / static_cast<float>(range.quant_max - range.quant_min), eps);
      zp = std::min(std::max(qmin - std::nearbyint(lo / sc), qmin), qmax);
    } else {
      if (mapping == AffineMapping::Symmetric) {
        sc = std::max(-lo, hi) / static_cast<float>(static_cast<double>(range.quant_max - range.quant_min) / 2);
      } else {
        const float smin = lo / qmin, smax = hi / qmax;
        sc = smin > smax ? smin : smax;
      }
      sc = std::max(sc, eps);
      zp = static_cast<float>(static_cast<int64_t>(static_cast<double>(range.quant_max + range.quant_min + 1) / 2));
    }
    s[b] = sc;
    store_int(zero_point, b, zp);
  }
  return Status::Ok();
}

Status quantize_affine_out(const Tensor& input_raw, const std::vector<int64_t>& block_size, const Tensor& scale,
                           const Tensor* zero_point, AffineRange range, Tensor& out) {
  const char* op = "quantize_affine";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_RETURN_IF_ERROR(check_dtype(input_raw, DType::Float32, op, "input"));
  LATHE_RETURN_IF_ERROR(check_range(range, op));
  LATHE_RETURN_IF_ERROR(check_out(out, range.dtype, input_raw.sizes, op));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> blocks, affine_blocks(input_raw.sizes, block_size, op));
  LATHE_RETURN_IF_ERROR(check_qparams(scale, zero_point, numel_of(blocks), op));
  const Tensor in = as_contiguous(input_raw), sc = as_contiguous(scale);
  const float* x = cdata<float>(in);
  const float* s = cdata<float>(sc);
  const std::vector<float> zp = zero_point && zero_point->numel() ? as_floats(*zero_point) : std::vector<float>();
  const float qmin = static_cast<float>(range.quant_min), qmax = static_cast<float>(range.quant_max);
  // round(input * (1.0 / scale)) + zero_point, clamped: each step in float32.
  for_each_block_element(in.sizes, block_size, blocks, [&](int64_t i, int64_t b) {
    const float inv = 1.0f / s[b];
    float q = std::nearbyint(x[i] * inv);
    if (!zp.empty()) q += zp[b];
    store_int(out, i, std::min(std::max(q, qmin), qmax));
  });
  return Status::Ok();
}

Status dequantize_affine_out(const Tensor& input_raw, const std::vector<int64_t>& block_size, const Tensor& scale,
                             const Tensor* zero_point, AffineRange range, Tensor& out) {
  const char* op = "dequantize_affine";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_RETURN_IF_ERROR(check_range(range, op));
  if (input_raw.dtype != range.dtype) {
    return make_error(std::string(op) + ": input is " + std::string(dtype_name(input_raw.dtype)) +
                      ", but input_dtype says " + std::string(dtype_name(range.dtype)));
  }
  LATHE_RETURN_IF_ERROR(check_out(out, DType::Float32, input_raw.sizes, op));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> blocks, affine_blocks(input_raw.sizes, block_size, op));
  LATHE_RETURN_IF_ERROR(check_qparams(scale, zero_point, numel_of(blocks), op));
  const std::vector<float> q = as_floats(input_raw), s = as_floats(scale);
  const std::vector<float> zp = zero_point && zero_point->numel() ? as_floats(*zero_point) : std::vector<float>();
  float* y = mdata<float>(out);
  // input.to(float32) - zero_point.to(float32), then * scale.
  for_each_block_element(input_raw.sizes, block_size, blocks, [&](int64_t i, int64_t b) {
    y[i] = (zp.empty() ? q[i] : q[i] - zp[b]) * s[b];
  });
  return Status::Ok();
}

// ---- adapters -------------------------------------------------------------------
namespace {

// quant_min / quant_max default to the dtype's bounds.
Result<AffineRange> range_args(KernelCall& c, const char* dtype_name_arg) {
  AffineRange r;
  LATHE_ASSIGN_OR_RETURN(std::optional<DType> d, c.dtype_arg(dtype_name_arg));
  if (!d) return c.arg_error(dtype_name_arg, "missing");
  r.dtype = *d;
  r.quant_min = r.dtype == DType::UInt8 ? 0 : r.dtype == DType::Int16 ? -32768 : -128;
  r.quant_max = r.dtype == DType::UInt8 ? 255 : r.dtype == DType::Int16 ? 32767 : 127;
  if (r.dtype == DType::Int32) r.quant_min = std::numeric_limits<int32_t>::min(), r.quant_max = std::numeric_limits<int32_t>::max();
  LATHE_ASSIGN_OR_RETURN(std::optional<Scalar> lo, c.optional_scalar("quant_min"));
  LATHE_ASSIGN_OR_RETURN(std::optional<Scalar> hi, c.optional_scalar("quant_max"));
  if (lo) r.quant_min = lo->i;
  if (hi) r.quant_max = hi->i;
  return r;
}

Result<AffineMapping> mapping_arg(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(std::string m, c.string_arg("mapping_type"));
  if (m == "SYMMETRIC") return AffineMapping::Symmetric;
  if (m == "SYMMETRIC_NO_CLIPPING_ERR") return AffineMapping::SymmetricNoClippingErr;
  if (m == "ASYMMETRIC") return AffineMapping::Asymmetric;
  return c.arg_error("mapping_type", "'" + m + "' is not SYMMETRIC, SYMMETRIC_NO_CLIPPING_ERR or ASYMMETRIC");
}

// The qparams' shape: one per block, keeping reduced dims (keepdim) or
// dropping the dims reduced whole, as the reference's view/amin does.
std::vector<int64_t> qparam_shape(const std::vector<int64_t>& sizes, const std::vector<int64_t>& block_size,
                                  const std::vector<int64_t>& blocks, bool keepdim) {
  if (keepdim) return blocks;
  std::vector<int64_t> s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (block_size[d] == 1 || (block_size[d] != sizes[d] && block_size[d] > 1)) s.push_back(blocks[d]);
  }
  return s;
}

Status choose_qparams_affine_kernel(KernelCall& c) {
  const char* op = "choose_qparams_affine";
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(AffineMapping mapping, mapping_arg(c));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> block, c.int_list("block_size"));
  LATHE_ASSIGN_OR_RETURN(AffineRange range, range_args(c, "target_dtype"));
  LATHE_ASSIGN_OR_RETURN(std::optional<double> eps, c.optional_double("eps"));
  LATHE_ASSIGN_OR_RETURN(std::optional<DType> scale_dtype, c.dtype_arg("scale_dtype"));
  LATHE_ASSIGN_OR_RETURN(std::optional<DType> zp_dtype, c.dtype_arg("zero_point_dtype"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  if (scale_dtype.value_or(x->dtype) != DType::Float32) return c.arg_error("scale_dtype", "only float32 is supported");
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> blocks, affine_blocks(x->sizes, block, op));
  const std::vector<int64_t> shape = qparam_shape(x->sizes, block, blocks, keepdim);
  const DType zd = zp_dtype.value_or(mapping == AffineMapping::Asymmetric ? DType::Int32 : range.dtype);
  LATHE_ASSIGN_OR_RETURN(Tensor * scale, c.alloc_output(0, DType::Float32, shape));
  Tensor s = *scale;  // the pointer is valid only until the next output
  LATHE_ASSIGN_OR_RETURN(Tensor * zp, c.alloc_output(1, zd, shape));
  // torch.finfo(float32).smallest_normal when eps is None.
  const float e = eps ? static_cast<float>(*eps) : std::numeric_limits<float>::min();
  return choose_qparams_affine_out(*x, mapping, block, range, e, s, *zp);
}

// What quantize_affine and dequantize_affine both take: the input, its
// block size, scale and zero point, and the integer range (`range_dtype`
// names the argument holding the integer dtype).
struct AffineArgs {
  const Tensor* x;
  std::vector<int64_t> block;
  const Tensor* scale;
  const Tensor* zp;
  AffineRange range;
};

Result<AffineArgs> affine_args(KernelCall& c, const char* range_dtype) {
  AffineArgs a;
  LATHE_ASSIGN_OR_RETURN(a.x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(a.block, c.int_list("block_size"));
  LATHE_ASSIGN_OR_RETURN(a.scale, c.tensor("scale"));
  LATHE_ASSIGN_OR_RETURN(a.zp, c.optional_tensor("zero_point"));
  LATHE_ASSIGN_OR_RETURN(a.range, range_args(c, range_dtype));
  return a;
}

Status quantize_affine_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(AffineArgs a, affine_args(c, "output_dtype"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a.range.dtype, a.x->sizes));
  return quantize_affine_out(*a.x, a.block, *a.scale, a.zp, a.range, *out);
}

Status dequantize_affine_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(AffineArgs a, affine_args(c, "input_dtype"));
  LATHE_ASSIGN_OR_RETURN(std::optional<DType> od, c.dtype_arg("output_dtype"));
  if (od.value_or(DType::Float32) != DType::Float32) return c.arg_error("output_dtype", "only float32 is supported");
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Float32, a.x->sizes));
  return dequantize_affine_out(*a.x, a.block, *a.scale, a.zp, a.range, *out);
}

}  // namespace

void register_affine_quant_kernels(KernelRegistry& r) {
  r.set("torchao.choose_qparams_affine.default", KernelInfo{choose_qparams_affine_kernel});
  r.set("torchao.quantize_affine.default", KernelInfo{quantize_affine_kernel});
  r.set("torchao.dequantize_affine.default", KernelInfo{dequantize_affine_kernel});
}

}  // namespace lathe::kernels
