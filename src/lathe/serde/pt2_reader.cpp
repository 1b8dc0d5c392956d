// .pt2 -> Program.
//
// The archive is memory-mapped once; every raw weight record becomes a
// Storage that views the mapping, so loading a program never copies its
// weights. Errors name the file, the record and (for JSON) the JSON path.
#include <algorithm>
#include <future>
#include <optional>
#include <system_error>

#include "lathe/ir/flat_map.h"

#include "lathe/serde/payload_config.h"
#include "lathe/serde/pickled_state.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"

namespace lathe {
namespace {

// A record read only when used, in chunks (ZipReader::stream), for records
// Lathe copies through without looking (extras) or reads rarely (sample inputs).
ByteSource lazy_record(const std::shared_ptr<const ZipReader>& zip, const ZipEntry& e) {
  return ByteSource(e.size, [zip, e](const ByteSource::Sink& sink) { return zip->stream(e, sink); });
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A JSON record larger than Pt2ReadOptions::max_json_record_bytes is refused
// by its declared size (the zip reader never inflates past that).
Status check_json_record_size(const ZipEntry& e, const std::string& origin, const Pt2ReadOptions& options) {
  if (e.size <= options.max_json_record_bytes) return Status::Ok();
  return make_error(origin + ": the JSON record is " + std::to_string(e.size) + " bytes uncompressed, more than the " +
                    std::to_string(options.max_json_record_bytes >> 20) +
                    " MiB Lathe reads (Pt2ReadOptions::max_json_record_bytes; docs/hostile-input.md)");
}

class ArchiveReader {
 public:
  ArchiveReader(std::shared_ptr<const ZipReader> zip, std::string path, std::string top, const Pt2ReadOptions& options)
      : shared_zip_(std::move(zip)), zip_(*shared_zip_), path_(std::move(path)), top_(std::move(top)), options_(options) {}

  Result<Program> read();

 private:
  const ZipEntry* find(const std::string& record) const { return zip_.find(top_ + record); }
  // A JSON record is read once: decoded, its pages need not stay resident
  // (on a deep network they are a third of the load's peak memory).
  void done_with(const std::string& record) const {
    if (const ZipEntry* e = find(record)) zip_.release(*e);
  }
  Error error(const std::string& record, const std::string& message) const {
    return Error(path_ + ": " + record + ": " + message);
  }
  // Small records (JSON, text) are checked against their CRC: a flipped bit
  // there changes meaning silently. Weights are not, to keep loading zero-copy.
  // The record's text: a view into the mapping for STORED records (no copy),
  // or inflated into `scratch` otherwise. Valid while both live.
  // `readable_after` (optional) receives how many bytes of the mapping follow
  // the text, so a parser may read ahead in place; 0 for inflated copies.
  Result<std::string_view> read_text(const std::string& record, std::vector<std::byte>& scratch,
                                     size_t* readable_after = nullptr) const;
  Result<std::shared_ptr<Storage>> storage(const ZipEntry& entry);
  // A weights or constants config, decoded (and its pages dropped).
  Result<PayloadConfig> read_config(const std::string& config_record) const;
  // The same, started on a second thread when the record is large and
  // stored (a view of the mapping: nothing of the reader changes), to be
  // decoded while the program is; otherwise nothing.
  std::future<Result<PayloadConfig>> read_config_aside(const std::string& config_record) const;
  Status load_state(const std::string& dir, const std::string& config_record, const PayloadConfig& config,
                    ExportedProgram& ep, bool constants);

  std::shared_ptr<const ZipReader> shared_zip_;  // kept by lazy records
  const ZipReader& zip_;
  std::string path_;
  std::string top_;  // "name/" or "" for flat archives
  const Pt2ReadOptions& options_;
  // One storage per record, however many tensors view it (keyed by entry:
  // a deep network has tens of thousands, each found once).
  FlatMap<const ZipEntry*, std::shared_ptr<Storage>> storages_;
  uint64_t zero_filled_ = 0;  // bytes allocated for fake tensors so far
};

Result<std::string_view> ArchiveReader::read_text(const std::string& record, std::vector<std::byte>& scratch,
                                                  size_t* readable_after) const {
  const ZipEntry* e = find(record);
  if (!e) return make_error(path_ + ": missing record '" + record + "'");
  LATHE_RETURN_IF_ERROR(check_json_record_size(*e, path_ + ": " + record, options_));
  LATHE_RETURN_IF_ERROR(zip_.check_crc(*e));
  if (readable_after) *readable_after = 0;
  if (e->method == 0) {
    if (readable_after) *readable_after = zip_.total_size() - (e->data_offset + e->size);
    LATHE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, zip_.view(*e));
    return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  LATHE_ASSIGN_OR_RETURN(scratch, zip_.read(*e));
  return std::string_view(reinterpret_cast<const char*>(scratch.data()), scratch.size());
}

Result<std::shared_ptr<Storage>> ArchiveReader::storage(const ZipEntry& entry) {
  if (const std::shared_ptr<Storage>* known = storages_.find(&entry)) return *known;
  LATHE_ASSIGN_OR_RETURN(std::shared_ptr<Storage> s, zip_.view_storage(entry));
  storages_.emplace(&entry, s);
  return s;
}

Result<PayloadConfig> ArchiveReader::read_config(const std::string& config_record) const {
  std::vector<std::byte> scratch;
  size_t after = 0;
  LATHE_ASSIGN_OR_RETURN(std::string_view text, read_text(config_record, scratch, &after));
  const ZipEntry* e = find(config_record);
  LATHE_ASSIGN_OR_RETURN(PayloadConfig config, decode_payload_config(text, path_ + ": " + config_record, after,
                                                                     [this, e](size_t n) { zip_.release(*e, n); }));
  done_with(config_record);
  return config;
}

std::future<Result<PayloadConfig>> ArchiveReader::read_config_aside(const std::string& config_record) const {
  // Below this a thread costs more than it saves.
  constexpr uint64_t kWorthAThread = uint64_t{256} << 10;
  const ZipEntry* e = find(config_record);
  if (!e || e->method != 0 || e->size < kWorthAThread) return {};
  try {
    return std::async(std::launch::async, [this, config_record] { return read_config(config_record); });
  } catch (const std::system_error&) {
    return {};  // no second thread to be had: decoded in turn, after the program
  }
}

Status ArchiveReader::load_state(const std::string& dir, const std::string& config_record, const PayloadConfig& config,
                                 ExportedProgram& ep, bool constants) {
  std::string record = top_ + dir;  // the full entry name, its last part replaced per tensor
  const size_t record_prefix = record.size();
  for (const auto& entry : config) {
    // (Named references, not a structured binding: clang before 16 cannot
    // capture one.)
    const std::string& fqn = entry.first;
    const PayloadMeta& meta = entry.second;
    // Built only for a message: this loop runs once per weight.
    auto at = [&fqn](std::string_view field = {}) { return "$.config." + fqn + std::string(field); };
    auto named = [&] { return "record '" + record.substr(top_.size()) + "'"; };
    if (meta.path_name.empty() || meta.path_name.find('/') != std::string::npos || meta.path_name == "..") {
      return error(config_record, at(".path_name") + ": '" + meta.path_name + "' is not a record name in " + dir);
    }
    record.resize(record_prefix);
    record += meta.path_name;
    const ZipEntry* e = zip_.find(record);
    if (!e) return error(config_record, at() + ": missing " + named());
    if (meta.use_pickle) {
      // Tensor subclasses and custom objects: kept as bytes, not interpreted.
      LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, zip_.read(*e));
      ep.opaque_constants.emplace_back(fqn, std::move(bytes));
      continue;
    }
    if (!meta.tensor_meta) return error(config_record, at(".tensor_meta") + ": missing for a raw tensor");
    const TensorMeta& tm = *meta.tensor_meta;
    Tensor t;
    t.dtype = tm.dtype;
    t.requires_grad = tm.requires_grad;
    auto sizes = tm.concrete_sizes();
    if (!sizes) return error(config_record, at(".tensor_meta.sizes") + ": symbolic sizes in a weight");
    t.sizes = *sizes;
    for (const auto& s : tm.strides) {
      if (!s.is_concrete()) return error(config_record, at(".tensor_meta.strides") + ": symbolic stride in a weight");
      t.strides.push_back(s.value());
    }
    if (!tm.storage_offset.is_concrete()) {
      return error(config_record, at(".tensor_meta.storage_offset") + ": symbolic offset in a weight");
    }
    t.storage_offset = tm.storage_offset.value();
    LATHE_ASSIGN_OR_RETURN(t.storage, storage(*e));
    size_t elem = dtype_size(t.dtype);
    // PyTorch writes 0-byte records for fake tensors; it loads them as zeros.
    // Their declared size is untrusted: bounded before anything is allocated
    // (overflowing or negative sizes are left to check_fits below).
    uint64_t numel = 1, zeros = 0;
    bool bad_sizes = false;
    for (int64_t d : t.sizes) bad_sizes |= d < 0 || __builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel);
    if (t.storage->nbytes() == 0 && !bad_sizes && numel > 0) {
      if (__builtin_mul_overflow(numel, elem, &zeros) || zeros > options_.max_zero_filled_bytes - zero_filled_) {
        return error(config_record, at() + ": " + named() + " is empty (a fake tensor, read as zeros), and " +
                                        shape_string(t.sizes) + " " + std::string(dtype_name(t.dtype)) +
                                        " is too large to fill with zeros (limit: " +
                                        std::to_string(options_.max_zero_filled_bytes) + " bytes per archive)");
      }
      zero_filled_ += zeros;
      t.storage = Storage::allocate(static_cast<size_t>(zeros));
      t.strides = Tensor::contiguous_strides(t.sizes);
      t.storage_offset = 0;
    } else if (elem == 0 || t.storage->nbytes() % elem != 0) {
      return error(config_record, at() + ": " + named() + " has " + std::to_string(t.storage->nbytes()) +
                                      " bytes, not a multiple of the " + std::string(dtype_name(t.dtype)) +
                                      " element size " + std::to_string(elem));
    }
    Status fits = t.check_fits();
    if (!fits.ok()) return error(config_record, at() + ": " + named() + ": " + fits.error().message());
    if (constants) {
      ep.constants.set(fqn, std::move(t));
    } else if (meta.is_param) {
      ep.parameters.set(fqn, std::move(t));
    } else {
      ep.buffers.set(fqn, std::move(t));
    }
  }
  return Status::Ok();
}

Result<Program> ArchiveReader::read() {
  Program program;
  if (find("archive_format")) {
    std::vector<std::byte> scratch;
    LATHE_ASSIGN_OR_RETURN(std::string_view format, read_text("archive_format", scratch));
    if (format != "pt2") return error("archive_format", "is '" + std::string(format) + "', expected 'pt2'");
  }
  if (find("archive_version")) {
    std::vector<std::byte> scratch;
    LATHE_ASSIGN_OR_RETURN(std::string_view version, read_text("archive_version", scratch));
    if (version != "0") {
      return error("archive_version", "is '" + std::string(version) + "'; this version of Lathe reads PT2 archive version 0");
    }
  }

  // Methods: every models/<name>.json, in archive order.
  std::vector<std::string> methods;
  for (const auto& e : zip_.entries()) {
    if (!starts_with(e.name, top_)) continue;
    std::string_view rel = std::string_view(e.name).substr(top_.size());
    if (starts_with(rel, "models/") && ends_with(rel, ".json")) {
      std::string_view name = rel.substr(7, rel.size() - 7 - 5);
      if (!name.empty() && name.find('/') == std::string_view::npos) methods.emplace_back(name);
    }
  }
  if (methods.empty()) return make_error(path_ + ": no models/<name>.json record: not an exported-program archive");

  bool pickled = false;
  for (const auto& name : methods) {
    std::string model_record = "models/" + name + ".json";
    std::string weights_config = "data/weights/" + name + "_weights_config.json";
    std::string constants_config = "data/constants/" + name + "_constants_config.json";
    // PyTorch 2.8 kept each method's state as one torch.save dict instead.
    const ZipEntry* pickled_weights = find(weights_config) ? nullptr : find("data/weights/" + name + ".pt");
    std::vector<std::byte> scratch;
    JsonDecodeOptions jopts;
    LATHE_ASSIGN_OR_RETURN(std::string_view text, read_text(model_record, scratch, &jopts.readable_after));
    jopts.origin = path_ + ": " + model_record;
    jopts.max_depth = options_.max_json_depth;
    // A deep network's weights config (one entry per weight) is decoded on
    // a second thread while the program is; the weights are attached after
    // both. It starts at the decoder's first report, which comes once the
    // program's text is indexed and may be dropped: started earlier, its
    // own text and index would be resident beside the program's.
    std::future<Result<PayloadConfig>> weights_aside;
    if (const ZipEntry* e = find(model_record)) {
      jopts.read_past = [this, e, &weights_aside, &weights_config, aside = !pickled_weights](size_t n) {
        zip_.release(*e, n);
        if (aside && !weights_aside.valid()) weights_aside = read_config_aside(weights_config);
      };
    }
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<ExportedProgram> ep, decode_program_json(text, jopts));
    done_with(model_record);
    if (pickled_weights) {
      std::string record = "data/weights/" + name + ".pt";
      LATHE_ASSIGN_OR_RETURN(std::vector<NamedTensor> tensors,
                             read_pickled_tensors(zip_, *pickled_weights, path_ + ": " + record));
      LATHE_RETURN_IF_ERROR(assign_pickled_state(*ep, std::move(tensors), false, path_ + ": " + record));
      if (const ZipEntry* c = find("data/constants/" + name + ".pt")) {
        std::string crecord = "data/constants/" + name + ".pt";
        LATHE_ASSIGN_OR_RETURN(std::vector<NamedTensor> consts, read_pickled_tensors(zip_, *c, path_ + ": " + crecord));
        LATHE_RETURN_IF_ERROR(assign_pickled_state(*ep, std::move(consts), true, path_ + ": " + crecord));
      }
      pickled = true;
    } else {
      if (!find(weights_config)) return make_error(path_ + ": missing record '" + weights_config + "'");
      LATHE_ASSIGN_OR_RETURN(PayloadConfig weights,
                             weights_aside.valid() ? weights_aside.get() : read_config(weights_config));
      LATHE_RETURN_IF_ERROR(load_state("data/weights/", weights_config, weights, *ep, false));
      if (find(constants_config)) {
        LATHE_ASSIGN_OR_RETURN(PayloadConfig constants, read_config(constants_config));
        LATHE_RETURN_IF_ERROR(load_state("data/constants/", constants_config, constants, *ep, true));
      }
    }
    Method m{name, std::move(ep), {}, {}};
    const std::string inputs_record = "data/sample_inputs/" + name + ".pt";
    if (const ZipEntry* si = find(inputs_record)) {
      m.sample_inputs = lazy_record(shared_zip_, *si);
      m.sample_inputs_origin = path_ + ": " + inputs_record;
    }
    program.methods.push_back(std::move(m));
  }
  for (const auto& e : zip_.entries()) {
    if (!starts_with(e.name, top_ + "extra/")) continue;
    program.extra.emplace_back(e.name.substr(top_.size() + 6), lazy_record(shared_zip_, e));
  }
  program.source_format = pickled ? kFormatPt2Pickle : kFormatPt2Raw;
  return program;
}

// Flat archives from torch.export.save in PyTorch 2.2-2.7.
Result<Program> read_legacy(const std::shared_ptr<const ZipReader>& shared_zip, const std::string& path,
                            const Pt2ReadOptions& options) {
  const ZipReader& zip = *shared_zip;
  const ZipEntry* ep_entry = zip.find("serialized_exported_program.json");
  LATHE_RETURN_IF_ERROR(check_json_record_size(*ep_entry, path + ": serialized_exported_program.json", options));
  LATHE_RETURN_IF_ERROR(zip.check_crc(*ep_entry));
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, zip.read(*ep_entry));
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  JsonDecodeOptions jopts;
  jopts.origin = path + ": serialized_exported_program.json";
  jopts.max_depth = options.max_json_depth;
  // Decoding first gives the most specific error (e.g. a pre-schema-8 file).
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<ExportedProgram> ep, decode_program_json(text, jopts));
  // Weights and constants: torch.save zips. PyTorch 2.2/2.3 named them
  // .json although they are not.
  auto record = [&](const char* stem) -> const ZipEntry* {
    if (const ZipEntry* e = zip.find(std::string(stem) + ".pt")) return e;
    return zip.find(std::string(stem) + ".json");
  };
  for (bool constants : {false, true}) {
    const ZipEntry* e = record(constants ? "serialized_constants" : "serialized_state_dict");
    if (!e) {
      if (constants) continue;
      return make_error(path + ": missing record 'serialized_state_dict.pt'");
    }
    std::string where = path + ": " + e->name;
    LATHE_ASSIGN_OR_RETURN(std::vector<NamedTensor> tensors, read_pickled_tensors(zip, *e, where));
    LATHE_RETURN_IF_ERROR(assign_pickled_state(*ep, std::move(tensors), constants, where));
  }
  Program program;
  Method m{"model", std::move(ep), {}, {}};
  if (const ZipEntry* si = record("serialized_example_inputs")) {
    m.sample_inputs = lazy_record(shared_zip, *si);
    m.sample_inputs_origin = path + ": " + si->name;
  }
  program.methods.push_back(std::move(m));
  for (const auto& e : zip.entries()) {
    if (e.name.rfind("extra_files/", 0) != 0) continue;
    program.extra.emplace_back(e.name.substr(12), lazy_record(shared_zip, e));
  }
  program.source_format = program.methods[0].program->legacy_schema_version ? kFormatLegacyPre8 : kFormatLegacyZip;
  return program;
}

// AOTInductor packages (torch._inductor.aoti_compile_and_package) share the
// PT2 container, archive_format "pt2" included, but hold compiled code under
// data/aotinductor/<model>/ and no models/<name>.json. Returns the model
// names of such a package, or nothing if the archive holds any program.
std::optional<std::vector<std::string>> aoti_package_models(const ZipReader& zip) {
  static constexpr std::string_view kAoti = "data/aotinductor/";
  std::vector<std::string> models;
  for (const auto& e : zip.entries()) {
    std::string_view name = e.name;
    if (name.find("models/") != std::string_view::npos && ends_with(name, ".json")) return std::nullopt;
    size_t at = name.find(kAoti);
    if (at != 0 && (at == std::string_view::npos || name[at - 1] != '/')) continue;
    std::string_view rest = name.substr(at + kAoti.size());
    std::string model(rest.substr(0, rest.find('/')));
    if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
  }
  if (models.empty()) return std::nullopt;
  return models;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

}  // namespace

namespace {

Result<Program> read_opened(const std::shared_ptr<const ZipReader>& shared_zip, const std::string& path,
                            const Pt2ReadOptions& options) {
  const ZipReader& zip = *shared_zip;
  if (zip.entries().empty()) return make_error(path + ": the zip archive has no entries");
  if (auto models = aoti_package_models(zip)) {
    return make_error(path + ": this is an AOTInductor package (compiled code for model " + join_names(*models) +
                      ", from torch._inductor.aoti_compile_and_package), not an exported program; Lathe reads "
                      "archives written by torch.export.save");
  }
  if (zip.find("serialized_exported_program.json")) return read_legacy(shared_zip, path, options);
  const std::string& first = zip.entries().front().name;
  size_t slash = first.find('/');
  if (slash == std::string::npos) {
    return make_error(path + ": not a .pt2 archive: entry '" + first +
                      "' is not inside a top-level folder and there is no serialized_exported_program.json");
  }
  std::string top = first.substr(0, slash + 1);
  if (!zip.find(top + "archive_format") && !zip.find(top + "models/model.json")) {
    bool any_model = false;
    for (const auto& e : zip.entries()) any_model = any_model || starts_with(e.name, top + "models/");
    if (!any_model) {
      return make_error(path + ": not a .pt2 archive: no '" + top + "archive_format' or '" + top +
                        "models/' records (is it a torch.save or TorchScript file?)");
    }
  }
  ArchiveReader reader(shared_zip, path, top, options);
  return reader.read();
}

// Both entry points: `path` names the archive in messages. The reader is
// shared: lazy records (extras, sample inputs) keep it alive. The program
// was decoded from the file's bytes in place: if the file changed while it
// was read (a page vanished and read as zeros, or bytes were rewritten),
// what was read, or the error it gave, means nothing; say what happened.
Result<Program> read_pt2_zip(ZipReader opened, const std::string& path, const Pt2ReadOptions& options) {
  auto shared_zip = std::make_shared<const ZipReader>(std::move(opened));
  Result<Program> program = read_opened(shared_zip, path, options);
  LATHE_RETURN_IF_ERROR(shared_zip->check_intact());
  return program;
}

}  // namespace

Result<Program> read_pt2(const std::string& path, const Pt2ReadOptions& options) {
  LATHE_ASSIGN_OR_RETURN(ZipReader zip, ZipReader::open(path, options.zip));
  return read_pt2_zip(std::move(zip), path, options);
}

Result<Program> read_pt2_memory(std::shared_ptr<const void> keepalive, std::span<const std::byte> bytes,
                                const std::string& display_name, const Pt2ReadOptions& options) {
  LATHE_ASSIGN_OR_RETURN(ZipReader zip,
                         ZipReader::open_memory(std::move(keepalive), bytes.data(), bytes.size(), display_name,
                                                options.zip));
  return read_pt2_zip(std::move(zip), display_name, options);
}

}  // namespace lathe
