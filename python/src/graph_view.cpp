#include "graph_view.h"

#include <pybind11/stl.h>

#include <functional>

#include "errors.h"
#include "lathe/extend.h"

namespace lathe::python {

void ViewSession::check(const void* object, const char* what) const {
  if (!closed.empty()) throw LatheError(std::string("this ") + what + " view can no longer be read: " + closed);
  if (erased.count(object)) throw LatheError(std::string("this ") + what + " was erased by the Rewriter");
}

Value* PyValue::get() const {
  session->check(value, "value");
  return value;
}

Node* PyNode::get() const {
  session->check(node, "node");
  return node;
}

namespace {

py::object value_object(Value* v, const std::shared_ptr<ViewSession>& s) {
  if (!v) return py::none();
  return py::cast(PyValue{s, v});
}

template <typename T>
py::list list_of(const std::vector<T>& items, const std::function<py::object(const T&)>& each) {
  py::list out;
  for (const T& item : items) out.append(each(item));
  return out;
}

template <typename Literal>
py::object sym_object(const SymArg<Literal>& a, const std::shared_ptr<ViewSession>& s) {
  if (a.is_value()) return value_object(a.value(), s);
  return py::cast(a.literal());
}

py::object dim_object(const SymDim& d) {
  if (d.is_concrete()) return py::int_(d.value());
  return py::str(readable_sym_expr(d.expr().expr));  // "s77", not sympy's Symbol('s77', ...)
}

}  // namespace

py::object argument_to_python(const Argument& arg, const std::shared_ptr<ViewSession>& s) {
  const ArgumentVariant& v = arg.v;
  if (std::holds_alternative<NoneArg>(v)) return py::none();
  if (auto* t = std::get_if<TensorRef>(&v)) return value_object(t->value, s);
  if (auto* t = std::get_if<OptionalTensor>(&v)) return value_object(t->value, s);
  if (auto* l = std::get_if<TensorList>(&v))
    return list_of<Value*>(l->items, [&](Value* const& x) { return value_object(x, s); });
  if (auto* l = std::get_if<OptionalTensorList>(&v))
    return list_of<Value*>(l->items, [&](Value* const& x) { return value_object(x, s); });
  if (auto* i = std::get_if<int64_t>(&v)) return py::int_(*i);
  if (auto* d = std::get_if<double>(&v)) return py::float_(*d);
  if (auto* b = std::get_if<bool>(&v)) return py::bool_(*b);
  if (auto* str = std::get_if<std::string>(&v)) return py::str(*str);
  if (auto* l = std::get_if<IntList>(&v)) return py::cast(l->items);
  if (auto* l = std::get_if<FloatList>(&v)) return py::cast(l->items);
  if (auto* l = std::get_if<BoolList>(&v)) return py::cast(l->items);
  if (auto* l = std::get_if<StringList>(&v)) return py::cast(l->items);
  if (auto* a = std::get_if<SymIntArg>(&v)) return sym_object(*a, s);
  if (auto* a = std::get_if<SymFloatArg>(&v)) return sym_object(*a, s);
  if (auto* a = std::get_if<SymBoolArg>(&v)) return sym_object(*a, s);
  if (auto* l = std::get_if<SymIntList>(&v))
    return list_of<SymIntArg>(l->items, [&](const SymIntArg& x) { return sym_object(x, s); });
  if (auto* l = std::get_if<SymFloatList>(&v))
    return list_of<SymFloatArg>(l->items, [&](const SymFloatArg& x) { return sym_object(x, s); });
  if (auto* l = std::get_if<SymBoolList>(&v))
    return list_of<SymBoolArg>(l->items, [&](const SymBoolArg& x) { return sym_object(x, s); });
  if (auto* d = std::get_if<ScalarTypeArg>(&v)) return py::str(std::string(dtype_name(d->dtype)));
  if (auto* d = std::get_if<DeviceArg>(&v)) return py::str(d->device.type + (d->device.index ? ":" + std::to_string(*d->device.index) : ""));
  if (auto* m = std::get_if<MemoryFormatArg>(&v)) return py::int_(m->format);
  if (auto* l = std::get_if<LayoutArg>(&v)) return py::int_(l->layout);
  if (auto* g = std::get_if<GraphArg>(&v)) return py::str("<subgraph " + g->name + ">");
  if (auto* o = std::get_if<OperatorArg>(&v)) return py::str(std::string(ops::strip_torch_ops(o->name)));
  if (auto* c = std::get_if<CustomObjRef>(&v)) return value_object(c->value, s);
  if (auto* c = std::get_if<ComplexArg>(&v)) return py::module_::import("builtins").attr("complex")(c->real, c->imag);
  if (auto* l = std::get_if<IntLists>(&v)) return py::cast(l->items);
  if (auto* l = std::get_if<FloatLists>(&v)) return py::cast(l->items);
  if (auto* l = std::get_if<NestedTensorList>(&v)) {
    py::list out;
    for (const auto& inner : l->items) out.append(list_of<Value*>(inner, [&](Value* const& x) { return value_object(x, s); }));
    return out;
  }
  if (auto* m = std::get_if<StringToArgument>(&v)) {
    py::dict out;
    for (const auto& [k, a] : m->items) out[py::str(k)] = argument_to_python(a, s);
    return out;
  }
  return py::none();
}

namespace {

// ---- Value --------------------------------------------------------------------------------

py::object value_dtype(const PyValue& pv) {
  const Value* v = pv.get();
  if (v->kind() != ValueKind::Tensor || !v->meta()) return py::none();
  return py::str(std::string(dtype_name(v->meta()->dtype)));
}

py::object value_shape(const PyValue& pv) {
  const Value* v = pv.get();
  if (v->kind() != ValueKind::Tensor || !v->meta()) return py::none();
  py::list out;
  for (const SymDim& d : v->meta()->sizes) out.append(dim_object(d));
  return out;
}

py::list value_users(const PyValue& pv) {
  py::list out;
  std::unordered_set<const Node*> seen;
  for (const Use& u : pv.get()->uses()) {
    if (u.user && seen.insert(u.user).second) out.append(PyNode{pv.session, u.user});
  }
  return out;
}

// ---- Node ---------------------------------------------------------------------------------

bool is_keyword(const NamedArgument& na) { return na.kind && *na.kind == ArgKind::Keyword; }

py::list node_args(const PyNode& pn) {
  py::list out;
  for (const NamedArgument& na : pn.get()->inputs()) {
    if (!is_keyword(na)) out.append(argument_to_python(na.arg, pn.session));
  }
  return out;
}

py::dict node_kwargs(const PyNode& pn) {
  py::dict out;
  for (const NamedArgument& na : pn.get()->inputs()) {
    if (is_keyword(na)) out[py::str(na.name)] = argument_to_python(na.arg, pn.session);
  }
  return out;
}

// Every argument by its schema name, positional ones included.
py::dict node_arguments(const PyNode& pn) {
  py::dict out;
  for (const NamedArgument& na : pn.get()->inputs()) out[py::str(na.name)] = argument_to_python(na.arg, pn.session);
  return out;
}

py::list node_outputs(const PyNode& pn) {
  py::list out;
  for (Value* v : pn.get()->defined_values()) out.append(PyValue{pn.session, v});
  return out;
}

py::dict node_meta(const PyNode& pn) {
  py::dict out;
  for (const auto& [k, v] : pn.get()->metadata()) out[py::str(k)] = py::str(v);
  return out;
}

// ---- Graph --------------------------------------------------------------------------------

Graph& graph_of(const PyGraph& g) {
  g.session->check(g.session->graph, "graph");
  return *g.session->graph;
}

py::list graph_nodes(const PyGraph& g) {
  py::list out;
  for (Node* n : graph_of(g).nodes()) out.append(PyNode{g.session, n});
  return out;
}

py::list graph_inputs(const PyGraph& g) {
  py::list out;
  for (Value* v : graph_of(g).placeholders()) out.append(PyValue{g.session, v});
  return out;
}

py::list graph_outputs(const PyGraph& g) {
  py::list out;
  for (const Argument& a : graph_of(g).outputs()) out.append(argument_to_python(a, g.session));
  return out;
}

// {"inputs": [(kind, placeholder name, target)], "outputs": [(kind, output, target)]}:
// the method's input and output specs, aligned with .inputs / .outputs.
py::dict graph_signature(const PyGraph& g) {
  const Graph& graph = graph_of(g);
  py::dict out;
  const ExportedProgram* ep = g.session->program;
  py::list ins, outs;
  if (ep) {
    const std::vector<Value*> placeholders = graph.placeholders();
    for (size_t i = 0; i < ep->input_specs.size() && i < placeholders.size(); ++i) {
      const InputSpec& s = ep->input_specs[i];
      ins.append(py::make_tuple(std::string(input_kind_name(s.kind)), placeholders[i]->name(), s.target));
    }
    for (size_t i = 0; i < ep->output_specs.size() && i < graph.outputs().size(); ++i) {
      const OutputSpec& s = ep->output_specs[i];
      outs.append(py::make_tuple(std::string(output_kind_name(s.kind)), argument_to_python(graph.outputs()[i], g.session),
                                 s.target));
    }
  }
  out["inputs"] = ins;
  out["outputs"] = outs;
  return out;
}

std::string value_repr(const PyValue& pv) {
  const Value* v = pv.get();
  std::string s = "<Value %" + v->name() + " " + std::string(value_kind_name(v->kind()));
  if (v->kind() == ValueKind::Tensor && v->meta()) s += " " + std::string(dtype_name(v->meta()->dtype)) + " " + py::str(value_shape(pv)).cast<std::string>();
  return s + ">";
}

}  // namespace

void bind_graph_view(py::module_& m) {
  py::class_<PyValue>(m, "Value")
      .def_property_readonly("name", [](const PyValue& v) { return v.get()->name(); })
      .def_property_readonly("kind", [](const PyValue& v) { return std::string(value_kind_name(v.get()->kind())); })
      .def_property_readonly("producer", [](const PyValue& v) -> py::object {
        Node* p = v.get()->producer();
        return p ? py::cast(PyNode{v.session, p}) : py::none();
      })
      .def_property_readonly("users", &value_users)
      .def_property_readonly("dtype", &value_dtype)
      .def_property_readonly("shape", &value_shape)
      .def("__eq__", [](const PyValue& a, const py::object& b) {
        return py::isinstance<PyValue>(b) && b.cast<const PyValue&>().value == a.value;
      })
      .def("__hash__", [](const PyValue& v) { return std::hash<const void*>()(v.value); })
      .def("__repr__", &value_repr);

  py::class_<PyNode>(m, "Node")
      .def_property_readonly("name", [](const PyNode& n) { return n.get()->name(); })
      .def_property_readonly("target", [](const PyNode& n) { return n.get()->op_name(); })
      .def_property_readonly("args", &node_args)
      .def_property_readonly("kwargs", &node_kwargs)
      .def_property_readonly("arguments", &node_arguments)
      .def_property_readonly("outputs", &node_outputs)
      .def_property_readonly("meta", &node_meta)
      .def("__eq__", [](const PyNode& a, const py::object& b) {
        return py::isinstance<PyNode>(b) && b.cast<const PyNode&>().node == a.node;
      })
      .def("__hash__", [](const PyNode& n) { return std::hash<const void*>()(n.node); })
      .def("__repr__", [](const PyNode& n) { return "<Node " + n.get()->name() + " " + n.get()->op_name() + ">"; });

  py::class_<PyGraph>(m, "Graph")
      .def_property_readonly("nodes", &graph_nodes)
      .def_property_readonly("inputs", &graph_inputs)
      .def_property_readonly("outputs", &graph_outputs)
      .def_property_readonly("signature", &graph_signature)
      .def("__len__", [](const PyGraph& g) { return graph_of(g).node_count(); })
      .def("__repr__", [](const PyGraph& g) { return "<Graph of " + std::to_string(graph_of(g).node_count()) + " nodes>"; });
}

}  // namespace lathe::python
