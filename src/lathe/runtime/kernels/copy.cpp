#include "lathe/runtime/kernels/copy.h"

#include "lathe/runtime/kernels/random.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe::kernels {

namespace {
bool skipped_in_cat(const Tensor& t) { return t.sizes.size() == 1 && t.sizes[0] == 0; }
}  // namespace

DType cat_dtype(const std::vector<const Tensor*>& tensors) {
  DType dt = DType::Unknown;
  for (const Tensor* t : tensors) dt = dt == DType::Unknown ? t->dtype : promote_types(dt, t->dtype);
  return dt;
}

Result<std::vector<int64_t>> cat_shape(const std::vector<const Tensor*>& tensors, int64_t dim) {
  if (tensors.empty()) return make_error("cat: expected a non-empty list of tensors");
  const Tensor* ref = nullptr;
  for (const Tensor* t : tensors) {
    if (!skipped_in_cat(*t)) {
      ref = t;
      break;
    }
  }
  if (!ref) return std::vector<int64_t>{0};
  if (ref->sizes.empty()) return make_error("cat: zero-dimensional tensors cannot be concatenated");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(ref->sizes.size())));
  std::vector<int64_t> shape = ref->sizes;
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    if (skipped_in_cat(t)) continue;
    if (t.sizes.size() != shape.size()) {
      return make_error("cat: tensor " + std::to_string(i) + " has shape " + shape_string(t.sizes) + ", expected rank " +
                        std::to_string(shape.size()));
    }
    for (size_t k = 0; k < shape.size(); ++k) {
      if (static_cast<int64_t>(k) != d && t.sizes[k] != ref->sizes[k]) {
        return make_error("cat: sizes of tensors must match except in dim " + std::to_string(d) + " (" +
                          shape_string(ref->sizes) + " vs " + shape_string(t.sizes) + ")");
      }
    }
    shape[d] += t.sizes[d];
  }
  return shape;
}

Status cat_out(const std::vector<const Tensor*>& tensors, int64_t dim, Tensor& out) {
  for (const Tensor* t : tensors) LATHE_RETURN_IF_ERROR(check_input(*t, "cat", "tensors"));
  LATHE_ASSIGN_OR_RETURN(auto shape, cat_shape(tensors, dim));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, shape, "cat"));
  if (shape.size() == 1 && shape[0] == 0) return Status::Ok();
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(shape.size())));
  int64_t start = 0;
  for (const Tensor* t : tensors) {
    if (skipped_in_cat(*t)) continue;
    LATHE_ASSIGN_OR_RETURN(Tensor dst, slice_view(out, d, start, start + t->sizes[d], 1));
    LATHE_RETURN_IF_ERROR(copy_into(*t, dst));
    start += t->sizes[d];
  }
  return Status::Ok();
}

Status stack_out(const std::vector<const Tensor*>& tensors, int64_t dim, Tensor& out) {
  if (tensors.empty()) return make_error("stack: expected a non-empty list of tensors");
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(tensors[0]->sizes.size()) + 1));
  std::vector<Tensor> parts;
  for (const Tensor* t : tensors) {
    if (t->sizes != tensors[0]->sizes) {
      return make_error("stack: all tensors must have the same shape (" + shape_string(tensors[0]->sizes) + " vs " +
                        shape_string(t->sizes) + ")");
    }
    LATHE_ASSIGN_OR_RETURN(Tensor u, unsqueeze_view(*t, d));
    parts.push_back(std::move(u));
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& p : parts) ptrs.push_back(&p);
  return cat_out(ptrs, d, out);
}

// ---- adapters ------------------------------------------------------------------
namespace {

Status copy_as(KernelCall& c, const Tensor& self, DType dtype) {
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dtype, self.sizes));
  return copy_into(self, *out);
}

// clone / lift_fresh_copy: a fresh contiguous copy (memory_format is a
// layout hint; values are what matters here).
Status clone_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  return copy_as(c, *self, self->dtype);
}

Status contiguous_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  if (self->is_contiguous()) return c.set_output(0, *self);
  return copy_as(c, *self, self->dtype);
}

Status to_copy_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  return copy_as(c, *self, dtype.value_or(self->dtype));
}

// to.dtype: a no-op alias when nothing changes and copy is false.
Status to_dtype_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  LATHE_ASSIGN_OR_RETURN(bool copy, c.bool_arg("copy", false));
  const DType dt = dtype.value_or(self->dtype);
  if (!copy && dt == self->dtype) return c.set_output(0, *self);
  return copy_as(c, *self, dt);
}

// to.other / type_as: to the dtype of another tensor (an alias when it is
// already that dtype, as torch returns self then).
Status to_other_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* other, c.tensor("other"));
  LATHE_ASSIGN_OR_RETURN(bool copy, c.bool_arg("copy", false));
  if (!copy && other->dtype == self->dtype) return c.set_output(0, *self);
  return copy_as(c, *self, other->dtype);
}

// copy(self, src): a new tensor shaped and typed like self, holding src.
Status copy_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return copy_into(*src, *out);
}

// copy_(self, src): writes into self, which must be writable memory (a
// user input or an intermediate; never the mapped weights).
Status copy_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* src, c.tensor("src"));
  Tensor dst = *self;
  LATHE_RETURN_IF_ERROR(copy_into(*src, dst));
  return c.set_output(0, dst);
}

Status cat_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(auto tensors, c.tensor_list("tensors"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim", 0));
  LATHE_ASSIGN_OR_RETURN(auto shape, cat_shape(tensors, dim));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, cat_dtype(tensors), shape));
  return cat_out(tensors, dim, *out);
}

Status stack_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(auto tensors, c.tensor_list("tensors"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim", 0));
  if (tensors.empty()) return make_error("stack: expected a non-empty list of tensors");
  std::vector<int64_t> shape = tensors[0]->sizes;
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(shape.size()) + 1));
  shape.insert(shape.begin() + d, static_cast<int64_t>(tensors.size()));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, cat_dtype(tensors), shape));
  return stack_out(tensors, d, *out);
}

// Dropout is the identity in eval mode; in training mode it draws its mask
// from Lathe's generator (random.h), as native_dropout does.
Status dropout_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(double p, c.double_arg("p"));
  LATHE_ASSIGN_OR_RETURN(bool train, c.bool_arg("train"));
  if (!train || p == 0) return c.set_output(0, *input);
  if (p < 0 || p > 1) return c.arg_error("p", "dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  Tensor mask = Tensor::empty(DType::Bool, input->sizes);
  return dropout_out(as_contiguous(*input), p, *out, mask);
}

}  // namespace

void register_copy_kernels(KernelRegistry& r) {
  register_overloads(r, "clone", {"default"}, clone_kernel);
  register_overloads(r, "lift_fresh_copy", {"default"}, clone_kernel);
  register_overloads(r, "contiguous", {"default"}, contiguous_kernel, OutputAlias::MaybeView);
  register_overloads(r, "_to_copy", {"default"}, to_copy_kernel);
  // to.device: every tensor Lathe runs is on the CPU, so only the dtype
  // (and `copy`) can change anything.
  register_overloads(r, "to", {"dtype", "dtype_layout", "device"}, to_dtype_kernel, OutputAlias::MaybeView);
  register_overloads(r, "to", {"other"}, to_other_kernel, OutputAlias::MaybeView);
  register_overloads(r, "type_as", {"default"}, to_other_kernel, OutputAlias::MaybeView);
  register_overloads(r, "copy", {"default"}, copy_kernel);
  register_overloads(r, "copy_", {"default"}, copy_inplace_kernel, OutputAlias::View);
  register_overloads(r, "cat", {"default"}, cat_kernel);
  register_overloads(r, "stack", {"default"}, stack_kernel);
  register_overloads(r, "dropout", {"default"}, dropout_kernel, OutputAlias::MaybeView);  // native_dropout: random.cpp
}

}  // namespace lathe::kernels
