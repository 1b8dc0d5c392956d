// The torchao-quantized fixtures (fixtures/quantized: the transformer
// encoder and decoder LM quantized by torchao 0.18, exported by PyTorch
// 2.13) through the quantization fusions: every quantized linear is
// recognized and fused (no candidate kept), nothing of the quantized
// pattern is left, the program verifies, and the fused program matches
// PyTorch's own outputs and the unfused program's.
//
// It lives with the CLI because this is the first layer that links both the
// passes and the runtime. The unfused programs are checked against PyTorch
// in src/lathe/runtime/fixtures_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "lathe/ir/verify.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/pass_registry.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/harness/reference.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

// What a program goes through before it runs: addmm_mm_to_linear for the
// decomposed decoder's int4 linears (addmm of a transposed dequantize),
// then the three fusions, then the dead transposes.
constexpr const char* kPasses =
    "addmm_mm_to_linear,fuse_weight_only_quantized_linear,fuse_int8_weight_only_matmul,fuse_dynamic_int8_linear,"
    "remove_dead_code";

struct Scheme {
  const char* suffix;
  const char* fused_op;                  // the op each quantized linear becomes
  std::vector<const char*> gone;         // ops of the pattern that must be gone
  double rtol;                           // against PyTorch, relative to max |ref|
  // Against the unfused program: 0 where the fused op repeats the unfused
  // ops' arithmetic exactly (dyn8), else summation order only.
  double rtol_unfused;
};

const Scheme kSchemes[] = {
    {"_int8wo", "aten._weight_int8pack_mm.default", {"aten.mm.default", "aten._to_copy.default"}, 1e-5, 1e-5},
    {"_int4g32", "lathe.weight_int4_group_mm.default", {"torchao.dequantize_affine.default"}, 1e-5, 1e-5},
    {"_int4g128", "lathe.weight_int4_group_mm.default", {"torchao.dequantize_affine.default"}, 1e-5, 1e-5},
    // Activations rounded to int8 at run time: see fixtures_test.cpp's fixture_rtol.
    {"_dyn8", "lathe.dynamic_int8_mm.default",
     {"torchao.choose_qparams_affine.default", "torchao.quantize_affine.default", "aten._int_mm.default"}, 1e-2, 0},
};

std::vector<std::string> quantized_fixtures() { return testing::archives_in("fixtures/quantized"); }

const Scheme& scheme_of(const std::string& stem) {
  for (const Scheme& s : kSchemes) {
    if (stem.ends_with(s.suffix)) return s;
  }
  ADD_FAILURE() << "no scheme for " << stem;
  return kSchemes[0];
}

std::map<std::string, int> ops(const ExportedProgram& ep) {
  std::map<std::string, int> out;
  for (const Node* n : ep.graph().nodes()) out[n->op_name()]++;
  return out;
}

// Runs kPasses over every method; returns the fusion passes' records.
std::vector<ExplainRecord> fuse(Program& program) {
  auto list = builtin_passes().create_list(kPasses);
  EXPECT_TRUE(list.ok()) << list.error().message();
  PassManager pm(PassManagerOptions{.verify_each = true});
  for (auto& p : *list) pm.add(std::move(p));
  PassContext ctx;
  Result<bool> r = pm.run(program, ctx);
  EXPECT_TRUE(r.ok()) << r.error().message();
  std::vector<ExplainRecord> out;
  for (const ExplainRecord& rec : ctx.records()) {
    if (rec.pass.starts_with("fuse_")) out.push_back(rec);
  }
  return out;
}

TEST(QuantizedFixtures, EveryQuantizedLinearIsFusedAndMatchesPyTorch) {
  const std::vector<std::string> paths = quantized_fixtures();
  ASSERT_EQ(paths.size(), 8u);  // {encoder, decoder} x {int8wo, int4g32, int4g128, dyn8}
  for (const std::string& path : paths) {
    const std::string stem = std::filesystem::path(path).stem().string();
    const Scheme& scheme = scheme_of(stem);
    auto unfused = read_pt2(path);
    auto fused = read_pt2(path);
    ASSERT_TRUE(unfused.ok() && fused.ok()) << path;
    for (const ExplainRecord& rec : fuse(*fused)) {
      EXPECT_TRUE(rec.rewritten) << stem << ": " << rec.message;
    }
    ASSERT_TRUE(verify(*fused).ok()) << stem;
    for (const Method& m : fused->methods) {
      SCOPED_TRACE(stem + "." + m.name);
      const auto counts = ops(*m.program);
      EXPECT_GE(counts.count(scheme.fused_op) ? counts.at(scheme.fused_op) : 0, 5);  // decoder 5, encoder 8 linears
      for (const char* op : scheme.gone) EXPECT_EQ(counts.count(op), 0u) << op;
      auto calls = load_reference_calls(reference_dir(path, m.name));
      ASSERT_TRUE(calls.ok()) << calls.error().message();
      auto ex_fused = Executor::create(*m.program);
      auto ex_unfused = Executor::create(*unfused->find_method(m.name)->program);
      ASSERT_TRUE(ex_fused.ok()) << ex_fused.error().message();
      ASSERT_TRUE(ex_unfused.ok()) << ex_unfused.error().message();
      for (size_t k = 0; k < calls->size(); ++k) {
        auto a = (*ex_fused)->run((*calls)[k].inputs);
        auto b = (*ex_unfused)->run((*calls)[k].inputs);
        ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? b.error().message() : a.error().message());
        const TensorDiff vs_pytorch = compare_tensors((*a)[0], (*calls)[k].outputs[0], Tolerance{scheme.rtol, 0});
        const TensorDiff vs_unfused = compare_tensors((*a)[0], (*b)[0], Tolerance{scheme.rtol_unfused, 0});
        std::printf("  %-28s %-7s call %zu: fused vs PyTorch %s; vs unfused %s\n", stem.c_str(), m.name.c_str(), k,
                    vs_pytorch.describe().c_str(), vs_unfused.describe().c_str());
        EXPECT_TRUE(vs_pytorch.ok) << "call " << k << ": " << vs_pytorch.describe();
        EXPECT_TRUE(vs_unfused.ok) << "call " << k << ": " << vs_unfused.describe();
      }
    }
  }
}

}  // namespace
}  // namespace lathe
