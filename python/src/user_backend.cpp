// Backends written in Python: a lathe.Backend registered with
// lathe.register_backend becomes a C++ Backend and DelegateRuntime, so
// Lathe's partitioner decides what it claims (with the constness guard for
// the operands it prepacks), Program.lower("its name") delegates to it, and
// Program.run executes its delegate nodes through its execute().
#include "user_backend.h"

#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "errors.h"
#include "graph_view.h"
#include "lathe/extend.h"
#include "tensors.h"

namespace lathe::python {

namespace {

// What preprocess() is handed: the claimed nodes as views, the values the
// delegate reads and returns, and the compile-time constants among its
// inputs with their tensors (numpy arrays viewing the program's weights).
struct PySubgraph {
  std::shared_ptr<ViewSession> session;
  py::list nodes, inputs, outputs;
  py::dict constants;  // input name -> numpy array
};

std::string error_text(py::error_already_set& e) {
  return "raised " + py::str(e.type().attr("__name__")).cast<std::string>() + ": " + py::str(e.value()).cast<std::string>();
}

// `name` of a Python value, or "" when it has none.
std::string py_name(const py::object& o) {
  const py::object n = py::getattr(o, "name", py::none());
  return py::isinstance<py::str>(n) ? n.cast<std::string>() : "";
}

class PythonHandle : public DelegateHandle {
 public:
  PythonHandle(py::object backend, std::vector<std::byte> payload) : backend_(std::move(backend)), payload_(std::move(payload)) {}
  ~PythonHandle() override {
    py::gil_scoped_acquire gil;
    backend_ = py::object();
  }

  Status execute(KernelCall& call) override {
    LATHE_ASSIGN_OR_RETURN(std::vector<const Tensor*> ins, call.tensor_list(ops::arg::inputs));
    py::gil_scoped_acquire gil;
    try {
      py::list args;
      for (const Tensor* t : ins) args.append(to_python(EValue(*t), CallerArrays::torch()));
      const py::bytes payload(reinterpret_cast<const char*>(payload_.data()), payload_.size());
      const py::object result = backend_.attr("execute")(payload, args);
      const py::list outs = py::list(result);
      if (outs.size() != call.output_count())
        return make_error("execute returned " + std::to_string(outs.size()) + " outputs, the node has " +
                          std::to_string(call.output_count()));
      bool torch = false;
      for (size_t i = 0; i < outs.size(); ++i) {
        EValue v = to_evalue(outs[i], i, torch);
        LATHE_RETURN_IF_ERROR(check_output(call, i, v));
        // An owned copy: the array Python returned is freed with it.
        LATHE_RETURN_IF_ERROR(call.set_output(i, EValue(contiguous_copy(v.tensor()))));
      }
      return Status::Ok();
    } catch (py::error_already_set& e) {
      return make_error(error_text(e));
    } catch (const std::exception& e) {
      return make_error(e.what());
    }
  }

 private:
  // The output must be what the graph says the node returns.
  static Status check_output(const KernelCall& call, size_t i, const EValue& v) {
    const Value* want = call.node().defined_values()[i];
    if (!v.is_tensor()) return make_error("output " + std::to_string(i) + " is " + v.describe() + ", not a tensor");
    if (!want->meta()) return Status::Ok();
    const Tensor& t = v.tensor();
    const auto sizes = want->meta()->concrete_sizes();
    if (t.dtype != want->meta()->dtype || (sizes && *sizes != t.sizes))
      return make_error("output " + std::to_string(i) + " '" + want->name() + "' is " + std::string(dtype_name(t.dtype)) + " " +
                        shape_string(t.sizes) + ", the graph says " + std::string(dtype_name(want->meta()->dtype)) +
                        (sizes ? " " + shape_string(*sizes) : ""));
    return Status::Ok();
  }

  py::object backend_;
  std::vector<std::byte> payload_;
};

class PythonBackend : public Backend {
 public:
  PythonBackend(py::object backend, std::string name) : backend_(std::move(backend)), name_(std::move(name)) {
    if (py::hasattr(backend_, "keep")) keep_ = py::cast<std::vector<std::string>>(backend_.attr("keep"));
    if (py::hasattr(backend_, "constant_args"))
      constant_args_ = py::cast<std::map<std::string, std::vector<std::string>>>(backend_.attr("constant_args"));
  }

  std::string_view name() const override { return name_; }
  std::vector<std::string> ops_to_keep() const override { return keep_; }

  NodeSupport support(const Node& node, const Constness& constness) const override {
    // The seed's guard first: an operand the backend builds into its payload
    // must be a compile-time constant, whatever its support() says.
    auto it = constant_args_.find(node.op_name());
    if (it != constant_args_.end()) {
      for (const std::string& arg : it->second) {
        const Value* v = is_none_input(node, arg) ? nullptr : tensor_input(node, arg);
        if (v && !constness.is_constant_weight(v)) return NodeSupport::no(arg + " '" + v->name() + "' " + constness.explain(v));
      }
    }
    py::gil_scoped_acquire gil;
    auto session = view_of(node.graph(), nullptr);
    try {
      const py::object why = backend_.attr("support")(PyNode{session, const_cast<Node*>(&node)});
      session->close("support() has returned");
      if (why.is_none()) return NodeSupport::yes(node.op_name());
      return NodeSupport::no(py::str(why).cast<std::string>());
    } catch (py::error_already_set& e) {
      session->close("support() has returned");
      return NodeSupport::no("support() " + error_text(e));
    }
  }

  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& sub) const override {
    py::gil_scoped_acquire gil;
    auto session = view_of(const_cast<Graph*>(&sub.program.graph()), const_cast<ExportedProgram*>(&sub.program));
    PySubgraph s;
    s.session = session;
    for (const Node* n : sub.nodes) s.nodes.append(PyNode{session, const_cast<Node*>(n)});
    for (const Value* v : sub.inputs) {
      s.inputs.append(PyValue{session, const_cast<Value*>(v)});
      if (!sub.constness.is_compile_time_constant(v)) continue;
      const InputSpec* spec = sub.constness.input_spec(v);
      const Tensor* t = spec ? sub.program.state_tensor(*spec) : nullptr;
      if (t) s.constants[py::str(v->name())] = to_python(EValue(*t), false);
    }
    for (const Value* v : sub.outputs) s.outputs.append(PyValue{session, const_cast<Value*>(v)});
    Result<std::vector<std::byte>> out = std::vector<std::byte>{};
    try {
      const py::object r = backend_.attr("preprocess")(s);
      if (!py::isinstance<py::bytes>(r) && !py::isinstance<py::bytearray>(r)) {
        out = Error("preprocess() returned " + py::repr(r).cast<std::string>() + ", not bytes");
      } else {
        const std::string bytes = py::bytes(r);
        std::vector<std::byte> payload(bytes.size());
        std::memcpy(payload.data(), bytes.data(), bytes.size());
        out = std::move(payload);
      }
    } catch (py::error_already_set& e) {
      out = Error("preprocess() " + error_text(e));
    }
    session->close("preprocess() has returned");
    return out;
  }

  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const override {
    py::gil_scoped_acquire gil;
    if (!py::hasattr(backend_, "execute"))
      return make_error("backend '" + name_ + "' has no execute(payload, inputs): its delegates cannot run in Lathe");
    std::vector<std::byte> payload(args.payload.begin(), args.payload.end());
    return std::unique_ptr<DelegateHandle>(std::make_unique<PythonHandle>(backend_, std::move(payload)));
  }

 private:
  static std::shared_ptr<ViewSession> view_of(Graph* graph, ExportedProgram* program) {
    auto s = std::make_shared<ViewSession>();
    s->graph = graph;
    s->program = program;
    return s;
  }

  py::object backend_;  // held for the life of the process, as the registry holds this
  std::string name_;
  std::vector<std::string> keep_;
  std::map<std::string, std::vector<std::string>> constant_args_;
};

}  // namespace

void register_python_backend(const py::object& backend) {
  const std::string name = py_name(backend);
  if (name.empty()) throw LatheError("a backend needs a non-empty string attribute 'name': " + py::repr(backend).cast<std::string>());
  for (const char* method : {"support", "preprocess"}) {
    if (!py::hasattr(backend, method) || !PyCallable_Check(backend.attr(method).ptr()))
      throw LatheError("backend '" + name + "' has no " + method + "() method");
  }
  check(register_backend(std::make_shared<PythonBackend>(backend, name)));
}

void bind_backends(py::module_& m) {
  py::class_<PySubgraph>(m, "Subgraph")
      .def_readonly("nodes", &PySubgraph::nodes)
      .def_readonly("inputs", &PySubgraph::inputs)
      .def_readonly("outputs", &PySubgraph::outputs)
      .def_readonly("constants", &PySubgraph::constants);
  m.def("register_backend", &register_python_backend, py::arg("backend"));
}

}  // namespace lathe::python
