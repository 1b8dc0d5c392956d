// GraphAssembler: the Graph's mutators without the Rewriter's checks.
//
// A Graph's mutators are private: passes, backends and everything else that
// changes a program go through the Rewriter (ARCHITECTURE invariant 2),
// which keeps the graph, the signature and the state in step and refuses
// anything that would break them. GraphAssembler is the one other way in,
// for code that builds a graph rather than rewrites one:
//
//   - the .pt2 reader, which creates values and nodes in the file's order
//     and verifies the program once it is whole;
//   - GraphBuilder (tests, benchmarks) and constant_propagation's scratch
//     copy of the nodes it folds;
//   - tests of Graph itself and of verify(), which break graphs on purpose.
//
// Each call is the Graph primitive of the same name (graph.h documents them).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/ir/graph.h"

namespace lathe {

class GraphAssembler {
 public:
  explicit GraphAssembler(Graph& graph) : g_(&graph) {}

  Graph& graph() { return *g_; }

  // ---- building ----
  Value* insert_placeholder(ValueKind kind, std::string name, size_t position = SIZE_MAX) {
    return g_->insert_placeholder(kind, std::move(name), position);
  }
  void insert_literal_input(Argument literal, size_t position = SIZE_MAX) {
    g_->insert_literal_input(std::move(literal), position);
  }
  Node* create_node(std::string_view target, std::vector<NamedArgument> inputs, Node* before = nullptr) {
    return g_->create_node(target, std::move(inputs), before);
  }
  Node* create_node(OpTarget target, std::vector<NamedArgument> inputs, Node* before = nullptr) {
    return g_->create_node(target, std::move(inputs), before);
  }
  Value* add_node_output(Node* node, ValueKind kind, std::string name) {
    return g_->add_node_output(node, kind, std::move(name));
  }
  Value* new_node_value(Node* node, ValueKind kind, std::string name) {
    return g_->new_node_value(node, kind, std::move(name));
  }
  void set_node_outputs(Node* node, std::vector<Argument> outputs) { g_->set_node_outputs(node, std::move(outputs)); }
  void insert_output(Argument arg, size_t position = SIZE_MAX) { g_->insert_output(std::move(arg), position); }
  void set_single_tensor_return(bool v) { g_->set_single_tensor_return(v); }

  // ---- editing, unchecked ----
  Status remove_input(size_t position) { return g_->remove_input(position); }
  void set_output(size_t position, Argument arg) { g_->set_output(position, std::move(arg)); }
  void remove_output(size_t position) { g_->remove_output(position); }
  void set_inputs(Node* node, std::vector<NamedArgument> inputs) { node->set_inputs(std::move(inputs)); }
  void set_input(Node* node, size_t index, Argument arg) { node->set_input(index, std::move(arg)); }
  Status erase_node(Node* node) { return g_->erase_node(node); }
  void move_before(Node* node, Node* before) { g_->move_before(node, before); }
  void replace_all_uses(Value* from, Value* to) { g_->replace_all_uses(from, to); }
  Status rename(Value* value, const std::string& name) { return g_->rename(value, name); }

 private:
  Graph* g_;
};

}  // namespace lathe
