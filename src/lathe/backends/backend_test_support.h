// Helpers shared by the backends' tests (XNNPACK, Vulkan): header only,
// not part of the library. The fixture sweep, the lowered-versus-portable
// comparison, the hand-made delegate node and the weight refusals are
// written once here, so each backend's test says only what differs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "lathe/analysis/constness.h"
#include "lathe/backends/backend.h"
#include "lathe/backends/lower.h"
#include "lathe/backends/partitioner.h"
#include "lathe/backends/payload.h"
#include "lathe/harness/reference.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/executor.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe::testing {

// A program of one method, "model", with symbol s0 in [lo, hi], to build
// with GraphBuilder.
inline ExportedProgram& one_method_with_s0(Program& program, int64_t lo, int64_t hi) {
  program.methods.emplace_back();
  program.methods[0].name = "model";
  program.methods[0].program = std::make_unique<ExportedProgram>();
  program.methods[0].program->range_constraints.push_back({"s0", RangeConstraint{lo, hi}});
  return *program.methods[0].program;
}

inline ExecutorOptions with_delegates() {
  ExecutorOptions o;
  o.delegates = &builtin_delegates();
  return o;
}

// The .pt2 archives in each folder of the source tree, sorted.
inline std::vector<std::string> fixture_archives(std::initializer_list<const char*> dirs) {
  std::vector<std::string> out;
  for (const char* dir : dirs) {
    for (const auto& e : std::filesystem::directory_iterator(source_path(dir))) {
      if (e.path().extension() == ".pt2") out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `ex` on each call's inputs and expects every output within `rtol`
// (of its scale, compare.h) of the call's stored output and, when
// `portable` is given, of the portable run's; prints one line per output
// under `label`.
inline void expect_calls_match(Executor& ex, const std::vector<ReferenceCall>& calls, double rtol, const std::string& label,
                               Executor* portable = nullptr) {
  for (size_t k = 0; k < calls.size(); ++k) {
    auto got = ex.run(calls[k].inputs);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(got->size(), calls[k].outputs.size());
    Result<std::vector<Tensor>> want = std::vector<Tensor>{};
    if (portable) {
      want = portable->run(calls[k].inputs);
      ASSERT_TRUE(want.ok()) << want.error().message();
    }
    for (size_t i = 0; i < got->size(); ++i) {
      TensorDiff d = compare_tensors((*got)[i], calls[k].outputs[i], Tolerance{rtol, 0});
      std::string line = label + " call " + std::to_string(k) + " output " + std::to_string(i) + ": vs PyTorch " + d.describe();
      EXPECT_TRUE(d.ok) << line;
      if (portable) {
        TensorDiff p = compare_tensors((*got)[i], (*want)[i], Tolerance{rtol, 0});
        line += "; vs portable " + p.describe();
        EXPECT_TRUE(p.ok) << line;
      }
      std::printf("  %s\n", line.c_str());
    }
  }
}

// A fixture lowered to a backend, written, and read back.
struct LoweredFixture {
  std::string stem;
  int claimed_nodes = 0;
  Program back;
};

// Reads the archive at `path`, lowers it to `backend`, writes it to
// `out_dir` and reads it back.
inline void lower_write_read(const std::string& path, const Backend& backend, const std::string& out_dir, LoweredFixture& out) {
  namespace fs = std::filesystem;
  out.stem = fs::path(path).stem().string();
  auto program = read_pt2(path);
  ASSERT_TRUE(program.ok()) << program.error().message();
  auto lowered = lower_program(*program, backend);
  ASSERT_TRUE(lowered.ok()) << lowered.error().message();
  for (const MethodLowering& m : lowered->methods) out.claimed_nodes += m.report.claimed_nodes;
  const std::string out_path =
      out_dir + "/" + fs::path(path).parent_path().filename().string() + "_" + out.stem + "." + std::string(backend.name()) + ".pt2";
  Status w = write_pt2(*program, out_path);
  ASSERT_TRUE(w.ok()) << w.error().message();
  auto back = read_pt2(out_path);
  ASSERT_TRUE(back.ok()) << back.error().message();
  out.back = std::move(*back);
}

struct SweepOptions {
  double rtol = 1e-4;
  bool against_portable = false;  // also compare with the portable run of the original
  bool skip_unclaimed = false;    // pass over fixtures of which the backend claims nothing
};

struct SweepCounts {
  int claimed_fixtures = 0;  // fixtures with a node claimed
  int delegate_nodes = 0;    // delegate calls in all the lowered methods
};

// Every runnable fixture in `dirs` lowered to `backend`, written, read
// back and run (with the delegates) against PyTorch's stored outputs and,
// if asked, the portable run of the original.
inline SweepCounts sweep_fixtures(std::initializer_list<const char*> dirs, const Backend& backend, SweepOptions o) {
  const std::string out_dir = temp_dir();
  SweepCounts counts;
  for (const std::string& path : fixture_archives(dirs)) {
    SCOPED_TRACE(path);
    if (!fixture_runnable(path)) continue;  // a custom op no runtime here has (fixtures_test.cpp checks the refusal)
    LoweredFixture f;
    lower_write_read(path, backend, out_dir, f);
    if (::testing::Test::HasFatalFailure()) return counts;
    if (f.claimed_nodes > 0) ++counts.claimed_fixtures;
    if (f.claimed_nodes == 0 && o.skip_unclaimed) continue;
    auto original = read_pt2(path);
    EXPECT_TRUE(original.ok());
    if (!original.ok()) continue;
    for (const Method& m : f.back.methods) {
      SCOPED_TRACE(m.name);
      for (const Node* n : m.program->graph().nodes()) counts.delegate_nodes += n->op_name().starts_with("lathe.delegate.");
      auto calls = load_reference_calls(reference_dir(path, m.name));
      EXPECT_TRUE(calls.ok()) << calls.error().message();
      auto ex = Executor::create(*m.program, with_delegates());
      EXPECT_TRUE(ex.ok()) << ex.error().message();
      auto portable = Executor::create(*original->find_method(m.name)->program);
      EXPECT_TRUE(portable.ok()) << portable.error().message();
      if (!calls.ok() || !ex.ok() || !portable.ok()) continue;
      expect_calls_match(**ex, *calls, o.rtol, f.stem + " " + m.name, o.against_portable ? portable->get() : nullptr);
    }
  }
  return counts;
}

// Runs `lowered` (with the built-in delegates) and `plain` (portable
// kernels) on `inputs`, `calls` times one after the other, expecting every
// output within `tol`.
inline void expect_same_outputs(const ExportedProgram& lowered, const ExportedProgram& plain, const std::vector<Tensor>& inputs,
                                Tolerance tol, int calls = 1) {
  auto a = Executor::create(lowered, with_delegates());
  ASSERT_TRUE(a.ok()) << a.error().message();
  auto e = Executor::create(plain);
  ASSERT_TRUE(e.ok()) << e.error().message();
  for (int call = 0; call < calls; ++call) {
    auto got = (*a)->run(inputs);
    ASSERT_TRUE(got.ok()) << got.error().message();
    auto want = (*e)->run(inputs);
    ASSERT_TRUE(want.ok()) << want.error().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) {
      TensorDiff d = compare_tensors((*got)[i], (*want)[i], tol);
      EXPECT_TRUE(d.ok) << "call " << call << " output " << i << ": " << d.describe();
    }
  }
}

// y = linear(x [2, 3], fc.weight [4, 3]): the smallest program every
// backend claims whole.
inline void build_linear(ExportedProgram& ep) {
  GraphBuilder b(ep);
  Value* w = b.parameter("fc.weight", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  b.user_output(b.call("aten.linear.default", {{"input", x}, {"weight", w}}, {2, 4}));
}

inline NodeSupport support_of(const Backend& backend, const ExportedProgram& ep, const Node* n) {
  Constness c(ep);
  return backend.support(*n, c);
}

// Partitions `ep` for `backend` and verifies it: the number of delegates
// made (-1 if partition failed).
inline int delegates_after_partition(ExportedProgram& ep, const Backend& backend) {
  auto r = partition(ep, backend);
  EXPECT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(verify(ep, "model").ok());
  return r.ok() ? r->delegates : -1;
}

// Replaces `node` (of a single output) by a "lathe.delegate.<p.backend>"
// node running the payload `p` made by hand over `inputs`, the way the
// partitioner would, so that init() meets what the partitioner never writes.
inline void replace_with_payload(ExportedProgram& ep, Node* node, const DelegatePayload& p, std::vector<Value*> inputs) {
  std::vector<std::byte> bytes = encode_payload(p);
  Rewriter rw(ep);
  Tensor record = Tensor::empty(DType::UInt8, {static_cast<int64_t>(bytes.size())});
  std::copy(bytes.begin(), bytes.end(), record.storage->mutable_data());
  auto pv = rw.add_constant("hand_made_payload", record);
  ASSERT_TRUE(pv.ok()) << pv.error().message();
  TensorMeta pm;
  pm.dtype = DType::UInt8;
  pm.sizes = {SymDim(static_cast<int64_t>(bytes.size()))};
  (*pv)->set_meta(pm);
  Value* y = node->output();
  auto n = rw.create_node("lathe.delegate." + p.backend,
                          {NamedArgument{"payload", TensorRef{*pv}, ArgKind::Positional},
                           NamedArgument{"inputs", TensorList{std::move(inputs)}, ArgKind::Positional}},
                          {NewOutput{ValueKind::Tensor, "delegated", y->meta()}}, node);
  ASSERT_TRUE(n.ok()) << n.error().message();
  ASSERT_TRUE(rw.replace_all_uses(y, (*n)->output()).ok());
  ASSERT_TRUE(rw.erase_node(node).ok());
  ASSERT_TRUE(verify(ep, "model").ok());
}

// mm(x, relu(m)) with m a user input, the relu named 'computed_w', replaced
// by a hand-made delegate whose one op (`kind`, named 'mm') reads the
// relu's output as its prepacked weight: init() must refuse, naming the op
// (`names_op`: how the backend's message names it), the operand and the
// node that computes it.
inline void expect_runtime_weight_refused_at_init(const std::string& backend, const std::string& kind,
                                                  const std::string& names_op) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {2, 3});
  Value* m = b.user_input("m", {3, 4});
  Value* w = b.call("aten.relu.default", {{"self", m}}, {3, 4}, DType::Float32, "computed_w");
  b.user_output(b.call("aten.mm.default", {{"self", x}, {"mat2", w}}, {2, 4}));
  DelegatePayload p;
  p.backend = backend;
  const uint32_t xi = p.add_value({2, 3}, 0), wi = p.add_value({3, 4}, 1), yi = p.add_value({2, 4});
  p.ops.push_back(PayloadOp{kind, "mm", {{xi, "input"}, {wi, "weight"}}, {yi}, {2, 3, 4, 1}, {-INFINITY, INFINITY}});
  p.outputs = {yi};
  replace_with_payload(ep, b.last_node(), p, {x, w});
  auto ex = Executor::create(ep, with_delegates());
  ASSERT_FALSE(ex.ok());
  const std::string msg = ex.error().message();
  EXPECT_NE(msg.find(names_op), std::string::npos) << msg;                                    // the node
  EXPECT_NE(msg.find("operand 'weight' is 'computed_w'"), std::string::npos) << msg;          // the operand
  EXPECT_NE(msg.find("by node 'computed_w' (aten.relu.default)"), std::string::npos) << msg;  // its producer
  EXPECT_EQ(msg.find("Aborted"), std::string::npos);
}

// A linear whose weight is a buffer the program also mutates: refused as
// a weight (it changes from call to call), and never claimed by partition,
// which must leave a program that verifies.
inline void expect_mutated_buffer_weight_refused(const Backend& backend) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* buf = b.buffer("w", {4, 3});
  Value* x = b.user_input("x", {2, 3});
  Value* y = b.call("aten.linear.default", {{"input", x}, {"weight", buf}}, {2, 4});
  const Node* linear = b.last_node();
  b.buffer_mutation(b.call("aten.mul.Tensor", {{"self", buf}, {"other", buf}}, {4, 3}), "w");
  b.user_output(y);
  NodeSupport s = support_of(backend, ep, linear);
  EXPECT_FALSE(s.claimed);
  EXPECT_NE(s.reason.find("mutable buffer"), std::string::npos) << s.reason;
  auto r = partition(ep, backend);
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const NodeDecision& d : r->decisions) {
    if (d.op == "aten.linear.default") {
      EXPECT_FALSE(d.claimed);
    }
  }
  EXPECT_TRUE(verify(ep, "model").ok());
}

// A weight (or bias, or matrix) a backend would prepack that is not a
// compile-time constant: `build` makes the refused node last, `why` is
// what its refusal must say.
struct WeightRefusal {
  const char* what;
  Value* (*build)(GraphBuilder& b);
  const char* why;
};

inline Value* linear_of(GraphBuilder& b, Value* w, Value* bias = nullptr) {
  std::vector<GraphBuilder::Arg> args{{"input", b.user_input("x", {2, 3})}, {"weight", w}};
  if (bias) args.push_back({"bias", bias});
  return b.call("aten.linear.default", std::move(args), {2, 4});
}

inline const std::vector<WeightRefusal>& weight_refusals() {
  static const std::vector<WeightRefusal> cases = {
      {"a user input weight", [](GraphBuilder& b) { return linear_of(b, b.user_input("w", {4, 3})); },
       "weight 'w' is user input 'w'"},
      {"a computed weight",
       [](GraphBuilder& b) {
         Value* p = b.parameter("fc.weight", {4, 3});
         return linear_of(b, b.call("aten.tanh.default", {{"self", p}}, {4, 3}, DType::Float32, "squashed"));
       },
       "weight 'squashed' is computed at run time by 'squashed'"},
      {"a user input bias",
       [](GraphBuilder& b) { return linear_of(b, b.parameter("fc.weight", {4, 3}), b.user_input("bias", {4})); },
       "bias 'bias' is user input 'bias'"},
      {"mm against a run-time matrix",
       [](GraphBuilder& b) {
         Value* x = b.user_input("x", {2, 3});
         return b.call("aten.mm.default", {{"self", x}, {"mat2", b.user_input("m", {3, 4})}}, {2, 4});
       },
       "mat2 'm' is user input 'm'"},
      {"a convolution with a user input bias",
       [](GraphBuilder& b) {
         Value* x = b.user_input("x", {1, 2, 5, 5});
         Value* w = b.parameter("conv.weight", {3, 2, 3, 3});
         Value* bias = b.user_input("bias", {3});
         return b.call("aten.convolution.default",
                       {{"input", x}, {"weight", w}, {"bias", bias}, {"stride", IntList{{1, 1}}}, {"padding", IntList{{0, 0}}},
                        {"dilation", IntList{{1, 1}}}, {"transposed", false}, {"output_padding", IntList{{0, 0}}}, {"groups", int64_t{1}}},
                       {1, 3, 3, 3});
       },
       "bias 'bias' is user input 'bias'"},
  };
  return cases;
}

// Each weight refusal against `backend`: the node is not claimed and says
// why; after partitioning (which must verify) it is still a portable node,
// and `delegates(case)` delegates were made of the rest.
inline void expect_weight_refusals(const Backend& backend, const std::function<int(const WeightRefusal&)>& delegates) {
  for (const WeightRefusal& c : weight_refusals()) {
    SCOPED_TRACE(c.what);
    ExportedProgram ep;
    GraphBuilder b(ep);
    b.user_output(c.build(b));
    const Node* refused = b.last_node();
    const std::string name = refused->name();
    NodeSupport s = support_of(backend, ep, refused);
    EXPECT_FALSE(s.claimed);
    EXPECT_NE(s.reason.find(c.why), std::string::npos) << s.reason;
    EXPECT_EQ(delegates_after_partition(ep, backend), delegates(c));
    bool kept = false;
    for (const Node* n : ep.graph().nodes()) kept = kept || n->name() == name;
    EXPECT_TRUE(kept) << name;
  }
}

}  // namespace lathe::testing
