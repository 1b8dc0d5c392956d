// Graph::clone: a deep copy of a graph and the subgraphs its nodes name.
// The Python package copies a Program before every transform (its Programs
// are immutable, so runners made over them stay valid); a copy in memory
// costs a fraction of writing the archive and reading it back.
#include <stdexcept>
#include <unordered_map>

#include "lathe/ir/flat_map.h"
#include "lathe/ir/graph.h"
#include "lathe/ir/graph_store.h"

namespace lathe {

struct Graph::CloneState {
  // Original value -> its copy; flat, because a large graph has a value per
  // node and a node-based map cost more than the copying itself.
  FlatMap<const Value*, Value*> values;
  // A subgraph two nodes share (cond's branches can) stays shared.
  std::unordered_map<const Graph*, std::shared_ptr<Graph>> subgraphs;

  Value* map(const Value* v) const {
    Value* const* copy = values.find(v);
    if (!copy) throw std::logic_error("Graph::clone: a value not defined in its graph: " + v->name());
    return *copy;
  }

  std::shared_ptr<Graph> subgraph(const std::shared_ptr<Graph>& g) {
    if (!g) return g;
    auto it = subgraphs.find(g.get());
    if (it != subgraphs.end()) return it->second;
    auto copy = std::make_shared<Graph>();
    CloneState inner;
    inner.subgraphs = subgraphs;
    g->clone_into(*copy, inner);
    subgraphs = std::move(inner.subgraphs);
    subgraphs.emplace(g.get(), copy);
    return copy;
  }

  // An argument of the copy: values mapped, subgraphs cloned.
  Argument remap(Argument arg) {
    arg.map_values([this](Value* v) { return map(v); });
    if (auto* ga = std::get_if<GraphArg>(&arg.v)) ga->graph = subgraph(ga->graph);
    if (auto* map_arg = std::get_if<StringToArgument>(&arg.v)) {
      for (auto& [key, sub] : map_arg->items) {
        if (auto* ga = std::get_if<GraphArg>(&sub.v)) ga->graph = subgraph(ga->graph);
      }
    }
    return arg;
  }
};

std::unique_ptr<Graph> Graph::clone() const {
  auto copy = std::make_unique<Graph>();
  CloneState state;
  clone_into(*copy, state);
  return copy;
}

Value* Graph::clone_value(const Value& v) {
  Value* c = new_value(v.kind(), v.name());
  c->set_meta(v.meta());
  if (v.sym()) c->set_sym(*v.sym());
  if (!v.class_fqn().empty()) c->set_class_fqn(v.class_fqn());
  return c;
}

void Graph::clone_into(Graph& copy, CloneState& state) const {
  state.values = FlatMap<const Value*, Value*>(store_->names.size());
  copy.inputs_.reserve(inputs_.size());
  copy.placeholder_values_.reserve(placeholder_values_.size());
  for (const Argument& in : inputs_) {
    in.for_each_value([&](Value* v) {
      Value* c = copy.clone_value(*v);
      copy.placeholder_values_.emplace_back(c);
      state.values.emplace(v, c);
    });
    copy.inputs_.push_back(state.remap(in));
  }
  copy.renumber_inputs(0);
  for (const Node* n : nodes()) {
    Node* c = copy.create_node(n->op_target(), {});
    c->defined_.reserve(n->defined_.size());
    for (const Value* v : n->defined_) {
      Value* d = copy.clone_value(*v);
      d->producer_ = c;
      c->defined_.emplace_back(d);
      state.values.emplace(v, d);
    }
    std::vector<NamedArgument> inputs;
    inputs.reserve(n->inputs_.size());
    for (const NamedArgument& in : n->inputs_) inputs.push_back(NamedArgument{in.name, state.remap(in.arg), in.kind});
    c->set_inputs(std::move(inputs));
    for (const Argument& out : n->outputs_) c->outputs_.push_back(state.remap(out));
    c->name_ = n->name_;
    c->metadata_ = n->metadata_;
    c->hop_single_ = n->hop_single_;
  }
  for (const Argument& out : outputs_) copy.insert_output(state.remap(out));
  copy.store_->names = store_->names.remapped([&state](const Value* v) { return state.map(v); });
  copy.name_counters_ = name_counters_;
  copy.single_tensor_return_ = single_tensor_return_;
}

}  // namespace lathe
