// A Value is something a node (or a placeholder) defines: a tensor, a
// symbolic int/bool/float, a custom object or an effect token. Values know
// their producer and every use, so replacing one updates every consumer —
// including graph outputs and therefore the program's output specs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lathe/ir/symbolic.h"
#include "lathe/ir/tensor_meta.h"

namespace lathe {

class Node;
class Graph;

enum class ValueKind { Tensor, SymInt, SymBool, SymFloat, CustomObj, Token };

std::string_view value_kind_name(ValueKind kind);

// Who uses a value: a node (by pointer), or the graph's output list.
struct Use {
  Node* user = nullptr;  // nullptr: the owning graph's outputs
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  Value(ValueKind kind, std::string name, Graph* graph) : kind_(kind), name_(std::move(name)), graph_(graph) {}
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  ValueKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  Graph* graph() const { return graph_; }
  // The defining node, or nullptr for a graph input (placeholder).
  Node* producer() const { return producer_; }
  bool is_placeholder() const { return producer_ == nullptr; }
  // A placeholder's position in graph().inputs() (kept by the Graph as
  // inputs come and go), or kNotAnInput.
  static constexpr uint32_t kNotAnInput = UINT32_MAX;
  uint32_t input_index() const { return input_index_; }

  // Tensor metadata (tensors only), interned (tensor_meta.h).
  MetaRef meta() const { return meta_; }
  void set_meta(MetaRef meta) { meta_ = meta; }
  void set_meta(const TensorMeta& meta) { meta_ = intern_tensor_meta(meta); }
  using Sym = std::variant<SymDim, SymBoolValue, SymFloatValue>;
  // Symbolic value description (sym ints/bools/floats), as recorded in the
  // graph's sym_*_values tables.
  const std::optional<Sym>& sym() const { return extra_ ? extra_->sym : kNoSym; }
  void set_sym(Sym s) { mutable_extra().sym = std::move(s); }
  // Class of a custom object.
  const std::string& class_fqn() const { return extra_ ? extra_->class_fqn : kNoClass; }
  void set_class_fqn(std::string fqn) { mutable_extra().class_fqn = std::move(fqn); }

  // One entry per use (a node that reads the value twice appears twice).
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }
  size_t user_count() const { return uses_.size(); }

 private:
  friend class Graph;
  friend class Node;
  ValueKind kind_;
  uint32_t input_index_ = kNotAnInput;  // fills the padding after kind_
  std::string name_;
  Graph* graph_;
  Node* producer_ = nullptr;
  // What only symbolic values and custom objects have lives out of line, so
  // the common tensor value stays small (a large graph has many).
  struct Extra {
    std::optional<Sym> sym;
    std::string class_fqn;
  };
  Extra& mutable_extra() {
    if (!extra_) extra_ = std::make_unique<Extra>();
    return *extra_;
  }
  inline static const std::optional<Sym> kNoSym;
  inline static const std::string kNoClass;

  MetaRef meta_;
  std::unique_ptr<Extra> extra_;
  std::vector<Use> uses_;
};

}  // namespace lathe
