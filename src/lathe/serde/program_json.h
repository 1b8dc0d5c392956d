// The export schema's JSON form of one method (models/<name>.json) <->
// ExportedProgram. Decoding accepts schema 8 and the older encodings still in
// the wild (unions with every member present and all but one null, `as_none`
// as [] or true). Encoding writes the field set of one schema-8 minor in the
// schema's declaration order, so write -> read -> write is byte-identical.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "lathe/core/byte_source.h"
#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

struct JsonDecodeOptions {
  // Used in error messages: "<origin>: $.graph_module.graph.nodes[3]...".
  std::string origin = "<json>";
  // How deep arguments and graphs may nest. Each level is at least one
  // level of JSON, which kMaxDocumentNesting bounds in every document, so
  // by default that one limit (1024) is the only one a file can meet.
  size_t max_depth = 1024;
  // How many readable bytes follow `json` in memory. With at least
  // SIMDJSON_PADDING (64) the text is parsed in place, without a copy; a
  // record inside a zip always has the central directory after it.
  size_t readable_after = 0;
  // Told which bytes of `json` the decoder does not need in memory now: a
  // caller reading from a file map may drop their pages (they come back
  // from the file if read again), so a deep network's text is never
  // resident all at once. Called with json.size() when simdjson's first
  // pass, which reads every byte, is done (the decoder then reads the text
  // front to back), and then about every MiB with how far the decoder has
  // gone (it goes back only for a member kept for later, a graph's outputs).
  // Nothing is reported for a text the parser had to copy.
  std::function<void(size_t)> read_past;
};

// Decodes graph, signature and metadata. State tensors are not in this record;
// the archive reader fills them from the weights configs.
Result<std::unique_ptr<ExportedProgram>> decode_program_json(std::string_view json,
                                                             const JsonDecodeOptions& options = {});

std::string encode_program_json(const ExportedProgram& program);

// Which field set to write. Each minor of schema 8 has its own
// (schema_versions.h); loaders up to PyTorch 2.8 reject keys they do not
// know, so a file must carry exactly the fields of the minor it declares.
//   Current: the minor the program was read with, raised to the lowest one
//            that can express what it uses (schema_minor_to_write()).
//   V8_1:    schema 8.1, what PyTorch 2.4-2.8 loaders accept; fails, naming
//            the node, if the program uses something 8.1 cannot express.
enum class JsonSchema { Current, V8_1 };
struct JsonWriteOptions {
  JsonSchema schema = JsonSchema::Current;
};
Result<std::string> encode_program_json(const ExportedProgram& program, const JsonWriteOptions& options);
// The same text handed to `out` in consecutive chunks as it is encoded (about
// json::Writer::kChunk bytes each), never held whole: how the archive writer
// puts it into its entry. Fails before calling `out` if the program cannot
// be written in the schema asked for; else returns `out`'s first error.
Status encode_program_json(const ExportedProgram& program, const JsonWriteOptions& options,
                           const ByteSource::Sink& out);

// TensorMeta as the schema writes it, shared with the weights-config codec.
// The JSON type is kept out of the header on purpose: callers pass text.
std::string encode_tensor_meta_json(const TensorMeta& meta);

}  // namespace lathe
