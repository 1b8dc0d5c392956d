#include "user_pass.h"

#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "graph_view.h"
#include "lathe/extend.h"

namespace lathe::python {

namespace {

// ---- Python arguments -> node arguments ------------------------------------------------------

std::optional<DType> torch_dtype(const py::handle& h) {
  const py::handle type = py::type::handle_of(h);
  if (!py::hasattr(type, "__module__") || py::str(type.attr("__module__")).cast<std::string>() != "torch" ||
      py::str(type.attr("__name__")).cast<std::string>() != "dtype")
    return std::nullopt;
  std::string name = py::str(h).cast<std::string>();  // "torch.float32"
  if (name.starts_with("torch.")) name = name.substr(6);
  for (int code = 0; code <= 64; ++code) {
    auto d = dtype_from_schema(code);
    if (d && dtype_name(*d) == name) return d;
  }
  throw LatheError("dtype " + name + " is not one Lathe knows");
}

Value* value_of(const py::handle& h) {
  if (!py::isinstance<PyValue>(h)) return nullptr;
  return h.cast<const PyValue&>().get();
}

Argument scalar_value_argument(Value* v) {
  switch (v->kind()) {
    case ValueKind::SymInt: return SymIntArg{v};
    case ValueKind::SymFloat: return SymFloatArg{v};
    case ValueKind::SymBool: return SymBoolArg{v};
    default: return value_argument(v);
  }
}

Argument list_argument(const py::sequence& seq);

Argument to_argument(const py::handle& h) {
  if (h.is_none()) return NoneArg{};
  if (Value* v = value_of(h)) return scalar_value_argument(v);
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();
  if (py::isinstance<py::int_>(h)) return h.cast<int64_t>();
  if (py::isinstance<py::float_>(h)) return h.cast<double>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (auto d = torch_dtype(h)) return ScalarTypeArg{*d};
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) return list_argument(h.cast<py::sequence>());
  throw LatheError("cannot pass " + py::repr(h).cast<std::string>() + " as a node argument");
}

// The list's kind from its items: values (tensors, with None: Tensor?[]),
// ints mixed with symbolic ints, numbers, bools, strings.
Argument list_argument(const py::sequence& seq) {
  bool values = false, none = false, floats = false, bools = true, strings = true, ints = true;
  for (const py::handle item : seq) {
    Value* v = value_of(item);
    values |= v != nullptr;
    none |= item.is_none();
    const bool is_bool = py::isinstance<py::bool_>(item);
    floats |= py::isinstance<py::float_>(item);
    bools &= is_bool;
    strings &= py::isinstance<py::str>(item);
    ints &= (py::isinstance<py::int_>(item) && !is_bool) || (v && v->kind() == ValueKind::SymInt);
  }
  if (seq.size() == 0) return IntList{};
  if (values && !ints) {
    std::vector<Value*> items;
    for (const py::handle item : seq) items.push_back(item.is_none() ? nullptr : value_of(item));
    if (none) return OptionalTensorList{std::move(items)};
    return TensorList{std::move(items)};
  }
  if (bools) return BoolList{seq.cast<std::vector<bool>>()};
  if (strings) return StringList{seq.cast<std::vector<std::string>>()};
  if (ints && values) {
    SymIntList l;
    for (const py::handle item : seq) {
      Value* v = value_of(item);
      l.items.push_back(v ? SymIntArg{v} : SymIntArg{item.cast<int64_t>()});
    }
    return l;
  }
  if (ints) return IntList{seq.cast<std::vector<int64_t>>()};
  if (floats) return FloatList{seq.cast<std::vector<double>>()};
  throw LatheError("cannot pass the list " + py::repr(seq).cast<std::string>() + " as a node argument");
}

// Positional and keyword Python arguments as the op's schema names them
// (lathe::schema_arguments): PyTorch reads arguments by name and kind, so a
// node is written as torch.export writes it.
std::vector<NamedArgument> named_arguments(const std::string& op, const py::sequence& args, const py::dict& kwargs) {
  std::vector<Argument> positional;
  for (const py::handle a : args) positional.push_back(to_argument(a));
  std::vector<std::pair<std::string, Argument>> keyword;
  for (const auto& [k, v] : kwargs) keyword.emplace_back(k.cast<std::string>(), to_argument(v));
  return take(schema_arguments(op, std::move(positional), std::move(keyword)));
}

// "aten.mul.Tensor" -> the op's own name ("mul"), a base for new value names.
std::string base_name(const std::string& op) {
  const ops::TargetParts p = ops::split_target(op);
  return p.name.empty() ? "node" : std::string(p.name);
}

std::string constness_name(Origin o) {
  switch (o) {
    case Origin::UserInput: return "user input";
    case Origin::Parameter: return "parameter";
    case Origin::ConstantBuffer: return "buffer";
    case Origin::MutableBuffer: return "mutable buffer";
    case Origin::LiftedConstant: return "lifted constant";
    case Origin::Computed: return "computed";
    case Origin::Unknown: return "unknown";
  }
  return "unknown";
}

// ---- Rewriter -------------------------------------------------------------------------------

// What a Python pass is handed: the C++ Rewriter over the method, views of
// its graph, the constness analysis and the explanation records. Valid
// only while the pass runs.
class PyRewriter {
 public:
  PyRewriter(std::shared_ptr<ViewSession> session, ExportedProgram& program, PassContext& ctx)
      : session_(std::move(session)), program_(program), rw_(program), ctx_(ctx) {}

  PyGraph graph() const {
    open();
    return PyGraph{session_};
  }

  PyValue create_call(const std::string& target, const py::sequence& args, const py::object& kwargs,
                      const py::object& like, const py::object& before) {
    open();
    const std::string op(ops::strip_torch_ops(target));
    std::vector<NamedArgument> inputs = named_arguments(op, args, kwargs.is_none() ? py::dict() : kwargs.cast<py::dict>());
    TensorMeta meta = like.is_none() ? inferred_meta(op, inputs) : meta_of(like);
    Node* at = before.is_none() ? nullptr : before.cast<const PyNode&>().get();
    Value* v = take(rw_.create_call(ops::full_target(op), std::move(inputs), std::move(meta), base_name(op), at));
    made(v);
    return PyValue{session_, v};
  }

  PyValue replace_node(const PyNode& node, const std::string& target, const py::sequence& args, const py::object& kwargs) {
    open();
    const std::string op(ops::strip_torch_ops(target));
    Node* old = node.get();
    std::vector<NamedArgument> inputs = named_arguments(op, args, kwargs.is_none() ? py::dict() : kwargs.cast<py::dict>());
    const std::vector<Value*> gone = old->defined_values();
    Value* v = take(rw_.replace_node(old, ops::full_target(op), std::move(inputs), base_name(op)));
    mark_erased(old, gone);
    made(v);
    return PyValue{session_, v};
  }

  // Every use of `from` reads `to` instead: graph outputs and their specs
  // too, but not the node that makes `to` when it reads `from` itself (the
  // usual "insert after": y -> f(y) everywhere y was used).
  void replace_all_uses(const PyValue& from, const PyValue& to) {
    open();
    Value* f = from.get();
    Value* t = to.get();
    std::unordered_set<const Node*> keep_reading;
    if (Node* p = t->producer()) {
      for (Value* operand : p->operand_values()) {
        if (operand == f) keep_reading.insert(p);
      }
    }
    check(keep_reading.empty() ? rw_.replace_all_uses(f, t) : rw_.replace_all_uses(f, t, keep_reading));
    changed();
  }

  void erase(const PyNode& node) {
    open();
    Node* n = node.get();
    const std::vector<Value*> gone = n->defined_values();
    check(rw_.erase_node(n));
    mark_erased(n, gone);
    changed();
  }

  std::string constness(const PyValue& v) {
    open();
    return constness_name(analysis().origin(v.get()));
  }

  // A compile-time constant weight (what a backend may prepack), and if not, why.
  py::tuple is_constant(const PyValue& v) {
    open();
    const Value* value = v.get();
    const bool yes = analysis().is_constant_weight(value);
    return py::make_tuple(yes, yes ? analysis().describe(value) : analysis().explain(value));
  }

  void explain(const PyNode& node, bool rewritten, const std::string& message) {
    open();
    const Node* n = node.get();
    const std::string line = base_name(n->op_name()) + " '" + n->name() + "' " + (rewritten ? "rewritten" : "kept") + ": " + message;
    if (rewritten) ctx_.rewritten(n->name(), line);
    else ctx_.kept(n->name(), line);
  }

 private:
  void open() const { session_->check(session_->graph, "rewriter"); }

  const Constness& analysis() {
    if (!constness_) constness_.emplace(program_);
    return *constness_;
  }
  void changed() { constness_.reset(); }  // a rewrite can change what is computed from what
  // A new node may reuse the memory of one erased earlier: it is not erased.
  void made(Value* v) {
    session_->erased.erase(v);
    session_->erased.erase(v->producer());
    changed();
  }

  void mark_erased(const Node* n, const std::vector<Value*>& values) {
    session_->erased.insert(n);
    for (const Value* v : values) session_->erased.insert(v);
  }

  static TensorMeta meta_of(const py::object& like) {
    Value* v = value_of(like);
    if (!v) throw LatheError("like= must be a lathe.Value");
    if (!v->meta()) throw LatheError("like='" + v->name() + "' has no tensor metadata");
    return *v->meta();
  }

  static TensorMeta inferred_meta(const std::string& op, const std::vector<NamedArgument>& inputs) {
    std::vector<TensorMeta> metas;
    {
      py::gil_scoped_release nogil;
      metas = take(infer_call_meta(op, inputs, 1));
    }
    return metas.at(0);
  }

  std::shared_ptr<ViewSession> session_;
  ExportedProgram& program_;
  Rewriter rw_;
  PassContext& ctx_;
  std::optional<Constness> constness_;
};

// ---- the C++ side of a Python pass ---------------------------------------------------------

class PythonPass : public Pass {
 public:
  PythonPass(py::object pass, std::string name, std::string description)
      : pass_(std::move(pass)), name_(std::move(name)), description_(std::move(description)) {}
  ~PythonPass() override {
    py::gil_scoped_acquire gil;
    pass_ = py::object();
  }

  std::string_view name() const override { return name_; }
  std::string_view description() const override { return description_; }

  Result<bool> run(ExportedProgram& program, PassContext& ctx) override {
    py::gil_scoped_acquire gil;
    auto session = std::make_shared<ViewSession>();
    session->graph = &program.graph();
    session->program = &program;
    Result<bool> result = false;
    // Shared with Python (a pass may keep `rw`): after the pass it refuses
    // every call, through the closed session.
    auto rw = std::make_shared<PyRewriter>(session, program, ctx);
    try {
      py::object changed = pass_.attr("run")(rw);
      if (changed.is_none()) result = Error("run() returned None: return True if it changed the method, else False");
      else result = PyObject_IsTrue(changed.ptr()) == 1;
    } catch (py::error_already_set& e) {
      const std::string type = py::str(e.type().attr("__name__")).cast<std::string>();
      result = Error("raised " + type + ": " + py::str(e.value()).cast<std::string>());
    } catch (const std::exception& e) {
      result = Error(e.what());
    }
    session->close("pass '" + name_ + "' has finished");
    return result;
  }

 private:
  py::object pass_;
  std::string name_;
  std::string description_;
};

}  // namespace

std::shared_ptr<Pass> python_pass(const py::object& pass) {
  const py::object name = py::getattr(pass, "name", py::none());
  if (name.is_none() || !py::isinstance<py::str>(name) || name.cast<std::string>().empty())
    throw LatheError("a pass needs a non-empty string attribute 'name': " + py::repr(pass).cast<std::string>());
  if (!py::hasattr(pass, "run") || !PyCallable_Check(pass.attr("run").ptr()))
    throw LatheError("pass '" + name.cast<std::string>() + "' has no run(self, rw) method");
  const py::object description = py::getattr(pass, "description", py::str(""));
  return std::make_shared<PythonPass>(pass, name.cast<std::string>(), py::str(description).cast<std::string>());
}

void bind_rewriter(py::module_& m) {
  py::class_<PyRewriter, std::shared_ptr<PyRewriter>>(m, "Rewriter")
      .def_property_readonly("graph", &PyRewriter::graph)
      .def("create_call", &PyRewriter::create_call, py::arg("target"), py::arg("args"), py::arg("kwargs") = py::none(),
           py::arg("like") = py::none(), py::arg("before") = py::none())
      .def("replace_node", &PyRewriter::replace_node, py::arg("node"), py::arg("target"), py::arg("args"),
           py::arg("kwargs") = py::none())
      .def("replace_all_uses", &PyRewriter::replace_all_uses, py::arg("old"), py::arg("new"))
      .def("erase", &PyRewriter::erase, py::arg("node"))
      .def("constness", &PyRewriter::constness, py::arg("value"))
      .def("is_constant", &PyRewriter::is_constant, py::arg("value"))
      .def("explain", &PyRewriter::explain, py::arg("node"), py::arg("rewritten"), py::arg("message"));
}

}  // namespace lathe::python
