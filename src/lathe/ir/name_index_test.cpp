// The graph's name index against a std::map model, through the Graph API
// (create, erase, rename), many times over so that growth and
// backward-shift deletion across the table's wrap-around are exercised.
#include "lathe/ir/name_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "lathe/ir/graph.h"

namespace lathe {
namespace {

TEST(NameIndex, AgreesWithAMapThroughCreateEraseAndRename) {
  Graph g;
  Value* x = g.insert_placeholder(ValueKind::Tensor, "x");
  std::map<std::string, Value*> model{{"x", x}};
  std::vector<Node*> live;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 6 || live.empty()) {  // create (names collide on purpose: unique_name resolves them)
      Node* n = g.create_node("torch.ops.aten.relu.default", {NamedArgument{"self", TensorRef{x}, ArgKind::Positional}});
      Value* v = g.add_node_output(n, ValueKind::Tensor, "v" + std::to_string(rng() % 500));
      ASSERT_EQ(model.count(v->name()), 0u) << v->name();
      model[v->name()] = v;
      live.push_back(n);
    } else if (op < 9) {  // erase a random node
      size_t i = rng() % live.size();
      std::string name = live[i]->output()->name();
      ASSERT_TRUE(g.erase_node(live[i]).ok());
      model.erase(name);
      live[i] = live.back();
      live.pop_back();
    } else {  // rename to a fresh name
      Value* v = live[rng() % live.size()]->output();
      std::string old = v->name(), fresh = "r" + std::to_string(step);
      ASSERT_TRUE(g.rename(v, fresh).ok());
      model.erase(old);
      model[fresh] = v;
    }
    if (step % 997 == 0) {
      for (const auto& [name, v] : model) ASSERT_EQ(g.find_value(name), v) << "step " << step << " " << name;
    }
  }
  for (const auto& [name, v] : model) EXPECT_EQ(g.find_value(name), v) << name;
  // Erased and never-used names are absent.
  for (int i = 0; i < 500; ++i) {
    std::string name = "v" + std::to_string(i);
    if (!model.count(name)) {
      EXPECT_EQ(g.find_value(name), nullptr) << name;
    }
  }
  EXPECT_EQ(g.find_value("nope"), nullptr);
}

TEST(NameIndex, RenameToATakenNameIsRefusedAndChangesNothing_NEG) {
  Graph g;
  Value* a = g.insert_placeholder(ValueKind::Tensor, "a");
  Value* b = g.insert_placeholder(ValueKind::Tensor, "b");
  EXPECT_FALSE(g.rename(a, "b").ok());
  EXPECT_EQ(g.find_value("a"), a);
  EXPECT_EQ(g.find_value("b"), b);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// Graph::nodes() promises that erasing the node being visited is safe (the
// iterator has already read its successor). Under ASan a broken promise is
// a use-after-free; without it, the visit count would be wrong.
TEST(GraphNodes, ErasingTheCurrentNodeWhileIteratingVisitsEveryNodeOnce) {
  Graph g;
  Value* x = g.insert_placeholder(ValueKind::Tensor, "x");
  for (int i = 0; i < 10; ++i) {
    Node* n = g.create_node("torch.ops.aten.relu.default", {NamedArgument{"self", TensorRef{x}, ArgKind::Positional}});
    g.add_node_output(n, ValueKind::Tensor, "r");
  }
  int visited = 0;
  for (Node* n : g.nodes()) {
    ++visited;
    ASSERT_TRUE(g.erase_node(n).ok());
  }
  EXPECT_EQ(visited, 10);
  EXPECT_EQ(g.node_count(), 0u);
}

}  // namespace
}  // namespace lathe
