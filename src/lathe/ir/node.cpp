#include "lathe/ir/node.h"

#include <algorithm>

#include "lathe/ir/graph.h"
#include "lathe/ir/op_catalogue.h"

namespace lathe {

Node::~Node() = default;

std::string Node::op_name() const { return std::string(ops::op_name(target_)); }

std::string Node::name() const {
  if (name_) return *name_;
  for (const auto& v : defined_) return v->name();
  return target_.str();
}

void Node::add_uses(const Argument& arg) {
  arg.for_each_value([this](Value* v) { v->uses_.push_back(Use{this}); });
}

void Node::remove_uses(const Argument& arg) {
  arg.for_each_value([this](Value* v) {
    auto it = std::find(v->uses_.begin(), v->uses_.end(), Use{this});
    if (it != v->uses_.end()) v->uses_.erase(it);
  });
}

void Node::set_inputs(std::vector<NamedArgument> inputs) {
  for (const auto& in : inputs_) remove_uses(in.arg);
  inputs_ = std::move(inputs);
  for (const auto& in : inputs_) add_uses(in.arg);
}

void Node::set_input(size_t index, Argument arg) {
  remove_uses(inputs_.at(index).arg);
  inputs_[index].arg = std::move(arg);
  add_uses(inputs_[index].arg);
}

const Argument* Node::input(std::string_view name) const {
  for (const auto& in : inputs_) {
    if (in.name == name) return &in.arg;
  }
  return nullptr;
}

Value* Node::output() const {
  if (outputs_.size() == 1) {
    if (auto* t = outputs_[0].get_if<TensorRef>()) return t->value;
  }
  return nullptr;
}

std::vector<Value*> Node::operand_values() const {
  std::vector<Value*> out;
  for (const auto& in : inputs_) in.arg.for_each_value([&](Value* v) { out.push_back(v); });
  return out;
}

}  // namespace lathe
