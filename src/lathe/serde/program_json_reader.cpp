// models/<name>.json -> ExportedProgram, streaming (simdjson On-Demand).
//
// The document is read once, front to back, straight into the graph:
// values are created as their defining placeholder or node is decoded, and
// every reference is resolved to a lathe::Value* immediately, so a name used
// before it is defined (or never defined) is an error at the exact JSON
// path. A graph's value tables (tensor_values, sym_int_values, ...) follow
// its nodes in the file; they are read after the nodes and give each value
// its metadata then. A writer lists tensor_values in the order it defines
// the values (PyTorch and Lathe both do), so each entry is matched with the
// next tensor in line by one string comparison; the name index is asked
// only when an entry is out of line. A graph's outputs, which come before
// its nodes but name their values, are decoded after them.
#include <array>
#include <cmath>
#include <deque>
#include <functional>

#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/input_shapes.h"
#include "lathe/ir/spec_kinds.h"
#include "lathe/serde/json_reader.h"
#include "lathe/serde/program_json.h"

namespace lathe {
namespace {

using json::Object;
using JValue = json::Value;

// A graph being decoded, with its tensors in the order they were defined.
struct GraphState {
  Graph& g;
  std::vector<lathe::Value*> tensors;
  size_t next_tensor = 0;  // the tensor tensor_values is expected to name next
  std::vector<lathe::Value*> placeholders;  // in the order they were defined
  size_t next_placeholder = 0;              // the one the nodes are expected to read next
};

class ProgramDecoder {
 public:
  ProgramDecoder(const JsonDecodeOptions& options, std::string_view text)
      : r_(options.origin), options_(options), progress_(text, options.read_past) {}
  Result<std::unique_ptr<ExportedProgram>> decode(json::Document& doc);

 private:
  // What the root's members have said so far.
  struct RootState {
    std::unique_ptr<ExportedProgram> ep;
    bool have_graph_module = false;
    bool have_torch_version = false;
  };
  Status decode_schema_version(JValue& sv, const JsonPath& svp, ExportedProgram& ep);
  Status decode_root_member(std::string_view key, JValue& x, const JsonPath& mp, RootState& r);
  Status decode_graph_module(JValue& v, const JsonPath& gp, ExportedProgram& ep);
  Status decode_range_constraints(JValue& v, const JsonPath& p, ExportedProgram& ep);

  // ---- graphs ----
  Status decode_graph(JValue& v, const JsonPath& p, Graph& g, size_t depth);
  Status decode_graph_input(JValue& v, const JsonPath& p, GraphState& s, size_t depth);
  Status decode_node(JValue& v, const JsonPath& p, GraphState& s, size_t depth);
  Status decode_node_outputs(JValue& v, const JsonPath& p, GraphState& s, Node* node);
  // Fills `na` in place: an argument is a variant, and each layer of Result
  // it would pass through moves it once more.
  Status decode_named_argument(JValue& v, const JsonPath& p, Graph& g, size_t depth, NamedArgument& na);
  Status decode_metadata(JValue& v, const JsonPath& p, std::vector<std::pair<std::string, std::string>>& out);
  Status decode_value_table(std::string_view key, JValue& v, const JsonPath& p, GraphState& s);
  Status decode_tensor_values(JValue& v, const JsonPath& p, GraphState& s);
  template <ValueKind Kind, typename Decode>
  Status decode_sym_table(JValue& table, const JsonPath& p, Graph& g, Decode&& decode);
  template <typename Out>
  Result<Out> sym_scalar(JValue& v, const JsonPath& p);
  // A node's inputs as they are decoded, one list per graph depth (a
  // subgraph's nodes are decoded inside an argument of their parent's).
  // A deque: deeper lists are added without moving the shallower ones.
  std::deque<std::vector<NamedArgument>> input_scratch_;
  // A member met before the members it depends on: its text and path.
  struct Deferred {
    std::string_view text;
    JsonPath path;
  };
  template <typename Fn>
  Status decode_later(const Deferred& d, Fn&& fn);

  // ---- values ----
  Result<lathe::Value*> define(GraphState& s, Node* producer, ValueKind kind, std::string_view name,
                               const JsonPath& p);
  Result<lathe::Value*> lookup(Graph& g, std::string_view name, const JsonPath& p);
  // Where a name is looked for before the graph's name index, which for a
  // large graph is a miss to memory per probe: nodes read the parameters in
  // about the order the graph lists them (the next one expected is asked
  // first), and otherwise mostly what the few nodes before them defined (a
  // small table by the name's hash, checked by graph and name). Values are
  // not destroyed while a program is decoded (an error drops it whole).
  lathe::Value* recently_seen(GraphState& s, std::string_view name);
  static constexpr size_t kRecentValues = 256;
  static size_t recent_slot(std::string_view name) {
    return std::hash<std::string_view>{}(name) & (kRecentValues - 1);
  }
  std::array<lathe::Value*, kRecentValues> recent_values_{};
  GraphState* current_ = nullptr;  // the graph whose nodes are being decoded
  Result<std::string_view> name_field(JValue& v, const JsonPath& p);  // {"name": ...}
  // {"name": ..., "class_fqn": ...}
  Status name_and_class(JValue& v, const JsonPath& p, std::optional<std::string_view>& name,
                        std::optional<std::string_view>& cls);
  Result<lathe::Value*> lookup_tensor_arg(Graph& g, JValue& v, const JsonPath& p);
  Result<lathe::Value*> optional_tensor(JValue& v, const JsonPath& p, Graph& g);

  // ---- arguments (the Argument union) ----
  Result<Argument> decode_argument(JValue& v, const JsonPath& p, Graph& g, size_t depth);
  Result<Argument> decode_argument_member(std::string_view key, JValue& x, const JsonPath& mp, const JsonPath& p,
                                          Graph& g, size_t depth);
  Result<std::optional<Argument>> decode_value_member(std::string_view key, JValue& x, const JsonPath& mp, Graph& g);
  Result<std::optional<Argument>> decode_scalar_member(std::string_view key, JValue& x, const JsonPath& mp);
  Result<std::optional<Argument>> decode_list_member(std::string_view key, JValue& x, const JsonPath& mp);
  Result<std::optional<Argument>> decode_sym_member(std::string_view key, JValue& x, const JsonPath& mp, Graph& g);
  Result<Argument> decode_graph_arg(JValue& x, const JsonPath& mp, size_t depth);
  Result<Argument> decode_string_to_argument(JValue& x, const JsonPath& mp, Graph& g, size_t depth);
  template <typename Literal>
  Result<SymArg<Literal>> decode_sym_arg(JValue& v, const JsonPath& p, Graph& g);
  // Calls fn(element, path) for each element, collecting the results.
  template <typename Item, typename Fn>
  Status list(JValue& x, const JsonPath& mp, std::vector<Item>& items, Fn&& item);
  // A list Argument (IntList, SymIntList, TensorList...) of what `item` reads.
  template <typename ListArg, typename Fn>
  Result<std::optional<Argument>> list_argument(JValue& x, const JsonPath& mp, Fn&& item);

  // ---- what a node's outputs define ----
  // Fills `out` in place (see decode_named_argument).
  Status decode_defining_argument(JValue& v, const JsonPath& p, GraphState& s, Node* producer, Argument& out);
  Result<std::optional<Argument>> decode_defined_values(std::string_view key, JValue& x, const JsonPath& mp,
                                                        GraphState& s, Node* producer);
  Result<lathe::Value*> define_sym(ValueKind kind, JValue& e, const JsonPath& ep, GraphState& s, Node* producer,
                                   std::optional<int64_t>* literal_int);

  // ---- signature ----
  Status decode_signature(JValue& v, const JsonPath& p, ExportedProgram& ep);
  Status decode_input_spec(JValue& spec, const JsonPath& sp, size_t index, ExportedProgram& ep);
  Status decode_output_spec(JValue& spec, const JsonPath& sp, size_t index, ExportedProgram& ep);
  Result<std::optional<std::string_view>> spec_arg_name(JValue& v, const JsonPath& p, size_t depth = 0);

  // Nodes and value-table entries are read front to back inside objects
  // read the same way (no find() encloses them), so what lies behind them is
  // never read again, except a member kept for later, which is parsed from
  // its own text (json::ReadProgress).
  void reached(JValue& v) { progress_.reached(v); }

  json::Reader r_;
  const JsonDecodeOptions& options_;
  json::ReadProgress progress_;
  json::TensorMetaCache metas_;
};

// ===========================================================================
// Values

Result<lathe::Value*> ProgramDecoder::define(GraphState& s, Node* producer, ValueKind kind, std::string_view name,
                                             const JsonPath& p) {
  GraphAssembler a(s.g);
  lathe::Value* v = producer ? a.new_node_value(producer, kind, std::string(name))
                             : a.insert_placeholder(kind, std::string(name));
  // A taken name is made unique by the graph (one probe of its name index
  // either way); here that means the file defines it twice. The graph is
  // dropped with the error, renamed value and all.
  if (v->name() != name) return r_.error(p, "value '" + std::string(name) + "' is defined twice");
  if (kind == ValueKind::Tensor) s.tensors.push_back(v);
  if (producer) {
    recent_values_[recent_slot(name)] = v;
  } else {
    s.placeholders.push_back(v);
  }
  return v;
}

lathe::Value* ProgramDecoder::recently_seen(GraphState& s, std::string_view name) {
  if (s.next_placeholder < s.placeholders.size() && s.placeholders[s.next_placeholder]->name() == name) {
    return s.placeholders[s.next_placeholder++];
  }
  lathe::Value* recent = recent_values_[recent_slot(name)];
  return recent && recent->graph() == &s.g && recent->name() == name ? recent : nullptr;
}

Result<lathe::Value*> ProgramDecoder::lookup(Graph& g, std::string_view name, const JsonPath& p) {
  if (current_ && &current_->g == &g) {
    if (lathe::Value* v = recently_seen(*current_, name)) return v;
  }
  lathe::Value* v = g.find_value(name);
  if (!v) return r_.error(p, "references undefined value '" + std::string(name) + "'");
  recent_values_[recent_slot(name)] = v;
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

Status ProgramDecoder::name_and_class(JValue& v, const JsonPath& p, std::optional<std::string_view>& name,
                                      std::optional<std::string_view>& cls) {
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
    if (k == "name") {
      LATHE_ASSIGN_OR_RETURN(name, r_.string(y, yp));
    } else if (k == "class_fqn") {
      LATHE_ASSIGN_OR_RETURN(cls, r_.string(y, yp));
    }
    return Status::Ok();
  }));
  if (!name) return r_.error(p, "missing field 'name'");
  return Status::Ok();
}

Result<lathe::Value*> ProgramDecoder::lookup_tensor_arg(Graph& g, JValue& v, const JsonPath& p) {
  LATHE_ASSIGN_OR_RETURN(std::string_view name, name_field(v, p));
  return lookup(g, name, p.field("name"));
}

// OptionalTensorArgument: {"as_tensor": {"name": ...}} or {"as_none": ...}.
Result<lathe::Value*> ProgramDecoder::optional_tensor(JValue& v, const JsonPath& p, Graph& g) {
  lathe::Value* t = nullptr;
  LATHE_RETURN_IF_ERROR(r_.union_member(v, p, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
    if (k == "as_none") return Status::Ok();
    if (k != "as_tensor") return r_.error(p, "unknown OptionalTensorArgument member '" + std::string(k) + "'");
    LATHE_ASSIGN_OR_RETURN(t, lookup_tensor_arg(g, y, yp));
    return Status::Ok();
  }));
  return t;
}

// ===========================================================================
// Arguments

// A member one of the decode_*_member functions below knows (they return
// nullopt for a member they do not).
Result<std::optional<Argument>> found(Argument a) { return std::optional<Argument>(std::move(a)); }

template <typename Item, typename Fn>
Status ProgramDecoder::list(JValue& x, const JsonPath& mp, std::vector<Item>& items, Fn&& item) {
  return r_.for_each_element(x, mp, [&](JValue& e, const JsonPath& ip) -> Status {
    LATHE_ASSIGN_OR_RETURN(auto decoded, item(e, ip));
    items.push_back(std::move(decoded));
    return Status::Ok();
  });
}

template <typename ListArg, typename Fn>
Result<std::optional<Argument>> ProgramDecoder::list_argument(JValue& x, const JsonPath& mp, Fn&& item) {
  ListArg l;
  LATHE_RETURN_IF_ERROR(list(x, mp, l.items, std::forward<Fn>(item)));
  return found(std::move(l));
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
    if (key == "as_tensor") {
      // Most arguments: taken here, not moved out through the layers below.
      LATHE_ASSIGN_OR_RETURN(lathe::Value * t, lookup_tensor_arg(g, x, mp));
      out = TensorRef{t};
      return Status::Ok();
    }
    LATHE_ASSIGN_OR_RETURN(out, decode_argument_member(key, x, mp, p, g, depth));
    return Status::Ok();
  }));
  return out;
}

// One member of the Argument union, by the group its key belongs to.
Result<Argument> ProgramDecoder::decode_argument_member(std::string_view key, JValue& x, const JsonPath& mp,
                                                        const JsonPath& p, Graph& g, size_t depth) {
  LATHE_ASSIGN_OR_RETURN(std::optional<Argument> a, decode_value_member(key, x, mp, g));
  if (a) return std::move(*a);
  LATHE_ASSIGN_OR_RETURN(a, decode_scalar_member(key, x, mp));
  if (a) return std::move(*a);
  LATHE_ASSIGN_OR_RETURN(a, decode_list_member(key, x, mp));
  if (a) return std::move(*a);
  LATHE_ASSIGN_OR_RETURN(a, decode_sym_member(key, x, mp, g));
  if (a) return std::move(*a);
  if (key == "as_graph") return decode_graph_arg(x, mp, depth);
  if (key == "as_string_to_argument") return decode_string_to_argument(x, mp, g, depth);
  return r_.error(p, "unknown Argument member '" + std::string(key) + "'");
}

// Members that reference values: tensors, custom objects.
Result<std::optional<Argument>> ProgramDecoder::decode_value_member(std::string_view key, JValue& x,
                                                                    const JsonPath& mp, Graph& g) {
  auto tensor = [&](JValue& e, const JsonPath& ip) { return lookup_tensor_arg(g, e, ip); };
  if (key == "as_tensor") {
    LATHE_ASSIGN_OR_RETURN(lathe::Value * t, tensor(x, mp));
    return found(TensorRef{t});
  }
  if (key == "as_tensors") return list_argument<TensorList>(x, mp, tensor);
  if (key == "as_optional_tensor") {
    LATHE_ASSIGN_OR_RETURN(lathe::Value * t, optional_tensor(x, mp, g));
    return found(OptionalTensor{t});
  }
  if (key == "as_optional_tensors") {
    return list_argument<OptionalTensorList>(x, mp, [&](JValue& e, const JsonPath& ip) { return optional_tensor(e, ip, g); });
  }
  if (key == "as_custom_obj") {
    LATHE_ASSIGN_OR_RETURN(lathe::Value * obj, tensor(x, mp));
    return found(CustomObjRef{obj});
  }
  if (key == "as_nested_tensors") {
    return list_argument<NestedTensorList>(x, mp, [&](JValue& e, const JsonPath& ip) -> Result<std::vector<lathe::Value*>> {
      std::vector<lathe::Value*> inner;
      LATHE_RETURN_IF_ERROR(list(e, ip, inner, tensor));
      return inner;
    });
  }
  return std::optional<Argument>();
}

// Single literals: None, numbers, strings, booleans, enums, devices.
Result<std::optional<Argument>> ProgramDecoder::decode_scalar_member(std::string_view key, JValue& x,
                                                                     const JsonPath& mp) {
  if (key == "as_none") return found(NoneArg{});
  if (key == "as_int") {
    LATHE_ASSIGN_OR_RETURN(int64_t i, r_.int64(x, mp));
    return found(i);
  }
  if (key == "as_float") {
    LATHE_ASSIGN_OR_RETURN(double d, r_.float64(x, mp));
    return found(d);
  }
  if (key == "as_string") {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
    return found(std::string(s));
  }
  if (key == "as_bool") {
    LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(x, mp));
    return found(b);
  }
  if (key == "as_scalar_type") {
    LATHE_ASSIGN_OR_RETURN(int64_t code, r_.int64(x, mp));
    auto dt = dtype_from_schema(code);
    if (!dt) return r_.error(mp, "unknown scalar type " + std::to_string(code));
    return found(ScalarTypeArg{*dt});
  }
  if (key == "as_memory_format") {
    LATHE_ASSIGN_OR_RETURN(int64_t f, r_.int64(x, mp));
    return found(MemoryFormatArg{f});
  }
  if (key == "as_layout") {
    LATHE_ASSIGN_OR_RETURN(int64_t l, r_.int64(x, mp));
    return found(LayoutArg{l});
  }
  if (key == "as_device") {
    LATHE_ASSIGN_OR_RETURN(Device d, r_.device(x, mp));
    return found(DeviceArg{std::move(d)});
  }
  if (key == "as_operator") {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
    return found(OperatorArg{std::string(s)});
  }
  if (key == "as_complex") {
    ComplexArg c;
    LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
      if (k == "real") {
        LATHE_ASSIGN_OR_RETURN(c.real, r_.float64(y, yp));
      } else if (k == "imag") {
        LATHE_ASSIGN_OR_RETURN(c.imag, r_.float64(y, yp));
      }
      return Status::Ok();
    }));
    return found(c);
  }
  return std::optional<Argument>();
}

// Lists of literals, and lists of lists.
Result<std::optional<Argument>> ProgramDecoder::decode_list_member(std::string_view key, JValue& x,
                                                                   const JsonPath& mp) {
  auto integer = [&](JValue& e, const JsonPath& ip) { return r_.int64(e, ip); };
  auto floating = [&](JValue& e, const JsonPath& ip) { return r_.float64(e, ip); };
  if (key == "as_ints") return list_argument<IntList>(x, mp, integer);
  if (key == "as_floats") return list_argument<FloatList>(x, mp, floating);
  if (key == "as_strings") {
    return list_argument<StringList>(x, mp, [&](JValue& e, const JsonPath& ip) -> Result<std::string> {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(e, ip));
      return std::string(s);
    });
  }
  if (key == "as_bools") {
    return list_argument<BoolList>(x, mp, [&](JValue& e, const JsonPath& ip) { return r_.boolean(e, ip); });
  }
  if (key == "as_int_lists") {
    return list_argument<IntLists>(x, mp, [&](JValue& e, const JsonPath& ip) -> Result<std::vector<int64_t>> {
      std::vector<int64_t> inner;
      LATHE_RETURN_IF_ERROR(list(e, ip, inner, integer));
      return inner;
    });
  }
  if (key == "as_float_lists") {
    return list_argument<FloatLists>(x, mp, [&](JValue& e, const JsonPath& ip) -> Result<std::vector<double>> {
      std::vector<double> inner;
      LATHE_RETURN_IF_ERROR(list(e, ip, inner, floating));
      return inner;
    });
  }
  return std::optional<Argument>();
}

// Symbolic scalars and lists of them: a value (as_name) or a literal each.
Result<std::optional<Argument>> ProgramDecoder::decode_sym_member(std::string_view key, JValue& x,
                                                                  const JsonPath& mp, Graph& g) {
  if (key == "as_sym_int") {
    LATHE_ASSIGN_OR_RETURN(SymIntArg s, decode_sym_arg<int64_t>(x, mp, g));
    return found(s);
  }
  if (key == "as_sym_ints") {
    return list_argument<SymIntList>(x, mp, [&](JValue& e, const JsonPath& ip) { return decode_sym_arg<int64_t>(e, ip, g); });
  }
  if (key == "as_sym_float") {
    LATHE_ASSIGN_OR_RETURN(SymFloatArg s, decode_sym_arg<double>(x, mp, g));
    return found(s);
  }
  if (key == "as_sym_floats") {
    return list_argument<SymFloatList>(x, mp, [&](JValue& e, const JsonPath& ip) { return decode_sym_arg<double>(e, ip, g); });
  }
  if (key == "as_sym_bool") {
    LATHE_ASSIGN_OR_RETURN(SymBoolArg s, decode_sym_arg<bool>(x, mp, g));
    return found(s);
  }
  if (key == "as_sym_bools") {
    return list_argument<SymBoolList>(x, mp, [&](JValue& e, const JsonPath& ip) { return decode_sym_arg<bool>(e, ip, g); });
  }
  return std::optional<Argument>();
}

Result<Argument> ProgramDecoder::decode_graph_arg(JValue& x, const JsonPath& mp, size_t depth) {
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
  return Argument(std::move(ga));
}

Result<Argument> ProgramDecoder::decode_string_to_argument(JValue& x, const JsonPath& mp, Graph& g, size_t depth) {
  StringToArgument map;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
    LATHE_ASSIGN_OR_RETURN(Argument sub, decode_argument(y, yp, g, depth + 1));
    map.items.emplace_back(std::string(k), std::move(sub));
    return Status::Ok();
  }));
  return Argument(std::move(map));
}

// ===========================================================================
// What a node's outputs define

// {"as_name": ...} defines a symbolic value; `literal_int`, when given,
// takes an {"as_int": ...} literal instead (lists of sym ints may hold both).
Result<lathe::Value*> ProgramDecoder::define_sym(ValueKind kind, JValue& e, const JsonPath& ep, GraphState& s,
                                                 Node* producer, std::optional<int64_t>* literal_int) {
  lathe::Value* defined = nullptr;
  LATHE_RETURN_IF_ERROR(r_.union_member(e, ep, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
    if (k == "as_name") {
      LATHE_ASSIGN_OR_RETURN(std::string_view n, r_.string(y, yp));
      LATHE_ASSIGN_OR_RETURN(defined, define(s, producer, kind, n, yp));
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
}

// The members of an output slot that define values; nullopt for a literal.
Result<std::optional<Argument>> ProgramDecoder::decode_defined_values(std::string_view key, JValue& x,
                                                                      const JsonPath& mp, GraphState& s,
                                                                      Node* producer) {
  auto define_named = [&](ValueKind kind, JValue& e, const JsonPath& ep) -> Result<lathe::Value*> {
    LATHE_ASSIGN_OR_RETURN(std::string_view n, name_field(e, ep));
    return define(s, producer, kind, n, ep);
  };
  if (key == "as_none") return found(NoneArg{});
  if (key == "as_tensor" || key == "as_token") {
    LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_named(key == "as_tensor" ? ValueKind::Tensor : ValueKind::Token, x, mp));
    return found(TensorRef{d});
  }
  if (key == "as_tensors") {
    return list_argument<TensorList>(x, mp, [&](JValue& e, const JsonPath& ip) {
      return define_named(ValueKind::Tensor, e, ip);
    });
  }
  if (key == "as_optional_tensors") {
    return list_argument<OptionalTensorList>(x, mp, [&](JValue& e, const JsonPath& ip) -> Result<lathe::Value*> {
      lathe::Value* d = nullptr;
      LATHE_RETURN_IF_ERROR(r_.union_member(e, ip, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "as_none") return Status::Ok();
        if (k != "as_tensor") return r_.error(ip, "unknown OptionalTensorArgument member '" + std::string(k) + "'");
        LATHE_ASSIGN_OR_RETURN(d, define_named(ValueKind::Tensor, y, yp));
        return Status::Ok();
      }));
      return d;
    });
  }
  if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
    ValueKind kind = key == "as_sym_int" ? ValueKind::SymInt : key == "as_sym_float" ? ValueKind::SymFloat
                                                                                      : ValueKind::SymBool;
    LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_sym(kind, x, mp, s, producer, nullptr));
    if (kind == ValueKind::SymInt) return found(SymIntArg{d});
    if (kind == ValueKind::SymFloat) return found(SymFloatArg{d});
    return found(SymBoolArg{d});
  }
  if (key == "as_sym_ints") {
    return list_argument<SymIntList>(x, mp, [&](JValue& e, const JsonPath& ip) -> Result<SymIntArg> {
      std::optional<int64_t> lit;
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define_sym(ValueKind::SymInt, e, ip, s, producer, &lit));
      return d ? SymIntArg{d} : SymIntArg{*lit};
    });
  }
  if (key == "as_custom_obj") {
    std::optional<std::string_view> name, cls;
    LATHE_RETURN_IF_ERROR(name_and_class(x, mp, name, cls));
    LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define(s, producer, ValueKind::CustomObj, *name, mp));
    if (cls) d->set_class_fqn(std::string(*cls));
    return found(CustomObjRef{d});
  }
  return std::optional<Argument>();
}

Status ProgramDecoder::decode_defining_argument(JValue& v, const JsonPath& p, GraphState& s, Node* producer,
                                                Argument& out) {
  bool defined = false;
  // Literal outputs are rare; they are decoded from the raw text again.
  std::string raw_literal;
  LATHE_RETURN_IF_ERROR(r_.union_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    defined = true;
    if (key == "as_tensor") {
      // Most outputs: defined here, not moved out through the layers below.
      LATHE_ASSIGN_OR_RETURN(std::string_view n, name_field(x, mp));
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define(s, producer, ValueKind::Tensor, n, mp));
      out = TensorRef{d};
      return Status::Ok();
    }
    LATHE_ASSIGN_OR_RETURN(std::optional<Argument> a, decode_defined_values(key, x, mp, s, producer));
    if (a) {
      out = std::move(*a);
      return Status::Ok();
    }
    // A literal in an output slot defines nothing; keep its text to decode.
    defined = false;
    LATHE_ASSIGN_OR_RETURN(std::string text, r_.raw(x, mp));
    raw_literal = "{\"" + std::string(key) + "\":" + text + "}";
    return Status::Ok();
  }));
  if (defined) return Status::Ok();
  LATHE_ASSIGN_OR_RETURN(auto doc, json::Document::parse(raw_literal, r_.origin()));
  LATHE_ASSIGN_OR_RETURN(JValue lit, doc->root());
  LATHE_ASSIGN_OR_RETURN(out, decode_argument(lit, p, s.g, 0));
  return Status::Ok();
}

// ===========================================================================
// Graphs

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

Status ProgramDecoder::decode_named_argument(JValue& v, const JsonPath& p, Graph& g, size_t depth, NamedArgument& na) {
  bool have_name = false, have_arg = false;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
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
  if (!have_name) return r_.error(p, "missing field 'name'");
  if (!have_arg) return r_.error(p, "missing field 'arg'");
  return Status::Ok();
}

// The members of a node, taken in one pass in whatever order they come
// (looking each up by name costs a search per member). The node is created
// once its target and inputs are known; outputs met before that (no writer
// does this) are kept as text and decoded after the pass.
struct NodeMembers {
  std::optional<OpTarget> target;
  std::optional<std::vector<NamedArgument>> inputs;
  std::optional<std::string_view> early_outputs;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::optional<bool> hop_single_tensor_return;
  std::optional<std::string_view> name;
};

Status ProgramDecoder::decode_node_outputs(JValue& v, const JsonPath& p, GraphState& s, Node* node) {
  std::vector<Argument> outputs;
  LATHE_RETURN_IF_ERROR(r_.for_each_element(v, p, [&](JValue& out, const JsonPath& op) {
    return decode_defining_argument(out, op, s, node, outputs.emplace_back());
  }));
  GraphAssembler(s.g).set_node_outputs(node, std::move(outputs));
  return Status::Ok();
}

Status ProgramDecoder::decode_node(JValue& v, const JsonPath& p, GraphState& s, size_t depth) {
  reached(v);
  Graph& g = s.g;
  NodeMembers m;
  Node* node = nullptr;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "target" && !m.target) {
      // Interned as read (OpTarget): no copy of the name per node.
      LATHE_ASSIGN_OR_RETURN(std::string_view target, r_.string(x, mp));
      m.target = OpTarget(target);
    } else if (key == "inputs" && !m.inputs) {
      // Collected in this depth's scratch list, then copied into a list of
      // exactly their number: one allocation per node, none to spare.
      while (input_scratch_.size() <= depth) input_scratch_.emplace_back();
      std::vector<NamedArgument>& scratch = input_scratch_[depth];
      scratch.clear();
      LATHE_RETURN_IF_ERROR(r_.for_each_element(x, mp, [&](JValue& in, const JsonPath& ap) {
        return decode_named_argument(in, ap, g, depth, scratch.emplace_back());
      }));
      m.inputs.emplace(std::make_move_iterator(scratch.begin()), std::make_move_iterator(scratch.end()));
      return Status::Ok();
    } else if (key == "outputs" && !node && !m.early_outputs) {
      if (!m.target || !m.inputs) {
        std::string_view raw;
        if (auto err = simdjson::to_json_string(x).get(raw)) return r_.failure(mp, err, "an array");
        m.early_outputs = raw;
        return Status::Ok();
      }
      node = GraphAssembler(g).create_node(*m.target, std::move(*m.inputs));
      return decode_node_outputs(x, mp, s, node);
    } else if (key == "metadata" || key == "is_hop_single_tensor_return" || key == "name") {
      LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, mp));
      if (null) return Status::Ok();
      if (key == "metadata") return decode_metadata(x, mp, m.metadata);
      if (key == "name") {
        LATHE_ASSIGN_OR_RETURN(m.name, r_.string(x, mp));
      } else {
        LATHE_ASSIGN_OR_RETURN(m.hop_single_tensor_return, r_.boolean(x, mp));
      }
    }
    return Status::Ok();
  }));
  if (!m.target) return r_.error(p, "missing field 'target'");
  if (!m.inputs) return r_.error(p, "missing field 'inputs'");
  if (!node) {
    if (!m.early_outputs) return r_.error(p, "missing field 'outputs'");
    node = GraphAssembler(g).create_node(*m.target, std::move(*m.inputs));
    // A view inside the document, so the document's own padding follows it.
    LATHE_ASSIGN_OR_RETURN(auto doc, json::Document::parse(*m.early_outputs, r_.origin(), simdjson::SIMDJSON_PADDING));
    LATHE_ASSIGN_OR_RETURN(JValue outputs, doc->root());
    LATHE_RETURN_IF_ERROR(decode_node_outputs(outputs, p.field("outputs"), s, node));
  }
  node->mutable_metadata() = std::move(m.metadata);
  if (m.hop_single_tensor_return) node->set_is_hop_single_tensor_return(*m.hop_single_tensor_return);
  if (m.name) node->set_explicit_name(std::string(*m.name));
  return Status::Ok();
}

// One graph input: a placeholder (tensor, token, custom object, symbolic
// scalar) or a literal (a constant_input placeholder).
Status ProgramDecoder::decode_graph_input(JValue& in, const JsonPath& ap, GraphState& s, size_t depth) {
  std::optional<Argument> literal;
  LATHE_RETURN_IF_ERROR(r_.union_member(in, ap, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "as_tensor" || key == "as_token" || key == "as_custom_obj") {
      ValueKind kind = key == "as_tensor" ? ValueKind::Tensor : key == "as_token" ? ValueKind::Token
                                                                                  : ValueKind::CustomObj;
      std::optional<std::string_view> name, cls;
      LATHE_RETURN_IF_ERROR(name_and_class(x, mp, name, cls));
      LATHE_ASSIGN_OR_RETURN(lathe::Value * d, define(s, nullptr, kind, *name, mp));
      if (cls) d->set_class_fqn(std::string(*cls));
      return Status::Ok();
    }
    if (key == "as_sym_int" || key == "as_sym_float" || key == "as_sym_bool") {
      ValueKind kind = key == "as_sym_int" ? ValueKind::SymInt : key == "as_sym_float" ? ValueKind::SymFloat
                                                                                        : ValueKind::SymBool;
      return r_.union_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
        if (k == "as_name") {
          LATHE_ASSIGN_OR_RETURN(std::string_view n, r_.string(y, yp));
          return define(s, nullptr, kind, n, yp).ok() ? Status::Ok()
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
    LATHE_ASSIGN_OR_RETURN(literal, decode_argument(lit, ap, s.g, depth));
    return Status::Ok();
  }));
  if (literal) GraphAssembler(s.g).insert_literal_input(std::move(*literal));
  return Status::Ok();
}

// tensor_values: each entry gives its tensor's metadata. Every entry is
// decoded (a malformed one is an error even if nothing names it); one that
// names no tensor of this graph, or one already described, is ignored.
Status ProgramDecoder::decode_tensor_values(JValue& v, const JsonPath& p, GraphState& s) {
  return r_.for_each_member(v, p, [&](std::string_view name, JValue& x, const JsonPath& mp) -> Status {
    reached(x);
    LATHE_ASSIGN_OR_RETURN(MetaRef meta, metas_.get(r_, x, mp));
    lathe::Value* t = nullptr;
    if (s.next_tensor < s.tensors.size() && s.tensors[s.next_tensor]->name() == name) {
      t = s.tensors[s.next_tensor++];
    } else {
      t = s.g.find_value(name);
    }
    if (t && t->kind() == ValueKind::Tensor && !t->meta()) t->set_meta(meta);
    return Status::Ok();
  });
}

// sym_int_values and the like: the first entry for a value of `Kind` wins.
template <ValueKind Kind, typename Decode>
Status ProgramDecoder::decode_sym_table(JValue& table, const JsonPath& p, Graph& g, Decode&& decode) {
  return r_.for_each_member(table, p, [&](std::string_view name, JValue& v, const JsonPath& mp) -> Status {
    LATHE_ASSIGN_OR_RETURN(auto decoded, decode(v, mp));
    lathe::Value* value = g.find_value(name);
    if (value && value->kind() == Kind && !value->sym()) value->set_sym(std::move(decoded));
    return Status::Ok();
  });
}

// {"as_bool": b} / {"as_float": f}, or {"as_expr": ...}
template <typename Out>
Result<Out> ProgramDecoder::sym_scalar(JValue& v, const JsonPath& p) {
  constexpr bool is_bool = std::is_same_v<Out, SymBoolValue>;
  Out out;
  LATHE_RETURN_IF_ERROR(r_.union_member(v, p, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
    if (k == (is_bool ? "as_bool" : "as_float")) {
      if constexpr (is_bool) {
        LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(x, xp));
        out.v = b;
      } else {
        LATHE_ASSIGN_OR_RETURN(double d, r_.float64(x, xp));
        out.v = d;
      }
    } else {
      LATHE_ASSIGN_OR_RETURN(SymExpr e, r_.sym_expr(x, xp));
      out.v = std::move(e);
    }
    return Status::Ok();
  }));
  return out;
}

// One of the tables that describe a graph's values (`key` names it).
Status ProgramDecoder::decode_value_table(std::string_view key, JValue& v, const JsonPath& p, GraphState& s) {
  LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(v, p));
  if (null) return Status::Ok();
  if (key == "tensor_values") return decode_tensor_values(v, p, s);
  if (key == "sym_int_values") {
    return decode_sym_table<ValueKind::SymInt>(v, p, s.g, [&](JValue& x, const JsonPath& xp) { return r_.sym_int(x, xp); });
  }
  if (key == "sym_bool_values") {
    return decode_sym_table<ValueKind::SymBool>(v, p, s.g, [&](JValue& x, const JsonPath& xp) {
      return sym_scalar<SymBoolValue>(x, xp);
    });
  }
  return decode_sym_table<ValueKind::SymFloat>(v, p, s.g, [&](JValue& x, const JsonPath& xp) {
    return sym_scalar<SymFloatValue>(x, xp);
  });
}

// A member kept as text (see Reader::raw_view), decoded now.
template <typename Fn>
Status ProgramDecoder::decode_later(const Deferred& d, Fn&& fn) {
  LATHE_ASSIGN_OR_RETURN(auto doc, json::Document::parse(d.text, r_.origin(), simdjson::SIMDJSON_PADDING));
  LATHE_ASSIGN_OR_RETURN(JValue v, doc->root());
  return fn(v, d.path);
}

bool is_value_table(std::string_view key) {
  return key == "tensor_values" || key == "sym_int_values" || key == "sym_bool_values" || key == "sym_float_values";
}

// One pass over the graph's members: inputs define placeholders, nodes
// define values, the value tables (after the nodes) describe them, and the
// outputs (before the nodes, but naming their values) are decoded last from
// their text. A member met before what it needs (no writer does this) is
// kept as text too, and decoded in turn.
Status ProgramDecoder::decode_graph(JValue& v, const JsonPath& p, Graph& g, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "graphs nested deeper than " + std::to_string(options_.max_depth));
  GraphState s{g, {}, 0, {}, 0};
  // Nested graphs (a subgraph is decoded inside an argument of its
  // parent's node) each have their own state; the parent's is back after.
  GraphState* const parent = current_;
  current_ = &s;
  struct Restore {
    GraphState*& current;
    GraphState* parent;
    ~Restore() { current = parent; }
  } restore{current_, parent};
  bool have_inputs = false, have_nodes = false;
  std::optional<Deferred> nodes, outputs;
  std::vector<std::pair<std::string_view, Deferred>> tables;
  auto decode_nodes = [&](JValue& x, const JsonPath& xp) {
    return r_.for_each_element(x, xp, [&](JValue& n, const JsonPath& np) { return decode_node(n, np, s, depth); });
  };
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "inputs" && !have_inputs) {
      have_inputs = true;
      return r_.for_each_element(x, mp, [&](JValue& in, const JsonPath& ap) {
        progress_.ahead(in);
        return decode_graph_input(in, ap, s, depth);
      });
    }
    if (key == "nodes" && !have_nodes && !nodes) {
      if (!have_inputs) {
        LATHE_ASSIGN_OR_RETURN(std::string_view text, r_.raw_view(x, mp));
        nodes = Deferred{text, mp};
        return Status::Ok();
      }
      have_nodes = true;
      return decode_nodes(x, mp);
    }
    if (is_value_table(key)) {
      if (have_nodes) return decode_value_table(key, x, mp, s);
      LATHE_ASSIGN_OR_RETURN(std::string_view text, r_.raw_view(x, mp));
      tables.emplace_back(key, Deferred{text, mp});
    } else if (key == "outputs" && !outputs) {
      LATHE_ASSIGN_OR_RETURN(std::string_view text, r_.raw_view(x, mp));
      outputs = Deferred{text, mp};
    } else if (key == "is_single_tensor_return") {
      LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, mp));
      if (null) return Status::Ok();
      LATHE_ASSIGN_OR_RETURN(bool b, r_.boolean(x, mp));
      GraphAssembler(g).set_single_tensor_return(b);
    }
    return Status::Ok();
  }));
  if (!have_inputs) return r_.error(p, "missing field 'inputs'");
  if (!have_nodes && !nodes) return r_.error(p, "missing field 'nodes'");
  if (nodes) LATHE_RETURN_IF_ERROR(decode_later(*nodes, decode_nodes));
  for (const auto& entry : tables) {
    // (A named copy: clang before 16 cannot capture a structured binding.)
    const auto& key = entry.first;
    LATHE_RETURN_IF_ERROR(
        decode_later(entry.second, [&](JValue& x, const JsonPath& xp) { return decode_value_table(key, x, xp, s); }));
  }
  for (const lathe::Value* t : s.tensors) {
    if (!t->meta()) return r_.error(p.field("tensor_values"), "tensor '" + t->name() + "' has no entry in tensor_values");
  }
  if (!outputs) return r_.error(p, "missing field 'outputs'");
  return decode_later(*outputs, [&](JValue& x, const JsonPath& xp) {
    return r_.for_each_element(x, xp, [&](JValue& out, const JsonPath& op) -> Status {
      LATHE_ASSIGN_OR_RETURN(Argument a, decode_argument(out, op, g, depth));
      GraphAssembler(g).insert_output(std::move(a));
      return Status::Ok();
    });
  });
}

// ===========================================================================
// Signature

// The name a spec's argument carries: {"name": ...}, or inside an Argument
// union ({"as_tensor": {"name": ...}}, {"as_sym_int": {"as_name": ...}}).
// A view of the document's text, valid while it lives.
Result<std::optional<std::string_view>> ProgramDecoder::spec_arg_name(JValue& v, const JsonPath& p, size_t depth) {
  if (depth > options_.max_depth) return r_.error(p, "nesting deeper than " + std::to_string(options_.max_depth));
  std::optional<std::string_view> found;
  simdjson::ondemand::json_type type;
  if (auto err = v.type().get(type)) return r_.failure(p, err, "an argument");
  if (type != simdjson::ondemand::json_type::object) return found;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    simdjson::ondemand::json_type t;
    if (auto err = x.type().get(t)) return r_.failure(mp, err, "a value");
    if ((key == "name" || key == "as_name") && t == simdjson::ondemand::json_type::string) {
      LATHE_ASSIGN_OR_RETURN(found, r_.string(x, mp));
    } else if (t == simdjson::ondemand::json_type::object && !found) {
      LATHE_ASSIGN_OR_RETURN(found, spec_arg_name(x, mp, depth + 1));
    }
    return Status::Ok();
  }));
  return found;
}

// The name of the value a graph input or output argument holds ("" if none).
std::string_view graph_value_name(const Argument& a) {
  std::string_view name;
  a.for_each_value([&](lathe::Value* v) { name = v->name(); });
  return name;
}

Status ProgramDecoder::decode_input_spec(JValue& spec, const JsonPath& sp, size_t index, ExportedProgram& ep) {
  Graph& g = ep.graph();
  InputSpec s;
  std::optional<std::string_view> arg_name;
  bool have_arg = false;
  LATHE_RETURN_IF_ERROR(r_.union_member(spec, sp, [&](std::string_view kind, JValue& body, const JsonPath& mp) -> Status {
    const InputKindInfo* info = input_kind_for_union_key(kind);
    if (!info) return r_.error(sp, "unknown InputSpec member '" + std::string(kind) + "'");
    s.kind = info->kind;
    bool have_target = info->target_key.empty();
    LATHE_RETURN_IF_ERROR(r_.for_each_member(body, mp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
      if (k == "arg") {
        have_arg = true;
        LATHE_ASSIGN_OR_RETURN(arg_name, spec_arg_name(x, xp));
      } else if (k == info->target_key) {
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
    if (!have_target) return r_.error(mp, "missing field '" + std::string(info->target_key) + "'");
    return Status::Ok();
  }));
  if (index >= g.inputs().size()) {
    return r_.error(sp, "has more specs than the graph has inputs (" + std::to_string(g.inputs().size()) + ")");
  }
  if (s.kind != InputKind::ConstantInput) {
    std::string_view expected = graph_value_name(g.inputs()[index]);
    if (!have_arg) return r_.error(sp, "missing field 'arg'");
    if (!arg_name || *arg_name != expected) {
      return r_.error(sp, "names '" + std::string(arg_name.value_or("?")) + "' but graph input " +
                              std::to_string(index) + " is '" + std::string(expected) + "'");
    }
  }
  ep.input_specs.push_back(std::move(s));
  return Status::Ok();
}

Status ProgramDecoder::decode_output_spec(JValue& spec, const JsonPath& sp, size_t index, ExportedProgram& ep) {
  Graph& g = ep.graph();
  OutputSpec s;
  std::optional<std::string_view> arg_name;
  LATHE_RETURN_IF_ERROR(r_.union_member(spec, sp, [&](std::string_view kind, JValue& body, const JsonPath& mp) -> Status {
    const OutputKindInfo* info = output_kind_for_union_key(kind);
    if (!info) return r_.error(sp, "unknown OutputSpec member '" + std::string(kind) + "'");
    s.kind = info->kind;
    bool have_target = info->target_key.empty();
    LATHE_RETURN_IF_ERROR(r_.for_each_member(body, mp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
      if (k == "arg") {
        LATHE_ASSIGN_OR_RETURN(arg_name, spec_arg_name(x, xp));
      } else if (!info->target_key.empty() && k == info->target_key) {
        LATHE_ASSIGN_OR_RETURN(std::string_view t, r_.string(x, xp));
        s.target = std::string(t);
        have_target = true;
      }
      return Status::Ok();
    }));
    if (!have_target) return r_.error(mp, "missing field '" + std::string(info->target_key) + "'");
    return Status::Ok();
  }));
  if (index >= g.outputs().size()) {
    return r_.error(sp, "has more specs than the graph has outputs (" + std::to_string(g.outputs().size()) + ")");
  }
  std::string_view expected = graph_value_name(g.outputs()[index]);
  if (arg_name && !expected.empty() && *arg_name != expected) {
    return r_.error(sp, "names '" + std::string(*arg_name) + "' but graph output " + std::to_string(index) + " is '" +
                            std::string(expected) + "'");
  }
  ep.output_specs.push_back(std::move(s));
  return Status::Ok();
}

Status ProgramDecoder::decode_signature(JValue& v, const JsonPath& p, ExportedProgram& ep) {
  const Graph& g = ep.graph();
  bool have_inputs = false, have_outputs = false;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "input_specs") {
      have_inputs = true;
      ep.input_specs.reserve(g.inputs().size());
      size_t index = 0;
      return r_.for_each_element(x, mp, [&](JValue& spec, const JsonPath& sp) {
        progress_.ahead(spec);
        return decode_input_spec(spec, sp, index++, ep);
      });
    }
    if (key == "output_specs") {
      have_outputs = true;
      size_t index = 0;
      return r_.for_each_element(x, mp, [&](JValue& spec, const JsonPath& sp) {
        return decode_output_spec(spec, sp, index++, ep);
      });
    }
    return Status::Ok();
  }));
  if (!have_inputs) return r_.error(p, "missing field 'input_specs'");
  if (!have_outputs) return r_.error(p, "missing field 'output_specs'");
  if (ep.input_specs.size() != g.inputs().size()) {
    return r_.error(p.field("input_specs"), "has " + std::to_string(ep.input_specs.size()) +
                                                " specs but the graph has " + std::to_string(g.inputs().size()) +
                                                " inputs");
  }
  if (ep.output_specs.size() != g.outputs().size()) {
    return r_.error(p.field("output_specs"), "has " + std::to_string(ep.output_specs.size()) +
                                                 " specs but the graph has " + std::to_string(g.outputs().size()) +
                                                 " outputs");
  }
  return Status::Ok();
}

// ===========================================================================
// The program

Status ProgramDecoder::decode_schema_version(JValue& sv, const JsonPath& svp, ExportedProgram& ep) {
  simdjson::ondemand::json_type svt;
  if (auto err = sv.type().get(svt)) return r_.failure(svp, err, "a schema version");
  if (svt == simdjson::ondemand::json_type::number) {
    // PyTorch 2.2/2.3 wrote an integer schema version and unions with every
    // member present. Lathe reads them and upgrades them to schema 8.
    LATHE_ASSIGN_OR_RETURN(int64_t legacy, r_.int64(sv, svp));
    if (legacy < 1 || legacy > 7) {
      return r_.error(svp, "integer schema version " + std::to_string(legacy) + " is not one PyTorch wrote");
    }
    ep.legacy_schema_version = legacy;
    ep.schema_version = SchemaVersion{8, 0};
    return Status::Ok();
  }
  bool have_major = false;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(sv, svp, [&](std::string_view k, JValue& x, const JsonPath& xp) -> Status {
    if (k == "major") {
      LATHE_ASSIGN_OR_RETURN(ep.schema_version.major, r_.int64(x, xp));
      have_major = true;
    } else if (k == "minor") {
      LATHE_ASSIGN_OR_RETURN(ep.schema_version.minor, r_.int64(x, xp));
    }
    return Status::Ok();
  }));
  if (!have_major) return r_.error(svp, "missing field 'major'");
  if (ep.schema_version.major != 8) {
    return r_.error(svp, "schema major version " + std::to_string(ep.schema_version.major) +
                             " is not supported (Lathe reads schema 8, and the integer versions before it)");
  }
  return Status::Ok();
}

// graph_module's members in one pass: the graph, then the signature (which
// names the graph's values; kept as text if it comes first), and what is
// carried verbatim.
Status ProgramDecoder::decode_graph_module(JValue& v, const JsonPath& gp, ExportedProgram& ep) {
  bool have_graph = false, have_signature = false;
  std::optional<Deferred> early_signature;
  LATHE_RETURN_IF_ERROR(r_.for_each_member(v, gp, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "graph" && !have_graph) {
      have_graph = true;
      return decode_graph(x, mp, ep.graph(), 0);
    }
    if (key == "signature" && !have_signature) {
      have_signature = true;
      if (have_graph) return decode_signature(x, mp, ep);
      LATHE_ASSIGN_OR_RETURN(std::string_view text, r_.raw_view(x, mp));
      early_signature = Deferred{text, mp};
      return Status::Ok();
    }
    LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, mp));
    if (null) return Status::Ok();
    if (key == "module_call_graph") {
      LATHE_ASSIGN_OR_RETURN(ep.module_call_graph_json, r_.raw(x, mp));
    } else if (key == "metadata") {
      return decode_metadata(x, mp, ep.graph_module_metadata);
    } else if (key == "treespec_namedtuple_fields") {
      LATHE_ASSIGN_OR_RETURN(ep.treespec_namedtuple_fields_json, r_.raw(x, mp));
    }
    return Status::Ok();
  }));
  if (!have_graph) return r_.error(gp, "missing field 'graph'");
  if (!have_signature) return r_.error(gp, "missing field 'signature'");
  if (!early_signature) return Status::Ok();
  return decode_later(*early_signature, [&](JValue& x, const JsonPath& xp) { return decode_signature(x, xp, ep); });
}

// Unbounded ends are written as null, as +-Infinity, or (int_oo) as
// integers beyond int64.
Status ProgramDecoder::decode_range_constraints(JValue& v, const JsonPath& p, ExportedProgram& ep) {
  return r_.for_each_member(v, p, [&](std::string_view sym, JValue& x, const JsonPath& xp) -> Status {
    RangeConstraint c;
    LATHE_RETURN_IF_ERROR(r_.for_each_member(x, xp, [&](std::string_view k, JValue& b, const JsonPath& bp) -> Status {
      if (k != "min_val" && k != "max_val") return Status::Ok();
      std::optional<int64_t>& out = k == "min_val" ? c.min_val : c.max_val;
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
    ep.range_constraints.emplace_back(std::string(sym), c);
    return Status::Ok();
  });
}

// A member of the root other than the schema version and the dialect.
Status ProgramDecoder::decode_root_member(std::string_view key, JValue& x, const JsonPath& mp, RootState& r) {
  ExportedProgram& ep = *r.ep;
  if (key == "graph_module" && !r.have_graph_module) {
    r.have_graph_module = true;
    return decode_graph_module(x, mp, ep);
  }
  LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, mp));
  if (null) return Status::Ok();
  auto strings = [&](std::vector<std::string>& out) {
    return r_.for_each_element(x, mp, [&](JValue& e, const JsonPath& xp) -> Status {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(e, xp));
      out.emplace_back(s);
      return Status::Ok();
    });
  };
  if (key == "opset_version") {
    return r_.for_each_member(x, mp, [&](std::string_view k, JValue& y, const JsonPath& yp) -> Status {
      LATHE_ASSIGN_OR_RETURN(int64_t v, r_.int64(y, yp));
      ep.opset_version.emplace_back(std::string(k), v);
      return Status::Ok();
    });
  }
  if (key == "range_constraints") return decode_range_constraints(x, mp, ep);
  if (key == "verifiers") return strings(ep.verifiers);
  if (key == "guards_code") return strings(ep.guards_code);
  if (key == "torch_version") {
    LATHE_ASSIGN_OR_RETURN(std::string_view s, r_.string(x, mp));
    ep.torch_version = std::string(s);
    r.have_torch_version = true;
  }
  return Status::Ok();
}

// The root's members in one pass (graph_module, by far the largest, comes
// first in every writer's files). The schema version is read where it
// stands, yet its errors are reported as if it had been read first: when
// anything before it fails, the document is rewound to look at it.
Result<std::unique_ptr<ExportedProgram>> ProgramDecoder::decode(json::Document& doc) {
  progress_.indexed(doc);
  JsonPath p;
  RootState r{std::make_unique<ExportedProgram>()};
  ExportedProgram& ep = *r.ep;
  LATHE_ASSIGN_OR_RETURN(JValue root, doc.root());
  bool have_version = false;
  std::optional<std::string_view> dialect;
  Status body = r_.for_each_member(root, p, [&](std::string_view key, JValue& x, const JsonPath& mp) -> Status {
    if (key == "schema_version" && !have_version) {
      have_version = true;
      return decode_schema_version(x, mp, ep);
    }
    if (key == "dialect") {
      LATHE_ASSIGN_OR_RETURN(bool null, r_.is_null(x, mp));
      if (null) return Status::Ok();
      LATHE_ASSIGN_OR_RETURN(dialect, r_.string(x, mp));
      return Status::Ok();
    }
    return decode_root_member(key, x, mp, r);
  });
  if (!body.ok() && !have_version) {
    ExportedProgram version_only;
    LATHE_ASSIGN_OR_RETURN(JValue again, doc.rewind());
    LATHE_ASSIGN_OR_RETURN(Object o, r_.object(again, p));
    LATHE_ASSIGN_OR_RETURN(JValue sv, r_.field(o, "schema_version", p));
    LATHE_RETURN_IF_ERROR(decode_schema_version(sv, p.field("schema_version"), version_only));
    ep.legacy_schema_version = version_only.legacy_schema_version;
  }
  if (!body.ok() && ep.legacy_schema_version) {
    return Error(body.error().message() + " (in a schema-" + std::to_string(*ep.legacy_schema_version) +
                 " program, written by PyTorch 2.2/2.3, which Lathe upgrades to schema 8)");
  }
  if (!body.ok()) return body.error();
  if (!have_version) return r_.error(p, "missing field 'schema_version'");
  if (!r.have_graph_module) return r_.error(p, "missing field 'graph_module'");
  if (!r.have_torch_version) ep.torch_version = "<=2.4";  // the schema's default for files that predate the field
  // Before `verifiers`, the dialect was one string.
  if (ep.verifiers.empty() && dialect) ep.verifiers.emplace_back(*dialect);
  return std::move(r.ep);
}

}  // namespace

Result<std::unique_ptr<ExportedProgram>> decode_program_json(std::string_view text, const JsonDecodeOptions& options) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<json::Document> doc,
                         json::Document::parse(text, options.origin, options.readable_after));
  ProgramDecoder decoder(options, text);
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<ExportedProgram> ep, decoder.decode(*doc));
  // An input size that does not parse or names a symbol without a range,
  // an empty range or a negative placeholder size would load and leave
  // run's input check off (or refusing every size): refuse the file.
  if (Status shapes = check_input_shapes(*ep); !shapes.ok()) return shapes.error().context(options.origin);
  return ep;
}

}  // namespace lathe
