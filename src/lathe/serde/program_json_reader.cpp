// models/<name>.json -> ExportedProgram.
//
// Values are created as their defining placeholder or node is decoded, and
// every reference is resolved to a Value* immediately, so a name that is used
// before it is defined (or never defined) is an error at the exact JSON path.
#include <cmath>
#include <unordered_map>

#include "lathe/serde/json_reader.h"
#include "lathe/serde/program_json.h"

namespace lathe {
namespace {

namespace dom = simdjson::dom;
using json::Element;

// The per-graph tables that describe values by name.
struct ValueTables {
  std::unordered_map<std::string_view, Element> tensor_values;
  std::unordered_map<std::string_view, Element> sym_int_values;
  std::unordered_map<std::string_view, Element> sym_bool_values;
  std::unordered_map<std::string_view, Element> sym_float_values;
  std::unordered_map<std::string_view, Element> custom_obj_values;
};

class ProgramDecoder {
 public:
  ProgramDecoder(const JsonDecodeOptions& options) : r_(options.origin), options_(options) {}

  Result<std::unique_ptr<ExportedProgram>> decode(Element root);

 private:
  Status decode_graph(Element e, const JsonPath& p, Graph& g, size_t depth);
  Status load_tables(Element graph, const JsonPath& p, ValueTables& t);
  Status decode_node(Element e, const JsonPath& p, Graph& g, const ValueTables& t, size_t depth);
  Result<Argument> decode_argument(Element e, const JsonPath& p, Graph& g, size_t depth);
  Result<Value*> lookup(Graph& g, Element name_elem, const JsonPath& p);
  Result<Value*> lookup_tensor_arg(Graph& g, Element e, const JsonPath& p);  // {"name": ...}
  template <typename Literal>
  Result<SymArg<Literal>> decode_sym_arg(Element e, const JsonPath& p, Graph& g);
  // Output or placeholder: defines a value.
  Result<Value*> define(Graph& g, Node* producer, ValueKind kind, std::string_view name, const ValueTables& t,
                        const JsonPath& p);
  Result<Argument> decode_defining_argument(Element e, const JsonPath& p, Graph& g, Node* producer,
                                            const ValueTables& t);
  Status decode_signature(Element e, const JsonPath& p, ExportedProgram& ep);
  Status decode_metadata(Element e, const JsonPath& p, std::vector<std::pair<std::string, std::string>>& out);

  json::Reader r_;
  const JsonDecodeOptions& options_;
};

Status ProgramDecoder::load_tables(Element graph, const JsonPath& p, ValueTables& t) {
  auto load = [&](std::string_view key, std::unordered_map<std::string_view, Element>& out) -> Status {
    auto f = r_.optional_field(graph, key);
    if (!f) return Status::Ok();
    LATHE_ASSIGN_OR_RETURN(dom::object o, r_.object(*f, p.field(key)));
    out.reserve(o.size());
    for (auto kv : o) out.emplace(kv.key, kv.value);
    return Status::Ok();
  };
  LATHE_RETURN_IF_ERROR(load("tensor_values", t.tensor_values));
  LATHE_RETURN_IF_ERROR(load("sym_int_values", t.sym_int_values));
  LATHE_RETURN_IF_ERROR(load("sym_bool_values", t.sym_bool_values));
  LATHE_RETURN_IF_ERROR(load("sym_float_values", t.sym_float_values));
  LATHE_RETURN_IF_ERROR(load("custom_obj_values", t.custom_obj_values));
  return Status::Ok();
}

Result<Value*> ProgramDecoder::define(Graph& g, Node* producer, ValueKind kind, std::string_view name,
                                      const ValueTables& t, const JsonPath& p) {
  std::string n(name);
  if (g.find_value(n)) return r_.error(p, "value '" + n + "' is defined twice");
  Value* v = producer ? g.new_node_value(producer, kind, n) : g.insert_placeholder(kind, n);
  switch (kind) {
    case ValueKind::Tensor: {
      auto it = t.tensor_values.find(name);
      if (it == t.tensor_values.end()) return r_.error(p, "tensor '" + n + "' has no entry in tensor_values");
      JsonPath tp{nullptr, "tensor_values", -1};
      JsonPath mp = tp.field(name);
      LATHE_ASSIGN_OR_RETURN(TensorMeta meta, r_.tensor_meta(it->second, mp));
      v->set_meta(std::move(meta));
      break;
    }
    case ValueKind::SymInt: {
      auto it = t.sym_int_values.find(name);
      if (it != t.sym_int_values.end()) {
        LATHE_ASSIGN_OR_RETURN(SymDim s, r_.sym_int(it->second, p));
        v->set_sym(std::move(s));
      }
      break;
    }
    case ValueKind::SymBool: {
      auto it = t.sym_bool_values.find(name);
      if (it != t.sym_bool_values.end()) {
        LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(it->second, p));
        SymBoolValue sb;
        if (m.first == "as_bool") {
          LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(m.second, p));
          sb.v = b;
        } else {
          LATHE_ASSIGN_OR_RETURN(SymExpr x, r_.sym_expr(m.second, p));
          sb.v = std::move(x);
        }
        v->set_sym(std::move(sb));
      }
      break;
    }
    case ValueKind::SymFloat: {
      auto it = t.sym_float_values.find(name);
      if (it != t.sym_float_values.end()) {
        LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(it->second, p));
        SymFloatValue sf;
        if (m.first == "as_float") {
          LATHE_ASSIGN_OR_RETURN(double d, r_.float64(m.second, p));
          sf.v = d;
        } else {
          LATHE_ASSIGN_OR_RETURN(SymExpr x, r_.sym_expr(m.second, p));
          sf.v = std::move(x);
        }
        v->set_sym(std::move(sf));
      }
      break;
    }
    default: break;
  }
  return v;
}

Result<Value*> ProgramDecoder::lookup(Graph& g, Element name_elem, const JsonPath& p) {
  LATHE_ASSIGN_OR_RETURN(std::string_view name, r_.string(name_elem, p));
  Value* v = g.find_value(std::string(name));
  if (!v) return r_.error(p, "references undefined value '" + std::string(name) + "'");
  return v;
}

Result<Value*> ProgramDecoder::lookup_tensor_arg(Graph& g, Element e, const JsonPath& p) {
  LATHE_ASSIGN_OR_RETURN(Element n, r_.field(e, "name", p));
  return lookup(g, n, p.field("name"));
}

template <typename Literal>
Result<SymArg<Literal>> ProgramDecoder::decode_sym_arg(Element e, const JsonPath& p, Graph& g) {
  LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(e, p));
  JsonPath mp = p.field(m.first);
  if (m.first == "as_name") {
    LATHE_ASSIGN_OR_RETURN(Value* v, lookup(g, m.second, mp));
    return SymArg<Literal>{v};
  }
  if constexpr (std::is_same_v<Literal, int64_t>) {
    if (m.first == "as_int") {
      LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(m.second, mp));
      return SymArg<Literal>{i};
    }
  } else if constexpr (std::is_same_v<Literal, double>) {
    if (m.first == "as_float") {
      LATHE_ASSIGN_OR_RETURN(double d, r_.float64(m.second, mp));
      return SymArg<Literal>{d};
    }
  } else {
    if (m.first == "as_bool") {
      LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(m.second, mp));
      return SymArg<Literal>{b};
    }
  }
  return r_.error(p, "unknown member '" + std::string(m.first) + "'");
}

Result<Argument> ProgramDecoder::decode_argument(Element e, const JsonPath& p, Graph& g, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "nesting deeper than " + std::to_string(options_.max_depth));
  LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(e, p));
  const std::string_view key = m.first;
  const Element v = m.second;
  const JsonPath mp = p.field(key);

  auto each = [&](auto&& fn) -> Status {
    LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(v, mp));
    int64_t i = 0;
    for (Element item : a) {
      LATHE_RETURN_IF_ERROR(fn(item, mp.at(i)));
      ++i;
    }
    return Status::Ok();
  };

  if (key == "as_none") return Argument(NoneArg{});
  if (key == "as_tensor") {
    LATHE_ASSIGN_OR_RETURN(Value* t, lookup_tensor_arg(g, v, mp));
    return Argument(TensorRef{t});
  }
  if (key == "as_tensors") {
    TensorList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(Value* t, lookup_tensor_arg(g, item, ip));
      list.items.push_back(t);
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_int") {
    LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(v, mp));
    return Argument(i);
  }
  if (key == "as_ints") {
    IntList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(item, ip));
      list.items.push_back(i);
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_float") {
    LATHE_ASSIGN_OR_RETURN(double d, r_.float64(v, mp));
    return Argument(d);
  }
  if (key == "as_floats") {
    FloatList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(double d, r_.float64(item, ip));
      list.items.push_back(d);
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_string") {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(v, mp));
    return Argument(std::string(s));
  }
  if (key == "as_strings") {
    StringList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(item, ip));
      list.items.emplace_back(s);
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_bool") {
    LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(v, mp));
    return Argument(b);
  }
  if (key == "as_bools") {
    BoolList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(item, ip));
      list.items.push_back(b);
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_sym_int") {
    LATHE_ASSIGN_OR_RETURN(SymIntArg s, decode_sym_arg<int64_t>(v, mp, g));
    return Argument(std::move(s));
  }
  if (key == "as_sym_ints") {
    SymIntList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(SymIntArg s, decode_sym_arg<int64_t>(item, ip, g));
      list.items.push_back(std::move(s));
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_sym_float") {
    LATHE_ASSIGN_OR_RETURN(SymFloatArg s, decode_sym_arg<double>(v, mp, g));
    return Argument(std::move(s));
  }
  if (key == "as_sym_floats") {
    SymFloatList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(SymFloatArg s, decode_sym_arg<double>(item, ip, g));
      list.items.push_back(std::move(s));
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_sym_bool") {
    LATHE_ASSIGN_OR_RETURN(SymBoolArg s, decode_sym_arg<bool>(v, mp, g));
    return Argument(std::move(s));
  }
  if (key == "as_sym_bools") {
    SymBoolList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(SymBoolArg s, decode_sym_arg<bool>(item, ip, g));
      list.items.push_back(std::move(s));
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_scalar_type") {
    LATHE_ASSIGN_OR_RETURN(int64_t code, r_.int64(v, mp));
    auto dt = dtype_from_schema(code);
    if (!dt) return r_.error(mp, "unknown scalar type " + std::to_string(code));
    return Argument(ScalarTypeArg{*dt});
  }
  if (key == "as_memory_format") {
    LATHE_ASSIGN_OR_RETURN(int64_t f, r_.int64(v, mp));
    return Argument(MemoryFormatArg{f});
  }
  if (key == "as_layout") {
    LATHE_ASSIGN_OR_RETURN(int64_t l, r_.int64(v, mp));
    return Argument(LayoutArg{l});
  }
  if (key == "as_device") {
    LATHE_ASSIGN_OR_RETURN(Device d, r_.device(v, mp));
    return Argument(DeviceArg{std::move(d)});
  }
  if (key == "as_optional_tensors") {
    OptionalTensorList list;
    LATHE_RETURN_IF_ERROR(each([&](Element item, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(auto om, r_.union_member(item, ip));
      if (om.first == "as_none") {
        list.items.push_back(nullptr);
      } else if (om.first == "as_tensor") {
        LATHE_ASSIGN_OR_RETURN(Value* t, lookup_tensor_arg(g, om.second, ip.field("as_tensor")));
        list.items.push_back(t);
      } else {
        return r_.error(ip, "unknown OptionalTensorArgument member '" + std::string(om.first) + "'");
      }
      return Status::Ok();
    }));
    return Argument(std::move(list));
  }
  if (key == "as_optional_tensor") {
    LATHE_ASSIGN_OR_RETURN(auto om, r_.union_member(v, mp));
    if (om.first == "as_none") return Argument(OptionalTensor{nullptr});
    if (om.first == "as_tensor") {
      LATHE_ASSIGN_OR_RETURN(Value* t, lookup_tensor_arg(g, om.second, mp.field("as_tensor")));
      return Argument(OptionalTensor{t});
    }
    return r_.error(mp, "unknown OptionalTensorArgument member '" + std::string(om.first) + "'");
  }
  if (key == "as_graph") {
    LATHE_ASSIGN_OR_RETURN(Element n, r_.field(v, "name", mp));
    LATHE_ASSIGN_OR_RETURN(std::string_view name, r_.string(n, mp.field("name")));
    LATHE_ASSIGN_OR_RETURN(Element ge, r_.field(v, "graph", mp));
    auto sub = std::make_shared<Graph>();
    LATHE_RETURN_IF_ERROR(decode_graph(ge, mp.field("graph"), *sub, depth + 1));
    return Argument(GraphArg{std::string(name), std::move(sub)});
  }
  if (key == "as_custom_obj") {
    LATHE_ASSIGN_OR_RETURN(Value* obj, lookup_tensor_arg(g, v, mp));
    return Argument(CustomObjRef{obj});
  }
  if (key == "as_operator") {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(v, mp));
    return Argument(OperatorArg{std::string(s)});
  }
  if (key == "as_complex") {
    LATHE_ASSIGN_OR_RETURN(Element re, r_.field(v, "real", mp));
    LATHE_ASSIGN_OR_RETURN(Element im, r_.field(v, "imag", mp));
    LATHE_ASSIGN_OR_RETURN(double rv, r_.float64(re, mp.field("real")));
    LATHE_ASSIGN_OR_RETURN(double iv, r_.float64(im, mp.field("imag")));
    return Argument(ComplexArg{rv, iv});
  }
  if (key == "as_nested_tensors") {
    NestedTensorList nested;
    LATHE_RETURN_IF_ERROR(each([&](Element inner, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(inner, ip));
      std::vector<Value*> list;
      int64_t j = 0;
      for (Element item : a) {
        LATHE_ASSIGN_OR_RETURN(Value* t, lookup_tensor_arg(g, item, ip.at(j++)));
        list.push_back(t);
      }
      nested.items.push_back(std::move(list));
      return Status::Ok();
    }));
    return Argument(std::move(nested));
  }
  if (key == "as_int_lists") {
    IntLists lists;
    LATHE_RETURN_IF_ERROR(each([&](Element inner, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(inner, ip));
      std::vector<int64_t> list;
      int64_t j = 0;
      for (Element item : a) {
        LATHE_ASSIGN_OR_RETURN(int64_t x, r_.int64(item, ip.at(j++)));
        list.push_back(x);
      }
      lists.items.push_back(std::move(list));
      return Status::Ok();
    }));
    return Argument(std::move(lists));
  }
  if (key == "as_string_to_argument") {
    LATHE_ASSIGN_OR_RETURN(dom::object o, r_.object(v, mp));
    StringToArgument map;
    for (auto kv : o) {
      LATHE_ASSIGN_OR_RETURN(Argument sub, decode_argument(kv.value, mp.field(kv.key), g, depth + 1));
      map.items.emplace_back(std::string(kv.key), std::move(sub));
    }
    return Argument(std::move(map));
  }
  return r_.error(p, "unknown Argument member '" + std::string(key) + "'");
}

Result<Argument> ProgramDecoder::decode_defining_argument(Element e, const JsonPath& p, Graph& g, Node* producer,
                                                          const ValueTables& t) {
  LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(e, p));
  const std::string_view key = m.first;
  const JsonPath mp = p.field(key);
  auto name_of = [&](Element item, const JsonPath& ip) -> Result<std::string_view> {
    LATHE_ASSIGN_OR_RETURN(Element n, r_.field(item, "name", ip));
    return r_.string(n, ip.field("name"));
  };
  if (key == "as_none") return Argument(NoneArg{});
  if (key == "as_tensor") {
    LATHE_ASSIGN_OR_RETURN(std::string_view n, name_of(m.second, mp));
    LATHE_ASSIGN_OR_RETURN(Value* v, define(g, producer, ValueKind::Tensor, n, t, mp));
    return Argument(TensorRef{v});
  }
  if (key == "as_tensors" || key == "as_optional_tensors") {
    LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(m.second, mp));
    std::vector<Value*> items;
    int64_t i = 0;
    for (Element item : a) {
      JsonPath ip = mp.at(i++);
      Element target = item;
      if (key == "as_optional_tensors") {
        LATHE_ASSIGN_OR_RETURN(auto om, r_.union_member(item, ip));
        if (om.first == "as_none") {
          items.push_back(nullptr);
          continue;
        }
        target = om.second;
      }
      LATHE_ASSIGN_OR_RETURN(std::string_view n, name_of(target, ip));
      LATHE_ASSIGN_OR_RETURN(Value* v, define(g, producer, ValueKind::Tensor, n, t, ip));
      items.push_back(v);
    }
    if (key == "as_tensors") return Argument(TensorList{std::move(items)});
    return Argument(OptionalTensorList{std::move(items)});
  }
  auto sym = [&](ValueKind kind, Element item, const JsonPath& ip) -> Result<std::variant<Value*, Argument>> {
    LATHE_ASSIGN_OR_RETURN(auto sm, r_.union_member(item, ip));
    if (sm.first == "as_name") {
      LATHE_ASSIGN_OR_RETURN(std::string_view n, r_.string(sm.second, ip.field("as_name")));
      LATHE_ASSIGN_OR_RETURN(Value* v, define(g, producer, kind, n, t, ip));
      return std::variant<Value*, Argument>(v);
    }
    // A literal in an output slot (the op returned a constant).
    LATHE_ASSIGN_OR_RETURN(Argument lit, decode_argument(item, ip, g, 0));
    return std::variant<Value*, Argument>(std::move(lit));
  };
  if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
    ValueKind kind = key == "as_sym_int" ? ValueKind::SymInt
                     : key == "as_sym_float" ? ValueKind::SymFloat
                                             : ValueKind::SymBool;
    LATHE_ASSIGN_OR_RETURN(auto r, sym(kind, m.second, mp));
    if (r.index() == 1) return r_.error(mp, "expected a named symbolic output");
    Value* v = std::get<0>(r);
    if (kind == ValueKind::SymInt) return Argument(SymIntArg{v});
    if (kind == ValueKind::SymFloat) return Argument(SymFloatArg{v});
    return Argument(SymBoolArg{v});
  }
  if (key == "as_sym_ints") {
    LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(m.second, mp));
    SymIntList list;
    int64_t i = 0;
    for (Element item : a) {
      JsonPath ip = mp.at(i++);
      LATHE_ASSIGN_OR_RETURN(auto sm, r_.union_member(item, ip));
      if (sm.first == "as_name") {
        LATHE_ASSIGN_OR_RETURN(std::string_view n, r_.string(sm.second, ip.field("as_name")));
        LATHE_ASSIGN_OR_RETURN(Value* v, define(g, producer, ValueKind::SymInt, n, t, ip));
        list.items.push_back(SymIntArg{v});
      } else {
        LATHE_ASSIGN_OR_RETURN(int64_t x, r_.int64(sm.second, ip.field(sm.first)));
        list.items.push_back(SymIntArg{x});
      }
    }
    return Argument(std::move(list));
  }
  if (key == "as_custom_obj") {
    LATHE_ASSIGN_OR_RETURN(std::string_view n, name_of(m.second, mp));
    LATHE_ASSIGN_OR_RETURN(Value* v, define(g, producer, ValueKind::CustomObj, n, t, mp));
    if (auto c = r_.optional_field(m.second, "class_fqn")) {
      LATHE_ASSIGN_OR_RETURN(std::string_view cls, r_.string(*c, mp.field("class_fqn")));
      v->set_class_fqn(std::string(cls));
    }
    return Argument(CustomObjRef{v});
  }
  if (key == "as_token") {
    LATHE_ASSIGN_OR_RETURN(std::string_view n, name_of(m.second, mp));
    LATHE_ASSIGN_OR_RETURN(Value* v, define(g, producer, ValueKind::Token, n, t, mp));
    return Argument(TensorRef{v});
  }
  // Literal outputs (ints, floats, ...) define nothing.
  return decode_argument(e, p, g, 0);
}

Status ProgramDecoder::decode_metadata(Element e, const JsonPath& p,
                                       std::vector<std::pair<std::string, std::string>>& out) {
  LATHE_ASSIGN_OR_RETURN(dom::object o, r_.object(e, p));
  for (auto kv : o) {
    std::string_view s;
    if (kv.value.get_string().get(s)) {
      // Metadata is dict[str, str]; keep any other JSON as its text.
      out.emplace_back(std::string(kv.key), simdjson::minify(kv.value));
    } else {
      out.emplace_back(std::string(kv.key), std::string(s));
    }
  }
  return Status::Ok();
}

Status ProgramDecoder::decode_node(Element e, const JsonPath& p, Graph& g, const ValueTables& t, size_t depth) {
  LATHE_ASSIGN_OR_RETURN(Element te, r_.field(e, "target", p));
  LATHE_ASSIGN_OR_RETURN(std::string_view target, r_.string(te, p.field("target")));
  LATHE_ASSIGN_OR_RETURN(Element ie, r_.field(e, "inputs", p));
  JsonPath ip = p.field("inputs");
  LATHE_ASSIGN_OR_RETURN(dom::array inputs, r_.array(ie, ip));
  std::vector<NamedArgument> args;
  args.reserve(inputs.size());
  int64_t i = 0;
  for (Element in : inputs) {
    JsonPath ap = ip.at(i++);
    NamedArgument na;
    LATHE_ASSIGN_OR_RETURN(Element ne, r_.field(in, "name", ap));
    LATHE_ASSIGN_OR_RETURN(std::string_view name, r_.string(ne, ap.field("name")));
    na.name = std::string(name);
    LATHE_ASSIGN_OR_RETURN(Element arg, r_.field(in, "arg", ap));
    LATHE_ASSIGN_OR_RETURN(na.arg, decode_argument(arg, ap.field("arg"), g, depth));
    if (auto k = r_.optional_field(in, "kind")) {
      LATHE_ASSIGN_OR_RETURN(int64_t kind, r_.int64(*k, ap.field("kind")));
      if (kind < 0 || kind > 2) return r_.error(ap.field("kind"), "unknown argument kind " + std::to_string(kind));
      na.kind = static_cast<ArgKind>(kind);
    }
    args.push_back(std::move(na));
  }
  Node* node = g.create_node(std::string(target), std::move(args));

  LATHE_ASSIGN_OR_RETURN(Element oe, r_.field(e, "outputs", p));
  JsonPath op = p.field("outputs");
  LATHE_ASSIGN_OR_RETURN(dom::array outs, r_.array(oe, op));
  std::vector<Argument> outputs;
  i = 0;
  for (Element out : outs) {
    LATHE_ASSIGN_OR_RETURN(Argument a, decode_defining_argument(out, op.at(i++), g, node, t));
    outputs.push_back(std::move(a));
  }
  g.set_node_outputs(node, std::move(outputs));

  if (auto md = r_.optional_field(e, "metadata")) {
    LATHE_RETURN_IF_ERROR(decode_metadata(*md, p.field("metadata"), node->mutable_metadata()));
  }
  if (auto h = r_.optional_field(e, "is_hop_single_tensor_return")) {
    LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(*h, p.field("is_hop_single_tensor_return")));
    node->set_is_hop_single_tensor_return(b);
  }
  if (auto n = r_.optional_field(e, "name")) {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(*n, p.field("name")));
    node->set_explicit_name(std::string(s));
  }
  return Status::Ok();
}

Status ProgramDecoder::decode_graph(Element e, const JsonPath& p, Graph& g, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "graphs nested deeper than " + std::to_string(options_.max_depth));
  ValueTables tables;
  LATHE_RETURN_IF_ERROR(load_tables(e, p, tables));

  LATHE_ASSIGN_OR_RETURN(Element ie, r_.field(e, "inputs", p));
  JsonPath ip = p.field("inputs");
  LATHE_ASSIGN_OR_RETURN(dom::array inputs, r_.array(ie, ip));
  int64_t i = 0;
  for (Element in : inputs) {
    JsonPath ap = ip.at(i++);
    LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(in, ap));
    const JsonPath mp = ap.field(m.first);
    ValueKind kind;
    Element name_elem;
    if (m.first == "as_tensor" || m.first == "as_custom_obj" || m.first == "as_token") {
      kind = m.first == "as_tensor" ? ValueKind::Tensor
             : m.first == "as_token" ? ValueKind::Token
                                     : ValueKind::CustomObj;
      LATHE_ASSIGN_OR_RETURN(name_elem, r_.field(m.second, "name", mp));
    } else if (m.first == "as_sym_int" || m.first == "as_sym_float" || m.first == "as_sym_bool") {
      kind = m.first == "as_sym_int" ? ValueKind::SymInt
             : m.first == "as_sym_float" ? ValueKind::SymFloat
                                         : ValueKind::SymBool;
      LATHE_ASSIGN_OR_RETURN(auto sm, r_.union_member(m.second, mp));
      if (sm.first != "as_name") {
        LATHE_ASSIGN_OR_RETURN(Argument lit, decode_argument(in, ap, g, depth));
        g.insert_literal_input(std::move(lit));
        continue;
      }
      name_elem = sm.second;
    } else {
      // A literal input (constant_input placeholders).
      LATHE_ASSIGN_OR_RETURN(Argument lit, decode_argument(in, ap, g, depth));
      g.insert_literal_input(std::move(lit));
      continue;
    }
    LATHE_ASSIGN_OR_RETURN(std::string_view name, r_.string(name_elem, mp));
    LATHE_ASSIGN_OR_RETURN(Value* v, define(g, nullptr, kind, name, tables, mp));
    if (kind == ValueKind::CustomObj) {
      if (auto c = r_.optional_field(m.second, "class_fqn")) {
        LATHE_ASSIGN_OR_RETURN(std::string_view cls, r_.string(*c, mp.field("class_fqn")));
        v->set_class_fqn(std::string(cls));
      }
    }
  }

  LATHE_ASSIGN_OR_RETURN(Element ne, r_.field(e, "nodes", p));
  JsonPath np = p.field("nodes");
  LATHE_ASSIGN_OR_RETURN(dom::array nodes, r_.array(ne, np));
  i = 0;
  for (Element n : nodes) LATHE_RETURN_IF_ERROR(decode_node(n, np.at(i++), g, tables, depth));

  LATHE_ASSIGN_OR_RETURN(Element oe, r_.field(e, "outputs", p));
  JsonPath op = p.field("outputs");
  LATHE_ASSIGN_OR_RETURN(dom::array outs, r_.array(oe, op));
  i = 0;
  for (Element out : outs) {
    LATHE_ASSIGN_OR_RETURN(Argument a, decode_argument(out, op.at(i++), g, depth));
    g.insert_output(std::move(a));
  }
  if (auto s = r_.optional_field(e, "is_single_tensor_return")) {
    LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(*s, p.field("is_single_tensor_return")));
    g.set_single_tensor_return(b);
  }
  return Status::Ok();
}

// The name a spec's argument carries ({"name": ...} or an Argument union).
std::optional<std::string_view> spec_arg_name(Element arg) {
  std::string_view s;
  if (!arg["name"].get_string().get(s)) return s;
  dom::object o;
  if (arg.get_object().get(o)) return std::nullopt;
  for (auto kv : o) {
    if (kv.value.is_null()) continue;
    if (!kv.value["name"].get_string().get(s)) return s;
    if (!kv.value["as_name"].get_string().get(s)) return s;
  }
  return std::nullopt;
}

std::string graph_input_name(const Argument& a) {
  std::string name;
  a.for_each_value([&](Value* v) { name = v->name(); });
  return name;
}

Status ProgramDecoder::decode_signature(Element e, const JsonPath& p, ExportedProgram& ep) {
  Graph& g = ep.graph();
  LATHE_ASSIGN_OR_RETURN(Element ie, r_.field(e, "input_specs", p));
  JsonPath ip = p.field("input_specs");
  LATHE_ASSIGN_OR_RETURN(dom::array ins, r_.array(ie, ip));
  if (ins.size() != g.inputs().size()) {
    return r_.error(ip, "has " + std::to_string(ins.size()) + " specs but the graph has " +
                            std::to_string(g.inputs().size()) + " inputs");
  }
  int64_t i = 0;
  for (Element spec : ins) {
    JsonPath sp = ip.at(i);
    LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(spec, sp));
    JsonPath mp = sp.field(m.first);
    InputSpec s;
    auto str_field = [&](std::string_view key) -> Result<std::string> {
      LATHE_ASSIGN_OR_RETURN(Element f, r_.field(m.second, key, mp));
      LATHE_ASSIGN_OR_RETURN(std::string_view sv, r_.string(f, mp.field(key)));
      return std::string(sv);
    };
    if (m.first == "user_input") {
      s.kind = InputKind::UserInput;
    } else if (m.first == "parameter") {
      s.kind = InputKind::Parameter;
      LATHE_ASSIGN_OR_RETURN(s.target, str_field("parameter_name"));
    } else if (m.first == "buffer") {
      s.kind = InputKind::Buffer;
      LATHE_ASSIGN_OR_RETURN(s.target, str_field("buffer_name"));
      if (auto pe = r_.optional_field(m.second, "persistent")) {
        LATHE_ASSIGN_OR_RETURN(s.persistent, r_.boolean(*pe, mp.field("persistent")));
      }
    } else if (m.first == "tensor_constant") {
      s.kind = InputKind::TensorConstant;
      LATHE_ASSIGN_OR_RETURN(s.target, str_field("tensor_constant_name"));
    } else if (m.first == "custom_obj") {
      s.kind = InputKind::CustomObj;
      LATHE_ASSIGN_OR_RETURN(s.target, str_field("custom_obj_name"));
    } else if (m.first == "token") {
      s.kind = InputKind::Token;
    } else if (m.first == "constant_input") {
      s.kind = InputKind::ConstantInput;
      LATHE_ASSIGN_OR_RETURN(s.target, str_field("name"));
      LATHE_ASSIGN_OR_RETURN(Element val, r_.field(m.second, "value", mp));
      LATHE_ASSIGN_OR_RETURN(s.constant_value, decode_argument(val, mp.field("value"), g, 0));
    } else {
      return r_.error(sp, "unknown InputSpec member '" + std::string(m.first) + "'");
    }
    if (s.kind != InputKind::ConstantInput) {
      LATHE_ASSIGN_OR_RETURN(Element arg, r_.field(m.second, "arg", mp));
      auto name = spec_arg_name(arg);
      std::string expected = graph_input_name(g.inputs()[static_cast<size_t>(i)]);
      if (!name || *name != expected) {
        return r_.error(mp.field("arg"), "names '" + std::string(name.value_or("?")) + "' but graph input " +
                                             std::to_string(i) + " is '" + expected + "'");
      }
    }
    ep.input_specs.push_back(std::move(s));
    ++i;
  }

  LATHE_ASSIGN_OR_RETURN(Element oe, r_.field(e, "output_specs", p));
  JsonPath op = p.field("output_specs");
  LATHE_ASSIGN_OR_RETURN(dom::array outs, r_.array(oe, op));
  if (outs.size() != g.outputs().size()) {
    return r_.error(op, "has " + std::to_string(outs.size()) + " specs but the graph has " +
                            std::to_string(g.outputs().size()) + " outputs");
  }
  i = 0;
  for (Element spec : outs) {
    JsonPath sp = op.at(i);
    LATHE_ASSIGN_OR_RETURN(auto m, r_.union_member(spec, sp));
    JsonPath mp = sp.field(m.first);
    OutputSpec s;
    std::string_view target_key;
    if (m.first == "user_output") {
      s.kind = OutputKind::UserOutput;
    } else if (m.first == "loss_output") {
      s.kind = OutputKind::LossOutput;
    } else if (m.first == "buffer_mutation") {
      s.kind = OutputKind::BufferMutation;
      target_key = "buffer_name";
    } else if (m.first == "gradient_to_parameter") {
      s.kind = OutputKind::GradientToParameter;
      target_key = "parameter_name";
    } else if (m.first == "gradient_to_user_input") {
      s.kind = OutputKind::GradientToUserInput;
      target_key = "user_input_name";
    } else if (m.first == "user_input_mutation") {
      s.kind = OutputKind::UserInputMutation;
      target_key = "user_input_name";
    } else if (m.first == "token") {
      s.kind = OutputKind::Token;
    } else if (m.first == "parameter_mutation") {
      s.kind = OutputKind::ParameterMutation;
      target_key = "parameter_name";
    } else {
      return r_.error(sp, "unknown OutputSpec member '" + std::string(m.first) + "'");
    }
    if (!target_key.empty()) {
      LATHE_ASSIGN_OR_RETURN(Element f, r_.field(m.second, target_key, mp));
      LATHE_ASSIGN_OR_RETURN(std::string_view sv, r_.string(f, mp.field(target_key)));
      s.target = std::string(sv);
    }
    LATHE_ASSIGN_OR_RETURN(Element arg, r_.field(m.second, "arg", mp));
    auto name = spec_arg_name(arg);
    const Argument& out = g.outputs()[static_cast<size_t>(i)];
    std::string expected = graph_input_name(out);
    if (name && !expected.empty() && *name != expected) {
      return r_.error(mp.field("arg"), "names '" + std::string(*name) + "' but graph output " + std::to_string(i) +
                                           " is '" + expected + "'");
    }
    ep.output_specs.push_back(std::move(s));
    ++i;
  }
  return Status::Ok();
}

Result<std::unique_ptr<ExportedProgram>> ProgramDecoder::decode(Element root) {
  JsonPath p;
  auto ep = std::make_unique<ExportedProgram>();

  // Schema version first: it decides how to read everything else.
  LATHE_ASSIGN_OR_RETURN(Element sv, r_.field(root, "schema_version", p));
  int64_t legacy_version;
  if (!sv.get_int64().get(legacy_version)) {
    return r_.error(p.field("schema_version"),
                    "schema version " + std::to_string(legacy_version) +
                        " (an integer: written by PyTorch 2.2/2.3) is older than schema 8, which this "
                        "version of Lathe reads");
  }
  LATHE_ASSIGN_OR_RETURN(Element maj, r_.field(sv, "major", p.field("schema_version")));
  LATHE_ASSIGN_OR_RETURN(ep->schema_version.major, r_.int64(maj, p.field("schema_version").field("major")));
  if (auto mn = r_.optional_field(sv, "minor")) {
    LATHE_ASSIGN_OR_RETURN(ep->schema_version.minor, r_.int64(*mn, p.field("schema_version").field("minor")));
  }
  if (ep->schema_version.major != 8) {
    return r_.error(p.field("schema_version"), "schema major version " + std::to_string(ep->schema_version.major) +
                                                   " is not supported (Lathe reads schema 8)");
  }

  LATHE_ASSIGN_OR_RETURN(Element gm, r_.field(root, "graph_module", p));
  JsonPath gp = p.field("graph_module");
  LATHE_ASSIGN_OR_RETURN(Element graph, r_.field(gm, "graph", gp));
  LATHE_RETURN_IF_ERROR(decode_graph(graph, gp.field("graph"), ep->graph(), 0));
  LATHE_ASSIGN_OR_RETURN(Element sig, r_.field(gm, "signature", gp));
  LATHE_RETURN_IF_ERROR(decode_signature(sig, gp.field("signature"), *ep));
  if (auto mcg = r_.optional_field(gm, "module_call_graph")) ep->module_call_graph_json = simdjson::minify(*mcg);
  if (auto md = r_.optional_field(gm, "metadata")) {
    LATHE_RETURN_IF_ERROR(decode_metadata(*md, gp.field("metadata"), ep->graph_module_metadata));
  }
  if (auto tn = r_.optional_field(gm, "treespec_namedtuple_fields")) {
    ep->treespec_namedtuple_fields_json = simdjson::minify(*tn);
  }

  if (auto ov = r_.optional_field(root, "opset_version")) {
    LATHE_ASSIGN_OR_RETURN(dom::object o, r_.object(*ov, p.field("opset_version")));
    for (auto kv : o) {
      LATHE_ASSIGN_OR_RETURN(int64_t v, r_.int64(kv.value, p.field("opset_version").field(kv.key)));
      ep->opset_version.emplace_back(std::string(kv.key), v);
    }
  }
  if (auto rc = r_.optional_field(root, "range_constraints")) {
    JsonPath rp = p.field("range_constraints");
    LATHE_ASSIGN_OR_RETURN(dom::object o, r_.object(*rc, rp));
    for (auto kv : o) {
      JsonPath kp = rp.field(kv.key);
      RangeConstraint c;
      auto bound = [&](std::string_view key, std::optional<int64_t>& out) -> Status {
        auto f = r_.optional_field(kv.value, key);
        if (!f) return Status::Ok();
        int64_t iv;
        if (!f->get_int64().get(iv)) {
          out = iv;
          return Status::Ok();
        }
        // Unbounded ends are written as null, as +-Infinity, or (int_oo)
        // as integers beyond int64.
        uint64_t uv;
        if (!f->get_uint64().get(uv)) return Status::Ok();
        LATHE_ASSIGN_OR_RETURN(double d, r_.float64(*f, kp.field(key)));
        if (std::isinf(d)) return Status::Ok();
        if (std::floor(d) == d && std::fabs(d) < 9.2e18) {
          out = static_cast<int64_t>(d);
          return Status::Ok();
        }
        return r_.error(kp.field(key), "expected an integer bound");
      };
      LATHE_RETURN_IF_ERROR(bound("min_val", c.min_val));
      LATHE_RETURN_IF_ERROR(bound("max_val", c.max_val));
      ep->range_constraints.emplace_back(std::string(kv.key), c);
    }
  }
  if (auto vs = r_.optional_field(root, "verifiers")) {
    LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(*vs, p.field("verifiers")));
    int64_t i = 0;
    for (Element v : a) {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(v, p.field("verifiers").at(i++)));
      ep->verifiers.emplace_back(s);
    }
  }
  if (auto tv = r_.optional_field(root, "torch_version")) {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(*tv, p.field("torch_version")));
    ep->torch_version = std::string(s);
  } else {
    ep->torch_version = "<=2.4";  // the schema's default for files that predate the field
  }
  if (auto gc = r_.optional_field(root, "guards_code")) {
    LATHE_ASSIGN_OR_RETURN(dom::array a, r_.array(*gc, p.field("guards_code")));
    int64_t i = 0;
    for (Element v : a) {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(v, p.field("guards_code").at(i++)));
      ep->guards_code.emplace_back(s);
    }
  }
  return ep;
}

}  // namespace

Result<std::unique_ptr<ExportedProgram>> decode_program_json(std::string_view text, const JsonDecodeOptions& options) {
  simdjson::dom::parser parser;
  LATHE_ASSIGN_OR_RETURN(Element root, json::parse(parser, text, options.origin));
  ProgramDecoder decoder(options);
  return decoder.decode(root);
}

}  // namespace lathe
