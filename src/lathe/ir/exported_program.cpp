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

std::unique_ptr<ExportedProgram> ExportedProgram::clone() const {
  return std::unique_ptr<ExportedProgram>(new ExportedProgram(*this));
}

}  // namespace lathe
