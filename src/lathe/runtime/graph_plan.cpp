#include "lathe/runtime/graph_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/auto_functionalized.h"
#include "lathe/runtime/contraction_work.h"
#include "lathe/runtime/control_flow.h"
#include "lathe/runtime/kernel_call.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/memory_plan.h"

namespace lathe {

std::string node_label(const Node& n) { return "node '" + n.name() + "' (" + n.op_name() + ")"; }

// One slot per item for list arguments, one for anything else (see
// BoundArgument).
Result<BoundArgument> bind_argument(const NamedArgument& na, const std::unordered_map<const Value*, int32_t>& slot_of) {
  BoundArgument b;
  b.arg = &na;
  auto slot = [&](const Value* v) -> Result<int32_t> {
    if (!v) return -1;
    auto it = slot_of.find(v);
    if (it == slot_of.end()) return make_error("argument '" + na.name + "' reads '" + v->name() + "', which nothing defines");
    return it->second;
  };
  auto sym_items = [&](const auto& items) -> Status {
    for (const auto& s : items) {
      LATHE_ASSIGN_OR_RETURN(int32_t id, slot(s.is_value() ? s.value() : nullptr));
      b.slots.push_back(id);
    }
    return Status::Ok();
  };
  const Argument& a = na.arg;
  if (auto* l = a.get_if<TensorList>()) {
    for (Value* v : l->items) {
      LATHE_ASSIGN_OR_RETURN(int32_t id, slot(v));
      b.slots.push_back(id);
    }
  } else if (auto* ol = a.get_if<OptionalTensorList>()) {
    for (Value* v : ol->items) {
      LATHE_ASSIGN_OR_RETURN(int32_t id, slot(v));
      b.slots.push_back(id);
    }
  } else if (auto* si = a.get_if<SymIntList>()) {
    LATHE_RETURN_IF_ERROR(sym_items(si->items));
  } else if (auto* sf = a.get_if<SymFloatList>()) {
    LATHE_RETURN_IF_ERROR(sym_items(sf->items));
  } else if (auto* sb = a.get_if<SymBoolList>()) {
    LATHE_RETURN_IF_ERROR(sym_items(sb->items));
  } else {
    Value* first = nullptr;
    size_t count = 0;
    a.for_each_value([&](Value* v) {
      if (!first) first = v;
      ++count;
    });
    if (count > 1) return make_error("argument '" + na.name + "': nested tensor arguments are not supported");
    LATHE_ASSIGN_OR_RETURN(int32_t id, slot(first));
    b.slots.push_back(id);
  }
  return b;
}

namespace {

using SlotMap = std::unordered_map<const Value*, int32_t>;

struct PlannedNode {
  const Node* node = nullptr;
  KernelFn fn = nullptr;
  OutputAlias alias = OutputAlias::None;
  std::shared_ptr<DelegateHandle> handle;  // delegate or control flow: runs instead of fn
  std::shared_ptr<const PreparedState> prepared;  // the kernel's PrepareFn result
  std::vector<BoundArgument> args;
  std::vector<int32_t> outputs;
  std::vector<int32_t> release;  // slots whose last reader is this node
  // Counts toward max_elements_per_node; cond / while_loop / wrappers do
  // not: the nodes of their subgraphs count, each on its own.
  bool metered = true;
};

// Elements a node reads: each tensor operand at its logical size, so a
// broadcast view counts every element it shows, not the storage behind it.
int64_t operand_elements(const PlannedNode& p, const std::vector<EValue>& slots) {
  int64_t n = 0;
  for (const BoundArgument& b : p.args) {
    for (int32_t s : b.slots) {
      if (s >= 0 && slots[s].is_tensor()) n = saturating_add(n, slots[s].tensor().numel());
    }
  }
  return n;
}

std::string over_work_limit(int64_t touched, int64_t limit) {
  const std::string count = touched == std::numeric_limits<int64_t>::max() ? "more than 2^63" : std::to_string(touched);
  return "would touch at least " + count + " elements (tensor operands and outputs at their logical sizes, "
         "broadcast views included), more than the limit of " + std::to_string(limit) +
         " per node (max_elements_per_node: raise it for a program you trust; lathe run --max-elements-per-node)";
}

// The multiply-adds the node would do, when it is a contraction
// (contraction_work.h), over its share of the work limit.
Status check_contraction_work(const PlannedNode& p, const std::vector<EValue>& slots, int64_t max_elements) {
  auto operand = [&](std::string_view name) -> const Tensor* {
    for (const BoundArgument& b : p.args) {
      if (b.arg && b.arg->name == name && b.slots.size() == 1 && b.slots[0] >= 0 && slots[b.slots[0]].is_tensor()) {
        return &slots[b.slots[0]].tensor();
      }
    }
    return nullptr;
  };
  const std::optional<int64_t> work = contraction_multiply_adds(p.node->op_name(), operand);
  const int64_t limit = max_elements > INT64_MAX / kMultiplyAddsPerElementLimit
                            ? INT64_MAX
                            : max_elements * kMultiplyAddsPerElementLimit;
  if (!work || *work <= limit) return Status::Ok();
  return make_error("would do at least " + std::to_string(*work) + " multiply-adds, more than the limit of " +
                    std::to_string(limit) + " per node (" + std::to_string(kMultiplyAddsPerElementLimit) +
                    " x max_elements_per_node: raise it for a program you trust; lathe run --max-elements-per-node)");
}

struct OutputBinding {
  int32_t slot = -1;  // -1: a literal output
  EValue literal;
};

// Node outputs flattened: a Tensor[] output contributes one position per item.
std::vector<const Value*> flatten_outputs(const Node& n) {
  std::vector<const Value*> out;
  for (const Argument& a : n.outputs()) {
    if (auto* l = a.get_if<TensorList>()) {
      out.insert(out.end(), l->items.begin(), l->items.end());
    } else if (auto* ol = a.get_if<OptionalTensorList>()) {
      out.insert(out.end(), ol->items.begin(), ol->items.end());
    } else {
      const Value* v = nullptr;
      a.for_each_value([&](Value* x) {
        if (!v) v = x;
      });
      out.push_back(v);
    }
  }
  return out;
}

// Bytes a tensor value is expected to need: exact for concrete sizes, the
// export-time hint for symbolic ones (0 where a dim has no hint, e.g. an
// unbacked size); the buffer grows at run time if a call needs more.
// An estimate: 0 (nothing planned; the call allocates what it really needs,
// checked then) when the declared sizes overflow or exceed what the machine
// could hold, since they come from the file.
size_t estimated_nbytes(const TensorMeta& m) {
  uint64_t n = dtype_size(m.dtype);
  for (const SymDim& d : m.sizes) {
    int64_t v = 0;
    if (d.is_concrete()) {
      v = d.value();
    } else if (d.expr().hint && std::holds_alternative<int64_t>(*d.expr().hint)) {
      v = std::get<int64_t>(*d.expr().hint);
    }
    if (v < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(v), &n)) return 0;
  }
  return n > Tensor::max_tensor_bytes() ? 0 : static_cast<size_t>(n);
}

std::optional<EValue> literal_output(const Argument& a) {
  if (auto* x = a.get_if<int64_t>()) return EValue(*x);
  if (auto* d = a.get_if<double>()) return EValue(*d);
  if (auto* bo = a.get_if<bool>()) return EValue(*bo);
  if (auto* si = a.get_if<SymIntArg>(); si && !si->is_value()) return EValue(si->literal());
  if (auto* sb = a.get_if<SymBoolArg>(); sb && !sb->is_value()) return EValue(sb->literal());
  if (auto* sf = a.get_if<SymFloatArg>(); sf && !sf->is_value()) return EValue(sf->literal());
  return std::nullopt;
}

// The kernel's plan-time state for `n` (see PreparedState), from the
// operands bound to program constants.
Result<std::shared_ptr<const PreparedState>> prepare_node(const KernelInfo& k, const Node& n,
                                                          const GraphPlanOptions& options) {
  if (!k.prepare || !options.constant_of) return std::shared_ptr<const PreparedState>();
  const ConstantOperand constant = [&](std::string_view name) -> const Tensor* {
    const Argument* a = n.input(name);
    const Value* v = a ? a->tensor() : nullptr;
    return v ? options.constant_of(v) : nullptr;
  };
  return k.prepare(n, constant);
}

std::string missing_kernels_message(const std::map<std::string, std::vector<std::string>>& missing) {
  std::string msg = "no kernel for " + std::to_string(missing.size()) + " op(s): ";
  bool first = true;
  for (const auto& [op, names] : missing) {
    msg += (first ? "" : "; ") + op + " (node";
    msg += names.size() > 1 ? "s " : " ";
    for (size_t i = 0; i < names.size() && i < 3; ++i) msg += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > 3) msg += ", +" + std::to_string(names.size() - 3) + " more";
    msg += ")";
    first = false;
  }
  return msg;
}

}  // namespace

struct GraphPlan::Impl : OutputAllocator {
  const Graph* graph = nullptr;
  std::vector<EValue> slots;
  std::vector<int32_t> input_slots;  // per graph input; -1: none
  std::vector<OutputBinding> outputs;
  std::vector<PlannedNode> nodes;
  std::vector<int32_t> buffer_of_slot;
  std::vector<std::shared_ptr<Storage>> buffers;
  MemoryStats stats;
  const PlannedNode* current = nullptr;
  std::function<bool()> interrupted;  // GraphPlanOptions::interrupted
  int64_t max_elements = kDefaultMaxElementsPerNode;  // GraphPlanOptions::max_elements_per_node
  int64_t touched = 0;  // elements the current node has read and allocated so far

  // Adds `n` elements to the current node's work; an error past the limit.
  Status touch(int64_t n) {
    touched = saturating_add(touched, n);
    if (touched <= max_elements) return Status::Ok();
    return make_error(over_work_limit(touched, max_elements));
  }

  Result<Tensor> allocate(size_t index, DType dtype, const std::vector<int64_t>& sizes) override;
  Status plan(const Graph& g, const GraphPlanOptions& options, const std::vector<bool>& output_escapes);
  Status plan_nodes(const Graph& g, const GraphPlanOptions& options, const SlotMap& slot_of);
  void plan_memory(const std::vector<const Value*>& value_of, const std::vector<bool>& is_output,
                   const std::vector<bool>& escapes, bool share);
  Result<std::vector<EValue>> run(std::vector<EValue> inputs);
};

Result<Tensor> GraphPlan::Impl::allocate(size_t index, DType dtype, const std::vector<int64_t>& sizes) {
  const int32_t slot = current->outputs[index];
  // Counted before the memory is taken; sizes whose count is not an int64
  // (negative, overflowing) are try_empty's to report.
  const std::optional<int64_t> count = checked_numel(sizes);
  if (count && current->metered) LATHE_RETURN_IF_ERROR(touch(*count));
  // Sizes computed from a file's shapes and attributes are untrusted: an
  // absurd one is an error naming the output, not an overflow or bad_alloc.
  if (slot < 0 || buffer_of_slot[slot] < 0) return Tensor::try_empty(dtype, sizes);
  LATHE_ASSIGN_OR_RETURN(const uint64_t nbytes, contiguous_nbytes(dtype, sizes));
  std::shared_ptr<Storage>& buf = buffers[buffer_of_slot[slot]];
  if (buf->nbytes() < nbytes) {
    // A symbolic size larger than planned: every other root of this buffer
    // is dead now (see graph_plan.h), so the buffer can be replaced.
    LATHE_ASSIGN_OR_RETURN(Tensor fresh, Tensor::try_empty(dtype, sizes));
    stats.buffer_bytes += nbytes - buf->nbytes();
    ++stats.buffer_growths;
    buf = fresh.storage;
  }
  Tensor t;
  t.storage = buf;
  t.dtype = dtype;
  t.sizes = sizes;
  t.strides = Tensor::contiguous_strides(sizes);
  return t;
}

Status GraphPlan::Impl::plan(const Graph& g, const GraphPlanOptions& options, const std::vector<bool>& output_escapes) {
  graph = &g;
  interrupted = options.interrupted;
  max_elements = options.max_elements_per_node;
  SlotMap slot_of;
  std::vector<const Value*> value_of;
  auto add_slot = [&](const Value* v) {
    if (!v || slot_of.count(v)) return;
    slot_of.emplace(v, static_cast<int32_t>(value_of.size()));
    value_of.push_back(v);
  };
  for (const Argument& a : g.inputs()) a.for_each_value(add_slot);
  for (const Node* n : g.nodes()) {
    for (const Value* v : n->defined_values()) add_slot(v);
  }
  slots.resize(value_of.size());

  for (const Argument& a : g.inputs()) {
    int32_t s = -1;
    a.for_each_value([&](Value* v) {
      if (s < 0) s = slot_of.at(v);
    });
    input_slots.push_back(s);
  }

  std::vector<bool> is_output(value_of.size(), false), escapes(value_of.size(), false);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Argument& a = g.outputs()[i];
    if (a.is<TensorList>() || a.is<OptionalTensorList>()) {
      return make_error("output " + std::to_string(i) + " is a list; only single values are supported");
    }
    OutputBinding b;
    a.for_each_value([&](Value* v) { b.slot = slot_of.at(v); });
    if (b.slot < 0) {
      b.literal = literal_output(a).value_or(EValue());
    } else {
      is_output[b.slot] = true;
      // Escaping outputs go back to the caller: they must not sit in
      // buffers the next call reuses.
      if (i >= output_escapes.size() || output_escapes[i]) escapes[b.slot] = true;
    }
    outputs.push_back(std::move(b));
  }

  LATHE_RETURN_IF_ERROR(plan_nodes(g, options, slot_of));
  plan_memory(value_of, is_output, escapes, options.plan_memory);
  return Status::Ok();
}

Status GraphPlan::Impl::plan_nodes(const Graph& g, const GraphPlanOptions& options, const SlotMap& slot_of) {
  std::map<std::string, std::vector<std::string>> missing;
  for (const Node* n : g.nodes()) {
    PlannedNode p;
    p.node = n;
    const std::string_view backend = delegate_backend_name(n->target());
    const DelegateRuntime* delegate = backend.empty() || !options.delegates ? nullptr : options.delegates->find(backend);
    // Control flow, and a custom-op call whose op has a kernel here.
    const bool control = backend.empty() && (is_control_flow(*n) || (is_auto_functionalized(*n) &&
                                                                       options.kernels->find(wrapped_op(*n))));
    const KernelInfo* k = backend.empty() && !control ? options.kernels->find(n->target()) : nullptr;
    if (!k && !delegate && !control) {
      missing[backend.empty() ? describe_op(*n) : n->op_name() + " (backend '" + std::string(backend) + "' not loaded)"]
          .push_back(n->name());
      continue;
    }
    if (k) {
      p.fn = k->fn;
      p.alias = k->alias;
      auto prepared = prepare_node(*k, *n, options);
      if (!prepared.ok()) return prepared.error().context(node_label(*n));
      p.prepared = std::move(prepared).value();
    }
    for (const NamedArgument& na : n->inputs()) {
      auto b = bind_argument(na, slot_of);
      if (!b.ok()) return b.error().context(node_label(*n));
      p.args.push_back(std::move(b).value());
    }
    if (delegate) {
      if (!options.init_delegate) return make_error(node_label(*n) + ": delegate nodes cannot run inside a subgraph");
      auto handle = options.init_delegate(*delegate, *n);
      if (!handle.ok()) return handle.error().context(node_label(*n));
      p.handle = std::move(handle).value();
    } else if (control) {
      auto handle = plan_control_flow(*n, options);
      if (!handle.ok()) return handle.error().context(node_label(*n));
      p.handle = std::move(handle).value();
      // A branch may return one of its operands (or a view of one).
      p.alias = OutputAlias::MaybeView;
      p.metered = !is_control_flow(*n);  // auto_functionalized runs its kernel here
    }
    for (const Value* v : flatten_outputs(*n)) p.outputs.push_back(v ? slot_of.at(v) : -1);
    nodes.push_back(std::move(p));
  }
  if (!missing.empty()) return make_error(missing_kernels_message(missing));
  return Status::Ok();
}

void GraphPlan::Impl::plan_memory(const std::vector<const Value*>& value_of, const std::vector<bool>& is_output,
                                  const std::vector<bool>& escapes, bool share) {
  const int64_t end = static_cast<int64_t>(nodes.size());
  std::vector<int64_t> last_use(value_of.size(), -1), def(value_of.size(), -1);
  for (int64_t i = 0; i < end; ++i) {
    for (const BoundArgument& b : nodes[i].args) {
      for (int32_t s : b.slots) {
        if (s >= 0) last_use[s] = i;
      }
    }
    for (int32_t s : nodes[i].outputs) {
      if (s >= 0) def[s] = i;
    }
  }
  for (size_t s = 0; s < value_of.size(); ++s) {
    if (is_output[s]) last_use[s] = end;  // read after the last node
    else if (last_use[s] < def[s]) last_use[s] = def[s];
  }

  struct Root {
    int32_t slot;
    BufferRequest request;
    bool escapes = false;
    bool has_meta = false;
  };
  std::vector<Root> roots;
  std::vector<std::vector<int32_t>> roots_of(value_of.size());
  for (int64_t i = 0; i < end; ++i) {
    const PlannedNode& p = nodes[i];
    std::vector<int32_t> input_roots;
    if (p.alias != OutputAlias::None) {
      for (const BoundArgument& b : p.args) {
        for (int32_t s : b.slots) {
          if (s >= 0) input_roots.insert(input_roots.end(), roots_of[s].begin(), roots_of[s].end());
        }
      }
    }
    for (int32_t s : p.outputs) {
      if (s < 0 || value_of[s]->kind() != ValueKind::Tensor) continue;
      roots_of[s] = input_roots;
      if (p.alias != OutputAlias::View) {
        roots_of[s].push_back(static_cast<int32_t>(roots.size()));
        const auto& meta = value_of[s]->meta();
        roots.push_back(Root{s, BufferRequest{meta ? estimated_nbytes(*meta) : 0, i, i}, false, meta.has_value()});
      }
    }
  }
  for (size_t s = 0; s < value_of.size(); ++s) {
    for (int32_t r : roots_of[s]) {
      roots[r].request.last = std::max(roots[r].request.last, last_use[s]);
      roots[r].escapes = roots[r].escapes || escapes[s];
    }
  }
  std::vector<BufferRequest> requests;
  std::vector<int32_t> request_slot;
  for (const Root& r : roots) {
    if (!share || r.escapes || !r.has_meta) {
      ++stats.unplanned_values;
      continue;
    }
    requests.push_back(r.request);
    request_slot.push_back(r.slot);
    stats.unshared_bytes += r.request.nbytes;
  }
  BufferPlan bp = plan_buffers(requests);
  buffer_of_slot.assign(value_of.size(), -1);
  for (size_t k = 0; k < requests.size(); ++k) buffer_of_slot[request_slot[k]] = bp.buffer_of[k];
  for (size_t nb : bp.buffer_nbytes) buffers.push_back(Storage::allocate(nb));
  stats.planned_values = requests.size();
  stats.buffers = buffers.size();
  stats.buffer_bytes = bp.total_bytes();

  // Drop each intermediate after its last reader, so per-call allocations
  // (unplanned values) are freed early.
  for (size_t s = 0; s < value_of.size(); ++s) {
    if (is_output[s] || last_use[s] < 0 || last_use[s] >= end) continue;
    nodes[last_use[s]].release.push_back(static_cast<int32_t>(s));
  }
}

Result<std::vector<EValue>> GraphPlan::Impl::run(std::vector<EValue> inputs) {
  if (inputs.size() != input_slots.size()) {
    return make_error("graph takes " + std::to_string(input_slots.size()) + " input(s), got " + std::to_string(inputs.size()));
  }
  std::fill(slots.begin(), slots.end(), EValue());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (input_slots[i] >= 0) slots[input_slots[i]] = std::move(inputs[i]);
  }
  inputs.clear();
  for (const PlannedNode& p : nodes) {
    if (interrupted && interrupted()) {
      std::fill(slots.begin(), slots.end(), EValue());
      return make_error("interrupted before " + node_label(*p.node));
    }
    current = &p;
    touched = 0;
    // Refused before the kernel runs: its operands alone may be too many.
    Status s = p.metered ? touch(operand_elements(p, slots)) : Status::Ok();
    if (s.ok() && p.metered && !p.handle) s = check_contraction_work(p, slots, max_elements);
    if (s.ok()) {
      KernelCall call(*p.node, p.args, p.outputs, slots, *this, p.prepared.get());
      s = p.handle ? p.handle->execute(call) : p.fn(call);
    }
    if (!s.ok()) {
      std::fill(slots.begin(), slots.end(), EValue());
      return s.error().context(node_label(*p.node));
    }
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      if (p.outputs[i] >= 0 && slots[p.outputs[i]].is_none()) {
        std::fill(slots.begin(), slots.end(), EValue());
        return make_error(node_label(*p.node) + ": the kernel produced no value for output " + std::to_string(i));
      }
    }
    for (int32_t s : p.release) slots[s] = EValue();
  }
  current = nullptr;
  std::vector<EValue> result;
  result.reserve(outputs.size());
  for (const OutputBinding& o : outputs) result.push_back(o.slot >= 0 ? slots[o.slot] : o.literal);
  // No reference into inputs or state may outlive the call here (the
  // executor's copy-on-write of buffers counts holders).
  std::fill(slots.begin(), slots.end(), EValue());
  return result;
}

GraphPlan::GraphPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GraphPlan::~GraphPlan() = default;

Result<std::unique_ptr<GraphPlan>> GraphPlan::create(const Graph& graph, const GraphPlanOptions& options,
                                                     const std::vector<bool>& output_escapes) {
  auto impl = std::make_unique<Impl>();
  LATHE_RETURN_IF_ERROR(impl->plan(graph, options, output_escapes));
  return std::unique_ptr<GraphPlan>(new GraphPlan(std::move(impl)));
}

const Graph& GraphPlan::graph() const { return *impl_->graph; }
Result<std::vector<EValue>> GraphPlan::run(std::vector<EValue> inputs) { return impl_->run(std::move(inputs)); }
const MemoryStats& GraphPlan::memory_stats() const { return impl_->stats; }

}  // namespace lathe
