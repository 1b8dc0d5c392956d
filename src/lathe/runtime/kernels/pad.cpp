// Padding and rotation: constant_pad_nd and roll. Both are copies between
// slice views, so every dtype and stride the view kernels accept works.
#include "lathe/runtime/kernels/pad.h"

#include <limits>

#include "lathe/runtime/kernels/factory.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe::kernels {

Result<std::vector<int64_t>> constant_pad_shape(const Tensor& self, const std::vector<int64_t>& pad) {
  const size_t rank = self.sizes.size();
  if (pad.size() % 2 != 0) return make_error("constant_pad_nd: padding length must be even, got " + std::to_string(pad.size()));
  if (pad.size() / 2 > rank) {
    return make_error("constant_pad_nd: padding length " + std::to_string(pad.size()) + " is too large for a " +
                      std::to_string(rank) + "-D input");
  }
  std::vector<int64_t> shape = self.sizes;
  constexpr int64_t kLimit = int64_t{1} << 40;  // a padding this large is a malformed program, not a request
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const size_t d = rank - 1 - k;
    const int64_t lo = pad[2 * k], hi = pad[2 * k + 1];
    if (lo > kLimit || hi > kLimit || lo < -kLimit || hi < -kLimit) {
      return make_error("constant_pad_nd: padding " + std::to_string(lo) + ", " + std::to_string(hi) + " of dim " +
                        std::to_string(d) + " is out of range");
    }
    shape[d] += lo + hi;
    if (shape[d] < 0) {
      return make_error("constant_pad_nd: padding " + std::to_string(lo) + ", " + std::to_string(hi) + " leaves dim " +
                        std::to_string(d) + " (size " + std::to_string(self.sizes[d]) + ") with a negative size");
    }
  }
  return shape;
}

Status constant_pad_out(const Tensor& self, const std::vector<int64_t>& pad, const Scalar& value, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(self, "constant_pad_nd", "self"));
  LATHE_ASSIGN_OR_RETURN(auto shape, constant_pad_shape(self, pad));
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, shape, "constant_pad_nd"));
  LATHE_RETURN_IF_ERROR(fill_tensor(out, value));
  // The part of `self` that survives cropping, and where it lands in `out`.
  Tensor src = self, dst = out;
  const size_t rank = self.sizes.size();
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const int64_t d = static_cast<int64_t>(rank - 1 - k);
    const int64_t lo = pad[2 * k], hi = pad[2 * k + 1];
    const int64_t src_begin = std::max<int64_t>(0, -lo), src_end = self.sizes[d] - std::max<int64_t>(0, -hi);
    if (src_end <= src_begin) return Status::Ok();  // cropped away: all padding
    const int64_t dst_begin = std::max<int64_t>(0, lo);
    LATHE_ASSIGN_OR_RETURN(src, slice_view(src, d, src_begin, src_end, 1));
    LATHE_ASSIGN_OR_RETURN(dst, slice_view(dst, d, dst_begin, dst_begin + (src_end - src_begin), 1));
  }
  return copy_into(src, dst);
}

namespace {

// out = self rotated by `shift` along dim `d` (sizes equal, no overlap).
Status roll_one(const Tensor& self, int64_t d, int64_t shift, Tensor& out) {
  const int64_t n = self.sizes[d];
  if (n == 0) return Status::Ok();
  const int64_t s = ((shift % n) + n) % n;
  LATHE_ASSIGN_OR_RETURN(Tensor head_src, slice_view(self, d, 0, n - s, 1));
  LATHE_ASSIGN_OR_RETURN(Tensor head_dst, slice_view(out, d, s, n, 1));
  LATHE_RETURN_IF_ERROR(copy_into(head_src, head_dst));
  if (s == 0) return Status::Ok();
  LATHE_ASSIGN_OR_RETURN(Tensor tail_src, slice_view(self, d, n - s, n, 1));
  LATHE_ASSIGN_OR_RETURN(Tensor tail_dst, slice_view(out, d, 0, s, 1));
  return copy_into(tail_src, tail_dst);
}

}  // namespace

Status roll_out(const Tensor& self, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(self, "roll", "self"));
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, self.sizes, "roll"));
  if (dims.empty()) {
    if (shifts.size() != 1) return make_error("roll: without dims, shifts must hold one value, got " + std::to_string(shifts.size()));
    Tensor flat_in = as_contiguous(self);
    LATHE_ASSIGN_OR_RETURN(Tensor src, view_view(flat_in, {self.numel()}));
    LATHE_ASSIGN_OR_RETURN(Tensor dst, view_view(out, {self.numel()}));
    return roll_one(src, 0, shifts[0], dst);
  }
  if (shifts.size() != dims.size()) {
    return make_error("roll: shifts and dims must have the same length, got " + std::to_string(shifts.size()) + " and " +
                      std::to_string(dims.size()));
  }
  const int64_t rank = static_cast<int64_t>(self.sizes.size());
  Tensor current = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dims[i], rank));
    // The last rotation writes `out`; earlier ones go through a temporary.
    Tensor target = i + 1 == dims.size() ? out : Tensor::empty(self.dtype, self.sizes);
    LATHE_RETURN_IF_ERROR(roll_one(current, d, shifts[i], target));
    current = target;
  }
  return Status::Ok();
}

namespace {

Status constant_pad_nd_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto pad, c.int_list("pad"));
  LATHE_ASSIGN_OR_RETURN(Scalar value, c.scalar("value", Scalar::from_int(0)));
  LATHE_ASSIGN_OR_RETURN(auto shape, constant_pad_shape(*self, pad));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return constant_pad_out(*self, pad, value, *out);
}

// pad(self, pad, mode, value): the export-IR spelling of F.pad; only the
// constant mode is a copy (reflect/replicate/circular index differently).
Status pad_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(std::string mode, c.string_arg("mode", std::string("constant")));
  if (mode != "constant") return c.arg_error("mode", "'" + mode + "' padding is not supported (only 'constant')");
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto pad, c.int_list("pad"));
  LATHE_ASSIGN_OR_RETURN(std::optional<double> value, c.optional_double("value"));
  LATHE_ASSIGN_OR_RETURN(auto shape, constant_pad_shape(*self, pad));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return constant_pad_out(*self, pad, Scalar::from_double(value.value_or(0.0)), *out);
}

Status roll_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto shifts, c.int_list("shifts"));
  LATHE_ASSIGN_OR_RETURN(auto dims, c.int_list("dims", {}));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return roll_out(*self, shifts, dims, *out);
}

}  // namespace

// Padding and rotation: constant_pad_nd, pad (constant mode), roll.
void register_pad_kernels(KernelRegistry& r) {
  register_overloads(r, "constant_pad_nd", {"default"}, constant_pad_nd_kernel);
  register_overloads(r, "pad", {"default"}, pad_kernel);
  register_overloads(r, "roll", {"default"}, roll_kernel);
}

}  // namespace lathe::kernels
