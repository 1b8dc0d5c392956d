#include "lathe/serde/pickled_state.h"

#include <memory>
#include <unordered_map>

namespace lathe {

Result<std::vector<NamedTensor>> read_pickled_tensors(const ZipReader& zip, const ZipEntry& entry,
                                                      const std::string& display_name) {
  if (entry.method == 0) {
    // The Storage view keeps the outer mapping alive for as long as any
    // tensor read from the nested archive does.
    LATHE_ASSIGN_OR_RETURN(std::shared_ptr<Storage> record, zip.view_storage(entry));
    return read_torch_save_tensors(record, record->data(), record->nbytes(), display_name);
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, zip.read(entry));
  auto owned = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  return read_torch_save_tensors(owned, owned->data(), owned->size(), display_name);
}

Status assign_pickled_state(ExportedProgram& ep, std::vector<NamedTensor> tensors, bool from_constants,
                            const std::string& display_name) {
  std::unordered_map<std::string, const InputSpec*> by_target;
  for (const auto& spec : ep.input_specs) {
    if (!spec.target.empty()) by_target.emplace(spec.target, &spec);
  }
  for (auto& nt : tensors) {
    auto it = by_target.find(nt.name);
    NamedTensors* dest = nullptr;
    if (it != by_target.end()) {
      const InputSpec& spec = *it->second;
      switch (spec.kind) {
        case InputKind::Parameter: dest = &ep.parameters; break;
        case InputKind::Buffer: dest = spec.persistent ? &ep.buffers : &ep.constants; break;
        case InputKind::TensorConstant: dest = &ep.constants; break;
        default:
          return make_error(display_name + ": '" + nt.name + "' is a tensor, but the signature names it as " +
                            std::string(input_kind_name(spec.kind)));
      }
    } else if (from_constants) {
      dest = &ep.constants;
    } else {
      dest = nt.is_parameter ? &ep.parameters : &ep.buffers;
    }
    dest->set(nt.name, std::move(nt.tensor));
  }
  return Status::Ok();
}

namespace {

void flatten(const PickleValue& v, std::vector<PickleValue>& out) {
  switch (v.kind) {
    case PickleValue::Kind::List:
    case PickleValue::Kind::Tuple:
      for (const auto& item : v.items) flatten(item, out);
      break;
    case PickleValue::Kind::Dict:
      for (const auto& [k, item] : v.entries) flatten(item, out);
      break;
    default: out.push_back(v);
  }
}

}  // namespace

Result<std::vector<PickleValue>> sample_inputs(const Method& method) {
  std::vector<PickleValue> out;
  if (method.sample_inputs.empty()) return out;
  const std::string name = method.sample_inputs_origin.empty()
                               ? "sample inputs of method '" + method.name + "'"
                               : method.sample_inputs_origin + " (sample inputs of method '" + method.name + "')";
  // Declared sizes are bounded before anything is read or inflated: a 3 MB
  // archive once allocated the 3.3 GB of inputs it claimed.
  auto bytes = method.sample_inputs.read(kMaxSampleInputBytes);
  if (!bytes.ok()) return bytes.error().context(name);
  auto owned = std::make_shared<std::vector<std::byte>>(std::move(bytes).value());
  PickleLimits limits;
  limits.max_inflated_bytes = kMaxSampleInputBytes;
  LATHE_ASSIGN_OR_RETURN(PickleValue root, read_torch_save(owned, owned->data(), owned->size(), name, limits));
  if (root.kind != PickleValue::Kind::Tuple || root.items.size() != 2 ||
      root.items[1].kind != PickleValue::Kind::Dict) {
    return make_error(name + ": expected a tuple (args, kwargs), got " + debug_string(root, 200));
  }
  flatten(root.items[0], out);
  flatten(root.items[1], out);
  return out;
}

}  // namespace lathe
