#include "lathe/serde/schema_versions.h"

#include <array>

namespace lathe {
namespace {

// Ordered as SchemaFeature. `absent_in` is the newest snapshot known to lack
// the feature; the truth lies in (absent_in, since].
constexpr std::array<SchemaFeatureInfo, static_cast<size_t>(SchemaFeature::kCount)> kFeatures = {{
    {SchemaFeature::AsNoneBool, "as_none: bool", 3, 2},
    {SchemaFeature::SymFloat, "as_sym_float", 3, 2},
    {SchemaFeature::NamedArgumentKind, "NamedArgument.kind", 5, 3},
    {SchemaFeature::HopSingleTensorReturn, "Node.is_hop_single_tensor_return", 5, 3},
    {SchemaFeature::TreespecNamedtupleFields, "GraphModule.treespec_namedtuple_fields", 5, 3},
    {SchemaFeature::OptionalTensor, "as_optional_tensor", 8, 5},
    {SchemaFeature::ParameterMutation, "parameter_mutation", 10, 8},
    {SchemaFeature::Complex, "as_complex", 14, 10},
    {SchemaFeature::GuardsCode, "ExportedProgram.guards_code", 14, 12},
    {SchemaFeature::NodeName, "Node.name", 16, 14},
    {SchemaFeature::IntLists, "as_int_lists", 16, 14},
    {SchemaFeature::StringToArgument, "as_string_to_argument", 16, 14},
    {SchemaFeature::NestedTensors, "as_nested_tensors", 19, 16},
    {SchemaFeature::FloatLists, "as_float_lists", 19, 16},
}};

// What a program needs, raised as the scan finds features.
class NeedScanner {
 public:
  SchemaNeed need;

  void require(int64_t minor, const std::string& what) {
    if (minor > need.minor) need = SchemaNeed{minor, what};
  }
  void require(SchemaFeature f, const std::string& where) {
    const SchemaFeatureInfo& info = schema_feature_info(f);
    require(info.since, std::string(info.name) + " (" + where + ")");
  }

  void scan_graph(const Graph& g, const std::string& where) {
    for (Value* v : g.placeholders()) scan_value(*v, where + ", input %" + v->name());
    for (const Node* n : g.nodes()) {
      std::string at = where + ", node '" + n->name() + "' (" + n->target() + ")";
      for (const auto& in : n->inputs()) scan_argument(in.arg, at);
      for (const auto& out : n->outputs()) scan_argument(out, at);
      for (const Value* v : n->defined_values()) scan_value(*v, at);
    }
  }

 private:
  void scan_value(const Value& v, const std::string& where) {
    if (v.kind() == ValueKind::SymFloat) require(SchemaFeature::SymFloat, where);
    if (v.kind() == ValueKind::Tensor && v.meta()) scan_dtype(v.meta()->dtype, where);
  }
  void scan_dtype(DType d, const std::string& where) {
    int64_t m = schema_minor_for_dtype(d);
    if (m > kOldestSchemaMinor) require(m, "scalar type " + std::string(dtype_name(d)) + " (" + where + ")");
  }
  void scan_argument(const Argument& a, const std::string& where) {
    std::visit([&](const auto& x) { scan_alternative(x, where); }, a.v);
  }
  template <typename T>
  void scan_alternative(const T& x, const std::string& where) {
    if constexpr (std::is_same_v<T, OptionalTensor>) require(SchemaFeature::OptionalTensor, where);
    if constexpr (std::is_same_v<T, SymFloatArg> || std::is_same_v<T, SymFloatList>)
      require(SchemaFeature::SymFloat, where);
    if constexpr (std::is_same_v<T, ComplexArg>) require(SchemaFeature::Complex, where);
    if constexpr (std::is_same_v<T, IntLists>) require(SchemaFeature::IntLists, where);
    if constexpr (std::is_same_v<T, FloatLists>) require(SchemaFeature::FloatLists, where);
    if constexpr (std::is_same_v<T, NestedTensorList>) require(SchemaFeature::NestedTensors, where);
    if constexpr (std::is_same_v<T, ScalarTypeArg>) scan_dtype(x.dtype, where);
    if constexpr (std::is_same_v<T, GraphArg>) {
      if (x.graph) scan_graph(*x.graph, where + ", subgraph '" + x.name + "'");
    }
    if constexpr (std::is_same_v<T, StringToArgument>) {
      require(SchemaFeature::StringToArgument, where);
      for (const auto& [k, sub] : x.items) scan_argument(sub, where);
    }
  }
};

}  // namespace

const SchemaFeatureInfo& schema_feature_info(SchemaFeature f) { return kFeatures[static_cast<size_t>(f)]; }

int64_t schema_minor_for_dtype(DType dtype) {
  switch (dtype) {
    case DType::Float8E4M3FN:
    case DType::Float8E5M2: return 3;  // 8.1 numbered them 24/23, 8.2 dropped them
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2FNUZ: return 10;
    case DType::UInt32:
    case DType::UInt64: return 20;
    default: return kOldestSchemaMinor;  // UINT16 and the classic types are in 8.1
  }
}

SchemaNeed required_schema_minor(const ExportedProgram& ep) {
  NeedScanner s;
  s.scan_graph(ep.graph(), "graph");
  for (size_t i = 0; i < ep.output_specs.size(); ++i) {
    if (ep.output_specs[i].kind == OutputKind::ParameterMutation)
      s.require(SchemaFeature::ParameterMutation, "output spec " + std::to_string(i));
  }
  if (!ep.guards_code.empty()) s.require(SchemaFeature::GuardsCode, "the program carries guard code");
  return s.need;
}

int64_t schema_minor_to_write(const ExportedProgram& ep) {
  int64_t declared = ep.schema_version.minor;
  if (declared < kOldestSchemaMinor || ep.legacy_schema_version) declared = kNewestSchemaMinor;
  return std::max(declared, required_schema_minor(ep).minor);
}

}  // namespace lathe
