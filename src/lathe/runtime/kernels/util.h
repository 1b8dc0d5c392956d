// Shared pieces of the portable kernels: typed element access, dtype
// dispatch, type promotion, broadcasting, strided iteration and the argument
// checks every kernel runs before touching memory (so a malformed call is an
// error naming the op and argument, never a wild read).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/runtime/evalue.h"

namespace lathe::kernels {

// ---- 16-bit floats (storage types; arithmetic happens in float) ---------
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f);  // NOLINT(implicit): round to nearest even
  operator float() const;  // NOLINT(implicit)
};
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f);  // NOLINT(implicit): round to nearest even
  operator float() const;  // NOLINT(implicit)
};

// ---- element access -------------------------------------------------------
template <typename T>
const T* cdata(const Tensor& t) {
  return reinterpret_cast<const T*>(t.data());
}
// Only for tensors check_writable() accepted.
template <typename T>
T* mdata(Tensor& t) {
  std::byte* base = t.storage->mutable_data();  // null for an empty storage (see Tensor::data)
  return base ? reinterpret_cast<T*>(base + t.storage_offset * static_cast<int64_t>(sizeof(T))) : nullptr;
}

// ---- dtype dispatch -------------------------------------------------------
// Calls f(T{}) with T the element type of `dtype`. The kinds name which
// dtypes a kernel accepts; anything else is an error naming the op.
enum class Types { Float, Numeric, All };

// `types` is a template argument so that a kernel body is only
// instantiated for the element types it accepts.
template <Types types, typename F>
Status dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: break;
  }
  if constexpr (types != Types::Float) {
    switch (dtype) {
      case DType::Int64: return f(int64_t{});
      case DType::Int32: return f(int32_t{});
      case DType::Int16: return f(int16_t{});
      case DType::Int8: return f(int8_t{});
      case DType::UInt8: return f(uint8_t{});
      default: break;
    }
  }
  if constexpr (types == Types::All) {
    if (dtype == DType::Bool) return f(bool{});
  }
  return make_error(std::string(op) + ": dtype " + std::string(dtype_name(dtype)) + " is not supported");
}

// Every dtype that can be stored or cast, including 16-bit floats.
template <typename F>
Status dispatch_storage(DType dtype, const char* op, F&& f) {
  if (dtype == DType::Float16) return f(Half{});
  if (dtype == DType::BFloat16) return f(BFloat16{});
  return dispatch<Types::All>(dtype, op, std::forward<F>(f));
}

// The type arithmetic on T runs in (float for 16-bit floats, like ATen's
// opmath; T itself otherwise).
template <typename T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// ---- type promotion (c10 promoteTypes / at::result_type) ------------------
bool is_integral(DType dtype, bool include_bool);
DType promote_types(DType a, DType b);

// Accumulates operands like at::native::ResultTypeState: dimensioned
// tensors outrank 0-d tensors, which outrank Python scalars, within a
// category (bool < integer < floating); a float scalar counts as the default
// dtype (float32).
class ResultType {
 public:
  void add(const Tensor& t);
  void add(const Scalar& s);
  DType get() const;

 private:
  DType dim_ = DType::Unknown, zero_ = DType::Unknown, wrapped_ = DType::Unknown;
};

// ---- shapes ---------------------------------------------------------------
// Wraps a negative dim; rank 0 accepts -1 and 0 (as ATen does).
Result<int64_t> normalize_dim(int64_t dim, int64_t rank);
Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Strides of `t` read as a tensor of `sizes` (0 on broadcast dims); `t`
// must be broadcastable to `sizes`.
std::vector<int64_t> broadcast_strides(const Tensor& t, const std::vector<int64_t>& sizes);
// Fills a single -1 in `shape` from numel; checks the product.
Result<std::vector<int64_t>> infer_size(std::vector<int64_t> shape, int64_t numel);
// Strides for viewing `t` as `sizes` without copying (ATen computeStride);
// nullopt when the memory layout does not allow it.
std::optional<std::vector<int64_t>> view_strides(const Tensor& t, const std::vector<int64_t>& sizes);
int64_t numel_of(const std::vector<int64_t>& sizes);

// A tensor sharing `base`'s storage.
Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset);
// A fresh contiguous tensor of `t`'s values (any layout, any dtype).
Tensor contiguous_copy(const Tensor& t);
// `t` itself if already contiguous, else a contiguous copy.
Tensor as_contiguous(const Tensor& t);
// `t` itself if already of `dtype`, else a converted contiguous copy.
Tensor as_dtype(const Tensor& t, DType dtype);

// ---- argument checks ------------------------------------------------------
Status check_writable(const Tensor& out, const char* op);
// `out` must have exactly `dtype` and `sizes`, be writable and contiguous
// (kernels write contiguous outputs; views come from view kernels).
Status check_out(const Tensor& out, DType dtype, const std::vector<int64_t>& sizes, const char* op);
Status check_dtype(const Tensor& t, DType dtype, const char* op, const char* arg);
Status check_same_dtype(const Tensor& a, const Tensor& b, const char* op);
Status check_rank(const Tensor& t, size_t rank, const char* op, const char* arg);
Status check_floating(const Tensor& t, const char* op, const char* arg);
// Every element the tensor addresses lies in its storage.
Status check_input(const Tensor& t, const char* op, const char* arg);

// ---- copying ---------------------------------------------------------------
// dst[...] = cast(src[...]) with broadcasting of src to dst's shape; any
// layouts. dst must be writable and must not overlap src partially.
Status copy_into(const Tensor& src, Tensor& dst);

// ---- strided iteration ----------------------------------------------------
// Visits an N-operand elementwise loop as rows: fn(offsets, n, inner_strides)
// with element offsets of each operand's row start (relative to each
// operand's data()) and the row's per-operand stride. Dims that are
// contiguous across all operands are merged first, so contiguous tensors
// become one row.
template <size_t N, typename F>
void for_each_row(const std::vector<int64_t>& sizes, const std::array<std::vector<int64_t>, N>& strides, F&& fn);

// for_each_row over the intra-op pool (runtime/parallel.h): the rows, or
// the one row of a contiguous loop, split into disjoint ranges once the
// loop has kParallelElements or more. Only for loops whose fn writes each
// element of a non-overlapping output from the same index of its inputs
// (elementwise ops, casts, where): what the threads write never meets.
inline constexpr int64_t kParallelElements = int64_t{1} << 16;
template <size_t N, typename F>
void parallel_for_each_row(const std::vector<int64_t>& sizes, const std::array<std::vector<int64_t>, N>& strides,
                           F&& fn);

// Same sizes/strides, with dims merged where every operand allows it.
template <size_t N>
void coalesce(std::vector<int64_t>& sizes, std::array<std::vector<int64_t>, N>& strides);

}  // namespace lathe::kernels

#include "lathe/runtime/kernels/util_inl.h"
