// Which minor of export schema 8 introduced each field, union member and
// scalar type that Lathe writes. A file declares one minor; the writer emits
// exactly the fields that minor has, so a loader of that generation (2.4-2.8
// reject unknown keys) reads it.
//
// Sources: torch/_export/serde/schema.py and schema.yaml as they stood at
// minors 8.1, 8.2, 8.3, 8.5, 8.8, 8.10, 8.14, 8.16, 8.19 and 8.20, plus a real
// PyTorch 2.9 archive (8.12, every field written). Between two of those
// snapshots the exact minor is not known; `since` is the first snapshot that
// has the feature and `absent_in` the last one that lacks it. Using `since`
// errs on the safe side: a file declaring a minor in between is written
// without the feature, which every loader of that minor accepts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lathe/core/dtype.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

inline constexpr int64_t kOldestSchemaMinor = 1;
inline constexpr int64_t kNewestSchemaMinor = 20;

enum class SchemaFeature {
  AsNoneBool,                // `as_none: true` (before: `as_none: []`, Tuple[()])
  SymFloat,                  // Argument.as_sym_float(s), Graph.sym_float_values
  NamedArgumentKind,         // NamedArgument.kind
  HopSingleTensorReturn,     // Node.is_hop_single_tensor_return
  TreespecNamedtupleFields,  // GraphModule.treespec_namedtuple_fields
  OptionalTensor,            // Argument.as_optional_tensor
  ParameterMutation,         // OutputSpec.parameter_mutation
  Complex,                   // Argument.as_complex
  GuardsCode,                // ExportedProgram.guards_code
  NodeName,                  // Node.name
  IntLists,                  // Argument.as_int_lists
  StringToArgument,          // Argument.as_string_to_argument
  NestedTensors,             // Argument.as_nested_tensors
  FloatLists,                // Argument.as_float_lists
  kCount,
};

struct SchemaFeatureInfo {
  SchemaFeature feature;
  std::string_view name;  // as the schema spells it
  int64_t since;          // first known minor that has it
  int64_t absent_in;      // last known minor without it (0: none known)
};

const SchemaFeatureInfo& schema_feature_info(SchemaFeature f);
inline bool schema_has(int64_t minor, SchemaFeature f) { return minor >= schema_feature_info(f).since; }

// The first minor whose ScalarType enum has `dtype` with its current number
// (the float8 types were 23/24 in 8.1 and absent in 8.2).
int64_t schema_minor_for_dtype(DType dtype);

// The lowest minor that can express everything `ep` uses, and what forced
// it (empty when nothing beyond 8.1 is used). The node is named.
struct SchemaNeed {
  int64_t minor = kOldestSchemaMinor;
  std::string reason;
};
SchemaNeed required_schema_minor(const ExportedProgram& ep);

// The minor the writer declares for `ep`: the one it was read with, raised
// to what it uses; programs that never came from a file (minor 0) and
// pre-schema-8 ones get the newest.
int64_t schema_minor_to_write(const ExportedProgram& ep);

}  // namespace lathe
