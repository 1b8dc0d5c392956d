// Passes written in Python: a lathe.Pass (a `name` and `run(self, rw) ->
// bool`) runs inside Lathe's pipeline as a C++ Pass, and mutates the
// method only through the lathe.Rewriter it is handed, which is the C++
// Rewriter with the same checks (every call succeeds completely or changes
// nothing). After the pass, the method is verified (lathe.h's PassStep), so
// a pass that leaves it invalid fails naming the pass; Program.transform
// works on a copy, so the program the user holds is never changed.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "lathe/lathe.h"

namespace lathe::python {

namespace py = pybind11;

// The C++ Pass that runs Python object `pass` (checked to have a non-empty
// `name` and a callable `run`; lathe.Error otherwise).
std::shared_ptr<Pass> python_pass(const py::object& pass);

// Adds Rewriter to the module.
void bind_rewriter(py::module_& m);

}  // namespace lathe::python
