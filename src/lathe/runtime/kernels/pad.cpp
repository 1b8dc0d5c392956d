// Padding and rotation: constant_pad_nd and roll are copies between slice
// views, so every dtype and stride the view kernels accept works; the
// reflection/replication pads gather through per-dim index tables.
#include "lathe/runtime/kernels/pad.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

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

// Copies one leading-index block: the spatial dims from `d` on, with
// offs[d][o] the input element offset of output index o along dim d.
template <typename T>
void gather_block(const T* in, const std::vector<std::vector<int64_t>>& offs, size_t d, T*& out) {
  const auto& od = offs[d];
  if (d + 1 == offs.size()) {
    for (int64_t o : od) *out++ = in[o];
    return;
  }
  for (int64_t o : od) gather_block(in + o, offs, d + 1, out);
}

}  // namespace

Status gather_last_dims(const Tensor& self, const std::vector<std::vector<int64_t>>& idx, Tensor& out, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(self, op, "self"));
  const size_t rank = self.sizes.size(), k = idx.size();
  if (k == 0 || k > rank) return make_error(std::string(op) + ": input " + shape_string(self.sizes) + " has too few dims");
  std::vector<int64_t> shape(self.sizes.begin(), self.sizes.end() - static_cast<int64_t>(k));
  std::vector<std::vector<int64_t>> offs(k);
  for (size_t d = 0; d < k; ++d) {
    const int64_t n = self.sizes[rank - k + d], st = self.strides[rank - k + d];
    shape.push_back(static_cast<int64_t>(idx[d].size()));
    for (int64_t i : idx[d]) {
      if (i < 0 || i >= n) return make_error(std::string(op) + ": source index " + std::to_string(i) + " is outside dim of size " + std::to_string(n));
      offs[d].push_back(i * st);
    }
  }
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, shape, op));
  if (out.numel() == 0) return Status::Ok();
  const std::vector<int64_t> lead(self.sizes.begin(), self.sizes.end() - static_cast<int64_t>(k));
  const int64_t blocks = numel_of(lead);
  return dispatch_storage(self.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(self);
    T* y = mdata<T>(out);
    std::vector<int64_t> pos(lead.size(), 0);
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t base = 0;
      for (size_t i = 0; i < lead.size(); ++i) base += pos[i] * self.strides[i];
      gather_block(x + base, offs, 0, y);
      for (size_t i = lead.size(); i-- > 0;) {  // next leading index, last dim fastest
        if (++pos[i] < lead[i]) break;
        pos[i] = 0;
      }
    }
    return Status::Ok();
  });
}

namespace {

// Source index of output position o along a padded dim of size n.
int64_t pad_source(int64_t o, int64_t before, int64_t after, int64_t n, PadMode mode) {
  const int64_t i = o - before;
  if (mode == PadMode::Replicate) return std::clamp<int64_t>(i, 0, n - 1);
  if (mode == PadMode::Circular) {
    // torch crops first (negative amounts), then wraps around what is left.
    const int64_t begin = std::max<int64_t>(0, -before), m = n - begin - std::max<int64_t>(0, -after);
    const int64_t j = o - std::max<int64_t>(0, before);
    return begin + ((j % m) + m) % m;
  }
  if (i < 0) return -i;
  if (i >= n) return 2 * (n - 1) - i;
  return i;
}

}  // namespace

Result<std::vector<int64_t>> index_pad_shape(const Tensor& self, const std::vector<int64_t>& pad, size_t spatial,
                                             PadMode mode, const char* op) {
  const size_t rank = self.sizes.size();
  if (rank != spatial + 1 && rank != spatial + 2) {
    return make_error(std::string(op) + ": input must be " + std::to_string(spatial + 1) + "-D or " + std::to_string(spatial + 2) +
                      "-D, got " + shape_string(self.sizes));
  }
  if (pad.size() != 2 * spatial) {
    return make_error(std::string(op) + ": padding needs " + std::to_string(2 * spatial) + " values, got " + std::to_string(pad.size()));
  }
  std::vector<int64_t> shape = self.sizes;
  constexpr int64_t kLimit = int64_t{1} << 40;  // as in constant_pad_shape
  for (size_t k = 0; k < spatial; ++k) {
    const size_t d = rank - 1 - k;
    const int64_t lo = pad[2 * k], hi = pad[2 * k + 1], n = self.sizes[d];
    if (n == 0) return make_error(std::string(op) + ": dim " + std::to_string(d) + " of input " + shape_string(self.sizes) + " is empty");
    if (std::abs(lo) > kLimit || std::abs(hi) > kLimit) return make_error(std::string(op) + ": padding is out of range");
    if (mode == PadMode::Circular && (lo > n || hi > n || n + std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0) <= 0)) {
      return make_error(std::string(op) + ": padding (" + std::to_string(lo) + ", " + std::to_string(hi) +
                        ") of dim " + std::to_string(d) + " of input " + shape_string(self.sizes) + " wraps around more than once or crops it away");
    }
    if (mode == PadMode::Reflect && (lo >= n || hi >= n)) {
      return make_error(std::string(op) + ": padding (" + std::to_string(lo) + ", " + std::to_string(hi) +
                        ") must be smaller than dim " + std::to_string(d) + " of input " + shape_string(self.sizes));
    }
    shape[d] = n + lo + hi;
    if (shape[d] < 1) {
      return make_error(std::string(op) + ": padding (" + std::to_string(lo) + ", " + std::to_string(hi) + ") leaves dim " +
                        std::to_string(d) + " of input " + shape_string(self.sizes) + " empty");
    }
  }
  return shape;
}

Status index_pad_out(const Tensor& self, const std::vector<int64_t>& pad, size_t spatial, PadMode mode, const char* op,
                     Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(auto shape, index_pad_shape(self, pad, spatial, mode, op));
  const size_t rank = self.sizes.size();
  std::vector<std::vector<int64_t>> idx(spatial);
  for (size_t j = 0; j < spatial; ++j) {  // j-th of the last `spatial` dims
    const size_t d = rank - spatial + j, k = rank - 1 - d;
    for (int64_t o = 0; o < shape[d]; ++o) idx[j].push_back(pad_source(o, pad[2 * k], pad[2 * k + 1], self.sizes[d], mode));
  }
  return gather_last_dims(self, idx, out, op);
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

// pad(self, pad, mode, value): the export-IR spelling of F.pad. The
// constant mode is a copy; reflect/replicate/circular gather by index over
// the padded (trailing) dims.
Status pad_kernel(KernelCall& c) {
  // Held by reference: gcc 12 mistakes a string moved out of a Result for
  // uninitialised (-Wmaybe-uninitialized).
  const auto mode_arg = c.string_arg("mode", std::string("constant"));
  if (!mode_arg.ok()) return mode_arg.error();
  const std::string& mode = *mode_arg;
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto pad, c.int_list("pad"));
  if (mode != "constant") {
    PadMode m = PadMode::Reflect;
    if (mode == "replicate") m = PadMode::Replicate;
    else if (mode == "circular") m = PadMode::Circular;
    else if (mode != "reflect") return c.arg_error("mode", "'" + mode + "' padding is not supported");
    if (pad.size() % 2 != 0 || pad.empty()) return c.arg_error("pad", "needs a non-empty, even number of values");
    const std::string op = "pad (" + mode + ")";
    LATHE_ASSIGN_OR_RETURN(auto shape, index_pad_shape(*self, pad, pad.size() / 2, m, op.c_str()));
    LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
    return index_pad_out(*self, pad, pad.size() / 2, m, op.c_str(), *out);
  }
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

template <size_t spatial, PadMode mode>
Status index_pad_kernel(KernelCall& c) {
  static const std::string op = std::string(mode == PadMode::Reflect ? "reflection_pad" : "replication_pad") +
                                std::to_string(spatial) + "d";
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto pad, c.int_list("padding"));
  LATHE_ASSIGN_OR_RETURN(auto shape, index_pad_shape(*self, pad, spatial, mode, op.c_str()));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, shape));
  return index_pad_out(*self, pad, spatial, mode, op.c_str(), *out);
}

}  // namespace

// Padding and rotation: constant_pad_nd, pad (constant mode), roll,
// reflection/replication pads.
void register_pad_kernels(KernelRegistry& r) {
  register_overloads(r, "constant_pad_nd", {"default"}, constant_pad_nd_kernel);
  register_overloads(r, "pad", {"default"}, pad_kernel);
  register_overloads(r, "roll", {"default"}, roll_kernel);
  register_overloads(r, "reflection_pad1d", {"default"}, index_pad_kernel<1, PadMode::Reflect>);
  register_overloads(r, "reflection_pad2d", {"default"}, index_pad_kernel<2, PadMode::Reflect>);
  register_overloads(r, "reflection_pad3d", {"default"}, index_pad_kernel<3, PadMode::Reflect>);
  register_overloads(r, "replication_pad1d", {"default"}, index_pad_kernel<1, PadMode::Replicate>);
  register_overloads(r, "replication_pad2d", {"default"}, index_pad_kernel<2, PadMode::Replicate>);
  register_overloads(r, "replication_pad3d", {"default"}, index_pad_kernel<3, PadMode::Replicate>);
}

}  // namespace lathe::kernels
