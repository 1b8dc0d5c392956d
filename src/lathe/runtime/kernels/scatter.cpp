#include "lathe/runtime/kernels/scatter.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/index.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

std::string str(const char* s) { return std::string(s); }

Status check_index(const Tensor& index, const char* op, bool allow_int32) {
  if (index.dtype != DType::Int64 && !(allow_int32 && index.dtype == DType::Int32)) {
    return make_error(str(op) + ": index must be " + (allow_int32 ? "int64 or int32" : "int64") + ", got " +
                      std::string(dtype_name(index.dtype)));
  }
  return check_input(index, op, "index");
}

// Every element of an int32/int64 tensor as int64, row-major.
std::vector<int64_t> index_values(const Tensor& index) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(index.numel()));
  std::array<std::vector<int64_t>, 1> st{index.strides};
  auto collect = [&](auto* p) {
    for_each_row<1>(index.sizes, st, [&](const std::array<int64_t, 1>& off, int64_t n, const std::array<int64_t, 1>& s) {
      for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<int64_t>(p[off[0] + i * s[0]]));
    });
  };
  if (index.dtype == DType::Int64) collect(cdata<int64_t>(index));
  else collect(cdata<int32_t>(index));
  return out;
}

Error index_error(const char* op, const char* arg, int64_t value, int64_t dim, int64_t size) {
  return make_error(str(op) + ": index " + std::to_string(value) + " in '" + arg + "' is out of bounds for dimension " +
                    std::to_string(dim) + " with size " + std::to_string(size));
}

// Checks (and with `wrap`, wraps negative) indices into a dim of `size`.
Status check_bounds(std::vector<int64_t>& idx, int64_t size, int64_t dim, bool wrap, const char* op, const char* arg) {
  for (int64_t& i : idx) {
    const int64_t k = wrap && i < 0 ? i + size : i;
    if (k < 0 || k >= size) return index_error(op, arg, i, dim, size);
    i = k;
  }
  return Status::Ok();
}

// Sizes and strides of `t` read as at least 1-D: ATen treats a 0-d operand
// of the dim-wise ops as a 1-D tensor of one element.
std::vector<int64_t> dims_of(const Tensor& t) { return t.sizes.empty() ? std::vector<int64_t>{1} : t.sizes; }
std::vector<int64_t> strides_of(const Tensor& t) { return t.sizes.empty() ? std::vector<int64_t>{0} : t.strides; }

Status check_same_dtype_as_self(const Tensor& self, const Tensor& t, const char* op, const char* arg) {
  if (self.dtype == t.dtype) return Status::Ok();
  return make_error(str(op) + ": self is " + std::string(dtype_name(self.dtype)) + " but " + arg + " is " +
                    std::string(dtype_name(t.dtype)) + " (they must match)");
}

std::byte* bytes_of(Tensor& t) {
  return t.storage->mutable_data() + t.storage_offset * static_cast<int64_t>(dtype_size(t.dtype));
}

// ---- scatter ---------------------------------------------------------------

template <typename M>
constexpr bool is_float_v = std::is_floating_point_v<M>;

// What an element that receives values starts from when include_self is
// false (ATen fills those elements with it before reducing).
template <typename M>
M reduce_identity(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Prod: return static_cast<M>(1);
    case ScatterReduce::Amax:
      if constexpr (is_float_v<M>) return -std::numeric_limits<M>::infinity();
      else return std::numeric_limits<M>::lowest();
    case ScatterReduce::Amin:
      if constexpr (is_float_v<M>) return std::numeric_limits<M>::infinity();
      else return std::numeric_limits<M>::max();
    default: return static_cast<M>(0);
  }
}

// Integer sums and products wrap around as ATen's do (through unsigned
// arithmetic: a signed overflow would be undefined behaviour).
template <typename M>
M add_wrap(M a, M b) {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
    return static_cast<M>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return static_cast<M>(a + b);
  }
}
template <typename M>
M mul_wrap(M a, M b) {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
    return static_cast<M>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return static_cast<M>(a * b);
  }
}

// a (op) b; max/min propagate a NaN from either side, as ATen's do.
template <typename M>
M reduce_pair(ScatterReduce r, M a, M b) {
  if constexpr (std::is_same_v<M, bool>) {
    if (r == ScatterReduce::Prod || r == ScatterReduce::Amin) return a && b;
    return a || b;
  } else {
    switch (r) {
      case ScatterReduce::Prod: return mul_wrap(a, b);
      case ScatterReduce::Amax:
        if constexpr (is_float_v<M>) {
          if (std::isnan(b)) return b;
        }
        return a < b ? b : a;
      case ScatterReduce::Amin:
        if constexpr (is_float_v<M>) {
          if (std::isnan(b)) return b;
        }
        return b < a ? b : a;
      default: return add_wrap(a, b);
    }
  }
}

// Mean's final division: true division for floats, floor division for
// integers (ATen divides with rounding_mode="floor").
template <typename M>
M mean_of(M sum, int64_t count) {
  if constexpr (is_float_v<M>) {
    return sum / static_cast<M>(count);
  } else {
    const int64_t s = static_cast<int64_t>(sum);
    int64_t q = s / count;
    if (s % count != 0 && s < 0) --q;
    return static_cast<M>(q);
  }
}

// Visits every element of index row-major: fn(dst_offset, src_offset,
// dst_linear) with the dst coordinate along `d` replaced by the index.
template <typename F>
void for_each_scatter(const std::vector<int64_t>& isz, const std::vector<int64_t>& dsz, const std::vector<int64_t>& dstr,
                      const std::vector<int64_t>& sstr, size_t d, const std::vector<int64_t>& idx, F&& fn) {
  const std::vector<int64_t> lin = Tensor::contiguous_strides(dsz);
  std::vector<int64_t> ctr(isz.size(), 0);
  for (size_t n = 0; n < idx.size(); ++n) {
    int64_t o = 0, s = 0, l = 0;
    for (size_t q = 0; q < ctr.size(); ++q) {
      const int64_t k = q == d ? idx[n] : ctr[q];
      o += k * dstr[q];
      l += k * lin[q];
      s += ctr[q] * sstr[q];
    }
    fn(o, s, l);
    for (size_t q = ctr.size(); q-- > 0;) {
      if (++ctr[q] < isz[q]) break;
      ctr[q] = 0;
    }
  }
}

Status check_scatter_shapes(const std::vector<int64_t>& dsz, const std::vector<int64_t>& isz,
                            const std::vector<int64_t>& ssz, size_t d, const char* op) {
  if (isz.size() != dsz.size() || ssz.size() != dsz.size()) {
    return make_error(str(op) + ": index " + shape_string(isz) + ", self " + shape_string(dsz) + " and src " +
                      shape_string(ssz) + " must have the same number of dims");
  }
  for (size_t q = 0; q < isz.size(); ++q) {
    if (isz[q] > ssz[q] || (q != d && isz[q] > dsz[q])) {
      return make_error(str(op) + ": index " + shape_string(isz) + " must be no larger than src " + shape_string(ssz) +
                        ", nor than self " + shape_string(dsz) + " outside dim " + std::to_string(d));
    }
  }
  return Status::Ok();
}

template <typename T>
void scatter_typed(Tensor& dst, const Tensor& src, const std::vector<int64_t>& isz, const std::vector<int64_t>& dsz,
                   size_t d, const std::vector<int64_t>& idx, ScatterReduce reduce, bool include_self) {
  using M = opmath_t<T>;
  T* o = mdata<T>(dst);
  const T* s = cdata<T>(src);
  const std::vector<int64_t> dstr = strides_of(dst), sstr = strides_of(src);
  auto visit = [&](auto&& fn) { for_each_scatter(isz, dsz, dstr, sstr, d, idx, fn); };
  if (reduce == ScatterReduce::None) {
    visit([&](int64_t oo, int64_t so, int64_t) { o[oo] = s[so]; });
    return;
  }
  if (!include_self) visit([&](int64_t oo, int64_t, int64_t) { o[oo] = static_cast<T>(reduce_identity<M>(reduce)); });
  const bool mean = reduce == ScatterReduce::Mean;
  std::vector<int64_t> count(mean ? static_cast<size_t>(numel_of(dsz)) : 0, 0);
  visit([&](int64_t oo, int64_t so, int64_t l) {
    o[oo] = static_cast<T>(reduce_pair<M>(mean ? ScatterReduce::Sum : reduce, static_cast<M>(o[oo]), static_cast<M>(s[so])));
    if (mean) ++count[static_cast<size_t>(l)];
  });
  if (!mean) return;
  visit([&](int64_t oo, int64_t, int64_t l) {
    int64_t& n = count[static_cast<size_t>(l)];
    if (n == 0) return;  // divided already (a repeated index)
    o[oo] = static_cast<T>(mean_of<M>(static_cast<M>(o[oo]), n + (include_self ? 1 : 0)));
    n = 0;
  });
}

}  // namespace

Status scatter_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce,
                    bool include_self, const char* op) {
  LATHE_RETURN_IF_ERROR(check_writable(dst, op));
  LATHE_RETURN_IF_ERROR(check_index(index, op, true));
  LATHE_RETURN_IF_ERROR(check_input(src, op, "src"));
  LATHE_RETURN_IF_ERROR(check_same_dtype_as_self(dst, src, op, "src"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(dst.sizes.size())));
  const std::vector<int64_t> dsz = dims_of(dst), isz = dims_of(index), ssz = dims_of(src);
  if (index.numel() == 0) return Status::Ok();
  LATHE_RETURN_IF_ERROR(check_scatter_shapes(dsz, isz, ssz, static_cast<size_t>(d), op));
  std::vector<int64_t> idx = index_values(index);
  LATHE_RETURN_IF_ERROR(check_bounds(idx, dsz[d], d, false, op, "index"));
  if (reduce == ScatterReduce::Mean && dst.dtype == DType::Bool) {
    return make_error(str(op) + ": mean of bool is not supported");
  }
  return dispatch_storage(dst.dtype, op, [&](auto tag) -> Status {
    scatter_typed<decltype(tag)>(dst, src, isz, dsz, static_cast<size_t>(d), idx, reduce, include_self);
    return Status::Ok();
  });
}

// ---- index_copy / index_add / index_fill -----------------------------------------
namespace {

// `t` read as at least 1-D (a view).
Tensor at_least_1d(const Tensor& t) { return make_view(t, dims_of(t), strides_of(t), t.storage_offset); }

// t.select(d, k) of an at-least-1-D tensor, without re-checking k.
Tensor slice_of(const Tensor& t, size_t d, int64_t k) {
  std::vector<int64_t> sizes = t.sizes, strides = t.strides;
  sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(d));
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d));
  return make_view(t, std::move(sizes), std::move(strides), t.storage_offset + k * t.strides[d]);
}

// The index of the dim-wise ops: 0-D or 1-D, its values checked against
// dim `d` of dst (wrapped first where negative indices are allowed).
Result<std::vector<int64_t>> dim_indices(const Tensor& dst1, size_t d, const Tensor& index, bool allow_int32, bool wrap,
                                         const char* op) {
  LATHE_RETURN_IF_ERROR(check_index(index, op, allow_int32));
  if (index.sizes.size() > 1) return make_error(str(op) + ": index must be 0-D or 1-D, got " + shape_string(index.sizes));
  std::vector<int64_t> idx = index_values(index);
  LATHE_RETURN_IF_ERROR(check_bounds(idx, dst1.sizes[d], static_cast<int64_t>(d), wrap, op, "index"));
  return idx;
}

// source must be dst's shape with dim d of size n.
Status check_source(const Tensor& dst1, const Tensor& src1, size_t d, size_t n, const char* op) {
  std::vector<int64_t> want = dst1.sizes;
  want[d] = static_cast<int64_t>(n);
  if (src1.sizes != want) {
    return make_error(str(op) + ": source " + shape_string(src1.sizes) + " does not match self " +
                      shape_string(dst1.sizes) + " with " + std::to_string(n) + " indices along dim " + std::to_string(d));
  }
  return Status::Ok();
}

struct DimOperands {
  Tensor dst1, src1;
  size_t d = 0;
  std::vector<int64_t> idx;
};

Result<DimOperands> dim_operands(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& source, bool allow_int32,
                                 const char* op) {
  LATHE_RETURN_IF_ERROR(check_writable(dst, op));
  LATHE_RETURN_IF_ERROR(check_input(source, op, "source"));
  LATHE_RETURN_IF_ERROR(check_same_dtype_as_self(dst, source, op, "source"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(dst.sizes.size())));
  DimOperands ops{at_least_1d(dst), at_least_1d(source), static_cast<size_t>(d), {}};
  LATHE_ASSIGN_OR_RETURN(ops.idx, dim_indices(ops.dst1, ops.d, index, allow_int32, false, op));
  LATHE_RETURN_IF_ERROR(check_source(ops.dst1, ops.src1, ops.d, ops.idx.size(), op));
  return ops;
}

}  // namespace

Status index_copy_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& source, const char* op) {
  LATHE_ASSIGN_OR_RETURN(DimOperands o, dim_operands(dst, dim, index, source, false, op));
  for (size_t i = 0; i < o.idx.size(); ++i) {
    Tensor to = slice_of(o.dst1, o.d, o.idx[i]);
    LATHE_RETURN_IF_ERROR(copy_into(slice_of(o.src1, o.d, static_cast<int64_t>(i)), to));
  }
  return Status::Ok();
}

Status index_add_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                      const char* op) {
  LATHE_ASSIGN_OR_RETURN(DimOperands o, dim_operands(dst, dim, index, source, true, op));
  return dispatch_storage(dst.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    using M = opmath_t<T>;
    const M a = alpha.to<M>();
    for (size_t i = 0; i < o.idx.size(); ++i) {
      Tensor to = slice_of(o.dst1, o.d, o.idx[i]);
      const Tensor from = slice_of(o.src1, o.d, static_cast<int64_t>(i));
      T* pt = mdata<T>(to);
      const T* pf = cdata<T>(from);
      std::array<std::vector<int64_t>, 2> st{to.strides, from.strides};
      for_each_row<2>(to.sizes, st, [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
        for (int64_t k = 0; k < n; ++k) {
          T& x = pt[off[0] + k * s[0]];
          const M y = static_cast<M>(pf[off[1] + k * s[1]]);
          if constexpr (std::is_same_v<T, bool>) x = x || (a && y);
          else x = static_cast<T>(add_wrap<M>(static_cast<M>(x), mul_wrap<M>(a, y)));
        }
      });
    }
    return Status::Ok();
  });
}

Status index_fill_into(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& value, const char* op) {
  LATHE_RETURN_IF_ERROR(check_writable(dst, op));
  LATHE_RETURN_IF_ERROR(check_input(value, op, "value"));
  if (!value.sizes.empty()) {
    return make_error(str(op) + ": value must be a 0-d tensor, got " + shape_string(value.sizes));
  }
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(dst.sizes.size())));
  Tensor dst1 = at_least_1d(dst);
  LATHE_ASSIGN_OR_RETURN(auto idx, dim_indices(dst1, static_cast<size_t>(d), index, false, true, op));
  const Tensor v = contiguous_copy(value);  // value may be an element of dst
  for (int64_t k : idx) {
    Tensor to = slice_of(dst1, static_cast<size_t>(d), k);
    LATHE_RETURN_IF_ERROR(copy_into(v, to));
  }
  return Status::Ok();
}

// ---- masked_scatter ---------------------------------------------------------
namespace {

// `mask` (bool) broadcast to `sizes`, as a contiguous bool tensor.
Result<Tensor> broadcast_mask(const Tensor& mask, const std::vector<int64_t>& sizes, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(mask, op, "mask"));
  if (mask.dtype != DType::Bool) {
    return make_error(str(op) + ": mask must be bool, got " + std::string(dtype_name(mask.dtype)));
  }
  auto shape = broadcast_shapes(sizes, mask.sizes);
  if (!shape.ok() || *shape != sizes) {
    return make_error(str(op) + ": mask " + shape_string(mask.sizes) + " does not broadcast to self " +
                      shape_string(sizes));
  }
  Tensor m = Tensor::empty(DType::Bool, sizes);
  LATHE_RETURN_IF_ERROR(copy_into(mask, m));
  return m;
}

// fn(element bytes, k) for the k-th true position of `m` (contiguous, dst's
// shape), visiting dst row-major.
template <typename F>
void for_each_masked(Tensor& dst, const Tensor& m, F&& fn) {
  const int64_t es = static_cast<int64_t>(dtype_size(dst.dtype));
  std::byte* base = bytes_of(dst);
  const bool* pm = cdata<bool>(m);
  int64_t n = 0, k = 0;
  std::array<std::vector<int64_t>, 1> st{dst.strides};
  // for_each_row visits the elements in row-major order: n runs along m.
  for_each_row<1>(dst.sizes, st, [&](const std::array<int64_t, 1>& off, int64_t len, const std::array<int64_t, 1>& s) {
    for (int64_t i = 0; i < len; ++i, ++n) {
      if (pm[n]) fn(base + (off[0] + i * s[0]) * es, k++);
    }
  });
}

int64_t count_true(const Tensor& m) {
  const bool* p = cdata<bool>(m);
  int64_t n = 0;
  for (int64_t i = 0; i < m.numel(); ++i) n += p[i] ? 1 : 0;
  return n;
}

}  // namespace

Status masked_scatter_into(Tensor& dst, const Tensor& mask, const Tensor& source, const char* op) {
  LATHE_RETURN_IF_ERROR(check_writable(dst, op));
  LATHE_RETURN_IF_ERROR(check_input(source, op, "source"));
  LATHE_RETURN_IF_ERROR(check_same_dtype_as_self(dst, source, op, "source"));
  LATHE_ASSIGN_OR_RETURN(Tensor m, broadcast_mask(mask, dst.sizes, op));
  const int64_t need = count_true(m);
  if (need > source.numel()) {
    return make_error(str(op) + ": source has " + std::to_string(source.numel()) + " elements, fewer than the " +
                      std::to_string(need) + " true elements of mask");
  }
  const Tensor src = contiguous_copy(source);  // row-major, and never dst's own memory
  const size_t es = dtype_size(dst.dtype);
  for_each_masked(dst, m, [&](std::byte* e, int64_t k) { std::memcpy(e, src.data() + k * static_cast<int64_t>(es), es); });
  return Status::Ok();
}

// ---- diagonal -----------------------------------------------------------------------
Result<Tensor> diagonal_view(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t r = static_cast<int64_t>(self.sizes.size());
  if (r < 2) return make_error("diagonal: self must have at least 2 dims, got " + shape_string(self.sizes));
  LATHE_ASSIGN_OR_RETURN(int64_t d1, normalize_dim(dim1, r));
  LATHE_ASSIGN_OR_RETURN(int64_t d2, normalize_dim(dim2, r));
  if (d1 == d2) return make_error("diagonal: dim1 and dim2 are both dim " + std::to_string(d1));
  const int64_t s1 = self.sizes[d1], s2 = self.sizes[d2];
  const int64_t len = std::max<int64_t>(0, offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2));
  int64_t start = self.storage_offset;
  if (len > 0) start += offset >= 0 ? offset * self.strides[d2] : -offset * self.strides[d1];
  std::vector<int64_t> sizes, strides;
  for (int64_t q = 0; q < r; ++q) {
    if (q == d1 || q == d2) continue;
    sizes.push_back(self.sizes[q]);
    strides.push_back(self.strides[q]);
  }
  sizes.push_back(len);
  strides.push_back(self.strides[d1] + self.strides[d2]);
  return make_view(self, std::move(sizes), std::move(strides), start);
}

// ---- _embedding_bag ------------------------------------------------------------------
namespace {

bool is_float_dtype(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16;
}

// PyTorch's CPU kernel takes a fast (index-select-and-add) path for Sum and
// Mean when the weight is a 32- or 16-bit float with unit row stride and
// there is no padding_idx. It differs from the general path in what it
// leaves out: Sum skips offset2bag, and with include_last_offset the last
// bag ends at the last offset instead of at the end of indices (Mean still
// divides by the general path's count: PyTorch's behaviour, kept).
bool fast_path(const Tensor& weight, const EmbeddingBagArgs& a) {
  const bool float_weight =
      weight.dtype == DType::Float32 || weight.dtype == DType::Float16 || weight.dtype == DType::BFloat16;
  return a.mode != EmbeddingBagMode::Max && float_weight && weight.strides[1] == 1 && a.padding_idx < 0 &&
         (!a.per_sample_weights || a.per_sample_weights->strides[0] == 1);
}

void put_index(Tensor& t, int64_t pos, int64_t v) {
  if (t.dtype == DType::Int64) mdata<int64_t>(t)[pos] = v;
  else mdata<int32_t>(t)[pos] = static_cast<int32_t>(v);
}

// Bag b holds indices [offs[b], end(b)); the last bag runs to the end of
// indices (with include_last_offset, the final offset is not a bag start).
int64_t bag_end(const std::vector<int64_t>& offs, int64_t bags, int64_t b, int64_t n) {
  return b + 1 < bags ? offs[static_cast<size_t>(b + 1)] : n;
}

Status check_offsets(const std::vector<int64_t>& offs, int64_t n) {
  if (!offs.empty() && offs[0] != 0) {
    return make_error("_embedding_bag: offsets[0] must be 0, got " + std::to_string(offs[0]));
  }
  for (size_t b = 0; b < offs.size(); ++b) {
    if (offs[b] > n || (b > 0 && offs[b] < offs[b - 1])) {
      return make_error("_embedding_bag: offsets must be non-decreasing and at most the " + std::to_string(n) +
                        " indices, got " + std::to_string(offs[b]) + " at position " + std::to_string(b));
    }
  }
  return Status::Ok();
}

Status check_weight_rows(const std::vector<int64_t>& idx, int64_t rows) {
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      return make_error("_embedding_bag: index " + std::to_string(idx[i]) + " at position " + std::to_string(i) +
                        " of 'indices' is out of range [0, " + std::to_string(rows) + ")");
    }
  }
  return Status::Ok();
}

template <typename T>
void embedding_bag_typed(const Tensor& weight, const std::vector<int64_t>& idx, const std::vector<int64_t>& offs,
                         const EmbeddingBagArgs& a, Tensor& output, std::vector<int64_t>& counts,
                         std::vector<int64_t>& argmax) {
  using M = opmath_t<T>;
  const int64_t D = weight.sizes[1], bags = output.sizes[0], n = static_cast<int64_t>(idx.size());
  const T* w = cdata<T>(weight);
  const T* psw = a.per_sample_weights ? cdata<T>(*a.per_sample_weights) : nullptr;
  const int64_t psw_stride = psw ? a.per_sample_weights->strides[0] : 0;
  T* out = mdata<T>(output);
  std::vector<M> acc(static_cast<size_t>(D));
  const bool fast = fast_path(weight, a);
  for (int64_t b = 0; b < bags; ++b) {
    std::fill(acc.begin(), acc.end(), M(0));
    const int64_t start = offs[static_cast<size_t>(b)], end = bag_end(offs, bags, b, n);
    int64_t& count = counts[static_cast<size_t>(b)];
    for (int64_t i = start; i < end; ++i) count += idx[static_cast<size_t>(i)] == a.padding_idx ? 0 : 1;
    const int64_t read_end = fast && a.include_last_offset && b + 1 == bags ? offs[static_cast<size_t>(bags)] : end;
    int64_t seen = 0;
    for (int64_t i = start; i < read_end; ++i) {
      const int64_t row = idx[static_cast<size_t>(i)];
      if (row == a.padding_idx) continue;
      ++seen;
      const M scale = psw ? static_cast<M>(psw[i * psw_stride]) : M(1);
      for (int64_t d = 0; d < D; ++d) {
        const M v = static_cast<M>(w[row * weight.strides[0] + d * weight.strides[1]]);
        M& x = acc[static_cast<size_t>(d)];
        if (a.mode != EmbeddingBagMode::Max) {
          x = psw ? x + v * scale : x + v;
        } else if (seen == 1 || v > x) {  // the first maximum wins a tie
          x = v;
          argmax[static_cast<size_t>(b * D + d)] = row;
        }
      }
    }
    for (int64_t d = 0; d < D; ++d) {
      M x = acc[static_cast<size_t>(d)];
      if (a.mode == EmbeddingBagMode::Mean && count > 0) x = x / static_cast<M>(count);
      out[b * D + d] = static_cast<T>(x);
    }
  }
}

}  // namespace

Result<EmbeddingBagOutputs> embedding_bag_shapes(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                                                 const EmbeddingBagArgs& a) {
  const char* op = "_embedding_bag";
  if (weight.sizes.size() != 2 || !is_float_dtype(weight.dtype)) {
    return make_error("_embedding_bag: weight must be a 2-D floating tensor, got " + std::string(dtype_name(weight.dtype)) +
                      " " + shape_string(weight.sizes));
  }
  LATHE_RETURN_IF_ERROR(check_index(indices, op, true));
  LATHE_RETURN_IF_ERROR(check_index(offsets, op, true));
  if (indices.sizes.size() != 1 || offsets.sizes.size() != 1) {
    return make_error("_embedding_bag: indices " + shape_string(indices.sizes) + " and offsets " +
                      shape_string(offsets.sizes) + " must be 1-D");
  }
  if (a.per_sample_weights) {
    if (a.mode != EmbeddingBagMode::Sum) {
      return make_error("_embedding_bag: per_sample_weights only supported with mode='sum'");
    }
    if (a.per_sample_weights->sizes != indices.sizes || a.per_sample_weights->dtype != weight.dtype) {
      return make_error("_embedding_bag: per_sample_weights must be " + std::string(dtype_name(weight.dtype)) + " " +
                        shape_string(indices.sizes) + ", like indices and weight");
    }
  }
  if (a.include_last_offset && offsets.numel() == 0) {
    return make_error("_embedding_bag: include_last_offset needs at least one offset");
  }
  const int64_t bags = offsets.numel() - (a.include_last_offset ? 1 : 0), D = weight.sizes[1];
  EmbeddingBagOutputs s;
  s.index_dtype = indices.dtype == DType::Int64 || offsets.dtype == DType::Int64 ? DType::Int64 : DType::Int32;
  s.output_shape = {bags, D};
  s.offset2bag_shape = {a.mode == EmbeddingBagMode::Sum && fast_path(weight, a) ? 0 : indices.numel()};
  s.bag_size_shape = {bags};
  s.max_indices_shape = a.mode == EmbeddingBagMode::Max ? std::vector<int64_t>{bags, D} : std::vector<int64_t>{bags};
  return s;
}

Status embedding_bag_out(const Tensor& weight, const Tensor& indices, const Tensor& offsets, const EmbeddingBagArgs& a,
                         Tensor& output, Tensor& offset2bag, Tensor& bag_size, Tensor& max_indices) {
  const char* op = "_embedding_bag";
  LATHE_RETURN_IF_ERROR(check_input(weight, op, "weight"));
  if (a.per_sample_weights) LATHE_RETURN_IF_ERROR(check_input(*a.per_sample_weights, op, "per_sample_weights"));
  LATHE_ASSIGN_OR_RETURN(EmbeddingBagOutputs s, embedding_bag_shapes(weight, indices, offsets, a));
  LATHE_RETURN_IF_ERROR(check_out(output, weight.dtype, s.output_shape, op));
  LATHE_RETURN_IF_ERROR(check_out(offset2bag, s.index_dtype, s.offset2bag_shape, op));
  LATHE_RETURN_IF_ERROR(check_out(bag_size, s.index_dtype, s.bag_size_shape, op));
  LATHE_RETURN_IF_ERROR(check_out(max_indices, s.index_dtype, s.max_indices_shape, op));
  const std::vector<int64_t> idx = index_values(indices), offs = index_values(offsets);
  const int64_t n = indices.numel(), bags = s.output_shape[0];
  LATHE_RETURN_IF_ERROR(check_offsets(offs, n));
  LATHE_RETURN_IF_ERROR(check_weight_rows(idx, weight.sizes[0]));
  std::vector<int64_t> counts(static_cast<size_t>(bags), 0), argmax(static_cast<size_t>(max_indices.numel()), 0);
  LATHE_RETURN_IF_ERROR(dispatch_storage(weight.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) return make_error("_embedding_bag: weight must be floating");
    else embedding_bag_typed<T>(weight, idx, offs, a, output, counts, argmax);
    return Status::Ok();
  }));
  if (offset2bag.numel() > 0) {
    for (int64_t b = 0; b < bags; ++b) {
      for (int64_t i = offs[static_cast<size_t>(b)]; i < bag_end(offs, bags, b, n); ++i) put_index(offset2bag, i, b);
    }
  }
  const bool sum = a.mode == EmbeddingBagMode::Sum, max = a.mode == EmbeddingBagMode::Max;
  for (int64_t b = 0; b < bags; ++b) put_index(bag_size, b, sum ? 0 : counts[static_cast<size_t>(b)]);
  for (int64_t k = 0; k < max_indices.numel(); ++k) {
    put_index(max_indices, k, max ? argmax[static_cast<size_t>(k)] : sum ? 0 : counts[static_cast<size_t>(k)]);
  }
  return Status::Ok();
}

// ---- adapters ---------------------------------------------------------------------
namespace {

bool target_ends_with(const KernelCall& c, std::string_view suffix) { return c.node().target().ends_with(suffix); }

// A fresh output holding a copy of self, for the functional forms.
Result<Tensor> copy_of_self(KernelCall& c, const Tensor& self) {
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self.dtype, self.sizes));
  LATHE_RETURN_IF_ERROR(copy_into(self, *out));
  return *out;
}

// `self`, which an in-place op writes through: refused when read-only.
Result<Tensor> writable_self(KernelCall& c, const char* op) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_writable(*self, op));
  return *self;
}

// An operand an in-place op reads while writing self: a copy when it shares
// self's storage, so no write changes what is still to be read.
Tensor unaliased(const Tensor& t, const Tensor& self) { return t.storage == self.storage ? contiguous_copy(t) : t; }

// scatter's src: the tensor, or the Scalar `value` broadcast to index's shape.
Result<Tensor> scatter_source(KernelCall& c, const Tensor& self, const Tensor& index) {
  if (!c.has("value")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
    return *src;
  }
  LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("value"));
  Tensor v = scalar_tensor(s, self.dtype);
  return make_view(v, index.sizes, std::vector<int64_t>(index.sizes.size(), 0), v.storage_offset);
}

Result<ScatterReduce> reduce_named(KernelCall& c, const std::string& r) {
  if (r == "add" || r == "sum") return ScatterReduce::Sum;
  if (r == "multiply" || r == "prod") return ScatterReduce::Prod;
  if (r == "mean") return ScatterReduce::Mean;
  if (r == "amax") return ScatterReduce::Amax;
  if (r == "amin") return ScatterReduce::Amin;
  return c.arg_error("reduce", "unknown reduction '" + r + "'");
}

// scatter.src / .value / .reduce / .value_reduce.
Status scatter_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(Tensor src, scatter_source(c, *self, *index));
  ScatterReduce reduce = ScatterReduce::None;
  if (c.has("reduce")) {
    LATHE_ASSIGN_OR_RETURN(std::string r, c.string_arg("reduce"));
    if (r != "add" && r != "multiply") return c.arg_error("reduce", "must be 'add' or 'multiply', got '" + r + "'");
    LATHE_ASSIGN_OR_RETURN(reduce, reduce_named(c, r));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor out, copy_of_self(c, *self));
  return scatter_into(out, dim, *index, src, reduce, true, "scatter");
}

Status scatter_add_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  LATHE_ASSIGN_OR_RETURN(Tensor out, copy_of_self(c, *self));
  return scatter_into(out, dim, *index, *src, ScatterReduce::Sum, true, "scatter_add");
}

Status scatter_reduce_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  LATHE_ASSIGN_OR_RETURN(std::string r, c.string_arg("reduce"));
  LATHE_ASSIGN_OR_RETURN(ScatterReduce reduce, reduce_named(c, r));
  LATHE_ASSIGN_OR_RETURN(bool include_self, c.bool_arg("include_self", true));
  LATHE_ASSIGN_OR_RETURN(Tensor out, copy_of_self(c, *self));
  return scatter_into(out, dim, *index, *src, reduce, include_self, "scatter_reduce");
}

Status index_copy_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* source, c.tensor("source"));
  LATHE_ASSIGN_OR_RETURN(Tensor out, copy_of_self(c, *self));
  return index_copy_into(out, dim, *index, *source, "index_copy");
}

Status index_add_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* source, c.tensor("source"));
  LATHE_ASSIGN_OR_RETURN(Scalar alpha, c.scalar("alpha", Scalar::from_int(1)));
  LATHE_ASSIGN_OR_RETURN(Tensor out, copy_of_self(c, *self));
  return index_add_into(out, dim, *index, *source, alpha, "index_add");
}

// index_fill.int_Scalar / int_Tensor (a 0-d value).
Status index_fill_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  Tensor value;
  if (target_ends_with(c, ".int_Tensor")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* v, c.tensor("value"));
    value = *v;
  } else {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("value"));
    value = scalar_tensor(s, self->dtype);
  }
  LATHE_ASSIGN_OR_RETURN(Tensor out, copy_of_self(c, *self));
  return index_fill_into(out, dim, *index, value, "index_fill");
}

// The functional form broadcasts self and mask against each other (ATen's
// expand_outplace); the in-place one only the mask to self.
Status masked_scatter_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* mask, c.tensor("mask"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* source, c.tensor("source"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(self->sizes, mask->sizes));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  LATHE_RETURN_IF_ERROR(copy_into(*self, *out));
  return masked_scatter_into(*out, *mask, *source, "masked_scatter");
}

Status diagonal_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t offset, c.int_arg("offset", 0));
  LATHE_ASSIGN_OR_RETURN(int64_t dim1, c.int_arg("dim1", 0));
  LATHE_ASSIGN_OR_RETURN(int64_t dim2, c.int_arg("dim2", 1));
  LATHE_RETURN_IF_ERROR(check_input(*self, "diagonal", "self"));
  LATHE_ASSIGN_OR_RETURN(Tensor v, diagonal_view(*self, offset, dim1, dim2));
  return c.set_output(0, std::move(v));
}

// scale_grad_by_freq and sparse only matter for the gradient.
Status embedding_bag_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* indices, c.tensor("indices"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* offsets, c.tensor("offsets"));
  LATHE_ASSIGN_OR_RETURN(int64_t mode, c.int_arg("mode", 0));
  if (mode < 0 || mode > 2) return c.arg_error("mode", "must be 0 (sum), 1 (mean) or 2 (max), got " + std::to_string(mode));
  EmbeddingBagArgs a;
  a.mode = static_cast<EmbeddingBagMode>(mode);
  LATHE_ASSIGN_OR_RETURN(a.per_sample_weights, c.optional_tensor("per_sample_weights"));
  LATHE_ASSIGN_OR_RETURN(a.include_last_offset, c.bool_arg("include_last_offset", false));
  // _embedding_bag's padding_idx is an int (-1: none); embedding_bag.padding_idx's an int? (None: none).
  LATHE_ASSIGN_OR_RETURN(std::optional<int64_t> padding_idx, c.optional_int("padding_idx"));
  a.padding_idx = padding_idx.value_or(-1);
  LATHE_ASSIGN_OR_RETURN(EmbeddingBagOutputs s, embedding_bag_shapes(*weight, *indices, *offsets, a));
  // Each alloc_output may invalidate the previous pointer: keep the tensors.
  std::array<Tensor, 4> outs;
  const std::array<std::pair<DType, const std::vector<int64_t>*>, 4> specs{{{weight->dtype, &s.output_shape},
                                                                           {s.index_dtype, &s.offset2bag_shape},
                                                                           {s.index_dtype, &s.bag_size_shape},
                                                                           {s.index_dtype, &s.max_indices_shape}}};
  for (size_t i = 0; i < 4; ++i) {
    LATHE_ASSIGN_OR_RETURN(Tensor * t, c.alloc_output(i, specs[i].first, *specs[i].second));
    outs[i] = *t;
  }
  return embedding_bag_out(*weight, *indices, *offsets, a, outs[0], outs[1], outs[2], outs[3]);
}

// ---- in-place forms: write through self and return it ---------------------------------

// index_put_: self[indices] = values (+= with accumulate); duplicates apply
// in order. The plan checks every index before anything is written.
Status index_put_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "index_put_"));
  LATHE_ASSIGN_OR_RETURN(auto indices, c.tensor_list("indices", true));
  LATHE_ASSIGN_OR_RETURN(const Tensor* values, c.tensor("values"));
  LATHE_ASSIGN_OR_RETURN(bool accumulate, c.bool_arg("accumulate", false));
  LATHE_RETURN_IF_ERROR(check_input(*values, "index_put_", "values"));
  LATHE_RETURN_IF_ERROR(check_same_dtype_as_self(dst, *values, "index_put_", "values"));
  auto plan = plan_advanced_index(dst, indices);
  if (!plan.ok()) return plan.error().context("index_put_");
  auto shape = broadcast_shapes(values->sizes, plan->shape);
  if (!shape.ok() || *shape != plan->shape) {
    return make_error("index_put_: values " + shape_string(values->sizes) + " do not broadcast to the indexed shape " +
                      shape_string(plan->shape));
  }
  // A copy of values in the indexed shape: also what keeps values that
  // overlap self from being read after they were written.
  Tensor v = Tensor::empty(dst.dtype, plan->shape);
  LATHE_RETURN_IF_ERROR(copy_into(*values, v));
  LATHE_RETURN_IF_ERROR(dispatch_storage(dst.dtype, "index_put_", [&](auto tag) -> Status {
    using T = decltype(tag);
    using M = opmath_t<T>;
    T* o = mdata<T>(dst);
    const T* pv = cdata<T>(v);
    for (size_t n = 0; n < plan->offsets.size(); ++n) {
      T& x = o[plan->offsets[n]];
      if (!accumulate) x = pv[n];
      else if constexpr (std::is_same_v<T, bool>) x = x || pv[n];
      else x = static_cast<T>(add_wrap<M>(static_cast<M>(x), static_cast<M>(pv[n])));
    }
    return Status::Ok();
  }));
  return c.set_output(0, dst);
}

Status index_copy_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "index_copy_"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* source, c.tensor("source"));
  LATHE_RETURN_IF_ERROR(index_copy_into(dst, dim, *index, unaliased(*source, dst), "index_copy_"));
  return c.set_output(0, dst);
}

Status index_add_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "index_add_"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* source, c.tensor("source"));
  LATHE_ASSIGN_OR_RETURN(Scalar alpha, c.scalar("alpha", Scalar::from_int(1)));
  LATHE_RETURN_IF_ERROR(index_add_into(dst, dim, *index, unaliased(*source, dst), alpha, "index_add_"));
  return c.set_output(0, dst);
}

// scatter_.src / scatter_.value / scatter_add_.
Status scatter_inplace_kernel(KernelCall& c) {
  const bool add = c.node().target().find("scatter_add_") != std::string::npos;
  const char* op = add ? "scatter_add_" : "scatter_";
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, op));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(Tensor src, scatter_source(c, dst, *index));
  const ScatterReduce reduce = add ? ScatterReduce::Sum : ScatterReduce::None;
  LATHE_RETURN_IF_ERROR(scatter_into(dst, dim, *index, unaliased(src, dst), reduce, true, op));
  return c.set_output(0, dst);
}

Status scatter_reduce_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "scatter_reduce_"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  LATHE_ASSIGN_OR_RETURN(std::string r, c.string_arg("reduce"));
  LATHE_ASSIGN_OR_RETURN(ScatterReduce reduce, reduce_named(c, r));
  LATHE_ASSIGN_OR_RETURN(bool include_self, c.bool_arg("include_self", true));
  LATHE_RETURN_IF_ERROR(scatter_into(dst, dim, *index, unaliased(*src, dst), reduce, include_self, "scatter_reduce_"));
  return c.set_output(0, dst);
}

Status index_fill_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "index_fill_"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  Tensor value;
  if (target_ends_with(c, ".int_Tensor")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* v, c.tensor("value"));
    value = *v;  // index_fill_into reads it once, before writing
  } else {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("value"));
    value = scalar_tensor(s, dst.dtype);
  }
  LATHE_RETURN_IF_ERROR(index_fill_into(dst, dim, *index, value, "index_fill_"));
  return c.set_output(0, dst);
}

Status masked_scatter_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "masked_scatter_"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* mask, c.tensor("mask"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* source, c.tensor("source"));
  LATHE_RETURN_IF_ERROR(masked_scatter_into(dst, *mask, *source, "masked_scatter_"));
  return c.set_output(0, dst);
}

// masked_fill_.Scalar / .Tensor (a 0-d value): the true positions of the
// mask (broadcast to self) take the value cast to self's dtype.
Status masked_fill_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "masked_fill_"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* mask, c.tensor("mask"));
  Tensor value;
  if (target_ends_with(c, ".Tensor")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* v, c.tensor("value"));
    LATHE_RETURN_IF_ERROR(check_input(*v, "masked_fill_", "value"));
    if (!v->sizes.empty()) return c.arg_error("value", "must be a 0-d tensor, got " + shape_string(v->sizes));
    value = contiguous_copy(as_dtype(*v, dst.dtype));  // read before self is written (it may be an element of self)
  } else {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("value"));
    value = scalar_tensor(s, dst.dtype);
  }
  LATHE_ASSIGN_OR_RETURN(Tensor m, broadcast_mask(*mask, dst.sizes, "masked_fill_"));
  const size_t es = dtype_size(dst.dtype);
  for_each_masked(dst, m, [&](std::byte* e, int64_t) { std::memcpy(e, value.data(), es); });
  return c.set_output(0, dst);
}

}  // namespace

void register_scatter_kernels(KernelRegistry& r) {
  register_overloads(r, "scatter", {"src", "value", "reduce", "value_reduce"}, scatter_kernel);
  register_overloads(r, "scatter_add", {"default"}, scatter_add_kernel);
  register_overloads(r, "scatter_reduce", {"two"}, scatter_reduce_kernel);
  register_overloads(r, "index_copy", {"default"}, index_copy_kernel);
  register_overloads(r, "index_add", {"default"}, index_add_kernel);
  register_overloads(r, "index_fill", {"int_Scalar", "int_Tensor"}, index_fill_kernel);
  register_overloads(r, "masked_scatter", {"default"}, masked_scatter_kernel);
  register_overloads(r, "diagonal", {"default"}, diagonal_kernel, OutputAlias::View);
  register_overloads(r, "_embedding_bag", {"default"}, embedding_bag_kernel);
  // nn.EmbeddingBag as exported: the same four outputs (torch's composite calls _embedding_bag).
  register_overloads(r, "embedding_bag", {"default", "padding_idx"}, embedding_bag_kernel);
  register_overloads(r, "index_put_", {"default"}, index_put_inplace_kernel, OutputAlias::View);
  register_overloads(r, "index_copy_", {"default"}, index_copy_inplace_kernel, OutputAlias::View);
  register_overloads(r, "index_add_", {"default"}, index_add_inplace_kernel, OutputAlias::View);
  register_overloads(r, "scatter_", {"src", "value"}, scatter_inplace_kernel, OutputAlias::View);
  register_overloads(r, "scatter_add_", {"default"}, scatter_inplace_kernel, OutputAlias::View);
  register_overloads(r, "scatter_reduce_", {"two"}, scatter_reduce_inplace_kernel, OutputAlias::View);
  register_overloads(r, "index_fill_", {"int_Scalar", "int_Tensor"}, index_fill_inplace_kernel, OutputAlias::View);
  register_overloads(r, "masked_scatter_", {"default"}, masked_scatter_inplace_kernel, OutputAlias::View);
  register_overloads(r, "masked_fill_", {"Scalar", "Tensor"}, masked_fill_inplace_kernel, OutputAlias::View);
}

}  // namespace lathe::kernels
