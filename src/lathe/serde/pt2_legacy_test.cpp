// Older generations: the real PyTorch 2.2 archive in ../shared/external/pt2.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pickled_state.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

std::string hades() { return testing::shared_path("external/pt2/hades_pid_exported_program.pt2"); }

TEST(Pt2Legacy, RealPyTorch22ArchiveLoadsAndVerifies) {
  auto p = read_pt2(hades());
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->source_format, kFormatLegacyPre8);
  ASSERT_EQ(p->methods.size(), 1u);
  Status v = verify(*p);
  EXPECT_TRUE(v.ok()) << v.error().message();
  const ExportedProgram& ep = *p->methods[0].program;
  // Shapes as torch.load reports them for this file (feature.0 is Linear(10, 256)).
  const Tensor* w = ep.parameters.find("feature.0.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->sizes, (std::vector<int64_t>{256, 10}));
  // Python's zipfile nested the torch.save zip at an odd offset, so this
  // weight's bytes are misaligned for float: it is copied into aligned
  // memory (typed loads from a misaligned view are undefined behaviour).
  EXPECT_FALSE(w->storage->is_view()) << "a misaligned weight must be copied, not viewed";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->storage->data()) % alignof(float), 0u);
  EXPECT_NE(ep.buffers.find("class_classifier.1.running_mean"), nullptr);
  EXPECT_NE(ep.buffers.find("class_classifier.1.num_batches_tracked"), nullptr);
}

TEST(Pt2Legacy, RealPyTorch22ArchiveUpgradesTo29AndReadsBackIdentically) {
  auto p = read_pt2(hades());
  ASSERT_TRUE(p.ok()) << p.error().message();
  std::string out = testing::temp_dir() + "/hades.pt2";
  Status w = write_pt2(*p, out);
  ASSERT_TRUE(w.ok()) << w.error().message();
  auto back = read_pt2(out);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->source_format, kFormatPt2Raw);
  EXPECT_EQ(back->methods[0].program->schema_version.major, 8);
  EXPECT_FALSE(back->methods[0].program->legacy_schema_version.has_value());
  EXPECT_EQ(print_program(*p), print_program(*back));
  const ExportedProgram& a = *p->methods[0].program;
  const ExportedProgram& b = *back->methods[0].program;
  for (const NamedTensors* g : {&a.parameters, &a.buffers}) {
    for (const auto& [name, t] : *g) {
      const Tensor* u = b.parameters.find(name) ? b.parameters.find(name) : b.buffers.find(name);
      ASSERT_NE(u, nullptr) << name;
      ASSERT_EQ(t.sizes, u->sizes) << name;
      ASSERT_EQ(t.nbytes(), u->nbytes()) << name;
      EXPECT_EQ(0, std::memcmp(t.data(), u->data(), t.nbytes())) << name;
    }
  }
  EXPECT_EQ(a.parameters.size(), b.parameters.size());
  EXPECT_EQ(a.buffers.size(), b.buffers.size());
}

TEST(Pt2Legacy, SampleInputsOfFixturesDecode) {
  auto p = read_pt2(testing::source_path("fixtures/simple_linear.pt2"));
  ASSERT_TRUE(p.ok()) << p.error().message();
  auto inputs = sample_inputs(p->methods[0]);
  ASSERT_TRUE(inputs.ok()) << inputs.error().message();
  ASSERT_EQ(inputs->size(), 1u);
  ASSERT_EQ((*inputs)[0].kind, PickleValue::Kind::Tensor);
  EXPECT_EQ((*inputs)[0].tensor.sizes, (std::vector<int64_t>{2, 3}));  // SimpleLinear's input, per the manifest
}

TEST(Pt2Legacy, MissingStateDictIsAClearError_NEG) {
  // A flat archive whose state dict record is missing.
  std::string dir = testing::temp_dir();
  std::string cmd = "cd " + dir + " && /usr/bin/python3 -c \"import zipfile; z=zipfile.ZipFile('" + hades() +
                    "'); o=zipfile.ZipFile('bad.pt2','w'); [o.writestr(n, z.read(n)) for n in z.namelist() if "
                    "'state_dict' not in n]; o.close()\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto p = read_pt2(dir + "/bad.pt2");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("missing record 'serialized_state_dict.pt'"), std::string::npos)
      << p.error().message();
}

}  // namespace
}  // namespace lathe
