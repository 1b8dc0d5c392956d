#include "lathe/ir/exported_program.h"

namespace lathe {

namespace {
std::string bound_text(const std::optional<int64_t>& b, const char* unbounded) {
  return b ? std::to_string(*b) : std::string(unbounded);
}
}  // namespace

std::string range_text(const RangeConstraint& r) {
  return "[" + bound_text(r.min_val, "-inf") + ", " + bound_text(r.max_val, "inf") + "]";
}

std::string lifted_placeholder_name(InputKind kind, const std::string& target) {
  std::string name = kind == InputKind::Parameter ? "p_" : kind == InputKind::Buffer ? "b_" : "c_";
  for (char c : target) name += c == '.' ? '_' : c;
  return name;
}

std::string_view input_kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::UserInput: return "user_input";
    case InputKind::Parameter: return "parameter";
    case InputKind::Buffer: return "buffer";
    case InputKind::TensorConstant: return "constant";
    case InputKind::CustomObj: return "custom_obj";
    case InputKind::Token: return "token";
    case InputKind::ConstantInput: return "constant_input";
  }
  return "?";
}

std::string_view output_kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::UserOutput: return "user_output";
    case OutputKind::LossOutput: return "loss_output";
    case OutputKind::BufferMutation: return "buffer_mutation";
    case OutputKind::GradientToParameter: return "gradient_to_parameter";
    case OutputKind::GradientToUserInput: return "gradient_to_user_input";
    case OutputKind::UserInputMutation: return "user_input_mutation";
    case OutputKind::Token: return "token";
    case OutputKind::ParameterMutation: return "parameter_mutation";
  }
  return "?";
}

const Tensor* ExportedProgram::state_tensor(const InputSpec& spec) const {
  switch (spec.kind) {
    case InputKind::Parameter: return parameters.find(spec.target);
    case InputKind::Buffer:
      return spec.persistent ? buffers.find(spec.target) : constants.find(spec.target);
    case InputKind::TensorConstant: return constants.find(spec.target);
    default: return nullptr;
  }
}

int ExportedProgram::input_index(const Value* placeholder) const {
  if (!placeholder || placeholder->graph() != graph_.get() || placeholder->input_index() == Value::kNotAnInput) return -1;
  return static_cast<int>(placeholder->input_index());
}

}  // namespace lathe
