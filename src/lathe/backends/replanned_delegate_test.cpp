// Delegates of programs with symbolic sizes (replanned_delegate.h): the
// batch of fixtures/mlp.pt2 is a Dim in [1, 64] (its reference calls use
// batches 2, 1 and 37); PyTorch's outputs are the oracle. The fixture sweeps
// (xnnpack_backend_test.cpp, vulkan_backend_test.cpp) run every dynamic
// fixture lowered, written and read back; these tests pin the mechanism.
#include "lathe/backends/replanned_delegate.h"

#include <gtest/gtest.h>

#include <set>

#include "lathe/backends/backend_test_support.h"
#include "lathe/backends/xnnpack_backend.h"

namespace lathe {
namespace {

constexpr double kRtol = 1e-4;

// XNNPACK under another name, counting what it is asked to plan.
class CountingXnnpack final : public Backend {
 public:
  std::string_view name() const override { return "counting_xnnpack"; }
  NodeSupport support(const Node& n, const Constness& c) const override { return xnnpack_backend().support(n, c); }
  std::vector<std::string> ops_to_keep() const override { return xnnpack_backend().ops_to_keep(); }
  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& sub) const override {
    ++plans;
    return xnnpack_backend().preprocess(sub);
  }
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const override { return xnnpack_backend().init(args); }
  mutable int plans = 0;
};

Program read_mlp() {
  auto program = read_pt2(testing::source_path("fixtures/mlp.pt2"));
  EXPECT_TRUE(program.ok()) << program.error().message();
  return std::move(program).value();
}

const Node* only_delegate(const ExportedProgram& ep) {
  const Node* found = nullptr;
  for (const Node* n : ep.graph().nodes()) {
    if (!delegate_backend_name(n->target()).empty()) {
      EXPECT_EQ(found, nullptr) << "a second delegate: " << n->name();
      found = n;
    }
  }
  return found;
}

std::span<const std::byte> payload_of(const ExportedProgram& ep, const Node& delegate) {
  const Value* pv = delegate.input("payload")->tensor();
  const Tensor* t = ep.state_tensor(ep.input_specs[ep.input_index(pv)]);
  return {t->data(), t->nbytes()};
}

TEST(ReplannedDelegate, DynamicBatchIsOneDelegateMatchingPyTorchAtEverySize) {
  Program program = read_mlp();
  auto lowered = lower_program(program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  const ExportedProgram& ep = *program.methods[0].program;
  const Node* d = only_delegate(ep);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(ep.graph().node_count(), 1u);  // all 3 linears and 2 relus
  EXPECT_TRUE(is_replanned_payload(payload_of(ep, *d)));
  // The delegate's output keeps the program's symbolic batch.
  EXPECT_FALSE(d->output()->meta()->concrete_sizes());

  auto calls = load_reference_calls(testing::source_path("fixtures/mlp.ref/model"));
  ASSERT_TRUE(calls.ok()) << calls.error().message();
  std::set<int64_t> batches;
  for (const ReferenceCall& c : *calls) batches.insert(c.inputs[0].sizes[0]);
  ASSERT_EQ(batches, (std::set<int64_t>{1, 2, 37}));
  auto ex = Executor::create(ep, testing::with_delegates());
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  testing::expect_calls_match(**ex, *calls, kRtol, "mlp, batch 2, 1, 37");
  testing::expect_calls_match(**ex, *calls, kRtol, "mlp again, from the kept plans");
}

TEST(ReplannedDelegate, PlansOncePerSizeAndKeepsTheLastFour) {
  Program program = read_mlp();
  CountingXnnpack backend;
  ASSERT_TRUE(lower_program(program, backend).ok());
  const int at_lowering = backend.plans;  // the check at the export's sizes
  EXPECT_EQ(at_lowering, 1);
  ReplanningRuntime runtime(backend);
  DelegateRegistry registry;
  registry.add(&runtime);
  ExecutorOptions options;
  options.delegates = &registry;
  auto ex = Executor::create(*program.methods[0].program, options);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto run = [&](int64_t batch) {
    Tensor x = Tensor::empty(DType::Float32, {batch, 64});
    float* p = reinterpret_cast<float*>(x.storage->mutable_data());
    for (int64_t i = 0; i < batch * 64; ++i) p[i] = static_cast<float>(i % 7) * 0.25f;
    auto out = (*ex)->run(std::vector<Tensor>{x});
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ((*out)[0].sizes, (std::vector<int64_t>{batch, 10}));
  };
  for (int64_t b : {2, 3, 2, 3}) run(b);
  EXPECT_EQ(backend.plans - at_lowering, 2);
  for (int64_t b : {4, 5, 6}) run(b);
  EXPECT_EQ(backend.plans - at_lowering, 5);
  run(3);  // kept: 6, 5, 4, 3
  EXPECT_EQ(backend.plans - at_lowering, 5);
  run(2);  // dropped when 6 came
  EXPECT_EQ(backend.plans - at_lowering, 6);
}

// x [s0, 64] -> repeat [2] -> [2*s0, 64] -> linear: the linear's group reads
// only a [2*s0, 64] tensor, so a run could not tell s0 from its inputs
// (2*s0 = 6 is s0 = 3, but that is solving, not binding): it stays portable.
TEST(ReplannedDelegate, AGroupWhoseSymbolNoInputNamesStaysPortable_NEG) {
  Program program;
  ExportedProgram& ep = testing::one_method_with_s0(program, 2, 64);
  GraphBuilder b(ep);
  const SymDim s0(SymExpr{"s0", int64_t{3}});
  const SymDim twice(SymExpr{"2*s0", int64_t{6}});
  Value* w = b.parameter("fc.weight", {10, 64});
  Value* x = b.user_input("x", GraphBuilder::tensor_meta(DType::Float32, {s0, 64}));
  Value* r = b.call("aten.repeat.default", {{"self", x}, {"repeats", IntList{{2, 1}}}},
                    GraphBuilder::tensor_meta(DType::Float32, {twice, 64}));
  b.user_output(b.call("aten.linear.default", {{"input", r}, {"weight", w}}, GraphBuilder::tensor_meta(DType::Float32, {twice, 10})));
  auto lowered = lower_program(program, xnnpack_backend());
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  EXPECT_EQ(lowered->methods[0].report.delegates, 0);
  bool named = false;
  for (const NodeDecision& dec : lowered->methods[0].report.decisions) {
    if (dec.op != "aten.linear.default") continue;
    EXPECT_FALSE(dec.claimed);
    named = dec.reason.find("use s0, which no tensor the group reads has as a whole size") != std::string::npos;
    EXPECT_TRUE(named) << dec.reason;
  }
  EXPECT_TRUE(named);
}

TEST(ReplannedDelegate, ADamagedRecordIsRefusedAtLoadNamingWhatIsWrong_NEG) {
  Program program = read_mlp();
  ASSERT_TRUE(lower_program(program, xnnpack_backend()).ok());
  ExportedProgram& ep = *program.methods[0].program;
  const Node* d = only_delegate(ep);
  ASSERT_NE(d, nullptr);
  const std::span<const std::byte> bytes = payload_of(ep, *d);
  auto record = decode_replanned_payload(bytes);
  ASSERT_TRUE(record.ok()) << record.error().message();

  auto load_with = [&](const ReplannedPayload& r) {
    const std::vector<std::byte> changed = encode_replanned_payload(r);
    DelegateInitArgs args{ep, *d, changed, {}};
    for (const Value* v : d->input("inputs")->as<TensorList>().items) args.operands.push_back(DelegateOperand{v, nullptr});
    return ReplanningRuntime(xnnpack_backend()).init(args);
  };
  ReplannedPayload cut = *record;
  cut.program_json.resize(cut.program_json.size() / 2);
  auto truncated = load_with(cut);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message().find("the re-planned record's program"), std::string::npos) << truncated.error().message();

  ReplannedPayload renamed = *record;
  renamed.inputs.back() = "no_such_input";
  auto unknown = load_with(renamed);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message().find("input 'no_such_input' is not a tensor input of its program"), std::string::npos)
      << unknown.error().message();

  ReplannedPayload other = *record;
  other.backend = "vulkan";
  auto wrong = load_with(other);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message().find("is for backend 'vulkan', not 'xnnpack'"), std::string::npos) << wrong.error().message();

  std::vector<std::byte> short_record(bytes.begin(), bytes.begin() + 20);
  auto decoded = decode_replanned_payload(short_record);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.error().message().find("truncated"), std::string::npos) << decoded.error().message();
}

}  // namespace
}  // namespace lathe
