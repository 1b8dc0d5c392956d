// Fuzzes the program JSON decoder (models/<name>.json ->
// ExportedProgram, src/lathe/serde/program_json.h), then what runs on what
// it accepts: verify(), the printer and the encoder. A text whose first
// member is "config" is a weights/constants config instead
// (decode_payload_config, src/lathe/serde/payload_config.h).
//
// The text is decoded in place, as the .pt2 reader does (64 readable bytes
// follow it, like the zip central directory that follows a record).
//
// Invariants: errors are non-empty and name the origin; whatever decodes
// encodes again, and the encoding decodes (write -> read works).
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/payload_config.h"
#include "lathe/serde/program_json.h"

using namespace lathe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kAfter = 64;  // simdjson::SIMDJSON_PADDING
  std::vector<char> buf(size + kAfter);
  if (size) std::memcpy(buf.data(), data, size);
  static const char kCentralDirectory[] = "PK\x01\x02\x2d\x00\x2d\x00\x08\x08";
  for (size_t i = 0; i < kAfter; ++i) buf[size + i] = kCentralDirectory[i % (sizeof kCentralDirectory - 1)];

  std::string_view text(buf.data(), size);
  // A weights/constants config: {"config": ...}.
  const size_t first = text.find_first_not_of(" \t\r\n{");
  if (first != text.npos && first <= 8 && text.substr(first).rfind("\"config\"", 0) == 0) {
    auto config = decode_payload_config(text, "fuzz.json", kAfter);
    fuzz::check_error(config, "fuzz.json: ");
    if (config.ok()) {
      auto again = decode_payload_config(encode_payload_config(*config), "re-encoded");
      if (!again.ok()) fuzz::fail("the config encoder's output does not decode: " + again.error().message());
    }
    return 0;
  }

  JsonDecodeOptions options;
  options.origin = "fuzz.json";
  options.readable_after = kAfter;
  options.max_depth = 64;
  auto ep = decode_program_json(text, options);
  fuzz::check_error(ep, "fuzz.json: ");
  if (!ep.ok()) return 0;

  (void)verify(**ep, "model");
  Status graph_ok = verify_graph((*ep)->graph(), "model");
  if (graph_ok.ok()) (void)print_program(**ep);

  std::string encoded = encode_program_json(**ep);
  JsonDecodeOptions again_options;
  again_options.origin = "re-encoded";
  again_options.max_depth = 1000;
  auto again = decode_program_json(encoded, again_options);
  if (!again.ok()) fuzz::fail("the encoder's output does not decode: " + again.error().message());
  auto v81 = encode_program_json(**ep, JsonWriteOptions{JsonSchema::V8_1});
  fuzz::check_error(v81, nullptr);
  return 0;
}
