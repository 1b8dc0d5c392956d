// constant_propagation
//
//   BEFORE                                      AFTER
//
//   %p1, %p2: parameters                        %c_folded_mm: tensor_constant folded_mm
//   %t   = aten.t(%p2)                          (%p1, %p2 gone with their specs and state
//   %mm  = aten.mm(%p1, %t)                      when nothing else reads them)
//   %t_1 = aten.t(%mm)                          %t_1 = aten.t(%c_folded_mm)
//   %y   = aten.addmm(%b, %x, %t_1)             %y   = aten.addmm(%b, %x, %t_1)
//
// A node is folded when every value it reads is a compile-time constant (a
// parameter the program does not mutate, a buffer it never mutates, a lifted
// constant — Constness — or the output of another folded node), it is a
// known-pure aten op (remove_dead_code's list: no in-place, out=, random or
// effectful op, nothing outside aten), every value it defines is a tensor of
// concrete shape within `max_folded_bytes`, and the evaluator has a kernel
// for it. Never folded:
//   - anything that reads a mutable buffer, directly or through other nodes
//     (a buffer named by a buffer_mutation output is state, not a constant);
//   - quantize/dequantize ops: the weight-only quantized patterns (and
//     addmm_mm_to_linear's constness) match on dq(constant), so folding them
//     would silently turn quantized weights back into float ones;
//   - any other op that reads an 8-bit integer tensor and defines a floating
//     one: a dequantization in all but name (torchao's int8 weight-only
//     export widens its weight with `to(int8 -> float32)`), kept for the
//     same reason;
//   - values a mutation output reads;
//   - a layout-only op (view, permute, t, expand, slice, clone, ...) whose
//     value leaves the constant region: it costs nothing at run time, and
//     materialising it would duplicate the weight in another layout and hide
//     patterns such as addmm(b, x, t(w)) from the passes and backends after
//     this one. Its input is folded instead. That is also what keeps an
//     `expand` of a folded scalar from becoming a huge constant.
//
// What is materialised is only the frontier: folded values that a kept node
// or a graph output reads. Each becomes a lifted constant input (kind
// tensor_constant, placed after the existing constants and before the user
// inputs, state in `constants`), added through the Rewriter, and takes over
// every use — graph outputs included, so a folded user output stays correct.
// The folded nodes are erased, and constant inputs that only they read are
// removed with their specs and state (Rewriter::remove_input).
//
// Every node the pass could have folded but did not leaves a "kept" explain
// record saying why; every materialised value a "rewritten" one.
#include "lathe/passes/constant_propagation.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "lathe/analysis/constness.h"
#include "lathe/ir/graph_assembler.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

ConstantEvaluator& default_slot() {
  static ConstantEvaluator evaluator;
  return evaluator;
}

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

bool is_tensor_of(const Value* v, bool (*pred)(DType)) {
  return v->kind() == ValueKind::Tensor && v->meta() && pred(v->meta()->dtype);
}

bool is_8bit_integer(DType d) { return d == DType::Int8 || d == DType::UInt8; }

// Reads an int8/uint8 tensor and defines a floating one.
bool widens_8bit_integers(const Node* n) {
  std::vector<Value*> ins = n->operand_values();
  std::vector<Value*> outs = n->defined_values();
  return std::any_of(ins.begin(), ins.end(), [](const Value* v) { return is_tensor_of(v, is_8bit_integer); }) &&
         std::any_of(outs.begin(), outs.end(), [](const Value* v) { return is_tensor_of(v, dtype_is_floating); });
}

// Bytes a tensor value takes, or nullopt if its shape is not concrete.
std::optional<size_t> value_bytes(const Value* v) {
  if (v->kind() != ValueKind::Tensor || !v->meta()) return std::nullopt;
  auto sizes = v->meta()->concrete_sizes();
  if (!sizes) return std::nullopt;
  size_t n = dtype_size(v->meta()->dtype);
  for (int64_t s : *sizes) n *= static_cast<size_t>(std::max<int64_t>(s, 0));
  return n;
}

class Folder {
 public:
  Folder(ExportedProgram& ep, PassContext& ctx, const ConstantPropagationOptions& o, const ConstantEvaluator& ev)
      : ep_(ep), ctx_(ctx), options_(o), evaluator_(ev), k_(ep) {}

  Result<bool> run() {
    collect_mutation_reads();
    select();
    prune_frontier();
    std::vector<Value*> frontier = frontier_values();
    if (frontier.empty()) return false;
    if (!evaluator_)
      return make_error(std::string(ConstantPropagation::kName) +
                        ": no constant evaluator installed (the portable kernels live in the runtime; install one "
                        "with ConstantPropagation::set_default_evaluator or pass it in the options)");
    LATHE_ASSIGN_OR_RETURN(ExportedProgram scratch, build_scratch(frontier));
    LATHE_ASSIGN_OR_RETURN(std::vector<Tensor> values, evaluator_.evaluate(scratch));
    if (values.size() != frontier.size())
      return make_error(std::string(ConstantPropagation::kName) + ": the evaluator returned " +
                        std::to_string(values.size()) + " tensors for " + std::to_string(frontier.size()) +
                        " folded values");
    LATHE_RETURN_IF_ERROR(materialise(frontier, values));
    return true;
  }

 private:
  bool is_const(const Value* v) const {
    if (v->kind() != ValueKind::Tensor) return false;
    if (v->is_placeholder()) return k_.is_compile_time_constant(v);
    return folded_.count(v->producer()) != 0;
  }

  void kept(const Node* n, const std::string& why) {
    ctx_.kept(n->name(), n->op_name() + " '" + n->name() + "' kept: " + why);
  }

  // Values read by buffer/parameter/user-input mutation outputs (and other
  // non-user outputs): folding them would make state a constant.
  void collect_mutation_reads() {
    const auto& outs = ep_.graph().outputs();
    for (size_t i = 0; i < outs.size() && i < ep_.output_specs.size(); ++i) {
      OutputKind kind = ep_.output_specs[i].kind;
      if (kind == OutputKind::UserOutput || kind == OutputKind::LossOutput) continue;
      outs[i].for_each_value([&](Value* v) { mutation_reads_.insert(v); });
    }
  }

  // Which nodes could be folded, in graph order.
  void select() {
    for (Node* n : ep_.graph().nodes()) {
      std::vector<Value*> operands = n->operand_values();
      bool all_const = true;
      const Value* mutable_read = nullptr;  // the one non-constant operand, if it is a mutable buffer
      size_t non_const = 0;
      for (const Value* v : operands) {
        if (is_const(v)) continue;
        all_const = false;
        ++non_const;
        if (v->is_placeholder() && k_.origin(v) == Origin::MutableBuffer) mutable_read = v;
      }
      if (!all_const) {
        if (non_const == 1 && mutable_read)
          kept(n, "operand " + quoted(mutable_read) + " " + k_.explain(mutable_read));
        continue;
      }
      if (ops::is_quantize(n->target())) {
        kept(n, "quantize/dequantize ops are never folded (quantized-weight patterns match on them)");
        continue;
      }
      if (widens_8bit_integers(n)) {
        kept(n, "it turns an 8-bit integer tensor into a floating one (a dequantization: quantized-weight "
                "patterns match on it)");
        continue;
      }
      if (!ops::is_effect_free(n->target()) || ops::aten_op_name(n->target()).empty()) {
        kept(n, "not a known pure aten op");
        continue;
      }
      std::vector<Value*> defs = n->defined_values();
      if (defs.empty()) continue;
      std::string why;
      for (const Value* v : defs) {
        std::optional<size_t> bytes = value_bytes(v);
        if (!bytes) {
          why = "value " + quoted(v) + " is not a tensor of concrete shape";
          break;
        }
        if (*bytes > options_.max_folded_bytes) {
          why = "value " + quoted(v) + " (" + format_type(*v) + ") would take " + std::to_string(*bytes) +
                " bytes, over the fold limit of " + std::to_string(options_.max_folded_bytes);
          break;
        }
        if (mutation_reads_.count(v)) {
          why = "value " + quoted(v) + " is read by a mutation output";
          break;
        }
      }
      if (why.empty() && evaluator_ && !evaluator_.supports(n->target())) why = "no kernel to evaluate it";
      if (!why.empty()) {
        kept(n, why);
        continue;
      }
      folded_.insert(n);
      order_.push_back(n);
    }
  }

  bool leaves_region(const Value* v) const {
    for (const Use& u : v->uses())
      if (!u.user || !folded_.count(u.user)) return true;
    return false;
  }

  bool feeds_region(const Value* v) const {
    for (const Use& u : v->uses())
      if (u.user && folded_.count(u.user)) return true;
    return false;
  }

  // Layout-only ops at the edge of the constant region stay (see the top of
  // the file); their inputs become the edge instead. Repeats until stable,
  // so a chain of views all stays.
  void prune_frontier() {
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
        Node* n = *it;
        if (!folded_.count(n) || !ops::is_layout_only(n->target())) continue;
        // A view that also feeds folded nodes stays folded: its consumers
        // inside the region read it, so the region would have a hole.
        std::vector<Value*> defs = n->defined_values();
        if (std::any_of(defs.begin(), defs.end(), [&](const Value* v) { return leaves_region(v); }) &&
            !std::any_of(defs.begin(), defs.end(), [&](const Value* v) { return feeds_region(v); })) {
          folded_.erase(n);
          changed = true;
        }
      }
    }
    order_.erase(std::remove_if(order_.begin(), order_.end(), [&](Node* n) { return !folded_.count(n); }),
                 order_.end());
  }

  std::vector<Value*> frontier_values() const {
    std::vector<Value*> out;
    for (Node* n : order_)
      for (Value* v : n->defined_values())
        if (leaves_region(v)) out.push_back(v);
    return out;
  }

  // The folded nodes as a program of their own: every constant they read is
  // a lifted constant input, every frontier value a user output.
  Result<ExportedProgram> build_scratch(const std::vector<Value*>& frontier) {
    ExportedProgram scratch;
    Rewriter srw(scratch);
    GraphAssembler g(scratch.graph());
    std::unordered_map<const Value*, Value*> map;
    for (Node* n : order_) {
      for (Value* v : n->operand_values()) {
        if (!v->is_placeholder() || map.count(v)) continue;
        const InputSpec* spec = k_.input_spec(v);
        const Tensor* t = spec ? ep_.state_tensor(*spec) : nullptr;
        if (!t) return make_error(std::string(ConstantPropagation::kName) + ": constant input " + quoted(v) + " has no state tensor");
        LATHE_ASSIGN_OR_RETURN(Value * c, srw.add_constant(v->name(), *t));
        map[v] = c;
        inputs_read_.push_back(v);
      }
      std::vector<NamedArgument> args = n->inputs();
      for (auto& a : args) {
        std::vector<Value*> refs;
        a.arg.for_each_value([&](Value* v) { refs.push_back(v); });
        for (Value* v : refs) a.arg.replace_value(v, map.at(v));
      }
      Node* copy = g.create_node(n->target(), std::move(args));
      std::vector<Argument> outs;
      for (const Argument& o : n->outputs()) {
        auto clone_value = [&](Value* v) {
          Value* c = g.new_node_value(copy, ValueKind::Tensor, v->name());
          c->set_meta(*v->meta());
          map[v] = c;
          return c;
        };
        if (const auto* t = o.get_if<TensorRef>()) {
          outs.push_back(TensorRef{clone_value(t->value)});
        } else if (const auto* l = o.get_if<TensorList>()) {
          TensorList list;
          for (Value* v : l->items) list.items.push_back(clone_value(v));
          outs.push_back(std::move(list));
        } else {
          return make_error(std::string(ConstantPropagation::kName) + ": node '" + n->name() +
                            "' has an output that is neither a tensor nor a tensor list");
        }
      }
      g.set_node_outputs(copy, std::move(outs));
    }
    for (Value* v : frontier) LATHE_RETURN_IF_ERROR(srw.add_output(map.at(v), OutputSpec{OutputKind::UserOutput, ""}));
    return scratch;
  }

  std::string state_name(const Value* v) const {
    std::string base = "folded_" + v->name();
    std::string name = base;
    auto taken = [&](const std::string& s) {
      if (ep_.parameters.contains(s) || ep_.buffers.contains(s) || ep_.constants.contains(s)) return true;
      return std::any_of(ep_.input_specs.begin(), ep_.input_specs.end(),
                         [&](const InputSpec& spec) { return spec.target == s; });
    };
    for (int i = 1; taken(name); ++i) name = base + "_" + std::to_string(i);
    return name;
  }

  Status materialise(const std::vector<Value*>& frontier, std::vector<Tensor>& values) {
    Rewriter rw(ep_);
    for (size_t i = 0; i < frontier.size(); ++i) {
      Value* v = frontier[i];
      const Tensor& t = values[i];
      if (t.dtype != v->meta()->dtype || t.sizes != *v->meta()->concrete_sizes())
        return make_error(std::string(ConstantPropagation::kName) + ": the evaluator returned " +
                          std::string(dtype_name(t.dtype)) + shape_string(t.sizes) + " for " + quoted(v) + " (" +
                          format_type(*v) + ")");
      std::string name = state_name(v);
      LATHE_ASSIGN_OR_RETURN(Value * c, rw.add_constant(name, t));
      LATHE_RETURN_IF_ERROR(rw.replace_all_uses(v, c));
      ctx_.rewritten(v->producer()->name(), v->producer()->op_name() + " '" + v->producer()->name() +
                                                "' folded into lifted constant '" + name + "' (" + format_type(*c) +
                                                ")");
    }
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) LATHE_RETURN_IF_ERROR(rw.erase_node(*it));
    for (Value* p : inputs_read_)
      if (!p->has_uses()) LATHE_RETURN_IF_ERROR(rw.remove_input(p));
    return Status::Ok();
  }

  ExportedProgram& ep_;
  PassContext& ctx_;
  const ConstantPropagationOptions& options_;
  const ConstantEvaluator& evaluator_;
  Constness k_;
  std::unordered_set<const Value*> mutation_reads_;
  std::unordered_set<const Node*> folded_;
  std::vector<Node*> order_;
  std::vector<Value*> inputs_read_;  // constant placeholders the folded nodes read
};

}  // namespace

ConstantEvaluator ConstantPropagation::set_default_evaluator(ConstantEvaluator evaluator) {
  ConstantEvaluator previous = std::move(default_slot());
  default_slot() = std::move(evaluator);
  return previous;
}

const ConstantEvaluator& ConstantPropagation::default_evaluator() { return default_slot(); }

Result<bool> ConstantPropagation::run(ExportedProgram& program, PassContext& ctx) {
  const ConstantEvaluator& ev = options_.evaluator ? options_.evaluator : default_slot();
  return Folder(program, ctx, options_, ev).run();
}

}  // namespace lathe
