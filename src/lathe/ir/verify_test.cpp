// One positive case, then one _NEG case per rule: each breaks a good
// program in exactly one way and checks the error names the place and rule.
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/verify.h"

#include <gtest/gtest.h>

#include "lathe/ir/program_test_support.h"
#include "lathe/ir/graph_builder.h"

namespace lathe {
namespace {

// The message of a failed verify, or "" if it passed.
std::string failure(const Status& st) { return st.ok() ? "" : st.error().message(); }
std::string failure(const ExportedProgram& ep) { return failure(verify(ep, "forward")); }

// build_simple_linear's program with one more user input: a placeholder of
// `kind` with no metadata, which verify() must reject.
void simple_linear_with_bare_user_input(ExportedProgram& ep, ValueKind kind, const char* name) {
  build_simple_linear(ep);
  GraphAssembler(ep.graph()).insert_placeholder(kind, name);
  ep.input_specs.push_back(InputSpec{InputKind::UserInput, "", true, {}});
}

#define EXPECT_FAILS_WITH(ep, fragment)                                       \
  do {                                                                        \
    std::string msg_ = failure(ep);                                           \
    EXPECT_NE(msg_, "") << "verify passed, expected: " << (fragment);         \
    EXPECT_NE(msg_.find(fragment), std::string::npos) << "message: " << msg_; \
  } while (0)

// A program with every input kind and a buffer mutation.
struct Stateful {
  ExportedProgram ep;
  Value *w, *rm, *scratch, *c, *x, *y, *nb;
  Stateful() {
    GraphBuilder b(ep);
    w = b.parameter("w", {2});
    rm = b.buffer("bn.running_mean", {2});
    scratch = b.buffer("scratch", {2}, /*persistent=*/false);
    c = b.constant("lifted_tensor_0", {2});
    x = b.user_input("x", {2});
    Value* t = b.call("aten.mul.Tensor", {{"self", x}, {"other", w}}, {2});
    Value* u = b.call("aten.add.Tensor", {{"self", t}, {"other", c}}, {2});
    y = b.call("aten.add.Tensor", {{"self", u}, {"other", scratch}}, {2});
    nb = b.call("aten.add.Tensor", {{"self", rm}, {"other", x}}, {2});
    b.user_output(y);
    b.buffer_mutation(nb, "bn.running_mean");
  }
};

class VerifyTest : public testing::ProgramTest {};

TEST_F(VerifyTest, GoodProgramsPass) {
  ExportedProgram ep;
  build_simple_linear(ep);
  EXPECT_EQ(failure(ep), "");
  Stateful s;
  EXPECT_EQ(failure(s.ep), "");
  Program p;
  build_simple_linear(p.add_method("forward"));
  build_simple_linear(p.add_method("decode"));
  EXPECT_EQ(failure(verify(p)), "");
}

// ---- signature alignment --------------------------------------------------

TEST_F(VerifyTest, ExtraOutputSpec_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.output_specs.push_back(OutputSpec{OutputKind::UserOutput, ""});
  EXPECT_FAILS_WITH(ep, "method 'forward': the graph has 1 output(s) but the signature 2 output spec(s)");
}

TEST_F(VerifyTest, MissingInputSpec_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.input_specs.pop_back();
  EXPECT_FAILS_WITH(ep, "the graph has 3 input(s) but the signature 2 input spec(s)");
}

// ---- input kinds ----------------------------------------------------------

TEST_F(VerifyTest, ParameterSpecOnSymIntPlaceholder_NEG) {
  b.sym_int_input("n", SymExpr{"s0", std::nullopt});
  ep.input_specs[0] = InputSpec{InputKind::Parameter, "w", true, {}};
  EXPECT_FAILS_WITH(ep, "input spec 0 (parameter 'w', %n): expects a tensor graph input, but it is sym_int");
}

TEST_F(VerifyTest, ConstantInputSpecOnPlaceholder_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  ep.input_specs[2] = InputSpec{InputKind::ConstantInput, "arg", true, int64_t{3}};
  EXPECT_FAILS_WITH(ep, "input spec 2 (constant_input 'arg', %arg): expects a literal graph input");
  (void)s;
}

TEST_F(VerifyTest, ConstantInputLiteralPasses) {
  ExportedProgram ep;
  build_simple_linear(ep);
  GraphAssembler(ep.graph()).insert_literal_input(int64_t{3});
  ep.input_specs.push_back(InputSpec{InputKind::ConstantInput, "n", true, int64_t{3}});
  EXPECT_EQ(failure(ep), "");
}

TEST_F(VerifyTest, TokenSpecOnSymInt_NEG) {
  // A tensor is accepted (PyTorch 2.13 writes tokens as f32[0] tensors,
  // fixtures/constructs/effects.pt2); a symbolic int is not.
  ExportedProgram ep;
  GraphAssembler ga(ep.graph());
  build_simple_linear(ep);
  ga.insert_placeholder(ValueKind::Tensor, "token", 0)->set_meta(GraphBuilder::tensor_meta({0}));
  ep.input_specs.insert(ep.input_specs.begin(), InputSpec{InputKind::Token, "", true, {}});
  EXPECT_EQ(failure(ep), "");
  ga.insert_placeholder(ValueKind::SymInt, "token2", 0);
  ep.input_specs.insert(ep.input_specs.begin(), InputSpec{InputKind::Token, "", true, {}});
  EXPECT_FAILS_WITH(ep, "input spec 0 (token, %token2): expects a token (or tensor) graph input, but it is sym_int");
  ExportedProgram ep2;
  simple_linear_with_bare_user_input(ep2, ValueKind::Token, "token");
  EXPECT_FAILS_WITH(ep2, "input spec 3 (user_input, %token): expects a non-token graph input, but it is token");
}

// ---- input order ----------------------------------------------------------
// PyTorch imposes no order on inputs (torch/_export/verifier.py matches specs
// to placeholders by position and kind), and real torch.export 2.13 output
// interleaves lifted state in module attribute order
// (fixtures/transformer_block_int8.pt2 has a tensor constant between buffers).

TEST_F(VerifyTest, UserInputBeforeParameterIsAccepted) {
  b.parameter("w", {2});
  b.user_input("x", {2});
  Graph& g = ep.graph();
  GraphAssembler(g).insert_placeholder(ValueKind::Tensor, "y", 0)->set_meta(GraphBuilder::tensor_meta({2}));
  ep.input_specs.insert(ep.input_specs.begin(), InputSpec{InputKind::UserInput, "", true, {}});
  Status st = verify(ep, "forward");
  EXPECT_TRUE(st.ok()) << st.error().message();
}

TEST_F(VerifyTest, ConstantBetweenBuffersIsAccepted) {
  Stateful s;
  Graph& g = s.ep.graph();
  Value* c2 = GraphAssembler(g).insert_placeholder(ValueKind::Tensor, "c_early", 2);
  c2->set_meta(GraphBuilder::tensor_meta({2}));
  s.ep.input_specs.insert(s.ep.input_specs.begin() + 2, InputSpec{InputKind::TensorConstant, "early", true, {}});
  s.ep.constants.set("early", GraphBuilder::deterministic_tensor("early", DType::Float32, {2}));
  Status st = verify(s.ep, "forward");
  EXPECT_TRUE(st.ok()) << st.error().message();
  // State checks still apply wherever the input sits.
  s.ep.constants.erase("early");
  EXPECT_FAILS_WITH(s.ep, "input spec 2 (constant 'early', %c_early): tensor constant 'early' is not in the "
                          "program's constants");
}

// ---- state ----------------------------------------------------------------

TEST_F(VerifyTest, OrphanParameter_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.parameters.set("linear.extra", Tensor::empty(DType::Float32, {3}));
  EXPECT_FAILS_WITH(ep, "method 'forward': parameter 'linear.extra' is named by no input spec (orphan state)");
}

// torch.export keeps a tied weight under every name in the state dict but
// lifts it once (fixtures/tied_embedding.pt2: head.weight aliases embed.weight).
TEST_F(VerifyTest, TiedAliasInStateIsNotAnOrphan) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.parameters.set("head.weight", *ep.parameters.find("linear.weight"));
  EXPECT_EQ(failure(ep), "");
  // Same storage but another view (a different offset) is not an alias.
  Tensor other_view = *ep.parameters.find("linear.weight");
  other_view.sizes = {1, 3};
  other_view.storage_offset = 3;
  ep.parameters.set("head.weight", other_view);
  EXPECT_FAILS_WITH(ep, "parameter 'head.weight' is named by no input spec (orphan state)");
}

TEST_F(VerifyTest, OrphanBufferAndConstant_NEG) {
  Stateful a;
  a.ep.buffers.set("stale", Tensor::empty(DType::Float32, {2}));
  EXPECT_FAILS_WITH(a.ep, "buffer 'stale' is named by no persistent buffer input spec (orphan state)");
  Stateful b;
  b.ep.constants.set("lifted_tensor_9", Tensor::empty(DType::Float32, {2}));
  EXPECT_FAILS_WITH(b.ep, "constant 'lifted_tensor_9' is named by no tensor_constant");
}

TEST_F(VerifyTest, ParameterMissingFromState_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.parameters.erase("linear.bias");
  EXPECT_FAILS_WITH(ep,
                    "input spec 1 (parameter 'linear.bias', %p_linear_bias): parameter 'linear.bias' is not in "
                    "the program's parameters");
}

TEST_F(VerifyTest, BufferStateInWrongDict_NEG) {
  Stateful a;  // persistent buffer stored as a constant
  Tensor t = *a.ep.buffers.find("bn.running_mean");
  a.ep.buffers.erase("bn.running_mean");
  a.ep.constants.set("bn.running_mean", t);
  EXPECT_FAILS_WITH(a.ep, "persistent buffer 'bn.running_mean' is not in the program's buffers");
  Stateful b;  // non-persistent buffer missing from the constants
  b.ep.constants.erase("scratch");
  EXPECT_FAILS_WITH(b.ep, "non-persistent buffer 'scratch' is not in the program's constants");
  Stateful c;
  c.ep.constants.erase("lifted_tensor_0");
  EXPECT_FAILS_WITH(c.ep, "tensor constant 'lifted_tensor_0' is not in the program's constants");
}

TEST_F(VerifyTest, TwoSpecsNameOneTarget_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.input_specs[1].target = "linear.weight";
  EXPECT_FAILS_WITH(ep,
                    "input spec 1 (parameter 'linear.weight', %p_linear_bias): names 'linear.weight', already "
                    "named by input spec 0");
}

TEST_F(VerifyTest, EmptyStateTarget_NEG) {
  ExportedProgram ep;
  build_simple_linear(ep);
  ep.input_specs[0].target.clear();
  EXPECT_FAILS_WITH(ep, "input spec 0 (parameter, %p_linear_weight): names no state entry");
}

TEST_F(VerifyTest, StateDtypeOrShapeDisagreesWithPlaceholder_NEG) {
  ExportedProgram a;
  build_simple_linear(a);
  a.parameters.set("linear.weight", Tensor::empty(DType::Int64, {3, 3}));
  EXPECT_FAILS_WITH(a, "state tensor 'linear.weight' is int64 but the placeholder is float32");
  ExportedProgram b;
  build_simple_linear(b);
  b.parameters.set("linear.bias", Tensor::empty(DType::Float32, {4}));
  EXPECT_FAILS_WITH(b, "state tensor 'linear.bias' has shape [4] but the placeholder has [3]");
}

// ---- outputs --------------------------------------------------------------

TEST_F(VerifyTest, BufferMutationAfterUserOutput_NEG) {
  Stateful s;
  Graph& g = s.ep.graph();
  GraphAssembler ga(g);
  // Move the mutation (output 0) behind the user output.
  ga.remove_output(0);
  ga.insert_output(TensorRef{s.nb});
  s.ep.output_specs.erase(s.ep.output_specs.begin());
  s.ep.output_specs.push_back(OutputSpec{OutputKind::BufferMutation, "bn.running_mean"});
  EXPECT_FAILS_WITH(s.ep,
                    "output spec 1 (buffer_mutation 'bn.running_mean', %add_2): mutation outputs must come "
                    "before user outputs, but output spec 0 is a user_output");
}

TEST_F(VerifyTest, BufferMutationNamesAParameter_NEG) {
  Stateful s;
  s.ep.output_specs[0].target = "w";
  EXPECT_FAILS_WITH(s.ep, "output spec 0 (buffer_mutation 'w', %add_2): names 'w', which is not a buffer input");
}

TEST_F(VerifyTest, UserInputMutationNamesNoUserInput_NEG) {
  Stateful s;
  s.ep.output_specs[0] = OutputSpec{OutputKind::UserInputMutation, "p_w"};
  EXPECT_FAILS_WITH(s.ep, "names 'p_w', which is not a user input");
  Stateful ok;
  ok.ep.output_specs[0] = OutputSpec{OutputKind::UserInputMutation, "x"};
  EXPECT_EQ(failure(ok.ep), "");
}

TEST_F(VerifyTest, MutationOutputIsNotATensor_NEG) {
  Stateful s;
  GraphAssembler(s.ep.graph()).set_output(0, Argument(int64_t{1}));
  EXPECT_FAILS_WITH(s.ep,
                    "output spec 0 (buffer_mutation 'bn.running_mean', a literal): must be a single tensor value");
}

TEST_F(VerifyTest, SameBufferMutatedTwice_NEG) {
  Stateful s;
  GraphBuilder b(s.ep);
  b.buffer_mutation(s.y, "bn.running_mean");
  EXPECT_FAILS_WITH(s.ep,
                    "output spec 1 (buffer_mutation 'bn.running_mean', %add_1): 'bn.running_mean' is already "
                    "mutated by output spec 0");
}

// ---- graph structure --------------------------------------------------------

TEST_F(VerifyTest, UseBeforeDefinition_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  GraphAssembler(ep.graph()).move_before(s.addmm->producer(), s.permute->producer());
  EXPECT_FAILS_WITH(ep,
                    "method 'forward': node 0 'addmm' (aten.addmm.default): argument 'mat2' uses %permute_copy "
                    "before it is defined (by 'permute_copy')");
}

TEST_F(VerifyTest, NodeOutputWithoutMeta_NEG) {
  ExportedProgram ep;
  GraphAssembler ga(ep.graph());
  SimpleLinear s = build_simple_linear(ep);
  Node* n = ga.create_node("torch.ops.aten.relu.default", {{"self", TensorRef{s.addmm}, ArgKind::Positional}});
  ga.add_node_output(n, ValueKind::Tensor, "relu");
  EXPECT_FAILS_WITH(ep, "node 2 'relu' (aten.relu.default): value %relu: tensor has no metadata");
}

TEST_F(VerifyTest, PlaceholderWithoutMeta_NEG) {
  ExportedProgram ep;
  simple_linear_with_bare_user_input(ep, ValueKind::Tensor, "y");
  EXPECT_FAILS_WITH(ep, "graph input 3 (%y): tensor has no metadata");
}

TEST_F(VerifyTest, DefinedValueNotListedAsOutput_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Value* extra = GraphAssembler(ep.graph()).new_node_value(s.addmm->producer(), ValueKind::Tensor, "extra");
  extra->set_meta(GraphBuilder::tensor_meta({1}));
  EXPECT_FAILS_WITH(ep, "node 1 'addmm' (aten.addmm.default): value %extra: is defined but not listed");
}

TEST_F(VerifyTest, TensorArgumentHoldingASymInt_NEG) {
  Value* n = b.sym_int_input("n", SymExpr{"s0", std::nullopt});
  b.call("aten.relu.default", {{"self", TensorRef{n}}}, {1});
  EXPECT_FAILS_WITH(ep, "argument 'self': tensor argument refers to %n, a sym_int");
}

TEST_F(VerifyTest, ValueFromAnotherGraph_NEG) {
  ExportedProgram other;
  SimpleLinear o = build_simple_linear(other);
  ExportedProgram ep;
  GraphAssembler ga(ep.graph());
  SimpleLinear s = build_simple_linear(ep);
  ga.set_output(0, TensorRef{o.addmm});
  EXPECT_FAILS_WITH(ep, "graph output 0 references a value that is not in the graph");
  // A node of this graph reading another graph's value: both sides notice.
  ga.set_output(0, TensorRef{s.addmm});
  Node* n = ga.create_node("torch.ops.aten.relu.default", {{"self", TensorRef{o.arg}, ArgKind::Positional}});
  ga.add_node_output(n, ValueKind::Tensor, "relu")->set_meta(GraphBuilder::tensor_meta({2, 3}));
  EXPECT_FAILS_WITH(ep, "argument 'self' references a value that is not in the graph");
  EXPECT_FAILS_WITH(other, "use-list of %arg names a node that is not in the graph");
  ASSERT_TRUE(ga.erase_node(n).ok());
  EXPECT_EQ(failure(other), "");
}

// A rewriter that edits an argument behind the graph's back (simulated with
// const_cast) leaves the use-lists wrong; verify must notice.
TEST_F(VerifyTest, UseListOutOfSyncWithArguments_NEG) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Node* mm = s.addmm->producer();
  const_cast<Argument&>(mm->inputs()[1].arg).replace_value(s.arg, s.permute);
  // %arg is reported first: placeholders are checked before node values.
  EXPECT_FAILS_WITH(ep,
                    "use-list of %arg is inconsistent: it records 1 use(s) by node 'addmm', whose "
                    "arguments reference it 0 time(s)");
}

// ---- subgraphs ----------------------------------------------------------------

struct WithCond {
  ExportedProgram ep;
  std::shared_ptr<Graph> branch = std::make_shared<Graph>();
  Value *x, *sin, *cond;
  WithCond() {
    GraphBuilder sb(*branch);
    Value* bx = sb.input("x_1", GraphBuilder::tensor_meta({2}));
    sin = sb.call("aten.sin.default", {{"self", bx}}, {2});
    sb.output(sin);
    GraphBuilder b(ep);
    x = b.user_input("x", {2});
    Value* pred = b.call("aten.gt.Scalar", {{"self", x}, {"other", 0}}, {2}, DType::Bool);
    cond = b.call("higher_order.cond",
                  {{"pred", pred},
                   {"true_fn", GraphArg{"true_graph_0", branch}},
                   {"false_fn", GraphArg{"true_graph_0", branch}},
                   {"operands", TensorList{{x}}}},
                  {2});
    b.user_output(cond);
  }
};

TEST_F(VerifyTest, SubgraphsAreVerified) {
  WithCond ok;
  EXPECT_EQ(failure(ok.ep), "");
  WithCond bad;
  GraphAssembler ga(*bad.branch);
  Node* n = ga.create_node("torch.ops.aten.cos.default", {{"self", TensorRef{bad.sin}, ArgKind::Positional}});
  ga.add_node_output(n, ValueKind::Tensor, "cos");
  EXPECT_FAILS_WITH(bad.ep,
                    "method 'forward': node 1 'cond' (higher_order.cond), subgraph 'true_graph_0': node 1 "
                    "'cos' (aten.cos.default): value %cos: tensor has no metadata");
}

TEST_F(VerifyTest, SubgraphUsesOuterValueDefinedLater_NEG) {
  WithCond w;
  GraphBuilder b(w.ep);
  Value* late = b.call("aten.neg.default", {{"self", w.x}}, {2});
  GraphAssembler ga(*w.branch);
  Node* n = ga.create_node("torch.ops.aten.add.Tensor", {{"self", TensorRef{w.sin}, ArgKind::Positional},
                                                         {"other", TensorRef{late}, ArgKind::Positional}});
  ga.add_node_output(n, ValueKind::Tensor, "add")->set_meta(GraphBuilder::tensor_meta({2}));
  EXPECT_FAILS_WITH(w.ep,
                    "subgraph 'true_graph_0': node 1 'add' (aten.add.Tensor): argument 'other' uses %neg "
                    "from an enclosing graph before it is defined there");
  // Moving the definition before the cond makes it visible.
  GraphAssembler(w.ep.graph()).move_before(late->producer(), w.cond->producer());
  EXPECT_EQ(failure(w.ep), "");
}

// ---- programs -------------------------------------------------------------------

TEST_F(VerifyTest, ProgramRules_NEG) {
  Program empty;
  EXPECT_EQ(failure(verify(empty)), "program has no methods");
  Program twice;
  build_simple_linear(twice.add_method("forward"));
  build_simple_linear(twice.add_method("forward"));
  EXPECT_EQ(failure(verify(twice)), "program has two methods named 'forward'");
  Program bad;
  build_simple_linear(bad.add_method("forward"));
  build_simple_linear(bad.add_method("decode"));
  bad.find_method("decode")->program->parameters.set("orphan", Tensor::empty(DType::Float32, {1}));
  EXPECT_EQ(failure(verify(bad)), "method 'decode': parameter 'orphan' is named by no input spec (orphan state)");
}

}  // namespace
}  // namespace lathe
