#include "lathe/backends/prepacked.h"

#include <cmath>

#include "lathe/analysis/constness.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

Status check_prepacked_operand(const DelegateInitArgs& args, const DelegatePayload& payload, const PayloadOperand& o,
                               std::string_view backend, std::string_view who_op, std::string_view prepacker) {
  const PayloadValue& pv = payload.values[o.value];
  const std::string who = std::string(backend) + ": " + std::string(who_op);
  if (pv.input < 0) {
    return make_error(who + ": operand '" + o.role + "' is computed inside the delegate; " + std::string(prepacker) +
                      " prepacks it at init, so it must be a compile-time constant");
  }
  if (static_cast<size_t>(pv.input) >= args.operands.size()) {
    return make_error(who + ": operand '" + o.role + "' names delegate input " + std::to_string(pv.input) + " of " +
                      std::to_string(args.operands.size()));
  }
  const DelegateOperand& d = args.operands[pv.input];
  const Constness constness(args.program);
  if (d.state && d.value && constness.is_compile_time_constant(d.value)) return Status::Ok();
  std::string producer;
  if (!d.value) producer = "no value";
  else if (d.value->producer()) producer = "produced at run time by node '" + d.value->producer()->name() + "' (" + d.value->producer()->op_name() + ")";
  else producer = "a placeholder: " + std::string(origin_name(constness.origin(d.value)));
  std::string why = d.value ? constness.explain(d.value) : "";
  return make_error(who + ": operand '" + o.role + "' is '" + (d.value ? d.value->name() : "?") + "', " + producer +
                    (why.empty() ? "" : " (" + why + ")") + ", not a compile-time constant; " + std::string(prepacker) +
                    " prepacks weights at init, so this payload cannot be initialised");
}

Result<std::vector<float>> prepacked_floats(const DelegateInitArgs& args, const DelegatePayload& payload, uint32_t value,
                                            int64_t numel, std::string_view who, std::string_view role) {
  const Tensor& t = *args.operands[payload.values[value].input].state;
  const std::string label = std::string(who) + ": " + std::string(role);
  if (t.dtype != DType::Float32) return make_error(label + " is " + std::string(dtype_name(t.dtype)) + ", not float32");
  LATHE_RETURN_IF_ERROR(t.check_fits());
  if (t.numel() != numel) return make_error(label + " has " + std::to_string(t.numel()) + " elements, expected " + std::to_string(numel));
  Tensor c = t.is_contiguous() ? t : kernels::contiguous_copy(t);
  const float* p = reinterpret_cast<const float*>(c.data());
  return std::vector<float>(p, p + numel);
}

std::optional<std::vector<int>> batch_norm_operands(const PayloadOp& op) {
  std::vector<int> at;
  if (role_index(op, kBatchNormRoles[0]) < 0) return at;
  for (const char* role : kBatchNormRoles) {
    at.push_back(role_index(op, role));
    if (at.back() < 0) return std::nullopt;
  }
  return at;
}

void fold_batch_norm(const std::vector<float> (&stats)[4], double eps, int64_t per_channel, std::vector<float>& w,
                     std::vector<float>& b) {
  const auto& [gamma, beta, mean, var] = stats;
  for (size_t c = 0; c < gamma.size(); ++c) {
    const double scale = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    for (int64_t j = 0; j < per_channel; ++j) {
      float& x = w[c * static_cast<size_t>(per_channel) + static_cast<size_t>(j)];
      x = static_cast<float>(x * scale);
    }
    b[c] = static_cast<float>((b[c] - mean[c]) * scale + beta[c]);
  }
}

}  // namespace lathe
