// The generator, the builder and the shrinker themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "lathe/ir/verify.h"
#include "sweep/op_shapes.h"
#include "sweep/program_builder.h"
#include "sweep/program_generator.h"
#include "sweep/shrinker.h"

namespace lathe::sweep {
namespace {

constexpr uint64_t kSeeds = 400;

TEST(ProgramGenerator, SameSeedSameProgram) {
  for (uint64_t seed : {0ull, 1ull, 17ull, 123456789ull}) {
    const ProgramSpec a = generate_program(seed), b = generate_program(seed);
    EXPECT_EQ(to_string(a), to_string(b));
    auto pa = build_program(a), pb = build_program(b);
    ASSERT_TRUE(pa.ok() && pb.ok());
    for (size_t m = 0; m < pa->methods.size(); ++m) {
      const ExportedProgram& x = *pa->methods[m].program;
      const ExportedProgram& y = *pb->methods[m].program;
      ASSERT_EQ(x.parameters.size(), y.parameters.size());
      for (size_t i = 0; i < x.parameters.entries().size(); ++i) {
        const Tensor& tx = x.parameters.entries()[i].second;
        const Tensor& ty = y.parameters.entries()[i].second;
        ASSERT_EQ(tx.nbytes(), ty.nbytes());
        EXPECT_EQ(0, std::memcmp(tx.data(), ty.data(), tx.nbytes()));
      }
    }
  }
}

TEST(ProgramGenerator, DifferentSeedsDifferentPrograms) {
  std::set<std::string> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) seen.insert(to_string(generate_program(seed)).substr(8));
  EXPECT_GT(seen.size(), 45u);
}

TEST(ProgramGenerator, EveryProgramBuildsAndVerifies) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const ProgramSpec spec = generate_program(seed);
    auto p = build_program(spec);
    ASSERT_TRUE(p.ok()) << "seed " << seed << ": " << p.error().message() << "\n" << to_string(spec);
    Status v = verify(*p);
    ASSERT_TRUE(v.ok()) << "seed " << seed << ": " << v.error().message() << "\n" << to_string(spec);
  }
}

// Over kSeeds seeds every op kind, every weight kind and every structural
// feature shows up often enough to matter.
TEST(ProgramGenerator, CoversEveryOpAndWeightKind) {
  std::map<OpKind, int> ops;
  std::map<WeightKind, int> weights;
  std::map<std::string, int> features;
  std::map<std::pair<OpKind, WeightKind>, int> matmul_weights;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    const ProgramSpec spec = generate_program(seed);
    if (spec.methods.size() > 1) ++features["two methods"];
    for (const MethodSpec& m : spec.methods) {
      if (m.outputs.size() > 1) ++features["several outputs"];
      std::set<int> used;
      for (const OpSpec& op : m.ops) used.insert(op.args.begin(), op.args.end());
      for (size_t i = 0; i < m.ops.size(); ++i) {
        const OpSpec& op = m.ops[i];
        ++ops[op.kind];
        for (WeightKind w : op.weights) {
          ++weights[w];
          if (op.kind == OpKind::Addmm || op.kind == OpKind::Mm || op.kind == OpKind::Linear) ++matmul_weights[{op.kind, w}];
        }
        const int v = static_cast<int>(m.inputs.size() + i);
        if (!used.count(v) && std::find(m.outputs.begin(), m.outputs.end(), v) == m.outputs.end()) ++features["dead op"];
        if (op.kind == OpKind::Conv2d && op.p[5] == 1) ++features["depthwise conv"];
        if (op.kind == OpKind::Conv2d && op.p[5] == 2) ++features["grouped conv"];
        if (op.kind == OpKind::Binary && op.p[1] == 1 && op.p[2] != 0) ++features["broadcast weight"];
        if (op.kind == OpKind::Binary && op.p[1] == 0) ++features["binary of two activations"];
      }
    }
  }
  for (int k = 0; k < kOpKinds; ++k) EXPECT_GE(ops[static_cast<OpKind>(k)], 15) << op_kind_name(static_cast<OpKind>(k));
  for (int k = 0; k < kWeightKinds; ++k) {
    EXPECT_GE(weights[static_cast<WeightKind>(k)], 40) << weight_kind_name(static_cast<WeightKind>(k));
  }
  // The case that makes addmm -> linear unsound: a run-time weight behind a transpose.
  EXPECT_GE((matmul_weights[{OpKind::Addmm, WeightKind::RuntimeComputed}]), 5);
  EXPECT_GE((matmul_weights[{OpKind::Addmm, WeightKind::MutableBuffer}]), 5);
  EXPECT_GE((matmul_weights[{OpKind::Mm, WeightKind::UserInput}]), 3);
  for (const char* f : {"two methods", "several outputs", "dead op", "depthwise conv", "grouped conv", "broadcast weight",
                        "binary of two activations"}) {
    EXPECT_GE(features[f], 15) << f;
  }
}

TEST(ProgramBuilder, RejectsSizesThatNoLongerFit) {
  ProgramSpec spec;
  MethodSpec m;
  m.inputs = {{1, 2, 4, 4}};
  m.ops.push_back(OpSpec{OpKind::Conv2d, {0}, {1, 3, 1, 0, 1, 0, 0}, {WeightKind::Parameter}, 0});
  m.outputs = {1};
  spec.methods.push_back(m);
  ASSERT_TRUE(build_program(spec).ok());
  spec.methods[0].inputs[0] = {1, 2, 2, 2};  // a 3x3 kernel no longer fits
  auto p = build_program(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("conv2d: the kernel does not fit"), std::string::npos) << p.error().message();
}

TEST(ProgramBuilder, EveryWeightKindHasItsSignature) {
  ProgramSpec spec;
  MethodSpec m;
  m.inputs = {{2, 3}};
  for (int k = 0; k < kWeightKinds; ++k) {
    m.ops.push_back(OpSpec{OpKind::Linear, {k}, {3, 0}, {static_cast<WeightKind>(k)}, 0});  // reads the previous value
  }
  m.outputs = {m.value_count() - 1};
  spec.methods.push_back(m);
  auto p = build_program(spec);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_TRUE(verify(*p).ok());
  std::map<InputKind, int> inputs;
  const ExportedProgram& ep = *p->methods[0].program;
  for (const InputSpec& s : ep.input_specs) ++inputs[s.kind];
  EXPECT_EQ(inputs[InputKind::Parameter], 3);       // parameter; the folded and the run-time weight's parameter
  EXPECT_EQ(inputs[InputKind::Buffer], 2);          // constant buffer, mutable buffer
  EXPECT_EQ(inputs[InputKind::TensorConstant], 2);  // lifted constant, the folded one's constant
  EXPECT_EQ(inputs[InputKind::UserInput], 3);       // x, the user-input weight, the runtime weight's scale
  ASSERT_EQ(ep.output_specs.size(), 2u);
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::BufferMutation);
}

TEST(Shrinker, ReducesToTheOpThatFails) {
  // "Fails" while the program has a grouped or depthwise convolution.
  auto has_grouped_conv = [](const ProgramSpec& s) {
    if (!build_program(s).ok()) return false;
    for (const MethodSpec& m : s.methods) {
      for (const OpSpec& op : m.ops) {
        if (op.kind == OpKind::Conv2d && op.p[5] != 0) return true;
      }
    }
    return false;
  };
  int shrunk = 0;
  for (uint64_t seed = 0; seed < 200 && shrunk < 3; ++seed) {
    ProgramSpec spec = generate_program(seed);
    if (!has_grouped_conv(spec) || op_count(spec) < 4) continue;
    ShrinkResult r = shrink(spec, has_grouped_conv);
    ASSERT_TRUE(has_grouped_conv(r.spec));
    EXPECT_EQ(r.spec.methods.size(), 1u);
    EXPECT_EQ(op_count(r.spec), 1u) << to_string(r.spec);
    for (int64_t d : r.spec.methods[0].inputs[0]) EXPECT_LE(d, 2) << to_string(r.spec);
    ++shrunk;
  }
  EXPECT_EQ(shrunk, 3);
}

}  // namespace
}  // namespace lathe::sweep
