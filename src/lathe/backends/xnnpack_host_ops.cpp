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

std::optional<HostOp> host_op_named(std::string_view kind) {
  static const std::pair<std::string_view, HostOp> table[] = {
      {"layer_norm", HostOp::LayerNorm}, {"gelu", HostOp::Gelu}, {"permute", HostOp::Permute},
      {"reshape", HostOp::Reshape},      {"roll", HostOp::Roll}, {"bmm", HostOp::Bmm},
      {"sdpa", HostOp::Sdpa},           {"concat", HostOp::Concat}, {"slice", HostOp::Slice},
      {"channel_affine", HostOp::ChannelAffine}};
  for (const auto& [name, op] : table) {
    if (kind == name) return op;
  }
  return std::nullopt;
}

namespace {

const std::vector<int64_t>& sizes(const PayloadOp& pop, const std::vector<PayloadValue>& values, size_t k) {
  return values[pop.inputs[k].value].sizes;
}

// Every check that does not need the operand count: it is checked first.
Status check_parameters(HostOp op, const PayloadOp& pop, const std::vector<PayloadValue>& values) {
  const std::vector<int64_t>& x = sizes(pop, values, 0);
  const std::vector<int64_t>& y = values[pop.outputs[0]].sizes;
  const std::vector<int64_t>& I = pop.ints;
  switch (op) {
    case HostOp::LayerNorm:
      if (I.size() != 1 || I[0] < 1 || I[0] > static_cast<int64_t>(x.size()) || pop.floats.size() != 1) return make_error("parameters");
      if (x != y) return make_error("output shape");
      return Status::Ok();
    case HostOp::Gelu:
      if (I.size() != 1 || pop.floats.size() != 0) return make_error("parameters");
      if (PayloadValue{-1, x}.numel() != PayloadValue{-1, y}.numel()) return make_error("output shape");
      return Status::Ok();
    case HostOp::Permute: {
      if (I.size() != x.size() || y.size() != x.size()) return make_error("dims");
      std::vector<bool> used(x.size(), false);
      for (size_t d = 0; d < I.size(); ++d) {
        if (I[d] < 0 || I[d] >= static_cast<int64_t>(x.size()) || used[I[d]] || y[d] != x[I[d]]) return make_error("dims");
        used[I[d]] = true;
      }
      return Status::Ok();
    }
    case HostOp::Reshape:
      if (PayloadValue{-1, x}.numel() != PayloadValue{-1, y}.numel()) return make_error("element counts");
      return Status::Ok();
    case HostOp::Roll: {
      if (I.empty() || I[0] < 0 || I.size() != 1 + 2 * static_cast<size_t>(I[0]) || x != y) return make_error("parameters");
      for (int64_t k = 0; k < I[0]; ++k) {
        const int64_t d = I[1 + I[0] + k];
        if (d < -static_cast<int64_t>(x.size()) || d >= static_cast<int64_t>(x.size())) return make_error("dims");
      }
      if (I[0] == 0) return make_error("parameters");
      return Status::Ok();
    }
    case HostOp::Bmm: {
      const std::vector<int64_t>& w = sizes(pop, values, 1);
      if (x.size() != 3 || w.size() != 3 || x[0] != w[0] || x[2] != w[1] || y != std::vector<int64_t>{x[0], x[1], w[2]})
        return make_error("shapes");
      return Status::Ok();
    }
    case HostOp::Sdpa: {
      if (I.size() != 1 || pop.floats.size() != 1) return make_error("parameters");
      const std::vector<int64_t>& k = sizes(pop, values, 1);
      const std::vector<int64_t>& v = sizes(pop, values, 2);
      if (x.size() < 2 || k.size() != x.size() || v.size() != x.size() || k.back() != x.back() ||
          k[k.size() - 2] != v[v.size() - 2])
        return make_error("shapes");
      std::vector<int64_t> want(x.begin(), x.end() - 1);
      want.push_back(v.back());
      if (y != want) return make_error("output shape");
      return Status::Ok();
    }
    case HostOp::Concat: {
      if (I.size() != 1 || I[0] < 1) return make_error("parameters");
      int64_t row = 0;
      for (size_t k = 0; k < pop.inputs.size(); ++k) {
        const int64_t n = PayloadValue{-1, sizes(pop, values, k)}.numel();
        if (n % I[0] != 0) return make_error("input " + std::to_string(k) + " is not " + std::to_string(I[0]) + " rows");
        row += n / I[0];
      }
      if (row * I[0] != PayloadValue{-1, y}.numel()) return make_error("element counts");
      return Status::Ok();
    }
    case HostOp::Slice: {
      if (I.size() != 4 || std::any_of(I.begin(), I.end(), [](int64_t v) { return v < 0; })) return make_error("parameters");
      if (I[0] * I[1] != PayloadValue{-1, x}.numel() || I[0] * I[3] != PayloadValue{-1, y}.numel() || I[2] + I[3] > I[1])
        return make_error("extents");
      return Status::Ok();
    }
    case HostOp::ChannelAffine: {
      if (I.size() != 4 || pop.floats.size() != 1 || I[0] < 0 || I[0] > 1 || I[1] < 0 || I[2] < 0 || I[3] < 0)
        return make_error("parameters");
      if (I[1] * I[2] * I[3] != PayloadValue{-1, x}.numel() || x != y) return make_error("shapes");
      for (size_t k = 1; k < 5; ++k) {
        if (PayloadValue{-1, sizes(pop, values, k)}.numel() != I[2]) return make_error("per-channel operand " + std::to_string(k));
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
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

const Tensor* role(const PayloadOp& pop, const std::vector<const Tensor*>& in, std::string_view name) {
  for (size_t k = 0; k < pop.inputs.size(); ++k) {
    if (pop.inputs[k].role == name) return in[k];
  }
  return nullptr;
}

const float* floats(const Tensor& t) { return kernels::cdata<float>(t); }

Status concat(int64_t outer, const std::vector<const Tensor*>& in, Tensor& out) {
  float* y = kernels::mdata<float>(out);
  const int64_t row_out = out.numel() / outer;
  int64_t at = 0;
  for (const Tensor* t : in) {
    const int64_t row = t->numel() / outer;
    const float* x = floats(*t);
    for (int64_t o = 0; o < outer; ++o) std::copy(x + o * row, x + (o + 1) * row, y + o * row_out + at);
    at += row;
  }
  return Status::Ok();
}

Status slice(const std::vector<int64_t>& I, const Tensor& in, Tensor& out) {
  const float* x = floats(in);
  float* y = kernels::mdata<float>(out);
  for (int64_t o = 0; o < I[0]; ++o) {
    const float* from = x + o * I[1] + I[2];
    std::copy(from, from + I[3], y + o * I[3]);
  }
  return Status::Ok();
}

// y = x * alpha[c] + beta[c], with alpha and beta folded in float as the
// portable batch norm (ATen's inference form) folds them.
Status channel_affine(const std::vector<int64_t>& I, double eps, const std::vector<const Tensor*>& in, Tensor& out) {
  const bool channels_last = I[0] != 0;
  const int64_t N = I[1], C = I[2], S = I[3];
  const float *gamma = floats(*in[1]), *beta = floats(*in[2]), *mean = floats(*in[3]), *var = floats(*in[4]);
  std::vector<float> scale(C), shift(C);
  for (int64_t c = 0; c < C; ++c) {
    const float invstd = 1.0f / std::sqrt(var[c] + static_cast<float>(eps));
    scale[c] = gamma[c] * invstd;
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  const float* x = floats(*in[0]);
  float* y = kernels::mdata<float>(out);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t a = 0; a < (channels_last ? S : C); ++a) {
      for (int64_t b = 0; b < (channels_last ? C : S); ++b) {
        const int64_t c = channels_last ? b : a;
        const int64_t i = (n * (channels_last ? S : C) + a) * (channels_last ? C : S) + b;
        y[i] = x[i] * scale[c] + shift[c];
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status check_host_op(HostOp op, const PayloadOp& pop, const std::vector<PayloadValue>& values) {
  const std::string who = pop.kind + " '" + pop.node + "': malformed payload op (";
  if (pop.outputs.size() != 1 || pop.inputs.size() < min_operands(op) || pop.inputs.size() > max_operands(op)) {
    return make_error(who + "operand counts)");
  }
  Status s = check_parameters(op, pop, values);
  if (!s.ok()) return make_error(who + s.error().message() + ")");
  return Status::Ok();
}

Status run_host_op(HostOp op, const PayloadOp& pop, const std::vector<const Tensor*>& in, Tensor& out) {
  const Tensor& x = *in[0];
  const std::vector<int64_t>& I = pop.ints;
  switch (op) {
    case HostOp::LayerNorm: {
      std::vector<int64_t> normalized(x.sizes.end() - I[0], x.sizes.end());
      return kernels::layer_norm_out(x, normalized, role(pop, in, "weight"), role(pop, in, "bias"), pop.floats[0], out,
                                     nullptr, nullptr);
    }
    case HostOp::Gelu:
      return kernels::unary_out(I[0] ? kernels::UnaryOp::GeluTanh : kernels::UnaryOp::Gelu, x, out);
    case HostOp::Permute: {
      LATHE_ASSIGN_OR_RETURN(Tensor view, kernels::permute_view(x, I));
      return kernels::copy_into(view, out);
    }
    case HostOp::Reshape: {
      LATHE_ASSIGN_OR_RETURN(Tensor view, kernels::view_view(x, out.sizes));
      return kernels::copy_into(view, out);
    }
    case HostOp::Roll:
      return kernels::roll_out(x, std::vector<int64_t>(I.begin() + 1, I.begin() + 1 + I[0]),
                               std::vector<int64_t>(I.begin() + 1 + I[0], I.end()), out);
    case HostOp::Bmm:
      return kernels::bmm_out(x, *in[1], out);
    case HostOp::Sdpa: {
      kernels::SdpaArgs a{in[0], in[1], in[2], in.size() > 3 ? in[3] : nullptr, 0.0, I[0] != 0, std::nullopt};
      if (!std::isnan(pop.floats[0])) a.scale = pop.floats[0];
      return kernels::sdpa(a, out, nullptr);
    }
    case HostOp::Concat: return concat(I[0], in, out);
    case HostOp::Slice: return slice(I, x, out);
    case HostOp::ChannelAffine: return channel_affine(I, pop.floats[0], in, out);
  }
  return Status::Ok();
}

}  // namespace lathe
