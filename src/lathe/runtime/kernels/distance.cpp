// Pairwise p-norm distances. The direct form accumulates |a - b|^p per
// pair; cdist's matrix-product form (torch's fast path for p = 2) computes
// |a|^2 + |b|^2 - 2 a.b, clamped at 0, and is reproduced where torch would
// take it since it rounds differently (notably for near-equal rows).
#include "lathe/runtime/kernels/distance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "lathe/runtime/kernels/register.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe::kernels {

namespace {

// Distance between rows a and b of M elements (strides sa, sb).
template <typename T>
T pnorm_distance(const T* a, int64_t sa, const T* b, int64_t sb, int64_t M, T p) {
  T acc = 0;
  if (p == 0) {
    for (int64_t k = 0; k < M; ++k) acc += a[k * sa] != b[k * sb] ? T(1) : T(0);
    return acc;
  }
  if (std::isinf(p)) {
    for (int64_t k = 0; k < M; ++k) acc = std::max(acc, std::fabs(a[k * sa] - b[k * sb]));
    return acc;
  }
  for (int64_t k = 0; k < M; ++k) {
    const T d = std::fabs(a[k * sa] - b[k * sb]);
    acc += p == 1 ? d : p == 2 ? d * d : std::pow(d, p);
  }
  return p == 1 ? acc : p == 2 ? std::sqrt(acc) : std::pow(acc, T(1) / p);
}

template <typename T>
T squared_norm(const T* a, int64_t sa, int64_t M) {
  T acc = 0;
  for (int64_t k = 0; k < M; ++k) acc += a[k * sa] * a[k * sa];
  return acc;
}

// sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)).
template <typename T>
T product_distance(const T* a, int64_t sa, const T* b, int64_t sb, int64_t M, T na, T nb) {
  T acc = 0;
  for (int64_t k = 0; k < M; ++k) acc += T(-2) * a[k * sa] * b[k * sb];
  acc = acc + na + nb;
  return std::sqrt(std::max(acc, T(0)));
}

Status check_p(double p, const char* op) {
  if (!(p >= 0)) return make_error(std::string(op) + ": p must be non-negative, got " + std::to_string(p));
  return Status::Ok();
}

}  // namespace

Result<std::vector<int64_t>> cdist_shape(const Tensor& x1, const Tensor& x2) {
  const size_t r1 = x1.sizes.size(), r2 = x2.sizes.size();
  if (r1 < 2 || r2 < 2) return make_error("_cdist_forward: x1 and x2 must be at least 2-D, got " + shape_string(x1.sizes) + " and " + shape_string(x2.sizes));
  if (x1.sizes[r1 - 1] != x2.sizes[r2 - 1]) {
    return make_error("_cdist_forward: x1 " + shape_string(x1.sizes) + " and x2 " + shape_string(x2.sizes) + " differ in their number of columns");
  }
  LATHE_ASSIGN_OR_RETURN(auto batch, broadcast_shapes(std::vector<int64_t>(x1.sizes.begin(), x1.sizes.end() - 2),
                                                      std::vector<int64_t>(x2.sizes.begin(), x2.sizes.end() - 2)));
  batch.push_back(x1.sizes[r1 - 2]);
  batch.push_back(x2.sizes[r2 - 2]);
  return batch;
}

Status cdist_out(const Tensor& x1_raw, const Tensor& x2_raw, double p, std::optional<int64_t> compute_mode, Tensor& out) {
  const char* op = "_cdist_forward";
  LATHE_RETURN_IF_ERROR(check_input(x1_raw, op, "x1"));
  LATHE_RETURN_IF_ERROR(check_input(x2_raw, op, "x2"));
  LATHE_RETURN_IF_ERROR(check_floating(x1_raw, op, "x1"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(x1_raw, x2_raw, op));
  LATHE_RETURN_IF_ERROR(check_p(p, op));
  const int64_t mode = compute_mode.value_or(0);
  if (mode < 0 || mode > 2) return make_error(std::string(op) + ": compute_mode must be 0, 1 or 2, got " + std::to_string(mode));
  LATHE_ASSIGN_OR_RETURN(auto shape, cdist_shape(x1_raw, x2_raw));
  LATHE_RETURN_IF_ERROR(check_out(out, x1_raw.dtype, shape, op));
  const size_t r = shape.size();
  const int64_t P = shape[r - 2], R = shape[r - 1], M = x1_raw.sizes.back();
  // Both inputs as [batch..., rows, M] views (stride 0 on broadcast dims).
  std::vector<int64_t> s1(shape.begin(), shape.end() - 1), s2(shape.begin(), shape.end() - 2);
  s1.push_back(M);
  s2.push_back(R);
  s2.push_back(M);
  LATHE_ASSIGN_OR_RETURN(Tensor x1, expand_view(x1_raw, s1));
  LATHE_ASSIGN_OR_RETURN(Tensor x2, expand_view(x2_raw, s2));
  const bool product = p == 2 && (mode == 1 || (mode == 0 && (P > 25 || R > 25)));
  const int64_t batches = numel_of(std::vector<int64_t>(shape.begin(), shape.end() - 2));
  return dispatch<Types::Float>(x1.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    T* y = mdata<T>(out);
    std::vector<int64_t> pos(r - 2, 0);
    std::vector<T> n2(static_cast<size_t>(R));
    for (int64_t b = 0; b < batches; ++b) {
      const T* a = cdata<T>(x1);
      const T* c = cdata<T>(x2);
      for (size_t i = 0; i < r - 2; ++i) {
        a += pos[i] * x1.strides[i];
        c += pos[i] * x2.strides[i];
      }
      const int64_t ra = x1.strides[r - 2], ka = x1.strides[r - 1], rc = x2.strides[r - 2], kc = x2.strides[r - 1];
      if (product) {
        for (int64_t j = 0; j < R; ++j) n2[j] = squared_norm(c + j * rc, kc, M);
      }
      for (int64_t i = 0; i < P; ++i) {
        const T n1 = product ? squared_norm(a + i * ra, ka, M) : T(0);
        for (int64_t j = 0; j < R; ++j) {
          *y++ = product ? product_distance(a + i * ra, ka, c + j * rc, kc, M, n1, n2[j])
                         : pnorm_distance(a + i * ra, ka, c + j * rc, kc, M, static_cast<T>(p));
        }
      }
      for (size_t i = r - 2; i-- > 0;) {
        if (++pos[i] < shape[i]) break;
        pos[i] = 0;
      }
    }
    return Status::Ok();
  });
}

Status pdist_out(const Tensor& self, double p, Tensor& out) {
  const char* op = "_pdist_forward";
  LATHE_RETURN_IF_ERROR(check_input(self, op, "self"));
  LATHE_RETURN_IF_ERROR(check_floating(self, op, "self"));
  LATHE_RETURN_IF_ERROR(check_p(p, op));
  if (self.sizes.size() != 2) return make_error(std::string(op) + ": self must be 2-D, got " + shape_string(self.sizes));
  const int64_t N = self.sizes[0], M = self.sizes[1];
  LATHE_RETURN_IF_ERROR(check_out(out, self.dtype, {N >= 1 ? N * (N - 1) / 2 : 0}, op));
  return dispatch<Types::Float>(self.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(self);
    T* y = mdata<T>(out);
    const int64_t rs = self.strides[0], ks = self.strides[1];
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = i + 1; j < N; ++j) *y++ = pnorm_distance(x + i * rs, ks, x + j * rs, ks, M, static_cast<T>(p));
    return Status::Ok();
  });
}

namespace {

Status cdist_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x1, c.tensor("x1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* x2, c.tensor("x2"));
  LATHE_ASSIGN_OR_RETURN(double p, c.double_arg("p"));
  LATHE_ASSIGN_OR_RETURN(auto mode, c.optional_int("compute_mode"));
  LATHE_ASSIGN_OR_RETURN(auto shape, cdist_shape(*x1, *x2));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x1->dtype, shape));
  return cdist_out(*x1, *x2, p, mode, *out);
}

Status pdist_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(double p, c.double_arg("p", 2.0));
  if (self->sizes.size() != 2) return c.arg_error("self", "must be 2-D, got " + shape_string(self->sizes));
  const int64_t N = self->sizes[0];
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, {N >= 1 ? N * (N - 1) / 2 : 0}));
  return pdist_out(*self, p, *out);
}

}  // namespace

void register_distance_kernels(KernelRegistry& r) {
  register_overloads(r, "_cdist_forward", {"default"}, cdist_kernel);
  register_overloads(r, "_pdist_forward", {"default"}, pdist_kernel);
}

}  // namespace lathe::kernels
