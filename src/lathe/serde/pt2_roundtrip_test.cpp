// Every committed fixture loads, verifies, and round-trips:
//   read -> write -> read gives the same program (IR text, specs, state bytes)
//   write -> read -> write gives a byte-identical archive.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "lathe/archive/zip_reader.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

std::vector<std::string> fixture_paths() { return testing::archives_in("fixtures"); }

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Element-wise equality of two tensors' viewed bytes (not their storages'),
// so aliasing choices cannot hide or fake a difference.
bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || a.sizes != b.sizes || a.strides != b.strides || a.storage_offset != b.storage_offset) {
    return false;
  }
  return a.storage->nbytes() == b.storage->nbytes() &&
         std::equal(a.storage->bytes().begin(), a.storage->bytes().end(), b.storage->bytes().begin());
}

void expect_same_state(const NamedTensors& a, const NamedTensors& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, t] : a) {
    const Tensor* other = b.find(name);
    ASSERT_NE(other, nullptr) << what << ": " << name;
    EXPECT_TRUE(same_tensor(t, *other)) << what << ": " << name;
  }
}

void expect_same_program(const Program& a, const Program& b) {
  ASSERT_EQ(a.method_names(), b.method_names());
  EXPECT_EQ(print_program(a), print_program(b));
  for (size_t i = 0; i < a.methods.size(); ++i) {
    const ExportedProgram& x = *a.methods[i].program;
    const ExportedProgram& y = *b.methods[i].program;
    expect_same_state(x.parameters, y.parameters, "parameters");
    expect_same_state(x.buffers, y.buffers, "buffers");
    expect_same_state(x.constants, y.constants, "constants");
    EXPECT_EQ(a.methods[i].sample_inputs, b.methods[i].sample_inputs);
    EXPECT_EQ(x.module_call_graph_json, y.module_call_graph_json);
    EXPECT_EQ(x.opset_version, y.opset_version);
    EXPECT_EQ(x.torch_version, y.torch_version);
  }
  EXPECT_EQ(a.extra, b.extra);
}

TEST(Pt2RoundTrip, FixturesExist) { EXPECT_GE(fixture_paths().size(), 7u); }

TEST(Pt2RoundTrip, EveryFixtureLoadsVerifiesAndRoundTrips) {
  std::string dir = testing::temp_dir();
  for (const auto& path : fixture_paths()) {
    SCOPED_TRACE(path);
    auto original = read_pt2(path);
    ASSERT_TRUE(original.ok()) << original.error().message();
    Status v = verify(*original);
    ASSERT_TRUE(v.ok()) << v.error().message();

    std::string once = dir + "/once.pt2";
    std::string twice = dir + "/twice.pt2";
    Status w1 = write_pt2(*original, once);
    ASSERT_TRUE(w1.ok()) << w1.error().message();
    auto reread = read_pt2(once);
    ASSERT_TRUE(reread.ok()) << reread.error().message();
    ASSERT_TRUE(verify(*reread).ok());
    expect_same_program(*original, *reread);

    Status w2 = write_pt2(*reread, twice, Pt2WriteOptions{"once"});
    ASSERT_TRUE(w2.ok()) << w2.error().message();
    EXPECT_EQ(file_bytes(once), file_bytes(twice)) << "write -> read -> write is not byte-identical";
  }
}

TEST(Pt2RoundTrip, WrittenArchiveHasPyTorchLayout) {
  auto program = read_pt2(testing::source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  std::string out = testing::temp_dir() + "/simple.pt2";
  ASSERT_TRUE(write_pt2(*program, out).ok());
  auto zip = ZipReader::open(out);
  ASSERT_TRUE(zip.ok()) << zip.error().message();
  std::vector<std::string> names;
  for (const auto& e : zip->entries()) {
    names.push_back(e.name);
    EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    EXPECT_EQ(e.method, 0) << e.name;
    EXPECT_EQ(e.name.rfind("simple/", 0), 0u) << "every record under one top folder: " << e.name;
  }
  for (const char* rec : {"simple/archive_format", "simple/archive_version", "simple/.data/version",
                          "simple/byteorder", "simple/models/model.json",
                          "simple/data/weights/model_weights_config.json",
                          "simple/data/constants/model_constants_config.json", "simple/data/weights/weight_0",
                          "simple/data/sample_inputs/model.pt"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), rec), names.end()) << rec;
  }
}

TEST(Pt2RoundTrip, WeightsAreViewedInPlaceNotCopied) {
  std::string path = testing::source_path("fixtures/mlp.pt2");
  auto program = read_pt2(path);
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto zip = ZipReader::open(path);
  ASSERT_TRUE(zip.ok());
  const ExportedProgram& ep = *program->methods[0].program;
  ASSERT_FALSE(ep.parameters.empty());
  for (const auto& [name, t] : ep.parameters) {
    EXPECT_TRUE(t.storage->is_view()) << name << " was copied";
  }
  // The view's bytes are exactly the record's bytes.
  const Tensor* w = ep.parameters.find("fc1.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->sizes, (std::vector<int64_t>{128, 64}));
}

TEST(Pt2RoundTrip, SharedStoragesStayShared) {
  // tied_embedding's buffers alias one storage; the writer emits it once.
  std::string path = testing::source_path("fixtures/tied_embedding.pt2");
  if (!std::filesystem::exists(path)) GTEST_FAIL() << "fixture missing: " << path;
  auto program = read_pt2(path);
  ASSERT_TRUE(program.ok()) << program.error().message();
  const ExportedProgram& ep = *program->methods[0].program;
  std::set<const Storage*> storages;
  size_t tensors = 0;
  for (const NamedTensors* g : {&ep.parameters, &ep.buffers, &ep.constants}) {
    for (const auto& [n, t] : *g) {
      storages.insert(t.storage.get());
      ++tensors;
    }
  }
  EXPECT_LT(storages.size(), tensors) << "expected at least two state tensors to share one storage";
  std::string out = testing::temp_dir() + "/tied.pt2";
  ASSERT_TRUE(write_pt2(*program, out).ok());
  auto zip = ZipReader::open(out);
  ASSERT_TRUE(zip.ok());
  size_t weight_records = 0;
  for (const auto& e : zip->entries()) {
    if (e.name.find("/data/weights/weight_") != std::string::npos ||
        e.name.find("/data/constants/tensor_") != std::string::npos) {
      ++weight_records;
    }
  }
  EXPECT_EQ(weight_records, storages.size());
}

TEST(Pt2RoundTrip, TwoMethodArchiveKeepsBothMethods) {
  auto program = read_pt2(testing::source_path("fixtures/two_methods.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  ASSERT_EQ(program->methods.size(), 2u);
  EXPECT_EQ(program->find_method("forward"), nullptr);
  for (const auto& m : program->methods) EXPECT_GT(m.program->graph().node_count(), 0u) << m.name;
}

// The JSON records are read once: after loading, their pages are no longer
// resident (the weights never were), so a loaded program keeps in memory
// what it holds, not the text it was read from. decoder_lm's JSON records
// are 568 KiB resident if kept; what remains is the small records' pages and
// the kernel's read-around of up to 64 KiB at each page touched.
TEST(Pt2ReadMemory, JsonRecordsDoNotStayResidentAfterLoading) {
  auto program = read_pt2(testing::source_path("fixtures/decoder_lm.pt2"));
  ASSERT_TRUE(program.ok()) << program.error().message();
  const Tensor* weight = nullptr;
  for (const auto& [name, t] : program->methods[0].program->parameters) {
    if (t.storage->file_extent()) weight = &t;
  }
  ASSERT_NE(weight, nullptr) << "expected a weight viewed in the archive's map";
  const long resident = testing::resident_kib(weight->storage->file_extent()->file->data());
  ASSERT_GE(resident, 0) << "the archive's map was not found in /proc/self/smaps";
  EXPECT_LT(resident, 256) << "KiB of the archive resident after loading";
}

}  // namespace
}  // namespace lathe
