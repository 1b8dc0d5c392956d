// Rewriter: the one way passes mutate a program (ARCHITECTURE invariant 2).
//
// Every call either succeeds completely or fails and changes nothing. It
// checks before it touches anything, so no sequence of calls can leave the
// signature and the graph disagreeing:
//
//   create_node / create_call   inputs must be values of this graph defined
//                               before the insertion point; tensors need meta
//   replace_all_uses            `to` must be defined before every user of
//                               `from` (so no cycle), same kind, has meta;
//                               graph outputs move too, and with them the
//                               output specs (they are aligned by position)
//   replace_node / retarget     the usual pattern rewrite in one call (a
//                               new node, or the old one changed in place)
//   erase_node                  only when nothing uses its values
//   reorder / move_before       a new node order that keeps producers first
//   rename                      keeps user_input_mutation targets in step
//   add_*_input / remove_input  placeholder + spec + state together, in
//                               torch.export's input order
//   add_output / remove_output  graph output + spec together, mutation
//                               outputs before user outputs
//
// While a Rewriter is alive it should be the only thing mutating the graph:
// it caches node positions (for "defined before" checks) and notices foreign
// insertions only by node count.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph.h"

namespace lathe {

// A value a new node defines.
struct NewOutput {
  ValueKind kind = ValueKind::Tensor;
  std::string name;                // a base name; made unique if taken
  std::optional<TensorMeta> meta;  // required for tensors
};

class Rewriter {
 public:
  // Program mode: the signature and state are kept in step with the graph.
  explicit Rewriter(ExportedProgram& program);
  // Bare-graph mode (a subgraph, a graph-only tool): there is no signature,
  // so calls that need one (inputs, mutation outputs) fail.
  explicit Rewriter(Graph& graph);

  Graph& graph() { return *graph_; }
  ExportedProgram* program() { return ep_; }

  // ---- nodes -------------------------------------------------------------
  // A node `target(inputs)` placed before `before` (nullptr: at the end).
  Result<Node*> create_node(std::string target, std::vector<NamedArgument> inputs, std::vector<NewOutput> outputs,
                            Node* before = nullptr);
  // The common case: one tensor output.
  Result<Value*> create_call(std::string target, std::vector<NamedArgument> inputs, TensorMeta meta,
                             const std::string& name, Node* before = nullptr);
  // Replaces `old` (a node defining exactly one value) by `target(inputs)`:
  // the new node goes right before `old`, its value (named `name`, meta
  // copied from the old value) takes over every use of the old one,
  // including graph outputs, and `old` is erased.
  Result<Value*> replace_node(Node* old, std::string target, std::vector<NamedArgument> inputs,
                              const std::string& name);
  // Turns `node` into `target(inputs)` in place: it keeps its values (names,
  // metadata, every use, graph outputs), so nothing downstream moves. The
  // caller vouches that the new op defines values of the same types. The
  // cheapest rewrite: no node or value is created or destroyed.
  Status retarget(Node* node, std::string_view target, std::vector<NamedArgument> inputs);
  Status retarget(Node* node, OpTarget target, std::vector<NamedArgument> inputs);
  Status replace_all_uses(Value* from, Value* to);
  // The same, except that the nodes in `leaving` keep reading `from`: they
  // are about to be erased (a group replaced by one node placed after it,
  // which they precede). `to` must be defined before every other user.
  Status replace_all_uses(Value* from, Value* to, const std::unordered_set<const Node*>& leaving);
  Status erase_node(Node* node);
  // Puts the graph's nodes in `order`: a permutation of every node in which
  // each node comes after the producers of its operands. Anything else is
  // refused before a node moves.
  Status reorder(const std::vector<Node*>& order);
  // Moves `node` before `before` (nullptr: to the end). Refused unless what
  // it reads is defined before the new place and what reads it comes after.
  Status move_before(Node* node, Node* before);
  Status rename(Value* value, const std::string& name);

  // True if `value` is visible at `node` (a placeholder, or produced by an
  // earlier node); node == nullptr means "at the end of the graph".
  bool defined_before(const Value* value, const Node* node);

  // ---- program inputs ------------------------------------------------------
  // Each inserts placeholder, spec and state at the end of its kind's group
  // (parameters, buffers, constants, user inputs). The placeholder is named
  // like torch.export names it (p_<fqn>, b_<fqn>, c_<name>, '.' -> '_'),
  // made unique. Fails if the state name is taken in this program.
  Result<Value*> add_parameter(const std::string& fqn, Tensor tensor);
  Result<Value*> add_buffer(const std::string& fqn, Tensor tensor, bool persistent = true);
  // A lifted tensor constant (non-parameter, non-buffer tensor state).
  Result<Value*> add_constant(const std::string& name, Tensor tensor);
  Result<Value*> add_user_input(const std::string& name, TensorMeta meta);
  // A symbolic int user input (a size passed as an argument), e.g. "s0".
  Result<Value*> add_sym_int_input(const std::string& name, SymDim value);
  // Removes a program input: fails if its placeholder still has uses or an
  // output spec (a mutation or gradient) names it. A stateful input's state
  // entry goes too unless another input spec still names it; tied aliases
  // (unnamed state entries viewing exactly the same tensor) that only it
  // kept alive go with it.
  Status remove_input(Value* placeholder);

  // ---- outputs -------------------------------------------------------------
  // Adds a graph output with its spec, at the end of its kind's group
  // (tokens, mutations, user outputs, gradients). A mutation must name an
  // input of the right kind that no other output already mutates. In
  // bare-graph mode only user outputs (appended) are allowed.
  Status add_output(Value* value, OutputSpec spec);
  Status remove_output(size_t index);

 private:
  struct Pos {
    double pos;
    double floor;  // position of the node before it (a lower bound)
  };
  // `where()` builds the message prefix, only when there is an error: a
  // million-node rewrite should not format a million strings it never shows.
  template <class Where>
  Status check_visible(const Argument& arg, const Node* before, const Where& where);
  // Fast, position-free proof that `v` is defined before `n`: a placeholder,
  // an operand of `n`, or an operand of a node that defines an operand of
  // `n` (the graph was valid before the call).
  bool obviously_before(const Value* v, const Node* n) const;
  const Pos* position(const Node* n);
  void build_positions();
  void note_inserted(const Node* n, const Node* before);
  Result<Value*> add_input(InputSpec spec, const std::string& name, std::optional<Tensor> state,
                           std::optional<TensorMeta> meta);
  bool state_name_taken(const std::string& name) const;

  ExportedProgram* ep_ = nullptr;
  Graph* graph_;
  std::unordered_map<const Node*, Pos> positions_;
  bool positions_valid_ = false;
  double last_pos_ = 0;
};

}  // namespace lathe
