// Python values <-> Lathe tensors, without copying:
//   numpy arrays (the buffer protocol's memory, viewed in place),
//   torch tensors (DLPack capsules, CPU only),
//   Python int/float/bool (SymInt and scalar inputs).
// Outputs go back as numpy arrays or, when the call had a torch tensor, as
// torch tensors through DLPack; both keep Lathe's storage alive.
#pragma once

#include <pybind11/pybind11.h>

#include "lathe/runtime/evalue.h"

namespace lathe::python {

namespace py = pybind11;

// Raises lathe.Error (through LatheError) naming input `index` when the
// value cannot be taken as an input. Sets `saw_torch` when it was a tensor.
EValue to_evalue(const py::handle& value, size_t index, bool& saw_torch);
py::object to_python(const EValue& value, bool as_torch);

}  // namespace lathe::python
