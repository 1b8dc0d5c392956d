// Transitional: the writer that built nlohmann documents, kept beside the
// streaming writer to show both give the same bytes on every fixture and on
// hand-made programs with every awkward string and number.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "lathe/ir/graph_assembler.h"
#include "lathe/serde/payload_config.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"
#include "lathe/serde/schema_versions.h"
#include "support/testing.h"

namespace lathe {
namespace dom_reference {
namespace json {
using Json = nlohmann::ordered_json;
Json float_json(double d);
Json sym_expr_json(const SymExpr& e);
Json sym_int_json(const SymDim& d);
Json device_json(const Device& d);
Json tensor_meta_json(const TensorMeta& m);
Json union_json(const char* key, Json value);
void append_member(Json& object, const std::string& key, Json value);
std::string dump(const Json& j);


Json float_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

Json union_json(const char* key, Json value) {
  Json j = Json::object();
  j[key] = std::move(value);
  return j;
}

Json sym_expr_json(const SymExpr& e) {
  Json j = Json::object();
  j["expr_str"] = e.expr;
  if (e.hint) {
    j["hint"] = std::visit(
        [](const auto& h) -> Json {
          using T = std::decay_t<decltype(h)>;
          if constexpr (std::is_same_v<T, int64_t>) return union_json("as_int", h);
          else if constexpr (std::is_same_v<T, bool>) return union_json("as_bool", h);
          else return union_json("as_float", float_json(h));
        },
        *e.hint);
  } else {
    j["hint"] = nullptr;
  }
  return j;
}

Json sym_int_json(const SymDim& d) {
  if (d.is_concrete()) return union_json("as_int", d.value());
  return union_json("as_expr", sym_expr_json(d.expr()));
}

Json device_json(const Device& d) {
  Json j = Json::object();
  j["type"] = d.type;
  j["index"] = d.index ? Json(*d.index) : Json(nullptr);
  return j;
}

Json tensor_meta_json(const TensorMeta& m) {
  Json j = Json::object();
  j["dtype"] = static_cast<int64_t>(m.dtype);
  Json sizes = Json::array();
  for (const auto& s : m.sizes) sizes.push_back(sym_int_json(s));
  j["sizes"] = std::move(sizes);
  j["requires_grad"] = m.requires_grad;
  j["device"] = device_json(m.device);
  Json strides = Json::array();
  for (const auto& s : m.strides) strides.push_back(sym_int_json(s));
  j["strides"] = std::move(strides);
  j["storage_offset"] = sym_int_json(m.storage_offset);
  j["layout"] = m.layout;
  return j;
}

void append_member(Json& object, const std::string& key, Json value) {
  auto& members = object.get_ref<Json::object_t&>();
  using Base = std::vector<std::pair<const std::string, Json>>;
  static_cast<Base&>(members).emplace_back(key, std::move(value));
}

std::string dump(const Json& j) {
  // Compact form: the records are machine-read, and compact output keeps
  // graph JSON for large programs small. ensure_ascii off: UTF-8 as is.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace json

using json::Json;
using json::union_json;

// One encoding pass for one minor. The minor has been checked to express
// everything the program uses, so the encoder only leaves out the fields the
// minor does not have.
class Encoder {
 public:
  explicit Encoder(int64_t minor) : minor_(minor) {}

Json name_json(const Value* v) {
  Json j = Json::object();
  j["name"] = v ? v->name() : std::string();
  return j;
}

// [each(item) for item in items]
template <typename Items, typename Each>
static Json array_json(const Items& items, Each each) {
  Json arr = Json::array();
  for (const auto& item : items) arr.push_back(each(item));
  return arr;
}

template <typename Literal>
static Json sym_arg_json(const SymArg<Literal>& s, const char* literal_key) {
  if (s.is_value()) return union_json("as_name", s.value()->name());
  if constexpr (std::is_same_v<Literal, double>) return union_json(literal_key, json::float_json(s.literal()));
  else return union_json(literal_key, s.literal());
}

Json argument_json(const Argument& a) {
  return std::visit(
      [this](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, NoneArg>) {
          return union_json("as_none", none_json());
        } else if constexpr (std::is_same_v<T, TensorRef>) {
          // Tokens too: no schema minor has an `as_token` Argument; PyTorch
          // writes a token as a tensor (f32[0]) that its spec calls a token.
          return union_json("as_tensor", name_json(x.value));
        } else if constexpr (std::is_same_v<T, TensorList>) {
          return union_json("as_tensors", array_json(x.items, [&](Value* v) { return name_json(v); }));
        } else if constexpr (std::is_same_v<T, OptionalTensor>) {
          return union_json("as_optional_tensor",
                            x.value ? union_json("as_tensor", name_json(x.value)) : union_json("as_none", none_json()));
        } else if constexpr (std::is_same_v<T, OptionalTensorList>) {
          return union_json("as_optional_tensors", array_json(x.items, [&](Value* v) {
                              return v ? union_json("as_tensor", name_json(v)) : union_json("as_none", none_json());
                            }));
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return union_json("as_int", x);
        } else if constexpr (std::is_same_v<T, IntList>) {
          return union_json("as_ints", x.items);
        } else if constexpr (std::is_same_v<T, double>) {
          return union_json("as_float", json::float_json(x));
        } else if constexpr (std::is_same_v<T, FloatList>) {
          return union_json("as_floats", array_json(x.items, [](double d) { return json::float_json(d); }));
        } else if constexpr (std::is_same_v<T, std::string>) {
          return union_json("as_string", x);
        } else if constexpr (std::is_same_v<T, StringList>) {
          return union_json("as_strings", x.items);
        } else if constexpr (std::is_same_v<T, bool>) {
          return union_json("as_bool", x);
        } else if constexpr (std::is_same_v<T, BoolList>) {
          return union_json("as_bools", array_json(x.items, [](bool b) { return Json(b); }));
        } else if constexpr (std::is_same_v<T, SymIntArg>) {
          return union_json("as_sym_int", sym_arg_json(x, "as_int"));
        } else if constexpr (std::is_same_v<T, SymIntList>) {
          return union_json("as_sym_ints", array_json(x.items, [](const auto& s) { return sym_arg_json(s, "as_int"); }));
        } else if constexpr (std::is_same_v<T, SymFloatArg>) {
          return union_json("as_sym_float", sym_arg_json(x, "as_float"));
        } else if constexpr (std::is_same_v<T, SymFloatList>) {
          return union_json("as_sym_floats", array_json(x.items, [](const auto& s) { return sym_arg_json(s, "as_float"); }));
        } else if constexpr (std::is_same_v<T, SymBoolArg>) {
          return union_json("as_sym_bool", sym_arg_json(x, "as_bool"));
        } else if constexpr (std::is_same_v<T, SymBoolList>) {
          return union_json("as_sym_bools", array_json(x.items, [](const auto& s) { return sym_arg_json(s, "as_bool"); }));
        } else if constexpr (std::is_same_v<T, ScalarTypeArg>) {
          return union_json("as_scalar_type", static_cast<int64_t>(x.dtype));
        } else if constexpr (std::is_same_v<T, MemoryFormatArg>) {
          return union_json("as_memory_format", x.format);
        } else if constexpr (std::is_same_v<T, LayoutArg>) {
          return union_json("as_layout", x.layout);
        } else if constexpr (std::is_same_v<T, DeviceArg>) {
          return union_json("as_device", json::device_json(x.device));
        } else {
          return compound_json(x);
        }
      },
      a.v);
}

// The Argument kinds with structure of their own: subgraphs, objects,
// operators, complex numbers, nested lists, string-keyed maps.
template <typename T>
Json compound_json(const T& x) {
  if constexpr (std::is_same_v<T, GraphArg>) {
    Json j = Json::object();
    j["name"] = x.name;
    j["graph"] = graph_json(*x.graph);
    return union_json("as_graph", std::move(j));
  } else if constexpr (std::is_same_v<T, CustomObjRef>) {
    Json j = Json::object();
    j["name"] = x.value->name();
    j["class_fqn"] = x.value->class_fqn();
    return union_json("as_custom_obj", std::move(j));
  } else if constexpr (std::is_same_v<T, OperatorArg>) {
    return union_json("as_operator", x.name);
  } else if constexpr (std::is_same_v<T, ComplexArg>) {
    Json j = Json::object();
    j["real"] = json::float_json(x.real);
    j["imag"] = json::float_json(x.imag);
    return union_json("as_complex", std::move(j));
  } else if constexpr (std::is_same_v<T, NestedTensorList>) {
    return union_json("as_nested_tensors", array_json(x.items, [&](const std::vector<Value*>& list) {
                        return array_json(list, [&](Value* v) { return name_json(v); });
                      }));
  } else if constexpr (std::is_same_v<T, IntLists>) {
    return union_json("as_int_lists", x.items);
  } else if constexpr (std::is_same_v<T, FloatLists>) {
    return union_json("as_float_lists", array_json(x.items, [](const std::vector<double>& list) {
                        return array_json(list, [](double d) { return json::float_json(d); });
                      }));
  } else {
    static_assert(std::is_same_v<T, StringToArgument>);
    Json j = Json::object();
    for (const auto& [k, sub] : x.items) j[k] = argument_json(sub);
    return union_json("as_string_to_argument", std::move(j));
  }
}

// What torch.export gives an effect token: an empty float tensor.
static TensorMeta token_meta() {
  TensorMeta m;
  m.dtype = DType::Float32;
  m.sizes = {SymDim(0)};
  m.strides = {SymDim(1)};
  m.storage_offset = SymDim(0);
  return m;
}

Json metadata_json(const std::vector<std::pair<std::string, std::string>>& md) {
  Json j = Json::object();
  for (const auto& [k, v] : md) j[k] = v;
  return j;
}

void record_value(const Value* v, Json& tensor_values, Json& sym_int_values, Json& sym_bool_values,
                  Json& sym_float_values, Json& custom_obj_values) {
  switch (v->kind()) {
    case ValueKind::Tensor:
      if (v->meta()) json::append_member(tensor_values, v->name(), json::tensor_meta_json(*v->meta()));
      break;
    case ValueKind::SymInt:
      if (v->sym() && v->sym()->index() == 0) json::append_member(sym_int_values, v->name(), json::sym_int_json(std::get<0>(*v->sym())));
      break;
    case ValueKind::SymBool:
      if (v->sym() && v->sym()->index() == 1) {
        const auto& b = std::get<1>(*v->sym());
        sym_bool_values[v->name()] = b.v.index() == 0 ? union_json("as_bool", std::get<0>(b.v))
                                                      : union_json("as_expr", json::sym_expr_json(std::get<1>(b.v)));
      }
      break;
    case ValueKind::SymFloat:
      if (v->sym() && v->sym()->index() == 2) {
        const auto& f = std::get<2>(*v->sym());
        sym_float_values[v->name()] = f.v.index() == 0
                                          ? union_json("as_float", json::float_json(std::get<0>(f.v)))
                                          : union_json("as_expr", json::sym_expr_json(std::get<1>(f.v)));
      }
      break;
    case ValueKind::CustomObj: {
      Json j = Json::object();
      j["name"] = v->name();
      j["class_fqn"] = v->class_fqn();
      json::append_member(custom_obj_values, v->name(), std::move(j));
      break;
    }
    case ValueKind::Token:
      json::append_member(tensor_values, v->name(), json::tensor_meta_json(token_meta()));
      break;
  }
}

Json graph_json(const Graph& g) {
  Json tensor_values = Json::object(), sym_int_values = Json::object(), sym_bool_values = Json::object(),
       sym_float_values = Json::object(), custom_obj_values = Json::object();
  auto record = [&](const Value* v) {
    record_value(v, tensor_values, sym_int_values, sym_bool_values, sym_float_values, custom_obj_values);
  };
  Json inputs = Json::array();
  for (const auto& in : g.inputs()) {
    inputs.push_back(argument_json(in));
    in.for_each_value(record);
  }
  Json nodes = Json::array();
  for (const Node* n : g.nodes()) {
    Json nj = Json::object();
    nj["target"] = n->target();
    Json ins = Json::array();
    for (const auto& na : n->inputs()) {
      Json a = Json::object();
      a["name"] = na.name;
      a["arg"] = argument_json(na.arg);
      if (has(SchemaFeature::NamedArgumentKind)) a["kind"] = na.kind ? Json(static_cast<int64_t>(*na.kind)) : Json(nullptr);
      ins.push_back(std::move(a));
    }
    nj["inputs"] = std::move(ins);
    Json outs = Json::array();
    for (const auto& o : n->outputs()) outs.push_back(argument_json(o));
    nj["outputs"] = std::move(outs);
    nj["metadata"] = metadata_json(n->metadata());
    if (has(SchemaFeature::HopSingleTensorReturn)) {
      nj["is_hop_single_tensor_return"] =
          n->is_hop_single_tensor_return() ? Json(*n->is_hop_single_tensor_return()) : Json(nullptr);
    }
    if (has(SchemaFeature::NodeName)) nj["name"] = n->explicit_name() ? Json(*n->explicit_name()) : Json(nullptr);
    nodes.push_back(std::move(nj));
    for (const Value* v : n->defined_values()) record(v);
  }
  Json outputs = Json::array();
  for (const auto& o : g.outputs()) outputs.push_back(argument_json(o));

  Json j = Json::object();
  j["inputs"] = std::move(inputs);
  j["outputs"] = std::move(outputs);
  j["nodes"] = std::move(nodes);
  j["tensor_values"] = std::move(tensor_values);
  j["sym_int_values"] = std::move(sym_int_values);
  j["sym_bool_values"] = std::move(sym_bool_values);
  j["is_single_tensor_return"] = g.is_single_tensor_return();
  j["custom_obj_values"] = std::move(custom_obj_values);
  if (has(SchemaFeature::SymFloat)) j["sym_float_values"] = std::move(sym_float_values);
  return j;
}

Value* single_value(const Argument& a) {
  Value* out = nullptr;
  a.for_each_value([&](Value* v) { out = v; });
  return out;
}

Json input_spec_json(const InputSpec& s, const Argument& graph_input) {
  Value* v = single_value(graph_input);
  Json body = Json::object();
  switch (s.kind) {
    case InputKind::UserInput:
      body["arg"] = argument_json(graph_input);
      return union_json("user_input", std::move(body));
    case InputKind::Parameter:
      body["arg"] = name_json(v);
      body["parameter_name"] = s.target;
      return union_json("parameter", std::move(body));
    case InputKind::Buffer:
      body["arg"] = name_json(v);
      body["buffer_name"] = s.target;
      body["persistent"] = s.persistent;
      return union_json("buffer", std::move(body));
    case InputKind::TensorConstant:
      body["arg"] = name_json(v);
      body["tensor_constant_name"] = s.target;
      return union_json("tensor_constant", std::move(body));
    case InputKind::CustomObj: {
      Json arg = Json::object();
      arg["name"] = v ? v->name() : std::string();
      arg["class_fqn"] = v ? v->class_fqn() : std::string();
      body["arg"] = std::move(arg);
      body["custom_obj_name"] = s.target;
      return union_json("custom_obj", std::move(body));
    }
    case InputKind::Token:
      body["arg"] = name_json(v);
      return union_json("token", std::move(body));
    case InputKind::ConstantInput: {
      body["name"] = s.target;
      Json value = argument_json(s.constant_value);  // ConstantValue shares the member names
      body["value"] = std::move(value);
      return union_json("constant_input", std::move(body));
    }
  }
  return Json();
}

Json output_spec_json(const OutputSpec& s, const Argument& graph_output) {
  Value* v = single_value(graph_output);
  Json body = Json::object();
  auto with_target = [&](const char* kind, const char* target_key) {
    body["arg"] = name_json(v);
    body[target_key] = s.target;
    return union_json(kind, std::move(body));
  };
  switch (s.kind) {
    case OutputKind::UserOutput:
      body["arg"] = argument_json(graph_output);
      return union_json("user_output", std::move(body));
    case OutputKind::LossOutput:
      body["arg"] = name_json(v);
      return union_json("loss_output", std::move(body));
    case OutputKind::BufferMutation: return with_target("buffer_mutation", "buffer_name");
    case OutputKind::GradientToParameter: return with_target("gradient_to_parameter", "parameter_name");
    case OutputKind::GradientToUserInput: return with_target("gradient_to_user_input", "user_input_name");
    case OutputKind::UserInputMutation: return with_target("user_input_mutation", "user_input_name");
    case OutputKind::Token:
      body["arg"] = name_json(v);
      return union_json("token", std::move(body));
    case OutputKind::ParameterMutation:
      return with_target("parameter_mutation", "parameter_name");
  }
  return Json();
}

Json parse_carried(const std::string& text, Json fallback) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

std::string encode(const ExportedProgram& ep) {
  const Graph& g = ep.graph();
  Json input_specs = Json::array();
  for (size_t i = 0; i < ep.input_specs.size() && i < g.inputs().size(); ++i) {
    input_specs.push_back(input_spec_json(ep.input_specs[i], g.inputs()[i]));
  }
  Json output_specs = Json::array();
  for (size_t i = 0; i < ep.output_specs.size() && i < g.outputs().size(); ++i) {
    output_specs.push_back(output_spec_json(ep.output_specs[i], g.outputs()[i]));
  }
  Json signature = Json::object();
  signature["input_specs"] = std::move(input_specs);
  signature["output_specs"] = std::move(output_specs);

  Json gm = Json::object();
  gm["graph"] = graph_json(g);
  gm["signature"] = std::move(signature);
  gm["module_call_graph"] = parse_carried(ep.module_call_graph_json, Json::array());
  gm["metadata"] = metadata_json(ep.graph_module_metadata);
  if (has(SchemaFeature::TreespecNamedtupleFields)) gm["treespec_namedtuple_fields"] = parse_carried(ep.treespec_namedtuple_fields_json, Json::object());

  Json root = Json::object();
  root["graph_module"] = std::move(gm);
  Json opset = Json::object();
  for (const auto& [k, v] : ep.opset_version) opset[k] = v;
  root["opset_version"] = std::move(opset);
  Json ranges = Json::object();
  for (const auto& [k, c] : ep.range_constraints) {
    Json r = Json::object();
    r["min_val"] = c.min_val ? Json(*c.min_val) : Json(nullptr);
    r["max_val"] = c.max_val ? Json(*c.max_val) : Json(nullptr);
    ranges[k] = std::move(r);
  }
  root["range_constraints"] = std::move(ranges);
  Json sv = Json::object();
  sv["major"] = ep.schema_version.major;
  sv["minor"] = minor_;
  root["schema_version"] = std::move(sv);
  root["verifiers"] = ep.verifiers;
  root["torch_version"] = ep.torch_version;
  if (has(SchemaFeature::GuardsCode)) root["guards_code"] = ep.guards_code;
  return json::dump(root);
}

 private:
  bool has(SchemaFeature f) const { return schema_has(minor_, f); }
  // Before 8.3 `as_none` was an empty tuple, written [].
  Json none_json() const { return has(SchemaFeature::AsNoneBool) ? Json(true) : Json::array(); }

  int64_t minor_;
};



std::string dom_encode_program_json(const ExportedProgram& ep) { return Encoder(schema_minor_to_write(ep)).encode(ep); }

Result<std::string> dom_encode_program_json(const ExportedProgram& ep, const JsonWriteOptions& options) {
  if (options.schema == JsonSchema::Current) return dom_encode_program_json(ep);
  SchemaNeed need = required_schema_minor(ep);
  if (need.minor > kOldestSchemaMinor) {
    return make_error("the program uses " + need.reason + ", which needs export schema 8." +
                      std::to_string(need.minor) + "; the schema 8.1 field set (PyTorch 2.4-2.8) cannot express it");
  }
  return Encoder(kOldestSchemaMinor).encode(ep);
}


std::string dom_encode_payload_config(const PayloadConfig& config) {
  json::Json entries = json::Json::object();
  for (const auto& [fqn, m] : config) {
    json::Json j = json::Json::object();
    j["path_name"] = m.path_name;
    j["is_param"] = m.is_param;
    j["use_pickle"] = m.use_pickle;
    j["tensor_meta"] = m.tensor_meta ? json::tensor_meta_json(*m.tensor_meta) : json::Json(nullptr);
    json::append_member(entries, fqn, std::move(j));
  }
  json::Json root = json::Json::object();
  root["config"] = std::move(entries);
  return json::dump(root);
}


}  // namespace dom_reference

namespace {

namespace fs = std::filesystem;

PayloadConfig state_config(const ExportedProgram& ep) {
  PayloadConfig config;
  auto add = [&](const NamedTensors& tensors, bool is_param) {
    for (const auto& [fqn, t] : tensors) {
      config.emplace_back(fqn, PayloadMeta{"weight_" + fqn, is_param, false, intern_tensor_meta(payload_tensor_meta(t))});
    }
  };
  add(ep.parameters, true);
  add(ep.buffers, false);
  add(ep.constants, false);
  config.emplace_back("opaque", PayloadMeta{"custom_obj_0", false, true, std::nullopt});
  return config;
}

// Both writers, both field sets: the same bytes (or the same refusal).
void expect_same_bytes(const ExportedProgram& ep, const std::string& what) {
  EXPECT_EQ(encode_program_json(ep), dom_reference::dom_encode_program_json(ep)) << what;
  auto v81 = encode_program_json(ep, JsonWriteOptions{JsonSchema::V8_1});
  auto dom81 = dom_reference::dom_encode_program_json(ep, JsonWriteOptions{JsonSchema::V8_1});
  ASSERT_EQ(v81.ok(), dom81.ok()) << what;
  if (v81.ok()) EXPECT_EQ(*v81, *dom81) << what << " (schema 8.1)";
  else EXPECT_EQ(v81.error().message(), dom81.error().message()) << what;
  PayloadConfig config = state_config(ep);
  EXPECT_EQ(encode_payload_config(config), dom_reference::dom_encode_payload_config(config)) << what;
}

TEST(JsonWriterEquivalence, EveryFixtureGivesTheBytesTheDomWriterGave) {
  size_t programs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(testing::source_path("fixtures"))) {
    if (entry.path().extension() != ".pt2") continue;
    auto program = read_pt2(entry.path().string());
    if (!program.ok()) continue;  // a fixture of a reader error
    for (const Method& m : program->methods) {
      expect_same_bytes(*m.program, entry.path().string() + " method " + m.name);
      ++programs;
    }
  }
  EXPECT_GT(programs, 40u);
}

// Every argument kind, with the strings and numbers where an encoder could
// differ: escapes, non-ASCII, invalid UTF-8, non-finite and extreme floats,
// repeated keys.
TEST(JsonWriterEquivalence, AwkwardStringsNumbersAndRepeatedKeys) {
  auto program = read_pt2(testing::source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  ExportedProgram& ep = *program->methods[0].program;
  // Every byte of this literal but its terminator (an explicit length: it
  // holds a NUL of its own).
  static constexpr char kControl[] = "nul\0 and \x01\x1f\x7f";
  const std::vector<std::string> strings = {
      "plain", "quote\" backslash\\ slash/", std::string(kControl, sizeof kControl - 1), "\b\f\n\r\t",
      "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x98\x80", "\xff", "a\xc3(b", "\xe2\x82", "\xe0\x80\x80", "\xed\xa0\x80",
      "\xf4\x90\x80\x80", "\xf0\x9f\x98", "ok\xc3", "\x80\x80"};
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> floats = {0.0, -0.0, 0.1, 1.0, -2.5, 1e300, 5e-324, 1e16, 1e15, 1e-5, 1e-4,
                                      123456789012345680000.0, 3.141592653589793, std::nan(""), inf, -inf};
  Node* n = ep.graph().first_node();
  ASSERT_NE(n, nullptr);
  std::vector<NamedArgument> args = n->inputs();
  auto add = [&](Argument a, std::optional<ArgKind> kind = ArgKind::Keyword) {
    args.push_back(NamedArgument{"extra_" + std::to_string(args.size()), std::move(a), kind});
  };
  for (const std::string& s : strings) add(s);
  for (double d : floats) add(d);
  add(FloatList{floats});
  add(IntList{{0, -1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}});
  add(StringList{strings}, std::nullopt);
  add(BoolList{{true, false}});
  add(ComplexArg{std::nan(""), -0.0});
  add(FloatLists{{floats, {}}});
  add(IntLists{{{1, 2}, {}}});
  add(StringToArgument{{{"k", Argument(int64_t{1})}, {"\xff", Argument(2.5)}, {"k", Argument(std::string("x"))}}});
  add(OperatorArg{"aten::add.Tensor"});
  add(DeviceArg{Device{"cuda", 1}});
  add(ScalarTypeArg{DType::BFloat16});
  add(MemoryFormatArg{2});
  add(LayoutArg{7});
  add(SymIntArg{int64_t{-7}});
  add(SymFloatArg{inf});
  add(SymBoolArg{true});
  add(SymIntList{{SymIntArg{int64_t{3}}}});
  add(OptionalTensor{nullptr});
  add(OptionalTensorList{{nullptr}});
  add(NoneArg{});
  GraphAssembler(ep.graph()).set_inputs(n, std::move(args));
  n->mutable_metadata() = {{"a", "1"}, {"b", strings[1]}, {"a", "2"}, {strings[5], strings[6]}, {"c", strings[4]}};
  n->set_explicit_name(strings[4]);
  n->set_is_hop_single_tensor_return(false);
  ep.graph_module_metadata = {{"x", "1"}, {"x", "2"}};
  ep.opset_version = {{"aten", 10}, {"custom", 1}, {"aten", 11}};
  ep.range_constraints = {{"s0", RangeConstraint{2, std::nullopt}}, {"s1", {}}, {"s0", RangeConstraint{1, 8}}};
  ep.verifiers = {strings[2]};
  ep.guards_code = {strings[7], "x"};
  ep.torch_version = strings[3];
  ep.module_call_graph_json = " [ {\"fqn\" : \"\", \"f\": [1.0, 1e5, -0, 2.5e-8, 1E400, \"\\u00e9\"]} ] ";
  ep.treespec_namedtuple_fields_json = "not json";
  expect_same_bytes(ep, "awkward program");
  ep.schema_version.minor = 1;  // the oldest field set: as_none as [], no kinds, no names
  expect_same_bytes(ep, "awkward program, read as 8.1");
}

}  // namespace
}  // namespace lathe
