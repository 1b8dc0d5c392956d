#include "lathe/backends/xnnpack_host_ops.h"

#include <algorithm>
#include <cmath>

#include "lathe/runtime/kernels/attention.h"
#include "lathe/runtime/kernels/matmul.h"
#include "lathe/runtime/kernels/norm.h"
#include "lathe/runtime/kernels/pad.h"
#include "lathe/runtime/kernels/unary.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe {

namespace {

namespace P = xnnpack_params;
using Sizes = std::vector<int64_t>;

const Sizes& sizes(const PayloadOp& pop, const std::vector<PayloadValue>& values, size_t k) {
  return values[pop.inputs[k].value].sizes;
}

int64_t numel(const Sizes& s) { return PayloadValue{-1, s}.numel(); }

// ---- shape checks, one per op, on parsed parameters ----
// `x` is the first operand's sizes, `y` the output's.

Status check(const P::LayerNorm& p, const Sizes& x, const Sizes& y) {
  if (p.normalized_rank > static_cast<int64_t>(x.size())) return make_error("parameters");
  if (x != y) return make_error("output shape");
  return Status::Ok();
}

Status check(const P::Gelu&, const Sizes& x, const Sizes& y) {
  if (numel(x) != numel(y)) return make_error("output shape");
  return Status::Ok();
}

Status check(const P::Permute& p, const Sizes& x, const Sizes& y) {
  if (p.dims.size() != x.size() || y.size() != x.size()) return make_error("dims");
  std::vector<bool> used(x.size(), false);
  for (size_t d = 0; d < p.dims.size(); ++d) {
    const int64_t from = p.dims[d];
    if (from < 0 || from >= static_cast<int64_t>(x.size()) || used[from] || y[d] != x[from]) return make_error("dims");
    used[from] = true;
  }
  return Status::Ok();
}

Status check(const P::Roll& p, const Sizes& x, const Sizes& y) {
  if (x != y) return make_error("parameters");
  for (int64_t d : p.dims) {
    if (d < -static_cast<int64_t>(x.size()) || d >= static_cast<int64_t>(x.size())) return make_error("dims");
  }
  return Status::Ok();
}

Status check_bmm(const Sizes& x, const Sizes& w, const Sizes& y) {
  if (x.size() != 3 || w.size() != 3 || x[0] != w[0] || x[2] != w[1] || y != Sizes{x[0], x[1], w[2]})
    return make_error("shapes");
  return Status::Ok();
}

Status check_sdpa(const Sizes& q, const Sizes& k, const Sizes& v, const Sizes& y, bool gqa) {
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size() || k.back() != q.back() ||
      k[k.size() - 2] != v[v.size() - 2])
    return make_error("shapes");
  if (gqa && (q.size() < 3 || k[k.size() - 3] <= 0 || k[k.size() - 3] != v[v.size() - 3] ||
              q[q.size() - 3] % k[k.size() - 3] != 0))
    return make_error("grouped heads");
  Sizes want(q.begin(), q.end() - 1);
  want.push_back(v.back());
  if (y != want) return make_error("output shape");
  return Status::Ok();
}

Status check(const P::Concat& p, const PayloadOp& pop, const std::vector<PayloadValue>& values, const Sizes& y) {
  int64_t row = 0;
  for (size_t k = 0; k < pop.inputs.size(); ++k) {
    const int64_t n = numel(sizes(pop, values, k));
    if (n % p.outer != 0) return make_error("input " + std::to_string(k) + " is not " + std::to_string(p.outer) + " rows");
    row += n / p.outer;
  }
  if (row * p.outer != numel(y)) return make_error("element counts");
  return Status::Ok();
}

Status check(const P::Slice& p, const Sizes& x, const Sizes& y) {
  if (p.outer * p.row_in != numel(x) || p.outer * p.row_out != numel(y) || p.offset + p.row_out > p.row_in)
    return make_error("extents");
  return Status::Ok();
}

Status check(const P::ChannelAffine& p, const PayloadOp& pop, const std::vector<PayloadValue>& values, const Sizes& x,
             const Sizes& y) {
  if (p.batch * p.channels * p.spatial != numel(x) || x != y) return make_error("shapes");
  for (size_t k = 1; k < 5; ++k) {
    if (numel(sizes(pop, values, k)) != p.channels) return make_error("per-channel operand " + std::to_string(k));
  }
  return Status::Ok();
}

// Parses the record, then checks it against the operands' shapes.
Result<HostOpCall> parse_and_check(HostOp op, const PayloadOp& pop, const std::vector<PayloadValue>& values) {
  const Sizes& x = sizes(pop, values, 0);
  const Sizes& y = values[pop.outputs[0]].sizes;
  const P::HostRecord r{pop.ints, pop.floats};
  auto done = [&](auto params, Status s) -> Result<HostOpCall> {
    LATHE_RETURN_IF_ERROR(s);
    return HostOpCall{op, std::move(params)};
  };
  switch (op) {
    case HostOp::LayerNorm: {
      LATHE_ASSIGN_OR_RETURN(P::LayerNorm p, P::parse_layer_norm(r));
      return done(p, check(p, x, y));
    }
    case HostOp::Gelu: {
      LATHE_ASSIGN_OR_RETURN(P::Gelu p, P::parse_gelu(r));
      return done(p, check(p, x, y));
    }
    case HostOp::Permute: {
      LATHE_ASSIGN_OR_RETURN(P::Permute p, P::parse_permute(r));
      return done(p, check(p, x, y));
    }
    case HostOp::Reshape:
      return done(std::monostate{}, numel(x) == numel(y) ? Status::Ok() : make_error("element counts"));
    case HostOp::Roll: {
      LATHE_ASSIGN_OR_RETURN(P::Roll p, P::parse_roll(r));
      return done(p, check(p, x, y));
    }
    case HostOp::Bmm: return done(std::monostate{}, check_bmm(x, sizes(pop, values, 1), y));
    case HostOp::Sdpa: {
      LATHE_ASSIGN_OR_RETURN(P::Sdpa p, P::parse_sdpa(r));
      return done(p, check_sdpa(x, sizes(pop, values, 1), sizes(pop, values, 2), y, p.enable_gqa));
    }
    case HostOp::Concat: {
      LATHE_ASSIGN_OR_RETURN(P::Concat p, P::parse_concat(r));
      return done(p, check(p, pop, values, y));
    }
    case HostOp::Slice: {
      LATHE_ASSIGN_OR_RETURN(P::Slice p, P::parse_slice(r));
      return done(p, check(p, x, y));
    }
    case HostOp::ChannelAffine: {
      LATHE_ASSIGN_OR_RETURN(P::ChannelAffine p, P::parse_channel_affine(r));
      return done(p, check(p, pop, values, x, y));
    }
  }
  return make_error("unknown host op");
}

size_t min_operands(HostOp op) {
  switch (op) {
    case HostOp::Bmm: return 2;
    case HostOp::Sdpa: return 3;
    case HostOp::ChannelAffine: return 5;
    default: return 1;
  }
}
size_t max_operands(HostOp op) {
  switch (op) {
    case HostOp::LayerNorm: return 3;
    case HostOp::Sdpa: return 4;
    case HostOp::Concat: return 1 << 16;
    default: return min_operands(op);
  }
}

// ---- running ----

const Tensor* role(const PayloadOp& pop, const std::vector<const Tensor*>& in, std::string_view name) {
  for (size_t k = 0; k < pop.inputs.size(); ++k) {
    if (pop.inputs[k].role == name) return in[k];
  }
  return nullptr;
}

const float* floats(const Tensor& t) { return kernels::cdata<float>(t); }

Status concat(const P::Concat& p, const std::vector<const Tensor*>& in, Tensor& out) {
  float* y = kernels::mdata<float>(out);
  const int64_t row_out = out.numel() / p.outer;
  int64_t at = 0;
  for (const Tensor* t : in) {
    const int64_t row = t->numel() / p.outer;
    const float* x = floats(*t);
    for (int64_t o = 0; o < p.outer; ++o) std::copy(x + o * row, x + (o + 1) * row, y + o * row_out + at);
    at += row;
  }
  return Status::Ok();
}

Status slice(const P::Slice& p, const Tensor& in, Tensor& out) {
  const float* x = floats(in);
  float* y = kernels::mdata<float>(out);
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* from = x + o * p.row_in + p.offset;
    std::copy(from, from + p.row_out, y + o * p.row_out);
  }
  return Status::Ok();
}

// y = x * alpha[c] + beta[c], with alpha and beta folded in float as the
// portable batch norm (ATen's inference form) folds them.
Status channel_affine(const P::ChannelAffine& p, const std::vector<const Tensor*>& in, Tensor& out) {
  const bool last = p.channels_last;
  const int64_t N = p.batch, C = p.channels, S = p.spatial;
  const float *gamma = floats(*in[1]), *beta = floats(*in[2]), *mean = floats(*in[3]), *var = floats(*in[4]);
  std::vector<float> scale(C), shift(C);
  for (int64_t c = 0; c < C; ++c) {
    const float invstd = 1.0f / std::sqrt(var[c] + static_cast<float>(p.eps));
    scale[c] = gamma[c] * invstd;
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  const float* x = floats(*in[0]);
  float* y = kernels::mdata<float>(out);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t a = 0; a < (last ? S : C); ++a) {
      for (int64_t b = 0; b < (last ? C : S); ++b) {
        const int64_t c = last ? b : a;
        const int64_t i = (n * (last ? S : C) + a) * (last ? C : S) + b;
        y[i] = x[i] * scale[c] + shift[c];
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<HostOpCall> check_host_op(HostOp op, const PayloadOp& pop, const std::vector<PayloadValue>& values) {
  const std::string who = pop.kind + " '" + pop.node + "': malformed payload op (";
  if (pop.outputs.size() != 1 || pop.inputs.size() < min_operands(op) || pop.inputs.size() > max_operands(op)) {
    return make_error(who + "operand counts)");
  }
  auto call = parse_and_check(op, pop, values);
  if (!call.ok()) return make_error(who + call.error().message() + ")");
  return call;
}

Status run_host_op(const HostOpCall& call, const PayloadOp& pop, const std::vector<const Tensor*>& in, Tensor& out) {
  const Tensor& x = *in[0];
  switch (call.op) {
    case HostOp::LayerNorm: {
      const auto& p = std::get<P::LayerNorm>(call.params);
      std::vector<int64_t> normalized(x.sizes.end() - p.normalized_rank, x.sizes.end());
      return kernels::layer_norm_out(x, normalized, role(pop, in, "weight"), role(pop, in, "bias"), p.eps, out, nullptr,
                                     nullptr);
    }
    case HostOp::Gelu:
      return kernels::unary_out(std::get<P::Gelu>(call.params).tanh ? kernels::UnaryOp::GeluTanh : kernels::UnaryOp::Gelu,
                                x, out);
    case HostOp::Permute: {
      LATHE_ASSIGN_OR_RETURN(Tensor view, kernels::permute_view(x, std::get<P::Permute>(call.params).dims));
      return kernels::copy_into(view, out);
    }
    case HostOp::Reshape: {
      LATHE_ASSIGN_OR_RETURN(Tensor view, kernels::view_view(x, out.sizes));
      return kernels::copy_into(view, out);
    }
    case HostOp::Roll: {
      const auto& p = std::get<P::Roll>(call.params);
      return kernels::roll_out(x, p.shifts, p.dims, out);
    }
    case HostOp::Bmm: return kernels::bmm_out(x, *in[1], out);
    case HostOp::Sdpa: {
      const auto& p = std::get<P::Sdpa>(call.params);
      kernels::SdpaArgs a{in[0], in[1], in[2], in.size() > 3 ? in[3] : nullptr, 0.0, p.causal, std::nullopt, p.enable_gqa};
      if (!std::isnan(p.scale)) a.scale = p.scale;
      return kernels::sdpa(a, out, nullptr);
    }
    case HostOp::Concat: return concat(std::get<P::Concat>(call.params), in, out);
    case HostOp::Slice: return slice(std::get<P::Slice>(call.params), x, out);
    case HostOp::ChannelAffine: return channel_affine(std::get<P::ChannelAffine>(call.params), in, out);
  }
  return Status::Ok();
}

}  // namespace lathe
