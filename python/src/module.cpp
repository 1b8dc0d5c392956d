// lathe._lathe: the Python binding of include/lathe/lathe.h. Thin: every
// algorithm is the C++ facade's; this file converts arguments, releases the
// GIL around loading, passes, lowering and kernels, and maps lathe::Error to
// lathe.Error. python/lathe/__init__.py adds the torch.export conversions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>

#include "errors.h"
#include "graph_view.h"
#include "lathe/lathe.h"
#include "tensors.h"
#include "user_backend.h"
#include "user_pass.h"

namespace lathe::python {

namespace {

// Lets Ctrl-C stop a run: Python's own SIGINT handler only runs when the
// thread holding the GIL checks for signals, and a run holds none. Between
// nodes, at most every 50 ms (a graph of tiny nodes must not take the GIL
// per node), the running thread takes it and asks; a pending
// KeyboardInterrupt stops the call and is raised by run().
std::function<bool()> ctrl_c_check() {
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  return [last] {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(50)) return false;
    *last = now;
    py::gil_scoped_acquire gil;
    return PyErr_CheckSignals() != 0;
  };
}


// One Program as Python sees it: immutable (transform and lower return new
// ones), so runners created over it stay valid; closed by close().
//
// Work done with the GIL released (load, transform, save, run) holds its own
// reference to the program and its runner, so close() from another thread
// while it runs never frees what it reads: the memory goes when the last
// call in flight returns, and later calls are refused.
// A path argument (str or os.PathLike) as the C library will see it: a NUL
// would end it early and name another file, so it is refused (issue 33,
// item 21), as is anything os.fspath refuses, with lathe.Error.
std::string path_argument(const py::object& source, const char* what) {
  std::string path;
  try {
    path = py::str(py::module_::import("os").attr("fspath")(source)).cast<std::string>();
  } catch (py::error_already_set& e) {
    throw LatheError(std::string(what) + ": not a path (" + e.what() + ")");
  } catch (const py::cast_error&) {
    throw LatheError(std::string(what) + ": the path is not valid text");
  }
  if (path.find('\0') != std::string::npos) throw LatheError(std::string(what) + ": the path contains a NUL character");
  return path;
}

// A method argument: None (the program's only method) or a non-empty name
// without NUL that is valid text (a lone surrogate is not), else lathe.Error.
std::string method_argument(const py::object& method) {
  if (method.is_none()) return "";
  if (!py::isinstance<py::str>(method)) {
    throw LatheError("method: expected a str, got " + py::str(py::type::of(method).attr("__name__")).cast<std::string>());
  }
  std::string name;
  try {
    name = method.cast<std::string>();
  } catch (const py::cast_error&) {
    PyErr_Clear();
    throw LatheError("method: the name is not valid text (it holds a lone surrogate)");
  }
  if (name.empty()) throw LatheError("method: the name is empty (pass None for the program's only method)");
  if (name.find('\0') != std::string::npos) throw LatheError("method: the name contains a NUL character");
  return name;
}

class PyProgram {
 public:
  // `verified`: the program has just been verified (a transform's result),
  // so saving it does not verify it again; it cannot change afterwards.
  explicit PyProgram(Program program, bool verified = false)
      : program_(std::make_shared<Program>(std::move(program))), verified_(verified) {}
  // A program read from `origin` (a path, or "<bytes>"): errors about what
  // the archive holds name it, as the CLI's do.
  PyProgram(Program program, std::string origin) : PyProgram(std::move(program)) { origin_ = std::move(origin); }

  const Program& program() const { return *held(); }

  // The program, kept alive for as long as the caller holds the pointer.
  std::shared_ptr<const Program> held() const {
    if (!program_) throw LatheError("the program is closed");
    return program_;
  }

  std::vector<std::string> methods() const { return program().method_names(); }

  py::object inspect() const {
    std::string json = inspect_json(program());
    return py::module_::import("json").attr("loads")(json);
  }

  // A deep copy of the graphs; weights are shared (nothing writes into them).
  Program clone() const {
    const std::shared_ptr<const Program> hold = held();
    const Program& p = *hold;
    py::gil_scoped_release nogil;
    return p.clone();
  }

  // A read-only view of one method's graph, readable until close();
  // `self` is the Python object, which the views keep alive.
  PyGraph graph(const py::object& self, const std::optional<std::string>& method) {
    const Method* m = take(select_method(program(), method.value_or("")));
    auto session = std::make_shared<ViewSession>();
    session->owner = self;
    session->graph = &const_cast<Graph&>(m->program->graph());  // views never mutate
    session->program = const_cast<ExportedProgram*>(m->program.get());
    views_.push_back(session);
    return PyGraph{session};
  }

  // `passes`: a comma-separated list of built-in names, or a list mixing
  // names and lathe.Pass objects, in the order they run.
  py::tuple transform(const py::object& passes, const std::vector<std::string>& keep,
                      const std::optional<std::string>& method, bool verify) const {
    TransformOptions o;
    if (py::isinstance<py::str>(passes)) {
      o.passes = passes.cast<std::string>();
    } else {
      for (const py::handle step : passes) {
        if (py::isinstance<py::str>(step)) o.pipeline.emplace_back(step.cast<std::string>());
        else o.pipeline.emplace_back(python_pass(py::reinterpret_borrow<py::object>(step)));
      }
      if (o.pipeline.empty()) throw LatheError("transform: the pass list is empty");
    }
    Program copy = clone();
    o.keep = keep;
    o.method = method.value_or("");
    // verify: the method is verified after every pass, and run before and
    // after it on the same inputs (outputs must agree), user passes included.
    o.verify_each = verify;
    o.check_outputs = verify;
    TransformReport report;
    {
      py::gil_scoped_release nogil;
      report = take(lathe::transform(copy, o));
    }
    // lathe::transform verified the result (TransformOptions::verify_result).
    return py::make_tuple(PyProgram(std::move(copy), /*verified=*/true), report.explanations);
  }

  py::tuple lower(const std::string& backend, const std::optional<std::string>& method) const {
    Program copy = clone();
    LowerReport report;
    {
      py::gil_scoped_release nogil;
      report = take(lathe::lower(copy, LowerOptions{backend, method.value_or("")}));
    }
    std::vector<LoweringDecision> decisions;
    for (auto& m : report.methods) {
      for (auto& d : m.decisions) decisions.push_back(std::move(d));
    }
    return py::make_tuple(PyProgram(std::move(copy)), decisions);
  }

  // What lower() would claim and hand the backend, without lowering this
  // program (it stays as it is).
  std::vector<Partition> partitions(const std::string& backend, const std::optional<std::string>& method) const {
    const std::shared_ptr<const Program> hold = held();
    const Program& p = *hold;
    py::gil_scoped_release nogil;
    return take(lathe::partitions(p, LowerOptions{backend, method.value_or("")}));
  }

  void save(const py::object& where, const std::string& format) const {
    const std::string path = path_argument(where, "save");
    const std::shared_ptr<const Program> hold = held();
    const Program& p = *hold;
    py::gil_scoped_release nogil;
    check(lathe::save(p, path, SaveOptions{format, !verified_}));
  }

  py::bytes to_bytes(const std::string& format) const {
    const std::shared_ptr<const Program> hold = held();
    const Program& p = *hold;
    std::vector<std::byte> bytes;
    {
      py::gil_scoped_release nogil;
      bytes = take(save_bytes(p, SaveOptions{format, !verified_}));
    }
    return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }

  py::tuple run(const py::args& inputs, const py::object& method) {
    const std::shared_ptr<Slot> held_slot = runner(method_argument(method));
    Slot& slot = *held_slot;
    bool saw_torch = false;
    std::vector<EValue> values;
    values.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) values.push_back(to_evalue(inputs[i], i, saw_torch));
    Result<std::vector<EValue>> r = std::vector<EValue>{};
    {
      // Lock order: a slot's mutex, then the GIL (the Ctrl-C check and
      // Python backends take it inside a run). So nobody waits for a slot's
      // mutex while holding the GIL (reset_state releases it first).
      py::gil_scoped_release nogil;
      {
        std::lock_guard<std::mutex> lock(slot.mutex);
        const CallerArrays kind(saw_torch);
        r = slot.runner->run(values);
      }
      // Input views are released outside the slot's lock: releasing a torch
      // tensor takes the GIL, and a thread holding the GIL may be waiting
      // for the lock (a deadlock Python.FuzzBinding found).
      values.clear();
    }
    // Ctrl-C stopped the call (ctrl_c_check): raise the KeyboardInterrupt
    // Python's handler set, not a lathe.Error.
    if (!r.ok() && PyErr_Occurred()) throw py::error_already_set();
    std::vector<EValue> outputs = take(std::move(r));
    py::tuple out(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) out[i] = to_python(outputs[i], saw_torch);
    return out;
  }

  void reset_state(const py::object& method) {
    const std::shared_ptr<Slot> slot = runner(method_argument(method));
    py::gil_scoped_release nogil;  // see run(): never wait for a slot holding the GIL
    std::lock_guard<std::mutex> lock(slot->mutex);
    slot->runner->reset_state();
  }

  void close() {
    runners_.clear();
    for (const auto& weak : views_) {
      if (auto s = weak.lock()) s->close("the program is closed");
    }
    program_.reset();
  }

 private:
  struct Slot {
    std::shared_ptr<const Program> program;  // the runner reads it: kept alive with it
    std::unique_ptr<Runner> runner;
    std::mutex mutex;
  };

  std::shared_ptr<Slot> runner(const std::string& method) {
    const std::shared_ptr<const Program> hold = held();
    auto it = runners_.find(method);
    if (it != runners_.end()) return it->second;
    auto slot = std::make_shared<Slot>();
    slot->program = hold;
    RunnerOptions options;
    options.interrupted = ctrl_c_check();
    {
      py::gil_scoped_release nogil;
      auto created = Runner::create(*hold, method, options);
      if (!created.ok()) {
        const std::string& why = created.error().message();
        throw LatheError(origin_.empty() || why.rfind(origin_, 0) == 0 ? why : origin_ + ": " + why);
      }
      slot->runner = std::move(created).value();
    }
    runners_[method] = slot;
    return slot;
  }

  std::shared_ptr<Program> program_;
  bool verified_ = false;
  std::string origin_;  // where it was loaded from; empty for a transform's or lower's result
  std::map<std::string, std::shared_ptr<Slot>> runners_;
  std::vector<std::weak_ptr<ViewSession>> views_;  // closed with the program
};

PyProgram load_any(const py::object& source) {
  if (py::isinstance<py::bytes>(source) || py::isinstance<py::bytearray>(source) ||
      py::isinstance<py::memoryview>(source)) {
    // A strided memoryview (view[::2]) is read through its strides, as
    // bytes(view) reads it; its buffer's raw span would hold other bytes.
    py::object flat = py::isinstance<py::memoryview>(source) ? source.attr("tobytes")() : source;
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(flat).request();
    auto bytes = std::make_shared<std::vector<std::byte>>(static_cast<size_t>(info.size * info.itemsize));
    std::memcpy(bytes->data(), info.ptr, bytes->size());
    py::gil_scoped_release nogil;
    return PyProgram(take(load_bytes(std::shared_ptr<const std::vector<std::byte>>(std::move(bytes)), "<bytes>")),
                     std::string("<bytes>"));
  }
  const std::string path = path_argument(source, "load");
  py::gil_scoped_release nogil;
  return PyProgram(take(lathe::load(path)), path);
}

}  // namespace

PYBIND11_MODULE(_lathe, m) {
  m.doc() = "Lathe: load, transform, lower, run and save torch.export programs (.pt2)";
  m.attr("__version__") = LATHE_VERSION;  // CMakeLists.txt's project(VERSION), as the wheel's metadata
  py::register_exception<LatheError>(m, "Error");
  bind_graph_view(m);
  bind_rewriter(m);
  bind_backends(m);

  py::class_<ExplainRecord>(m, "Explanation")
      .def_readonly("method", &ExplainRecord::method)
      .def_readonly("pass_name", &ExplainRecord::pass)
      .def_readonly("node", &ExplainRecord::node)
      .def_readonly("rewritten", &ExplainRecord::rewritten)
      .def_readonly("message", &ExplainRecord::message)
      .def("__str__", [](const ExplainRecord& r) { return r.method + ": " + r.message; })
      .def("__repr__", [](const ExplainRecord& r) { return "<Explanation " + r.method + ": " + r.message + ">"; });

  // One node's lowering decision; str() is its `lathe lower --explain` line.
  py::class_<LoweringDecision>(m, "LoweringDecision")
      .def_readonly("method", &LoweringDecision::method)
      .def_readonly("node", &LoweringDecision::node)
      .def_readonly("op", &LoweringDecision::op)
      .def_readonly("claimed", &LoweringDecision::claimed)
      .def_property_readonly("delegate",
                             [](const LoweringDecision& d) -> std::optional<int> {
                               if (d.delegate < 0) return std::nullopt;
                               return d.delegate;
                             })
      .def_readonly("reason", &LoweringDecision::reason)
      .def("__str__", [](const LoweringDecision& d) { return to_string(d); })
      .def("__repr__", [](const LoweringDecision& d) { return "<LoweringDecision " + to_string(d) + ">"; });

  // One group a backend claimed (lathe::Partition): its nodes, operands,
  // outputs and the payload its preprocess() returned.
  py::class_<Partition>(m, "Partition")
      .def_readonly("method", &Partition::method)
      .def_readonly("delegate", &Partition::delegate)
      .def_readonly("nodes", &Partition::nodes)
      .def_readonly("inputs", &Partition::inputs)
      .def_readonly("constants", &Partition::constants)
      .def_readonly("outputs", &Partition::outputs)
      .def_property_readonly("payload",
                             [](const Partition& p) {
                               return py::bytes(reinterpret_cast<const char*>(p.payload.data()), p.payload.size());
                             })
      .def("__repr__", [](const Partition& p) {
        return "<Partition " + p.method + " delegate " + std::to_string(p.delegate) + ": " +
               std::to_string(p.nodes.size()) + " node(s), " + std::to_string(p.payload.size()) + " payload bytes>";
      });

  py::class_<PyProgram>(m, "Program")
      .def_property_readonly("methods", &PyProgram::methods)
      .def("inspect", &PyProgram::inspect)
      .def("graph", [](py::object self, const std::optional<std::string>& method) {
             return self.cast<PyProgram&>().graph(self, method);
           }, py::arg("method") = py::none())
      .def("transform", &PyProgram::transform, py::arg("passes") = "default", py::arg("keep") = std::vector<std::string>{},
           py::arg("method") = py::none(), py::arg("verify") = false)
      .def("lower", &PyProgram::lower, py::arg("backend") = "xnnpack", py::arg("method") = py::none())
      .def("partitions", &PyProgram::partitions, py::arg("backend") = "xnnpack", py::arg("method") = py::none())
      .def("save", &PyProgram::save, py::arg("path"), py::arg("format") = "2.9")
      .def("to_bytes", &PyProgram::to_bytes, py::arg("format") = "2.9")
      .def("run", &PyProgram::run, py::arg("method") = py::none())
      .def("reset_state", &PyProgram::reset_state, py::arg("method") = py::none())
      .def("close", &PyProgram::close)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyProgram& p, py::args) { p.close(); });

  m.def("load", &load_any, py::arg("source"));
  m.def("passes", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const PassInfo& p : available_passes()) out.emplace_back(p.name, p.description);
    return out;
  });
  m.def("backends", &available_backends);
  // One intra-op pool for the portable kernels and every delegate, like
  // torch.set_num_threads (default 1).
  m.def("set_threads", [](int n) {
    if (n < 1) throw LatheError("set_threads: the number of threads must be at least 1, not " + std::to_string(n));
    set_threads(n);
  }, py::arg("threads"));
  m.def("num_threads", [] { return lathe::num_threads(); });
  m.def("verified_torch_versions", &verified_torch_versions);
}

}  // namespace lathe::python
