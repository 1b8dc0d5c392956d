// auto_functionalized_v2 runs when the executor's registry has a kernel for
// the wrapped custom op. The real fixture (fixtures/custom_op_mutation.pt2,
// lathe_fixtures::scaled_accumulate_(acc, x, scale): acc += x * scale on a
// buffer) runs against PyTorch's outputs with a kernel written here; the
// view forms (slice, as_strided) are checked on hand-built graphs.
#include <gtest/gtest.h>

#include "lathe/harness/reference.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernel_call.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

// acc += x * scale, written into acc (a view: honour its strides).
Status scaled_accumulate(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* acc, c.tensor("acc"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* x, c.tensor("x"));
  LATHE_ASSIGN_OR_RETURN(double scale, c.double_arg("scale"));
  if (acc->sizes != x->sizes || acc->dtype != DType::Float32 || acc->sizes.size() != 2) {
    return make_error("scaled_accumulate_: needs two float32 matrices of one shape");
  }
  const Tensor xc = kernels::as_contiguous(*x);
  const float* xs = kernels::cdata<float>(xc);
  Tensor a = *acc;
  float* base = kernels::mdata<float>(a);
  for (int64_t i = 0; i < acc->sizes[0]; ++i) {
    for (int64_t j = 0; j < acc->sizes[1]; ++j) {
      base[i * acc->strides[0] + j * acc->strides[1]] += xs[i * acc->sizes[1] + j] * static_cast<float>(scale);
    }
  }
  return Status::Ok();
}

KernelRegistry with_custom_op() {
  KernelRegistry r = portable_kernels();
  r.set("lathe_fixtures.scaled_accumulate_.default", {scaled_accumulate});
  return r;
}

TEST(AutoFunctionalized, CustomOpFixtureMatchesPyTorchWithAKernelForTheOp) {
  const std::string path = testing::source_path("fixtures/custom_op_mutation.pt2");
  auto program = read_pt2(path);
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto calls = load_reference_calls(reference_dir(path, "model"));
  ASSERT_TRUE(calls.ok()) << calls.error().message();
  const KernelRegistry kernels = with_custom_op();
  ExecutorOptions o;
  o.kernels = &kernels;
  auto ex = Executor::create(*program->methods[0].program, o);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  ASSERT_EQ(calls->size(), 2u);
  for (size_t k = 0; k < calls->size(); ++k) {
    auto out = (*ex)->run((*calls)[k].inputs);
    ASSERT_TRUE(out.ok()) << "call " << k << ": " << out.error().message();
    ASSERT_EQ(out->size(), (*calls)[k].outputs.size());
    for (size_t i = 0; i < out->size(); ++i) {
      TensorDiff d = compare_tensors((*out)[i], (*calls)[k].outputs[i], Tolerance{1e-5, 0.0});
      EXPECT_TRUE(d.ok) << "call " << k << " output " << i << ": " << d.describe();
    }
  }
  // The buffer was written back twice; the mapped file still holds zeros.
  EXPECT_EQ((*ex)->mutated_buffers(), (std::vector<std::string>{"acc"}));
  EXPECT_EQ(*kernels::cdata<float>(*program->methods[0].program->buffers.find("acc")), 0.0f);
}

// base: [3, 2] ones; the op mutates rows [1, 3) of it (a slice view, or the
// same view spelled as_strided); x = [[1, 2], [3, 4]], scale 10.
// New base = [[1, 1], [11, 21], [31, 41]]; the input base is untouched.
void build_view_call(ExportedProgram& ep, bool as_strided) {
  GraphBuilder b(ep);
  Value* base = b.user_input("base", {3, 2});
  Value* x = b.user_input("x", {2, 2});
  std::vector<GraphBuilder::Arg> args = {
      {"", Argument(OperatorArg{"torch.ops.lathe_fixtures.scaled_accumulate_.default"})},
      {"x", x, ArgKind::Keyword},
      {"scale", Argument(10.0), ArgKind::Keyword},
      {"_acc_base_index", Argument(int64_t{0}), ArgKind::Keyword}};
  if (as_strided) {
    args.push_back({"_acc_size", Argument(IntList{{2, 2}}), ArgKind::Keyword});
    args.push_back({"_acc_stride", Argument(IntList{{2, 1}}), ArgKind::Keyword});
    args.push_back({"_acc_storage_offset", Argument(int64_t{2}), ArgKind::Keyword});
  } else {
    args.push_back({"_acc_slice_dim", Argument(int64_t{0}), ArgKind::Keyword});
    args.push_back({"_acc_slice_start", Argument(int64_t{1}), ArgKind::Keyword});
    args.push_back({"_acc_slice_end", Argument(int64_t{3}), ArgKind::Keyword});
  }
  args.push_back({"_all_bases", Argument(TensorList{{base}}), ArgKind::Keyword});
  std::vector<Value*> out = b.call_multi("higher_order.auto_functionalized_v2", args, {GraphBuilder::tensor_meta({3, 2})});
  b.user_output(out[0]);
}

TEST(AutoFunctionalized, SliceAndStridedViewsOfABaseAreRebuiltOnItsClone) {
  for (bool as_strided : {false, true}) {
    SCOPED_TRACE(as_strided ? "as_strided" : "slice");
    ExportedProgram ep;
    build_view_call(ep, as_strided);
    const KernelRegistry kernels = with_custom_op();
    ExecutorOptions o;
    o.kernels = &kernels;
    auto ex = Executor::create(ep, o);
    ASSERT_TRUE(ex.ok()) << ex.error().message();
    Tensor base = Tensor::empty(DType::Float32, {3, 2});
    std::fill_n(kernels::mdata<float>(base), 6, 1.0f);
    Tensor x = Tensor::empty(DType::Float32, {2, 2});
    const float xs[] = {1, 2, 3, 4};
    std::copy(xs, xs + 4, kernels::mdata<float>(x));
    auto out = (*ex)->run(std::vector<Tensor>{base, x});
    ASSERT_TRUE(out.ok()) << out.error().message();
    const float* got = kernels::cdata<float>((*out)[0]);
    EXPECT_EQ(std::vector<float>(got, got + 6), (std::vector<float>{1, 1, 11, 21, 31, 41}));
    EXPECT_EQ(kernels::cdata<float>(base)[2], 1.0f);  // functional: the input is not written
  }
}

}  // namespace
}  // namespace lathe
