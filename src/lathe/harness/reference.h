// The eager reference numbers stored beside a fixture archive:
//
//   <dir>/<stem>.pt2
//   <dir>/<stem>.ref/<method>/call_<k>/input_<i>.npy, output_<i>.npy
//
// Calls run back to back on one module (state carried from call to call).
#pragma once

#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"

namespace lathe {

struct ReferenceCall {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

// "<dir>/<stem>.ref/<method>" for an archive path (whether or not it exists).
std::string reference_dir(const std::string& archive_path, const std::string& method);
// call_0, call_1, ... until the first missing one; an error if there is none.
Result<std::vector<ReferenceCall>> load_reference_calls(const std::string& method_dir);
// <dir>/<prefix>_0.npy, _1, ... until the first missing one.
Result<std::vector<Tensor>> load_npy_series(const std::string& dir, const std::string& prefix);

}  // namespace lathe
