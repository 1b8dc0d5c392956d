// Writing every generation: 2.9 <-> 2.8 <-> legacy round trips, and the
// pickles Lathe writes load in PyTorch's own torch.load(weights_only=True).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "lathe/archive/zip_reader.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

// Graph and specs without argument kinds (schema 8.1 does not record them).
std::string structure(const Program& p) {
  std::string s;
  for (const auto& m : p.methods) {
    const ExportedProgram& ep = *m.program;
    s += "method " + m.name + "\n";
    for (size_t i = 0; i < ep.input_specs.size(); ++i) {
      s += format_argument(ep.graph().inputs()[i]) + " " + std::string(input_kind_name(ep.input_specs[i].kind)) +
           " " + ep.input_specs[i].target + "\n";
    }
    for (const Node* n : ep.graph().nodes()) {
      s += n->target();
      for (const auto& a : n->inputs()) s += " " + a.name + "=" + format_argument(a.arg);
      s += "\n";
    }
    for (size_t i = 0; i < ep.output_specs.size(); ++i) {
      s += format_argument(ep.graph().outputs()[i]) + " " + std::string(output_kind_name(ep.output_specs[i].kind)) +
           " " + ep.output_specs[i].target + "\n";
    }
  }
  return s;
}

void expect_same_state(const Program& a, const Program& b) {
  for (size_t i = 0; i < a.methods.size(); ++i) {
    const ExportedProgram& x = *a.methods[i].program;
    const ExportedProgram& y = *b.methods[i].program;
    for (auto [gx, gy] : {std::pair{&x.parameters, &y.parameters}, std::pair{&x.buffers, &y.buffers},
                          std::pair{&x.constants, &y.constants}}) {
      ASSERT_EQ(gx->size(), gy->size());
      for (const auto& [name, t] : *gx) {
        const Tensor* u = gy->find(name);
        ASSERT_NE(u, nullptr) << name;
        ASSERT_EQ(t.sizes, u->sizes) << name;
        ASSERT_EQ(t.dtype, u->dtype) << name;
        ASSERT_TRUE(t.is_contiguous() && u->is_contiguous()) << name;
        EXPECT_EQ(0, std::memcmp(t.data(), u->data(), t.nbytes())) << name;
      }
    }
    EXPECT_EQ(a.methods[i].sample_inputs, b.methods[i].sample_inputs);
  }
}

Program load(const std::string& path) {
  auto p = read_pt2(path);
  EXPECT_TRUE(p.ok()) << p.error().message();
  return p.ok() ? std::move(p).value() : Program();
}

TEST(Pt2Convert, RoundTripsBetweenAllThreeGenerations) {
  std::string dir = testing::temp_dir();
  for (const char* name : {"mlp", "buffer_mutation", "simple_linear"}) {
    SCOPED_TRACE(name);
    Program original = load(testing::source_path(std::string("fixtures/") + name + ".pt2"));
    std::string p28 = dir + "/" + name + "_28.pt2", plegacy = dir + "/" + name + "_legacy.pt2",
                p29 = dir + "/" + name + "_29.pt2";
    ASSERT_TRUE(write_pt2(original, p28, {"", Pt2Format::Pt2Pickle}).ok());
    Program from28 = load(p28);
    EXPECT_EQ(from28.source_format, kFormatPt2Pickle);
    ASSERT_TRUE(write_pt2(from28, plegacy, {"", Pt2Format::Legacy}).ok());
    Program fromlegacy = load(plegacy);
    EXPECT_EQ(fromlegacy.source_format, kFormatLegacyZip);
    ASSERT_TRUE(write_pt2(fromlegacy, p29).ok());
    Program back = load(p29);
    EXPECT_EQ(back.source_format, kFormatPt2Raw);
    for (const Program* p : {&from28, &fromlegacy, &back}) {
      EXPECT_TRUE(verify(*p).ok());
      EXPECT_EQ(structure(original), structure(*p));
      expect_same_state(original, *p);
    }
  }
}

TEST(Pt2Convert, LegacyRefusesTwoMethods_NEG) {
  Program p = load(testing::source_path("fixtures/two_methods.pt2"));
  std::string out = testing::temp_dir() + "/two.pt2";
  Status s = write_pt2(p, out, {"", Pt2Format::Legacy});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("holds one program, but this one has 2 methods"), std::string::npos)
      << s.error().message();
  EXPECT_FALSE(std::filesystem::exists(out)) << "a failed write must leave no file";
}

TEST(Pt2Convert, OlderFieldSetHasNoNewerKeys) {
  Program p = load(testing::source_path("fixtures/mlp.pt2"));
  std::string out = testing::temp_dir() + "/mlp28.pt2";
  ASSERT_TRUE(write_pt2(p, out, {"", Pt2Format::Pt2Pickle}).ok());
  auto zip = ZipReader::open(out);
  ASSERT_TRUE(zip.ok());
  const ZipEntry* e = zip->find("mlp28/models/model.json");
  ASSERT_NE(e, nullptr);
  auto bytes = zip->read(*e);
  std::string json(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  for (const char* key : {"\"kind\"", "\"is_hop_single_tensor_return\"", "\"sym_float_values\"",
                          "\"treespec_namedtuple_fields\"", "\"guards_code\""}) {
    EXPECT_EQ(json.find(key), std::string::npos) << key;
  }
  EXPECT_NE(json.find("\"minor\":1"), std::string::npos);
}

TEST(Pt2Convert, PicklesWrittenByLatheLoadInTorchWeightsOnly) {
  // PyTorch's own torch.load(weights_only=True) reads the state dict Lathe
  // wrote, and it equals the one PyTorch wrote for the same model.
  Program p = load(testing::source_path("fixtures/tied_embedding.pt2"));
  std::string dir = testing::temp_dir();
  std::string out = dir + "/tied.pt2";
  ASSERT_TRUE(write_pt2(p, out, {"", Pt2Format::Pt2Pickle}).ok());
  std::string script = dir + "/check.py";
  testing::write_text(script, R"(import io, sys, zipfile, torch
ours = zipfile.ZipFile(sys.argv[1]); theirs = zipfile.ZipFile(sys.argv[2])
def load(z, suffix):
    name = [n for n in z.namelist() if n.endswith(suffix)][0]
    return torch.load(io.BytesIO(z.read(name)), weights_only=True)
a, b = load(ours, "data/weights/model.pt"), load(theirs, "data/weights/model.pt")
assert list(a.keys()) == list(b.keys()) or sorted(a) == sorted(b), (list(a), list(b))
for k in b:
    assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].stride() == b[k].stride(), k
    assert torch.equal(a[k], b[k]), k
    assert isinstance(a[k], torch.nn.Parameter) == isinstance(b[k], torch.nn.Parameter), k
# storage sharing survives: tied names share one storage in both
def groups(sd):
    seen = {}
    for k, t in sd.items(): seen.setdefault(t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr(), []).append(k)
    return sorted(sorted(v) for v in seen.values())
assert groups(a) == groups(b), (groups(a), groups(b))
print("ok")
)");
  std::string cmd = testing::torch_python() + " " + script + " " + out + " " +
                    testing::source_path("fixtures/pt2-2.8/tied_embedding.pt2") + " > " + dir + "/out.txt 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << testing::read_text(dir + "/out.txt");
}

}  // namespace
}  // namespace lathe
