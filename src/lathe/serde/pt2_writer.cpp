// Program -> PT2 archive, laid out as PyTorch 2.9's torch.export.save does:
// one top folder; per method its weights (one record per distinct storage),
// weights config, constants, constants config, models/<name>.json and sample
// inputs; then extra/ records and the archive markers. Written to a temporary
// file and renamed into place, so a failure never leaves a partial archive.
#include <filesystem>
#include <unordered_map>

#include "lathe/archive/zip_writer.h"
#include "lathe/core/atomic_file.h"
#include "lathe/serde/payload_config.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"

namespace lathe {
namespace {

TensorMeta meta_of(const Tensor& t) {
  TensorMeta m;
  m.dtype = t.dtype;
  for (int64_t s : t.sizes) m.sizes.emplace_back(s);
  for (int64_t s : t.strides) m.strides.emplace_back(s);
  m.storage_offset = SymDim(t.storage_offset);
  m.requires_grad = t.requires_grad;
  return m;
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

class ArchiveWriter {
 public:
  ArchiveWriter(ZipWriter& zip, std::string top) : zip_(zip), top_(std::move(top)) {}

  Status add(const std::string& record, std::span<const std::byte> bytes) { return zip_.add(top_ + record, bytes); }
  Status add(const std::string& record, const std::string& text) { return add(record, as_bytes(text)); }

  // Writes each distinct storage once (across all methods), returning the
  // record name relative to `dir` for `tensor`.
  Result<std::string> storage_record(const Tensor& t, const std::string& dir, const std::string& prefix,
                                     size_t& counter) {
    auto key = std::make_pair(t.storage.get(), dir);
    auto it = written_.find(key);
    if (it != written_.end()) return it->second;
    std::string name = prefix + std::to_string(counter++);
    LATHE_RETURN_IF_ERROR(add(dir + name, t.storage->bytes()));
    written_.emplace(key, name);
    return name;
  }

  size_t weight_counter = 0;
  size_t constant_counter = 0;
  size_t opaque_counter = 0;

 private:
  struct KeyHash {
    size_t operator()(const std::pair<const Storage*, std::string>& k) const {
      return std::hash<const void*>()(k.first) ^ std::hash<std::string>()(k.second);
    }
  };
  ZipWriter& zip_;
  std::string top_;
  std::unordered_map<std::pair<const Storage*, std::string>, std::string, KeyHash> written_;
};

// Returns the method's program JSON (hashed into the serialization id).
Result<std::string> write_method(ArchiveWriter& w, const Method& method) {
  const ExportedProgram& ep = *method.program;
  PayloadConfig weights;
  auto add_state = [&](const NamedTensors& tensors, bool is_param) -> Status {
    for (const auto& [fqn, t] : tensors) {
      LATHE_ASSIGN_OR_RETURN(std::string rec, w.storage_record(t, "data/weights/", "weight_", w.weight_counter));
      weights.emplace_back(fqn, PayloadMeta{rec, is_param, false, meta_of(t)});
    }
    return Status::Ok();
  };
  LATHE_RETURN_IF_ERROR(add_state(ep.parameters, true));
  LATHE_RETURN_IF_ERROR(add_state(ep.buffers, false));
  LATHE_RETURN_IF_ERROR(w.add("data/weights/" + method.name + "_weights_config.json", encode_payload_config(weights)));

  PayloadConfig constants;
  for (const auto& [fqn, t] : ep.constants) {
    LATHE_ASSIGN_OR_RETURN(std::string rec, w.storage_record(t, "data/constants/", "tensor_", w.constant_counter));
    constants.emplace_back(fqn, PayloadMeta{rec, false, false, meta_of(t)});
  }
  for (const auto& [fqn, bytes] : ep.opaque_constants) {
    std::string rec = "custom_obj_" + std::to_string(w.opaque_counter++);
    LATHE_RETURN_IF_ERROR(w.add("data/constants/" + rec, bytes));
    constants.emplace_back(fqn, PayloadMeta{rec, false, true, std::nullopt});
  }
  LATHE_RETURN_IF_ERROR(
      w.add("data/constants/" + method.name + "_constants_config.json", encode_payload_config(constants)));
  std::string program_json = encode_program_json(ep);
  LATHE_RETURN_IF_ERROR(w.add("models/" + method.name + ".json", program_json));
  LATHE_RETURN_IF_ERROR(w.add("data/sample_inputs/" + method.name + ".pt", method.sample_inputs));
  return program_json;
}

// A stable identifier derived from the archive's content (PyTorch writes a
// random-looking id; a content hash keeps Lathe's output reproducible).
struct ContentHash {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  void mix(std::string_view s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
};

std::string serialization_id(uint64_t h) {
  std::string digits = std::to_string(h);
  return std::string(20 - std::min<size_t>(20, digits.size()), '0') + digits;
}

}  // namespace

Status write_pt2(const Program& program, const std::string& path, const Pt2WriteOptions& options) {
  if (program.methods.empty()) return make_error(path + ": cannot write a program with no methods");
  std::string top = options.archive_name;
  if (top.empty()) {
    top = std::filesystem::path(path).stem().string();
    if (top.empty()) top = "archive";
  }
  top += "/";
  Status s = write_file_atomically(path, [&](FileSink& sink) -> Status {
    ZipWriter zip(sink);
    ArchiveWriter w(zip, top);
    LATHE_RETURN_IF_ERROR(w.add("byteorder", std::string("little")));
    ContentHash hash;
    for (const auto& m : program.methods) {
      LATHE_ASSIGN_OR_RETURN(std::string program_json, write_method(w, m));
      hash.mix(m.name);
      hash.mix(program_json);
    }
    for (const auto& [key, bytes] : program.extra) LATHE_RETURN_IF_ERROR(w.add("extra/" + key, bytes));
    LATHE_RETURN_IF_ERROR(w.add("archive_format", std::string("pt2")));
    LATHE_RETURN_IF_ERROR(w.add("archive_version", std::string("0")));
    LATHE_RETURN_IF_ERROR(w.add(".data/version", std::string("6\n")));
    LATHE_RETURN_IF_ERROR(w.add(".data/serialization_id", serialization_id(hash.h)));
    return zip.finish();
  });
  if (!s.ok()) return s.error().message().rfind(path, 0) == 0 ? s : Status(s.error().context(path));
  return Status::Ok();
}

}  // namespace lathe
