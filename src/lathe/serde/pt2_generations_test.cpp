// Every generation of the same fixture loads to the same program as its
// PyTorch 2.9 twin: graph, specs, state bytes. The older archives were
// written by PyTorch's own torch.save and zip writers (tools/, --format).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

// The graph without argument kinds: schema 8.1 files (PyTorch 2.4-2.8) do not
// record whether an argument was positional, so only 2.9 files carry it.
std::string structure(const ExportedProgram& ep) {
  std::string s;
  const Graph& g = ep.graph();
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    s += "in " + format_argument(g.inputs()[i]) + " " + std::string(input_kind_name(ep.input_specs[i].kind)) + " " +
         ep.input_specs[i].target + (ep.input_specs[i].persistent ? "" : " non-persistent") + "\n";
  }
  for (const Node* n : g.nodes()) {
    s += n->target() + "(";
    for (const auto& a : n->inputs()) s += a.name + "=" + format_argument(a.arg) + ", ";
    s += ") -> ";
    for (const auto& o : n->outputs()) s += format_argument(o) + " ";
    s += "\n";
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    s += "out " + format_argument(g.outputs()[i]) + " " + std::string(output_kind_name(ep.output_specs[i].kind)) +
         " " + ep.output_specs[i].target + "\n";
  }
  for (Value* v : g.placeholders()) s += v->name() + ": " + format_type(*v) + "\n";
  return s;
}

void expect_same_tensors(const NamedTensors& a, const NamedTensors& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (const auto& [name, t] : a) {
    const Tensor* u = b.find(name);
    ASSERT_NE(u, nullptr) << what << " " << name;
    EXPECT_EQ(t.dtype, u->dtype) << name;
    EXPECT_EQ(t.sizes, u->sizes) << name;
    EXPECT_EQ(t.strides, u->strides) << name;
    ASSERT_EQ(t.nbytes(), u->nbytes()) << name;
    if (t.is_contiguous() && u->is_contiguous()) {
      EXPECT_EQ(0, std::memcmp(t.data(), u->data(), t.nbytes())) << name;
    }
  }
}

// `older` and `twin` were written from one trace: same structure, same
// tensors. Both must read as their generation and verify.
void expect_same_as_twin(const std::string& older, const char* older_format, const std::string& twin_path,
                         const char* twin_format) {
  SCOPED_TRACE(older);
  auto p = read_pt2(older);
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->source_format, older_format);
  Status v = verify(*p);
  ASSERT_TRUE(v.ok()) << v.error().message();
  auto twin = read_pt2(twin_path);
  ASSERT_TRUE(twin.ok()) << twin.error().message();
  EXPECT_EQ(twin->source_format, twin_format);
  ASSERT_EQ(p->method_names(), twin->method_names());
  for (size_t i = 0; i < p->methods.size(); ++i) {
    const ExportedProgram& a = *p->methods[i].program;
    const ExportedProgram& b = *twin->methods[i].program;
    EXPECT_EQ(structure(a), structure(b));
    expect_same_tensors(a.parameters, b.parameters, "parameters");
    expect_same_tensors(a.buffers, b.buffers, "buffers");
    expect_same_tensors(a.constants, b.constants, "constants");
    EXPECT_FALSE(p->methods[i].sample_inputs.empty());
  }
}

using testing::archives_in;

// The synthesized older generations (fixtures/README.md): each legacy zip
// against the 2.8 archive written from the same trace. (That they compute
// PyTorch's numbers is RunCommand.ChecksEverySynthesizedOlderGeneration...)
TEST(Pt2Generations, LegacyArchivesMatchTheirPt28Twins) {
  auto files = archives_in("fixtures/legacy-2.4");
  ASSERT_GE(files.size(), 2u);
  for (const auto& f : files) {
    const std::string twin = testing::source_path("fixtures/pt2-2.8/" + std::filesystem::path(f).filename().string());
    expect_same_as_twin(f, kFormatLegacyZip, twin, kFormatPt2Pickle);
  }
}

TEST(Pt2Generations, Pt28ArchivesReadAsPt28AndVerify) {
  auto files = archives_in("fixtures/pt2-2.8");
  ASSERT_GE(files.size(), 2u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    auto p = read_pt2(f);
    ASSERT_TRUE(p.ok()) << p.error().message();
    EXPECT_EQ(p->source_format, kFormatPt2Pickle);
    EXPECT_TRUE(verify(*p).ok());
  }
}

TEST(Pt2Generations, PickledWeightsAreViewedInPlace) {
  auto p = read_pt2(testing::source_path("fixtures/pt2-2.8/mlp.pt2"));
  ASSERT_TRUE(p.ok()) << p.error().message();
  for (const auto& [name, t] : p->methods[0].program->parameters) {
    EXPECT_TRUE(t.storage->is_view()) << name << " was copied";
  }
}

}  // namespace
}  // namespace lathe
