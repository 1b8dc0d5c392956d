#include "lathe/ir/spec_kinds.h"

#include <array>

namespace lathe {
namespace {

// In enum order (checked below), so a kind is its own index.
constexpr std::array<InputKindInfo, 7> kInputKinds = {{
    {InputKind::UserInput, "user_input", "", "user_input"},
    {InputKind::Parameter, "parameter", "parameter_name", "parameter"},
    {InputKind::Buffer, "buffer", "buffer_name", "buffer"},
    {InputKind::TensorConstant, "tensor_constant", "tensor_constant_name", "constant"},
    {InputKind::CustomObj, "custom_obj", "custom_obj_name", "custom_obj"},
    {InputKind::Token, "token", "", "token"},
    {InputKind::ConstantInput, "constant_input", "name", "constant_input"},
}};

constexpr std::array<OutputKindInfo, 8> kOutputKinds = {{
    {OutputKind::UserOutput, "user_output", "", "user_output"},
    {OutputKind::LossOutput, "loss_output", "", "loss_output"},
    {OutputKind::BufferMutation, "buffer_mutation", "buffer_name", "buffer_mutation"},
    {OutputKind::GradientToParameter, "gradient_to_parameter", "parameter_name", "gradient_to_parameter"},
    {OutputKind::GradientToUserInput, "gradient_to_user_input", "user_input_name", "gradient_to_user_input"},
    {OutputKind::UserInputMutation, "user_input_mutation", "user_input_name", "user_input_mutation"},
    {OutputKind::Token, "token", "", "token"},
    {OutputKind::ParameterMutation, "parameter_mutation", "parameter_name", "parameter_mutation"},
}};

template <typename Table>
constexpr bool in_enum_order(const Table& table) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (static_cast<size_t>(table[i].kind) != i) return false;
  }
  return true;
}
static_assert(in_enum_order(kInputKinds) && in_enum_order(kOutputKinds));

template <typename Table>
const typename Table::value_type* find_union_key(const Table& table, std::string_view key) {
  for (const auto& info : table) {
    if (info.union_key == key) return &info;
  }
  return nullptr;
}

}  // namespace

const InputKindInfo& input_kind_info(InputKind kind) { return kInputKinds.at(static_cast<size_t>(kind)); }
const OutputKindInfo& output_kind_info(OutputKind kind) { return kOutputKinds.at(static_cast<size_t>(kind)); }
const InputKindInfo* input_kind_for_union_key(std::string_view key) { return find_union_key(kInputKinds, key); }
const OutputKindInfo* output_kind_for_union_key(std::string_view key) { return find_union_key(kOutputKinds, key); }

}  // namespace lathe
