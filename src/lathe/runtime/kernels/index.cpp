#include "lathe/runtime/kernels/index.h"

#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe::kernels {

namespace {

Status check_index_tensor(const Tensor& index, const char* op) {
  if (index.dtype != DType::Int64 && index.dtype != DType::Int32) {
    return make_error(std::string(op) + ": indices must be int64 or int32, got " + std::string(dtype_name(index.dtype)));
  }
  return check_input(index, op, "index");
}

// Every element of an int32/int64 tensor as int64, row-major.
std::vector<int64_t> read_indices(const Tensor& index) {
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

Result<int64_t> checked_index(int64_t i, int64_t size, const char* op, bool allow_negative) {
  const int64_t given = i;  // the message names the index as written, not as wrapped (-9, not -1)
  if (allow_negative && i < 0 && i >= -size) i += size;
  if (i < 0 || i >= size) {
    return make_error(std::string(op) + ": index " + std::to_string(given) + " is out of bounds for size " + std::to_string(size));
  }
  return i;
}

// Moves one element of `es` bytes; the portable kernels index any dtype.
inline void copy_elem(std::byte* dst, const std::byte* src, size_t es) { std::memcpy(dst, src, es); }

}  // namespace

Status embedding_out(const Tensor& weight, const Tensor& indices, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(weight, "embedding", "weight"));
  LATHE_RETURN_IF_ERROR(check_rank(weight, 2, "embedding", "weight"));
  LATHE_RETURN_IF_ERROR(check_index_tensor(indices, "embedding"));
  std::vector<int64_t> shape = indices.sizes;
  shape.push_back(weight.sizes[1]);
  LATHE_RETURN_IF_ERROR(check_out(out, weight.dtype, shape, "embedding"));
  const std::vector<int64_t> idx = read_indices(indices);
  const int64_t D = weight.sizes[1];
  for (size_t r = 0; r < idx.size(); ++r) {
    LATHE_ASSIGN_OR_RETURN(int64_t row, checked_index(idx[r], weight.sizes[0], "embedding", false));
    Tensor src = make_view(weight, {D}, {weight.strides[1]}, weight.storage_offset + row * weight.strides[0]);
    Tensor dst = make_view(out, {D}, {1}, out.storage_offset + static_cast<int64_t>(r) * D);
    LATHE_RETURN_IF_ERROR(copy_into(src, dst));
  }
  return Status::Ok();
}

Status index_select_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(self, "index_select", "self"));
  LATHE_RETURN_IF_ERROR(check_index_tensor(index, "index_select"));
  if (index.sizes.size() > 1) return make_error("index_select: index must be 0-D or 1-D, got " + shape_string(index.sizes));
  const int64_t r = static_cast<int64_t>(self.sizes.size());
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, r));
  const std::vector<int64_t> idx = read_indices(index);
  std::vector<int64_t> shape = self.sizes;
  if (r > 0) shape[d] = static_cast<int64_t>(idx.size());
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, shape, "index_select"));
  if (r == 0) {
    if (idx.size() != 1 || idx[0] != 0) return make_error("index_select: index out of range for a 0-d tensor");
    return copy_into(self, out);
  }
  for (size_t i = 0; i < idx.size(); ++i) {
    LATHE_ASSIGN_OR_RETURN(int64_t k, checked_index(idx[i], self.sizes[d], "index_select", false));
    LATHE_ASSIGN_OR_RETURN(Tensor src, select_view(self, d, k));
    LATHE_ASSIGN_OR_RETURN(Tensor dst, select_view(out, d, static_cast<int64_t>(i)));
    LATHE_RETURN_IF_ERROR(copy_into(src, dst));
  }
  return Status::Ok();
}

Status gather_out(const Tensor& self, int64_t dim, const Tensor& index, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(self, "gather", "self"));
  LATHE_RETURN_IF_ERROR(check_index_tensor(index, "gather"));
  const int64_t r = static_cast<int64_t>(self.sizes.size());
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, r));
  if (r > 0 && static_cast<int64_t>(index.sizes.size()) != r) {
    return make_error("gather: index " + shape_string(index.sizes) + " must have the same rank as self " +
                      shape_string(self.sizes));
  }
  for (int64_t k = 0; k < r; ++k) {
    if (k != d && index.sizes[k] > self.sizes[k]) {
      return make_error("gather: index " + shape_string(index.sizes) + " is larger than self " + shape_string(self.sizes) +
                        " outside dim " + std::to_string(d));
    }
  }
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, index.sizes, "gather"));
  const std::vector<int64_t> idx = read_indices(index);
  const size_t es = dtype_size(self.dtype);
  const int64_t dim_size = r == 0 ? 1 : self.sizes[d];
  const int64_t dim_stride = r == 0 ? 0 : self.strides[d];
  std::vector<int64_t> self_strides = self.strides;
  if (r > 0) self_strides[d] = 0;
  // Index elements are visited row-major, matching read_indices().
  std::vector<int64_t> counter(index.sizes.size(), 0);
  std::byte* o = out.storage->mutable_data() + out.storage_offset * static_cast<int64_t>(es);
  const std::byte* s = self.data();
  for (size_t n = 0; n < idx.size(); ++n) {
    LATHE_ASSIGN_OR_RETURN(int64_t k, checked_index(idx[n], dim_size, "gather", false));
    int64_t off = k * dim_stride;
    for (size_t q = 0; q < counter.size(); ++q) off += counter[q] * self_strides[q];
    copy_elem(o + static_cast<int64_t>(n) * static_cast<int64_t>(es), s + off * static_cast<int64_t>(es), es);
    for (size_t q = counter.size(); q-- > 0;) {
      if (++counter[q] < index.sizes[q]) break;
      counter[q] = 0;
    }
  }
  return Status::Ok();
}

namespace {

// The index values per self dim (nullopt where the dim is not indexed),
// row-major in each index tensor's own shape, before broadcasting.
struct FlatIndices {
  std::vector<std::optional<std::vector<int64_t>>> values;
  std::vector<std::vector<int64_t>> shapes;
};

// A bool (or uint8) mask over self dims dim..: one long index per masked
// dim, its coordinates where the mask is set (nonzero()).
Status add_mask(const Tensor& self, const Tensor& t, FlatIndices& f) {
  const size_t dim = f.values.size();
  if (dim + t.sizes.size() > self.sizes.size()) return make_error("index: too many indices for " + shape_string(self.sizes));
  for (size_t k = 0; k < t.sizes.size(); ++k) {
    if (t.sizes[k] != self.sizes[dim + k]) {
      return make_error("index: mask " + shape_string(t.sizes) + " does not match " + shape_string(self.sizes));
    }
  }
  Tensor m = as_dtype(as_contiguous(t), DType::Bool);
  std::vector<std::vector<int64_t>> coords(t.sizes.size());
  const bool* p = cdata<bool>(m);
  std::vector<int64_t> ctr(t.sizes.size(), 0);
  for (int64_t n = 0; n < m.numel(); ++n) {
    if (p[n]) {
      for (size_t k = 0; k < ctr.size(); ++k) coords[k].push_back(ctr[k]);
    }
    for (size_t k = ctr.size(); k-- > 0;) {
      if (++ctr[k] < t.sizes[k]) break;
      ctr[k] = 0;
    }
  }
  for (auto& c : coords) {
    f.shapes.push_back({static_cast<int64_t>(c.size())});
    f.values.emplace_back(std::move(c));
  }
  return Status::Ok();
}

Result<FlatIndices> flatten_indices(const Tensor& self, const std::vector<const Tensor*>& indices) {
  FlatIndices f;
  for (const Tensor* t : indices) {
    if (!t) {
      f.values.emplace_back();
      f.shapes.emplace_back();
    } else if (t->dtype == DType::Bool || t->dtype == DType::UInt8) {
      LATHE_RETURN_IF_ERROR(add_mask(self, *t, f));
    } else {
      LATHE_RETURN_IF_ERROR(check_index_tensor(*t, "index"));
      f.shapes.push_back(t->sizes);
      // Broadcasting needs the values in the index's own layout; kept row-major.
      f.values.emplace_back(read_indices(*t));
    }
  }
  const size_t rank = self.sizes.size();
  if (f.values.size() > rank) return make_error("index: too many indices for a tensor of shape " + shape_string(self.sizes));
  f.values.resize(rank);
  f.shapes.resize(rank);
  return f;
}

// Nothing indexed: every element of self, in order.
AdvancedIndex every_element(const Tensor& self) {
  AdvancedIndex plan;
  plan.shape = self.sizes;
  for (int64_t n = 0, total = self.numel(); n < total; ++n) {
    int64_t off = 0, rem = n;
    for (size_t d = self.sizes.size(); d-- > 0;) {
      off += (rem % self.sizes[d]) * self.strides[d];
      rem /= self.sizes[d];
    }
    plan.offsets.push_back(off);
  }
  return plan;
}

// The result's dims, as self dims, with -1 for the broadcast block of the
// indexed dims: in place when they are adjacent, else first (NumPy's rule).
std::vector<int64_t> result_layout(const FlatIndices& f, const std::vector<size_t>& adv) {
  const size_t rank = f.values.size();
  std::vector<int64_t> layout;
  if (adv.back() - adv.front() + 1 == adv.size()) {
    for (size_t d = 0; d < adv.front(); ++d) layout.push_back(static_cast<int64_t>(d));
    layout.push_back(-1);
    for (size_t d = adv.back() + 1; d < rank; ++d) layout.push_back(static_cast<int64_t>(d));
  } else {
    layout.push_back(-1);
    for (size_t d = 0; d < rank; ++d) {
      if (!f.values[d]) layout.push_back(static_cast<int64_t>(d));
    }
  }
  return layout;
}

// One offset into self per element of plan.shape.
Status fill_offsets(const Tensor& self, const FlatIndices& f, const std::vector<size_t>& adv,
                    const std::vector<int64_t>& bshape, const std::vector<int64_t>& layout, AdvancedIndex& plan) {
  // Row-major strides into each index's values after broadcasting to bshape.
  std::vector<std::vector<int64_t>> istr(f.values.size());
  for (size_t d : adv) {
    Tensor fake;
    fake.sizes = f.shapes[d];
    fake.strides = Tensor::contiguous_strides(f.shapes[d]);
    istr[d] = broadcast_strides(fake, bshape);
  }
  const int64_t total = numel_of(plan.shape);
  plan.offsets.reserve(static_cast<size_t>(total));
  std::vector<int64_t> ctr(plan.shape.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t off = 0;
    size_t pos = 0;
    for (int64_t l : layout) {
      if (l >= 0) {
        off += ctr[pos++] * self.strides[l];
        continue;
      }
      for (size_t d : adv) {
        int64_t flat_i = 0;
        for (size_t b = 0; b < bshape.size(); ++b) flat_i += ctr[pos + b] * istr[d][b];
        LATHE_ASSIGN_OR_RETURN(int64_t k, checked_index((*f.values[d])[flat_i], self.sizes[d], "index", true));
        off += k * self.strides[d];
      }
      pos += bshape.size();
    }
    plan.offsets.push_back(off);
    for (size_t q = ctr.size(); q-- > 0;) {
      if (++ctr[q] < plan.shape[q]) break;
      ctr[q] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<AdvancedIndex> plan_advanced_index(const Tensor& self, const std::vector<const Tensor*>& indices_in) {
  LATHE_RETURN_IF_ERROR(check_input(self, "index", "self"));
  LATHE_ASSIGN_OR_RETURN(FlatIndices f, flatten_indices(self, indices_in));
  std::vector<size_t> adv;
  std::vector<int64_t> bshape;
  for (size_t d = 0; d < f.values.size(); ++d) {
    if (!f.values[d]) continue;
    adv.push_back(d);
    LATHE_ASSIGN_OR_RETURN(bshape, broadcast_shapes(bshape, f.shapes[d]));
  }
  if (adv.empty()) return every_element(self);
  AdvancedIndex plan;
  const std::vector<int64_t> layout = result_layout(f, adv);
  for (int64_t l : layout) {
    if (l < 0) plan.shape.insert(plan.shape.end(), bshape.begin(), bshape.end());
    else plan.shape.push_back(self.sizes[l]);
  }
  LATHE_RETURN_IF_ERROR(fill_offsets(self, f, adv, bshape, layout, plan));
  return plan;
}

Status index_out(const Tensor& self, const AdvancedIndex& plan, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, plan.shape, "index"));
  const size_t es = dtype_size(self.dtype);
  std::byte* o = out.storage->mutable_data() + out.storage_offset * static_cast<int64_t>(es);
  for (size_t n = 0; n < plan.offsets.size(); ++n) {
    copy_elem(o + n * es, self.data() + plan.offsets[n] * static_cast<int64_t>(es), es);
  }
  return Status::Ok();
}

Status index_put_out(const Tensor& self, const AdvancedIndex& plan, const Tensor& values, bool accumulate, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, self.sizes, "index_put"));
  LATHE_RETURN_IF_ERROR(copy_into(self, out));
  // plan.offsets address a contiguous tensor of self's shape: that is out.
  Tensor v = Tensor::empty(self.dtype, plan.shape);
  LATHE_RETURN_IF_ERROR(copy_into(values, v));
  return dispatch<Types::All>(self.dtype, "index_put", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* o = mdata<T>(out);
    const T* pv = cdata<T>(v);
    for (size_t n = 0; n < plan.offsets.size(); ++n) {
      if (accumulate) {
        if constexpr (std::is_same_v<T, bool>) o[plan.offsets[n]] = o[plan.offsets[n]] || pv[n];
        else o[plan.offsets[n]] = static_cast<T>(o[plan.offsets[n]] + pv[n]);
      } else {
        o[plan.offsets[n]] = pv[n];
      }
    }
    return Status::Ok();
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

Status embedding_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* idx, c.tensor("indices"));
  if (w->sizes.size() != 2) return make_error("embedding: weight must be 2-D, got " + shape_string(w->sizes));
  std::vector<int64_t> shape = idx->sizes;
  shape.push_back(w->sizes[1]);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, w->dtype, shape));
  return embedding_out(*w, *idx, *out);
}

Status index_select_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(self->sizes.size())));
  std::vector<int64_t> shape = self->sizes;
  if (!shape.empty()) shape[d] = index->numel();
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return index_select_out(*self, d, *index, *out);
}

Status gather_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* index, c.tensor("index"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, index->sizes));
  return gather_out(*self, dim, *index, *out);
}

Status index_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto indices, c.tensor_list("indices", true));
  LATHE_ASSIGN_OR_RETURN(AdvancedIndex plan, plan_advanced_index(*self, indices));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, plan.shape));
  return index_out(*self, plan, *out);
}

Status index_put_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto indices, c.tensor_list("indices", true));
  LATHE_ASSIGN_OR_RETURN(const Tensor* values, c.tensor("values"));
  LATHE_ASSIGN_OR_RETURN(bool accumulate, c.bool_arg("accumulate", false));
  // Plan against a contiguous layout: that is the layout of out.
  Tensor layout = make_view(*self, self->sizes, Tensor::contiguous_strides(self->sizes), 0);
  LATHE_ASSIGN_OR_RETURN(AdvancedIndex plan, plan_advanced_index(layout, indices));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return index_put_out(*self, plan, *values, accumulate, *out);
}

// out = copy of self with a slice (or one index) of it replaced by src.
Status slice_scatter_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim", 0));
  LATHE_ASSIGN_OR_RETURN(auto start, c.optional_int("start"));
  LATHE_ASSIGN_OR_RETURN(auto end, c.optional_int("end"));
  LATHE_ASSIGN_OR_RETURN(int64_t step, c.int_arg("step", 1));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  LATHE_RETURN_IF_ERROR(copy_into(*self, *out));
  LATHE_ASSIGN_OR_RETURN(Tensor dst, slice_view(*out, dim, start, end, step));
  if (dst.sizes != src->sizes) {
    return make_error("slice_scatter: src " + shape_string(src->sizes) + " does not match the slice " + shape_string(dst.sizes));
  }
  return copy_into(*src, dst);
}

Status select_scatter_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(int64_t index, c.int_arg("index"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  LATHE_RETURN_IF_ERROR(copy_into(*self, *out));
  LATHE_ASSIGN_OR_RETURN(Tensor dst, select_view(*out, dim, index));
  if (dst.sizes != src->sizes) {
    return make_error("select_scatter: src " + shape_string(src->sizes) + " does not match " + shape_string(dst.sizes));
  }
  return copy_into(*src, dst);
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  register_overloads(r, "embedding", {"default"}, embedding_kernel);
  register_overloads(r, "index_select", {"default"}, index_select_kernel);
  register_overloads(r, "gather", {"default"}, gather_kernel);
  register_overloads(r, "index", {"Tensor"}, index_kernel);
  register_overloads(r, "index_put", {"default"}, index_put_kernel);
  register_overloads(r, "slice_scatter", {"default"}, slice_scatter_kernel);
  register_overloads(r, "select_scatter", {"default"}, select_scatter_kernel);
}

}  // namespace lathe::kernels
