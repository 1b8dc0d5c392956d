#include "lathe/ir/rewriter.h"

#include <gtest/gtest.h>

#include <random>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"

namespace lathe {
namespace {

std::string verify_text(const ExportedProgram& ep) {
  Status s = verify(ep, "forward");
  return s.ok() ? "" : s.error().message();
}

// The whole observable program: graph, signature and state.
std::string snapshot(const ExportedProgram& ep) { return print_program(ep) + print_state(ep); }

NamedArgument pos(std::string name, Argument a) { return NamedArgument{std::move(name), std::move(a), ArgKind::Positional}; }

#define EXPECT_FAILS_UNCHANGED(ep, call, fragment)                                   \
  do {                                                                               \
    std::string before_ = snapshot(ep);                                              \
    auto status_ = (call);                                                           \
    ASSERT_FALSE(status_.ok()) << "expected a failure";                              \
    EXPECT_NE(status_.error().message().find(fragment), std::string::npos)           \
        << status_.error().message();                                                \
    EXPECT_EQ(snapshot(ep), before_) << "a failed call changed the program";         \
    EXPECT_EQ(verify_text(ep), "");                                                  \
  } while (0)

// ---- nodes ------------------------------------------------------------------------

std::vector<std::string> node_order(const ExportedProgram& ep) {
  std::vector<std::string> names;
  for (const Node* n : ep.graph().nodes()) names.push_back(n->name());
  return names;
}

// a = relu(x); c = neg(a), or neg(x) when c does not read a. No outputs yet.
struct TwoNodes {
  ExportedProgram ep;
  GraphBuilder b{ep};
  Value* x = b.user_input("x", {2});
  Value* a;
  Value* c;
  explicit TwoNodes(bool c_reads_a)
      : a(b.call("aten.relu.default", {{"self", x}}, {2}, DType::Float32, "a")),
        c(b.call("aten.neg.default", {{"self", c_reads_a ? a : x}}, {2}, DType::Float32, "c")) {}
};

class RewriterTest : public testing::ProgramTest {};

// reorder: any permutation that keeps producers first is applied; one that
// puts a node before what it reads, drops or repeats a node is refused with
// the graph untouched.
TEST_F(RewriterTest, ReorderAppliesATopologicalPermutation) {
  TwoNodes g(false);
  g.b.user_output(g.a);
  g.b.user_output(g.c);
  Rewriter rw(g.ep);
  ASSERT_TRUE(rw.reorder({g.c->producer(), g.a->producer()}).ok());
  EXPECT_EQ(node_order(g.ep), (std::vector<std::string>{"c", "a"}));
  EXPECT_TRUE(verify(g.ep, "model").ok());
}

TEST_F(RewriterTest, ReorderBeforeAProducerOrNotAPermutation_NEG) {
  TwoNodes g(true);
  g.b.user_output(g.c);
  Rewriter rw(g.ep);
  Node* a = g.a->producer();
  EXPECT_FAILS_UNCHANGED(g.ep, rw.reorder({g.c->producer(), a}), "'c' would come before 'a'");
  EXPECT_FAILS_UNCHANGED(g.ep, rw.reorder({a, a}), "is listed twice");
  EXPECT_FAILS_UNCHANGED(g.ep, rw.reorder({a}), "1 nodes given, the graph has 2");
}

// move_before: one node at a time, under the same rule.
TEST_F(RewriterTest, MoveBeforeKeepsProducersFirst) {
  TwoNodes g(false);
  Value* d = g.b.call("aten.add.Tensor", {{"self", g.a}, {"other", g.c}}, {2}, DType::Float32, "d");
  g.b.user_output(d);
  Rewriter rw(g.ep);
  ASSERT_TRUE(rw.move_before(g.c->producer(), g.a->producer()).ok());
  EXPECT_EQ(node_order(g.ep), (std::vector<std::string>{"c", "a", "d"}));
  ASSERT_TRUE(rw.move_before(g.c->producer(), d->producer()).ok());  // and back
  EXPECT_EQ(node_order(g.ep), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_TRUE(verify(g.ep, "model").ok());
}

TEST_F(RewriterTest, MoveBeforeAProducerOrAfterAUser_NEG) {
  TwoNodes g(true);
  g.b.user_output(g.c);
  Rewriter rw(g.ep);
  EXPECT_FAILS_UNCHANGED(g.ep, rw.move_before(g.c->producer(), g.a->producer()),
                         "move 'c' before 'a': it reads 'a', defined after there");
  EXPECT_FAILS_UNCHANGED(g.ep, rw.move_before(g.a->producer(), nullptr),
                         "move 'a' before the end: 'c', which reads 'a', would come first");
}

// What the partitioner does: a node after a group takes over the group's
// value; the group's own readers keep the old one until they are erased.
TEST_F(RewriterTest, ReplaceAllUsesLeavingNodesThatGo) {
  TwoNodes g(true);
  g.b.user_output(g.a);
  Rewriter rw(g.ep);
  auto fused = rw.create_call("torch.ops.aten.fused.default", {pos("self", TensorRef{g.x})}, *g.a->meta(), "fused");
  ASSERT_TRUE(fused.ok());
  Value* f = *fused;
  // c, before the new node, would refuse it; left reading a, it does not.
  EXPECT_FAILS_UNCHANGED(g.ep, rw.replace_all_uses(g.a, f), "'fused' is not defined before its new user 'c'");
  ASSERT_TRUE(rw.replace_all_uses(g.a, f, {g.c->producer()}).ok());
  EXPECT_EQ(g.c->producer()->inputs()[0].arg.tensor(), g.a);
  EXPECT_EQ(g.ep.graph().outputs()[0].tensor(), f);
  EXPECT_EQ(g.a->user_count(), 1u);
  ASSERT_TRUE(rw.erase_node(g.c->producer()).ok());
  ASSERT_TRUE(rw.erase_node(g.a->producer()).ok());
  EXPECT_TRUE(verify(g.ep, "model").ok());
}

TEST_F(RewriterTest, ReplaceNodeMovesTheOutputAndItsSpec) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  auto lin = rw.replace_node(s.addmm->producer(), "torch.ops.aten.linear.default",
                             {pos("input", TensorRef{s.arg}), pos("weight", TensorRef{s.weight}),
                              pos("bias", TensorRef{s.bias})},
                             "linear");
  ASSERT_TRUE(lin.ok()) << lin.error().message();
  EXPECT_EQ(ep.graph().outputs()[0].tensor(), *lin);
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::UserOutput);
  ASSERT_TRUE((*lin)->meta().has_value());
  EXPECT_EQ(*(*lin)->meta(), GraphBuilder::tensor_meta({2, 3}));
  EXPECT_EQ(ep.graph().find_value("addmm"), nullptr);
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, ReplaceNodeReadingItsOwnValue_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  EXPECT_FAILS_UNCHANGED(ep,
                         rw.replace_node(s.addmm->producer(), "torch.ops.aten.neg.default",
                                         {pos("self", TensorRef{s.addmm})}, "neg"),
                         "is not defined before node 'addmm'");
}

TEST_F(RewriterTest, RetargetKeepsTheValueItsNameAndItsUses) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  Node* n = s.addmm->producer();
  ASSERT_TRUE(rw.retarget(n, "torch.ops.aten.linear.default",
                          {pos("input", TensorRef{s.arg}), pos("weight", TensorRef{s.weight}),
                           pos("bias", TensorRef{s.bias})})
                  .ok());
  EXPECT_EQ(n->target(), "torch.ops.aten.linear.default");
  EXPECT_EQ(ep.graph().outputs()[0].tensor(), s.addmm);
  EXPECT_EQ(s.addmm->producer(), n);
  EXPECT_FALSE(s.permute->has_uses());  // the old mat2 is no longer read
  EXPECT_EQ(s.weight->user_count(), 2u);
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, RetargetReadingItsOwnOrALaterValue_NEG) {
  Value* x = b.user_input("x", {2});
  Value* a = b.call("aten.neg.default", {{"self", x}}, {2});
  Value* c = b.call("aten.relu.default", {{"self", x}}, {2});
  b.user_output(a);
  b.user_output(c);
  Rewriter rw(ep);
  EXPECT_FAILS_UNCHANGED(ep, rw.retarget(a->producer(), "torch.ops.aten.exp.default", {pos("self", TensorRef{a})}),
                         "value 'neg' is not defined before node 'neg'");
  EXPECT_FAILS_UNCHANGED(ep, rw.retarget(a->producer(), "torch.ops.aten.exp.default", {pos("self", TensorRef{c})}),
                         "value 'relu' is not defined before node 'neg'");
  EXPECT_FAILS_UNCHANGED(ep, rw.retarget(a->producer(), "", {pos("self", TensorRef{x})}), "empty target");
}

TEST_F(RewriterTest, CreateCallChecksTheInsertionPoint) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  // Reading the permute is fine after it, not before it.
  auto ok = rw.create_call("torch.ops.aten.neg.default", {pos("self", TensorRef{s.permute})},
                           GraphBuilder::tensor_meta({3, 3}), "neg", s.addmm->producer());
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_FAILS_UNCHANGED(ep,
                         rw.create_call("torch.ops.aten.neg.default", {pos("self", TensorRef{s.addmm})},
                                        GraphBuilder::tensor_meta({2, 3}), "neg", s.permute->producer()),
                         "value 'addmm' is not defined before node 'permute_copy'");
  EXPECT_FAILS_UNCHANGED(ep,
                         rw.create_node("torch.ops.aten.neg.default", {pos("self", TensorRef{s.arg})},
                                        {NewOutput{ValueKind::Tensor, "neg", std::nullopt}}),
                         "has no metadata");
  // Positions stay right after many insertions before one node.
  Node* anchor = s.addmm->producer();
  Value* prev = s.permute;
  for (int i = 0; i < 200; ++i) {
    auto v = rw.create_call("torch.ops.aten.neg.default", {pos("self", TensorRef{prev})},
                            GraphBuilder::tensor_meta({3, 3}), "chain", anchor);
    ASSERT_TRUE(v.ok()) << i << ": " << v.error().message();
    EXPECT_TRUE(rw.defined_before(prev, (*v)->producer()));
    EXPECT_FALSE(rw.defined_before(*v, prev->producer()));
    prev = *v;
  }
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, ValueOfAnotherGraph_NEG) {
  ExportedProgram a, b;
  SimpleLinear sa = build_simple_linear(a);
  SimpleLinear sb = build_simple_linear(b);
  Rewriter rw(a);
  EXPECT_FAILS_UNCHANGED(a,
                         rw.create_call("torch.ops.aten.neg.default", {pos("self", TensorRef{sb.arg})},
                                        GraphBuilder::tensor_meta({2, 3}), "neg"),
                         "belongs to another graph");
  EXPECT_FAILS_UNCHANGED(a, rw.replace_all_uses(sa.addmm, sb.addmm), "another graph");
}

TEST_F(RewriterTest, ReplaceAllUsesChecksOrderAndKind) {
  Value* x = b.user_input("x", {2});
  Value* n = b.sym_int_input("n", SymExpr{"s0", std::nullopt});
  ep.range_constraints.emplace_back("s0", RangeConstraint{});  // as torch.export bounds an int input: not at all
  Value* a = b.call("aten.neg.default", {{"self", x}}, {2});
  Value* c = b.call("aten.relu.default", {{"self", a}}, {2});
  Value* d = b.call("aten.exp.default", {{"self", x}}, {2});
  b.user_output(c);
  Rewriter rw(ep);
  // `d` comes after relu, which reads `a`.
  EXPECT_FAILS_UNCHANGED(ep, rw.replace_all_uses(a, d), "'exp' is not defined before its new user 'relu'");
  // `c` reads `a`: replacing `a` by `c` would make relu read itself.
  EXPECT_FAILS_UNCHANGED(ep, rw.replace_all_uses(a, c), "it would read itself");
  EXPECT_FAILS_UNCHANGED(ep, rw.replace_all_uses(a, n), "cannot be replaced by a sym_int");
  // Replacing the output value moves the output (and so its spec).
  ASSERT_TRUE(rw.replace_all_uses(c, d).ok());
  EXPECT_EQ(ep.graph().outputs()[0].tensor(), d);
  EXPECT_EQ(verify_text(ep), "");
  // A placeholder is defined before everything.
  ASSERT_TRUE(rw.replace_all_uses(a, x).ok());
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, EraseNodeWithUses_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  EXPECT_FAILS_UNCHANGED(ep, rw.erase_node(s.permute->producer()), "still has 1 use(s)");
  EXPECT_FAILS_UNCHANGED(ep, rw.erase_node(s.addmm->producer()), "still has 1 use(s)");  // the graph output
}

TEST_F(RewriterTest, RenameFollowsUserInputMutationSpecs) {
  Value* x = b.user_input("x", {2});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", 1}}, {2});
  b.user_input_mutation(y, "x");
  b.user_output(y);
  Rewriter rw(ep);
  ASSERT_TRUE(rw.rename(x, "inp").ok());
  EXPECT_EQ(ep.output_specs[0].target, "inp");
  EXPECT_EQ(verify_text(ep), "");
  EXPECT_FAILS_UNCHANGED(ep, rw.rename(y, "inp"), "name taken");
  EXPECT_FAILS_UNCHANGED(ep, rw.rename(y, ""), "empty name");
}

// ---- inputs ----------------------------------------------------------------------

TEST_F(RewriterTest, AddedLiftedConstantGoesBetweenBuffersAndUserInputs) {
  b.parameter("w", {2});
  b.buffer("bn.running_mean", {2});
  Value* x = b.user_input("x", {2});
  b.user_output(b.call("aten.neg.default", {{"self", x}}, {2}));
  Rewriter rw(ep);
  auto c = rw.add_constant("lifted_tensor_0", GraphBuilder::deterministic_tensor("c", DType::Float32, {2}));
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ((*c)->name(), "c_lifted_tensor_0");
  ASSERT_EQ(ep.input_specs.size(), 4u);
  EXPECT_EQ(ep.input_specs[2].kind, InputKind::TensorConstant);
  EXPECT_EQ(ep.input_specs[2].target, "lifted_tensor_0");
  EXPECT_EQ(ep.graph().inputs()[2].tensor(), *c);
  EXPECT_TRUE(ep.constants.contains("lifted_tensor_0"));
  EXPECT_EQ((*c)->meta()->sizes, (std::vector<SymDim>{2}));
  auto p = rw.add_parameter("layer.bias", GraphBuilder::deterministic_tensor("b", DType::Float32, {2}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(ep.graph().inputs()[1].tensor(), *p);  // after p_w, before the buffer
  EXPECT_TRUE((*p)->meta()->requires_grad);
  auto nb = rw.add_buffer("scratch", GraphBuilder::deterministic_tensor("s", DType::Float32, {2}), false);
  ASSERT_TRUE(nb.ok());
  EXPECT_EQ(ep.graph().inputs()[3].tensor(), *nb);
  EXPECT_TRUE(ep.constants.contains("scratch"));
  auto u = rw.add_user_input("y", GraphBuilder::tensor_meta({2}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(ep.graph().inputs().back().tensor(), *u);
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, AddInputWithTakenStateName_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  Rewriter rw(ep);
  EXPECT_FAILS_UNCHANGED(ep, rw.add_constant("linear.weight", Tensor::empty(DType::Float32, {3, 3})),
                         "state name 'linear.weight' is already taken");
  EXPECT_FAILS_UNCHANGED(ep, rw.add_parameter("", Tensor::empty(DType::Float32, {3})), "empty state name");
  EXPECT_FAILS_UNCHANGED(ep, rw.add_parameter("p", Tensor{}), "no tensor given");
  Rewriter bare(ep.graph());
  EXPECT_FAILS_UNCHANGED(ep, bare.add_parameter("q", Tensor::empty(DType::Float32, {3})), "bare graph");
}

TEST_F(RewriterTest, RemoveInputStillInUse_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  EXPECT_FAILS_UNCHANGED(ep, rw.remove_input(s.weight),
                         "remove input 'p_linear_weight': it still has 1 use(s) ('permute_copy')");
  EXPECT_FAILS_UNCHANGED(ep, rw.remove_input(s.addmm), "not an input of this program");
}

TEST_F(RewriterTest, RemoveParameterRemovesItsState) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Rewriter rw(ep);
  ASSERT_TRUE(rw.replace_node(s.addmm->producer(), "torch.ops.aten.neg.default", {pos("self", TensorRef{s.arg})}, "neg").ok());
  ASSERT_TRUE(rw.erase_node(s.permute->producer()).ok());
  ASSERT_TRUE(rw.remove_input(s.weight).ok());
  ASSERT_TRUE(rw.remove_input(s.bias).ok());
  EXPECT_TRUE(ep.parameters.empty());
  EXPECT_EQ(ep.input_specs.size(), 1u);
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, RemovingATiedParameterTakesItsUnnamedAliasesAlong) {
  Value* w = b.parameter("embed.weight", {4, 2});
  Value* x = b.user_input("x", {2});
  b.user_output(b.call("aten.neg.default", {{"self", x}}, {2}));
  ep.parameters.set("head.weight", *ep.parameters.find("embed.weight"));  // tied, lifted once
  ASSERT_EQ(verify_text(ep), "");
  Rewriter rw(ep);
  ASSERT_TRUE(rw.remove_input(w).ok());
  EXPECT_FALSE(ep.parameters.contains("embed.weight"));
  EXPECT_FALSE(ep.parameters.contains("head.weight"));
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, RemovingOneOfTwoTiedInputsKeepsTheOther_NEG) {
  // Both names are lifted (two specs): the survivor still needs its entry,
  // and an unnamed third alias is still anchored by it.
  Value* w = b.parameter("embed.weight", {4, 2});
  Value* h = b.parameter("head.weight", {4, 2});
  ep.parameters.set("head.weight", *ep.parameters.find("embed.weight"));
  ep.parameters.set("tail.weight", *ep.parameters.find("embed.weight"));
  Value* x = b.user_input("x", {4, 2});
  b.user_output(b.call("aten.add.Tensor", {{"self", x}, {"other", h}}, {4, 2}));
  ASSERT_EQ(verify_text(ep), "");
  Rewriter rw(ep);
  ASSERT_TRUE(rw.remove_input(w).ok());
  EXPECT_FALSE(ep.parameters.contains("embed.weight"));
  EXPECT_TRUE(ep.parameters.contains("head.weight"));
  EXPECT_TRUE(ep.parameters.contains("tail.weight"));
  EXPECT_EQ(verify_text(ep), "");
}

TEST_F(RewriterTest, RemoveMutatedBufferInput_NEG) {
  Value* buf = b.buffer("count", {1});
  Value* x = b.user_input("x", {1});
  Value* nb = b.call("aten.add.Tensor", {{"self", x}, {"other", 1}}, {1});
  b.buffer_mutation(nb, "count");
  b.user_output(nb);
  ASSERT_EQ(verify_text(ep), "");
  ASSERT_FALSE(buf->has_uses());
  Rewriter rw(ep);
  EXPECT_FAILS_UNCHANGED(ep, rw.remove_input(buf), "output spec 0 (buffer_mutation 'count') still names it");
}

// ---- outputs ----------------------------------------------------------------------

TEST_F(RewriterTest, MutationOutputsGoFirst) {
  Value* buf = b.buffer("count", {1});
  Value* x = b.user_input("x", {1});
  Value* y = b.call("aten.add.Tensor", {{"self", x}, {"other", buf}}, {1});
  b.user_output(y);
  Rewriter rw(ep);
  auto nb = rw.create_call("torch.ops.aten.add.Tensor", {pos("self", TensorRef{buf}), pos("other", int64_t{1})},
                           GraphBuilder::tensor_meta({1}), "add");
  ASSERT_TRUE(nb.ok());
  ASSERT_TRUE(rw.add_output(*nb, OutputSpec{OutputKind::BufferMutation, "count"}).ok());
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::BufferMutation);
  EXPECT_EQ(ep.graph().outputs()[0].tensor(), *nb);
  EXPECT_EQ(ep.graph().outputs()[1].tensor(), y);
  EXPECT_EQ(verify_text(ep), "");
  EXPECT_FAILS_UNCHANGED(ep, rw.add_output(*nb, OutputSpec{OutputKind::BufferMutation, "count"}),
                         "already mutates 'count'");
  EXPECT_FAILS_UNCHANGED(ep, rw.add_output(y, OutputSpec{OutputKind::BufferMutation, "x"}), "'x' is not a buffer input");
  ASSERT_TRUE(rw.remove_output(0).ok());
  EXPECT_EQ(ep.output_specs.size(), 1u);
  EXPECT_EQ(verify_text(ep), "");
  EXPECT_FAILS_UNCHANGED(ep, rw.remove_output(5), "out of range");
}

// ---- try to break it ----------------------------------------------------------------

// Random sequences of Rewriter calls: every call either works or fails
// without a trace, and the program verifies after each one.
TEST_F(RewriterTest, RandomCallSequencesNeverBreakTheProgram) {
  int succeeded[10] = {}, failed[10] = {};
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    ExportedProgram ep;
    build_simple_linear(ep);
    Rewriter rw(ep);
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    auto all_values = [&] {
      std::vector<Value*> vals = ep.graph().placeholders();
      for (Node* n : ep.graph().nodes())
        for (Value* v : n->defined_values()) vals.push_back(v);
      return vals;
    };
    int fresh = 0;
    for (int step = 0; step < 120; ++step) {
      std::string before = snapshot(ep);
      std::vector<Value*> vals = all_values();
      std::vector<Node*> nodes = ep.graph().nodes_snapshot();
      Value* v = vals[pick(vals.size())];
      Value* u = vals[pick(vals.size())];
      Node* at = nodes.empty() || pick(4) == 0 ? nullptr : nodes[pick(nodes.size())];
      std::string tag = "seed " + std::to_string(seed) + " step " + std::to_string(step);
      Status st;
      int op = static_cast<int>(pick(10));
      switch (op) {
        case 0: {
          auto r = rw.create_call("torch.ops.aten.neg.default", {pos("self", TensorRef{v})},
                                  GraphBuilder::tensor_meta({3}), "n", at);
          st = r.ok() ? Status::Ok() : Status(r.error());
          break;
        }
        case 1: st = rw.replace_all_uses(v, u); break;
        case 2: st = at ? rw.erase_node(at) : Status(make_error("no node")); break;
        case 3: {
          std::string name = "w" + std::to_string(fresh++);
          auto r = pick(3) == 0   ? rw.add_parameter(name, Tensor::empty(DType::Float32, {3}))
                   : pick(2) == 0 ? rw.add_buffer(name, Tensor::empty(DType::Float32, {3}), pick(2) == 0)
                                  : rw.add_constant(name, Tensor::empty(DType::Float32, {3}));
          st = r.ok() ? Status::Ok() : Status(r.error());
          break;
        }
        case 4: st = rw.remove_input(v); break;
        case 5: {
          // A buffer mutation of a random buffer, or a user output.
          std::string target;
          for (const auto& s : ep.input_specs)
            if (s.kind == InputKind::Buffer) target = s.target;
          OutputSpec spec = target.empty() || pick(2) ? OutputSpec{OutputKind::UserOutput, ""}
                                                      : OutputSpec{OutputKind::BufferMutation, target};
          st = rw.add_output(v, spec);
          break;
        }
        case 6: st = ep.graph().outputs().empty() ? Status(make_error("none")) : rw.remove_output(pick(ep.graph().outputs().size())); break;
        case 7: st = rw.rename(v, pick(2) ? u->name() : "r" + std::to_string(fresh++)); break;
        case 8: {
          auto r = rw.add_user_input("in" + std::to_string(fresh++), GraphBuilder::tensor_meta({3}));
          st = r.ok() ? Status::Ok() : Status(r.error());
          break;
        }
        case 9:
          st = at ? rw.retarget(at, "torch.ops.aten.neg.default", {pos("self", TensorRef{v})})
                  : Status(make_error("no node"));
          break;
      }
      ASSERT_EQ(verify_text(ep), "") << tag << " op " << op << (st.ok() ? " (ok)" : " failed: " + st.error().message());
      if (!st.ok()) {
        ASSERT_EQ(snapshot(ep), before) << tag << " op " << op << ": " << st.error().message();
      }
      (st.ok() ? succeeded : failed)[op]++;
    }
  }
  // The sequences must really exercise both outcomes of every call.
  for (int op = 0; op < 10; ++op) {
    EXPECT_GT(succeeded[op], 5) << "op " << op;
    EXPECT_GT(failed[op] + (op == 3 || op == 8 ? 1 : 0), 0) << "op " << op;
  }
}

}  // namespace
}  // namespace lathe
