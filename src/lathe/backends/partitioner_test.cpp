// Partitioner: groups whose contraction would close a cycle through
// unclaimed nodes are kept apart, and every delegate node is placed before
// its users; the graph is reordered through the Rewriter only when needed.
#include <gtest/gtest.h>

#include <set>

#include "lathe/backends/partitioner.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/ir/verify.h"

namespace lathe {
namespace {

// Claims the nodes it is told to, by name; its payload is empty.
class ClaimByName final : public Backend {
 public:
  explicit ClaimByName(std::set<std::string> names, std::string refuse = "") : names_(std::move(names)), refuse_(std::move(refuse)) {}
  std::string_view name() const override { return "test"; }
  NodeSupport support(const Node& n, const Constness&) const override {
    return names_.count(n.name()) ? NodeSupport::yes("named") : NodeSupport::no("not named");
  }
  std::vector<std::string> ops_to_keep() const override { return {}; }
  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& sub) const override {
    for (const Node* n : sub.nodes) {
      if (n->name() == refuse_) return make_error("cannot lower '" + refuse_ + "'");
    }
    groups.push_back({});
    for (const Node* n : sub.nodes) groups.back().insert(n->name());
    return std::vector<std::byte>{std::byte{1}};
  }
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs&) const override { return make_error("not runnable"); }
  mutable std::vector<std::set<std::string>> groups;

 private:
  std::set<std::string> names_;
  std::string refuse_;
};

Value* unary(GraphBuilder& b, const char* op, Value* x, const std::string& name) {
  return b.call(std::string("aten.") + op + ".default", {{"self", x}}, {4}, DType::Float32, name);
}
Value* add(GraphBuilder& b, Value* x, Value* y, const std::string& name) {
  return b.call("aten.add.Tensor", {{"self", x}, {"other", y}}, {4}, DType::Float32, name);
}

// a1 -> v -> b2 and b1 -> u -> a2, with u and v unclaimed: {a1, a2} and
// {b1, b2} are each convex, yet contracting both gives A -> B -> A. The
// partitioner used to build both and then fail to place the second
// delegate ("... is not defined before its new user ...").
TEST(Partitioner, CrossedGroupsThroughUnclaimedNodesStayAcyclic) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4});
  Value* a1 = unary(b, "relu", x, "a1");
  Value* b1 = unary(b, "relu", x, "b1");
  Value* u = unary(b, "neg", b1, "u");
  Value* v = unary(b, "neg", a1, "v");
  Value* a2 = add(b, a1, u, "a2");
  Value* b2 = add(b, b1, v, "b2");
  b.user_output(a2);
  b.user_output(b2);
  ClaimByName backend({"a1", "a2", "b1", "b2"});
  auto report = partition(ep, backend);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(verify(ep, "model").ok());
  // No group may hold both a node of A's chain and one it reaches through
  // an unclaimed node: b2 (reached from a1 via v) cannot join b1's group
  // once a2 (reached from b1 via u) is in a1's.
  for (const auto& g : backend.groups) EXPECT_FALSE(g.count("b1") && g.count("b2")) << "b1 and b2 grouped";
  EXPECT_EQ(report->claimed_nodes, 4);
}

// A node between a group's members that the group does not need moves
// after the delegate only if it reads the group; otherwise it stays first.
TEST(Partitioner, NodesBetweenMembersMoveOnlyWhenTheyReadTheGroup) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4});
  Value* c1 = unary(b, "relu", x, "c1");
  Value* reads = unary(b, "neg", c1, "reads_group");  // unclaimed, between members
  Value* free = unary(b, "neg", x, "independent");    // unclaimed, between members
  Value* c2 = unary(b, "sigmoid", c1, "c2");
  b.user_output(c2);
  b.user_output(reads);
  b.user_output(free);
  ClaimByName backend({"c1", "c2"});
  auto report = partition(ep, backend);
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_TRUE(verify(ep, "model").ok());
  std::vector<std::string> order;
  for (const Node* n : ep.graph().nodes()) order.push_back(n->op_name().starts_with("lathe.delegate.") ? "delegate" : n->name());
  EXPECT_EQ(order, (std::vector<std::string>{"delegate", "reads_group", "independent"}));
}

// _NEG: every group is preprocessed before anything changes, so a backend
// that fails on the second group leaves the program exactly as it was.
TEST(Partitioner, APreprocessFailureLeavesTheProgramUntouched_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4});
  Value* a = unary(b, "relu", x, "a");
  Value* cut = unary(b, "neg", a, "cut");  // unclaimed: two groups
  b.user_output(unary(b, "relu", cut, "z"));
  ClaimByName backend({"a", "z"}, "z");
  std::vector<std::string> before;
  for (const Node* n : ep.graph().nodes()) before.push_back(n->name());
  auto report = partition(ep, backend);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message().find("cannot lower 'z'"), std::string::npos) << report.error().message();
  std::vector<std::string> after;
  for (const Node* n : ep.graph().nodes()) after.push_back(n->name());
  EXPECT_EQ(after, before);
  EXPECT_EQ(ep.constants.size(), 0u);
}

// _NEG: a backend that claims nothing leaves the graph untouched.
TEST(Partitioner, NothingClaimedChangesNothing_NEG) {
  ExportedProgram ep;
  GraphBuilder b(ep);
  Value* x = b.user_input("x", {4});
  b.user_output(unary(b, "neg", unary(b, "relu", x, "r"), "n"));
  ClaimByName backend({});
  auto report = partition(ep, backend);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->delegates, 0);
  EXPECT_EQ(ep.graph().node_count(), 2u);
}

}  // namespace
}  // namespace lathe
