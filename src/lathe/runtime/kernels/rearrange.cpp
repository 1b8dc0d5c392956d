// Ops that only move elements, which torch.export keeps whole in its
// default output: pixel_shuffle / pixel_unshuffle and channel_shuffle (a
// permuted view of the input, copied out), im2col (nn.Unfold's patches)
// and one_hot.
#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

namespace {

// Copies `view` (a strided view of the input) into a fresh output shaped `out_sizes`.
Status copy_view_out(KernelCall& c, const Tensor& self, std::vector<int64_t> view_sizes, std::vector<int64_t> view_strides,
                     const std::vector<int64_t>& out_sizes) {
  const Tensor view = make_view(self, std::move(view_sizes), std::move(view_strides), self.storage_offset);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self.dtype, out_sizes));
  Tensor shaped = make_view(*out, view.sizes, Tensor::contiguous_strides(view.sizes), out->storage_offset);
  return copy_into(view, shaped);
}

// pixel_shuffle: [*, C*r*r, H, W] -> [*, C, H*r, W*r], with
// out[c, h*r + i, w*r + j] = in[c*r*r + i*r + j, h, w].
Status pixel_shuffle_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t r, c.int_arg("upscale_factor"));
  const size_t rank = self->sizes.size();
  if (rank < 3) return c.arg_error("self", "pixel_shuffle needs at least 3 dimensions, got " + shape_string(self->sizes));
  if (r <= 0) return c.arg_error("upscale_factor", "must be positive, got " + std::to_string(r));
  const int64_t ch = self->sizes[rank - 3], h = self->sizes[rank - 2], w = self->sizes[rank - 1];
  // r*r must not overflow (fuzz_runtime).
  if (!checked_mul(r, r)) return c.arg_error("upscale_factor", "upscale_factor " + std::to_string(r) + " squared overflows int64");
  if (ch % (r * r) != 0) {
    return c.arg_error("self", "channels (" + std::to_string(ch) + ") must be divisible by upscale_factor squared (" +
                                   std::to_string(r * r) + ")");
  }
  const std::vector<int64_t>& st = self->strides;
  // View dims: *, C, H, i, W, j (i, j in [0, r)).
  std::vector<int64_t> vs(self->sizes.begin(), self->sizes.end() - 3), vst(st.begin(), st.end() - 3);
  const int64_t sc = st[rank - 3];
  vs.insert(vs.end(), {ch / (r * r), h, r, w, r});
  vst.insert(vst.end(), {sc * r * r, st[rank - 2], sc * r, st[rank - 1], sc});
  std::vector<int64_t> out(self->sizes.begin(), self->sizes.end() - 3);
  out.insert(out.end(), {ch / (r * r), h * r, w * r});
  return copy_view_out(c, *self, vs, vst, out);
}

// pixel_unshuffle: [*, C, H*r, W*r] -> [*, C*r*r, H, W], the inverse.
Status pixel_unshuffle_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t r, c.int_arg("downscale_factor"));
  const size_t rank = self->sizes.size();
  if (rank < 3) return c.arg_error("self", "pixel_unshuffle needs at least 3 dimensions, got " + shape_string(self->sizes));
  if (r <= 0) return c.arg_error("downscale_factor", "must be positive, got " + std::to_string(r));
  const int64_t ch = self->sizes[rank - 3], h = self->sizes[rank - 2], w = self->sizes[rank - 1];
  if (h % r != 0 || w % r != 0) {
    return c.arg_error("self", "height and width " + shape_string({h, w}) + " must be divisible by downscale_factor " +
                                   std::to_string(r));
  }
  const std::vector<int64_t>& st = self->strides;
  // View dims: *, C, i, j, H/r, W/r.
  std::vector<int64_t> vs(self->sizes.begin(), self->sizes.end() - 3), vst(st.begin(), st.end() - 3);
  vs.insert(vs.end(), {ch, r, r, h / r, w / r});
  vst.insert(vst.end(), {st[rank - 3], st[rank - 2], st[rank - 1], st[rank - 2] * r, st[rank - 1] * r});
  std::vector<int64_t> out(self->sizes.begin(), self->sizes.end() - 3);
  out.insert(out.end(), {ch * r * r, h / r, w / r});
  return copy_view_out(c, *self, vs, vst, out);
}

// channel_shuffle: [N, C, *] -> view [N, g, C/g, *] -> swap g and C/g.
Status channel_shuffle_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t g, c.int_arg("groups"));
  if (self->sizes.size() < 3) return c.arg_error("self", "channel_shuffle needs at least 3 dimensions, got " + shape_string(self->sizes));
  const int64_t ch = self->sizes[1];
  if (g <= 0 || ch % g != 0) {
    return c.arg_error("groups", std::to_string(g) + " must be positive and divide the channels (" + std::to_string(ch) + ")");
  }
  std::vector<int64_t> vs = {self->sizes[0], ch / g, g}, vst = {self->strides[0], self->strides[1], self->strides[1] * (ch / g)};
  for (size_t d = 2; d < self->sizes.size(); ++d) {
    vs.push_back(self->sizes[d]);
    vst.push_back(self->strides[d]);
  }
  return copy_view_out(c, *self, vs, vst, self->sizes);
}

// one_hot(self, num_classes): int64 [*, K]; K = max(self) + 1 when -1.
Status one_hot_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t k, c.int_arg("num_classes", -1));
  if (self->dtype != DType::Int64) return c.arg_error("self", "one_hot is only applicable to index tensors (int64)");
  const Tensor idx = as_contiguous(*self);
  const int64_t* p = cdata<int64_t>(idx);
  const int64_t n = idx.numel();
  if (k == -1) {
    if (n == 0) return c.arg_error("self", "can not infer the number of classes from an empty tensor");
    k = 0;
    for (int64_t i = 0; i < n; ++i) k = std::max(k, saturating_add(p[i], 1));  // INT64_MAX: out of range below
  }
  if (k < 0) return c.arg_error("num_classes", "must be -1 or non-negative, got " + std::to_string(k));
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= k) {
      return c.arg_error("self", "class value " + std::to_string(p[i]) + " is out of range [0, " + std::to_string(k) + ")");
    }
  }
  std::vector<int64_t> sizes = self->sizes;
  sizes.push_back(k);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, DType::Int64, sizes));
  int64_t* o = mdata<int64_t>(*out);
  std::fill(o, o + n * k, int64_t{0});
  for (int64_t i = 0; i < n; ++i) o[i * k + p[i]] = 1;
  return Status::Ok();
}

// im2col (nn.Unfold): [N, C, H, W] -> [N, C*kh*kw, L], L the number of
// sliding positions; padding reads zeros.
Status im2col_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> ks, c.int_list("kernel_size"));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> dil, c.int_list("dilation"));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> pad, c.int_list("padding"));
  LATHE_ASSIGN_OR_RETURN(std::vector<int64_t> str, c.int_list("stride"));
  for (auto* v : {&ks, &dil, &pad, &str}) {
    if (v->size() == 1) v->push_back((*v)[0]);
    if (v->size() != 2) return c.arg_error("kernel_size", "im2col takes 2-D kernel, dilation, padding and stride");
  }
  const bool batched = self->sizes.size() == 4;
  if (self->sizes.size() != 3 && !batched) return c.arg_error("self", "expected a 3-D or 4-D input, got " + shape_string(self->sizes));
  if (ks[0] <= 0 || ks[1] <= 0 || dil[0] <= 0 || dil[1] <= 0 || str[0] <= 0 || str[1] <= 0 || pad[0] < 0 || pad[1] < 0) {
    return c.arg_error("kernel_size", "kernel, dilation and stride must be positive and padding non-negative");
  }
  const Tensor x = as_contiguous(batched ? *self : make_view(*self, {1, self->sizes[0], self->sizes[1], self->sizes[2]},
                                                             {0, self->strides[0], self->strides[1], self->strides[2]},
                                                             self->storage_offset));
  const int64_t n = x.sizes[0], ch = x.sizes[1], h = x.sizes[2], w = x.sizes[3];
  const int64_t oh = (h + 2 * pad[0] - dil[0] * (ks[0] - 1) - 1) / str[0] + 1;
  const int64_t ow = (w + 2 * pad[1] - dil[1] * (ks[1] - 1) - 1) / str[1] + 1;
  if (oh <= 0 || ow <= 0) return c.arg_error("self", "input " + shape_string(self->sizes) + " is too small for the kernel");
  const int64_t rows = ch * ks[0] * ks[1], cols = oh * ow;
  std::vector<int64_t> sizes = batched ? std::vector<int64_t>{n, rows, cols} : std::vector<int64_t>{rows, cols};
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x.dtype, sizes));
  return dispatch<Types::Numeric>(x.dtype, "im2col", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* px = cdata<T>(x);
    T* po = mdata<T>(*out);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t row = 0; row < rows; ++row) {
        const int64_t cc = row / (ks[0] * ks[1]), ki = (row / ks[1]) % ks[0], kj = row % ks[1];
        for (int64_t oi = 0; oi < oh; ++oi) {
          for (int64_t oj = 0; oj < ow; ++oj) {
            const int64_t yi = oi * str[0] - pad[0] + ki * dil[0], yj = oj * str[1] - pad[1] + kj * dil[1];
            const bool inside = yi >= 0 && yi < h && yj >= 0 && yj < w;
            po[(b * rows + row) * cols + oi * ow + oj] = inside ? px[((b * ch + cc) * h + yi) * w + yj] : T(0);
          }
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace

void register_rearrange_kernels(KernelRegistry& r) {
  register_overloads(r, "pixel_shuffle", {"default"}, pixel_shuffle_kernel);
  register_overloads(r, "pixel_unshuffle", {"default"}, pixel_unshuffle_kernel);
  register_overloads(r, "channel_shuffle", {"default"}, channel_shuffle_kernel);
  register_overloads(r, "native_channel_shuffle", {"default"}, channel_shuffle_kernel);
  register_overloads(r, "one_hot", {"default"}, one_hot_kernel);
  register_overloads(r, "im2col", {"default"}, im2col_kernel);
}

}  // namespace lathe::kernels
