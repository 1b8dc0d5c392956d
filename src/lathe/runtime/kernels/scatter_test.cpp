// Hand-checked tests of the scatter family: out-of-range indices are errors
// naming the op and the index (never a write outside the tensor, and
// nothing written before the refusal), and the in-place forms whose
// PyTorch cases must be idempotent (accumulating ones) on float data.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "lathe/ir/graph_builder.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/scatter.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {
namespace {

Tensor f32(std::vector<int64_t> sizes, std::vector<float> values) {
  Tensor t = Tensor::empty(DType::Float32, std::move(sizes));
  std::copy(values.begin(), values.end(), mdata<float>(t));
  return t;
}

Tensor i64(std::vector<int64_t> sizes, std::vector<int64_t> values) {
  Tensor t = Tensor::empty(DType::Int64, std::move(sizes));
  std::copy(values.begin(), values.end(), mdata<int64_t>(t));
  return t;
}

std::vector<float> values_of(const Tensor& t) {
  Tensor c = as_contiguous(t);
  return std::vector<float>(cdata<float>(c), cdata<float>(c) + c.numel());
}

// Runs a one-node program; `inputs` are the node's tensor arguments, bound
// by name, the others literal.
Result<std::vector<Tensor>> run_one(const std::string& op, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                    std::vector<GraphBuilder::Arg> literals, std::vector<TensorMeta> outputs) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  std::vector<GraphBuilder::Arg> args;
  std::vector<Tensor> in;
  for (const auto& [name, t] : inputs) {
    args.emplace_back(name, b.user_input("in_" + name, GraphBuilder::tensor_meta(t.sizes, t.dtype)));
    in.push_back(t);
  }
  for (auto& a : literals) args.push_back(std::move(a));
  std::vector<Value*> outs = b.call_multi(op, std::move(args), std::move(outputs));
  for (Value* v : outs) b.user_output(v);
  LATHE_ASSIGN_OR_RETURN(auto ex, Executor::create(ep));
  return ex->run(in);
}

void expect_error(const Result<std::vector<Tensor>>& r, const std::string& want) {
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(want), std::string::npos) << r.error().message();
}

TEST(ScatterKernels, IndexPutInPlaceRefusesAnOutOfRangeIndexBeforeWriting) {
  Tensor self = f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  OptionalTensorList idx;
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* s = b.user_input("self", {4, 2});
  Value* i = b.user_input("i", {2}, DType::Int64);
  Value* v = b.user_input("v", {2, 2});
  idx.items = {i};
  b.user_output(b.call("aten.index_put_.default", {{"self", s}, {"indices", Argument(idx)}, {"values", v}}, {4, 2}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  auto out = (*ex)->run(std::vector<Tensor>{self, i64({2}, {1, 4}), f32({2, 2}, {9, 9, 9, 9})});
  ASSERT_FALSE(out.ok());
  const std::string msg = out.error().message();
  EXPECT_NE(msg.find("index_put_"), std::string::npos) << msg;
  EXPECT_NE(msg.find("index 4 is out of bounds for size 4"), std::string::npos) << msg;
  EXPECT_EQ(values_of(self), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));  // row 1 not written either
}

TEST(ScatterKernels, IndexCopyInPlaceRefusesAnOutOfRangeIndex) {
  Tensor self = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  auto r = run_one("aten.index_copy_.default",
                   {{"self", self}, {"index", i64({2}, {0, 3})}, {"source", f32({2, 2}, {7, 7, 7, 7})}},
                   {{"dim", Argument(int64_t{0})}}, {GraphBuilder::tensor_meta({3, 2})});
  expect_error(r, "index_copy_: index 3 in 'index' is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(values_of(self), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // Negative indices are refused too (PyTorch does not wrap them here).
  auto neg = run_one("aten.index_copy_.default",
                     {{"self", self}, {"index", i64({1}, {-1})}, {"source", f32({1, 2}, {7, 7})}},
                     {{"dim", Argument(int64_t{0})}}, {GraphBuilder::tensor_meta({3, 2})});
  expect_error(neg, "index_copy_: index -1 in 'index' is out of bounds");
}

TEST(ScatterKernels, ScatterRefusesAnOutOfRangeIndex) {
  auto r = run_one("aten.scatter.src",
                   {{"self", f32({2, 3}, {0, 0, 0, 0, 0, 0})}, {"index", i64({2, 1}, {2, 5})}, {"src", f32({2, 1}, {1, 2})}},
                   {{"dim", Argument(int64_t{1})}}, {GraphBuilder::tensor_meta({2, 3})});
  expect_error(r, "scatter: index 5 in 'index' is out of bounds for dimension 1 with size 3");
  auto add = run_one("aten.scatter_add.default",
                     {{"self", f32({3}, {0, 0, 0})}, {"index", i64({1}, {-1})}, {"src", f32({1}, {1})}},
                     {{"dim", Argument(int64_t{0})}}, {GraphBuilder::tensor_meta({3})});
  expect_error(add, "scatter_add: index -1 in 'index' is out of bounds for dimension 0 with size 3");
  auto shape = run_one("aten.scatter.src",
                       {{"self", f32({2, 3}, {0, 0, 0, 0, 0, 0})}, {"index", i64({3, 1}, {0, 0, 0})}, {"src", f32({2, 1}, {1, 2})}},
                       {{"dim", Argument(int64_t{1})}}, {GraphBuilder::tensor_meta({2, 3})});
  expect_error(shape, "scatter: index [3, 1] must be no larger than src [2, 1]");
}

TEST(ScatterKernels, EmbeddingBagRefusesAnOutOfRangeIndex) {
  Tensor w = f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto r = run_one("aten._embedding_bag.default", {{"weight", w}, {"indices", i64({3}, {0, 4, 1})}, {"offsets", i64({1}, {0})}},
                   {}, {GraphBuilder::tensor_meta({1, 2}), GraphBuilder::tensor_meta({0}, DType::Int64),
                        GraphBuilder::tensor_meta({1}, DType::Int64), GraphBuilder::tensor_meta({1}, DType::Int64)});
  expect_error(r, "_embedding_bag: index 4 at position 1 of 'indices' is out of range [0, 4)");
  auto offsets = run_one("aten._embedding_bag.default",
                         {{"weight", w}, {"indices", i64({3}, {0, 3, 1})}, {"offsets", i64({2}, {0, 5})}}, {},
                         {GraphBuilder::tensor_meta({2, 2}), GraphBuilder::tensor_meta({0}, DType::Int64),
                          GraphBuilder::tensor_meta({2}, DType::Int64), GraphBuilder::tensor_meta({2}, DType::Int64)});
  expect_error(offsets, "_embedding_bag: offsets must be non-decreasing and at most the 3 indices, got 5");
}

TEST(ScatterKernels, MaskedScatterNeedsEnoughSource) {
  Tensor dst = f32({3}, {0, 0, 0});
  Tensor mask = Tensor::empty(DType::Bool, {3});
  mdata<bool>(mask)[0] = mdata<bool>(mask)[2] = true;
  Status s = masked_scatter_into(dst, mask, f32({1}, {5}), "masked_scatter");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "masked_scatter: source has 1 elements, fewer than the 2 true elements of mask");
  ASSERT_TRUE(masked_scatter_into(dst, mask, f32({2}, {5, 6}), "masked_scatter").ok());
  EXPECT_EQ(values_of(dst), (std::vector<float>{5, 0, 6}));
}

// torch: x = [1, 2, 3, 4]; x.index_add_(0, [3, 0, 3], [10, 20, 30], alpha=2) -> [41, 2, 3, 84]
TEST(ScatterKernels, AccumulatingInPlaceFormsWriteThroughSelf) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  auto r = run_one("aten.index_add_.default", {{"self", x}, {"index", i64({3}, {3, 0, 3})}, {"source", f32({3}, {10, 20, 30})}},
                   {{"dim", Argument(int64_t{0})}, {"alpha", Argument(int64_t{2})}}, {GraphBuilder::tensor_meta({4})});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(values_of(x), (std::vector<float>{41, 2, 3, 84}));
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{41, 2, 3, 84}));
  // x.scatter_add_(0, [1, 1, 2], [0.5, 0.25, 1]) -> [41, 2.75, 4, 84]
  auto s = run_one("aten.scatter_add_.default", {{"self", x}, {"index", i64({3}, {1, 1, 2})}, {"src", f32({3}, {0.5f, 0.25f, 1})}},
                   {{"dim", Argument(int64_t{0})}}, {GraphBuilder::tensor_meta({4})});
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(values_of(x), (std::vector<float>{41, 2.75f, 4, 84}));
  // x.index_put_((tensor([0, 0, -1]),), tensor([1., 2., 3.]), accumulate=True) -> [44, 2.75, 4, 87]
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* sv = b.user_input("self", {4});
  Value* iv = b.user_input("i", {3}, DType::Int64);
  Value* vv = b.user_input("v", {3});
  OptionalTensorList idx;
  idx.items = {iv};
  b.user_output(b.call("aten.index_put_.default",
                       {{"self", sv}, {"indices", Argument(idx)}, {"values", vv}, {"accumulate", Argument(true)}}, {4}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  ASSERT_TRUE((*ex)->run(std::vector<Tensor>{x, i64({3}, {0, 0, -1}), f32({3}, {1, 2, 3})}).ok());
  EXPECT_EQ(values_of(x), (std::vector<float>{44, 2.75f, 4, 87}));
}

// source a view of self: its values are read before any is written.
// torch: x = [1, 2, 3]; x.index_copy_(0, [1, 2], x[0:2]) -> [1, 1, 2]
TEST(ScatterKernels, InPlaceSourceThatAliasesSelfIsReadFirst) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* xv = b.user_input("x", {3});
  Value* iv = b.user_input("i", {2}, DType::Int64);
  Value* head = b.call("aten.slice.Tensor",
                       {{"self", xv}, {"dim", Argument(int64_t{0})}, {"start", Argument(int64_t{0})}, {"end", Argument(int64_t{2})}},
                       {2});
  b.user_output(b.call("aten.index_copy_.default",
                       {{"self", xv}, {"dim", Argument(int64_t{0})}, {"index", iv}, {"source", head}}, {3}));
  auto ex = Executor::create(ep);
  ASSERT_TRUE(ex.ok()) << ex.error().message();
  Tensor x = f32({3}, {1, 2, 3});
  auto out = (*ex)->run(std::vector<Tensor>{x, i64({2}, {1, 2})});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(values_of(x), (std::vector<float>{1, 1, 2}));
}

TEST(ScatterKernels, DiagonalIsAView) {
  Tensor m = f32({2, 3}, {0, 1, 2, 3, 4, 5});
  auto d = diagonal_view(m, 1, 0, 1);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->storage, m.storage);
  EXPECT_EQ(values_of(*d), (std::vector<float>{1, 5}));
  auto same = diagonal_view(m, 0, 1, -1);
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.error().message(), "diagonal: dim1 and dim2 are both dim 1");
}

}  // namespace
}  // namespace lathe::kernels
