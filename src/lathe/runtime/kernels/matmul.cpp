#include "lathe/runtime/kernels/matmul.h"

#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/gemm.h"
#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe::kernels {

namespace {

// C (contiguous [M, N] at `c`) = A @ B for one matrix pair.
Status gemm_typed(DType dtype, int64_t M, int64_t N, int64_t K, MatView A, MatView B, std::byte* c) {
  if (dtype == DType::Float32) {
    gemm_f32(M, N, K, A, B, reinterpret_cast<float*>(c), N);
    return Status::Ok();
  }
  return dispatch<Types::Numeric>(dtype, "matmul", [&](auto tag) -> Status {
    using T = decltype(tag);
    gemm_ref<T>(M, N, K, A, B, reinterpret_cast<T*>(c), N);
    return Status::Ok();
  });
}

MatView mat(const Tensor& t, size_t row_dim, size_t col_dim, int64_t offset_elems = 0) {
  return MatView{t.data() + offset_elems * static_cast<int64_t>(dtype_size(t.dtype)), t.strides[row_dim], t.strides[col_dim]};
}

Status check_mm_operands(const Tensor& a, const Tensor& b, size_t rank, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(a, op, "self"));
  LATHE_RETURN_IF_ERROR(check_input(b, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_rank(a, rank, op, "self"));
  LATHE_RETURN_IF_ERROR(check_rank(b, rank, op, "mat2"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(a, b, op));
  if (a.sizes[rank - 1] != b.sizes[rank - 2]) {
    return make_error(std::string(op) + ": shapes " + shape_string(a.sizes) + " and " + shape_string(b.sizes) +
                      " cannot be multiplied");
  }
  if (rank == 3 && a.sizes[0] != b.sizes[0]) {
    return make_error(std::string(op) + ": batch sizes differ (" + shape_string(a.sizes) + ", " + shape_string(b.sizes) + ")");
  }
  return Status::Ok();
}

// out = beta * self + alpha * out, with self broadcast to out (in place).
Status scale_add(const Tensor& self, Scalar beta, Scalar alpha, Tensor& out, const char* op) {
  LATHE_RETURN_IF_ERROR(check_input(self, op, "self"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(self.sizes, out.sizes));
  if (shape != out.sizes) {
    return make_error(std::string(op) + ": self " + shape_string(self.sizes) + " does not broadcast to " +
                      shape_string(out.sizes));
  }
  const Tensor s = as_dtype(self, out.dtype);
  return dispatch<Types::Numeric>(out.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T b = beta.to<T>(), a = alpha.to<T>();
    std::array<std::vector<int64_t>, 2> st{out.strides, broadcast_strides(s, out.sizes)};
    T* po = mdata<T>(out);
    const T* ps = cdata<T>(s);
    const bool plain = b == T(1) && a == T(1);
    for_each_row<2>(out.sizes, st, [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& str) {
      T* o = po + off[0];
      const T* x = ps + off[1];
      if (plain) {
        for (int64_t i = 0; i < n; ++i) o[i * str[0]] = static_cast<T>(o[i * str[0]] + x[i * str[1]]);
      } else if (b == T(0)) {  // beta 0 ignores self entirely, even NaN (BLAS semantics)
        for (int64_t i = 0; i < n; ++i) o[i * str[0]] = static_cast<T>(a * o[i * str[0]]);
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * str[0]] = static_cast<T>(a * o[i * str[0]] + b * x[i * str[1]]);
      }
    });
    return Status::Ok();
  });
}

}  // namespace

Status mm_out(const Tensor& a, const Tensor& b, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_mm_operands(a, b, 2, "mm"));
  LATHE_RETURN_IF_ERROR(check_out(out, a.dtype, {a.sizes[0], b.sizes[1]}, "mm"));
  return gemm_typed(a.dtype, a.sizes[0], b.sizes[1], a.sizes[1], mat(a, 0, 1), mat(b, 0, 1),
                    out.storage->mutable_data() + out.storage_offset * static_cast<int64_t>(dtype_size(out.dtype)));
}

Status addmm_out(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha, Tensor& out) {
  // self + a @ b with a float [N] self (a linear's bias) is the GEMM's
  // epilogue; anything else a second pass.
  const int64_t N = b.sizes.size() == 2 ? b.sizes[1] : -1;
  if (a.dtype == DType::Float32 && self.dtype == DType::Float32 && self.sizes == std::vector<int64_t>{N} &&
      beta.to<double>() == 1.0 && alpha.to<double>() == 1.0) {
    LATHE_RETURN_IF_ERROR(check_input(self, "addmm", "self"));
    LATHE_RETURN_IF_ERROR(check_mm_operands(a, b, 2, "addmm"));
    LATHE_RETURN_IF_ERROR(check_out(out, a.dtype, {a.sizes[0], N}, "addmm"));
    const Tensor bias = as_contiguous(self);
    gemm_f32(a.sizes[0], N, a.sizes[1], mat(a, 0, 1), mat(b, 0, 1), mdata<float>(out), N, cdata<float>(bias));
    return Status::Ok();
  }
  LATHE_RETURN_IF_ERROR(mm_out(a, b, out));
  return scale_add(self, beta, alpha, out, "addmm");
}

Status bmm_out(const Tensor& a, const Tensor& b, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_mm_operands(a, b, 3, "bmm"));
  const int64_t B = a.sizes[0], M = a.sizes[1], K = a.sizes[2], N = b.sizes[2];
  LATHE_RETURN_IF_ERROR(check_out(out, a.dtype, {B, M, N}, "bmm"));
  const size_t es = dtype_size(out.dtype);
  for (int64_t i = 0; i < B; ++i) {
    LATHE_RETURN_IF_ERROR(gemm_typed(a.dtype, M, N, K, mat(a, 1, 2, i * a.strides[0]), mat(b, 1, 2, i * b.strides[0]),
                                     out.storage->mutable_data() + (out.storage_offset + i * M * N) * static_cast<int64_t>(es)));
  }
  return Status::Ok();
}

Status baddbmm_out(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha, Tensor& out) {
  LATHE_RETURN_IF_ERROR(bmm_out(a, b, out));
  return scale_add(self, beta, alpha, out, "baddbmm");
}

Result<std::vector<int64_t>> matmul_shape(const Tensor& a, const Tensor& b) {
  const size_t ra = a.sizes.size(), rb = b.sizes.size();
  if (ra == 0 || rb == 0) return make_error("matmul: both arguments need at least 1 dimension");
  const int64_t ka = a.sizes[ra - 1];
  const int64_t kb = rb == 1 ? b.sizes[0] : b.sizes[rb - 2];
  if (ka != kb) {
    return make_error("matmul: shapes " + shape_string(a.sizes) + " and " + shape_string(b.sizes) + " cannot be multiplied");
  }
  std::vector<int64_t> batch_a(a.sizes.begin(), a.sizes.end() - std::min<size_t>(ra, 2));
  std::vector<int64_t> batch_b(b.sizes.begin(), b.sizes.end() - std::min<size_t>(rb, 2));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(batch_a, batch_b));
  if (ra >= 2) shape.push_back(a.sizes[ra - 2]);
  if (rb >= 2) shape.push_back(b.sizes[rb - 1]);
  return shape;
}

Status matmul_out(const Tensor& a_in, const Tensor& b_in, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(a_in, "matmul", "self"));
  LATHE_RETURN_IF_ERROR(check_input(b_in, "matmul", "other"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(a_in, b_in, "matmul"));
  LATHE_ASSIGN_OR_RETURN(auto shape, matmul_shape(a_in, b_in));
  LATHE_RETURN_IF_ERROR(check_out(out, a_in.dtype, shape, "matmul"));
  // Promote 1-D operands to matrices; the output keeps its final shape.
  Tensor a = a_in, b = b_in;
  if (a.sizes.size() == 1) {
    LATHE_ASSIGN_OR_RETURN(a, unsqueeze_view(a, 0));
  }
  if (b.sizes.size() == 1) {
    LATHE_ASSIGN_OR_RETURN(b, unsqueeze_view(b, 1));
  }
  const size_t ra = a.sizes.size(), rb = b.sizes.size();
  const int64_t M = a.sizes[ra - 2], K = a.sizes[ra - 1], N = b.sizes[rb - 1];
  std::vector<int64_t> batch_a(a.sizes.begin(), a.sizes.end() - 2), batch_b(b.sizes.begin(), b.sizes.end() - 2);
  LATHE_ASSIGN_OR_RETURN(auto batch, broadcast_shapes(batch_a, batch_b));
  // Batch offsets of a and b for each output batch index.
  Tensor a_batch = make_view(a, batch_a, std::vector<int64_t>(a.strides.begin(), a.strides.end() - 2), 0);
  Tensor b_batch = make_view(b, batch_b, std::vector<int64_t>(b.strides.begin(), b.strides.end() - 2), 0);
  auto sa = broadcast_strides(a_batch, batch), sb = broadcast_strides(b_batch, batch);
  const int64_t nb = numel_of(batch);
  const size_t es = dtype_size(out.dtype);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < nb; ++i) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    LATHE_RETURN_IF_ERROR(gemm_typed(out.dtype, M, N, K, mat(a, ra - 2, ra - 1, oa), mat(b, rb - 2, rb - 1, ob),
                                     out.storage->mutable_data() + (out.storage_offset + i * M * N) * static_cast<int64_t>(es)));
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return Status::Ok();
}

Status linear_out(const Tensor& input, const Tensor& weight, const Tensor* bias, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(input, "linear", "input"));
  LATHE_RETURN_IF_ERROR(check_input(weight, "linear", "weight"));
  LATHE_RETURN_IF_ERROR(check_rank(weight, 2, "linear", "weight"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(input, weight, "linear"));
  if (input.sizes.empty() || input.sizes.back() != weight.sizes[1]) {
    return make_error("linear: input " + shape_string(input.sizes) + " does not match weight " + shape_string(weight.sizes));
  }
  std::vector<int64_t> shape = input.sizes;
  shape.back() = weight.sizes[0];
  LATHE_RETURN_IF_ERROR(check_out(out, input.dtype, shape, "linear"));
  const int64_t K = weight.sizes[1], N = weight.sizes[0], M = input.numel() / std::max<int64_t>(K, 1);
  // The input as [M, K]: a view when its layout allows, else a copy.
  Tensor x2 = input;
  if (auto st = view_strides(input, {M, K})) {
    x2 = make_view(input, {M, K}, *st, input.storage_offset);
  } else {
    x2 = contiguous_copy(input);
    x2.sizes = {M, K};
    x2.strides = {K, 1};
  }
  const MatView wt{weight.data(), weight.strides[1], weight.strides[0]};  // W^T as [K, N]
  if (bias) {
    LATHE_RETURN_IF_ERROR(check_input(*bias, "linear", "bias"));
    LATHE_RETURN_IF_ERROR(check_dtype(*bias, input.dtype, "linear", "bias"));
  }
  // A float [N] bias is the GEMM's epilogue; any other broadcastable one a
  // second pass.
  if (input.dtype == DType::Float32 && bias && bias->sizes == std::vector<int64_t>{N}) {
    const Tensor b = as_contiguous(*bias);
    gemm_f32(M, N, K, mat(x2, 0, 1), wt, mdata<float>(out), N, cdata<float>(b));
    return Status::Ok();
  }
  LATHE_RETURN_IF_ERROR(gemm_typed(input.dtype, M, N, K, mat(x2, 0, 1), wt,
                                   out.storage->mutable_data() + out.storage_offset * static_cast<int64_t>(dtype_size(out.dtype))));
  if (!bias) return Status::Ok();
  return scale_add(*bias, Scalar::from_int(1), Scalar::from_int(1), out, "linear");
}

// ---- adapters ------------------------------------------------------------------
namespace {

// mm / bmm (`rank` 2 / 3): self @ mat2.
template <size_t kRank>
Status mm_kernel(KernelCall& c) {
  const char* op = kRank == 2 ? "mm" : "bmm";
  LATHE_ASSIGN_OR_RETURN(const Tensor* a, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* b, c.tensor("mat2"));
  LATHE_RETURN_IF_ERROR(check_mm_operands(*a, *b, kRank, op));
  std::vector<int64_t> sizes(a->sizes.begin(), a->sizes.end() - 1);
  sizes.push_back(b->sizes.back());
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a->dtype, sizes));
  return kRank == 2 ? mm_out(*a, *b, *out) : bmm_out(*a, *b, *out);
}

// addmm / baddbmm (`rank` 2 / 3): beta * self + alpha * (a @ b).
template <size_t kRank>
Status scaled_mm_kernel(KernelCall& c) {
  const char* op = kRank == 2 ? "addmm" : "baddbmm";
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* a, c.tensor(kRank == 2 ? "mat1" : "batch1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* b, c.tensor(kRank == 2 ? "mat2" : "batch2"));
  LATHE_ASSIGN_OR_RETURN(Scalar beta, c.scalar("beta", Scalar::from_int(1)));
  LATHE_ASSIGN_OR_RETURN(Scalar alpha, c.scalar("alpha", Scalar::from_int(1)));
  LATHE_RETURN_IF_ERROR(check_mm_operands(*a, *b, kRank, op));
  std::vector<int64_t> sizes(a->sizes.begin(), a->sizes.end() - 1);
  sizes.push_back(b->sizes.back());
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a->dtype, sizes));
  return kRank == 2 ? addmm_out(*self, *a, *b, beta, alpha, *out) : baddbmm_out(*self, *a, *b, beta, alpha, *out);
}

Status matmul_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* a, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* b, c.tensor("other"));
  LATHE_ASSIGN_OR_RETURN(auto shape, matmul_shape(*a, *b));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a->dtype, shape));
  return matmul_out(*a, *b, *out);
}

Status linear_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  if (w->sizes.size() != 2 || x->sizes.empty()) {
    return make_error("linear: input " + shape_string(x->sizes) + " and weight " + shape_string(w->sizes) + " do not fit");
  }
  std::vector<int64_t> shape = x->sizes;
  shape.back() = w->sizes[0];
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x->dtype, shape));
  return linear_out(*x, *w, bias, *out);
}

}  // namespace

void register_matmul_kernels(KernelRegistry& r) {
  register_overloads(r, "mm", {"default"}, mm_kernel<2>);
  register_overloads(r, "addmm", {"default"}, scaled_mm_kernel<2>);
  register_overloads(r, "bmm", {"default"}, mm_kernel<3>);
  register_overloads(r, "baddbmm", {"default"}, scaled_mm_kernel<3>);
  register_overloads(r, "matmul", {"default"}, matmul_kernel);
  register_overloads(r, "linear", {"default"}, linear_kernel);
}

}  // namespace lathe::kernels
