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

// Where a feature was found. Described only when it raises the need: a
// million-node graph should not format a million strings nobody reads.
struct Where {
  const std::string* graph;  // "graph", or a path to a subgraph
  const Node* node;          // nullptr: a graph input
  const Value* value;
  std::string describe() const {
    if (node) return *graph + ", node '" + node->name() + "' (" + node->target() + ")";
    return *graph + ", input %" + (value ? value->name() : std::string("?"));
  }
};

// What a program needs, raised as the scan finds features.
class NeedScanner {
 public:
  SchemaNeed need;

  void require(int64_t minor, std::string_view what, const Where& w) {
    if (minor > need.minor) need = SchemaNeed{minor, std::string(what) + " (" + w.describe() + ")"};
  }
  void require(SchemaFeature f, const Where& w) {
    const SchemaFeatureInfo& info = schema_feature_info(f);
    require(info.since, info.name, w);
  }

  void scan_graph(const Graph& g, const std::string& graph) {
    for (Value* v : g.placeholders()) scan_value(*v, Where{&graph, nullptr, v});
    for (const Node* n : g.nodes()) {
      Where w{&graph, n, nullptr};
      for (const auto& in : n->inputs()) scan_argument(in.arg, w);
      for (const auto& out : n->outputs()) scan_argument(out, w);
      for (const Value* v : n->defined_values()) scan_value(*v, w);
    }
  }

 private:
  void scan_value(const Value& v, const Where& w) {
    if (v.kind() == ValueKind::SymFloat) require(SchemaFeature::SymFloat, w);
    if (v.kind() == ValueKind::Tensor && v.meta()) scan_dtype(v.meta()->dtype, w);
  }
  void scan_dtype(DType d, const Where& w) {
    int64_t m = schema_minor_for_dtype(d);
    if (m > need.minor) require(m, "scalar type " + std::string(dtype_name(d)), w);
  }
  void scan_argument(const Argument& a, const Where& w) {
    std::visit([&](const auto& x) { scan_alternative(x, w); }, a.v);
  }
  template <typename T>
  void scan_alternative(const T& x, const Where& w) {
    if constexpr (std::is_same_v<T, OptionalTensor>) require(SchemaFeature::OptionalTensor, w);
    if constexpr (std::is_same_v<T, SymFloatArg> || std::is_same_v<T, SymFloatList>) require(SchemaFeature::SymFloat, w);
    if constexpr (std::is_same_v<T, ComplexArg>) require(SchemaFeature::Complex, w);
    if constexpr (std::is_same_v<T, IntLists>) require(SchemaFeature::IntLists, w);
    if constexpr (std::is_same_v<T, FloatLists>) require(SchemaFeature::FloatLists, w);
    if constexpr (std::is_same_v<T, NestedTensorList>) require(SchemaFeature::NestedTensors, w);
    if constexpr (std::is_same_v<T, ScalarTypeArg>) scan_dtype(x.dtype, w);
    if constexpr (std::is_same_v<T, GraphArg>) {
      if (x.graph) scan_graph(*x.graph, w.describe() + ", subgraph '" + x.name + "'");
    }
    if constexpr (std::is_same_v<T, StringToArgument>) {
      require(SchemaFeature::StringToArgument, w);
      for (const auto& [k, sub] : x.items) scan_argument(sub, w);
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
  const std::string top = "graph";
  s.scan_graph(ep.graph(), top);
  auto spec_need = [&](SchemaFeature f, const std::string& what) {
    const SchemaFeatureInfo& info = schema_feature_info(f);
    if (info.since > s.need.minor) s.need = SchemaNeed{info.since, std::string(info.name) + " (" + what + ")"};
  };
  for (size_t i = 0; i < ep.output_specs.size(); ++i) {
    if (ep.output_specs[i].kind == OutputKind::ParameterMutation)
      spec_need(SchemaFeature::ParameterMutation, "output spec " + std::to_string(i));
  }
  if (!ep.guards_code.empty()) spec_need(SchemaFeature::GuardsCode, "the program carries guard code");
  return s.need;
}

int64_t schema_minor_to_write(const ExportedProgram& ep) {
  int64_t declared = ep.schema_version.minor;
  if (declared < kOldestSchemaMinor || ep.legacy_schema_version) declared = kNewestSchemaMinor;
  return std::max(declared, required_schema_minor(ep).minor);
}

}  // namespace lathe
