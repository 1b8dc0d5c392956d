// A Graph: placeholders (inputs), nodes in topological order, and outputs.
//
// The top-level graph of an ExportedProgram has one input spec per input and
// one output spec per output, aligned by position and kept aligned by the
// Rewriter. Outputs are *uses* of values: replace_all_uses() moves them, so an
// output spec always follows the value that is really returned.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/argument.h"
#include "lathe/ir/node.h"
#include "lathe/ir/value.h"

namespace lathe {

class Graph {
 public:
  Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // Read-only here: the mutators below are private to the Rewriter (the
  // way passes change a program) and GraphAssembler (the way readers and
  // builders make one).

  // ---- inputs ----------------------------------------------------------
  const std::vector<Argument>& inputs() const { return inputs_; }
  // Changes whenever an input is inserted or removed: analyses that index
  // inputs by position know when to look again.
  uint64_t inputs_version() const { return inputs_version_; }

  // ---- outputs ---------------------------------------------------------
  const std::vector<Argument>& outputs() const { return outputs_; }

  // ---- nodes -----------------------------------------------------------
  size_t node_count() const { return node_count_; }
  // Nodes in order. The iterator reads the next node before the loop body
  // runs, so erasing the *current* node while iterating is safe; erasing or
  // moving any other node is not (take nodes_snapshot() for that).
  class NodeRange;
  NodeRange nodes() const;
  std::vector<Node*> nodes_snapshot() const;
  // Ends of the node order (nullptr if there are no nodes); walk with
  // Node::next_node() / prev_node().
  Node* first_node() const { return head_; }
  Node* last_node() const { return tail_; }

  // ---- values ----------------------------------------------------------
  // Placeholder values, in input order (literal inputs skipped).
  std::vector<Value*> placeholders() const;
  Value* find_value(std::string_view name) const;
  // Carries out work deferred by erasures (the name index settles itself
  // on the next lookup anyway; this is for timing a pass's whole cost, and
  // before the graph is read from several threads).
  void settle() const;
  // A name not yet used in this graph, derived from `base`.
  std::string unique_name(const std::string& base);

  bool is_single_tensor_return() const { return single_tensor_return_; }

  // A deep copy (graph_clone.cpp): every value, node and subgraph anew, with
  // the same names, metadata and name counters, so the same passes on the
  // copy make the same names as on the original.
  std::unique_ptr<Graph> clone() const;

 private:
  friend class Node;
  friend class Rewriter;
  friend class GraphAssembler;

  // ---- mutators (Rewriter, GraphAssembler) ----
  // Creates a placeholder value and inserts its argument at `position`
  // (default: the end). The name is made unique if taken. Names are taken by
  // value and moved into the Value: a decoded graph copies each name once.
  Value* insert_placeholder(ValueKind kind, std::string name, size_t position = SIZE_MAX);
  // Inserts a non-value input (constant_input placeholders carry a literal).
  void insert_literal_input(Argument literal, size_t position = SIZE_MAX);
  // Removes input `position`; its value must have no uses.
  Status remove_input(size_t position);
  void insert_output(Argument arg, size_t position = SIZE_MAX);
  void set_output(size_t position, Argument arg);
  void remove_output(size_t position);
  // Creates a node before `before` (nullptr: at the end).
  Node* create_node(std::string_view target, std::vector<NamedArgument> inputs, Node* before = nullptr);
  Node* create_node(OpTarget target, std::vector<NamedArgument> inputs, Node* before = nullptr);
  // Adds a value defined by `node` and appends it as a single output
  // (TensorRef / SymIntArg / ... by kind).
  Value* add_node_output(Node* node, ValueKind kind, std::string name);
  // Adds a value defined by `node` without appending an output argument (for
  // list outputs built by the caller, then set_node_outputs()).
  Value* new_node_value(Node* node, ValueKind kind, std::string name);
  void set_node_outputs(Node* node, std::vector<Argument> outputs);
  // Erases a node whose defined values have no uses.
  Status erase_node(Node* node);
  void move_before(Node* node, Node* before);
  // Every use of `from` (node arguments and graph outputs) now reads `to`,
  // except the arguments of the nodes in `except` (nullptr: none).
  void replace_all_uses(Value* from, Value* to, const std::unordered_set<const Node*>* except = nullptr);
  // Renames a value; fails if the name is taken.
  Status rename(Value* value, const std::string& name);
  void set_single_tensor_return(bool v) { single_tensor_return_ = v; }

  Value* make_value(ValueKind kind, std::string name);
  void add_output_uses(const Argument& arg);
  void remove_output_uses(const Argument& arg);
  // Re-stamps Value::input_index() of the inputs from `from` on.
  void renumber_inputs(size_t from);
  struct CloneState;
  void clone_into(Graph& copy, CloneState& state) const;
  // A copy of `v` (name, kind, metadata) in this graph, not yet in the name
  // index: clone_into() copies the whole index at the end.
  Value* clone_value(const Value& v);

  // Creates a value in the pool; destroy_value() gives it back.
  Value* new_value(ValueKind kind, std::string name);
  void destroy_value(Value* v);
  // Unlinks nothing: destroys the node and the values it defines.
  void destroy_node(Node* n);
  void link_before(Node* n, Node* before);
  void unlink(Node* n);

  // The node and value pools and the name index (graph_store.h). Declared
  // first, destroyed last: every node and value lives in it.
  struct Store;
  std::unique_ptr<Store> store_;

  std::vector<Argument> inputs_;
  std::vector<Value*> placeholder_values_;  // owned
  std::vector<Argument> outputs_;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t node_count_ = 0;
  uint64_t inputs_version_ = 1;
  std::unordered_map<std::string, size_t> name_counters_;
  bool single_tensor_return_ = false;
};

class Graph::NodeRange {
 public:
  class iterator {
   public:
    explicit iterator(Node* n) : n_(n), next_(n ? n->next_node() : nullptr) {}
    Node* operator*() const { return n_; }
    iterator& operator++() {
      n_ = next_;  // read before the body ran: erasing n_ left it valid
      if (next_) next_ = next_->next_node();
      return *this;
    }
    bool operator!=(const iterator& o) const { return n_ != o.n_; }
    bool operator==(const iterator& o) const { return n_ == o.n_; }

   private:
    Node* n_;
    Node* next_;
  };
  explicit NodeRange(Node* first) : first_(first) {}
  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(nullptr); }

 private:
  Node* first_;
};

inline Graph::NodeRange Graph::nodes() const { return NodeRange(head_); }

}  // namespace lathe
