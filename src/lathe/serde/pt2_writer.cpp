// Program -> PT2 archive, laid out as PyTorch 2.9's torch.export.save does:
// one top folder; per method its weights (one record per distinct storage),
// weights config, constants, constants config, models/<name>.json and sample
// inputs; then extra/ records and the archive markers. Written to a temporary
// file and renamed into place, so a failure never leaves a partial archive.
#include <charconv>
#include <filesystem>

#include "lathe/archive/zip_writer.h"
#include "lathe/core/atomic_file.h"
#include "lathe/ir/flat_map.h"
#include "lathe/serde/payload_config.h"
#include "lathe/serde/pickled_state.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"
#include "lathe/serde/torch_save.h"

namespace lathe {
namespace {

// A folder of numbered records (weight_0, weight_1, ...) and the record
// number each storage was written to, so that a storage shared by several
// state entries, or several methods, is written once.
struct RecordFolder {
  // `tensors`: how many state tensors the program has in all, so the table
  // is sized once (grown entry by entry, a deep network's 20,000 weights
  // rehashed it a dozen times).
  RecordFolder(std::string_view dir, std::string_view prefix, size_t tensors)
      : dir(dir), prefix(prefix), written(tensors) {}
  std::string_view dir;     // "data/weights/"
  std::string_view prefix;  // "weight_"
  FlatMap<const Storage*, size_t> written;
  size_t next = 0;
};

// Appends `prefix` and `n` to `buf` ("weight_12"): names are put together
// in reused buffers, so they cost no allocation.
std::string_view append_numbered(std::string& buf, std::string_view prefix, size_t n) {
  char digits[24];
  const char* end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  return buf.append(prefix).append(digits, static_cast<size_t>(end - digits));
}
std::string_view numbered(std::string& buf, std::string_view prefix, size_t n) {
  buf.clear();
  return append_numbered(buf, prefix, n);
}

class ArchiveWriter {
 public:
  ArchiveWriter(ZipWriter& zip, std::string top, size_t tensors)
      : weights("data/weights/", "weight_", tensors),
        constants("data/constants/", "tensor_", tensors),
        zip_(zip),
        top_(std::move(top)) {}

  // `data`: anything ZipWriter::add takes (bytes, text, a file extent, a
  // ByteSource copied in chunks).
  template <typename Data>
  Status add(std::string_view record, const Data& data) {
    LATHE_RETURN_IF_ERROR(zip_.add(path(record), data));
    id_.add(record, zip_.last_crc(), zip_.last_size());
    return Status::Ok();
  }
  // Bytes known only as they are produced (the JSON records).
  Status add_streamed(std::string_view record, const ByteSource::Producer& produce) {
    LATHE_RETURN_IF_ERROR(zip_.add_streamed(path(record), produce));
    id_.add(record, zip_.last_crc(), zip_.last_size());
    return Status::Ok();
  }
  // Written last, over every record added before it.
  Status add_serialization_id() { return zip_.add(path(".data/serialization_id"), id_.str()); }

  // Writes each distinct storage once (across all methods), returning the
  // number of `folder`'s record holding `t`'s.
  Result<size_t> storage_record(const Tensor& t, RecordFolder& folder) {
    if (const size_t* known = folder.written.find(t.storage.get())) return *known;
    const size_t n = folder.next++;
    record_.assign(folder.dir);
    append_numbered(record_, folder.prefix, n);
    // A weight still where the archive it was read from had it is copied
    // from there, with the CRC that archive recorded: never read here.
    if (const auto& extent = t.storage->file_extent()) {
      LATHE_RETURN_IF_ERROR(add(record_, *extent));
    } else {
      LATHE_RETURN_IF_ERROR(add(record_, t.storage->bytes()));
    }
    folder.written.emplace(t.storage.get(), n);
    return n;
  }

  RecordFolder weights, constants;
  size_t opaque_counter = 0;

 private:
  // The entry name of `record`, put together in one reused buffer.
  std::string_view path(std::string_view record) {
    path_.assign(top_).append(record);
    return path_;
  }

  ZipWriter& zip_;
  SerializationId id_;
  std::string top_;
  std::string path_, record_;  // reused, so a record's name costs no allocation
};

size_t state_tensor_count(const Program& program) {
  size_t n = 0;
  for (const auto& m : program.methods) {
    n += m.program->parameters.size() + m.program->buffers.size() + m.program->constants.size();
  }
  return n;
}

// Never write what Lathe would not read: the sample inputs are copied
// verbatim, so they are first parsed with the restricted unpickler (a pickle
// calling os.system was once copied into the output with exit 0).
Status check_sample_inputs(const Method& method) {
  auto parsed = sample_inputs(method);
  if (!parsed.ok()) return make_error("refusing to copy the sample inputs: " + parsed.error().message());
  return Status::Ok();
}

// The method's program JSON, encoded straight into its entry: the document
// (20 MB for a 10,000-layer MLP) is never held whole.
Status write_program_json(ArchiveWriter& w, const std::string& record, const Method& method,
                          const JsonWriteOptions& options) {
  Status s = w.add_streamed(record, [&](const ByteSource::Sink& sink) {
    return encode_program_json(*method.program, options, sink);
  });
  return s.ok() ? s : Status(s.error().context("method '" + method.name + "'"));
}

// The weights and their config: the records first, then the config naming
// them (PyTorch's order), written from the state as it is.
Status write_weights(ArchiveWriter& w, const Method& method) {
  const ExportedProgram& ep = *method.program;
  std::vector<size_t> records;
  records.reserve(ep.parameters.size() + ep.buffers.size());
  for (const NamedTensors* state : {&ep.parameters, &ep.buffers}) {
    for (const auto& [fqn, t] : *state) {
      LATHE_ASSIGN_OR_RETURN(size_t n, w.storage_record(t, w.weights));
      records.push_back(n);
    }
  }
  return w.add_streamed("data/weights/" + method.name + "_weights_config.json", [&](const ByteSource::Sink& out) {
    PayloadConfigWriter config(out);
    std::string name;
    const size_t* n = records.data();
    for (const auto& [fqn, t] : ep.parameters) config.tensor(fqn, numbered(name, w.weights.prefix, *n++), true, t);
    for (const auto& [fqn, t] : ep.buffers) config.tensor(fqn, numbered(name, w.weights.prefix, *n++), false, t);
    return config.finish();
  });
}

// The constant tensors, the custom objects, and their config.
Status write_constants(ArchiveWriter& w, const Method& method) {
  const ExportedProgram& ep = *method.program;
  std::vector<size_t> records;
  records.reserve(ep.constants.size() + ep.opaque_constants.size());
  for (const auto& [fqn, t] : ep.constants) {
    LATHE_ASSIGN_OR_RETURN(size_t n, w.storage_record(t, w.constants));
    records.push_back(n);
  }
  std::string name;
  for (const auto& [fqn, bytes] : ep.opaque_constants) {
    records.push_back(w.opaque_counter++);
    LATHE_RETURN_IF_ERROR(w.add(numbered(name, "data/constants/custom_obj_", records.back()), bytes));
  }
  return w.add_streamed("data/constants/" + method.name + "_constants_config.json", [&](const ByteSource::Sink& out) {
    PayloadConfigWriter config(out);
    const size_t* n = records.data();
    for (const auto& [fqn, t] : ep.constants) config.tensor(fqn, numbered(name, w.constants.prefix, *n++), false, t);
    for (const auto& [fqn, bytes] : ep.opaque_constants) {
      config.entry(fqn, PayloadMeta{std::string(numbered(name, "custom_obj_", *n++)), false, true, std::nullopt});
    }
    return config.finish();
  });
}

Status write_method(ArchiveWriter& w, const Method& method) {
  LATHE_RETURN_IF_ERROR(write_weights(w, method));
  LATHE_RETURN_IF_ERROR(write_constants(w, method));
  LATHE_RETURN_IF_ERROR(write_program_json(w, "models/" + method.name + ".json", method, JsonWriteOptions{}));
  LATHE_RETURN_IF_ERROR(check_sample_inputs(method));
  return w.add("data/sample_inputs/" + method.name + ".pt", method.sample_inputs);
}

// A method's state as torch.save dicts, as PyTorch 2.8 and older keep it:
// parameters (as nn.Parameter) and persistent buffers in one, constants
// (lifted tensors, non-persistent buffers) in the other.
PickleValue state_dict_value(const ExportedProgram& ep) {
  PickleValue::Entries entries;
  for (const auto& [fqn, t] : ep.parameters) entries.emplace_back(PickleValue::of_string(fqn), PickleValue::of_tensor(t, true));
  for (const auto& [fqn, t] : ep.buffers) entries.emplace_back(PickleValue::of_string(fqn), PickleValue::of_tensor(t, false));
  return PickleValue::of_dict(std::move(entries), /*ordered=*/true);
}

PickleValue constants_value(const ExportedProgram& ep) {
  PickleValue::Entries entries;
  for (const auto& [fqn, t] : ep.constants) entries.emplace_back(PickleValue::of_string(fqn), PickleValue::of_tensor(t, false));
  return PickleValue::of_dict(std::move(entries));
}

Status refuse_opaque(const Method& method) {
  if (!method.program->opaque_constants.empty()) {
    return make_error("method '" + method.name + "' has custom objects (" + method.program->opaque_constants.front().first +
                      "), which Lathe can only write to PyTorch 2.9+ archives");
  }
  return Status::Ok();
}

Status write_pickled_method(ArchiveWriter& w, const Method& method) {
  LATHE_RETURN_IF_ERROR(refuse_opaque(method));
  const ExportedProgram& ep = *method.program;
  LATHE_RETURN_IF_ERROR(write_program_json(w, "models/" + method.name + ".json", method, JsonWriteOptions{JsonSchema::V8_1}));
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> weights, write_torch_save(state_dict_value(ep)));
  LATHE_RETURN_IF_ERROR(w.add("data/weights/" + method.name + ".pt", weights));
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> constants, write_torch_save(constants_value(ep)));
  LATHE_RETURN_IF_ERROR(w.add("data/constants/" + method.name + ".pt", constants));
  LATHE_RETURN_IF_ERROR(check_sample_inputs(method));
  return w.add("data/sample_inputs/" + method.name + ".pt", method.sample_inputs);
}

// The flat zip torch.export.save wrote in PyTorch 2.4-2.7.
Status write_legacy(const Program& program, FileSink& sink) {
  if (program.methods.size() != 1) {
    return make_error("the legacy format holds one program, but this one has " +
                      std::to_string(program.methods.size()) + " methods; write 2.8 or 2.9 instead");
  }
  const Method& method = program.methods[0];
  LATHE_RETURN_IF_ERROR(refuse_opaque(method));
  const ExportedProgram& ep = *method.program;
  ZipWriter zip(sink);
  LATHE_RETURN_IF_ERROR(zip.add_streamed("serialized_exported_program.json", [&](const ByteSource::Sink& sink) {
    return encode_program_json(ep, JsonWriteOptions{JsonSchema::V8_1}, sink);
  }));
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> weights, write_torch_save(state_dict_value(ep)));
  LATHE_RETURN_IF_ERROR(zip.add("serialized_state_dict.pt", weights));
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> constants, write_torch_save(constants_value(ep)));
  LATHE_RETURN_IF_ERROR(zip.add("serialized_constants.pt", constants));
  ByteSource inputs = method.sample_inputs;
  LATHE_RETURN_IF_ERROR(check_sample_inputs(method));
  if (inputs.empty()) {
    // The 2.4-2.7 loader always reads this record: an empty (args, kwargs).
    PickleValue none = PickleValue::of_tuple({PickleValue::of_tuple({}), PickleValue::of_dict({})});
    LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> empty, write_torch_save(none));
    inputs = ByteSource(std::move(empty));
  }
  LATHE_RETURN_IF_ERROR(zip.add("serialized_example_inputs.pt", inputs));
  LATHE_RETURN_IF_ERROR(zip.add("version", std::string("8.1")));
  for (const auto& [key, bytes] : program.extra) LATHE_RETURN_IF_ERROR(zip.add("extra_files/" + key, bytes));
  return zip.finish();
}

// The archive's records, in PyTorch's order, under the top folder `top` ("name/").
Status write_pt2_to(const Program& program, FileSink& sink, const std::string& top, const Pt2WriteOptions& options) {
  if (options.format == Pt2Format::Legacy) return write_legacy(program, sink);
  ZipWriter zip(sink);
  ArchiveWriter w(zip, top, state_tensor_count(program));
  LATHE_RETURN_IF_ERROR(w.add("byteorder", std::string("little")));
  for (const auto& m : program.methods) {
    LATHE_RETURN_IF_ERROR(options.format == Pt2Format::Pt2Pickle ? write_pickled_method(w, m) : write_method(w, m));
  }
  for (const auto& [key, bytes] : program.extra) LATHE_RETURN_IF_ERROR(w.add("extra/" + key, bytes));
  LATHE_RETURN_IF_ERROR(w.add("archive_format", std::string("pt2")));
  LATHE_RETURN_IF_ERROR(w.add("archive_version", std::string("0")));
  LATHE_RETURN_IF_ERROR(w.add(".data/version", std::string("6\n")));
  LATHE_RETURN_IF_ERROR(w.add_serialization_id());
  return zip.finish();
}

}  // namespace

// As PyTorch's stream writer names it (caffe2/serialize/inline_container.cc,
// basename()): what follows the last '/' or '\\', up to its last '.'.
// Where that is empty PyTorch refuses the name; Lathe uses "archive", the
// name PyTorch gives archives written to a buffer.
std::string pt2_archive_folder_name(const std::string& path) {
  size_t start = path.find_last_of("/\\");
  start = start == std::string::npos ? 0 : start + 1;
  size_t dot = path.rfind('.');
  size_t end = dot != std::string::npos && dot >= start ? dot : path.size();
  std::string name = path.substr(start, end - start);
  return name.empty() ? "archive" : name;
}

Result<Pt2Format> parse_pt2_format(const std::string& name) {
  if (name == "2.9") return Pt2Format::Pt2Raw;
  if (name == "2.8") return Pt2Format::Pt2Pickle;
  if (name == "legacy") return Pt2Format::Legacy;
  return make_error("unknown format '" + name + "' (valid: 2.9, 2.8, legacy)");
}

Status write_pt2(const Program& program, const std::string& path, const Pt2WriteOptions& options) {
  if (program.methods.empty()) return make_error(path + ": cannot write a program with no methods");
  std::string top = options.archive_name.empty() ? pt2_archive_folder_name(path) : options.archive_name;
  top += "/";
  Status s = write_file_atomically(path, [&](FileSink& sink) -> Status {
    LATHE_RETURN_IF_ERROR(write_pt2_to(program, sink, top, options));
    return options.before_commit ? options.before_commit() : Status::Ok();
  });
  if (!s.ok()) return s.error().message().rfind(path, 0) == 0 ? s : Status(s.error().context(path));
  return Status::Ok();
}

Result<std::vector<std::byte>> write_pt2_bytes(const Program& program, const Pt2WriteOptions& options) {
  if (program.methods.empty()) return make_error("cannot write a program with no methods");
  const std::string top = (options.archive_name.empty() ? std::string("archive") : options.archive_name) + "/";
  MemorySink sink;
  LATHE_RETURN_IF_ERROR(write_pt2_to(program, sink, top, options));
  if (options.before_commit) LATHE_RETURN_IF_ERROR(options.before_commit());
  return sink.take();
}

}  // namespace lathe
