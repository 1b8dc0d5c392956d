#include "lathe/harness/default_inputs.h"

#include <filesystem>

#include "lathe/serde/pickled_state.h"

namespace lathe {

namespace {

Result<DefaultInputs> from_reference(const std::string& archive_path, const Method& method,
                                     const std::string& reference_root) {
  DefaultInputs d;
  const std::string dir =
      reference_root.empty() ? reference_dir(archive_path, method.name) : reference_root + "/" + method.name;
  if (!std::filesystem::exists(std::filesystem::path(dir) / "call_0")) return d;
  LATHE_ASSIGN_OR_RETURN(d.calls, load_reference_calls(dir));
  d.source = "reference inputs at " + dir;
  return d;
}

Result<DefaultInputs> from_sample_inputs(const Method& method) {
  DefaultInputs d;
  LATHE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, sample_input_tensors(method));
  if (tensors.empty()) return d;
  d.calls.push_back(ReferenceCall{std::move(tensors), {}});
  d.source = "the archive's sample inputs";
  return d;
}

}  // namespace

Result<std::vector<Tensor>> sample_input_tensors(const Method& method) {
  LATHE_ASSIGN_OR_RETURN(std::vector<PickleValue> values, sample_inputs(method));
  std::vector<Tensor> tensors;
  tensors.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].kind != PickleValue::Kind::Tensor) {
      return make_error("sample input " + std::to_string(i) + " of method '" + method.name + "' is " +
                        "a Python " + std::string(kind_name(values[i].kind)) + ", not a tensor; pass the inputs explicitly");
    }
    tensors.push_back(values[i].tensor);
  }
  return tensors;
}

Result<DefaultInputs> default_inputs(const std::string& archive_path, const Method& method,
                                     InputPreference preference, const std::string& reference_root) {
  if (preference == InputPreference::ReferenceFirst) {
    LATHE_ASSIGN_OR_RETURN(DefaultInputs d, from_reference(archive_path, method, reference_root));
    if (!d.calls.empty()) return d;
    return from_sample_inputs(method);
  }
  LATHE_ASSIGN_OR_RETURN(DefaultInputs d, from_sample_inputs(method));
  if (!d.calls.empty()) return d;
  return from_reference(archive_path, method, reference_root);
}

}  // namespace lathe
