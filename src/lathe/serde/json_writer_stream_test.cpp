// The program JSON streamed in chunks (straight into its archive entry) is
// the text encoded into one string: the same bytes across chunk boundaries,
// with tokens longer than a chunk, in the archive with the same CRC and the
// serialization id PyTorch's writer would compute.
#include <gtest/gtest.h>

#include "lathe/archive/crc32.h"
#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/serde/json_writer.h"
#include "lathe/serde/payload_config.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

std::string str(std::span<const std::byte> b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }

// The streamed text and the sizes of the pieces it came in.
struct Streamed {
  std::string text;
  std::vector<size_t> pieces;
};

Streamed stream(const ExportedProgram& ep, const JsonWriteOptions& options = {}) {
  Streamed s;
  Status st = encode_program_json(ep, options, [&](std::span<const std::byte> piece) {
    s.text += str(piece);
    s.pieces.push_back(piece.size());
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.error().message();
  return s;
}

Program read_fixture(const std::string& name) {
  auto p = read_pt2(testing::source_path("fixtures/" + name));
  EXPECT_TRUE(p.ok()) << p.error().message();
  return p.ok() ? std::move(*p) : Program{};
}

// decoder_lm's prefill method is 240 KB of JSON: several chunks, each full
// but the last.
TEST(JsonWriterStream, ManyChunksGiveTheBytesOfOneString) {
  Program p = read_fixture("decoder_lm.pt2");
  ASSERT_FALSE(p.methods.empty());
  for (const Method& m : p.methods) {
    SCOPED_TRACE(m.name);
    const std::string whole = encode_program_json(*m.program);
    Streamed s = stream(*m.program);
    EXPECT_EQ(s.text, whole);
    ASSERT_GE(s.pieces.size(), 3u);
    for (size_t i = 0; i + 1 < s.pieces.size(); ++i) {
      EXPECT_GT(s.pieces[i], json::Writer::kChunk / 2);  // flushed when full (short of one token)
      EXPECT_LE(s.pieces[i], json::Writer::kChunk);
    }
    auto v81 = encode_program_json(*m.program, JsonWriteOptions{JsonSchema::V8_1});
    ASSERT_TRUE(v81.ok());
    EXPECT_EQ(stream(*m.program, JsonWriteOptions{JsonSchema::V8_1}).text, *v81);
  }
}

// A string longer than a chunk (a long stack trace, with escapes and
// non-ASCII) goes out as one piece of its own size.
TEST(JsonWriterStream, TokenLongerThanAChunk) {
  Program p = read_fixture("simple_linear.pt2");
  ASSERT_FALSE(p.methods.empty());
  ExportedProgram& ep = *p.methods[0].program;
  std::string trace;
  while (trace.size() < 3 * json::Writer::kChunk) trace += "File \"m.py\", line 7, in forward\n\tcaf\xc3\xa9 \"x\"\\ ";
  ep.graph().first_node()->mutable_metadata().emplace_back("stack_trace", trace);
  const std::string whole = encode_program_json(ep);
  Streamed s = stream(ep);
  EXPECT_EQ(s.text, whole);
  EXPECT_GT(*std::max_element(s.pieces.begin(), s.pieces.end()), 3 * json::Writer::kChunk);
}

// The sink's first error is returned and nothing more is handed to it.
TEST(JsonWriterStream, StopsAtTheSinksFirstError) {
  Program p = read_fixture("decoder_lm.pt2");
  ASSERT_FALSE(p.methods.empty());
  size_t calls = 0;
  Status s = encode_program_json(*p.methods[0].program, JsonWriteOptions{}, [&](std::span<const std::byte>) {
    return ++calls == 2 ? Status(make_error("disk full")) : Status::Ok();
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "disk full");
  EXPECT_EQ(calls, 2u);
}

// Written by write_pt2_bytes (the program JSON streamed into its entry): the
// entry holds the encoded text, with its CRC, and the archive's
// serialization id is what PyTorch's writer computes from its records.
TEST(JsonWriterStream, ArchiveEntryHasTheTextItsCrcAndTheSerializationId) {
  Program p = read_fixture("decoder_lm.pt2");
  ASSERT_FALSE(p.methods.empty());
  auto bytes = write_pt2_bytes(p);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  auto keep = std::make_shared<std::vector<std::byte>>(std::move(*bytes));
  auto zip = ZipReader::open_memory(keep, keep->data(), keep->size(), "decoder_lm.pt2");
  ASSERT_TRUE(zip.ok()) << zip.error().message();
  for (const Method& m : p.methods) {
    const ZipEntry* e = zip->find("archive/models/" + m.name + ".json");
    ASSERT_NE(e, nullptr) << m.name;
    const std::string whole = encode_program_json(*m.program);
    auto stored = zip->read(*e);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(str(*stored), whole);
    EXPECT_EQ(e->crc32, crc32_update(0, std::as_bytes(std::span<const char>(whole))));
  }
  SerializationId id;
  std::string stored_id;
  for (const ZipEntry& e : zip->entries()) {
    const std::string rel = e.name.substr(e.name.find('/') + 1);
    if (rel == ".data/serialization_id") stored_id = str(*zip->read(e));
    else id.add(rel, e.crc32, e.size);
  }
  EXPECT_EQ(stored_id, id.str());
}

// A payload config written straight from the tensors is the one encoded
// from PayloadMeta with payload_tensor_meta (the DOM-checked form,
// json_writer_equivalence_test): every fixture's state, and tensors with
// odd strides, offsets, dtypes and requires_grad.
TEST(JsonWriterStream, PayloadConfigFromTensorsIsTheEncodedOne) {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const std::string& name : testing::fixture_names()) {
    Program p = read_fixture(name + ".pt2");
    for (const Method& m : p.methods) {
      for (const NamedTensors* state : {&m.program->parameters, &m.program->buffers, &m.program->constants}) {
        for (const auto& [fqn, t] : *state) tensors.emplace_back(name + "." + fqn, t);
      }
    }
  }
  Tensor odd = Tensor::empty(DType::BFloat16, {3, 4, 5});
  odd.strides = {1, 3, 12};
  odd.storage_offset = 7;
  odd.requires_grad = true;
  tensors.emplace_back("odd \"name\"\n", odd);
  tensors.emplace_back("scalar", Tensor::empty(DType::Int64, {}));
  ASSERT_GT(tensors.size(), 100u);

  PayloadConfig config;
  std::string streamed;
  size_t pieces = 0;
  PayloadConfigWriter w([&](std::span<const std::byte> piece) {
    streamed += str(piece);
    ++pieces;
    return Status::Ok();
  });
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [fqn, t] = tensors[i];
    const std::string path = "weight_" + std::to_string(i);
    config.emplace_back(fqn, PayloadMeta{path, i % 2 == 0, false, intern_tensor_meta(payload_tensor_meta(t))});
    w.tensor(fqn, path, i % 2 == 0, t);
  }
  config.emplace_back("obj", PayloadMeta{"custom_obj_0", false, true, std::nullopt});
  w.entry("obj", config.back().second);
  ASSERT_TRUE(w.finish().ok());
  EXPECT_EQ(streamed, encode_payload_config(config));
  EXPECT_GE(pieces, 2u);
}

}  // namespace
}  // namespace lathe
