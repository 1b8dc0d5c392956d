// Partitioner: groups whose contraction would close a cycle through
// unclaimed nodes are kept apart, and every delegate node is placed before
// its users; the graph is reordered through the Rewriter only when needed.
// The delegate node's arguments, names and report; a later delegate reading
// an earlier one's output; a failed preprocess changing nothing (_NEG).
#include <gtest/gtest.h>

#include <set>
#include <string>

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

// Every test builds a small program over x: f32[4] and partitions it.
class Partitioner : public ::testing::Test {
 protected:
  Value* unary(const char* op, Value* in, const std::string& name) {
    return b.call(std::string("aten.") + op + ".default", {{"self", in}}, {4}, DType::Float32, name);
  }
  Value* add(Value* l, Value* r, const std::string& name) {
    return b.call("aten.add.Tensor", {{"self", l}, {"other", r}}, {4}, DType::Float32, name);
  }
  // Partitions with `backend`; the program must still verify.
  PartitionReport run(const Backend& backend) {
    auto report = partition(ep, backend);
    EXPECT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(verify_text(), "");
    return report.ok() ? *report : PartitionReport{};
  }
  std::string verify_text() const {
    Status s = verify(ep, "model");
    return s.ok() ? "" : s.error().message();
  }
  std::vector<std::string> node_order() const {
    std::vector<std::string> order;
    for (const Node* n : ep.graph().nodes()) order.push_back(n->op_name().starts_with("lathe.delegate.") ? "delegate" : n->name());
    return order;
  }

  ExportedProgram ep;
  GraphBuilder b{ep};
  Value* x = b.user_input("x", {4});
};

// a1 -> v -> b2 and b1 -> u -> a2, with u and v unclaimed: {a1, a2} and
// {b1, b2} are each convex, yet contracting both gives A -> B -> A. The
// partitioner used to build both and then fail to place the second
// delegate ("... is not defined before its new user ...").
TEST_F(Partitioner, CrossedGroupsThroughUnclaimedNodesStayAcyclic) {
  Value* a1 = unary("relu", x, "a1");
  Value* b1 = unary("relu", x, "b1");
  Value* u = unary("neg", b1, "u");
  Value* v = unary("neg", a1, "v");
  Value* a2 = add(a1, u, "a2");
  Value* b2 = add(b1, v, "b2");
  b.user_output(a2);
  b.user_output(b2);
  ClaimByName backend({"a1", "a2", "b1", "b2"});
  const PartitionReport report = run(backend);
  // No group may hold both a node of A's chain and one it reaches through
  // an unclaimed node: b2 (reached from a1 via v) cannot join b1's group
  // once a2 (reached from b1 via u) is in a1's.
  for (const auto& g : backend.groups) EXPECT_FALSE(g.count("b1") && g.count("b2")) << "b1 and b2 grouped";
  EXPECT_EQ(report.claimed_nodes, 4);
}

// A node between a group's members that the group does not need moves
// after the delegate only if it reads the group; otherwise it stays first.
TEST_F(Partitioner, NodesBetweenMembersMoveOnlyWhenTheyReadTheGroup) {
  Value* c1 = unary("relu", x, "c1");
  Value* reads = unary("neg", c1, "reads_group");  // unclaimed, between members
  Value* free = unary("neg", x, "independent");    // unclaimed, between members
  Value* c2 = unary("sigmoid", c1, "c2");
  b.user_output(c2);
  b.user_output(reads);
  b.user_output(free);
  ClaimByName backend({"c1", "c2"});
  EXPECT_EQ(run(backend).delegates, 1);
  EXPECT_EQ(node_order(), (std::vector<std::string>{"delegate", "reads_group", "independent"}));
}

// The delegate node: target lathe.delegate.<backend>, `payload` a new lifted
// uint8 constant holding preprocess()'s bytes, `inputs` every value the
// group reads from outside (weights included, in first-use order); its
// outputs take over the names and the users of the values that escape.
TEST_F(Partitioner, TheDelegateNodeReadsThePayloadAndEveryOutsideValue) {
  Value* w = b.parameter("w", {4});
  Value* m = b.call("aten.mul.Tensor", {{"self", x}, {"other", w}}, {4}, DType::Float32, "m");
  Value* r = unary("relu", m, "r");
  b.user_output(unary("neg", r, "n"));
  ClaimByName backend({"m", "r"});
  const PartitionReport report = run(backend);
  EXPECT_EQ(node_order(), (std::vector<std::string>{"delegate", "n"}));
  const Node* d = ep.graph().first_node();
  EXPECT_EQ(d->target(), "lathe.delegate.test");
  ASSERT_EQ(d->inputs().size(), 2u);
  EXPECT_EQ(d->inputs()[0].name, "payload");
  const Value* payload = d->inputs()[0].arg.tensor();
  ASSERT_NE(payload, nullptr);
  EXPECT_EQ(payload->name(), "c_lathe_delegate_test_0");
  const Tensor* record = ep.constants.find("lathe_delegate_test_0");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->dtype, DType::UInt8);
  EXPECT_EQ(record->sizes, std::vector<int64_t>{1});
  EXPECT_EQ(record->storage->data()[0], std::byte{1});
  EXPECT_EQ(d->inputs()[1].name, "inputs");
  EXPECT_EQ(d->inputs()[1].arg.as<TensorList>().items, (std::vector<Value*>{x, w}));
  ASSERT_EQ(d->defined_values().size(), 1u);
  EXPECT_EQ(d->defined_values()[0]->name(), "r");  // only r escapes; m stays inside
  EXPECT_EQ(report.delegates, 1);
  EXPECT_EQ(report.claimed_nodes, 2);
  ASSERT_EQ(report.decisions.size(), 3u);
  EXPECT_EQ(report.decisions[0].node, "m");
  EXPECT_EQ(report.decisions[0].op, "aten.mul.Tensor");
  EXPECT_EQ(report.decisions[0].delegate, 0);
  EXPECT_EQ(report.decisions[2].reason, "not named");
  EXPECT_EQ(report.decisions[2].delegate, -1);
}

// a -> n -> c with c also reading a: c cannot join a's group (n, unclaimed,
// would sit inside the contraction), so it is a second delegate, and what
// it reads of the first group it reads from the first delegate's output.
TEST_F(Partitioner, ALaterDelegateReadsAnEarlierOnesOutput) {
  Value* a = unary("relu", x, "a");
  Value* n = unary("neg", a, "n");
  b.user_output(add(a, n, "c"));
  ClaimByName backend({"a", "c"});
  const PartitionReport report = run(backend);
  EXPECT_EQ(report.delegates, 2);
  EXPECT_EQ(node_order(), (std::vector<std::string>{"delegate", "n", "delegate"}));
  const Node* first = ep.graph().first_node();
  const Node* second = ep.graph().last_node();
  const std::vector<Value*>& reads = second->inputs()[1].arg.as<TensorList>().items;
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[0], first->defined_values()[0]);
  EXPECT_EQ(reads[0]->name(), "a");
  EXPECT_EQ(reads[1]->producer()->name(), "n");
  EXPECT_TRUE(ep.constants.find("lathe_delegate_test_1"));
}

// _NEG: a state name already taken is not reused for the payload.
TEST_F(Partitioner, ThePayloadConstantTakesAFreeName_NEG) {
  Value* taken = b.constant("lathe_delegate_test_0", {4});
  b.user_output(add(x, taken, "s"));
  ClaimByName backend({"s"});
  EXPECT_EQ(run(backend).delegates, 1);
  EXPECT_EQ(ep.constants.find("lathe_delegate_test_0")->dtype, DType::Float32);  // untouched
  const Tensor* record = ep.constants.find("lathe_delegate_test_0_1");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->dtype, DType::UInt8);
}

// _NEG: every group is preprocessed before anything changes, so a backend
// that fails on the second group leaves the program exactly as it was.
TEST_F(Partitioner, APreprocessFailureLeavesTheProgramUntouched_NEG) {
  Value* a = unary("relu", x, "a");
  Value* cut = unary("neg", a, "cut");  // unclaimed: two groups
  b.user_output(unary("relu", cut, "z"));
  ClaimByName backend({"a", "z"}, "z");
  const std::vector<std::string> before = node_order();
  auto report = partition(ep, backend);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.error().message().find("cannot lower 'z'"), std::string::npos) << report.error().message();
  EXPECT_EQ(node_order(), before);
  EXPECT_EQ(ep.constants.size(), 0u);
}

// _NEG: a backend that claims nothing leaves the graph untouched.
TEST_F(Partitioner, NothingClaimedChangesNothing_NEG) {
  b.user_output(unary("neg", unary("relu", x, "r"), "n"));
  ClaimByName backend({});
  EXPECT_EQ(run(backend).delegates, 0);
  EXPECT_EQ(ep.graph().node_count(), 2u);
}

}  // namespace
}  // namespace lathe
