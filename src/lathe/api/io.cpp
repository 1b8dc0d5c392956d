// load / save: the .pt2 reader and writer, from a path or from memory; the
// schema each method is written with; atomic text files for tools.
#include "lathe/lathe.h"
#include "lathe/tools.h"

#include <future>
#include <optional>
#include <system_error>

#include "lathe/core/atomic_file.h"
#include "lathe/core/mapped_file.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "lathe/serde/schema_versions.h"

namespace lathe {

Result<Program> load(const std::string& path) { return read_pt2(path); }

Result<Program> load_bytes(std::shared_ptr<const std::vector<std::byte>> bytes, const std::string& name) {
  if (!bytes) return make_error(name + ": no bytes");
  std::span<const std::byte> span(bytes->data(), bytes->size());
  return read_pt2_memory(std::move(bytes), span, name);
}

Result<Program> load_bytes(std::vector<std::byte> bytes, const std::string& name) {
  return load_bytes(std::make_shared<const std::vector<std::byte>>(std::move(bytes)), name);
}

namespace {

Result<Pt2WriteOptions> write_options(const SaveOptions& options) {
  LATHE_ASSIGN_OR_RETURN(Pt2Format format, parse_pt2_format(options.format));
  Pt2WriteOptions w;
  w.format = format;
  return w;
}

// The mapped archives the program's weights and constants are read from.
MappedSources weight_sources(const Program& program) {
  MappedSources sources;
  for (const Method& m : program.methods) {
    const ExportedProgram& ep = *m.program;
    for (const NamedTensors* state : {&ep.parameters, &ep.buffers, &ep.constants}) {
      for (const auto& [name, tensor] : *state) {
        if (tensor.storage) sources.add(tensor.storage->data());
      }
    }
  }
  return sources;
}

// Before the output takes effect, the archives its weights were read from
// must still be what was loaded: a weight read from a truncated map is
// zeros, one copied file to file from a rewritten archive would not match
// the CRC-32 written with it. Wraps whatever was asked before (the verdict).
void check_sources_before_commit(const Program& program, Pt2WriteOptions& w) {
  w.before_commit = [sources = weight_sources(program), then = std::move(w.before_commit)]() -> Status {
    Status s = then ? then() : Status::Ok();
    LATHE_RETURN_IF_ERROR(sources.check());
    return s;
  };
}

// Runs `write` with the program verified on a second thread meanwhile: the
// writer asks for the verdict before its output takes effect, so a program
// that does not verify is still never written, and the time to verify hides
// behind the time to write. Both only read the program; the one thing
// verify writes is its graphs' name index (settling queued erasures on the
// first lookup), which the writer never looks at.
template <typename Write>
auto while_verifying(const Program& program, Pt2WriteOptions& w, Write&& write) {
  std::future<Status> verdict;
  try {
    verdict = std::async(std::launch::async, [&program] { return verify(program); });
  } catch (const std::system_error&) {
    // No second thread to be had: verify first, as on one core.
    if (Status v = verify(program); !v.ok()) return decltype(write())(v.error());
    check_sources_before_commit(program, w);
    return write();
  }
  std::optional<Status> verified;
  w.before_commit = [&] {
    verified = verdict.get();
    return *verified;
  };
  check_sources_before_commit(program, w);
  auto written = write();
  // A write that failed first still reports a program that does not verify
  // (what an error before writing would have said).
  if (!verified) verified = verdict.get();
  if (!verified->ok()) return decltype(written)(verified->error());
  return written;
}

}  // namespace

Status save(const Program& program, const std::string& path, const SaveOptions& options) {
  auto w = write_options(options);
  if (!w.ok()) return w.error().context(path);
  if (!options.verify) {
    check_sources_before_commit(program, *w);
    return write_pt2(program, path, *w);
  }
  Status s = while_verifying(program, *w, [&] { return write_pt2(program, path, *w); });
  if (!s.ok() && s.error().message().rfind(path, 0) != 0) return s.error().context(path);
  return s;
}

Result<std::vector<std::byte>> save_bytes(const Program& program, const SaveOptions& options) {
  LATHE_ASSIGN_OR_RETURN(Pt2WriteOptions w, write_options(options));
  if (!options.verify) {
    check_sources_before_commit(program, w);
    return write_pt2_bytes(program, w);
  }
  return while_verifying(program, w, [&] { return write_pt2_bytes(program, w); });
}

Result<std::vector<WrittenSchema>> written_schemas(const Program& program, const std::string& format) {
  LATHE_ASSIGN_OR_RETURN(Pt2Format f, parse_pt2_format(format));
  std::vector<WrittenSchema> out;
  for (const Method& m : program.methods) {
    const ExportedProgram& ep = *m.program;
    WrittenSchema w{m.name, ep.schema_version.minor, 1, ""};
    // Only the 2.9 layout carries a schema of 8.x; the older layouts are
    // written as the 2.4-2.8 exporters wrote them (8.1).
    if (f == Pt2Format::Pt2Raw) w.written_minor = schema_minor_to_write(ep);
    const bool read_as_schema8 = ep.schema_version.minor >= kOldestSchemaMinor && !ep.legacy_schema_version;
    if (f == Pt2Format::Pt2Raw && read_as_schema8 && w.written_minor > w.read_minor)
      w.raised_because = required_schema_minor(ep).reason;
    out.push_back(std::move(w));
  }
  return out;
}

Status check_save_format(const std::string& format) {
  auto parsed = parse_pt2_format(format);
  if (!parsed.ok()) return parsed.error();
  return Status::Ok();
}

Status write_text_file(const std::string& path, std::string_view text) {
  return write_file_atomically(path, [&](FileSink& sink) {
    return sink.write(std::span<const std::byte>(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  });
}

}  // namespace lathe
