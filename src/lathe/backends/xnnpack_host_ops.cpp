#include "lathe/backends/xnnpack_host_ops.h"

#include <cmath>

#include "lathe/runtime/kernels/attention.h"
#include "lathe/runtime/kernels/matmul.h"
#include "lathe/runtime/kernels/norm.h"
#include "lathe/runtime/kernels/pad.h"
#include "lathe/runtime/kernels/unary.h"
#include "lathe/runtime/kernels/view.h"

namespace lathe {

std::optional<HostOp> host_op_named(std::string_view kind) {
  static const std::pair<std::string_view, HostOp> table[] = {
      {"layer_norm", HostOp::LayerNorm}, {"gelu", HostOp::Gelu}, {"permute", HostOp::Permute},
      {"reshape", HostOp::Reshape},      {"roll", HostOp::Roll}, {"bmm", HostOp::Bmm},
      {"sdpa", HostOp::Sdpa}};
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
  }
  return Status::Ok();
}

size_t min_operands(HostOp op) { return op == HostOp::Bmm ? 2 : op == HostOp::Sdpa ? 3 : 1; }
size_t max_operands(HostOp op) { return op == HostOp::LayerNorm ? 3 : op == HostOp::Sdpa ? 4 : min_operands(op); }

const Tensor* role(const PayloadOp& pop, const std::vector<const Tensor*>& in, std::string_view name) {
  for (size_t k = 0; k < pop.inputs.size(); ++k) {
    if (pop.inputs[k].role == name) return in[k];
  }
  return nullptr;
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
  }
  return Status::Ok();
}

}  // namespace lathe
