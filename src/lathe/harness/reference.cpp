#include "lathe/harness/reference.h"

#include <filesystem>

#include "lathe/harness/npy.h"

namespace lathe {

namespace fs = std::filesystem;

std::string reference_dir(const std::string& archive_path, const std::string& method) {
  const fs::path p(archive_path);
  return (p.parent_path() / (p.stem().string() + ".ref") / method).string();
}

Result<std::vector<Tensor>> load_npy_series(const std::string& dir, const std::string& prefix) {
  std::vector<Tensor> out;
  for (int i = 0;; ++i) {
    const fs::path f = fs::path(dir) / (prefix + "_" + std::to_string(i) + ".npy");
    if (!fs::exists(f)) break;
    LATHE_ASSIGN_OR_RETURN(Tensor t, read_npy(f.string()));
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<ReferenceCall>> load_reference_calls(const std::string& method_dir) {
  std::vector<ReferenceCall> calls;
  for (int k = 0;; ++k) {
    const fs::path d = fs::path(method_dir) / ("call_" + std::to_string(k));
    if (!fs::is_directory(d)) break;
    ReferenceCall c;
    LATHE_ASSIGN_OR_RETURN(c.inputs, load_npy_series(d.string(), "input"));
    LATHE_ASSIGN_OR_RETURN(c.outputs, load_npy_series(d.string(), "output"));
    calls.push_back(std::move(c));
  }
  if (calls.empty()) return make_error("no reference calls in " + method_dir + " (expected call_0/input_0.npy ...)");
  return calls;
}

}  // namespace lathe
