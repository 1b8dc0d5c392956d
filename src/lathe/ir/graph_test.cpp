// Graph mutation keeps use-lists exact; replace_all_uses moves outputs (and
// so what the output spec at that position describes).
#include "lathe/ir/graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"

namespace lathe {
namespace {

size_t uses_by(const Value* v, const Node* user) {
  return static_cast<size_t>(std::count(v->uses().begin(), v->uses().end(), Use{const_cast<Node*>(user)}));
}

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> out;
  for (Node* n : g.nodes()) out.push_back(n->name());
  return out;
}

// Placeholders x and y; n = mul(x, x).
struct SquareOfX {
  Graph g;
  GraphAssembler ga{g};
  Value* x = ga.insert_placeholder(ValueKind::Tensor, "x");
  Value* y = ga.insert_placeholder(ValueKind::Tensor, "y");
  Node* n = ga.create_node("torch.ops.aten.mul.Tensor",
                           {{"self", TensorRef{x}, ArgKind::Positional}, {"other", TensorRef{x}, ArgKind::Positional}});
};

TEST(GraphTest, CreateNodeRecordsOneUsePerReference) {
  SquareOfX s;
  auto& [g, ga, x, y, n] = s;
  EXPECT_EQ(x->user_count(), 2u);
  EXPECT_EQ(uses_by(x, n), 2u);
  EXPECT_FALSE(y->has_uses());
  // Nested lists count every occurrence too.
  Node* cat = ga.create_node("torch.ops.aten.cat.default", {{"tensors", TensorList{{x, y, x}}, ArgKind::Positional}});
  EXPECT_EQ(uses_by(x, cat), 2u);
  EXPECT_EQ(uses_by(y, cat), 1u);
  EXPECT_EQ(x->user_count(), 4u);
}

TEST(GraphTest, SetInputMovesTheUse) {
  SquareOfX s;
  auto& [g, ga, x, y, n] = s;
  ga.set_input(n, 1, TensorRef{y});
  EXPECT_EQ(uses_by(x, n), 1u);
  EXPECT_EQ(uses_by(y, n), 1u);
  EXPECT_EQ(n->inputs()[1].arg.tensor(), y);
  ga.set_inputs(n, {{"self", TensorRef{y}, ArgKind::Positional}});
  EXPECT_FALSE(x->has_uses());
  EXPECT_EQ(uses_by(y, n), 1u);
}

TEST(GraphTest, GraphOutputsAreUses) {
  Graph g;
  GraphAssembler ga(g);
  Value* x = ga.insert_placeholder(ValueKind::Tensor, "x");
  ga.insert_output(TensorRef{x});
  ga.insert_output(TensorRef{x});
  EXPECT_EQ(uses_by(x, nullptr), 2u);
  ga.remove_output(0);
  EXPECT_EQ(uses_by(x, nullptr), 1u);
  Value* y = ga.insert_placeholder(ValueKind::Tensor, "y");
  ga.set_output(0, TensorRef{y});
  EXPECT_FALSE(x->has_uses());
  EXPECT_EQ(uses_by(y, nullptr), 1u);
}

TEST(GraphTest, EraseNodeDropsItsUsesAndName) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Graph& g = ep.graph();
  GraphAssembler ga(g);
  Node* addmm = s.addmm->producer();
  ga.remove_output(0);
  ep.output_specs.clear();
  ASSERT_TRUE(ga.erase_node(addmm).ok());
  EXPECT_FALSE(s.bias->has_uses());
  EXPECT_FALSE(s.arg->has_uses());
  EXPECT_FALSE(s.permute->has_uses());
  EXPECT_EQ(g.find_value("addmm"), nullptr);
  EXPECT_EQ(node_names(g), std::vector<std::string>{"permute_copy"});
  EXPECT_TRUE(verify(ep, "forward").ok());
}

TEST(GraphTest, EraseNode_NEG_RefusesNodeWithUses) {
  ExportedProgram ep;
  GraphAssembler ga(ep.graph());
  SimpleLinear s = build_simple_linear(ep);
  Status st = ga.erase_node(s.permute->producer());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("cannot erase node 'permute_copy'"), std::string::npos) << st.error().message();
  EXPECT_NE(st.error().message().find("1 use(s)"), std::string::npos);
  // The addmm is used only by the graph output, and that counts.
  EXPECT_FALSE(ga.erase_node(s.addmm->producer()).ok());
  EXPECT_EQ(ep.graph().node_count(), 2u);
  EXPECT_TRUE(verify(ep, "forward").ok());
}

// linear-rewrite.md §1: replacing the node that produces an output must move
// the output (and so what its spec describes) to the new value.
TEST(GraphTest, ReplaceAllUsesMovesNodeArgumentsAndGraphOutputs) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  GraphBuilder b(ep);
  Graph& g = ep.graph();
  GraphAssembler ga(g);
  // A consumer of addmm besides the output, to see both kinds of use move.
  Value* relu = b.call("aten.relu.default", {{"self", s.addmm}}, {2, 3});
  b.user_output(relu);
  Value* linear = b.call("aten.linear.default", {{"input", s.arg}, {"weight", s.weight}, {"bias", s.bias}}, {2, 3});
  ga.move_before(linear->producer(), s.addmm->producer());

  ga.replace_all_uses(s.addmm, linear);
  EXPECT_FALSE(s.addmm->has_uses());
  EXPECT_EQ(g.outputs()[0].tensor(), linear);
  EXPECT_EQ(relu->producer()->inputs()[0].arg.tensor(), linear);
  EXPECT_EQ(uses_by(linear, nullptr), 1u);
  EXPECT_EQ(uses_by(linear, relu->producer()), 1u);
  ASSERT_TRUE(verify(ep, "forward").ok());

  ASSERT_TRUE(ga.erase_node(s.addmm->producer()).ok());
  ASSERT_TRUE(ga.erase_node(s.permute->producer()).ok());
  ASSERT_TRUE(verify(ep, "forward").ok());
  // Output spec 0 is still the user output, now of %linear: no stale name.
  EXPECT_EQ(ep.output_specs[0].kind, OutputKind::UserOutput);
  EXPECT_NE(print_program(ep).find("  %linear  user_output\n"), std::string::npos) << print_program(ep);
}

TEST(GraphTest, ReplaceAllUsesCountsRepeatedReferences) {
  Graph g;
  GraphAssembler ga(g);
  Value* x = ga.insert_placeholder(ValueKind::Tensor, "x");
  Value* y = ga.insert_placeholder(ValueKind::Tensor, "y");
  Node* n = ga.create_node("torch.ops.aten.cat.default", {{"tensors", TensorList{{x, x, y}}, ArgKind::Positional}});
  ga.insert_output(TensorRef{x});
  ga.insert_output(TensorList{{x, y}});
  ga.replace_all_uses(x, y);
  EXPECT_FALSE(x->has_uses());
  EXPECT_EQ(uses_by(y, n), 3u);
  EXPECT_EQ(uses_by(y, nullptr), 3u);
  EXPECT_EQ(n->inputs()[0].arg.as<TensorList>().items, (std::vector<Value*>{y, y, y}));
  EXPECT_EQ(g.outputs()[1].as<TensorList>().items, (std::vector<Value*>{y, y}));
}

TEST(GraphTest, RemoveInputOfUnusedPlaceholderFreesItsName) {
  Graph g;
  GraphAssembler ga(g);
  ga.insert_placeholder(ValueKind::Tensor, "x");
  Value* y = ga.insert_placeholder(ValueKind::Tensor, "y");
  ASSERT_TRUE(ga.remove_input(0).ok());
  EXPECT_EQ(g.placeholders(), std::vector<Value*>{y});
  EXPECT_EQ(g.find_value("x"), nullptr);
  EXPECT_EQ(ga.insert_placeholder(ValueKind::Tensor, "x")->name(), "x");
}

TEST(GraphTest, RemoveInput_NEG_RefusesUsedPlaceholder) {
  ExportedProgram ep;
  GraphAssembler ga(ep.graph());
  SimpleLinear s = build_simple_linear(ep);
  Status st = ga.remove_input(0);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("cannot remove input 'p_linear_weight'"), std::string::npos)
      << st.error().message();
  EXPECT_EQ(ep.graph().inputs().size(), 3u);
  EXPECT_EQ(ep.graph().inputs()[0].tensor(), s.weight);
  EXPECT_FALSE(ga.remove_input(7).ok());
}

TEST(GraphTest, UniqueNameDerivesFreshNames) {
  Graph g;
  GraphAssembler ga(g);
  EXPECT_EQ(g.unique_name("addmm"), "addmm");  // free: kept as is
  ga.insert_placeholder(ValueKind::Tensor, "addmm");
  EXPECT_EQ(g.unique_name("addmm"), "addmm_1");
  // Values created under a taken name are renamed, never shadowed.
  Value* a = ga.insert_placeholder(ValueKind::Tensor, "addmm");
  Value* b = ga.insert_placeholder(ValueKind::Tensor, "addmm");
  EXPECT_NE(a->name(), "addmm");
  EXPECT_NE(b->name(), a->name());
  EXPECT_EQ(g.find_value(a->name()), a);
  EXPECT_EQ(g.find_value(b->name()), b);
  // A suffix already taken explicitly is skipped.
  ga.insert_placeholder(ValueKind::Tensor, "mm");
  ga.insert_placeholder(ValueKind::Tensor, "mm_1");
  EXPECT_EQ(g.unique_name("mm"), "mm_2");
}

TEST(GraphTest, RenameUpdatesLookup) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Graph& g = ep.graph();
  GraphAssembler ga(g);
  ASSERT_TRUE(ga.rename(s.addmm, "linear").ok());
  EXPECT_EQ(s.addmm->name(), "linear");
  EXPECT_EQ(g.find_value("linear"), s.addmm);
  EXPECT_EQ(g.find_value("addmm"), nullptr);
  EXPECT_TRUE(ga.rename(s.addmm, "linear").ok());  // to its own name: no-op
  EXPECT_TRUE(verify(ep, "forward").ok());
}

TEST(GraphTest, Rename_NEG_RefusesTakenName) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Status st = GraphAssembler(ep.graph()).rename(s.addmm, "arg");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("name taken"), std::string::npos);
  EXPECT_EQ(s.addmm->name(), "addmm");
  EXPECT_EQ(ep.graph().find_value("arg"), s.arg);
}

TEST(GraphTest, MoveBeforeReorders) {
  ExportedProgram ep;
  SimpleLinear s = build_simple_linear(ep);
  Graph& g = ep.graph();
  GraphAssembler ga(g);
  ga.move_before(s.addmm->producer(), s.permute->producer());
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"addmm", "permute_copy"}));
  ga.move_before(s.addmm->producer(), nullptr);  // to the end
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"permute_copy", "addmm"}));
  EXPECT_EQ(g.last_node(), s.addmm->producer());
}

// The copy's name index is the original's table with every value swapped for
// its copy: lookups, uses and fresh names behave as on the original, and an
// erasure in the copy leaves the original alone.
TEST(GraphTest, CloneFindsItsOwnValuesByNameAndDerivesTheSameNames) {
  SquareOfX s;
  auto& [g, ga, x, y, n] = s;
  Value* sq = ga.add_node_output(n, ValueKind::Tensor, "sq");
  ga.insert_output(TensorRef{sq});
  ga.insert_placeholder(ValueKind::Tensor, "sq");  // renamed: sq_1
  std::unique_ptr<Graph> copy = g.clone();
  for (const char* name : {"x", "y", "sq", "sq_1"}) {
    SCOPED_TRACE(name);
    Value* original = g.find_value(name);
    Value* cloned = copy->find_value(name);
    ASSERT_NE(original, nullptr);
    ASSERT_NE(cloned, nullptr);
    EXPECT_NE(cloned, original);
    EXPECT_EQ(cloned->graph(), copy.get());
    EXPECT_EQ(cloned->user_count(), original->user_count());
  }
  EXPECT_EQ(copy->find_value("sq")->producer(), copy->first_node());
  EXPECT_EQ(copy->unique_name("sq"), g.unique_name("sq"));
  EXPECT_EQ(copy->find_value("z"), nullptr);
  GraphAssembler copy_ga(*copy);
  copy_ga.remove_output(0);
  ASSERT_TRUE(copy_ga.erase_node(copy->first_node()).ok());
  EXPECT_EQ(copy->find_value("sq"), nullptr);
  EXPECT_EQ(g.find_value("sq"), sq);
  EXPECT_EQ(copy->find_value("x")->user_count(), 0u);
  EXPECT_EQ(x->user_count(), 2u);
  EXPECT_EQ(g.node_count(), 1u);
}

}  // namespace
}  // namespace lathe
