// repeat (tile a tensor) and repeat_interleave (repeat each element along a
// dim: how grouped-query attention expands K/V heads in ExecuTorch's Llama,
// and the index form, repeats -> [0]*r0 + [1]*r1 + ...).
#include <optional>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

namespace {

// repeat(self, repeats): len(repeats) >= rank; self is read as if padded
// with leading 1s; out[i] = self[i % size] per dim.
Status repeat_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "repeat", "self"));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, c.int_list("repeats"));
  if (repeats.size() < self->sizes.size()) {
    return c.arg_error("repeats", "number of repeat dims (" + std::to_string(repeats.size()) +
                                      ") can not be smaller than the number of dimensions of the tensor (" +
                                      std::to_string(self->sizes.size()) + ")");
  }
  const size_t rank = repeats.size(), pad = rank - self->sizes.size();
  std::vector<int64_t> in_sizes(pad, 1), in_strides(pad, 0), out_sizes(rank);
  in_sizes.insert(in_sizes.end(), self->sizes.begin(), self->sizes.end());
  in_strides.insert(in_strides.end(), self->strides.begin(), self->strides.end());
  for (size_t d = 0; d < rank; ++d) {
    if (repeats[d] < 0) return c.arg_error("repeats", "repeats can not be negative, got " + std::to_string(repeats[d]));
    const std::optional<int64_t> size = checked_mul(in_sizes[d], repeats[d]);
    if (!size) {
      return c.arg_error("repeats", "dim " + std::to_string(d) + ": size " + std::to_string(in_sizes[d]) + " repeated " +
                                        std::to_string(repeats[d]) + " times overflows int64");
    }
    out_sizes[d] = *size;
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, out_sizes));
  if (out->numel() == 0) return Status::Ok();
  // As a [r0, s0, r1, s1, ...] broadcast view of self (stride 0 on each r)
  // copied into out viewed the same way.
  std::vector<int64_t> vs, vst, os;
  for (size_t d = 0; d < rank; ++d) {
    vs.insert(vs.end(), {repeats[d], in_sizes[d]});
    vst.insert(vst.end(), {0, in_strides[d]});
  }
  const Tensor src = make_view(*self, vs, vst, self->storage_offset);
  Tensor dst = make_view(*out, vs, Tensor::contiguous_strides(vs), out->storage_offset);
  return copy_into(src, dst);
}

// Per position along dim, how many copies: one count for all, or a 1-D
// int tensor with one count per position.
Result<std::vector<int64_t>> counts_of(KernelCall& c, const Tensor* repeats, int64_t scalar, int64_t len) {
  if (!repeats) {
    if (scalar < 0) return c.arg_error("repeats", "repeats can not be negative, got " + std::to_string(scalar));
    return std::vector<int64_t>(static_cast<size_t>(len), scalar);
  }
  if (repeats->sizes.size() > 1 || !is_integral(repeats->dtype, false)) {
    return c.arg_error("repeats", "must be a 0-D or 1-D integer tensor, got " + std::string(dtype_name(repeats->dtype)) + " " +
                                      shape_string(repeats->sizes));
  }
  const Tensor r = as_contiguous(as_dtype(*repeats, DType::Int64));
  const int64_t* p = cdata<int64_t>(r);
  std::vector<int64_t> counts(static_cast<size_t>(len));
  if (r.numel() != 1 && r.numel() != len) {
    return c.arg_error("repeats", "must have the same size as input along dim (" + std::to_string(len) + "), got " +
                                      std::to_string(r.numel()));
  }
  for (int64_t i = 0; i < len; ++i) {
    counts[i] = p[r.numel() == 1 ? 0 : i];
    if (counts[i] < 0) return c.arg_error("repeats", "repeats can not be negative, got " + std::to_string(counts[i]));
  }
  return counts;
}

// repeat_interleave.self_int / .self_Tensor: with no dim, over the
// flattened input.
Status repeat_interleave_self_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_input(*self, "repeat_interleave", "self"));
  const Tensor* rt = nullptr;
  int64_t ri = 0;
  if (c.is_tensor("repeats")) {
    LATHE_ASSIGN_OR_RETURN(rt, c.tensor("repeats"));
  } else {
    LATHE_ASSIGN_OR_RETURN(ri, c.int_arg("repeats"));
  }
  LATHE_ASSIGN_OR_RETURN(std::optional<int64_t> raw_dim, c.optional_int("dim"));
  Tensor x = as_contiguous(*self);
  int64_t dim = 0;
  if (!raw_dim) {
    x = make_view(x, {x.numel()}, {1}, x.storage_offset);
  } else {
    LATHE_ASSIGN_OR_RETURN(dim, normalize_dim(*raw_dim, static_cast<int64_t>(x.sizes.size())));
  }
  if (x.sizes.empty()) x = make_view(x, {1}, {1}, x.storage_offset);
  const int64_t len = x.sizes[dim];
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> counts, counts_of(c, rt, ri, len));
  int64_t total = 0;
  for (int64_t n : counts) {
    if (__builtin_add_overflow(total, n, &total)) return c.arg_error("repeats", "the repeats' total overflows int64");
  }
  LATHE_ASSIGN_OR_RETURN(std::optional<int64_t> output_size, c.optional_int("output_size"));
  if (output_size && *output_size != total) {
    return c.arg_error("output_size", std::to_string(*output_size) + " does not match the repeats' total " + std::to_string(total));
  }
  std::vector<int64_t> sizes = x.sizes;
  sizes[dim] = total;
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x.dtype, sizes));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.sizes[d];
  for (size_t d = dim + 1; d < x.sizes.size(); ++d) inner *= x.sizes[d];
  const size_t width = dtype_size(x.dtype) * static_cast<size_t>(inner);
  const std::byte* src = x.data();
  std::byte* dst = out->storage->mutable_data() + out->storage_offset * static_cast<int64_t>(dtype_size(x.dtype));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < len; ++k) {
      const std::byte* row = src + (o * len + k) * static_cast<int64_t>(width);
      for (int64_t r = 0; r < counts[k]; ++r, dst += width) std::memcpy(dst, row, width);
    }
  }
  return Status::Ok();
}

// repeat_interleave.Tensor(repeats): [0] * r0 + [1] * r1 + ... (int64).
Status repeat_interleave_index_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* repeats, c.tensor("repeats"));
  if (repeats->sizes.size() != 1) return c.arg_error("repeats", "must be 1-D, got " + shape_string(repeats->sizes));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> counts, counts_of(c, repeats, 0, repeats->sizes[0]));
  int64_t total = 0;
  for (int64_t n : counts) {
    if (__builtin_add_overflow(total, n, &total)) return c.arg_error("repeats", "the repeats' total overflows int64");
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Int64, {total}));
  int64_t* o = mdata<int64_t>(*out);
  for (size_t k = 0; k < counts.size(); ++k) o = std::fill_n(o, counts[k], static_cast<int64_t>(k));
  return Status::Ok();
}

}  // namespace

void register_repeat_kernels(KernelRegistry& r) {
  register_overloads(r, "repeat", {"default"}, repeat_kernel);
  register_overloads(r, "repeat_interleave", {"self_int", "self_Tensor"}, repeat_interleave_self_kernel);
  register_overloads(r, "repeat_interleave", {"Tensor"}, repeat_interleave_index_kernel);
}

}  // namespace lathe::kernels
