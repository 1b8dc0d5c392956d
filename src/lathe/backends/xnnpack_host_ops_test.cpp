// The ops the XNNPACK delegate runs with Lathe's kernels (host ops), the
// 1-D convolution and constant padding: claimed inside one group and equal
// to the portable run; malformed host-op records refused at init (_NEG);
// --explain says "fused" only when the producer is claimed (_NEG).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "lathe/backends/backend_test_support.h"
#include "lathe/backends/lower.h"
#include "lathe/backends/partitioner.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/backends/xnnpack_host_ops.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"

namespace lathe {
namespace {

Tensor ramp(std::vector<int64_t> sizes, float step) {
  Tensor t = Tensor::empty(DType::Float32, std::move(sizes));
  auto* p = reinterpret_cast<float*>(t.storage->mutable_data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::sin(static_cast<float>(i) * step) * 2.0f;
  return t;
}

// Builds the same program twice (one is lowered), runs both on `inputs`.
template <class Build>
void expect_lowered_matches_portable(Build build, const std::vector<Tensor>& inputs, int want_delegates, int want_claimed) {
  ExportedProgram lowered, plain;
  build(lowered);
  build(plain);
  auto rep = partition(lowered, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  std::string why;
  for (const auto& d : rep->decisions) why += d.node + ": " + (d.claimed ? "claimed " : "not claimed ") + d.reason + "\n";
  EXPECT_EQ(rep->delegates, want_delegates) << why;
  EXPECT_EQ(rep->claimed_nodes, want_claimed) << why;
  ASSERT_TRUE(verify(lowered, "model").ok());
  testing::expect_same_outputs(lowered, plain, inputs, Tolerance{1e-4, 1e-5});
}

// The conv1d TTS block: conv1d -> relu -> transpose -> layer_norm ->
// transpose -> gelu, all in one delegate.
TEST(XnnpackHostOps, Conv1dLayerNormGeluStayInOneDelegate) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* w = b.parameter("conv.weight", {6, 4, 3});
    Value* bias = b.parameter("conv.bias", {6});
    Value* g = b.parameter("ln.weight", {6});
    Value* beta = b.parameter("ln.bias", {6});
    Value* x = b.user_input("x", {2, 4, 9});
    Value* c = b.call("aten.convolution.default",
                      {{"input", x}, {"weight", w}, {"bias", bias}, {"stride", IntList{{1}}}, {"padding", IntList{{1}}},
                       {"dilation", IntList{{1}}}, {"transposed", false}, {"output_padding", IntList{{0}}}, {"groups", int64_t{1}}},
                      {2, 6, 9});
    Value* r = b.call("aten.relu.default", {{"self", c}}, {2, 6, 9});
    Value* t = b.call("aten.permute.default", {{"self", r}, {"dims", IntList{{0, 2, 1}}}}, {2, 9, 6});
    Value* ln = b.call("aten.layer_norm.default",
                       {{"input", t}, {"normalized_shape", IntList{{6}}}, {"weight", g}, {"bias", beta}, {"eps", 1e-5}}, {2, 9, 6});
    Value* back = b.call("aten.permute.default", {{"self", ln}, {"dims", IntList{{0, -1, 1}}}}, {2, 6, 9});
    b.user_output(b.call("aten.gelu.default", {{"self", back}}, {2, 6, 9}));
  };
  expect_lowered_matches_portable(build, {ramp({2, 4, 9}, 0.37f)}, 1, 6);
}

// The Swin window shift: pad -> roll -> view -> bmm -> sdpa.
TEST(XnnpackHostOps, PadRollReshapeBmmAttentionMatchPortable) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* x = b.user_input("x", {1, 2, 3, 4});
    Value* y = b.user_input("y", {2, 5, 3});
    Value* ln_w = b.parameter("ln.weight", {4});
    Value* ln = b.call("aten.layer_norm.default", {{"input", x}, {"normalized_shape", IntList{{4}}}, {"weight", ln_w}}, {1, 2, 3, 4});
    Value* p = b.call("aten.constant_pad_nd.default", {{"self", ln}, {"pad", IntList{{1, 0, 0, 2}}}}, {1, 2, 5, 5});
    Value* r = b.call("aten.roll.default", {{"self", p}, {"shifts", IntList{{-1, 2}}}, {"dims", IntList{{2, 3}}}}, {1, 2, 5, 5});
    Value* v = b.call("aten.view.default", {{"self", r}, {"size", IntList{{2, 5, 5}}}}, {2, 5, 5});
    Value* m = b.call("aten.bmm.default", {{"self", v}, {"mat2", y}}, {2, 5, 3});
    Value* q = b.call("aten.view.default", {{"self", m}, {"size", IntList{{1, 2, 5, 3}}}}, {1, 2, 5, 3});
    b.user_output(b.call("aten.scaled_dot_product_attention.default",
                         {{"query", q}, {"key", q}, {"value", q}, {"is_causal", true}}, {1, 2, 5, 3}));
  };
  expect_lowered_matches_portable(build, {ramp({1, 2, 3, 4}, 0.21f), ramp({2, 5, 3}, 0.53f)}, 1, 7);
}

// Grouped-query attention (what sdpa_grouped_query makes of repeat_kv):
// 4 query heads over 2 key/value heads, read in place inside the delegate;
// the record carries enable_gqa to the host kernel.
TEST(XnnpackHostOps, GroupedQueryAttentionRunsInsideTheDelegate) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* x = b.user_input("x", {1, 4, 2, 8});
    Value* k = b.user_input("k", {1, 2, 5, 8});
    Value* v = b.user_input("v", {1, 2, 5, 8});
    Value* q = b.call("aten.relu.default", {{"self", x}}, {1, 4, 2, 8});
    Value* a = b.call("aten.scaled_dot_product_attention.default",
                      {{"query", q}, {"key", k}, {"value", v}, {"enable_gqa", true}}, {1, 4, 2, 8});
    b.user_output(b.call("aten.relu.default", {{"self", a}}, {1, 4, 2, 8}));
  };
  expect_lowered_matches_portable(build, {ramp({1, 4, 2, 8}, 0.13f), ramp({1, 2, 5, 8}, 0.37f), ramp({1, 2, 5, 8}, 0.71f)},
                                  1, 3);
}

// A padded 2-D convolution input in channels-last: a non-zero pad runs as
// XNNPACK's constant_pad with the amounts moved into NHWC order; a zero pad
// folds into the convolution's own asymmetric padding.
void padded_convolutions(ExportedProgram& ep, double value) {
  GraphBuilder b(ep);
  Value* w1 = b.parameter("c1.weight", {3, 2, 1, 1});
  Value* w2 = b.parameter("c2.weight", {2, 3, 3, 3});
  Value* x = b.user_input("x", {1, 2, 4, 5});
  auto conv = [&](Value* in, Value* w, std::vector<int64_t> out) {
    return b.call("aten.convolution.default",
                  {{"input", in}, {"weight", w}, {"bias", OptionalTensor{}}, {"stride", IntList{{1, 1}}}, {"padding", IntList{{0, 0}}},
                   {"dilation", IntList{{1, 1}}}, {"transposed", false}, {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                  out);
  };
  Value* c1 = conv(x, w1, {1, 3, 4, 5});
  Value* p = b.call("aten.constant_pad_nd.default", {{"self", c1}, {"pad", IntList{{2, 1, 0, 3}}}, {"value", value}}, {1, 3, 7, 8});
  b.user_output(conv(p, w2, {1, 2, 5, 6}));
}

TEST(XnnpackHostOps, ConstantPadBetweenConvolutionsInChannelsLast) {
  expect_lowered_matches_portable([](ExportedProgram& ep) { padded_convolutions(ep, 0.5); }, {ramp({1, 2, 4, 5}, 0.3f)}, 1, 3);
}

TEST(XnnpackHostOps, ZeroPadFoldsIntoTheConvolution) {
  expect_lowered_matches_portable([](ExportedProgram& ep) { padded_convolutions(ep, 0.0); }, {ramp({1, 2, 4, 5}, 0.3f)}, 1, 3);
}

// The CNN spellings torch.export writes for densenet/googlenet/efficientnet/
// resnet: a channel slice and a channel concat in channels-last, a batch
// norm no convolution absorbs, relu_, silu, max_pool2d and a 1x1 adaptive
// pool, all in one delegate.
TEST(XnnpackHostOps, ChannelsLastSliceConcatBatchNormSiluPoolsInOneDelegate) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* w1 = b.parameter("c1.weight", {4, 2, 3, 3});
    Value* w2 = b.parameter("c2.weight", {2, 2, 1, 1});
    Value* g = b.parameter("bn.weight", {8});
    Value* beta = b.parameter("bn.bias", {8});
    Value* mean = b.buffer("bn.running_mean", {8});
    Value* var = b.parameter("bn.running_var_source", {8});
    Value* x = b.user_input("x", {1, 2, 6, 6});
    auto conv = [&](Value* w, int64_t pad, std::vector<int64_t> out) {
      return b.call("aten.convolution.default",
                    {{"input", x}, {"weight", w}, {"bias", OptionalTensor{}}, {"stride", IntList{{1, 1}}}, {"padding", IntList{{pad, pad}}},
                     {"dilation", IntList{{1, 1}}}, {"transposed", false}, {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                    out);
    };
    Value* c1 = conv(w1, 1, {1, 4, 6, 6});
    Value* sl = b.call("aten.slice.Tensor", {{"self", c1}, {"dim", int64_t{1}}, {"start", int64_t{1}}, {"end", int64_t{3}}}, {1, 2, 6, 6});
    Value* c2 = conv(w2, 0, {1, 2, 6, 6});
    Value* cat = b.call("aten.cat.default", {{"tensors", TensorList{{sl, c2, c1}}}, {"dim", int64_t{1}}}, {1, 8, 6, 6});
    // A variance that is positive whatever the builder's deterministic fill.
    Value* v = b.call("aten.exp.default", {{"self", var}}, {8}, DType::Float32, "positive_var");
    Value* bn = b.call("aten.batch_norm.default",
                       {{"input", cat}, {"weight", g}, {"bias", beta}, {"running_mean", mean}, {"running_var", v},
                        {"training", false}, {"momentum", 0.1}, {"eps", 1e-5}, {"cudnn_enabled", false}},
                       {1, 8, 6, 6});
    Value* r = b.call("aten.relu_.default", {{"self", bn}}, {1, 8, 6, 6});
    Value* si = b.call("aten.silu.default", {{"self", r}}, {1, 8, 6, 6});
    Value* mp = b.call("aten.max_pool2d.default", {{"self", si}, {"kernel_size", IntList{{2, 2}}}, {"stride", IntList{{2, 2}}}}, {1, 8, 3, 3});
    b.user_output(b.call("aten.adaptive_avg_pool2d.default", {{"self", mp}, {"output_size", IntList{{1, 1}}}}, {1, 8, 1, 1}));
  };
  // 9 claimed; the exp of the variance stays portable (XNNPACK has no exp).
  expect_lowered_matches_portable(build, {ramp({1, 2, 6, 6}, 0.45f)}, 1, 9);
}

// A ResNet block's `out += residual; relu(out)`: torch.export writes the
// in-place add_, which runs inside the delegate as its functional form (no
// block boundary, no layout change back to NCHW around it). ResNet-50 had a
// delegate per block before: 17 delegates, 16 add_ on the portable kernels.
Value* conv1x1(GraphBuilder& b, Value* x, Value* w, const std::string& name) {
  return b.call("aten.convolution.default",
                {{"input", x}, {"weight", w}, {"bias", OptionalTensor{}}, {"stride", IntList{{1, 1}}}, {"padding", IntList{{0, 0}}},
                 {"dilation", IntList{{1, 1}}}, {"transposed", false}, {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                {1, 2, 4, 4}, DType::Float32, name);
}

TEST(XnnpackHostOps, ResidualInPlaceAddStaysInTheDelegate) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* w1 = b.parameter("c1.weight", {2, 2, 1, 1});
    Value* w2 = b.parameter("c2.weight", {2, 2, 1, 1});
    Value* x = b.user_input("x", {1, 2, 4, 4});
    Value* residual = b.call("aten.relu.default", {{"self", x}}, {1, 2, 4, 4}, DType::Float32, "stem");
    Value* c1 = conv1x1(b, residual, w1, "c1");
    Value* sum = b.call("aten.add_.Tensor", {{"self", c1}, {"other", residual}}, {1, 2, 4, 4}, DType::Float32, "add_");
    Value* act = b.call("aten.relu.default", {{"self", sum}}, {1, 2, 4, 4}, DType::Float32, "act");
    b.user_output(conv1x1(b, act, w2, "c2"));
  };
  expect_lowered_matches_portable(build, {ramp({1, 2, 4, 4}, 0.31f)}, 1, 5);
}

// _NEG: an add_ whose overwritten input something else reads (it would see
// the sum), or that overwrites a user input (the caller would), stays on the
// portable kernels, which write in place as PyTorch does.
TEST(XnnpackHostOps, InPlaceAddIntoASharedOrUserInputIsNotClaimed_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* w = b.parameter("c.weight", {2, 2, 1, 1});
  Value* x = b.user_input("x", {1, 2, 4, 4});
  Value* y = b.user_input("y", {1, 2, 4, 4});
  Value* z = b.user_input("z", {1, 2, 4, 4});
  Value* c = conv1x1(b, x, w, "c");
  Value* shared = b.call("aten.add_.Tensor", {{"self", c}, {"other", y}}, {1, 2, 4, 4}, DType::Float32, "shared");
  Value* also = b.call("aten.mul.Tensor", {{"self", c}, {"other", shared}}, {1, 2, 4, 4}, DType::Float32, "also");
  Value* into_input = b.call("aten.add_.Tensor", {{"self", z}, {"other", also}}, {1, 2, 4, 4}, DType::Float32, "into_input");
  b.user_output(into_input);
  auto rep = partition(ep, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  std::map<std::string, std::string> why;
  for (const auto& d : rep->decisions) why[d.node] = d.claimed ? "claimed" : d.reason;
  EXPECT_EQ(why["shared"], "writes into an input other nodes also read");
  EXPECT_EQ(why["into_input"], "writes into 'z', an input of the program");
}

// A transformers attention with its bool mask (one key padded out, one
// query row with no allowed key at all): lower() makes the mask additive
// (sdpa_additive_mask), the attention and the projections around it are
// one delegate, and the numbers are the portable kernels' on the bool mask.
TEST(XnnpackHostOps, AttentionWithABoolMaskIsClaimedAfterTheMaskIsMadeAdditive) {
  auto build = [](ExportedProgram& ep) {
    GraphBuilder b(ep);
    Value* w = b.parameter("proj.weight", {8, 8});
    Value* x = b.user_input("x", {1, 2, 4, 8});
    Value* keep = b.user_input("keep", {1, 1, 4, 4});
    Value* mask = b.call("aten.gt.Scalar", {{"self", keep}, {"other", 0.0}}, {1, 1, 4, 4}, DType::Bool, "mask");
    Value* q = b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {1, 2, 4, 8}, DType::Float32, "q");
    Value* a = b.call("aten.scaled_dot_product_attention.default", {{"query", q}, {"key", q}, {"value", q}, {"attn_mask", mask}},
                      {1, 2, 4, 8}, DType::Float32, "attn");
    b.user_output(b.call("aten.linear.default", {{"input", a}, {"weight", w}}, {1, 2, 4, 8}, DType::Float32, "out"));
  };
  Program lowered;
  lowered.methods.emplace_back();
  lowered.methods[0].name = "model";
  lowered.methods[0].program = std::make_unique<ExportedProgram>();
  build(*lowered.methods[0].program);
  ExportedProgram plain_ep;
  build(plain_ep);
  auto rep = lower_program(lowered, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  ASSERT_EQ(rep->methods.size(), 1u);
  EXPECT_EQ(rep->methods[0].report.delegates, 1);
  EXPECT_EQ(rep->methods[0].report.claimed_nodes, 3) << explain_lowering(rep->methods[0]);
  Tensor keep = Tensor::empty(DType::Float32, {1, 1, 4, 4});
  auto* k = reinterpret_cast<float*>(keep.storage->mutable_data());
  for (int i = 0; i < 16; ++i) k[i] = (i % 4 == 3 || i / 4 == 2) ? -1.0f : 1.0f;  // key 3 padded; query row 2 sees nothing
  testing::expect_same_outputs(*lowered.methods[0].program, plain_ep, {ramp({1, 2, 4, 8}, 0.29f), keep}, Tolerance{1e-5, 1e-6});
}

// _NEG: --explain must not say a relu fused into a convolution XNNPACK
// does not claim (its weight is computed at run time).
TEST(XnnpackHostOps, ReluAfterUnclaimedConvIsNotDescribedAsFused_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {1, 2, 4, 4});
  Value* m = b.user_input("m", {2, 2, 1, 1});
  Value* w = b.call("aten.relu.default", {{"self", m}}, {2, 2, 1, 1}, DType::Float32, "runtime_w");
  Value* c = b.call("aten.convolution.default",
                    {{"input", x}, {"weight", w}, {"bias", OptionalTensor{}}, {"stride", IntList{{1, 1}}}, {"padding", IntList{{0, 0}}},
                     {"dilation", IntList{{1, 1}}}, {"transposed", false}, {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                    {1, 2, 4, 4}, DType::Float32, "conv");
  b.user_output(b.call("aten.relu.default", {{"self", c}}, {1, 2, 4, 4}, DType::Float32, "act"));
  auto rep = partition(ep, xnnpack_backend());
  ASSERT_TRUE(rep.ok()) << rep.error().message();
  for (const auto& d : rep->decisions) {
    if (d.node == "conv") {
      EXPECT_FALSE(d.claimed);
    }
    if (d.node == "act") {
      EXPECT_TRUE(d.claimed);
      EXPECT_EQ(d.reason.find("fused"), std::string::npos) << d.reason;
    }
  }
}

// _NEG: host-op records that would read or write out of bounds.
TEST(XnnpackHostOps, MalformedRecordsAreRefusedAtInit_NEG) {
  std::vector<PayloadValue> values{{0, {2, 3}}, {-1, {3, 2}}, {1, {2, 4, 5}}, {-1, {2, 3, 6}}};
  auto check = [&](const char* kind, std::vector<PayloadOperand> ins, uint32_t out, std::vector<int64_t> ints,
                   std::vector<double> floats = {}) {
    PayloadOp op{kind, "n", std::move(ins), {out}, std::move(ints), std::move(floats)};
    return check_host_op(*host_op_of(*xnnpack_kind_named(kind)), op, values);
  };
  EXPECT_TRUE(check("permute", {{0, "self"}}, 1, {1, 0}).ok());
  EXPECT_FALSE(check("permute", {{0, "self"}}, 1, {1, 1}).ok());           // repeated dim
  EXPECT_FALSE(check("permute", {{0, "self"}}, 1, {0, 1}).ok());           // output shape disagrees
  EXPECT_FALSE(check("permute", {{0, "self"}}, 1, {1, 7}).ok());           // dim out of range
  EXPECT_FALSE(check("roll", {{0, "self"}}, 0, {1, 3, 5}).ok());           // dim out of range
  EXPECT_FALSE(check("roll", {{0, "self"}}, 0, {2, 1}).ok());              // counts disagree
  EXPECT_FALSE(check("bmm", {{2, "self"}, {2, "mat2"}}, 3, {}).ok());      // inner sizes differ
  EXPECT_FALSE(check("bmm", {{2, "self"}}, 3, {}).ok());                   // one operand
  EXPECT_FALSE(check("layer_norm", {{0, "self"}}, 0, {3}, {1e-5}).ok());   // normalized rank > rank
  EXPECT_FALSE(check("reshape", {{0, "self"}}, 2, {}).ok());               // element counts differ
  EXPECT_FALSE(host_op_of(*xnnpack_kind_named("conv2d")).has_value());
  EXPECT_FALSE(xnnpack_kind_named("convolution").has_value());
}

}  // namespace
}  // namespace lathe
