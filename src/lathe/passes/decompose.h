// decompose: splits composite ops into the core ATen ops torch.export's core
// decomposition produces (linear -> permute + addmm, matmul -> mm / bmm,
// layer_norm -> native_layer_norm, ...), except the ops on a keep-list
// (what a backend wants whole: linear, scaled_dot_product_attention, ...;
// linear-rewrite.md §4). See the .cpp for every rule.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/passes/pass.h"

namespace lathe {

class Decompose
    : public NamedPass<"decompose",
                       "split composite ops (linear, matmul, t, transpose, softmax, layer_norm, conv, dropout) into core ATen, "
                       "except a keep-list"> {
 public:

  // `keep`: op names as Node::op_name() spells them ("aten.linear.default";
  // a leading "torch.ops." is dropped), or without the overload
  // ("aten.linear": every overload).
  explicit Decompose(std::vector<std::string> keep = {}) { set_keep(keep); }
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;

  void set_keep(const std::vector<std::string>& keep);
  const std::set<std::string>& keep() const { return keep_; }
  bool keeps(std::string_view target) const;

  // The ops this pass decomposes, as "aten.linear.default".
  static std::vector<std::string> decomposed_ops();

 private:
  std::set<std::string> keep_;
};

}  // namespace lathe
