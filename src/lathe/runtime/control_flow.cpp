#include "lathe/runtime/control_flow.h"

#include <map>
#include <optional>

#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/runtime/auto_functionalized.h"
#include "lathe/runtime/graph_plan.h"
#include "lathe/runtime/input_check.h"
#include "lathe/runtime/kernel_call.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

// Argument `index` of a higher-order node as a subgraph, planned.
Result<std::unique_ptr<GraphPlan>> plan_subgraph(const Node& n, size_t index, const GraphPlanOptions& options) {
  const GraphArg* ga = index < n.inputs().size() ? n.inputs()[index].arg.get_if<GraphArg>() : nullptr;
  if (!ga || !ga->graph) return make_error("argument #" + std::to_string(index) + " is not a subgraph");
  GraphPlanOptions sub = options;
  sub.init_delegate = nullptr;  // a subgraph sees no program state to prepack from
  auto plan = GraphPlan::create(*ga->graph, sub);
  if (!plan.ok()) return plan.error().context("subgraph '" + ga->name + "'");
  return plan;
}

size_t list_size(const Node& n, size_t index) {
  if (index >= n.inputs().size()) return 0;
  const Argument& a = n.inputs()[index].arg;
  if (auto* l = a.get_if<TensorList>()) return l->items.size();
  return a.is_none() ? 0 : 1;
}

// A predicate as torch.cond and while_loop take it: a one-element tensor or a
// (symbolic) bool.
Result<bool> truth(const EValue& v) {
  if (v.is_bool()) return v.to_bool();
  if (v.is_int()) return v.to_int() != 0;
  if (!v.is_tensor()) return make_error("predicate is " + v.describe() + ", not a bool or a one-element tensor");
  const Tensor& t = v.tensor();
  if (t.numel() != 1) return make_error("predicate tensor has " + std::to_string(t.numel()) + " elements, not 1");
  return *kernels::cdata<bool>(kernels::as_dtype(t, DType::Bool));
}

// A while_loop condition as torch.while_loop checks it: a bool, or a 0-d bool
// tensor; an int64 count that happens to be non-zero is a program torch
// would refuse, and its meaning (non-zero is true?) a guess.
Result<bool> loop_condition(const EValue& v) {
  if (v.is_tensor() && (v.tensor().dtype != DType::Bool || !v.tensor().sizes.empty())) {
    return make_error("cond_fn returned a tensor of dtype " + std::string(dtype_name(v.tensor().dtype)) + " and shape " +
                      shape_string(v.tensor().sizes) + ", not a bool or a 0-d bool tensor (as torch.while_loop requires)");
  }
  if (v.is_int()) return make_error("cond_fn returned an int, not a bool (as torch.while_loop requires)");
  return truth(v);
}

// The node's declared output sizes, parsed once at plan time, and where
// this call's operands give the shape symbols they use: a declared [s77, 8]
// is checked against s77 as the operand declared [s77, 8] gives it. A
// symbol no operand dimension gives (an unbacked u0) is left unchecked.
class DeclaredShapes {
 public:
  using Bindings = std::map<std::string, int64_t>;

  // `operand_args`: the node's arguments (tensor lists) its operands come in.
  static DeclaredShapes create(const Node& n, std::initializer_list<size_t> operand_args) {
    DeclaredShapes d;
    for (size_t a : operand_args) {
      const TensorList* l = a < n.inputs().size() ? n.inputs()[a].arg.get_if<TensorList>() : nullptr;
      if (!l) continue;
      for (size_t item = 0; item < l->items.size(); ++item) {
        const Value* v = l->items[item];
        if (!v || v->kind() != ValueKind::Tensor || !v->meta()) continue;
        const std::vector<SymDim>& sizes = v->meta()->sizes;
        for (size_t k = 0; k < sizes.size(); ++k) {
          if (sizes[k].is_concrete()) continue;
          if (auto sym = plain_symbol(sizes[k].expr().expr)) d.binders_.push_back(Binder{a, item, k, *sym});
        }
      }
    }
    for (const Value* v : n.defined_values()) {
      std::vector<std::optional<SymExpression>> dims;
      if (v && v->kind() == ValueKind::Tensor && v->meta()) {
        for (const SymDim& s : v->meta()->sizes)
          dims.push_back(s.is_concrete() ? std::nullopt : SymExpression::parse(s.expr().expr));
      }
      d.outputs_.push_back(std::move(dims));
    }
    return d;
  }

  // The symbols' values for this call; `items[i]` are the items of
  // argument `operand_args[i]`'s list, as KernelCall::arg_items gives them.
  Bindings bind(const std::vector<std::pair<size_t, const std::vector<EValue>*>>& items) const {
    Bindings out;
    for (const Binder& b : binders_) {
      for (const auto& [arg, values] : items) {
        if (arg != b.arg || b.item >= values->size() || !(*values)[b.item].is_tensor()) continue;
        const Tensor& t = (*values)[b.item].tensor();
        if (b.dim < t.sizes.size()) out.emplace(b.symbol, t.sizes[b.dim]);
      }
    }
    return out;
  }

  // Output i's dim k for these bindings; nullopt when concrete, unparsed
  // or unbound.
  std::optional<int64_t> symbolic_size(size_t i, size_t k, const Bindings& values) const {
    if (i >= outputs_.size() || k >= outputs_[i].size() || !outputs_[i][k]) return std::nullopt;
    return outputs_[i][k]->evaluate(values);
  }

 private:
  struct Binder {
    size_t arg, item, dim;
    std::string symbol;
  };
  std::vector<Binder> binders_;
  std::vector<std::vector<std::optional<SymExpression>>> outputs_;
};

// A subgraph's results must be what the node declares it returns (dtype,
// rank, every concrete size and every symbolic size this call's operands
// bind): a branch returning [8, 8] for a declared [4, 8] or [s77, 8] with
// s77 = 4 would otherwise flow on as if it were [4, 8], and a loop body that
// grows its carry would run until memory is gone.
Status check_declared(const Node& node, const std::vector<EValue>& values, std::string_view what,
                      const DeclaredShapes* shapes = nullptr, const DeclaredShapes::Bindings* bound = nullptr) {
  const std::vector<Value*>& declared = node.defined_values();
  if (values.size() != declared.size()) {
    return make_error(std::string(what) + " returned " + std::to_string(values.size()) + " value(s), the node has " +
                      std::to_string(declared.size()) + " output(s)");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const Value* d = declared[i];
    if (d->kind() != ValueKind::Tensor || !d->meta() || !values[i].is_tensor()) continue;
    const Tensor& t = values[i].tensor();
    const TensorMeta& m = *d->meta();
    bool same = t.dtype == m.dtype && t.sizes.size() == m.sizes.size();
    std::string symbols;  // " (s77 = 4)" for a symbolic size that differs
    for (size_t k = 0; same && k < m.sizes.size(); ++k) {
      if (m.sizes[k].is_concrete()) {
        same = m.sizes[k].value() == t.sizes[k];
      } else if (shapes && bound) {
        if (auto want = shapes->symbolic_size(i, k, *bound); want && *want != t.sizes[k]) {
          same = false;
          symbols = " (" + readable_sym_expr(m.sizes[k].expr().expr) + " = " + std::to_string(*want) + " for this call)";
        }
      }
    }
    if (!same) {
      return make_error(std::string(what) + " returned " + std::string(dtype_name(t.dtype)) + " " + shape_string(t.sizes) +
                        " as output " + std::to_string(i) + " '" + d->name() + "', declared " +
                        std::string(dtype_name(m.dtype)) + " " + format_dims(m.sizes) + symbols);
    }
  }
  return Status::Ok();
}

Status set_outputs(KernelCall& call, std::vector<EValue> values, std::string_view what,
                   const DeclaredShapes* shapes = nullptr, const DeclaredShapes::Bindings* bound = nullptr) {
  LATHE_RETURN_IF_ERROR(check_declared(call.node(), values, what, shapes, bound));
  for (size_t i = 0; i < values.size(); ++i) LATHE_RETURN_IF_ERROR(call.set_output(i, std::move(values[i])));
  return Status::Ok();
}

std::vector<EValue> concat(std::vector<EValue> a, const std::vector<EValue>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class CondHandle : public DelegateHandle {
 public:
  CondHandle(std::unique_ptr<GraphPlan> t, std::unique_ptr<GraphPlan> f, DeclaredShapes shapes)
      : true_(std::move(t)), false_(std::move(f)), shapes_(std::move(shapes)) {}

  Status execute(KernelCall& call) override {
    LATHE_ASSIGN_OR_RETURN(EValue pred, call.arg_value(0));
    LATHE_ASSIGN_OR_RETURN(bool taken, truth(pred));
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> operands, call.arg_items(3));
    const DeclaredShapes::Bindings bound = shapes_.bind({{3, &operands}});
    GraphPlan& branch = taken ? *true_ : *false_;
    auto out = branch.run(std::move(operands));
    if (!out.ok()) return out.error().context(taken ? "true branch" : "false branch");
    return set_outputs(call, std::move(out).value(), taken ? "the true branch" : "the false branch", &shapes_, &bound);
  }

 private:
  std::unique_ptr<GraphPlan> true_, false_;
  DeclaredShapes shapes_;
};

Result<std::shared_ptr<DelegateHandle>> plan_cond(const Node& n, const GraphPlanOptions& options) {
  if (n.inputs().size() != 4) return make_error("cond takes 4 arguments, the node has " + std::to_string(n.inputs().size()));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> t, plan_subgraph(n, 1, options));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> f, plan_subgraph(n, 2, options));
  const size_t operands = list_size(n, 3);
  for (const GraphPlan* g : {t.get(), f.get()}) {
    if (g->graph().inputs().size() != operands) {
      return make_error("a branch takes " + std::to_string(g->graph().inputs().size()) + " input(s), cond passes " +
                        std::to_string(operands));
    }
  }
  return std::shared_ptr<DelegateHandle>(
      std::make_shared<CondHandle>(std::move(t), std::move(f), DeclaredShapes::create(n, {3})));
}

class WhileLoopHandle : public DelegateHandle {
 public:
  WhileLoopHandle(std::unique_ptr<GraphPlan> c, std::unique_ptr<GraphPlan> b, int64_t max_iterations,
                  DeclaredShapes shapes)
      : cond_(std::move(c)), body_(std::move(b)), max_iterations_(max_iterations), shapes_(std::move(shapes)) {}

  Status execute(KernelCall& call) override {
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> carried, call.arg_items(2));
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> extra, call.arg_items(3));
    const size_t count = carried.size();
    // The symbols as the initial carries and extra inputs give them.
    const DeclaredShapes::Bindings bound = shapes_.bind({{2, &carried}, {3, &extra}});
    for (int64_t iteration = 0;; ++iteration) {
      if (iteration == max_iterations_) {
        return make_error("while_loop ran " + std::to_string(max_iterations_) +
                          " iterations without its condition becoming false (the limit: "
                          "ExecutorOptions::max_loop_iterations)");
      }
      auto c = cond_->run(concat(carried, extra));
      if (!c.ok()) return c.error().context("cond_fn, iteration " + std::to_string(iteration));
      if (c->size() != 1) return make_error("cond_fn returned " + std::to_string(c->size()) + " values, not 1");
      LATHE_ASSIGN_OR_RETURN(bool again, loop_condition((*c)[0]));
      if (!again) break;
      auto next = body_->run(concat(std::move(carried), extra));
      if (!next.ok()) return next.error().context("body_fn, iteration " + std::to_string(iteration));
      if (next->size() != count) {
        return make_error("body_fn returned " + std::to_string(next->size()) + " values for " + std::to_string(count) +
                          " carried");
      }
      // The carries keep the types the node declares, every iteration.
      LATHE_RETURN_IF_ERROR(check_declared(call.node(), *next, "body_fn, iteration " + std::to_string(iteration) + ",",
                                           &shapes_, &bound));
      carried = std::move(next).value();
    }
    return set_outputs(call, std::move(carried), "while_loop", &shapes_, &bound);
  }

 private:
  std::unique_ptr<GraphPlan> cond_, body_;
  int64_t max_iterations_;
  DeclaredShapes shapes_;
};

Result<std::shared_ptr<DelegateHandle>> plan_while_loop(const Node& n, const GraphPlanOptions& options) {
  if (n.inputs().size() != 4) {
    return make_error("while_loop takes 4 arguments, the node has " + std::to_string(n.inputs().size()));
  }
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> c, plan_subgraph(n, 0, options));
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> b, plan_subgraph(n, 1, options));
  const size_t inputs = list_size(n, 2) + list_size(n, 3);
  if (c->graph().inputs().size() != inputs || b->graph().inputs().size() != inputs) {
    return make_error("cond_fn/body_fn take " + std::to_string(c->graph().inputs().size()) + "/" +
                      std::to_string(b->graph().inputs().size()) + " input(s), while_loop passes " + std::to_string(inputs));
  }
  return std::shared_ptr<DelegateHandle>(
      std::make_shared<WhileLoopHandle>(std::move(c), std::move(b), options.max_loop_iterations,
                                        DeclaredShapes::create(n, {2, 3})));
}

// A region marker (no_grad, autocast): runs its subgraph on the arguments
// that follow it. Gradients do not exist at inference, so grad mode changes
// nothing; an enabled autocast region would change dtypes, which the
// subgraph does not spell out, so it is refused rather than run wrongly.
class WrapHandle : public DelegateHandle {
 public:
  WrapHandle(std::unique_ptr<GraphPlan> g, size_t first_operand) : graph_(std::move(g)), first_(first_operand) {}

  Status execute(KernelCall& call) override {
    std::vector<EValue> operands;
    for (size_t i = first_; i < call.node().inputs().size(); ++i) {
      LATHE_ASSIGN_OR_RETURN(EValue v, call.arg_value(i));
      operands.push_back(std::move(v));
    }
    auto out = graph_->run(std::move(operands));
    if (!out.ok()) return out.error().context("wrapped subgraph");
    return set_outputs(call, std::move(out).value(), "the wrapped subgraph");
  }

 private:
  std::unique_ptr<GraphPlan> graph_;
  size_t first_;
};

// The literal at `index` of a wrapper node, as a bool (false when absent).
bool literal_bool(const Node& n, size_t index) {
  if (index >= n.inputs().size()) return false;
  const bool* b = n.inputs()[index].arg.get_if<bool>();
  return b && *b;
}

Result<std::shared_ptr<DelegateHandle>> plan_wrap(const Node& n, const GraphPlanOptions& options) {
  const bool autocast = ops::same_op(n.op_target(), ops::higher_order::wrap_with_autocast);
  const size_t graph_index = autocast ? 4 : 1;
  if (n.inputs().size() <= graph_index) {
    return make_error(n.op_name() + " takes its subgraph as argument #" + std::to_string(graph_index) + ", the node has " +
                      std::to_string(n.inputs().size()) + " argument(s)");
  }
  if (autocast && literal_bool(n, 2)) {
    return make_error("an enabled autocast region (wrap_with_autocast with enabled=True) changes dtypes the graph does not "
                      "spell out; export it without autocast, or with run_decompositions()");
  }
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> g, plan_subgraph(n, graph_index, options));
  const size_t operands = n.inputs().size() - graph_index - 1;
  if (g->graph().inputs().size() != operands) {
    return make_error("the subgraph takes " + std::to_string(g->graph().inputs().size()) + " input(s), the node passes " +
                      std::to_string(operands));
  }
  return std::shared_ptr<DelegateHandle>(std::make_shared<WrapHandle>(std::move(g), graph_index + 1));
}

// Element `i` of `t` along its leading dim (a view).
Tensor leading_slice(const Tensor& t, int64_t i) {
  return kernels::make_view(t, std::vector<int64_t>(t.sizes.begin() + 1, t.sizes.end()),
                            std::vector<int64_t>(t.strides.begin() + 1, t.strides.end()), t.storage_offset + i * t.strides[0]);
}

// The leading size every tensor of `xs` shares (what the loop runs over).
Result<int64_t> loop_length(const std::vector<EValue>& xs, std::string_view op) {
  if (xs.empty()) return make_error(std::string(op) + " has no tensors to loop over");
  int64_t n = -1;
  for (const EValue& v : xs) {
    if (!v.is_tensor() || v.tensor().sizes.empty()) {
      return make_error(std::string(op) + ": every xs entry must be a tensor with a leading dim, got " + v.describe());
    }
    const int64_t len = v.tensor().sizes[0];
    if (n >= 0 && len != n) return make_error(std::string(op) + ": xs have leading sizes " + std::to_string(n) + " and " + std::to_string(len));
    n = len;
  }
  if (n == 0) return make_error(std::string(op) + ": xs have a leading size of 0; there is no step to run");
  return n;
}

// Per-step outputs stacked along a new leading dim of `steps` entries.
class Stacker {
 public:
  explicit Stacker(int64_t steps) : steps_(steps) {}
  Status add(int64_t step, const std::vector<EValue>& ys, size_t first) {
    if (stacked_.empty()) {
      for (size_t k = first; k < ys.size(); ++k) {
        if (!ys[k].is_tensor()) return make_error("step output " + std::to_string(k) + " is " + ys[k].describe() + ", not a tensor");
        std::vector<int64_t> sizes = ys[k].tensor().sizes;
        sizes.insert(sizes.begin(), steps_);
        stacked_.push_back(Tensor::empty(ys[k].tensor().dtype, sizes));
      }
    }
    if (ys.size() - first != stacked_.size()) return make_error("a step returned a different number of outputs");
    for (size_t k = 0; k < stacked_.size(); ++k) {
      Tensor dst = leading_slice(stacked_[k], step);
      const Tensor& y = ys[first + k].tensor();
      if (y.sizes != dst.sizes || y.dtype != dst.dtype) {
        return make_error("step " + std::to_string(step) + " output " + std::to_string(k) + " is " + shape_string(y.sizes) +
                          ", step 0's was " + shape_string(dst.sizes));
      }
      LATHE_RETURN_IF_ERROR(kernels::copy_into(y, dst));
    }
    return Status::Ok();
  }
  std::vector<EValue> values() const { return std::vector<EValue>(stacked_.begin(), stacked_.end()); }

 private:
  int64_t steps_;
  std::vector<Tensor> stacked_;
};

class ScanHandle : public DelegateHandle {
 public:
  explicit ScanHandle(std::unique_ptr<GraphPlan> g) : combine_(std::move(g)) {}

  Status execute(KernelCall& call) override {
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> carries, call.arg_items(1));
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> xs, call.arg_items(2));
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> extra, call.arg_items(3));
    LATHE_ASSIGN_OR_RETURN(int64_t steps, loop_length(xs, "scan"));
    Stacker ys(steps);
    for (int64_t i = 0; i < steps; ++i) {
      std::vector<EValue> in = carries;
      for (const EValue& x : xs) in.push_back(leading_slice(x.tensor(), i));
      in.insert(in.end(), extra.begin(), extra.end());
      auto out = combine_->run(std::move(in));
      if (!out.ok()) return out.error().context("combine_fn, step " + std::to_string(i));
      if (out->size() < carries.size()) return make_error("combine_fn returned fewer values than scan carries");
      LATHE_RETURN_IF_ERROR(ys.add(i, *out, carries.size()));
      // The next step reads the new carries while the plan reuses its buffers: copy them out.
      for (size_t k = 0; k < carries.size(); ++k) {
        const EValue& c = (*out)[k];
        carries[k] = c.is_tensor() ? EValue(kernels::contiguous_copy(c.tensor())) : c;
      }
    }
    return set_outputs(call, concat(std::move(carries), ys.values()), "scan");
  }

 private:
  std::unique_ptr<GraphPlan> combine_;
};

class MapHandle : public DelegateHandle {
 public:
  explicit MapHandle(std::unique_ptr<GraphPlan> g) : body_(std::move(g)) {}

  Status execute(KernelCall& call) override {
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> xs, call.arg_items(1));
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> args, call.arg_items(2));
    LATHE_ASSIGN_OR_RETURN(int64_t steps, loop_length(xs, "map"));
    Stacker ys(steps);
    for (int64_t i = 0; i < steps; ++i) {
      std::vector<EValue> in;
      for (const EValue& x : xs) in.push_back(leading_slice(x.tensor(), i));
      in.insert(in.end(), args.begin(), args.end());
      auto out = body_->run(std::move(in));
      if (!out.ok()) return out.error().context("map body, step " + std::to_string(i));
      LATHE_RETURN_IF_ERROR(ys.add(i, *out, 0));
    }
    return set_outputs(call, ys.values(), "map");
  }

 private:
  std::unique_ptr<GraphPlan> body_;
};

Result<std::shared_ptr<DelegateHandle>> plan_loop(const Node& n, const GraphPlanOptions& options) {
  const bool is_scan = ops::same_op(n.op_target(), ops::higher_order::scan);
  const size_t lists = is_scan ? 3 : 2;
  if (n.inputs().size() != lists + 1) {
    return make_error(n.op_name() + " takes " + std::to_string(lists + 1) + " arguments, the node has " +
                      std::to_string(n.inputs().size()));
  }
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<GraphPlan> g, plan_subgraph(n, 0, options));
  size_t operands = 0;
  for (size_t i = 1; i <= lists; ++i) operands += list_size(n, i);
  if (g->graph().inputs().size() != operands) {
    return make_error("the loop body takes " + std::to_string(g->graph().inputs().size()) + " input(s), " + n.op_name() +
                      " passes " + std::to_string(operands));
  }
  if (is_scan) return std::shared_ptr<DelegateHandle>(std::make_shared<ScanHandle>(std::move(g)));
  return std::shared_ptr<DelegateHandle>(std::make_shared<MapHandle>(std::move(g)));
}

bool is_loop(const Node& n) {
  return ops::same_op(n.op_target(), ops::higher_order::scan) || ops::same_op(n.op_target(), ops::higher_order::map_impl);
}

bool is_wrap(const Node& n) {
  return ops::same_op(n.op_target(), ops::higher_order::wrap_with_set_grad_enabled) ||
         ops::same_op(n.op_target(), ops::higher_order::wrap_with_autocast);
}

}  // namespace

bool is_control_flow(const Node& n) {
  return ops::same_op(n.op_target(), ops::higher_order::cond) || ops::same_op(n.op_target(), ops::higher_order::while_loop) ||
         is_wrap(n) || is_loop(n);
}

Result<std::shared_ptr<DelegateHandle>> plan_control_flow(const Node& n, const GraphPlanOptions& options) {
  if (ops::same_op(n.op_target(), ops::higher_order::cond)) return plan_cond(n, options);
  if (ops::same_op(n.op_target(), ops::higher_order::while_loop)) return plan_while_loop(n, options);
  if (is_wrap(n)) return plan_wrap(n, options);
  if (is_loop(n)) return plan_loop(n, options);
  if (is_auto_functionalized(n)) return plan_auto_functionalized(n, *options.kernels);
  return make_error("not a control-flow op");
}

std::string describe_op(const Node& n) {
  const std::string op = n.op_name();
  // with_effects(token, op, *args) names its op second; the functionalization wrappers first.
  const bool effects = op == "higher_order.with_effects";
  const size_t at = effects ? 1 : 0;
  if ((!effects && !op.starts_with(ops::higher_order::kAutoFunctionalizedPrefix)) || n.inputs().size() <= at) return op;
  const auto* wrapped = n.inputs()[at].arg.get_if<OperatorArg>();
  if (!wrapped) return op;
  return op + " of " + (effects ? "effectful op " : "custom op ") + std::string(ops::strip_torch_ops(wrapped->name));
}

namespace {
Status planned_not_called(KernelCall& call) {
  return make_error(call.node().op_name() + " runs through its planned subgraphs, not as a kernel");
}
}  // namespace

void register_control_flow_entries(KernelRegistry& r) {
  for (OpTarget op : {ops::higher_order::cond, ops::higher_order::while_loop, ops::higher_order::wrap_with_set_grad_enabled,
                      ops::higher_order::wrap_with_autocast, ops::higher_order::scan, ops::higher_order::map_impl}) {
    r.set(op.str(), {planned_not_called, OutputAlias::MaybeView});
  }
}

}  // namespace lathe
