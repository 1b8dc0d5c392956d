// What the quantization fusion passes (fuse_weight_only_quantized_linear,
// fuse_int8_weight_only_matmul, fuse_dynamic_int8_linear) share to read a
// pattern and take it apart: argument access by schema name, static shape
// facts, the no-op casts torchao's exports wrap values in, the test that
// a value is derived from constants only, and the removal of a matched
// chain once nothing reads it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unordered_set>

#include "lathe/analysis/constness.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"
#include "lathe/passes/pass.h"

namespace lathe::quant_match {

std::string quoted(const Value* v);

// A Tensor / Tensor? argument: its value, nullptr for None or absent.
Value* tensor_arg(const Node* n, std::string_view name);
std::optional<int64_t> int_arg(const Node* n, std::string_view name);
// int[] / SymInt[] with literal items only.
std::optional<std::vector<int64_t>> int_list_arg(const Node* n, std::string_view name);
std::optional<double> float_arg(const Node* n, std::string_view name);
std::optional<std::string> string_arg(const Node* n, std::string_view name);
// A ScalarType argument; `absent` when the node leaves it at its default.
std::optional<DType> dtype_arg(const Node* n, std::string_view name, std::optional<DType> absent);
// The argument as printed, "absent" if missing (for refusal reasons).
std::string arg_text(const Node* n, std::string_view name);

std::optional<int64_t> static_dim(const Value* v, size_t i);
size_t rank(const Value* v);
std::optional<DType> dtype_of(const Value* v);

// The node that defines v, if it is a call to `target` (nullptr otherwise).
Node* producer_if(const Value* v, OpTarget target);

// The cast that makes v (aten.to.dtype, or aten._to_copy in a decomposed
// program), or nullptr.
Node* cast_of(const Value* v);

// q where v = t(q) or permute(q, [1, 0]) (a decomposed program's t), else nullptr.
Value* transposed(const Value* v);

// Through aten.to.dtype / aten._to_copy that leave the dtype as it is (what
// torchao's exports put around every intermediate).
Value* skip_noop_casts(Value* v);

// An aten._assert_tensor_metadata node (a check torchao's exports attach to
// intermediates; it reads a value but computes nothing).
bool is_metadata_check(const Node* n);

// True if every user of v other than `user` is an aten._assert_tensor_metadata
// (checks on a value the fusion removes go with it).
bool only_checked_besides(const Value* v, const Node* user);

// Derived from compile-time constants by shape and dtype ops alone
// (flatten, view, reshape, to, squeeze...), the way a scale reaches a
// matmul: known once the program is loaded.
bool from_constants(const Constness& k, const Value* v);

// Erases the nodes of `chain` (any order) that no longer have users other
// than aten._assert_tensor_metadata checks, with those checks, until none
// is left to erase. Nodes still read elsewhere stay.
Status erase_dead(Rewriter& rw, const std::vector<Node*>& chain);

// Index of the first non-zero element of an integer tensor; nullopt if all
// are zero; -1 if the tensor cannot be read as integers.
std::optional<int64_t> first_nonzero(const Tensor& t, int64_t* value);

// Symmetric only: "" if the stored zero points are all 0, else why not.
std::string check_zero_points(const ExportedProgram& ep, const Constness& k, const Value* zeros,
                              const std::string& op);

// The candidate a mul is: `structure(a, b)` on its two operands, tried in
// both orders; a plan found is checked (`check(k, mul, plan)` says why it is
// refused, or "").
template <typename Plan, typename Structure, typename Check>
std::optional<Plan> match_either_order(const Constness& k, Node* mul, Structure structure, Check check) {
  Value* a = tensor_arg(mul, "self");
  Value* b = tensor_arg(mul, "other");
  if (!a || !b) return std::nullopt;
  std::optional<Plan> p = structure(a, b);
  if (!p) p = structure(b, a);
  if (p) p->refused = check(k, mul, *p);
  return p;
}

// The driver of a fusion whose pattern ends in an aten.mul.Tensor (the
// scale): for every mul of the graph, in order, `match(k, mul)` gives
// nullopt (not a candidate) or a plan (fields q, the weight; chain, the
// nodes the fused op replaces; refused, why not, or empty). A refusal is
// recorded as kept; otherwise `rewrite(rw, mul, plan)` retargets the mul,
// the chain's dead nodes are erased and the rewrite is recorded, naming
// `op` and the weight. A mul a previous rewrite erased is skipped.
template <typename Match, typename Rewrite>
Result<bool> fuse_at_muls(ExportedProgram& program, PassContext& ctx, std::string_view op, Match match,
                          Rewrite rewrite) {
  Constness k(program);
  Rewriter rw(program);
  std::vector<Node*> muls;
  for (Node* n : rw.graph().nodes()) {
    if (n->op_target() == ops::aten::mul_Tensor) muls.push_back(n);
  }
  std::unordered_set<const Node*> erased;
  bool changed = false;
  for (Node* n : muls) {
    if (erased.count(n)) continue;
    auto plan = match(k, n);
    if (!plan) continue;
    const std::string node = n->name();
    if (!plan->refused.empty()) {
      ctx.kept(node, "mul '" + node + "' kept: " + plan->refused);
      continue;
    }
    LATHE_RETURN_IF_ERROR(rewrite(rw, n, *plan));
    erased.insert(plan->chain.begin(), plan->chain.end());
    LATHE_RETURN_IF_ERROR(erase_dead(rw, plan->chain));
    changed = true;
    if (ctx.record_rewrites()) {
      ctx.rewritten(node, "mul '" + node + "' rewritten to " + std::string(op) + " (int8 weight " + quoted(plan->q) +
                              " is " + k.describe(plan->q) + ")");
    }
  }
  return changed;
}

}  // namespace lathe::quant_match
