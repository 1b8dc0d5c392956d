// Backends written in Python (lathe.Backend, lathe.register_backend); see
// user_backend.cpp and docs/writing-passes.md.
#pragma once

#include <pybind11/pybind11.h>

namespace lathe::python {

namespace py = pybind11;

// Registers Python object `backend` (a `name`, `support(node)`,
// `preprocess(subgraph)`, optionally `keep`, `constant_args` and
// `execute(payload, inputs)`) for the rest of the process; lathe.Error if
// it lacks one or the name is taken.
void register_python_backend(const py::object& backend);

// Adds Subgraph and register_backend to the module.
void bind_backends(py::module_& m);

}  // namespace lathe::python
