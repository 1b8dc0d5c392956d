// Pre-schema-8 programs (PyTorch 2.2/2.3): integer schema version, unions
// with every member present, bare-integer storage offsets, a `dialect`.
// The real archive in ../shared/external/pt2 is the ground truth.
#include <gtest/gtest.h>

#include <map>

#include "lathe/archive/zip_reader.h"
#include "lathe/serde/program_json.h"
#include "support/testing.h"

namespace lathe {
namespace {

Result<std::unique_ptr<ExportedProgram>> decode_hades() {
  std::string path = testing::shared_path("external/pt2/hades_pid_exported_program.pt2");
  auto zip = ZipReader::open(path);
  if (!zip.ok()) return zip.error();
  const ZipEntry* e = zip->find("serialized_exported_program.json");
  if (!e) return make_error("no serialized_exported_program.json");
  auto bytes = zip->read(*e);
  if (!bytes.ok()) return bytes.error();
  JsonDecodeOptions options;
  options.origin = "hades:serialized_exported_program.json";
  return decode_program_json(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), options);
}

TEST(LegacyJson, RealPyTorch22ProgramDecodes) {
  auto ep = decode_hades();
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  EXPECT_EQ((*ep)->legacy_schema_version, 2);
  EXPECT_EQ((*ep)->schema_version.major, 8);
  EXPECT_EQ((*ep)->verifiers, std::vector<std::string>{"ATEN"});

  std::map<std::string, int> ops;
  for (const Node* n : (*ep)->graph().nodes()) ops[n->op_name()]++;
  // Counts from the archive's README (shared/external/pt2/README.md).
  EXPECT_EQ(ops["aten.t.default"], 10);
  EXPECT_EQ(ops["aten.addmm.default"], 10);
  EXPECT_GE(ops["aten._native_batch_norm_legit_functional.default"], 1);

  int mutations = 0, user_outputs = 0;
  for (const auto& s : (*ep)->output_specs) {
    mutations += s.kind == OutputKind::BufferMutation;
    user_outputs += s.kind == OutputKind::UserOutput;
  }
  EXPECT_EQ(mutations, 6);
  EXPECT_GE(user_outputs, 1);
  // The user output produced by addmm: the stale-signature situation.
  bool addmm_output = false;
  for (size_t i = 0; i < (*ep)->output_specs.size(); ++i) {
    if ((*ep)->output_specs[i].kind != OutputKind::UserOutput) continue;
    Value* v = (*ep)->graph().outputs()[i].tensor();
    addmm_output = addmm_output || (v && v->producer() && v->producer()->op_name() == "aten.addmm.default");
  }
  EXPECT_TRUE(addmm_output);
}

TEST(LegacyJson, BareIntegerStorageOffsetIsRead) {
  auto ep = decode_hades();
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  for (Value* v : (*ep)->graph().placeholders()) {
    ASSERT_TRUE(v->meta().has_value()) << v->name();
    EXPECT_TRUE(v->meta()->storage_offset.is_concrete());
    EXPECT_EQ(v->meta()->storage_offset.value(), 0);
  }
}

TEST(LegacyJson, UnmappableLegacyConstructNamesTheVersion_NEG) {
  std::string json = R"({"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [
      {"target": "torch.ops.aten.relu.default", "inputs": [{"name": "self", "arg": {"as_none": null, "as_mystery": 1}}],
       "outputs": [], "metadata": {}}],
      "tensor_values": {}, "sym_int_values": {}, "sym_bool_values": {}},
      "signature": {"input_specs": [], "output_specs": []}, "module_call_graph": []},
      "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": 2, "dialect": "ATEN"})";
  auto ep = decode_program_json(json);
  ASSERT_FALSE(ep.ok());
  EXPECT_NE(ep.error().message().find("unknown Argument member 'as_mystery'"), std::string::npos) << ep.error().message();
  EXPECT_NE(ep.error().message().find("schema-2 program, written by PyTorch 2.2/2.3"), std::string::npos)
      << ep.error().message();
}

TEST(LegacyJson, ImpossibleIntegerVersion_NEG) {
  auto ep = decode_program_json(R"({"schema_version": 42, "graph_module": {}})");
  ASSERT_FALSE(ep.ok());
  EXPECT_NE(ep.error().message().find("integer schema version 42 is not one PyTorch wrote"), std::string::npos)
      << ep.error().message();
}

// A document that breaks before its schema_version makes the decoder look
// again from the start (is it a legacy program?). After the error simdjson
// had abandoned the document, and rewinding it read through a null parser
// (found by fuzz_program_json). Now it is an error naming the bad JSON.
TEST(LegacyJson, BrokenJsonBeforeTheVersionIsAnErrorNotACrash_NEG) {
  for (const char* text : {R"({"con"strides"fig": {}})", R"({"graph_module": {"nodes": [}, "schema_version": 8})"}) {
    auto ep = decode_program_json(text);
    ASSERT_FALSE(ep.ok()) << text;
    EXPECT_NE(ep.error().message().find("JSON"), std::string::npos) << ep.error().message();
  }
}

}  // namespace
}  // namespace lathe
