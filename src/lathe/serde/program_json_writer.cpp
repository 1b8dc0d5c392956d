// ExportedProgram -> models/<name>.json: the field set of one schema-8 minor
// (schema_versions.h), in declaration order (torch/_export/serde/schema.py).
// Names are materialised here: every spec takes the name of the value at its
// position in the graph.
//
// The JSON is streamed as the IR is walked (json_writer.h), into one string
// or in chunks straight into the archive entry: nothing is built per node
// but the text itself.
#include "lathe/ir/spec_kinds.h"
#include "lathe/serde/json_writer.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/schema_versions.h"

namespace lathe {
namespace {

// One encoding pass for one minor. The minor has been checked to express
// everything the program uses, so the encoder only leaves out the fields the
// minor does not have.
class Encoder {
 public:
  Encoder(int64_t minor, std::string& out) : minor_(minor), w_(out) {}
  Encoder(int64_t minor, const ByteSource::Sink& out) : minor_(minor), w_(out) {}

  void encode(const ExportedProgram& ep);
  Status finish() { return w_.finish(); }

 private:
  bool has(SchemaFeature f) const { return schema_has(minor_, f); }

  void graph(const Graph& g);
  void node(const Node& n);
  void value_tables(const Graph& g);
  void signature(const ExportedProgram& ep);
  void input_spec(const InputSpec& s, const Argument& graph_input);
  void output_spec(const OutputSpec& s, const Argument& graph_output);
  void graph_module(const ExportedProgram& ep);

  // {"name": ...} for a value (an empty name for none).
  void name(const Value* v) {
    w_.begin_object().key("name").string(v ? std::string_view(v->name()) : std::string_view()).end_object();
  }
  // Before 8.3 `as_none` was an empty tuple, written [].
  void none() {
    if (has(SchemaFeature::AsNoneBool)) w_.boolean(true);
    else w_.begin_array().end_array();
  }
  void none_union() {
    w_.begin_union("as_none");
    none();
    w_.end_object();
  }
  void tensor_union(const Value* v) {
    w_.begin_union("as_tensor");
    name(v);
    w_.end_object();
  }
  void optional_tensor(const Value* v) {
    if (v) tensor_union(v);
    else none_union();
  }
  template <typename Literal>
  void sym_arg(const SymArg<Literal>& s, const char* literal_key);
  template <typename Item, typename Fn>
  void list(const char* key, const std::vector<Item>& items, Fn&& item);

  void argument(const Argument& a) {
    std::visit([this](const auto& x) { arg(x); }, a.v);
  }
  void arg(const NoneArg&) { none_union(); }
  // Tokens too: no schema minor has an `as_token` Argument; PyTorch writes a
  // token as a tensor (f32[0]) that its spec calls a token.
  void arg(const TensorRef& x) { tensor_union(x.value); }
  void arg(const TensorList& x) { list("as_tensors", x.items, [&](const Value* v) { name(v); }); }
  void arg(const OptionalTensor& x) {
    w_.begin_union("as_optional_tensor");
    optional_tensor(x.value);
    w_.end_object();
  }
  void arg(const OptionalTensorList& x) {
    list("as_optional_tensors", x.items, [&](const Value* v) { optional_tensor(v); });
  }
  void arg(int64_t x) { w_.begin_union("as_int").integer(x).end_object(); }
  void arg(const IntList& x) { list("as_ints", x.items, [&](int64_t i) { w_.integer(i); }); }
  void arg(double x) { w_.begin_union("as_float").number(x).end_object(); }
  void arg(const FloatList& x) { list("as_floats", x.items, [&](double d) { w_.number(d); }); }
  void arg(const std::string& x) { w_.begin_union("as_string").string(x).end_object(); }
  void arg(const StringList& x) { list("as_strings", x.items, [&](const std::string& s) { w_.string(s); }); }
  void arg(bool x) { w_.begin_union("as_bool").boolean(x).end_object(); }
  void arg(const BoolList& x) { list("as_bools", x.items, [&](bool b) { w_.boolean(b); }); }
  void arg(const SymIntArg& x) { sym_union("as_sym_int", x, "as_int"); }
  void arg(const SymIntList& x) { list("as_sym_ints", x.items, [&](const SymIntArg& s) { sym_arg(s, "as_int"); }); }
  void arg(const SymFloatArg& x) { sym_union("as_sym_float", x, "as_float"); }
  void arg(const SymFloatList& x) {
    list("as_sym_floats", x.items, [&](const SymFloatArg& s) { sym_arg(s, "as_float"); });
  }
  void arg(const SymBoolArg& x) { sym_union("as_sym_bool", x, "as_bool"); }
  void arg(const SymBoolList& x) {
    list("as_sym_bools", x.items, [&](const SymBoolArg& s) { sym_arg(s, "as_bool"); });
  }
  void arg(const ScalarTypeArg& x) {
    w_.begin_union("as_scalar_type").integer(static_cast<int64_t>(x.dtype)).end_object();
  }
  void arg(const MemoryFormatArg& x) { w_.begin_union("as_memory_format").integer(x.format).end_object(); }
  void arg(const LayoutArg& x) { w_.begin_union("as_layout").integer(x.layout).end_object(); }
  void arg(const DeviceArg& x) {
    w_.begin_union("as_device");
    json::write_device(w_, x.device);
    w_.end_object();
  }
  void arg(const GraphArg& x) {
    w_.begin_union("as_graph").begin_object().key("name").string(x.name).key("graph");
    graph(*x.graph);
    w_.end_object().end_object();
  }
  void arg(const CustomObjRef& x) {
    w_.begin_union("as_custom_obj");
    custom_obj(x.value);
    w_.end_object();
  }
  void arg(const OperatorArg& x) { w_.begin_union("as_operator").string(x.name).end_object(); }
  void arg(const ComplexArg& x) {
    w_.begin_union("as_complex").begin_object().key("real").number(x.real).key("imag").number(x.imag);
    w_.end_object().end_object();
  }
  void arg(const NestedTensorList& x) {
    list("as_nested_tensors", x.items, [&](const std::vector<Value*>& inner) {
      w_.begin_array();
      for (const Value* v : inner) name(v);
      w_.end_array();
    });
  }
  void arg(const IntLists& x) {
    list("as_int_lists", x.items, [&](const std::vector<int64_t>& inner) {
      w_.begin_array();
      for (int64_t i : inner) w_.integer(i);
      w_.end_array();
    });
  }
  void arg(const FloatLists& x) {
    list("as_float_lists", x.items, [&](const std::vector<double>& inner) {
      w_.begin_array();
      for (double d : inner) w_.number(d);
      w_.end_array();
    });
  }
  void arg(const StringToArgument& x) {
    w_.begin_union("as_string_to_argument").begin_object();
    json::for_each_last_value(x.items, [&](const std::string& k, const Argument& sub) {
      w_.key(k);
      argument(sub);
    });
    w_.end_object().end_object();
  }

  template <typename Literal>
  void sym_union(const char* key, const SymArg<Literal>& s, const char* literal_key) {
    w_.begin_union(key);
    sym_arg(s, literal_key);
    w_.end_object();
  }
  // {"name": ..., "class_fqn": ...}
  void custom_obj(const Value* v) {
    w_.begin_object().key("name").string(v ? std::string_view(v->name()) : std::string_view());
    w_.key("class_fqn").string(v ? std::string_view(v->class_fqn()) : std::string_view()).end_object();
  }

  int64_t minor_;
  json::Writer w_;
  // Every value of the graph being written, in the order the value tables
  // list them (placeholders, then each node's outputs).
  std::vector<const Value*> values_;
};

template <typename Literal>
void Encoder::sym_arg(const SymArg<Literal>& s, const char* literal_key) {
  if (s.is_value()) {
    w_.begin_union("as_name").string(s.value()->name()).end_object();
    return;
  }
  w_.begin_union(literal_key);
  if constexpr (std::is_same_v<Literal, double>) w_.number(s.literal());
  else if constexpr (std::is_same_v<Literal, bool>) w_.boolean(s.literal());
  else w_.integer(s.literal());
  w_.end_object();
}

template <typename Item, typename Fn>
void Encoder::list(const char* key, const std::vector<Item>& items, Fn&& item) {
  w_.begin_union(key).begin_array();
  for (const auto& x : items) item(x);
  w_.end_array().end_object();
}

// What torch.export gives an effect token: an empty float tensor.
const TensorMeta& token_meta() {
  static const TensorMeta m = [] {
    TensorMeta t;
    t.dtype = DType::Float32;
    t.sizes = {SymDim(0)};
    t.strides = {SymDim(1)};
    t.storage_offset = SymDim(0);
    return t;
  }();
  return m;
}

void Encoder::node(const Node& n) {
  w_.begin_object().key("target").string(n.target()).key("inputs").begin_array();
  for (const NamedArgument& na : n.inputs()) {
    w_.begin_object().key("name").string(na.name).key("arg");
    argument(na.arg);
    if (has(SchemaFeature::NamedArgumentKind)) {
      w_.key("kind");
      if (na.kind) w_.integer(static_cast<int64_t>(*na.kind));
      else w_.null();
    }
    w_.end_object();
  }
  w_.end_array().key("outputs").begin_array();
  for (const Argument& o : n.outputs()) argument(o);
  w_.end_array().key("metadata");
  json::write_string_map(w_, n.metadata());
  if (has(SchemaFeature::HopSingleTensorReturn)) {
    w_.key("is_hop_single_tensor_return");
    if (n.is_hop_single_tensor_return()) w_.boolean(*n.is_hop_single_tensor_return());
    else w_.null();
  }
  if (has(SchemaFeature::NodeName)) {
    w_.key("name");
    if (n.explicit_name()) w_.string(*n.explicit_name());
    else w_.null();
  }
  w_.end_object();
}

// tensor_values, sym_int_values, ...: one pass per table over values_.
// tensor_values, sym_int_values and custom_obj_values list every value
// (names are unique in a graph); the sym bool and float tables are written
// as assigning each name in turn would leave them.
void Encoder::value_tables(const Graph& g) {
  w_.key("tensor_values").begin_object();
  for (const Value* v : values_) {
    if (v->kind() == ValueKind::Tensor && v->meta()) json::write_tensor_meta(w_.key(v->name()), *v->meta());
    if (v->kind() == ValueKind::Token) json::write_tensor_meta(w_.key(v->name()), token_meta());
  }
  w_.end_object().key("sym_int_values").begin_object();
  for (const Value* v : values_) {
    if (v->kind() == ValueKind::SymInt && v->sym() && v->sym()->index() == 0) {
      json::write_sym_int(w_.key(v->name()), std::get<0>(*v->sym()));
    }
  }
  std::vector<std::pair<std::string, const Value*>> bools, floats;
  for (const Value* v : values_) {
    if (!v->sym()) continue;
    if (v->kind() == ValueKind::SymBool && v->sym()->index() == 1) bools.emplace_back(v->name(), v);
    if (v->kind() == ValueKind::SymFloat && v->sym()->index() == 2) floats.emplace_back(v->name(), v);
  }
  // {"as_bool": b} / {"as_float": f}, or {"as_expr": ...}
  auto sym_scalar = [&](const auto& value, const char* literal_key) {
    if (value.v.index() == 0) {
      w_.begin_union(literal_key);
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, SymBoolValue>) w_.boolean(std::get<0>(value.v));
      else w_.number(std::get<0>(value.v));
    } else {
      json::write_sym_expr(w_.begin_union("as_expr"), std::get<1>(value.v));
    }
    w_.end_object();
  };
  w_.end_object().key("sym_bool_values").begin_object();
  json::for_each_last_value(bools, [&](const std::string& k, const Value* v) {
    w_.key(k);
    sym_scalar(std::get<1>(*v->sym()), "as_bool");
  });
  w_.end_object().key("is_single_tensor_return").boolean(g.is_single_tensor_return());
  w_.key("custom_obj_values").begin_object();
  for (const Value* v : values_) {
    if (v->kind() != ValueKind::CustomObj) continue;
    w_.key(v->name());
    custom_obj(v);
  }
  w_.end_object();
  if (!has(SchemaFeature::SymFloat)) return;
  w_.key("sym_float_values").begin_object();
  json::for_each_last_value(floats, [&](const std::string& k, const Value* v) {
    w_.key(k);
    sym_scalar(std::get<2>(*v->sym()), "as_float");
  });
  w_.end_object();
}

void Encoder::graph(const Graph& g) {
  // A subgraph (GraphArg) is written inside a node of its parent: the
  // parent's values wait on the side.
  std::vector<const Value*> parent_values = std::move(values_);
  values_.clear();
  values_.reserve(g.inputs().size() + g.node_count());
  w_.begin_object().key("inputs").begin_array();
  for (const Argument& in : g.inputs()) {
    argument(in);
    in.for_each_value([&](const Value* v) { values_.push_back(v); });
  }
  w_.end_array().key("outputs").begin_array();
  for (const Argument& o : g.outputs()) argument(o);
  w_.end_array().key("nodes").begin_array();
  for (const Node* n : g.nodes()) {
    node(*n);
    for (const Value* v : n->defined_values()) values_.push_back(v);
  }
  w_.end_array();
  value_tables(g);
  w_.end_object();
  values_ = std::move(parent_values);
}

const Value* single_value(const Argument& a) {
  const Value* out = nullptr;
  a.for_each_value([&](const Value* v) { out = v; });
  return out;
}

void Encoder::input_spec(const InputSpec& s, const Argument& graph_input) {
  const InputKindInfo& info = input_kind_info(s.kind);
  w_.begin_union(info.union_key).begin_object();
  if (s.kind != InputKind::ConstantInput) w_.key("arg");
  if (s.kind == InputKind::UserInput) argument(graph_input);
  else if (s.kind == InputKind::CustomObj) custom_obj(single_value(graph_input));
  else if (s.kind != InputKind::ConstantInput) name(single_value(graph_input));
  if (!info.target_key.empty()) w_.key(info.target_key).string(s.target);
  if (s.kind == InputKind::Buffer) w_.key("persistent").boolean(s.persistent);
  if (s.kind == InputKind::ConstantInput) {
    w_.key("value");
    argument(s.constant_value);  // ConstantValue shares the Argument's member names
  }
  w_.end_object().end_object();
}

void Encoder::output_spec(const OutputSpec& s, const Argument& graph_output) {
  const OutputKindInfo& info = output_kind_info(s.kind);
  w_.begin_union(info.union_key).begin_object().key("arg");
  if (s.kind == OutputKind::UserOutput) argument(graph_output);
  else name(single_value(graph_output));
  if (!info.target_key.empty()) w_.key(info.target_key).string(s.target);
  w_.end_object().end_object();
}

void Encoder::signature(const ExportedProgram& ep) {
  const Graph& g = ep.graph();
  w_.begin_object().key("input_specs").begin_array();
  for (size_t i = 0; i < ep.input_specs.size() && i < g.inputs().size(); ++i) {
    input_spec(ep.input_specs[i], g.inputs()[i]);
  }
  w_.end_array().key("output_specs").begin_array();
  for (size_t i = 0; i < ep.output_specs.size() && i < g.outputs().size(); ++i) {
    output_spec(ep.output_specs[i], g.outputs()[i]);
  }
  w_.end_array().end_object();
}

void Encoder::graph_module(const ExportedProgram& ep) {
  w_.begin_object().key("graph");
  graph(ep.graph());
  w_.key("signature");
  signature(ep);
  w_.key("module_call_graph").raw(json::normalized(ep.module_call_graph_json, "[]"));
  w_.key("metadata");
  json::write_string_map(w_, ep.graph_module_metadata);
  if (has(SchemaFeature::TreespecNamedtupleFields)) {
    w_.key("treespec_namedtuple_fields").raw(json::normalized(ep.treespec_namedtuple_fields_json, "{}"));
  }
  w_.end_object();
}

void Encoder::encode(const ExportedProgram& ep) {
  w_.begin_object().key("graph_module");
  graph_module(ep);
  w_.key("opset_version").begin_object();
  json::for_each_last_value(ep.opset_version, [&](const std::string& k, int64_t v) { w_.key(k).integer(v); });
  w_.end_object().key("range_constraints").begin_object();
  auto bound = [&](const char* key, const std::optional<int64_t>& b) {
    w_.key(key);
    if (b) w_.integer(*b);
    else w_.null();
  };
  json::for_each_last_value(ep.range_constraints, [&](const std::string& k, const RangeConstraint& c) {
    w_.key(k).begin_object();
    bound("min_val", c.min_val);
    bound("max_val", c.max_val);
    w_.end_object();
  });
  w_.end_object().key("schema_version").begin_object().key("major").integer(ep.schema_version.major);
  w_.key("minor").integer(minor_).end_object().key("verifiers").begin_array();
  for (const std::string& v : ep.verifiers) w_.string(v);
  w_.end_array().key("torch_version").string(ep.torch_version);
  if (has(SchemaFeature::GuardsCode)) {
    w_.key("guards_code").begin_array();
    for (const std::string& c : ep.guards_code) w_.string(c);
    w_.end_array();
  }
  w_.end_object();
}

std::string encode_with_minor(const ExportedProgram& ep, int64_t minor) {
  std::string out;
  // Roughly what a node takes; too much costs address space, not memory.
  out.reserve(1024 * (ep.graph().node_count() + ep.graph().inputs().size()) + 4096);
  Encoder(minor, out).encode(ep);  // the writer gives `out` its length when the encoder goes
  return out;
}

}  // namespace

std::string encode_tensor_meta_json(const TensorMeta& meta) {
  std::string out;
  {
    json::Writer w(out);  // gives `out` its length when it goes
    json::write_tensor_meta(w, meta);
  }
  return out;
}

std::string encode_program_json(const ExportedProgram& ep) { return encode_with_minor(ep, schema_minor_to_write(ep)); }

namespace {
// The minor `options` ask for, or why the program cannot be written in it.
Result<int64_t> minor_to_write(const ExportedProgram& ep, const JsonWriteOptions& options) {
  if (options.schema == JsonSchema::Current) return schema_minor_to_write(ep);
  SchemaNeed need = required_schema_minor(ep);
  if (need.minor > kOldestSchemaMinor) {
    return make_error("the program uses " + need.reason + ", which needs export schema 8." +
                      std::to_string(need.minor) + "; the schema 8.1 field set (PyTorch 2.4-2.8) cannot express it");
  }
  return kOldestSchemaMinor;
}
}  // namespace

Result<std::string> encode_program_json(const ExportedProgram& ep, const JsonWriteOptions& options) {
  LATHE_ASSIGN_OR_RETURN(int64_t minor, minor_to_write(ep, options));
  return encode_with_minor(ep, minor);
}

Status encode_program_json(const ExportedProgram& ep, const JsonWriteOptions& options, const ByteSource::Sink& out) {
  LATHE_ASSIGN_OR_RETURN(int64_t minor, minor_to_write(ep, options));
  Encoder e(minor, out);
  e.encode(ep);
  return e.finish();
}

}  // namespace lathe
