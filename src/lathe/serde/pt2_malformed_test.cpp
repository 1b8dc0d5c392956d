// Each malformed archive gives one clear error naming the file, the record
// and (for JSON) the JSON path — never a crash. The broken archives are built
// here from a good fixture by rewriting exactly one record.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/core/atomic_file.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

using Edit = std::function<std::optional<std::string>(const std::string&)>;  // nullopt: drop the record

// Copies fixtures/simple_linear.pt2 to `out`, applying `edits` keyed by the
// record name relative to the top folder.
void rewrite(const std::string& out, const std::map<std::string, Edit>& edits) {
  auto zip = ZipReader::open(testing::source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(zip.ok()) << zip.error().message();
  Status s = write_file_atomically(out, [&](FileSink& sink) -> Status {
    ZipWriter w(sink);
    for (const auto& e : zip->entries()) {
      auto bytes = zip->read(e);
      if (!bytes.ok()) return bytes.error();
      std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
      std::string rel = e.name.substr(e.name.find('/') + 1);
      auto it = edits.find(rel);
      if (it != edits.end()) {
        // Edits match compact JSON, whatever spacing the fixture writer used.
        if (rel.size() > 5 && rel.substr(rel.size() - 5) == ".json") {
          text = nlohmann::ordered_json::parse(text).dump();
        }
        auto edited = it->second(text);
        if (!edited) continue;
        text = *edited;
      }
      LATHE_RETURN_IF_ERROR(w.add(e.name, text));
    }
    return w.finish();
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << "pattern not found: " << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

std::string load_error(const std::string& path) {
  auto p = read_pt2(path);
  EXPECT_FALSE(p.ok()) << "expected " << path << " to be rejected";
  return p.ok() ? std::string() : p.error().message();
}

class Pt2Malformed : public ::testing::Test {
 protected:
  std::string path_ = testing::temp_dir() + "/bad.pt2";
};

TEST_F(Pt2Malformed, ControlUneditedCopyLoads) {
  rewrite(path_, {});
  auto p = read_pt2(path_);
  EXPECT_TRUE(p.ok()) << p.error().message();
}

TEST_F(Pt2Malformed, TruncatedZip) {
  auto bytes = testing::read_text(testing::source_path("fixtures/simple_linear.pt2"));
  testing::write_text(path_, bytes.substr(0, bytes.size() / 2));
  std::string err = load_error(path_);
  EXPECT_NE(err.find(path_), std::string::npos) << err;
  EXPECT_NE(err.find("no end-of-central-directory record"), std::string::npos) << err;
}

TEST_F(Pt2Malformed, NotAZipAtAll) {
  testing::write_text(path_, "this is not a zip file, just text\n");
  std::string err = load_error(path_);
  EXPECT_NE(err.find(path_), std::string::npos) << err;
}

// One record of a good archive rewritten (or dropped): the error names the
// record (and for JSON the path) and says what is wrong.
TEST_F(Pt2Malformed, EachBrokenRecordIsNamed) {
  const Edit drop = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto replacing = [](std::string from, std::string to) -> Edit {
    return [from, to](const std::string& t) -> std::optional<std::string> { return replace_once(t, from, to); };
  };
  struct Case {
    const char* what;
    const char* record;
    Edit edit;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {"bad JSON", "models/model.json", [](const std::string& t) -> std::optional<std::string> { return t.substr(0, t.size() / 2); },
       {"models/model.json", "invalid JSON"}},
      {"an unknown union key", "models/model.json",
       replacing("{\"name\":\"mat1\",\"arg\":{\"as_tensor\"", "{\"name\":\"mat1\",\"arg\":{\"as_mystery\""),
       {"models/model.json: $.graph_module.graph.nodes[", "unknown Argument member 'as_mystery'"}},
      {"an unknown schema major version", "models/model.json",
       replacing("\"schema_version\":{\"major\":8", "\"schema_version\":{\"major\":9"),
       {"$.schema_version: schema major version 9 is not supported"}},
      {"an unknown archive version", "archive_version", [](const std::string&) -> std::optional<std::string> { return "7"; },
       {"archive_version: is '7'"}},
      {"a wrong archive format", "archive_format", [](const std::string&) -> std::optional<std::string> { return "onnx"; },
       {"archive_format: is 'onnx', expected 'pt2'"}},
      {"no weights config", "data/weights/model_weights_config.json", drop,
       {"missing record 'data/weights/model_weights_config.json'"}},
      {"a missing weight record", "data/weights/weight_0", drop, {"missing record 'data/weights/weight_0'"}},
      {"a storage offset past the end of the record", "data/weights/model_weights_config.json",
       replacing("\"storage_offset\":{\"as_int\":0}", "\"storage_offset\":{\"as_int\":1000}"),
       {"data/weights/model_weights_config.json: $.config.", "bytes but its storage has"}},
      {"sizes larger than the record", "data/weights/model_weights_config.json",
       replacing("\"sizes\":[{\"as_int\":3},{\"as_int\":3}]", "\"sizes\":[{\"as_int\":300},{\"as_int\":3}]"),
       {"$.config.linear.weight", "needs"}},
      {"a record size not a multiple of the dtype's", "data/weights/weight_0",
       [](const std::string& t) -> std::optional<std::string> { return t.substr(0, t.size() - 1); },
       {"not a multiple of the float32 element size 4"}},
      {"an unknown dtype code", "data/weights/model_weights_config.json", replacing("\"dtype\":7", "\"dtype\":77"),
       {"unknown scalar type 77"}},
      {"a reference to an undefined value", "models/model.json",
       replacing("{\"name\":\"mat1\",\"arg\":{\"as_tensor\":{\"name\":\"arg\"}}",
                 "{\"name\":\"mat1\",\"arg\":{\"as_tensor\":{\"name\":\"ghost\"}}"),
       {"references undefined value 'ghost'"}},
      {"no models", "models/model.json", drop, {"no models/<name>.json record"}},
      {"a signature that disagrees with the graph", "models/model.json",
       replacing("\"parameter_name\":\"linear.weight\"}}",
                 "\"parameter_name\":\"linear.weight\"}},{\"user_input\":{\"arg\":{\"as_tensor\":{\"name\":\"arg\"}}}}"),
       {"input_specs[1]: names 'arg' but graph input 1 is 'p_linear_bias'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    rewrite(path_, {{c.record, c.edit}});
    const std::string err = load_error(path_);
    for (const std::string& s : c.says) EXPECT_NE(err.find(s), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace lathe
