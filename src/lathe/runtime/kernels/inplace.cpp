// In-place ops torch.export keeps in its graphs: relu_ (torchvision's
// ReLU(inplace=True)), fill_ (a mask built by filling slices of a fresh
// tensor, as Swin's shifted-window attention does) and add_ (torchao's
// quantized linears add the bias in place to the matmul they just made). They write through
// `self`, which may be a view of another intermediate, and return it; the
// weights are mapped read-only, so writing into them is refused.
#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/unary.h"

namespace lathe::kernels {

namespace {

// `self`, which the op writes through: refused when it is read-only (a
// mapped weight).
Result<Tensor> writable_self(KernelCall& c, const char* op) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_RETURN_IF_ERROR(check_writable(*self, op));
  return *self;
}

Status relu_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "relu_"));
  if (dst.is_contiguous()) {
    LATHE_RETURN_IF_ERROR(unary_out(UnaryOp::Relu, dst, dst));  // elementwise: each element read before it is written
    return c.set_output(0, dst);
  }
  // unary_out writes contiguous memory only: go through a temporary.
  Tensor tmp = Tensor::empty(dst.dtype, dst.sizes);
  LATHE_RETURN_IF_ERROR(unary_out(UnaryOp::Relu, dst, tmp));
  LATHE_RETURN_IF_ERROR(copy_into(tmp, dst));
  return c.set_output(0, dst);
}

// fill_.Scalar / fill_.Tensor (a 0-d value): every element of self, in any
// layout, takes the value cast to self's dtype.
Status fill_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "fill_"));
  Tensor value;
  if (c.node().target().ends_with(".Tensor")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* v, c.tensor("value"));
    if (v->numel() != 1 || !v->sizes.empty()) {
      return make_error("fill_: value must be a 0-dimensional tensor, got shape " + shape_string(v->sizes));
    }
    value = *v;
  } else {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("value"));
    value = scalar_tensor(s, dst.dtype);
  }
  LATHE_RETURN_IF_ERROR(copy_into(value, dst));  // broadcast of one element
  return c.set_output(0, dst);
}

// add_.Tensor / add_.Scalar: self += alpha * other, other broadcast to
// self's shape, computed in self's dtype.
Status add_inplace_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(Tensor dst, writable_self(c, "add_"));
  Tensor other;
  if (c.is_tensor("other")) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* o, c.tensor("other"));
    other = *o;
  } else {
    LATHE_ASSIGN_OR_RETURN(Scalar s, c.scalar("other"));
    other = scalar_tensor(s, dst.dtype);
  }
  LATHE_ASSIGN_OR_RETURN(Scalar alpha, c.scalar("alpha", Scalar::from_int(1)));
  // binary_out writes contiguous memory; a temporary also keeps an `other`
  // that overlaps self from being read after it was written.
  Tensor tmp = Tensor::empty(dst.dtype, dst.sizes);
  LATHE_RETURN_IF_ERROR(binary_out(BinaryOp::Add, dst, other, dst.dtype, tmp, alpha));
  LATHE_RETURN_IF_ERROR(copy_into(tmp, dst));
  return c.set_output(0, dst);
}

}  // namespace

void register_inplace_kernels(KernelRegistry& r) {
  register_overloads(r, "relu_", {"default"}, relu_inplace_kernel, OutputAlias::View);
  register_overloads(r, "fill_", {"Scalar", "Tensor"}, fill_inplace_kernel, OutputAlias::View);
  register_overloads(r, "add_", {"Tensor", "Scalar"}, add_inplace_kernel, OutputAlias::View);
}

}  // namespace lathe::kernels
