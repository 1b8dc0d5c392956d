#include "lathe/runtime/kernels/util.h"

#include <algorithm>
#include <limits>

#include "lathe/core/int_arith.h"

namespace lathe::kernels {

// ---- 16-bit floats --------------------------------------------------------
// Round-to-nearest-even float -> binary16 (F. Giesen, float_to_half_fast3_rtne).
Half::Half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint32_t o;
  if (x >= (127u + 16u) << 23) {
    o = x > (255u << 23) ? 0x7e00u : 0x7c00u;  // NaN stays NaN, overflow -> inf
  } else if (x < (113u << 23)) {
    // Subnormal result: let the FPU round by adding a magic number.
    const uint32_t magic_u = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float xf, magic;
    std::memcpy(&xf, &x, 4);
    std::memcpy(&magic, &magic_u, 4);
    xf += magic;
    uint32_t xi;
    std::memcpy(&xi, &xf, 4);
    o = xi - magic_u;
  } else {
    const uint32_t mant_odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu;
    x += mant_odd;
    o = x >> 13;
  }
  bits = static_cast<uint16_t>(o | (sign >> 16));
}

Half::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    float m = static_cast<float>(mant) * 5.9604644775390625e-08f;  // 2^-24
    return sign ? -m : m;
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

BFloat16::BFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    bits = 0x7fc0;
    return;
  }
  x += ((x >> 16) & 1u) + 0x7fffu;
  bits = static_cast<uint16_t>(x >> 16);
}

BFloat16::operator float() const {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// ---- type promotion ---------------------------------------------------------
namespace {
bool is_float(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
int int_rank(DType d) {
  switch (d) {
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Int64: return 4;
    default: return 0;
  }
}
DType promote_skip_undefined(DType a, DType b) {
  if (a == DType::Unknown) return b;
  if (b == DType::Unknown) return a;
  return promote_types(a, b);
}
DType combine_categories(DType higher, DType lower) {
  if (is_float(higher)) return higher;
  if (higher == DType::Bool || is_float(lower)) return promote_skip_undefined(higher, lower);
  if (higher != DType::Unknown) return higher;
  return lower;
}
}  // namespace

bool is_integral(DType d, bool include_bool) {
  if (d == DType::Bool) return include_bool;
  return d == DType::UInt8 || int_rank(d) > 0;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool fa = is_float(a), fb = is_float(b);
  if (fa && fb) {
    if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
    return DType::Float32;  // f16+bf16, or either with f32
  }
  if (fa) return a;
  if (fb) return b;
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int16;
  if (a == DType::UInt8) return int_rank(b) ? b : DType::Unknown;
  if (b == DType::UInt8) return int_rank(a) ? a : DType::Unknown;
  if (!int_rank(a) || !int_rank(b)) return DType::Unknown;
  return int_rank(a) > int_rank(b) ? a : b;
}

void ResultType::add(const Tensor& t) {
  if (!t.sizes.empty()) {
    dim_ = promote_skip_undefined(dim_, t.dtype);
  } else {
    zero_ = promote_skip_undefined(zero_, t.dtype);
  }
}

void ResultType::add(const Scalar& s) {
  DType d = s.kind == Scalar::Kind::Float ? DType::Float32 : s.kind == Scalar::Kind::Int ? DType::Int64 : DType::Bool;
  wrapped_ = promote_skip_undefined(wrapped_, d);
}

DType ResultType::get() const { return combine_categories(dim_, combine_categories(zero_, wrapped_)); }

// ---- shapes -------------------------------------------------------------------
Result<int64_t> normalize_dim(int64_t dim, int64_t rank) {
  const int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) {
    return make_error("dim " + std::to_string(dim) + " out of range for a tensor of rank " + std::to_string(rank));
  }
  return dim < 0 ? dim + r : dim;
}

Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      return make_error("shapes " + shape_string(a) + " and " + shape_string(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Tensor& t, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> out(sizes.size(), 0);
  const size_t lead = sizes.size() - t.sizes.size();
  for (size_t i = 0; i < t.sizes.size(); ++i) {
    out[lead + i] = (t.sizes[i] == 1 && sizes[lead + i] != 1) ? 0 : t.strides[i];
  }
  return out;
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  return checked_numel(sizes).value_or(std::numeric_limits<int64_t>::max());
}

Result<std::vector<int64_t>> infer_size(std::vector<int64_t> shape, int64_t numel) {
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) return make_error("only one dimension can be inferred in " + shape_string(shape));
      infer = i;
    } else if (shape[i] < 0) {
      return make_error("invalid shape dimension " + std::to_string(shape[i]));
    }
  }
  std::vector<int64_t> given = shape;
  if (infer) given[*infer] = 1;
  // Exact: a wrapped product could equal any numel and pass a wrong shape.
  const std::optional<int64_t> known = checked_numel(given);
  auto invalid = [&] {
    return make_error("shape " + shape_string(shape) + " is invalid for input of size " + std::to_string(numel));
  };
  if (!known) return invalid();
  if (infer) {
    if (*known == 0 || numel % *known != 0) return invalid();
    shape[*infer] = numel / *known;
  } else if (*known != numel) {
    return invalid();
  }
  return shape;
}

// ATen's computeStride: walks chunks of the old shape that are contiguous
// among themselves and matches them to runs of the new shape.
std::optional<std::vector<int64_t>> view_strides(const Tensor& t, const std::vector<int64_t>& newshape) {
  const auto& oldshape = t.sizes;
  const auto& oldstride = t.strides;
  if (oldshape.empty()) return std::vector<int64_t>(newshape.size(), 1);
  const int64_t numel = numel_of(oldshape);
  if (numel == 0 && oldshape == newshape) return oldstride;
  std::vector<int64_t> newstride(newshape.size());
  if (numel == 0) {
    for (int64_t d = static_cast<int64_t>(newshape.size()) - 1; d >= 0; --d) {
      // Saturating, as Tensor::contiguous_strides does for an empty tensor
      // whose other dims multiply past int64 (fuzz_runtime; an overflow was undefined).
      newstride[d] = d == static_cast<int64_t>(newshape.size()) - 1
                         ? 1
                         : checked_mul(std::max<int64_t>(newshape[d + 1], 1), newstride[d + 1]).value_or(std::numeric_limits<int64_t>::max());
    }
    return newstride;
  }
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 ||
        (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  Tensor t;
  t.storage = base.storage;
  t.dtype = base.dtype;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  t.storage_offset = offset;
  return t;
}

Tensor contiguous_copy(const Tensor& t) {
  Tensor out = Tensor::empty(t.dtype, t.sizes);
  (void)copy_into(t, out);  // same shape and dtype: cannot fail
  return out;
}

Tensor as_contiguous(const Tensor& t) { return t.is_contiguous() ? t : contiguous_copy(t); }

Tensor as_dtype(const Tensor& t, DType dtype) {
  if (t.dtype == dtype) return t;
  Tensor out = Tensor::empty(dtype, t.sizes);
  (void)copy_into(t, out);
  return out;
}

// ---- checks -------------------------------------------------------------------
Status check_writable(const Tensor& out, const char* op) {
  // An empty owned storage has no data pointer; there is nothing to write.
  if (out.storage && out.numel() == 0) return out.check_fits();
  if (!out.storage || !out.storage->mutable_data()) {
    return make_error(std::string(op) + ": output is read-only (a view of mapped weights?)");
  }
  return out.check_fits();
}

Status check_out(const Tensor& out, DType dtype, const std::vector<int64_t>& sizes, const char* op) {
  if (out.dtype != dtype || out.sizes != sizes) {
    return make_error(std::string(op) + ": out is " + std::string(dtype_name(out.dtype)) + " " +
                      shape_string(out.sizes) + ", expected " + std::string(dtype_name(dtype)) + " " +
                      shape_string(sizes));
  }
  if (!out.is_contiguous()) return make_error(std::string(op) + ": out must be contiguous");
  return check_writable(out, op);
}

Status check_input(const Tensor& t, const char* op, const char* arg) {
  Status s = t.check_fits();
  if (!s.ok()) return s.error().context(std::string(op) + " " + arg);
  return Status::Ok();
}

Status check_dtype(const Tensor& t, DType dtype, const char* op, const char* arg) {
  if (t.dtype == dtype) return Status::Ok();
  return make_error(std::string(op) + ": " + arg + " must be " + std::string(dtype_name(dtype)) + ", got " +
                    std::string(dtype_name(t.dtype)));
}

Status check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype == b.dtype) return Status::Ok();
  return make_error(std::string(op) + ": dtypes differ (" + std::string(dtype_name(a.dtype)) + " and " +
                    std::string(dtype_name(b.dtype)) + ")");
}

Status check_rank(const Tensor& t, size_t rank, const char* op, const char* arg) {
  if (t.sizes.size() == rank) return Status::Ok();
  return make_error(std::string(op) + ": " + arg + " must be " + std::to_string(rank) + "-D, got " +
                    shape_string(t.sizes));
}

Status check_floating(const Tensor& t, const char* op, const char* arg) {
  if (is_float(t.dtype)) return Status::Ok();
  return make_error(std::string(op) + ": " + arg + " must be floating point, got " + std::string(dtype_name(t.dtype)));
}

// ---- copy ----------------------------------------------------------------------
Status copy_into(const Tensor& src, Tensor& dst) {
  LATHE_RETURN_IF_ERROR(check_input(src, "copy", "src"));
  LATHE_RETURN_IF_ERROR(check_writable(dst, "copy"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(src.sizes, dst.sizes));
  if (shape != dst.sizes) {
    return make_error("copy: source " + shape_string(src.sizes) + " does not broadcast to " + shape_string(dst.sizes));
  }
  std::array<std::vector<int64_t>, 2> strides{dst.strides, broadcast_strides(src, dst.sizes)};
  // Split over the pool only between distinct storages: a copy within one
  // storage (an in-place shift) is one memmove's to order.
  const bool split = dst.storage != src.storage;
  return dispatch_storage(dst.dtype, "copy", [&](auto dtag) -> Status {
    using D = decltype(dtag);
    return dispatch_storage(src.dtype, "copy", [&](auto stag) -> Status {
      using S = decltype(stag);
      D* d = mdata<D>(dst);
      const S* s = cdata<S>(src);
      auto row = [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
        D* dp = d + off[0];
        const S* sp = s + off[1];
        if constexpr (std::is_same_v<D, S>) {
          if (st[0] == 1 && st[1] == 1) {
            std::memmove(dp, sp, static_cast<size_t>(n) * sizeof(D));
            return;
          }
        }
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && !std::is_integral_v<S>) {
            // NaN, inf and values past int64 have no integer (the cast was
            // undefined; found by fuzz_runtime): saturating_cast (evalue.h).
            dp[i * st[0]] = static_cast<D>(saturating_cast<int64_t>(static_cast<double>(sp[i * st[1]])));
          } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
            dp[i * st[0]] = static_cast<D>(static_cast<float>(sp[i * st[1]]));
          } else {
            dp[i * st[0]] = static_cast<D>(sp[i * st[1]]);
          }
        }
      };
      if (split) parallel_for_each_row<2>(dst.sizes, strides, row);
      else for_each_row<2>(dst.sizes, strides, row);
      return Status::Ok();
    });
  });
}

}  // namespace lathe::kernels
