// Real PyTorch is the reference: archives written by torch.export.save
// (2.13, schema 8.20, fixtures/ and fixtures/constructs/; 2.9, schema 8.12,
// ../shared/external/pt2) are read, verified, written back and read again;
// what Lathe writes is compared with what PyTorch wrote. Constructs 2.13
// cannot write are checked with hand-written JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/program_json.h"
#include "lathe/serde/pt2.h"
#include "lathe/serde/schema_versions.h"
#include "support/testing.h"

namespace lathe {
namespace {

using nlohmann::json;

std::string fixture(const std::string& rel) { return testing::source_path("fixtures/" + rel); }
std::string construct(const std::string& name) { return fixture("constructs/" + name + ".pt2"); }
std::string pt29_file() { return testing::shared_path("external/pt2/linear_torch2.9.pt2"); }

// The archive's record `suffix` (relative to its top folder) as text.
std::string record_text(const std::string& archive, const std::string& suffix) {
  auto zip = ZipReader::open(archive);
  EXPECT_TRUE(zip.ok()) << archive;
  if (!zip.ok()) return "";
  for (const auto& e : zip->entries()) {
    if (e.name.size() > suffix.size() && e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        e.name[e.name.size() - suffix.size() - 1] == '/') {
      auto bytes = zip->read(e);
      return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    }
  }
  ADD_FAILURE() << archive << " has no record " << suffix;
  return "";
}
json model_json(const std::string& archive) { return json::parse(record_text(archive, "models/model.json")); }

// The first place where two JSON documents differ in which keys objects
// have (or in array lengths), or "" if their key structure is the same.
std::string key_difference(const json& a, const json& b, const std::string& path = "$") {
  if (a.is_object() != b.is_object() || a.is_array() != b.is_array()) return path + ": different kinds";
  if (a.is_object()) {
    std::set<std::string> ka, kb;
    for (auto it = a.begin(); it != a.end(); ++it) ka.insert(it.key());
    for (auto it = b.begin(); it != b.end(); ++it) kb.insert(it.key());
    for (const auto& k : ka)
      if (!kb.count(k)) return path + ": key '" + k + "' only in the first";
    for (const auto& k : kb)
      if (!ka.count(k)) return path + ": key '" + k + "' only in the second";
    for (const auto& k : ka)
      if (auto d = key_difference(a[k], b[k], path + "." + k); !d.empty()) return d;
  } else if (a.is_array()) {
    if (a.size() != b.size()) return path + ": arrays of different lengths";
    for (size_t i = 0; i < a.size(); ++i)
      if (auto d = key_difference(a[i], b[i], path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
  }
  return "";
}

Program read_ok(const std::string& path) {
  auto p = read_pt2(path);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message());
  if (!p.ok()) return Program{};
  Status v = verify(*p);
  EXPECT_TRUE(v.ok()) << path << ": " << (v.ok() ? "" : v.error().message());
  return std::move(*p);
}

std::string write_ok(const Program& p, const std::string& name) {
  std::string out = testing::temp_dir() + "/" + name + ".pt2";
  Status w = write_pt2(p, out);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message());
  return out;
}

bool same_state(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const Tensor* o = b.find(name);
    if (!o || o->dtype != t.dtype || o->sizes != t.sizes || o->strides != t.strides ||
        o->storage_offset != t.storage_offset)
      return false;
    auto x = t.storage->bytes(), y = o->storage->bytes();
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end())) return false;
  }
  return true;
}

// read -> write -> read gives the same program and state; the copy keeps
// PyTorch's JSON key structure exactly and declares the same schema minor.
Program round_trip(const std::string& path, const std::string& name) {
  Program a = read_ok(path);
  if (a.methods.empty()) return a;
  std::string copy = write_ok(a, name);
  Program b = read_ok(copy);
  if (b.methods.empty()) return a;
  EXPECT_EQ(print_program(a), print_program(b)) << path;
  for (size_t i = 0; i < a.methods.size(); ++i) {
    const ExportedProgram& x = *a.methods[i].program;
    const ExportedProgram& y = *b.methods[i].program;
    EXPECT_TRUE(same_state(x.parameters, y.parameters)) << path;
    EXPECT_TRUE(same_state(x.buffers, y.buffers)) << path;
    EXPECT_TRUE(same_state(x.constants, y.constants)) << path;
    EXPECT_EQ(x.range_constraints.size(), y.range_constraints.size()) << path;
    if (x.range_constraints.size() != y.range_constraints.size()) continue;
    for (size_t r = 0; r < x.range_constraints.size(); ++r) {
      EXPECT_EQ(x.range_constraints[r].first, y.range_constraints[r].first) << path;
      EXPECT_EQ(x.range_constraints[r].second.min_val, y.range_constraints[r].second.min_val) << path;
      EXPECT_EQ(x.range_constraints[r].second.max_val, y.range_constraints[r].second.max_val) << path;
    }
  }
  if (a.methods.size() == 1 && a.methods[0].name == "model") {
    json original = model_json(path), written = model_json(copy);
    EXPECT_EQ(key_difference(original, written), "") << path;
    EXPECT_EQ(written["schema_version"], original["schema_version"]) << path;
  }
  return a;
}

const Node* find_node(const ExportedProgram& ep, const std::string& target) {
  for (const Node* n : ep.graph().nodes())
    if (n->target() == target) return n;
  return nullptr;
}

// ---- 1. real exports: input order ----------------------------------------

TEST(RealTorch, Int8TransformerWithConstantBetweenBuffersVerifies) {
  Program p = read_ok(fixture("transformer_block_int8.pt2"));
  ASSERT_EQ(p.methods.size(), 1u);
  ExportedProgram& ep = *p.methods[0].program;
  // What torch.export 2.13 wrote: buffer, tensor constant, buffer.
  ASSERT_EQ(ep.input_specs[9].kind, InputKind::TensorConstant);
  ASSERT_EQ(ep.input_specs[10].kind, InputKind::Buffer);

  // A lifted constant added by a pass lands after all existing state,
  // before the first user input, and the program still verifies and writes.
  Rewriter rw(ep);
  auto c = rw.add_constant("lathe_extra", Tensor::empty(DType::Float32, {2}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  size_t pos = (*c)->input_index();
  EXPECT_EQ(ep.input_specs[pos].target, "lathe_extra");
  EXPECT_EQ(ep.input_specs[pos + 1].kind, InputKind::UserInput);
  for (size_t i = 0; i < pos; ++i) EXPECT_NE(ep.input_specs[i].kind, InputKind::UserInput) << i;
  ASSERT_TRUE(rw.remove_input(*c).ok());
  Status v = verify(p);
  EXPECT_TRUE(v.ok()) << v.error().message();
  round_trip(fixture("transformer_block_int8.pt2"), "int8");
}

// ---- 2. the declared schema minor and its field set -----------------------

TEST(SchemaVersions, TableAgreesWithSnapshots) {
  // Ground truth: a real 2.9 file (8.12) has kind, is_hop_single_tensor_return,
  // treespec_namedtuple_fields, sym_float_values but neither guards_code nor
  // Node.name; schema 8.1 (2.4) has none of the later features.
  for (auto f : {SchemaFeature::NamedArgumentKind, SchemaFeature::HopSingleTensorReturn,
                 SchemaFeature::TreespecNamedtupleFields, SchemaFeature::SymFloat, SchemaFeature::AsNoneBool})
    EXPECT_TRUE(schema_has(12, f)) << schema_feature_info(f).name;
  for (auto f : {SchemaFeature::GuardsCode, SchemaFeature::NodeName, SchemaFeature::IntLists,
                 SchemaFeature::StringToArgument, SchemaFeature::NestedTensors, SchemaFeature::FloatLists})
    EXPECT_FALSE(schema_has(12, f)) << schema_feature_info(f).name;
  for (int i = 0; i < static_cast<int>(SchemaFeature::kCount); ++i) {
    const auto& info = schema_feature_info(static_cast<SchemaFeature>(i));
    EXPECT_EQ(static_cast<int>(info.feature), i);
    EXPECT_FALSE(schema_has(1, info.feature)) << info.name;
    EXPECT_TRUE(schema_has(kNewestSchemaMinor, info.feature)) << info.name;
    EXPECT_LT(info.absent_in, info.since) << info.name;
  }
}

TEST(SchemaVersions, PyTorch29FileIsWrittenBackAs812WithExactly812Fields) {
  Program p = read_ok(pt29_file());
  ASSERT_FALSE(p.methods.empty());  // read_ok reported why
  ASSERT_EQ(p.methods[0].program->schema_version.minor, 12);
  std::string out = write_ok(p, "linear29");
  json original = model_json(pt29_file()), written = model_json(out);
  EXPECT_EQ(written["schema_version"]["minor"], 12);
  EXPECT_EQ(key_difference(original, written), "");
  EXPECT_FALSE(written.contains("guards_code"));
  for (const auto& n : written["graph_module"]["graph"]["nodes"]) {
    EXPECT_FALSE(n.contains("name"));
    EXPECT_TRUE(n.contains("is_hop_single_tensor_return"));
    for (const auto& a : n["inputs"]) EXPECT_TRUE(a.contains("kind"));
  }
}

std::vector<std::string> top_fixtures() { return testing::archives_in("fixtures"); }

TEST(SchemaVersions, PyTorch213FixturesRoundTripAs820) {
  for (const auto& path : top_fixtures()) {
    SCOPED_TRACE(path);
    Program p = round_trip(path, "rt");
    for (const auto& m : p.methods) EXPECT_EQ(m.program->schema_version.minor, 20);
  }
}

// ---- 3. serialization id and folder name ----------------------------------

// Recomputes an archive's id from its records the way PyTorch's writer does.
std::string recompute_id(const std::string& archive, std::string* stored) {
  auto zip = ZipReader::open(archive);
  EXPECT_TRUE(zip.ok());
  SerializationId id;
  for (const auto& e : zip->entries()) {
    std::string rel = e.name.substr(e.name.find('/') + 1);
    if (rel == ".data/serialization_id") {
      auto b = zip->read(e);
      *stored = std::string(reinterpret_cast<const char*>(b->data()), b->size());
      continue;
    }
    id.add(rel, e.crc32, e.size);
  }
  return id.str();
}

TEST(SerializationIdTest, MatchesPyTorchOnRealArchives) {
  for (const auto& path : {fixture("mlp.pt2"), fixture("cond.pt2"), fixture("decoder_lm.pt2"), pt29_file()}) {
    std::string stored;
    EXPECT_EQ(recompute_id(path, &stored), stored) << path;
    EXPECT_EQ(stored.size(), 40u);
  }
}

TEST(SerializationIdTest, LatheWritesPyTorchsForm) {
  Program p = read_ok(fixture("mlp.pt2"));
  std::string out = write_ok(p, "mlp_copy");
  std::string stored;
  EXPECT_EQ(recompute_id(out, &stored), stored);
  EXPECT_EQ(stored.size(), 40u);
  EXPECT_EQ(stored.find_first_not_of("0123456789"), std::string::npos);
}

TEST(ArchiveFolderName, AsPyTorchsWriterNamesIt) {
  // caffe2/serialize/inline_container.cc basename(): after the last '/' or
  // '\', up to the last '.'.
  EXPECT_EQ(pt2_archive_folder_name("out/model.pt2"), "model");
  EXPECT_EQ(pt2_archive_folder_name("out/model.v2.pt2"), "model.v2");
  EXPECT_EQ(pt2_archive_folder_name("model"), "model");
  EXPECT_EQ(pt2_archive_folder_name("a.dir/model"), "model");
  EXPECT_EQ(pt2_archive_folder_name("C:\\x\\net.pt2"), "net");
  EXPECT_EQ(pt2_archive_folder_name("dir/.pt2"), "archive");  // PyTorch refuses this name
  Program p = read_ok(fixture("simple_linear.pt2"));
  std::string out = write_ok(p, "my.model.v3");
  auto zip = ZipReader::open(out);
  ASSERT_TRUE(zip.ok());
  for (const auto& e : zip->entries()) EXPECT_EQ(e.name.rfind("my.model.v3/", 0), 0u) << e.name;
}

// ---- 4. AOTInductor packages ----------------------------------------------

TEST(AotiPackage, RefusedAsCompiledCodeNamingTheFile) {
  std::string path = construct("aoti_linear_cpu");
  auto p = read_pt2(path);
  ASSERT_FALSE(p.ok());
  const std::string& msg = p.error().message();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("AOTInductor package"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model 'model'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an exported program"), std::string::npos) << msg;
}

// ---- 5. constructs, real ---------------------------------------------------

TEST(RealConstructs, ComplexScalarArgument) {
  Program p = round_trip(construct("complex_arg"), "complex");
  const Node* mul = find_node(*p.methods[0].program, "torch.ops.aten.mul.Tensor");
  ASSERT_NE(mul, nullptr);
  const ComplexArg* c = mul->inputs()[1].arg.get_if<ComplexArg>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->real, 1.0);
  EXPECT_EQ(c->imag, 2.0);
}

TEST(RealConstructs, Float8AndWideUnsignedDtypes) {
  Program p = round_trip(construct("dtypes"), "dtypes");
  const ExportedProgram& ep = *p.methods[0].program;
  const DType want[] = {DType::Float8E4M3FN, DType::Float8E5M2, DType::Float8E4M3FNUZ, DType::Float8E5M2FNUZ,
                        DType::UInt16,       DType::UInt32,     DType::UInt64};
  for (size_t i = 0; i < std::size(want); ++i) {
    const Tensor* t = ep.buffers.find("b" + std::to_string(i));
    ASSERT_NE(t, nullptr) << i;
    EXPECT_EQ(t->dtype, want[i]) << i;
  }
  // [0.5, 1, 2, 3] in e4m3fn (bias 7): 0x30 0x38 0x40 0x44; in uint16: 0 1 2 3.
  auto f8 = ep.buffers.find("b0")->storage->bytes();
  EXPECT_EQ(std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(f8.data()),
                                 reinterpret_cast<const uint8_t*>(f8.data()) + 4),
            (std::vector<uint8_t>{0x30, 0x38, 0x40, 0x44}));
  const auto* u16 = reinterpret_cast<const uint16_t*>(ep.buffers.find("b4")->storage->bytes().data());
  EXPECT_EQ(std::vector<uint16_t>(u16, u16 + 4), (std::vector<uint16_t>{0, 1, 2, 3}));
}

TEST(RealConstructs, SymbolicIntsFloatsAndRanges) {
  Program p = round_trip(construct("symbolic"), "symbolic");
  const ExportedProgram& ep = *p.methods[0].program;
  Value* f = ep.graph().find_value("truediv");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kind(), ValueKind::SymFloat);
  ASSERT_EQ(ep.range_constraints.size(), 1u);
  EXPECT_EQ(ep.range_constraints[0].second.min_val, 2);
  EXPECT_EQ(ep.range_constraints[0].second.max_val, 64);
}

TEST(RealConstructs, UnbackedSymbolWithOpenUpperBound) {
  Program p = round_trip(construct("unbacked"), "unbacked");
  const ExportedProgram& ep = *p.methods[0].program;
  ASSERT_EQ(ep.range_constraints.size(), 1u);
  EXPECT_EQ(ep.range_constraints[0].first, "u0");
  EXPECT_EQ(ep.range_constraints[0].second.min_val, 0);
  EXPECT_FALSE(ep.range_constraints[0].second.max_val.has_value());  // PyTorch writes int_oo as null
  Value* ge = ep.graph().find_value("ge_1");
  ASSERT_NE(ge, nullptr);
  EXPECT_EQ(ge->kind(), ValueKind::SymBool);
}

TEST(RealConstructs, WithEffectsTokens) {
  Program p = round_trip(construct("effects"), "effects");
  const ExportedProgram& ep = *p.methods[0].program;
  EXPECT_EQ(ep.input_specs[0].kind, InputKind::Token);
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::Token);
  EXPECT_NE(find_node(ep, "torch.ops.higher_order.with_effects"), nullptr);
}

TEST(RealConstructs, ParameterMutation) {
  Program p = round_trip(construct("parameter_mutation"), "pmut");
  const ExportedProgram& ep = *p.methods[0].program;
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::ParameterMutation);
  EXPECT_EQ(ep.output_specs[0].target, "w");
}

TEST(RealConstructs, HigherOrderOpSubgraphs) {
  for (const std::string& path : {construct("no_grad_subgraph"), fixture("cond.pt2")}) {
    Program p = round_trip(path, "hop");
    bool subgraph = false;
    for (const Node* n : p.methods[0].program->graph().nodes())
      for (const auto& in : n->inputs()) subgraph = subgraph || in.arg.is<GraphArg>();
    EXPECT_TRUE(subgraph) << path;
  }
}

TEST(RealConstructs, SharedStorageWithOffsets) {
  Program p = round_trip(construct("shared_storage"), "shared");
  const ExportedProgram& ep = *p.methods[0].program;
  const Tensor* head = ep.buffers.find("head");
  const Tensor* tail = ep.buffers.find("tail");
  ASSERT_TRUE(head && tail);
  EXPECT_EQ(head->storage, tail->storage);
  EXPECT_EQ(tail->storage_offset, 6);
  EXPECT_EQ(reinterpret_cast<const float*>(tail->storage->bytes().data())[tail->storage_offset], 6.0f);
}

// ---- 5. constructs, hand-written JSON (2.13 does not write them) ----------

std::string program_with_args(const std::string& args, int minor = 20) {
  const std::string meta =
      R"({"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu", "index": null},
          "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7})";
  return R"({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "outputs": [{"as_tensor": {"name": "y"}}],
    "nodes": [{"target": "torch.ops.lathe_test.op.default", "inputs": [)" +
         args + R"(], "outputs": [{"as_tensor": {"name": "y"}}], "metadata": {},
      "is_hop_single_tensor_return": null, "name": null}],
    "tensor_values": {"x": )" + meta + R"(, "y": )" + meta + R"(}, "sym_int_values": {}, "sym_bool_values": {},
    "is_single_tensor_return": false, "custom_obj_values": {}, "sym_float_values": {}},
  "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
                "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}}]},
  "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}},
 "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": {"major": 8, "minor": )" +
         std::to_string(minor) + R"(}, "verifiers": [], "torch_version": "2.13.0", "guards_code": []})";
}

// Decodes, encodes, decodes again: same program, and the argument's JSON
// comes back as written.
std::unique_ptr<ExportedProgram> hand_round_trip(const std::string& arg_json) {
  std::string doc = program_with_args(R"({"name": "a", "arg": )" + arg_json + R"(, "kind": 1})");
  auto ep = decode_program_json(doc);
  EXPECT_TRUE(ep.ok()) << (ep.ok() ? "" : ep.error().message());
  if (!ep.ok()) return nullptr;
  std::string text = encode_program_json(**ep);
  auto again = decode_program_json(text);
  EXPECT_TRUE(again.ok());
  EXPECT_EQ(print_graph((*ep)->graph()), print_graph((*again)->graph()));
  json written = json::parse(text)["graph_module"]["graph"]["nodes"][0]["inputs"][0]["arg"];
  EXPECT_EQ(written, json::parse(arg_json));
  return std::move(*ep);
}

const Argument& first_arg(const ExportedProgram& ep) { return (*ep.graph().nodes().begin())->inputs()[0].arg; }

TEST(HandJsonConstructs, OptionalTensor) {
  auto ep = hand_round_trip(R"({"as_optional_tensor": {"as_tensor": {"name": "x"}}})");
  ASSERT_TRUE(ep);
  EXPECT_EQ(first_arg(*ep).as<OptionalTensor>().value, ep->graph().find_value("x"));
  auto none = hand_round_trip(R"({"as_optional_tensor": {"as_none": true}})");
  ASSERT_TRUE(none);
  EXPECT_EQ(first_arg(*none).as<OptionalTensor>().value, nullptr);
}

TEST(HandJsonConstructs, IntListsFloatListsNestedTensorsAndStringMaps) {
  auto il = hand_round_trip(R"({"as_int_lists": [[1, 2], [], [3]]})");
  ASSERT_TRUE(il);
  EXPECT_EQ(first_arg(*il).as<IntLists>().items, (std::vector<std::vector<int64_t>>{{1, 2}, {}, {3}}));
  auto fl = hand_round_trip(R"({"as_float_lists": [[0.5, -1.25], [2.0]]})");
  ASSERT_TRUE(fl);
  EXPECT_EQ(first_arg(*fl).as<FloatLists>().items, (std::vector<std::vector<double>>{{0.5, -1.25}, {2.0}}));
  auto nt = hand_round_trip(R"({"as_nested_tensors": [[{"name": "x"}, {"name": "x"}], [{"name": "x"}]]})");
  ASSERT_TRUE(nt);
  EXPECT_EQ(first_arg(*nt).as<NestedTensorList>().items.size(), 2u);
  auto sm = hand_round_trip(R"({"as_string_to_argument": {"k": {"as_int": 3}, "t": {"as_tensor": {"name": "x"}}}})");
  ASSERT_TRUE(sm);
  EXPECT_EQ(first_arg(*sm).as<StringToArgument>().items.size(), 2u);
}

TEST(HandJsonConstructs, CustomObjectInput) {
  std::string doc = R"({"graph_module": {"graph": {
    "inputs": [{"as_custom_obj": {"name": "obj", "class_fqn": "__torch__.torch.classes.lathe.Foo"}}],
    "outputs": [{"as_none": true}], "nodes": [], "tensor_values": {}, "sym_int_values": {}, "sym_bool_values": {},
    "is_single_tensor_return": false,
    "custom_obj_values": {"obj": {"name": "obj", "class_fqn": "__torch__.torch.classes.lathe.Foo"}},
    "sym_float_values": {}},
  "signature": {"input_specs": [{"custom_obj": {"arg": {"name": "obj", "class_fqn": "__torch__.torch.classes.lathe.Foo"},
                                                "custom_obj_name": "foo"}}],
                "output_specs": [{"user_output": {"arg": {"as_none": true}}}]},
  "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}},
 "opset_version": {}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 20}, "verifiers": [],
 "torch_version": "2.13.0", "guards_code": []})";
  auto ep = decode_program_json(doc);
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  EXPECT_EQ((*ep)->input_specs[0].kind, InputKind::CustomObj);
  EXPECT_EQ((*ep)->input_specs[0].target, "foo");
  Value* obj = (*ep)->graph().find_value("obj");
  ASSERT_NE(obj, nullptr);
  EXPECT_EQ(obj->class_fqn(), "__torch__.torch.classes.lathe.Foo");
  json written = json::parse(encode_program_json(**ep));
  EXPECT_EQ(key_difference(json::parse(doc), written), "");
  EXPECT_EQ(written["graph_module"]["signature"], json::parse(doc)["graph_module"]["signature"]);
}

TEST(HandJsonConstructs, Float8E8M0IsRefusedByName) {
  // Schema 8.19 added FLOAT8E8M0FNU = 33; Lathe's DType has no such type yet.
  std::string doc = program_with_args(R"({"name": "a", "arg": {"as_scalar_type": 33}, "kind": 1})");
  auto ep = decode_program_json(doc);
  ASSERT_FALSE(ep.ok());
  EXPECT_NE(ep.error().message().find("unknown scalar type 33"), std::string::npos) << ep.error().message();
}

// ---- the writer raises the minor only when it must, and says why ----------

TEST(SchemaVersions, ProgramNeedingALaterMinorIsWrittenWithIt) {
  auto ep = decode_program_json(program_with_args(R"({"name": "a", "arg": {"as_int_lists": [[1]]}, "kind": 1})", 12));
  ASSERT_TRUE(ep.ok()) << ep.error().message();
  SchemaNeed need = required_schema_minor(**ep);
  EXPECT_EQ(need.minor, 16);
  EXPECT_NE(need.reason.find("as_int_lists"), std::string::npos) << need.reason;
  EXPECT_NE(need.reason.find("node 'y'"), std::string::npos) << need.reason;
  json written = json::parse(encode_program_json(**ep));
  EXPECT_EQ(written["schema_version"]["minor"], 16);
  EXPECT_TRUE(written["graph_module"]["graph"]["nodes"][0].contains("name"));  // 8.16 has Node.name
  auto v81 = encode_program_json(**ep, JsonWriteOptions{JsonSchema::V8_1});
  ASSERT_FALSE(v81.ok());
  EXPECT_NE(v81.error().message().find("node 'y'"), std::string::npos) << v81.error().message();
  EXPECT_NE(v81.error().message().find("8.16"), std::string::npos) << v81.error().message();
}

TEST(SchemaVersions, Schema81IsWrittenWithoutLaterFields) {
  auto ep = decode_program_json(program_with_args(R"({"name": "a", "arg": {"as_none": true}, "kind": 1})", 20));
  ASSERT_TRUE(ep.ok());
  auto text = encode_program_json(**ep, JsonWriteOptions{JsonSchema::V8_1});
  ASSERT_TRUE(text.ok()) << text.error().message();
  json j = json::parse(*text);
  EXPECT_EQ(j["schema_version"]["minor"], 1);
  const json& node = j["graph_module"]["graph"]["nodes"][0];
  EXPECT_EQ(node["inputs"][0]["arg"]["as_none"], json::array());  // Tuple[()] before 8.3
  for (const char* k : {"name", "is_hop_single_tensor_return"}) EXPECT_FALSE(node.contains(k)) << k;
  EXPECT_FALSE(node["inputs"][0].contains("kind"));
  EXPECT_FALSE(j["graph_module"]["graph"].contains("sym_float_values"));
  EXPECT_FALSE(j["graph_module"].contains("treespec_namedtuple_fields"));
  EXPECT_FALSE(j.contains("guards_code"));
}

}  // namespace
}  // namespace lathe
