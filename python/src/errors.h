// lathe.Error: every lathe::Error surfaces as this one exception type, with
// the message `lathe` prints.
#pragma once

#include <stdexcept>
#include <string>

#include "lathe/lathe.h"

namespace lathe::python {

struct LatheError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T take(Result<T> r) {
  if (!r.ok()) throw LatheError(r.error().message());
  return std::move(r).value();
}
inline void check(const Status& s) {
  if (!s.ok()) throw LatheError(s.error().message());
}

}  // namespace lathe::python
