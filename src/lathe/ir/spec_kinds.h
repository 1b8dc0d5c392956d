// The kinds of a method's input and output specs, and the one table of what
// each is called: its member name in the export schema's InputSpec /
// OutputSpec unions, the member naming its state or input (parameter_name,
// buffer_name, ...), and the name Lathe shows (printer, inspect, errors).
// The reader, the writer and the printer all go through this table, so a
// kind is spelt in one place.
//
// The shown name is the union key except for one kind: a lifted tensor
// constant is `tensor_constant` in the schema and shows as `constant`.
#pragma once

#include <string_view>

namespace lathe {

enum class InputKind { UserInput, Parameter, Buffer, TensorConstant, CustomObj, Token, ConstantInput };
enum class OutputKind {
  UserOutput,
  LossOutput,
  BufferMutation,
  GradientToParameter,
  GradientToUserInput,
  UserInputMutation,
  Token,
  ParameterMutation,
};

template <typename Kind>
struct SpecKindInfo {
  Kind kind;
  std::string_view union_key;   // "tensor_constant", "buffer_mutation", ...
  std::string_view target_key;  // "tensor_constant_name", ...; empty: the spec names nothing
  std::string_view shown;       // "constant", "buffer_mutation", ...
};
using InputKindInfo = SpecKindInfo<InputKind>;
using OutputKindInfo = SpecKindInfo<OutputKind>;

const InputKindInfo& input_kind_info(InputKind kind);
const OutputKindInfo& output_kind_info(OutputKind kind);
// The kind whose union key is `key`, or nullptr.
const InputKindInfo* input_kind_for_union_key(std::string_view key);
const OutputKindInfo* output_kind_for_union_key(std::string_view key);

// The shown names: "parameter", "user_input", "constant", ...
inline std::string_view input_kind_name(InputKind kind) { return input_kind_info(kind).shown; }
inline std::string_view output_kind_name(OutputKind kind) { return output_kind_info(kind).shown; }

}  // namespace lathe
