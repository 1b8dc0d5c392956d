// A Node is one operator call: a target (full op name, e.g.
// "torch.ops.aten.addmm.default"), named arguments, and outputs. The values a
// node defines are owned by it; its output Arguments reference them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lathe/ir/argument.h"
#include "lathe/ir/op_target.h"
#include "lathe/ir/value.h"

namespace lathe {

class Graph;

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  Graph* graph() const { return graph_; }
  const std::string& target() const { return target_.str(); }
  // The same, interned: compare with a kept OpTarget in hot loops.
  OpTarget op_target() const { return target_; }
  // Target without the leading "torch.ops." ("aten.addmm.default").
  std::string op_name() const;
  // The node's name: explicit if recorded, else its first output's name.
  std::string name() const;
  const std::optional<std::string>& explicit_name() const { return name_; }
  void set_explicit_name(std::optional<std::string> name) { name_ = std::move(name); }

  const std::vector<NamedArgument>& inputs() const { return inputs_; }
  // Argument by schema name, or nullptr.
  const Argument* input(std::string_view name) const;

  const std::vector<Argument>& outputs() const { return outputs_; }
  // Values this node defines, in output order.
  const std::vector<Value*>& defined_values() const { return defined_; }
  // Convenience: the single tensor this node defines, or nullptr.
  Value* output() const;

  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
  std::vector<std::pair<std::string, std::string>>& mutable_metadata() { return metadata_; }
  const std::optional<bool>& is_hop_single_tensor_return() const { return hop_single_; }
  void set_is_hop_single_tensor_return(std::optional<bool> v) { hop_single_ = v; }

  // Every value this node reads (arguments, including nested lists), in order.
  std::vector<Value*> operand_values() const;

  // Neighbours in the graph's node order (nullptr at either end).
  Node* prev_node() const { return prev_; }
  Node* next_node() const { return next_; }

 private:
  friend class Graph;
  friend class Rewriter;  // retarget(): an op replaced in place keeps its values
  friend class GraphAssembler;
  Node(Graph* graph, OpTarget target) : graph_(graph), target_(target) {}
  // Replaces all arguments, keeping use-lists right (Rewriter::retarget).
  void set_inputs(std::vector<NamedArgument> inputs);
  void set_input(size_t index, Argument arg);
  void add_uses(const Argument& arg);
  void remove_uses(const Argument& arg);

  Graph* graph_;
  OpTarget target_;
  std::optional<std::string> name_;
  std::vector<NamedArgument> inputs_;
  std::vector<Argument> outputs_;
  std::vector<Value*> defined_;  // owned: the Graph destroys them with the node
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::optional<bool> hop_single_;
  // The graph's node list is intrusive: no list cell per node.
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
};

}  // namespace lathe
