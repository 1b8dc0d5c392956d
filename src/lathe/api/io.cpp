// load / save: the .pt2 reader and writer, from a path or from memory.
#include "lathe/lathe.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"

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

Result<Pt2WriteOptions> write_options(const Program& program, const SaveOptions& options) {
  LATHE_ASSIGN_OR_RETURN(Pt2Format format, parse_pt2_format(options.format));
  if (options.verify) LATHE_RETURN_IF_ERROR(verify(program));
  Pt2WriteOptions w;
  w.format = format;
  return w;
}

}  // namespace

Status save(const Program& program, const std::string& path, const SaveOptions& options) {
  auto w = write_options(program, options);
  if (!w.ok()) return w.error().context(path);
  return write_pt2(program, path, *w);
}

Result<std::vector<std::byte>> save_bytes(const Program& program, const SaveOptions& options) {
  LATHE_ASSIGN_OR_RETURN(Pt2WriteOptions w, write_options(program, options));
  return write_pt2_bytes(program, w);
}

}  // namespace lathe
