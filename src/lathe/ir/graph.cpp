#include "lathe/ir/graph.h"

#include <algorithm>

#include "lathe/ir/graph_store.h"

namespace lathe {

Graph::Graph() : store_(std::make_unique<Store>()) {}

Graph::~Graph() {
  // Nodes last-to-first, then placeholders, so no value dies while a later
  // node's argument still points at it (use-lists are not touched during
  // teardown). The pools, in the member declared first, go last.
  for (Node* n = tail_; n;) {
    Node* prev = n->prev_;
    destroy_node(n);
    n = prev;
  }
  for (Value* v : placeholder_values_) destroy_value(v);
}

Value* Graph::new_value(ValueKind kind, std::string name) {
  return new (store_->value_pool.allocate()) Value(kind, std::move(name), this);
}

void Graph::destroy_value(Value* v) {
  v->~Value();
  store_->value_pool.release(v);
}

void Graph::destroy_node(Node* n) {
  for (Value* v : n->defined_) destroy_value(v);
  n->~Node();
  store_->node_pool.release(n);
}

void Graph::link_before(Node* n, Node* before) {
  Node* prev = before ? before->prev_ : tail_;
  n->prev_ = prev;
  n->next_ = before;
  (prev ? prev->next_ : head_) = n;
  (before ? before->prev_ : tail_) = n;
}

void Graph::unlink(Node* n) {
  (n->prev_ ? n->prev_->next_ : head_) = n->next_;
  (n->next_ ? n->next_->prev_ : tail_) = n->prev_;
  n->prev_ = n->next_ = nullptr;
}

Value* Graph::make_value(ValueKind kind, std::string name) {
  // One probe of the name index when the name is free (the common case).
  Value* v = new_value(kind, std::move(name));
  if (!store_->names.insert_if_absent(v)) {
    v->name_ = unique_name(v->name_);
    store_->names.insert(v);
  }
  return v;
}

std::string Graph::unique_name(const std::string& base) {
  if (!store_->names.contains(base)) return base;
  size_t& counter = name_counters_[base];
  std::string candidate;
  do {
    candidate = base + "_" + std::to_string(++counter);
  } while (store_->names.contains(candidate));
  return candidate;
}

Status Graph::rename(Value* value, const std::string& name) {
  if (value->name_ == name) return Status::Ok();
  if (store_->names.contains(name)) return make_error("cannot rename '" + value->name_ + "' to '" + name + "': name taken");
  store_->names.erase(value);
  value->name_ = name;
  store_->names.insert(value);
  return Status::Ok();
}

Value* Graph::find_value(std::string_view name) const {
  return store_->names.find(name);
}

Value* Graph::insert_placeholder(ValueKind kind, std::string name, size_t position) {
  Value* v = make_value(kind, std::move(name));
  placeholder_values_.emplace_back(v);
  Argument arg;
  switch (kind) {
    case ValueKind::Tensor: arg = TensorRef{v}; break;
    case ValueKind::SymInt: arg = SymIntArg{v}; break;
    case ValueKind::SymFloat: arg = SymFloatArg{v}; break;
    case ValueKind::SymBool: arg = SymBoolArg{v}; break;
    case ValueKind::CustomObj: arg = CustomObjRef{v}; break;
    case ValueKind::Token: arg = TensorRef{v}; break;
  }
  position = std::min(position, inputs_.size());
  inputs_.insert(inputs_.begin() + static_cast<std::ptrdiff_t>(position), std::move(arg));
  renumber_inputs(position);
  return v;
}

void Graph::renumber_inputs(size_t from) {
  ++inputs_version_;  // every insertion and removal comes through here
  for (size_t i = from; i < inputs_.size(); ++i)
    inputs_[i].for_each_value([&](Value* v) { v->input_index_ = static_cast<uint32_t>(i); });
}

void Graph::insert_literal_input(Argument literal, size_t position) {
  position = std::min(position, inputs_.size());
  inputs_.insert(inputs_.begin() + static_cast<std::ptrdiff_t>(position), std::move(literal));
  renumber_inputs(position);
}

Status Graph::remove_input(size_t position) {
  if (position >= inputs_.size()) return make_error("input index " + std::to_string(position) + " out of range");
  Value* v = nullptr;
  inputs_[position].for_each_value([&](Value* x) { v = x; });
  if (v && v->has_uses()) {
    return make_error("cannot remove input '" + v->name() + "': it still has " + std::to_string(v->user_count()) +
                      " use(s)");
  }
  inputs_.erase(inputs_.begin() + static_cast<std::ptrdiff_t>(position));
  renumber_inputs(position);
  if (v) {
    store_->names.erase(v);
    auto it = std::find(placeholder_values_.begin(), placeholder_values_.end(), v);
    if (it != placeholder_values_.end()) {
      placeholder_values_.erase(it);
      destroy_value(v);
    }
  }
  return Status::Ok();
}

void Graph::add_output_uses(const Argument& arg) {
  arg.for_each_value([](Value* v) { v->uses_.push_back(Use{nullptr}); });
}

void Graph::remove_output_uses(const Argument& arg) {
  arg.for_each_value([](Value* v) {
    auto it = std::find(v->uses_.begin(), v->uses_.end(), Use{nullptr});
    if (it != v->uses_.end()) v->uses_.erase(it);
  });
}

void Graph::insert_output(Argument arg, size_t position) {
  position = std::min(position, outputs_.size());
  add_output_uses(arg);
  outputs_.insert(outputs_.begin() + static_cast<std::ptrdiff_t>(position), std::move(arg));
}

void Graph::set_output(size_t position, Argument arg) {
  remove_output_uses(outputs_.at(position));
  add_output_uses(arg);
  outputs_[position] = std::move(arg);
}

void Graph::remove_output(size_t position) {
  remove_output_uses(outputs_.at(position));
  outputs_.erase(outputs_.begin() + static_cast<std::ptrdiff_t>(position));
}

Node* Graph::create_node(std::string_view target, std::vector<NamedArgument> inputs, Node* before) {
  return create_node(OpTarget(target), std::move(inputs), before);
}

Node* Graph::create_node(OpTarget target, std::vector<NamedArgument> inputs, Node* before) {
  Node* n = new (store_->node_pool.allocate()) Node(this, target);
  link_before(n, before);
  ++node_count_;
  n->set_inputs(std::move(inputs));
  return n;
}

Value* Graph::new_node_value(Node* node, ValueKind kind, std::string name) {
  Value* v = make_value(kind, std::move(name));
  v->producer_ = node;
  node->defined_.emplace_back(v);
  return v;
}

Value* Graph::add_node_output(Node* node, ValueKind kind, std::string name) {
  Value* v = new_node_value(node, kind, std::move(name));
  switch (kind) {
    case ValueKind::SymInt: node->outputs_.emplace_back(SymIntArg{v}); break;
    case ValueKind::SymFloat: node->outputs_.emplace_back(SymFloatArg{v}); break;
    case ValueKind::SymBool: node->outputs_.emplace_back(SymBoolArg{v}); break;
    case ValueKind::CustomObj: node->outputs_.emplace_back(CustomObjRef{v}); break;
    default: node->outputs_.emplace_back(TensorRef{v}); break;
  }
  return v;
}

void Graph::set_node_outputs(Node* node, std::vector<Argument> outputs) { node->outputs_ = std::move(outputs); }

Status Graph::erase_node(Node* node) {
  for (const Value* v : node->defined_) {
    if (v->has_uses()) {
      return make_error("cannot erase node '" + node->name() + "': its value '" + v->name() + "' still has " +
                        std::to_string(v->user_count()) + " use(s)");
    }
  }
  for (const auto& in : node->inputs_) node->remove_uses(in.arg);
  for (const Value* v : node->defined_) store_->names.erase(v);
  unlink(node);
  --node_count_;
  destroy_node(node);
  return Status::Ok();
}

void Graph::move_before(Node* node, Node* before) {
  if (node == before) return;
  unlink(node);
  link_before(node, before);
}

std::vector<Node*> Graph::nodes_snapshot() const {
  std::vector<Node*> out;
  out.reserve(node_count_);
  for (Node* n = head_; n; n = n->next_) out.push_back(n);
  return out;
}

void Graph::replace_all_uses(Value* from, Value* to, const std::unordered_set<const Node*>* except) {
  if (from == to) return;
  // Copy: the use-list changes while we rewrite arguments.
  std::vector<Use> uses = from->uses_;
  std::vector<Use> kept;
  std::vector<Node*> seen;
  bool outputs_done = false;
  for (const Use& u : uses) {
    if (except && u.user && except->count(u.user)) {
      kept.push_back(u);
    } else if (u.user == nullptr) {
      if (outputs_done) continue;
      outputs_done = true;
      for (auto& out : outputs_) {
        size_t n = out.replace_value(from, to);
        for (size_t i = 0; i < n; ++i) to->uses_.push_back(Use{nullptr});
      }
    } else {
      if (std::find(seen.begin(), seen.end(), u.user) != seen.end()) continue;
      seen.push_back(u.user);
      for (auto& in : u.user->inputs_) {
        size_t n = in.arg.replace_value(from, to);
        for (size_t i = 0; i < n; ++i) to->uses_.push_back(Use{u.user});
      }
    }
  }
  from->uses_ = std::move(kept);
}

std::vector<Value*> Graph::placeholders() const {
  std::vector<Value*> out;
  for (const auto& in : inputs_) in.for_each_value([&](Value* v) { out.push_back(v); });
  return out;
}


void Graph::settle() const { store_->names.settle(); }

}  // namespace lathe
