#include "sweep/program_spec.h"

namespace lathe::sweep {

const char* weight_kind_name(WeightKind k) {
  switch (k) {
    case WeightKind::Parameter: return "parameter";
    case WeightKind::Buffer: return "buffer";
    case WeightKind::Constant: return "constant";
    case WeightKind::MutableBuffer: return "mutable_buffer";
    case WeightKind::UserInput: return "user_input";
    case WeightKind::FoldedFromState: return "folded_from_state";
    case WeightKind::RuntimeComputed: return "runtime_computed";
  }
  return "?";
}

const char* op_kind_name(OpKind k) {
  static const char* const names[kOpKinds] = {
      "linear", "addmm",      "mm",      "bmm",   "binary", "unary", "conv2d",       "batch_norm", "max_pool", "avg_pool",
      "layer_norm", "softmax", "permute", "transpose", "reshape", "cat", "slice", "mean", "state_update", "unsqueeze"};
  const int i = static_cast<int>(k);
  return i >= 0 && i < kOpKinds ? names[i] : "?";
}

const char* unary_op_name(int64_t which) {
  static const char* const names[kUnaryOps] = {
      "aten.relu.default",  "aten.gelu.default",        "aten.gelu.default",    "aten.sigmoid.default",
      "aten.tanh.default",  "aten.hardswish.default",   "aten.hardsigmoid.default", "aten.hardtanh.default",
      "aten.silu.default",  "aten.neg.default",         "aten.clamp.default"};
  return which >= 0 && which < kUnaryOps ? names[which] : "?";
}

namespace {
std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

std::string to_string(const ProgramSpec& spec) {
  std::string s = "seed " + std::to_string(spec.seed) + "\n";
  for (const MethodSpec& m : spec.methods) {
    s += "method " + m.name + "\n";
    for (size_t i = 0; i < m.inputs.size(); ++i) s += "  v" + std::to_string(i) + " = input " + ints(m.inputs[i]) + "\n";
    for (size_t i = 0; i < m.ops.size(); ++i) {
      const OpSpec& op = m.ops[i];
      s += "  v" + std::to_string(m.inputs.size() + i) + " = " + op_kind_name(op.kind);
      if (op.variant) s += "#" + std::to_string(op.variant);
      s += "(";
      for (size_t a = 0; a < op.args.size(); ++a) s += (a ? ", v" : "v") + std::to_string(op.args[a]);
      s += ") p=" + ints(op.p);
      if (!op.weights.empty()) {
        s += " weights={";
        for (size_t w = 0; w < op.weights.size(); ++w) s += std::string(w ? ", " : "") + weight_kind_name(op.weights[w]);
        s += "}";
      }
      s += "\n";
    }
    s += "  outputs:";
    for (int o : m.outputs) s += " v" + std::to_string(o);
    s += "\n";
  }
  return s;
}

size_t op_count(const ProgramSpec& spec) {
  size_t n = 0;
  for (const MethodSpec& m : spec.methods) n += m.ops.size();
  return n;
}

}  // namespace lathe::sweep
