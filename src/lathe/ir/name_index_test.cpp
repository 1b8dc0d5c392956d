// The graph's name index against a std::map model, through the Graph API
// (create, erase, rename), many times over so that growth and
// backward-shift deletion across the table's wrap-around are exercised.
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/name_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "lathe/ir/graph.h"

namespace lathe {
namespace {

// A graph of relu(x) nodes and, beside it, what its name index must say.
struct Modelled {
  Graph g;
  GraphAssembler ga{g};
  Value* x = ga.insert_placeholder(ValueKind::Tensor, "x");
  std::map<std::string, Value*> model{{"x", x}};
  std::vector<Node*> nodes;

  Value* create(const std::string& name) {
    Node* n = ga.create_node("torch.ops.aten.relu.default", {NamedArgument{"self", TensorRef{x}, ArgKind::Positional}});
    Value* v = ga.add_node_output(n, ValueKind::Tensor, name);
    EXPECT_EQ(model.count(v->name()), 0u) << v->name();
    model[v->name()] = v;
    nodes.push_back(n);
    return v;
  }
};

TEST(NameIndex, AgreesWithAMapThroughCreateEraseAndRename) {
  Modelled m;
  auto& [g, ga, x, model, live] = m;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 6 || live.empty()) {  // create (names collide on purpose: unique_name resolves them)
      m.create("v" + std::to_string(rng() % 500));
    } else if (op < 9) {  // erase a random node
      size_t i = rng() % live.size();
      std::string name = live[i]->output()->name();
      ASSERT_TRUE(ga.erase_node(live[i]).ok());
      model.erase(name);
      live[i] = live.back();
      live.pop_back();
    } else {  // rename to a fresh name
      Value* v = live[rng() % live.size()]->output();
      std::string old = v->name(), fresh = "r" + std::to_string(step);
      ASSERT_TRUE(ga.rename(v, fresh).ok());
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

// A large table queues erasures (a few in flight, their slots prefetched)
// and carries them out before the next lookup or insertion, or at
// settle(). Erase many, then check every name; create
// values whose storage is the erased ones' (the pools reuse it) under the
// erased names; rename across; all against the model.
TEST(NameIndex, LargeGraphQueuedErasuresAgreeWithAMap) {
  Modelled m;
  auto& [g, ga, x, model, nodes] = m;
  auto create = [&](const std::string& name) { return m.create(name); };
  for (int i = 0; i < 50000; ++i) create("v" + std::to_string(i));  // table well past the deferral size
  std::mt19937 rng(11);
  std::vector<std::string> erased;
  for (int round = 0; round < 3; ++round) {
    // Erase about half the nodes, back to front (as remove_dead_code does).
    std::vector<Node*> kept;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      if (rng() % 2) {
        kept.push_back(*it);
        continue;
      }
      std::string name = (*it)->output()->name();
      ASSERT_TRUE(ga.erase_node(*it).ok());
      model.erase(name);
      erased.push_back(name);
    }
    nodes.assign(kept.rbegin(), kept.rend());
    if (round == 1) g.settle();  // explicitly once; the other rounds settle on lookup
    for (const auto& [name, v] : model) ASSERT_EQ(g.find_value(name), v) << "round " << round << " " << name;
    for (size_t i = 0; i < erased.size(); i += 97) ASSERT_EQ(g.find_value(erased[i]), nullptr) << erased[i];
    // New values under erased names, in reused storage.
    for (size_t i = 0; i < 2000; ++i) {
      Value* v = create(erased.back());
      EXPECT_EQ(v->name(), erased.back());  // free again, so not renamed
      erased.pop_back();
    }
    // Erase a few more, then rename others to their names.
    for (int i = 0; i < 50; ++i) {
      Node* n = nodes.back();
      std::string freed = n->output()->name();
      ASSERT_TRUE(ga.erase_node(n).ok());
      nodes.pop_back();
      model.erase(freed);
      Value* r = nodes[rng() % nodes.size()]->output();
      std::string old = r->name();
      ASSERT_TRUE(ga.rename(r, freed).ok()) << old << " -> " << freed;
      model.erase(old);
      model[freed] = r;
    }
  }
  for (const auto& [name, v] : model) EXPECT_EQ(g.find_value(name), v) << name;
  EXPECT_EQ(g.find_value("v50000"), nullptr);
}

TEST(NameIndex, InsertIfAbsentRefusesATakenNameAndKeepsTheFirst_NEG) {
  Graph g;
  GraphAssembler ga{g};
  Value* a = ga.insert_placeholder(ValueKind::Tensor, "a");
  Value* b = ga.insert_placeholder(ValueKind::Tensor, "b");
  NameIndex index;
  EXPECT_TRUE(index.insert_if_absent(a));
  EXPECT_TRUE(index.insert_if_absent(b));
  EXPECT_FALSE(index.insert_if_absent(a));  // its own name, now taken
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.find("a"), a);
  EXPECT_EQ(index.find("b"), b);
  // Through the graph: a taken name is made unique, the first value keeps it.
  Value* again = ga.insert_placeholder(ValueKind::Tensor, "a");
  EXPECT_EQ(again->name(), "a_1");
  EXPECT_EQ(g.find_value("a"), a);
  EXPECT_EQ(g.find_value("a_1"), again);
}

TEST(NameIndex, RenameToATakenNameIsRefusedAndChangesNothing_NEG) {
  Graph g;
  GraphAssembler ga(g);
  Value* a = ga.insert_placeholder(ValueKind::Tensor, "a");
  Value* b = ga.insert_placeholder(ValueKind::Tensor, "b");
  EXPECT_FALSE(ga.rename(a, "b").ok());
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
  GraphAssembler ga(g);
  Value* x = ga.insert_placeholder(ValueKind::Tensor, "x");
  for (int i = 0; i < 10; ++i) {
    Node* n = ga.create_node("torch.ops.aten.relu.default", {NamedArgument{"self", TensorRef{x}, ArgKind::Positional}});
    ga.add_node_output(n, ValueKind::Tensor, "r");
  }
  int visited = 0;
  for (Node* n : g.nodes()) {
    ++visited;
    ASSERT_TRUE(ga.erase_node(n).ok());
  }
  EXPECT_EQ(visited, 10);
  EXPECT_EQ(g.node_count(), 0u);
}

}  // namespace
}  // namespace lathe
