// models/<name>.json -> ExportedProgram, streaming (simdjson On-Demand).
//
// Values are created as their defining placeholder or node is decoded, and
// every reference is resolved to a lathe::Value* immediately, so a name used before
// it is defined (or never defined) is an error at the exact JSON path.
// PyTorch writes a graph's tensor_values after its nodes; they are read
// first (an out-of-order member lookup) so each value gets its metadata when
// it is created.
#include <cmath>
#include <unordered_map>

#include "lathe/ir/graph_assembler.h"
#include "lathe/serde/json_reader.h"
#include "lathe/serde/program_json.h"

namespace lathe {
namespace {

using json::Object;
using JValue = json::Value;

// The per-graph tables that describe values by name. Keys view the
// document's string buffer, which outlives decoding.
struct ValueTables {
  std::unordered_map<std::string_view, TensorMeta> tensor_values;
  std::unordered_map<std::string_view, SymDim> sym_int_values;
  std::unordered_map<std::string_view, SymBoolValue> sym_bool_values;
  std::unordered_map<std::string_view, SymFloatValue> sym_float_values;
};

class ProgramDecoder {
 public:
  explicit ProgramDecoder(const JsonDecodeOptions& options) : r_(options.origin), options_(options) {}
  Result<std::unique_ptr<ExportedProgram>> decode(JValue& root);
  Status decode_body(Object& root, const JsonPath& p, ExportedProgram& ep);

 private:
  Status decode_graph(JValue& v, const JsonPath& p, Graph& g, size_t depth);
  Status load_tables(Object& graph, const JsonPath& p, ValueTables& t);
  Status decode_node(JValue& v, const JsonPath& p, Graph& g, ValueTables& t, size_t depth);
  Result<Argument> decode_argument(JValue& v, const JsonPath& p, Graph& g, size_t depth);
  Result<lathe::Value*> lookup(Graph& g, std::string_view name, const JsonPath& p);
  Result<std::string_view> name_field(JValue& v, const JsonPath& p);  // {"name": ...}
  Result<lathe::Value*> lookup_tensor_arg(Graph& g, JValue& v, const JsonPath& p);
  template <typename Literal>
  Result<SymArg<Literal>> decode_sym_arg(JValue& v, const JsonPath& p, Graph& g);
  Result<lathe::Value*> define(Graph& g, Node* producer, ValueKind kind, std::string_view name, ValueTables& t,
                               const JsonPath& p);
  Result<Argument> decode_defining_argument(JValue& v, const JsonPath& p, Graph& g, Node* producer, ValueTables& t);
  Status decode_signature(JValue& v, const JsonPath& p, ExportedProgram& ep);
  Status decode_metadata(JValue& v, const JsonPath& p, std::vector<std::pair<std::string, std::string>>& out);
  Result<std::optional<std::string>> spec_arg_name(JValue& v, const JsonPath& p, size_t depth = 0);

  json::Reader r_;
  const JsonDecodeOptions& options_;
};

template <typename Map, typename Decode>
Status load_table(const json::Reader& r, Object& graph, std::string_view key, const JsonPath& p, Map& out,
                  Decode&& decode) {
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> table, r.optional_field(graph, key, p));
  if (!table) return Status::Ok();
  return r.for_each_member(*table, p.field(key), [&](std::string_view name, JValue& v, const JsonPath& mp) -> Status {
    LATHE_ASSIGN_OR_RETURN(auto decoded, decode(v, mp));
    out.emplace(name, std::move(decoded));
    return Status::Ok();
  });
}

Status ProgramDecoder::load_tables(Object& graph, const JsonPath& p, ValueTables& t) {
  LATHE_RETURN_IF_ERROR(load_table(r_, graph, "tensor_values", p, t.tensor_values,
                                   [&](JValue& v, const JsonPath& mp) { return r_.tensor_meta(v, mp); }));
  LATHE_RETURN_IF_ERROR(load_table(r_, graph, "sym_int_values", p, t.sym_int_values,
                                   [&](JValue& v, const JsonPath& mp) { return r_.sym_int(v, mp); }));
  LATHE_RETURN_IF_ERROR(load_table(r_, graph, "sym_bool_values", p, t.sym_bool_values,
                                   [&](JValue& v, const JsonPath& mp) -> Result<SymBoolValue> {
                                     SymBoolValue out;
                                     LATHE_RETURN_IF_ERROR(r_.union_member(
                                         v, mp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
                                           if (k == "as_bool") {
                                             LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(x, xp));
                                             out.v = b;
                                           } else {
                                             LATHE_ASSIGN_OR_RETURN(SymExpr e, r_.sym_expr(x, xp));
                                             out.v = std::move(e);
                                           }
                                           return Status::Ok();
                                         }));
                                     return out;
                                   }));
  LATHE_RETURN_IF_ERROR(load_table(r_, graph, "sym_float_values", p, t.sym_float_values,
                                   [&](JValue& v, const JsonPath& mp) -> Result<SymFloatValue> {
                                     SymFloatValue out;
                                     LATHE_RETURN_IF_ERROR(r_.union_member(
                                         v, mp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
                                           if (k == "as_float") {
                                             LATHE_ASSIGN_OR_RETURN(double d, r_.float64(x, xp));
                                             out.v = d;
                                           } else {
                                             LATHE_ASSIGN_OR_RETURN(SymExpr e, r_.sym_expr(x, xp));
                                             out.v = std::move(e);
                                           }
                                           return Status::Ok();
                                         }));
                                     return out;
                                   }));
  return Status::Ok();
}

Result<lathe::Value*> ProgramDecoder::define(Graph& g, Node* producer, ValueKind kind, std::string_view name,
                                             ValueTables& t, const JsonPath& p) {
  std::string n(name);
  if (g.find_value(n)) return r_.error(p, "value '" + n + "' is defined twice");
  GraphAssembler a(g);
  lathe::Value* v = producer ? a.new_node_value(producer, kind, n) : a.insert_placeholder(kind, n);
  switch (kind) {
    case ValueKind::Tensor: {
      auto it = t.tensor_values.find(name);
      if (it == t.tensor_values.end()) return r_.error(p, "tensor '" + n + "' has no entry in tensor_values");
      v->set_meta(std::move(it->second));
      break;
    }
    case ValueKind::SymInt: {
      auto it = t.sym_int_values.find(name);
      if (it != t.sym_int_values.end()) v->set_sym(it->second);
      break;
    }
    case ValueKind::SymBool: {
      auto it = t.sym_bool_values.find(name);
      if (it != t.sym_bool_values.end()) v->set_sym(it->second);
      break;
    }
    case ValueKind::SymFloat: {
      auto it = t.sym_float_values.find(name);
      if (it != t.sym_float_values.end()) v->set_sym(it->second);
      break;
    }
    default: break;
  }
  return v;
}

Result<lathe::Value*> ProgramDecoder::lookup(Graph& g, std::string_view name, const JsonPath& p) {
  lathe::Value* v = g.find_value(name);
  if (!v) return r_.error(p, "references undefined value '" + std::string(name) + "'");
  return v;
}

Result<std::string_view> ProgramDecoder::name_field(JValue& v, const JsonPath& p) {
  std::optional<std::string_view> name;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key != "name") return Status::Ok();
    LATHE_ASSIGN_OR_RETURN(name, r_.string(x, mp));
    return Status::Ok();
  }));
  if (!name) return r_.error(p, "missing field 'name'");
  return *name;
}

Result<lathe::Value*> ProgramDecoder::lookup_tensor_arg(Graph& g, JValue& v, const JsonPath& p) {
  LATHE_ASSIGN_OR_RETURN(std::string_view name, name_field(v, p));
  return lookup(g, name, p.field("name"));
}

template <typename Literal>
Result<SymArg<Literal>> ProgramDecoder::decode_sym_arg(JValue& v, const JsonPath& p, Graph& g) {
  SymArg<Literal> out{};
  LATHE_RETURN_IF_ERROR(r_.union_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "as_name") {
      LATHE_ASSIGN_OR_RETURN(std::string_view name, r_.string(x, mp));
      LATHE_ASSIGN_OR_RETURN(lathe::Value * val, lookup(g, name, mp));
      out.v = val;
      return Status::Ok();
    }
    if constexpr (std::is_same_v<Literal, int64_t>) {
      if (key == "as_int") {
        LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(x, mp));
        out.v = i;
        return Status::Ok();
      }
    } else if constexpr (std::is_same_v<Literal, double>) {
      if (key == "as_float") {
        LATHE_ASSIGN_OR_RETURN(double d, r_.float64(x, mp));
        out.v = d;
        return Status::Ok();
      }
    } else {
      if (key == "as_bool") {
        LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(x, mp));
        out.v = b;
        return Status::Ok();
      }
    }
    return r_.error(p, "unknown member '" + std::string(key) + "'");
  }));
  return out;
}

Result<Argument> ProgramDecoder::decode_argument(JValue& v, const JsonPath& p, Graph& g, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "nesting deeper than " + std::to_string(options_.max_depth));
  Argument out;
  LATHE_RETURN_IF_ERROR(r_.union_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    // Decodes every element of a list argument with `item`.
    auto list = [&](auto& items, auto&& item) -> Status {
      return r_.for_each_element(x, mp, [&](JValue& e, const JsonPath& ip) -> Status {
        LATHE_ASSIGN_OR_RETURN(auto decoded, item(e, ip));
        items.push_back(std::move(decoded));
        return Status::Ok();
      });
    };
    auto tensor = [&](JValue& e, const JsonPath& ip) { return lookup_tensor_arg(g, e, ip); };
    auto optional_tensor = [&](JValue& e, const JsonPath& ip) -> Result<lathe::Value*> {
      lathe::Value* t = nullptr;
      LATHE_RETURN_IF_ERROR(r_.union_member(e, ip, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "as_none") return Status::Ok();
        if (k != "as_tensor") return r_.error(ip, "unknown OptionalTensorArgument member '" + std::string(k) + "'");
        LATHE_ASSIGN_OR_RETURN(t, lookup_tensor_arg(g, y, yp));
        return Status::Ok();
      }));
      return t;
    };
    auto integer = [&](JValue& e, const JsonPath& ip) { return r_.int64(e, ip); };
    auto floating = [&](JValue& e, const JsonPath& ip) { return r_.float64(e, ip); };

    if (key == "as_none") {
      out = NoneArg{};
    } else if (key == "as_tensor") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * t, tensor(x, mp));
      out = TensorRef{t};
    } else if (key == "as_tensors") {
      TensorList l;
      LATHE_RETURN_IF_ERROR(list(l.items, tensor));
      out = std::move(l);
    } else if (key == "as_int") {
      LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(x, mp));
      out = i;
    } else if (key == "as_ints") {
      IntList l;
      LATHE_RETURN_IF_ERROR(list(l.items, integer));
      out = std::move(l);
    } else if (key == "as_float") {
      LATHE_ASSIGN_OR_RETURN(double d, r_.float64(x, mp));
      out = d;
    } else if (key == "as_floats") {
      FloatList l;
      LATHE_RETURN_IF_ERROR(list(l.items, floating));
      out = std::move(l);
    } else if (key == "as_string") {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
      out = std::string(s);
    } else if (key == "as_strings") {
      StringList l;
      LATHE_RETURN_IF_ERROR(list(l.items, [&](JValue& e, const JsonPath& ip) -> Result<std::string> {
        LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(e, ip));
        return std::string(s);
      }));
      out = std::move(l);
    } else if (key == "as_bool") {
      LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(x, mp));
      out = b;
    } else if (key == "as_bools") {
      BoolList l;
      LATHE_RETURN_IF_ERROR(list(l.items, [&](JValue& e, const JsonPath& ip) { return r_.boolean(e, ip); }));
      out = std::move(l);
    } else if (key == "as_sym_int") {
      LATHE_ASSIGN_OR_RETURN(SymIntArg s, decode_sym_arg<int64_t>(x, mp, g));
      out = s;
    } else if (key == "as_sym_ints") {
      SymIntList l;
      LATHE_RETURN_IF_ERROR(
          list(l.items, [&](JValue& e, const JsonPath& ip) { return decode_sym_arg<int64_t>(e, ip, g); }));
      out = std::move(l);
    } else if (key == "as_sym_float") {
      LATHE_ASSIGN_OR_RETURN(SymFloatArg s, decode_sym_arg<double>(x, mp, g));
      out = s;
    } else if (key == "as_sym_floats") {
      SymFloatList l;
      LATHE_RETURN_IF_ERROR(
          list(l.items, [&](JValue& e, const JsonPath& ip) { return decode_sym_arg<double>(e, ip, g); }));
      out = std::move(l);
    } else if (key == "as_sym_bool") {
      LATHE_ASSIGN_OR_RETURN(SymBoolArg s, decode_sym_arg<bool>(x, mp, g));
      out = s;
    } else if (key == "as_sym_bools") {
      SymBoolList l;
      LATHE_RETURN_IF_ERROR(
          list(l.items, [&](JValue& e, const JsonPath& ip) { return decode_sym_arg<bool>(e, ip, g); }));
      out = std::move(l);
    } else if (key == "as_scalar_type") {
      LATHE_ASSIGN_OR_RETURN(int64_t code, r_.int64(x, mp));
      auto dt = dtype_from_schema(code);
      if (!dt) return r_.error(mp, "unknown scalar type " + std::to_string(code));
      out = ScalarTypeArg{*dt};
    } else if (key == "as_memory_format") {
      LATHE_ASSIGN_OR_RETURN(int64_t f, r_.int64(x, mp));
      out = MemoryFormatArg{f};
    } else if (key == "as_layout") {
      LATHE_ASSIGN_OR_RETURN(int64_t l, r_.int64(x, mp));
      out = LayoutArg{l};
    } else if (key == "as_device") {
      LATHE_ASSIGN_OR_RETURN(Device d, r_.device(x, mp));
      out = DeviceArg{std::move(d)};
    } else if (key == "as_optional_tensors") {
      OptionalTensorList l;
      LATHE_RETURN_IF_ERROR(list(l.items, optional_tensor));
      out = std::move(l);
    } else if (key == "as_optional_tensor") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * t, optional_tensor(x, mp));
      out = OptionalTensor{t};
    } else if (key == "as_graph") {
      GraphArg ga;
      ga.graph = std::make_shared<Graph>();
      bool have_graph = false;
      LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "name") {
          LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(y, yp));
          ga.name = std::string(s);
        } else if (k == "graph") {
          have_graph = true;
          return decode_graph(y, yp, *ga.graph, depth + 1);
        }
        return Status::Ok();
      }));
      if (!have_graph) return r_.error(mp, "missing field 'graph'");
      out = std::move(ga);
    } else if (key == "as_custom_obj") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * obj, tensor(x, mp));
      out = CustomObjRef{obj};
    } else if (key == "as_operator") {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
      out = OperatorArg{std::string(s)};
    } else if (key == "as_complex") {
      ComplexArg c;
      LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "real") {
          LATHE_ASSIGN_OR_RETURN(c.real, r_.float64(y, yp));
        } else if (k == "imag") {
          LATHE_ASSIGN_OR_RETURN(c.imag, r_.float64(y, yp));
        }
        return Status::Ok();
      }));
      out = c;
    } else if (key == "as_nested_tensors") {
      NestedTensorList l;
      LATHE_RETURN_IF_ERROR(list(l.items, [&](JValue& e, const JsonPath& ip) -> Result<std::vector<lathe::Value*>> {
        std::vector<lathe::Value*> inner;
        LATHE_RETURN_IF_ERROR(r_.for_each_element(e, ip, [&](JValue& t, const JsonPath& tp) -> Status {
          LATHE_ASSIGN_OR_RETURN(lathe::Value * tv, tensor(t, tp));
          inner.push_back(tv);
          return Status::Ok();
        }));
        return inner;
      }));
      out = std::move(l);
    } else if (key == "as_int_lists") {
      IntLists l;
      LATHE_RETURN_IF_ERROR(list(l.items, [&](JValue& e, const JsonPath& ip) -> Result<std::vector<int64_t>> {
        std::vector<int64_t> inner;
        LATHE_RETURN_IF_ERROR(r_.for_each_element(e, ip, [&](JValue& n, const JsonPath& np) -> Status {
          LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(n, np));
          inner.push_back(i);
          return Status::Ok();
        }));
        return inner;
      }));
      out = std::move(l);
    } else if (key == "as_float_lists") {
      FloatLists l;
      LATHE_RETURN_IF_ERROR(list(l.items, [&](JValue& e, const JsonPath& ip) -> Result<std::vector<double>> {
        std::vector<double> inner;
        LATHE_RETURN_IF_ERROR(r_.for_each_element(e, ip, [&](JValue& n, const JsonPath& np) -> Status {
          LATHE_ASSIGN_OR_RETURN(double d, r_.float64(n, np));
          inner.push_back(d);
          return Status::Ok();
        }));
        return inner;
      }));
      out = std::move(l);
    } else if (key == "as_string_to_argument") {
      StringToArgument map;
      LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        LATHE_ASSIGN_OR_RETURN(Argument sub, decode_argument(y, yp, g, depth + 1));
        map.items.emplace_back(std::string(k), std::move(sub));
        return Status::Ok();
      }));
      out = std::move(map);
    } else {
      return r_.error(p, "unknown Argument member '" + std::string(key) + "'");
    }
    return Status::Ok();
  }));
  return out;
}

Result<Argument> ProgramDecoder::decode_defining_argument(JValue& v, const JsonPath& p, Graph& g, Node* producer,
                                                          ValueTables& t) {
  Argument out;
  bool literal = false;
  // Literal outputs are rare; they are decoded from the raw text again.
  std::string raw_literal;
  LATHE_RETURN_IF_ERROR(r_.union_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    auto define_named = [&](ValueKind kind, JValue& e, const JsonPath& ep) -> Result<lathe::Value*> {
      LATHE_ASSIGN_OR_RETURN(std::string_view n, name_field(e, ep));
      return define(g, producer, kind, n, t, ep);
    };
    auto define_sym = [&](ValueKind kind, JValue& e, const JsonPath& ep, std::optional<int64_t>* literal_int)
        -> Result<lathe::Value*> {
      lathe::Value* defined = nullptr;
      LATHE_RETURN_IF_ERROR(r_.union_member(e, ep, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "as_name") {
          LATHE_ASSIGN_OR_RETURN(std::string_view n, r_.string(y, yp));
          LATHE_ASSIGN_OR_RETURN(defined, define(g, producer, kind, n, t, yp));
          return Status::Ok();
        }
        if (literal_int && k == "as_int") {
          LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(y, yp));
          *literal_int = i;
          return Status::Ok();
        }
        return r_.error(ep, "expected a named symbolic output, got '" + std::string(k) + "'");
      }));
      return defined;
    };
    if (key == "as_none") {
      out = NoneArg{};
    } else if (key == "as_tensor" || key == "as_token") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d,
                             define_named(key == "as_tensor" ? ValueKind::Tensor : ValueKind::Token, x, mp));
      out = TensorRef{d};
    } else if (key == "as_tensors") {
      TensorList l;
      LATHE_RETURN_IF_ERROR(r_.for_each_element(x, mp, [&](JValue& e, const JsonPath& ip) -> Status {
        LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_named(ValueKind::Tensor, e, ip));
        l.items.push_back(d);
        return Status::Ok();
      }));
      out = std::move(l);
    } else if (key == "as_optional_tensors") {
      OptionalTensorList l;
      LATHE_RETURN_IF_ERROR(r_.for_each_element(x, mp, [&](JValue& e, const JsonPath& ip) -> Status {
        lathe::Value* d = nullptr;
        LATHE_RETURN_IF_ERROR(r_.union_member(e, ip, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
          if (k == "as_none") return Status::Ok();
          if (k != "as_tensor") return r_.error(ip, "unknown OptionalTensorArgument member '" + std::string(k) + "'");
          LATHE_ASSIGN_OR_RETURN(d, define_named(ValueKind::Tensor, y, yp));
          return Status::Ok();
        }));
        l.items.push_back(d);
        return Status::Ok();
      }));
      out = std::move(l);
    } else if (key == "as_sym_int") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_sym(ValueKind::SymInt, x, mp, nullptr));
      out = SymIntArg{d};
    } else if (key == "as_sym_float") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_sym(ValueKind::SymFloat, x, mp, nullptr));
      out = SymFloatArg{d};
    } else if (key == "as_sym_bool") {
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_sym(ValueKind::SymBool, x, mp, nullptr));
      out = SymBoolArg{d};
    } else if (key == "as_sym_ints") {
      SymIntList l;
      LATHE_RETURN_IF_ERROR(r_.for_each_element(x, mp, [&](JValue& e, const JsonPath& ip) -> Status {
        std::optional<int64_t> lit;
        LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_sym(ValueKind::SymInt, e, ip, &lit));
        l.items.push_back(d ? SymIntArg{d} : SymIntArg{*lit});
        return Status::Ok();
      }));
      out = std::move(l);
    } else if (key == "as_custom_obj") {
      std::optional<std::string_view> name, cls;
      LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "name") {
          LATHE_ASSIGN_OR_RETURN(name, r_.string(y, yp));
        } else if (k == "class_fqn") {
          LATHE_ASSIGN_OR_RETURN(cls, r_.string(y, yp));
        }
        return Status::Ok();
      }));
      if (!name) return r_.error(mp, "missing field 'name'");
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define(g, producer, ValueKind::CustomObj, *name, t, mp));
      if (cls) d->set_class_fqn(std::string(*cls));
      out = CustomObjRef{d};
    } else {
      // A literal in an output slot defines nothing; keep its text to decode.
      literal = true;
      LATHE_ASSIGN_OR_RETURN(std::string text, r_.raw(x, mp));
      raw_literal = "{\"" + std::string(key) + "\":" + text + "}";
    }
    return Status::Ok();
  }));
  if (literal) {
    LATHE_ASSIGN_OR_RETURN(auto doc, json::Document::parse(raw_literal, r_.origin()));
    LATHE_ASSIGN_OR_RETURN(JValue lit, doc->root());
    return decode_argument(lit, p, g, 0);
  }
  return out;
}

Status ProgramDecoder::decode_metadata(JValue& v, const JsonPath& p,
                                       std::vector<std::pair<std::string, std::string>>& out) {
  return r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {

    simdjson::ondemand::json_type type;
    if (auto err = x.type().get(type)) return r_.failure(mp, err, "a value");
    if (type == simdjson::ondemand::json_type::string) {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
      out.emplace_back(std::string(key), std::string(s));
    } else {
      // Metadata is dict[str, str]; keep any other JSON as its text.
      LATHE_ASSIGN_OR_RETURN(std::string text, r_.raw(x, mp));
      out.emplace_back(std::string(key), std::move(text));
    }
    return Status::Ok();
  });
}

Status ProgramDecoder::decode_node(JValue& v, const JsonPath& p, Graph& g, ValueTables& t, size_t depth) {
  LATHE_ASSIGN_OR_RETURN(Object n, r_.object(v, p));
  LATHE_ASSIGN_OR_RETURN(JValue te, r_.field(n, "target", p));
  LATHE_ASSIGN_OR_RETURN(std::string_view target, r_.string(te, p.field("target")));
  std::string target_copy(target);

  LATHE_ASSIGN_OR_RETURN(JValue ie, r_.field(n, "inputs", p));
  std::vector<NamedArgument> args;
  LATHE_RETURN_IF_ERROR(r_.for_each_element(ie, p.field("inputs"), [&](JValue& in, const JsonPath& ap) -> Status {
    NamedArgument na;
    bool have_name = false, have_arg = false;
    LATHE_RETURN_IF_ERROR(r_.for_each_member(in, ap, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
      if (k == "name") {
        LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, xp));
        na.name = std::string(s);
        have_name = true;
      } else if (k == "arg") {
        LATHE_ASSIGN_OR_RETURN(na.arg, decode_argument(x, xp, g, depth));
        have_arg = true;
      } else if (k == "kind") {
        LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, xp));
        if (null) return Status::Ok();
        LATHE_ASSIGN_OR_RETURN(int64_t kind, r_.int64(x, xp));
        if (kind < 0 || kind > 2) return r_.error(xp, "unknown argument kind " + std::to_string(kind));
        na.kind = static_cast<ArgKind>(kind);
      }
      return Status::Ok();
    }));
    if (!have_name) return r_.error(ap, "missing field 'name'");
    if (!have_arg) return r_.error(ap, "missing field 'arg'");
    args.push_back(std::move(na));
    return Status::Ok();
  }));
  Node* node = GraphAssembler(g).create_node(std::move(target_copy), std::move(args));

  LATHE_ASSIGN_OR_RETURN(JValue oe, r_.field(n, "outputs", p));
  std::vector<Argument> outputs;
  LATHE_RETURN_IF_ERROR(r_.for_each_element(oe, p.field("outputs"), [&](JValue& out, const JsonPath& op) -> Status {
    LATHE_ASSIGN_OR_RETURN(Argument a, decode_defining_argument(out, op, g, node, t));
    outputs.push_back(std::move(a));
    return Status::Ok();
  }));
  GraphAssembler(g).set_node_outputs(node, std::move(outputs));

  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> md, r_.optional_field(n, "metadata", p));
  if (md) LATHE_RETURN_IF_ERROR(decode_metadata(*md, p.field("metadata"), node->mutable_metadata()));
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> hop, r_.optional_field(n, "is_hop_single_tensor_return", p));
  if (hop) {
    LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(*hop, p.field("is_hop_single_tensor_return")));
    node->set_is_hop_single_tensor_return(b);
  }
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> name, r_.optional_field(n, "name", p));
  if (name) {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(*name, p.field("name")));
    node->set_explicit_name(std::string(s));
  }
  return Status::Ok();
}

Status ProgramDecoder::decode_graph(JValue& v, const JsonPath& p, Graph& g, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "graphs nested deeper than " + std::to_string(options_.max_depth));
  LATHE_ASSIGN_OR_RETURN(Object go, r_.object(v, p));
  ValueTables tables;
  LATHE_RETURN_IF_ERROR(load_tables(go, p, tables));

  LATHE_ASSIGN_OR_RETURN(JValue ie, r_.field(go, "inputs", p));
  LATHE_RETURN_IF_ERROR(r_.for_each_element(ie, p.field("inputs"), [&](JValue& in, const JsonPath& ap) -> Status {
    std::optional<Argument> literal;
    LATHE_RETURN_IF_ERROR(r_.union_member(in, ap, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
      if (key == "as_tensor" || key == "as_token" || key == "as_custom_obj") {
        ValueKind kind = key == "as_tensor" ? ValueKind::Tensor : key == "as_token" ? ValueKind::Token
                                                                                    : ValueKind::CustomObj;
        std::optional<std::string_view> name, cls;
        LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
          if (k == "name") {
            LATHE_ASSIGN_OR_RETURN(name, r_.string(y, yp));
          } else if (k == "class_fqn") {
            LATHE_ASSIGN_OR_RETURN(cls, r_.string(y, yp));
          }
          return Status::Ok();
        }));
        if (!name) return r_.error(mp, "missing field 'name'");
        LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define(g, nullptr, kind, *name, tables, mp));
        if (cls) d->set_class_fqn(std::string(*cls));
        return Status::Ok();
      }
      if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
        ValueKind kind = key == "as_sym_int" ? ValueKind::SymInt : key == "as_sym_float" ? ValueKind::SymFloat
                                                                                          : ValueKind::SymBool;
        std::string k0(key);
        return r_.union_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
          if (k == "as_name") {
            LATHE_ASSIGN_OR_RETURN(std::string_view n, r_.string(y, yp));
            return define(g, nullptr, kind, n, tables, yp).ok() ? Status::Ok()
                                                                : Status(r_.error(yp, "cannot define '" + std::string(n) + "'"));
          }
          if (k == "as_int") {
            LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(y, yp));
            literal = Argument(SymIntArg{i});
          } else if (k == "as_float") {
            LATHE_ASSIGN_OR_RETURN(double d, r_.float64(y, yp));
            literal = Argument(SymFloatArg{d});
          } else if (k == "as_bool") {
            LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(y, yp));
            literal = Argument(SymBoolArg{b});
          } else {
            return r_.error(mp, "unknown member '" + std::string(k) + "'");
          }
          return Status::Ok();
        });
      }
      // A literal input (constant_input placeholders): re-decode from text.
      LATHE_ASSIGN_OR_RETURN(std::string text, r_.raw(x, mp));
      std::string wrapped = "{\"" + std::string(key) + "\":" + text + "}";
      LATHE_ASSIGN_OR_RETURN(auto doc, json::Document::parse(wrapped, r_.origin()));
      LATHE_ASSIGN_OR_RETURN(JValue lit, doc->root());
      LATHE_ASSIGN_OR_RETURN(Argument a, decode_argument(lit, ap, g, depth));
      literal = std::move(a);
      return Status::Ok();
    }));
    if (literal) GraphAssembler(g).insert_literal_input(std::move(*literal));
    return Status::Ok();
  }));

  LATHE_ASSIGN_OR_RETURN(JValue ne, r_.field(go, "nodes", p));
  LATHE_RETURN_IF_ERROR(r_.for_each_element(ne, p.field("nodes"), [&](JValue& n, const JsonPath& np) {
    return decode_node(n, np, g, tables, depth);
  }));

  LATHE_ASSIGN_OR_RETURN(JValue oe, r_.field(go, "outputs", p));
  LATHE_RETURN_IF_ERROR(r_.for_each_element(oe, p.field("outputs"), [&](JValue& out, const JsonPath& op) -> Status {
    LATHE_ASSIGN_OR_RETURN(Argument a, decode_argument(out, op, g, depth));
    GraphAssembler(g).insert_output(std::move(a));
    return Status::Ok();
  }));
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> single, r_.optional_field(go, "is_single_tensor_return", p));
  if (single) {
    LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(*single, p.field("is_single_tensor_return")));
    GraphAssembler(g).set_single_tensor_return(b);
  }
  return Status::Ok();
}

// The name a spec's argument carries: {"name": ...}, or inside an Argument
// union ({"as_tensor": {"name": ...}}, {"as_sym_int": {"as_name": ...}}).
Result<std::optional<std::string>> ProgramDecoder::spec_arg_name(JValue& v, const JsonPath& p, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "nesting deeper than " + std::to_string(options_.max_depth));
  std::optional<std::string> found;
  simdjson::ondemand::json_type type;
  if (auto err = v.type().get(type)) return r_.failure(p, err, "an argument");
  if (type != simdjson::ondemand::json_type::object) return found;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    simdjson::ondemand::json_type t;
    if (auto err = x.type().get(t)) return r_.failure(mp, err, "a value");
    if ((key == "name" || key == "as_name") && t == simdjson::ondemand::json_type::string) {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
      found = std::string(s);
    } else if (t == simdjson::ondemand::json_type::object && !found) {
      LATHE_ASSIGN_OR_RETURN(found, spec_arg_name(x, mp, depth + 1));
    }
    return Status::Ok();
  }));
  return found;
}

std::string graph_value_name(const Argument& a) {
  std::string name;
  a.for_each_value([&](lathe::Value* v) { name = v->name(); });
  return name;
}

Status ProgramDecoder::decode_signature(JValue& v, const JsonPath& p, ExportedProgram& ep) {
  Graph& g = ep.graph();
  LATHE_ASSIGN_OR_RETURN(Object so, r_.object(v, p));

  LATHE_ASSIGN_OR_RETURN(JValue ie, r_.field(so, "input_specs", p));
  JsonPath ip = p.field("input_specs");
  size_t index = 0;
  LATHE_RETURN_IF_ERROR(r_.for_each_element(ie, ip, [&](JValue& spec, const JsonPath& sp) -> Status {
    InputSpec s;
    std::optional<std::string> arg_name;
    bool have_arg = false;
    LATHE_RETURN_IF_ERROR(r_.union_member(spec, sp, [&](std::string_view kind, JValue& body, const JsonPath& mp) -> Status {
      std::string_view target_key;
      if (kind == "user_input") {
        s.kind = InputKind::UserInput;
      } else if (kind == "parameter") {
        s.kind = InputKind::Parameter;
        target_key = "parameter_name";
      } else if (kind == "buffer") {
        s.kind = InputKind::Buffer;
        target_key = "buffer_name";
      } else if (kind == "tensor_constant") {
        s.kind = InputKind::TensorConstant;
        target_key = "tensor_constant_name";
      } else if (kind == "custom_obj") {
        s.kind = InputKind::CustomObj;
        target_key = "custom_obj_name";
      } else if (kind == "token") {
        s.kind = InputKind::Token;
      } else if (kind == "constant_input") {
        s.kind = InputKind::ConstantInput;
        target_key = "name";
      } else {
        return r_.error(sp, "unknown InputSpec member '" + std::string(kind) + "'");
      }
      bool have_target = target_key.empty();
      LATHE_RETURN_IF_ERROR(r_.for_each_member(body, mp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
        if (k == "arg") {
          have_arg = true;
          LATHE_ASSIGN_OR_RETURN(arg_name, spec_arg_name(x, xp));
        } else if (k == target_key) {
          LATHE_ASSIGN_OR_RETURN(std::string_view t, r_.string(x, xp));
          s.target = std::string(t);
          have_target = true;
        } else if (k == "persistent") {
          LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, xp));
          if (!null) {
            LATHE_ASSIGN_OR_RETURN(s.persistent, r_.boolean(x, xp));
          }
        } else if (k == "value" && s.kind == InputKind::ConstantInput) {
          LATHE_ASSIGN_OR_RETURN(s.constant_value, decode_argument(x, xp, g, 0));
        }
        return Status::Ok();
      }));
      if (!have_target) return r_.error(mp, "missing field '" + std::string(target_key) + "'");
      return Status::Ok();
    }));
    if (index >= g.inputs().size()) {
      return r_.error(sp, "has more specs than the graph has inputs (" + std::to_string(g.inputs().size()) + ")");
    }
    if (s.kind != InputKind::ConstantInput) {
      std::string expected = graph_value_name(g.inputs()[index]);
      if (!have_arg) return r_.error(sp, "missing field 'arg'");
      if (!arg_name || *arg_name != expected) {
        return r_.error(sp, "names '" + arg_name.value_or("?") + "' but graph input " + std::to_string(index) +
                                " is '" + expected + "'");
      }
    }
    ep.input_specs.push_back(std::move(s));
    ++index;
    return Status::Ok();
  }));
  if (ep.input_specs.size() != g.inputs().size()) {
    return r_.error(ip, "has " + std::to_string(ep.input_specs.size()) + " specs but the graph has " +
                            std::to_string(g.inputs().size()) + " inputs");
  }

  LATHE_ASSIGN_OR_RETURN(JValue oe, r_.field(so, "output_specs", p));
  JsonPath op = p.field("output_specs");
  index = 0;
  LATHE_RETURN_IF_ERROR(r_.for_each_element(oe, op, [&](JValue& spec, const JsonPath& sp) -> Status {
    OutputSpec s;
    std::optional<std::string> arg_name;
    LATHE_RETURN_IF_ERROR(r_.union_member(spec, sp, [&](std::string_view kind, JValue& body, const JsonPath& mp) -> Status {
      std::string_view target_key;
      if (kind == "user_output") {
        s.kind = OutputKind::UserOutput;
      } else if (kind == "loss_output") {
        s.kind = OutputKind::LossOutput;
      } else if (kind == "buffer_mutation") {
        s.kind = OutputKind::BufferMutation;
        target_key = "buffer_name";
      } else if (kind == "gradient_to_parameter") {
        s.kind = OutputKind::GradientToParameter;
        target_key = "parameter_name";
      } else if (kind == "gradient_to_user_input") {
        s.kind = OutputKind::GradientToUserInput;
        target_key = "user_input_name";
      } else if (kind == "user_input_mutation") {
        s.kind = OutputKind::UserInputMutation;
        target_key = "user_input_name";
      } else if (kind == "token") {
        s.kind = OutputKind::Token;
      } else if (kind == "parameter_mutation") {
        s.kind = OutputKind::ParameterMutation;
        target_key = "parameter_name";
      } else {
        return r_.error(sp, "unknown OutputSpec member '" + std::string(kind) + "'");
      }
      bool have_target = target_key.empty();
      LATHE_RETURN_IF_ERROR(r_.for_each_member(body, mp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
        if (k == "arg") {
          LATHE_ASSIGN_OR_RETURN(arg_name, spec_arg_name(x, xp));
        } else if (!target_key.empty() && k == target_key) {
          LATHE_ASSIGN_OR_RETURN(std::string_view t, r_.string(x, xp));
          s.target = std::string(t);
          have_target = true;
        }
        return Status::Ok();
      }));
      if (!have_target) return r_.error(mp, "missing field '" + std::string(target_key) + "'");
      return Status::Ok();
    }));
    if (index >= g.outputs().size()) {
      return r_.error(sp, "has more specs than the graph has outputs (" + std::to_string(g.outputs().size()) + ")");
    }
    std::string expected = graph_value_name(g.outputs()[index]);
    if (arg_name && !expected.empty() && *arg_name != expected) {
      return r_.error(sp, "names '" + *arg_name + "' but graph output " + std::to_string(index) + " is '" +
                              expected + "'");
    }
    ep.output_specs.push_back(std::move(s));
    ++index;
    return Status::Ok();
  }));
  if (ep.output_specs.size() != g.outputs().size()) {
    return r_.error(op, "has " + std::to_string(ep.output_specs.size()) + " specs but the graph has " +
                            std::to_string(g.outputs().size()) + " outputs");
  }
  return Status::Ok();
}

Result<std::unique_ptr<ExportedProgram>> ProgramDecoder::decode(JValue& root_value) {
  JsonPath p;
  auto ep = std::make_unique<ExportedProgram>();
  LATHE_ASSIGN_OR_RETURN(Object root, r_.object(root_value, p));

  // Schema version first: it decides how to read everything else.
  JsonPath svp = p.field("schema_version");
  LATHE_ASSIGN_OR_RETURN(JValue sv, r_.field(root, "schema_version", p));
  simdjson::ondemand::json_type svt;
  if (auto err = sv.type().get(svt)) return r_.failure(svp, err, "a schema version");
  if (svt == simdjson::ondemand::json_type::number) {
    // PyTorch 2.2/2.3 wrote an integer schema version and unions with every
    // member present. Lathe reads them and upgrades them to schema 8.
    LATHE_ASSIGN_OR_RETURN(int64_t legacy, r_.int64(sv, svp));
    if (legacy < 1 || legacy > 7) {
      return r_.error(svp, "integer schema version " + std::to_string(legacy) + " is not one PyTorch wrote");
    }
    ep->legacy_schema_version = legacy;
    ep->schema_version = SchemaVersion{8, 0};
  } else {
    bool have_major = false;
    LATHE_RETURN_IF_ERROR(r_.for_each_member(sv, svp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
      if (k == "major") {
        LATHE_ASSIGN_OR_RETURN(ep->schema_version.major, r_.int64(x, xp));
        have_major = true;
      } else if (k == "minor") {
        LATHE_ASSIGN_OR_RETURN(ep->schema_version.minor, r_.int64(x, xp));
      }
      return Status::Ok();
    }));
    if (!have_major) return r_.error(svp, "missing field 'major'");
    if (ep->schema_version.major != 8) {
      return r_.error(svp, "schema major version " + std::to_string(ep->schema_version.major) +
                               " is not supported (Lathe reads schema 8, and the integer versions before it)");
    }
  }
  Status body = decode_body(root, p, *ep);
  if (!body.ok() && ep->legacy_schema_version) {
    return Error(body.error().message() + " (in a schema-" + std::to_string(*ep->legacy_schema_version) +
                 " program, written by PyTorch 2.2/2.3, which Lathe upgrades to schema 8)");
  }
  if (!body.ok()) return body.error();
  return ep;
}

Status ProgramDecoder::decode_body(Object& root, const JsonPath& p, ExportedProgram& program) {
  ExportedProgram* ep = &program;
  JsonPath gp = p.field("graph_module");
  LATHE_ASSIGN_OR_RETURN(JValue gmv, r_.field(root, "graph_module", p));
  LATHE_ASSIGN_OR_RETURN(Object gm, r_.object(gmv, gp));
  LATHE_ASSIGN_OR_RETURN(JValue graph, r_.field(gm, "graph", gp));
  LATHE_RETURN_IF_ERROR(decode_graph(graph, gp.field("graph"), ep->graph(), 0));
  LATHE_ASSIGN_OR_RETURN(JValue sig, r_.field(gm, "signature", gp));
  LATHE_RETURN_IF_ERROR(decode_signature(sig, gp.field("signature"), *ep));
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> mcg, r_.optional_field(gm, "module_call_graph", gp));
  if (mcg) {
    LATHE_ASSIGN_OR_RETURN(ep->module_call_graph_json, r_.raw(*mcg, gp.field("module_call_graph")));
  }
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> md, r_.optional_field(gm, "metadata", gp));
  if (md) LATHE_RETURN_IF_ERROR(decode_metadata(*md, gp.field("metadata"), ep->graph_module_metadata));
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> tn, r_.optional_field(gm, "treespec_namedtuple_fields", gp));
  if (tn) {
    LATHE_ASSIGN_OR_RETURN(ep->treespec_namedtuple_fields_json, r_.raw(*tn, gp.field("treespec_namedtuple_fields")));
  }

  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> ov, r_.optional_field(root, "opset_version", p));
  if (ov) {
    LATHE_RETURN_IF_ERROR(r_.for_each_member(*ov, p.field("opset_version"),
                                             [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
                                               LATHE_ASSIGN_OR_RETURN(int64_t v, r_.int64(x, xp));
                                               ep->opset_version.emplace_back(std::string(k), v);
                                               return Status::Ok();
                                             }));
  }
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> rc, r_.optional_field(root, "range_constraints", p));
  if (rc) {
    LATHE_RETURN_IF_ERROR(r_.for_each_member(
        *rc, p.field("range_constraints"), [&](std::string_view sym, JValue& x, const JsonPath& xp) -> Status {
          RangeConstraint c;
          LATHE_RETURN_IF_ERROR(r_.for_each_member(x, xp, [&](std::string_view k, JValue& b, const JsonPath& bp) -> Status {
            if (k != "min_val" && k != "max_val") return Status::Ok();
            std::optional<int64_t>& out = k == "min_val" ? c.min_val : c.max_val;
            // Unbounded ends are written as null, as +-Infinity, or (int_oo)
            // as integers beyond int64.
            simdjson::ondemand::json_type t;
            if (auto err = b.type().get(t)) return r_.failure(bp, err, "a bound");
            if (t == simdjson::ondemand::json_type::null) return Status::Ok();
            if (t == simdjson::ondemand::json_type::number) {
              simdjson::ondemand::number_type nt;
              if (auto err = b.get_number_type().get(nt)) return r_.failure(bp, err, "a bound");
              if (nt == simdjson::ondemand::number_type::unsigned_integer) return Status::Ok();
            }
            LATHE_ASSIGN_OR_RETURN(double d, r_.float64(b, bp));
            if (std::isinf(d) || std::fabs(d) >= 9.2e18) return Status::Ok();
            if (std::floor(d) != d) return r_.error(bp, "expected an integer bound");
            out = static_cast<int64_t>(d);
            return Status::Ok();
          }));
          ep->range_constraints.emplace_back(std::string(sym), c);
          return Status::Ok();
        }));
  }
  auto strings = [&](std::string_view key, std::vector<std::string>& out) -> Status {
    LATHE_ASSIGN_OR_RETURN(std::optional<JValue> list, r_.optional_field(root, key, p));
    if (!list) return Status::Ok();
    return r_.for_each_element(*list, p.field(key), [&](JValue& x, const JsonPath& xp) -> Status {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, xp));
      out.emplace_back(s);
      return Status::Ok();
    });
  };
  LATHE_RETURN_IF_ERROR(strings("verifiers", ep->verifiers));
  LATHE_ASSIGN_OR_RETURN(std::optional<JValue> tv, r_.optional_field(root, "torch_version", p));
  if (tv) {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(*tv, p.field("torch_version")));
    ep->torch_version = std::string(s);
  } else {
    ep->torch_version = "<=2.4";  // the schema's default for files that predate the field
  }
  LATHE_RETURN_IF_ERROR(strings("guards_code", ep->guards_code));
  if (ep->verifiers.empty()) {
    // Before `verifiers`, the dialect was one string.
    LATHE_ASSIGN_OR_RETURN(std::optional<JValue> dialect, r_.optional_field(root, "dialect", p));
    if (dialect) {
      LATHE_ASSIGN_OR_RETURN(std::string_view d, r_.string(*dialect, p.field("dialect")));
      ep->verifiers.emplace_back(d);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<ExportedProgram>> decode_program_json(std::string_view text, const JsonDecodeOptions& options) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<json::Document> doc,
                         json::Document::parse(text, options.origin, options.readable_after));
  LATHE_ASSIGN_OR_RETURN(JValue root, doc->root());
  ProgramDecoder decoder(options);
  return decoder.decode(root);
}

}  // namespace lathe
