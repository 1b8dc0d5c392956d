// Python values <-> Lathe tensors, without copying:
//   numpy arrays (the buffer protocol's memory, viewed in place),
//   torch tensors (DLPack capsules, CPU only),
//   Python int/float/bool (SymInt and scalar inputs).
// Outputs go back as numpy arrays or, when the call had a torch tensor, as
// torch tensors through DLPack; both keep Lathe's storage alive.
#pragma once

#include <pybind11/pybind11.h>

#include "lathe/lathe.h"

namespace lathe::python {

namespace py = pybind11;

// Raises lathe.Error (through LatheError) naming input `index` when the
// value cannot be taken as an input. Sets `saw_torch` when it was a tensor.
EValue to_evalue(const py::handle& value, size_t index, bool& saw_torch);
py::object to_python(const EValue& value, bool as_torch);

// Whether the Program.run in progress on this thread was given torch
// tensors, so a Python backend's execute() receives the kind of arrays the
// caller passed (torch in, torch out; numpy in, numpy out). Runs execute
// their nodes on the calling thread, so a thread-local is enough.
class CallerArrays {
 public:
  explicit CallerArrays(bool torch) : previous_(torch_) { torch_ = torch; }
  ~CallerArrays() { torch_ = previous_; }
  CallerArrays(const CallerArrays&) = delete;
  CallerArrays& operator=(const CallerArrays&) = delete;
  static bool torch() { return torch_; }

 private:
  bool previous_;
  static thread_local bool torch_;
};

}  // namespace lathe::python
