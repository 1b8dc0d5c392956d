#include "lathe/runtime/kernels/reduce.h"

#include <cmath>
#include <limits>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

struct ReducePlan {
  std::vector<int64_t> out_shape;
  std::vector<int64_t> kept_sizes, kept_strides;  // input strides of kept dims
  std::vector<int64_t> red_sizes, red_strides;    // input strides of reduced dims (coalesced)
  int64_t red_numel = 1;
};

Result<ReducePlan> plan_reduce(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, bool keepdim) {
  const int64_t r = static_cast<int64_t>(in.sizes.size());
  std::vector<bool> reduced(r, dims == std::nullopt || dims->empty());
  if (dims) {
    for (int64_t d : *dims) {
      LATHE_ASSIGN_OR_RETURN(int64_t nd, normalize_dim(d, r));
      if (r > 0) {
        if (reduced[nd] && !dims->empty() && std::count(dims->begin(), dims->end(), d) > 1) {
          return make_error("reduction: dim " + std::to_string(d) + " appears more than once");
        }
        reduced[nd] = true;
      }
    }
  }
  ReducePlan p;
  for (int64_t d = 0; d < r; ++d) {
    if (reduced[d]) {
      p.red_sizes.push_back(in.sizes[d]);
      p.red_strides.push_back(in.strides[d]);
      p.red_numel *= in.sizes[d];
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.kept_sizes.push_back(in.sizes[d]);
      p.kept_strides.push_back(in.strides[d]);
      p.out_shape.push_back(in.sizes[d]);
    }
  }
  if (p.red_sizes.empty()) {
    p.red_sizes = {1};
    p.red_strides = {0};
  }
  return p;
}

// Calls fn(out_index, base_offset) for each output element in row-major
// order, then visit(base, g) over the reduced elements with g(offset).
template <typename F>
void for_each_output(const ReducePlan& p, F&& fn) {
  const int64_t n = numel_of(p.kept_sizes);
  std::vector<int64_t> ctr(p.kept_sizes.size(), 0);
  int64_t base = 0;
  for (int64_t o = 0; o < n; ++o) {
    fn(o, base);
    for (size_t d = ctr.size(); d-- > 0;) {
      base += p.kept_strides[d];
      if (++ctr[d] < p.kept_sizes[d]) break;
      base -= p.kept_strides[d] * p.kept_sizes[d];
      ctr[d] = 0;
    }
  }
}

template <typename G>
void for_each_reduced(const ReducePlan& p, int64_t base, G&& g) {
  if (p.red_numel == 0) return;
  const size_t k = p.red_sizes.size();
  const int64_t inner = p.red_sizes[k - 1], inner_stride = p.red_strides[k - 1];
  std::vector<int64_t> ctr(k, 0);
  int64_t off = base;
  for (;;) {
    for (int64_t i = 0; i < inner; ++i) g(off + i * inner_stride);
    size_t d = k - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      off += p.red_strides[d];
      if (++ctr[d] < p.red_sizes[d]) break;
      off -= p.red_strides[d] * p.red_sizes[d];
      ctr[d] = 0;
    }
  }
}

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

}  // namespace

Result<std::vector<int64_t>> reduce_shape(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, bool keepdim) {
  LATHE_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(in, dims, keepdim));
  return p.out_shape;
}

Status reduce_out(ReduceOp op, const Tensor& in_raw, const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                  Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "reduction", "self"));
  LATHE_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(in_raw, dims, keepdim));
  const bool boolean = op == ReduceOp::Any || op == ReduceOp::All;
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, p.out_shape, "reduction"));
  if (boolean && out.dtype != DType::Bool) return make_error("any/all: out must be bool");
  if ((op == ReduceOp::Amax || op == ReduceOp::Amin) && p.red_numel == 0 && numel_of(p.kept_sizes) > 0) {
    return make_error("amax/amin: cannot reduce over a zero-size dimension");
  }
  if (op == ReduceOp::Mean && is_integral(out.dtype, true)) return make_error("mean: needs a floating dtype");
  // Sum and mean compute in out's dtype (the dtype argument casts first).
  const bool casts = op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Prod;
  const Tensor in = casts ? as_dtype(in_raw, out.dtype) : in_raw;
  if (boolean) {
    return dispatch<Types::All>(in.dtype, "any/all", [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* x = cdata<T>(in);
      bool* o = mdata<bool>(out);
      const bool any = op == ReduceOp::Any;
      for_each_output(p, [&](int64_t oi, int64_t base) {
        bool v = !any;
        for_each_reduced(p, base, [&](int64_t off) {
          if (any) v = v || x[off] != T(0);
          else v = v && x[off] != T(0);
        });
        o[oi] = v;
      });
      return Status::Ok();
    });
  }
  return dispatch<Types::All>(in.dtype, "reduction", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(in);
    if (op == ReduceOp::Amax || op == ReduceOp::Amin) {
      if (out.dtype != in.dtype) return make_error("amax/amin: out dtype must match");
      T* o = mdata<T>(out);
      const bool mx = op == ReduceOp::Amax;
      for_each_output(p, [&](int64_t oi, int64_t base) {
        bool first = true, nan = false;
        T best{};
        for_each_reduced(p, base, [&](int64_t off) {
          const T v = x[off];
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(v)) nan = true;
          }
          if (first || (mx ? v > best : v < best)) best = v;
          first = false;
        });
        if constexpr (std::is_floating_point_v<T>) {
          if (nan) best = std::numeric_limits<T>::quiet_NaN();
        }
        o[oi] = best;
      });
      return Status::Ok();
    }
    if constexpr (std::is_same_v<T, bool>) {
      return make_error("sum/mean/prod of bool tensors needs an integer or floating dtype");
    } else {
      T* o = mdata<T>(out);
      if (op == ReduceOp::Prod) {
        for_each_output(p, [&](int64_t oi, int64_t base) {
          acc_t<T> v = 1;  // integer products wrap in int64, as ATen's do
          for_each_reduced(p, base, [&](int64_t off) { v = wrapping_mul(v, static_cast<acc_t<T>>(x[off])); });
          o[oi] = static_cast<T>(v);
        });
        return Status::Ok();
      }
      for_each_output(p, [&](int64_t oi, int64_t base) {
        acc_t<T> s = 0;
        // Integer sums wrap in int64, as ATen's do (a signed overflow is undefined in C++).
        for_each_reduced(p, base, [&](int64_t off) { s = wrapping_add(s, static_cast<acc_t<T>>(x[off])); });
        if (op == ReduceOp::Mean) {
          o[oi] = static_cast<T>(static_cast<double>(s) / static_cast<double>(p.red_numel));
        } else {
          o[oi] = static_cast<T>(s);
        }
      });
      return Status::Ok();
    }
  });
}

Status max_min_dim_out(bool is_max, const Tensor& in, int64_t dim, bool keepdim, Tensor& values, Tensor& indices) {
  LATHE_RETURN_IF_ERROR(check_input(in, is_max ? "max" : "min", "self"));
  LATHE_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(in, std::vector<int64_t>{dim}, keepdim));
  if (p.red_numel == 0) return make_error("max/min: cannot reduce over a zero-size dimension");
  LATHE_RETURN_IF_ERROR(check_out(values, in.dtype, p.out_shape, "max/min"));
  LATHE_RETURN_IF_ERROR(check_out(indices, DType::Int64, p.out_shape, "max/min"));
  return dispatch<Types::All>(in.dtype, "max/min", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(in);
    T* ov = mdata<T>(values);
    int64_t* oi = mdata<int64_t>(indices);
    for_each_output(p, [&](int64_t o, int64_t base) {
      int64_t k = 0, best_k = 0;
      T best{};
      bool done = false;
      for_each_reduced(p, base, [&](int64_t off) {
        const T v = x[off];
        if (!done) {
          bool better = k == 0 || (is_max ? v > best : v < best);
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(v)) {
              better = true;
              done = true;  // the first NaN wins, as in ATen
            }
          }
          if (better) {
            best = v;
            best_k = k;
          }
        }
        ++k;
      });
      ov[o] = best;
      oi[o] = best_k;
    });
    return Status::Ok();
  });
}

Status var_mean_out(const Tensor& in, const std::optional<std::vector<int64_t>>& dims, double correction, bool keepdim,
                    Tensor& var, Tensor* mean) {
  LATHE_RETURN_IF_ERROR(check_input(in, "var", "self"));
  LATHE_RETURN_IF_ERROR(check_floating(in, "var", "self"));
  LATHE_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(in, dims, keepdim));
  LATHE_RETURN_IF_ERROR(check_out(var, in.dtype, p.out_shape, "var"));
  if (mean) LATHE_RETURN_IF_ERROR(check_out(*mean, in.dtype, p.out_shape, "var_mean"));
  return dispatch<Types::Float>(in.dtype, "var", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(in);
    T* ov = mdata<T>(var);
    T* om = mean ? mdata<T>(*mean) : nullptr;
    const double n = static_cast<double>(p.red_numel);
    for_each_output(p, [&](int64_t o, int64_t base) {
      double s = 0;
      for_each_reduced(p, base, [&](int64_t off) { s += x[off]; });
      const double m = s / n;
      double ss = 0;
      for_each_reduced(p, base, [&](int64_t off) { ss += (x[off] - m) * (x[off] - m); });
      const double denom = std::max(0.0, n - correction);
      ov[o] = static_cast<T>(denom > 0 ? ss / denom : std::numeric_limits<double>::quiet_NaN());
      if (om) om[o] = static_cast<T>(m);
    });
    return Status::Ok();
  });
}

Status vector_norm_out(const Tensor& in_raw, double ord, const std::optional<std::vector<int64_t>>& dims, bool keepdim,
                       Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "vector_norm", "self"));
  LATHE_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(in_raw, dims, keepdim));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, p.out_shape, "vector_norm"));
  if (std::isinf(ord) && p.red_numel == 0 && numel_of(p.kept_sizes) > 0) {
    return make_error("vector_norm: ord=inf/-inf cannot reduce over a zero-size dimension");
  }
  const Tensor in = as_dtype(in_raw, out.dtype);
  return dispatch<Types::Float>(out.dtype, "vector_norm", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(in);
    T* o = mdata<T>(out);
    for_each_output(p, [&](int64_t oi, int64_t base) {
      double acc = ord == -INFINITY ? INFINITY : 0.0;
      bool nan = false;
      for_each_reduced(p, base, [&](int64_t off) {
        const double a = std::fabs(static_cast<double>(x[off]));
        if (std::isnan(a)) nan = true;
        if (ord == INFINITY) acc = std::max(acc, a);
        else if (ord == -INFINITY) acc = std::min(acc, a);
        else if (ord == 0.0) acc += a != 0.0 ? 1.0 : 0.0;
        else if (ord == 1.0) acc += a;
        else if (ord == 2.0) acc += a * a;
        else acc += std::pow(a, ord);
      });
      if (ord == 2.0) acc = std::sqrt(acc);
      else if (!std::isinf(ord) && ord != 0.0 && ord != 1.0) acc = std::pow(acc, 1.0 / ord);
      if (nan && ord != 0.0) acc = std::numeric_limits<double>::quiet_NaN();  // ord 0 counts NaN as non-zero
      o[oi] = static_cast<T>(acc);
    });
    return Status::Ok();
  });
}

Status logsumexp_out(const Tensor& in_raw, const std::vector<int64_t>& dims, bool keepdim, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "logsumexp", "self"));
  LATHE_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(in_raw, dims, keepdim));
  LATHE_RETURN_IF_ERROR(check_out(out, out.dtype, p.out_shape, "logsumexp"));
  const Tensor in = as_dtype(in_raw, out.dtype);
  return dispatch<Types::Float>(out.dtype, "logsumexp", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* x = cdata<T>(in);
    T* o = mdata<T>(out);
    for_each_output(p, [&](int64_t oi, int64_t base) {
      double mx = -INFINITY;
      for_each_reduced(p, base, [&](int64_t off) { mx = std::max(mx, static_cast<double>(x[off])); });
      if (std::isinf(mx)) mx = 0.0;
      double s = 0.0;
      for_each_reduced(p, base, [&](int64_t off) { s += std::exp(static_cast<double>(x[off]) - mx); });
      o[oi] = static_cast<T>(std::log(s) + mx);
    });
    return Status::Ok();
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

DType sum_dtype(DType in) { return is_integral(in, true) ? DType::Int64 : in; }

template <ReduceOp op>
Status reduce_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto dims, c.optional_int_list("dim"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  DType dt = self->dtype;
  if constexpr (op == ReduceOp::Sum || op == ReduceOp::Mean) {
    LATHE_ASSIGN_OR_RETURN(auto requested, c.dtype_arg("dtype"));
    dt = requested ? *requested : (op == ReduceOp::Sum ? sum_dtype(self->dtype) : self->dtype);
  } else if constexpr (op == ReduceOp::Any || op == ReduceOp::All) {
    dt = DType::Bool;
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(*self, dims, keepdim));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, shape));
  return reduce_out(op, *self, dims, keepdim, *out);
}

// prod.default / prod.dim_int: int and bool inputs give int64 unless
// `dtype` says otherwise.
Status prod_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  std::optional<std::vector<int64_t>> dims;
  if (c.has("dim")) {
    LATHE_ASSIGN_OR_RETURN(int64_t d, c.int_arg("dim"));
    dims = std::vector<int64_t>{d};
  }
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  LATHE_ASSIGN_OR_RETURN(auto requested, c.dtype_arg("dtype"));
  const DType dt = requested ? *requested : sum_dtype(self->dtype);
  if (dt == DType::Bool) return c.arg_error("dtype", "prod into bool is not supported");
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(*self, dims, keepdim && dims.has_value()));
  if (!dims && keepdim) shape.assign(self->sizes.size(), 1);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, shape));
  return reduce_out(ReduceOp::Prod, *self, dims, keepdim, *out);
}

// linalg_vector_norm (ord, dim?, keepdim, dtype?) and norm.ScalarOpt_dim
// (p?, dim, keepdim): floating inputs only, as in ATen.
Status vector_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  const bool linalg = c.node().target().find("linalg_vector_norm") != std::string::npos;
  LATHE_ASSIGN_OR_RETURN(auto ord_s, c.optional_scalar(linalg ? "ord" : "p"));
  const double ord = ord_s ? ord_s->to_double() : 2.0;
  LATHE_ASSIGN_OR_RETURN(auto dims, c.optional_int_list("dim"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  LATHE_ASSIGN_OR_RETURN(auto requested, c.dtype_arg("dtype"));
  if (is_integral(self->dtype, true)) {
    return c.arg_error("self", "must be floating, got " + std::string(dtype_name(self->dtype)));
  }
  const DType dt = requested ? *requested : self->dtype;
  if (is_integral(dt, true)) return c.arg_error("dtype", "must be floating");
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(*self, dims, keepdim));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, shape));
  return vector_norm_out(*self, ord, dims, keepdim, *out);
}

// logsumexp(self, dim, keepdim): integer inputs give float32.
Status logsumexp_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto dims, c.int_list("dim"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  const DType dt = is_integral(self->dtype, true) ? DType::Float32 : self->dtype;
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(*self, dims, keepdim));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, shape));
  return logsumexp_out(*self, dims, keepdim, *out);
}

template <bool is_max>
Status max_min_dim_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(*self, std::vector<int64_t>{dim}, keepdim));
  LATHE_ASSIGN_OR_RETURN(Tensor * v, c.alloc_output(0, self->dtype, shape));
  LATHE_ASSIGN_OR_RETURN(Tensor * i, c.alloc_output(1, DType::Int64, shape));
  return max_min_dim_out(is_max, *self, dim, keepdim, *v, *i);
}

template <bool is_max>
Status argmax_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto dim, c.optional_int("dim"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  Tensor in = *self;
  int64_t d = dim.value_or(0);
  if (!dim) {  // over the flattened tensor
    in = as_contiguous(*self);
    in.sizes = {self->numel()};
    in.strides = {1};
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(in, std::vector<int64_t>{d}, keepdim && dim.has_value()));
  if (!dim && keepdim) shape.assign(self->sizes.size(), 1);
  Tensor values = Tensor::empty(in.dtype, shape);
  LATHE_ASSIGN_OR_RETURN(Tensor * idx, c.alloc_output(0, DType::Int64, shape));
  Tensor idx_view = *idx;
  Tensor values_view = values;
  if (!dim && keepdim) {  // reduce as 1-D, then the keepdim shape
    idx_view = make_view(*idx, {}, {}, idx->storage_offset);
    values_view = make_view(values, {}, {}, 0);
  }
  return max_min_dim_out(is_max, in, d, keepdim && dim.has_value(), values_view, idx_view);
}

template <bool is_max>
Status max_min_all_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  if (self->numel() == 0) return make_error("max/min of an empty tensor");
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, {}));
  return reduce_out(is_max ? ReduceOp::Amax : ReduceOp::Amin, *self, std::nullopt, false, *out);
}

Status var_kernel_impl(KernelCall& c, bool with_mean, bool take_sqrt = false) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(auto dims, c.optional_int_list("dim"));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  double correction = 1.0;
  if (c.has("correction")) {
    LATHE_ASSIGN_OR_RETURN(correction, c.double_arg("correction"));
  } else if (c.has("unbiased")) {
    LATHE_ASSIGN_OR_RETURN(bool unbiased, c.bool_arg("unbiased"));
    correction = unbiased ? 1.0 : 0.0;
  }
  LATHE_ASSIGN_OR_RETURN(auto shape, reduce_shape(*self, dims, keepdim));
  LATHE_ASSIGN_OR_RETURN(Tensor * var, c.alloc_output(0, self->dtype, shape));
  Tensor* mean = nullptr;
  if (with_mean) {
    LATHE_ASSIGN_OR_RETURN(mean, c.alloc_output(1, self->dtype, shape));
  }
  // alloc_output(1) may not move output 0: slots are stable.
  LATHE_RETURN_IF_ERROR(var_mean_out(*self, dims, correction, keepdim, *var, mean));
  if (!take_sqrt) return Status::Ok();
  return dispatch<Types::Float>(var->dtype, "std", [&](auto tag) -> Status {  // std = sqrt(var), in place
    using T = decltype(tag);
    T* v = mdata<T>(*var);
    for (int64_t i = 0; i < var->numel(); ++i) v[i] = std::sqrt(v[i]);
    return Status::Ok();
  });
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  register_overloads(r, "sum", {"dim_IntList", "default"}, reduce_kernel<ReduceOp::Sum>);
  register_overloads(r, "mean", {"dim", "default"}, reduce_kernel<ReduceOp::Mean>);
  register_overloads(r, "amax", {"default"}, reduce_kernel<ReduceOp::Amax>);
  register_overloads(r, "amin", {"default"}, reduce_kernel<ReduceOp::Amin>);
  register_overloads(r, "any", {"dim", "dims", "default"}, reduce_kernel<ReduceOp::Any>);
  register_overloads(r, "all", {"dim", "dims", "default"}, reduce_kernel<ReduceOp::All>);
  register_overloads(r, "max", {"dim"}, max_min_dim_kernel<true>);
  register_overloads(r, "min", {"dim"}, max_min_dim_kernel<false>);
  register_overloads(r, "max", {"default"}, max_min_all_kernel<true>);
  register_overloads(r, "min", {"default"}, max_min_all_kernel<false>);
  register_overloads(r, "argmax", {"default"}, argmax_kernel<true>);
  register_overloads(r, "argmin", {"default"}, argmax_kernel<false>);
  register_overloads(r, "var", {"correction", "dim"}, [](KernelCall& c) { return var_kernel_impl(c, false); });
  register_overloads(r, "std", {"correction", "dim"}, [](KernelCall& c) { return var_kernel_impl(c, false, true); });
  register_overloads(r, "prod", {"default", "dim_int"}, prod_kernel);
  register_overloads(r, "linalg_vector_norm", {"default"}, vector_norm_kernel);
  register_overloads(r, "norm", {"ScalarOpt_dim"}, vector_norm_kernel);
  register_overloads(r, "logsumexp", {"default"}, logsumexp_kernel);
  register_overloads(r, "var_mean", {"correction", "dim"}, [](KernelCall& c) { return var_kernel_impl(c, true); });
}

}  // namespace lathe::kernels
