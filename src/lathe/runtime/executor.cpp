#include "lathe/runtime/executor.h"

#include <algorithm>
#include <map>

#include "lathe/ir/sym_expr.h"
#include "lathe/runtime/kernel_call.h"
#include "lathe/runtime/kernels/util.h"
#include "lathe/runtime/memory_plan.h"

namespace lathe {

namespace {

struct InputBinding {
  int32_t slot = -1;
  const InputSpec* spec = nullptr;
  std::string name;  // placeholder name
};

struct OutputBinding {
  OutputKind kind = OutputKind::UserOutput;
  std::string target;
  int32_t slot = -1;  // -1: a literal output
  EValue literal;
};

struct PlannedNode {
  const Node* node = nullptr;
  KernelFn fn = nullptr;
  OutputAlias alias = OutputAlias::None;
  std::shared_ptr<DelegateHandle> delegate;  // a lathe.delegate.* node: runs instead of fn
  std::vector<BoundArgument> args;
  std::vector<int32_t> outputs;
  std::vector<int32_t> release;  // slots whose last reader is this node
};

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

std::optional<size_t> planned_nbytes(const Value* v) {
  if (!v || v->kind() != ValueKind::Tensor || !v->meta()) return std::nullopt;
  auto sizes = v->meta()->concrete_sizes();
  if (!sizes) return std::nullopt;
  int64_t n = 1;
  for (int64_t s : *sizes) n *= s;
  return static_cast<size_t>(n) * dtype_size(v->meta()->dtype);
}

Status check_user_input(const IoInfo& info, const EValue& v, size_t index) {
  const std::string where = "input " + std::to_string(index) + " '" + info.name + "'";
  if (info.kind == ValueKind::SymInt) {
    if (!v.is_int()) return make_error(where + ": expected an int, got " + v.describe());
    return Status::Ok();
  }
  if (info.kind != ValueKind::Tensor) return Status::Ok();
  if (!v.is_tensor()) return make_error(where + ": expected a tensor, got " + v.describe());
  const Tensor& t = v.tensor();
  Status fits = t.check_fits();
  if (!fits.ok()) return fits.error().context(where);
  if (!info.meta) return Status::Ok();
  const TensorMeta& m = *info.meta;
  bool shape_ok = m.sizes.size() == t.sizes.size();
  for (size_t d = 0; shape_ok && d < m.sizes.size(); ++d) {
    shape_ok = !m.sizes[d].is_concrete() || m.sizes[d].value() == t.sizes[d];
  }
  if (m.dtype != t.dtype || !shape_ok) {
    std::string expected = "[";
    for (size_t d = 0; d < m.sizes.size(); ++d) {
      expected += (d ? ", " : "") + (m.sizes[d].is_concrete() ? std::to_string(m.sizes[d].value()) : readable_sym_expr(m.sizes[d].expr().expr));
    }
    return make_error(where + ": expected " + std::string(dtype_name(m.dtype)) + " " + expected + "], got " +
                      std::string(dtype_name(t.dtype)) + " " + shape_string(t.sizes));
  }
  return Status::Ok();
}

}  // namespace

struct Executor::Impl : OutputAllocator {
  const ExportedProgram* program = nullptr;
  std::vector<EValue> slots;
  std::vector<InputBinding> inputs;
  std::vector<size_t> user_input_bindings;  // indices into inputs
  std::vector<OutputBinding> outputs;
  std::vector<PlannedNode> nodes;
  std::vector<int32_t> buffer_of_slot;
  std::vector<std::shared_ptr<Storage>> buffers;
  std::unordered_map<std::string, Tensor> state;  // buffers written so far (owned)
  std::vector<IoInfo> user_in, user_out;
  MemoryStats stats;
  const PlannedNode* current = nullptr;

  Result<Tensor> allocate(size_t index, DType dtype, const std::vector<int64_t>& sizes) override {
    const size_t nbytes = static_cast<size_t>(kernels::numel_of(sizes)) * dtype_size(dtype);
    const int32_t slot = current->outputs[index];
    if (slot >= 0 && buffer_of_slot[slot] >= 0) {
      const std::shared_ptr<Storage>& buf = buffers[buffer_of_slot[slot]];
      if (buf->nbytes() >= nbytes) {
        Tensor t;
        t.storage = buf;
        t.dtype = dtype;
        t.sizes = sizes;
        t.strides = Tensor::contiguous_strides(sizes);
        return t;
      }
    }
    return Tensor::empty(dtype, sizes);
  }

  const Tensor* state_tensor(const InputSpec& spec) const {
    if (spec.kind == InputKind::Buffer || spec.kind == InputKind::Parameter) {
      auto it = state.find(spec.target);
      if (it != state.end()) return &it->second;
    }
    return program->state_tensor(spec);
  }

  Status plan(const ExportedProgram& ep, const ExecutorOptions& options);
  Result<std::shared_ptr<DelegateHandle>> init_delegate(const DelegateRuntime& rt, const Node& n,
                                                        const std::unordered_map<const Value*, int32_t>& slot_of);
  Result<std::vector<EValue>> run(const std::vector<EValue>& args);
  Status write_back(const std::vector<EValue>& args);
};

Status Executor::Impl::plan(const ExportedProgram& ep, const ExecutorOptions& options) {
  program = &ep;
  const Graph& g = ep.graph();
  const KernelRegistry& registry = options.kernels ? *options.kernels : portable_kernels();
  if (ep.input_specs.size() != g.inputs().size() || ep.output_specs.size() != g.outputs().size()) {
    return make_error("signature does not match the graph (" + std::to_string(ep.input_specs.size()) + " input specs for " +
                      std::to_string(g.inputs().size()) + " inputs, " + std::to_string(ep.output_specs.size()) +
                      " output specs for " + std::to_string(g.outputs().size()) + " outputs)");
  }

  // ---- slots ------------------------------------------------------------------
  std::unordered_map<const Value*, int32_t> slot_of;
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

  // ---- inputs -------------------------------------------------------------------
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const InputSpec& spec = ep.input_specs[i];
    InputBinding b;
    b.spec = &spec;
    g.inputs()[i].for_each_value([&](Value* v) {
      if (b.slot < 0) {
        b.slot = slot_of.at(v);
        b.name = v->name();
      }
    });
    switch (spec.kind) {
      case InputKind::UserInput: {
        if (b.slot < 0) return make_error("user input " + std::to_string(i) + " has no placeholder value");
        const Value* v = value_of[b.slot];
        user_input_bindings.push_back(inputs.size());
        user_in.push_back(IoInfo{v->name(), v->kind(), v->meta()});
        break;
      }
      case InputKind::Parameter:
      case InputKind::Buffer:
      case InputKind::TensorConstant:
        if (!ep.state_tensor(spec)) {
          return make_error("input '" + b.name + "': " + std::string(input_kind_name(spec.kind)) + " '" + spec.target +
                            "' has no tensor in the program's state");
        }
        break;
      default:
        break;  // tokens, custom objects and literal inputs bind None
    }
    inputs.push_back(std::move(b));
  }

  // ---- outputs ------------------------------------------------------------------
  std::vector<bool> is_output(value_of.size(), false);
  std::vector<bool> escapes(value_of.size(), false);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Argument& a = g.outputs()[i];
    OutputBinding b;
    b.kind = ep.output_specs[i].kind;
    b.target = ep.output_specs[i].target;
    if (a.is<TensorList>() || a.is<OptionalTensorList>()) {
      return make_error("output " + std::to_string(i) + " is a list; only single values are supported");
    }
    a.for_each_value([&](Value* v) { b.slot = slot_of.at(v); });
    if (b.slot < 0) {
      if (auto* x = a.get_if<int64_t>()) b.literal = EValue(*x);
      else if (auto* d = a.get_if<double>()) b.literal = EValue(*d);
      else if (auto* bo = a.get_if<bool>()) b.literal = EValue(*bo);
      else if (auto* si = a.get_if<SymIntArg>()) b.literal = EValue(si->literal());
    } else {
      is_output[b.slot] = true;
      const bool mutation = b.kind == OutputKind::BufferMutation || b.kind == OutputKind::ParameterMutation ||
                            b.kind == OutputKind::UserInputMutation || b.kind == OutputKind::Token;
      // User outputs go back to the caller: they must not sit in buffers the
      // next call reuses. Mutations are copied into state after the call.
      if (!mutation) escapes[b.slot] = true;
    }
    if (b.kind == OutputKind::BufferMutation || b.kind == OutputKind::ParameterMutation) {
      const InputKind want = b.kind == OutputKind::BufferMutation ? InputKind::Buffer : InputKind::Parameter;
      bool found = false;
      for (const InputBinding& in : inputs) found = found || (in.spec->kind == want && in.spec->target == b.target);
      if (!found) return make_error("output " + std::to_string(i) + " mutates '" + b.target + "', which is no input");
    } else if (b.kind == OutputKind::UserInputMutation) {
      bool found = false;
      for (size_t k : user_input_bindings) found = found || inputs[k].name == b.target;
      if (!found) return make_error("output " + std::to_string(i) + " mutates user input '" + b.target + "', which does not exist");
    } else if (b.kind != OutputKind::Token) {
      const Value* v = b.slot >= 0 ? value_of[b.slot] : nullptr;
      user_out.push_back(IoInfo{v ? v->name() : "literal", v ? v->kind() : ValueKind::SymInt,
                                v ? v->meta() : std::nullopt});
    }
    outputs.push_back(std::move(b));
  }

  // ---- nodes --------------------------------------------------------------------
  std::map<std::string, std::vector<std::string>> missing;
  for (const Node* n : g.nodes()) {
    PlannedNode p;
    p.node = n;
    const std::string_view backend = delegate_backend_name(n->target());
    const DelegateRuntime* delegate = backend.empty() || !options.delegates ? nullptr : options.delegates->find(backend);
    const KernelInfo* k = backend.empty() ? registry.find(n->target()) : nullptr;
    if (!k && !delegate) {
      missing[backend.empty() ? n->op_name() : n->op_name() + " (backend '" + std::string(backend) + "' not loaded)"]
          .push_back(n->name());
      continue;
    }
    if (k) {
      p.fn = k->fn;
      p.alias = k->alias;
    }
    for (const NamedArgument& na : n->inputs()) {
      auto b = bind_argument(na, slot_of);
      if (!b.ok()) return b.error().context(node_label(*n));
      p.args.push_back(std::move(b).value());
    }
    if (delegate) {
      auto handle = init_delegate(*delegate, *n, slot_of);
      if (!handle.ok()) return handle.error().context(node_label(*n));
      p.delegate = std::move(handle).value();
    }
    for (const Value* v : flatten_outputs(*n)) p.outputs.push_back(v ? slot_of.at(v) : -1);
    nodes.push_back(std::move(p));
  }
  if (!missing.empty()) {
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
    return make_error(msg);
  }

  // ---- lifetimes and memory -----------------------------------------------------------
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
    std::optional<size_t> nbytes;
  };
  std::vector<Root> roots;
  std::vector<std::vector<int32_t>> roots_of(value_of.size());
  for (int64_t i = 0; i < end; ++i) {
    const PlannedNode& p = nodes[i];
    const OutputAlias alias = p.alias;
    std::vector<int32_t> input_roots;
    if (alias != OutputAlias::None) {
      for (const BoundArgument& b : p.args) {
        for (int32_t s : b.slots) {
          if (s >= 0) input_roots.insert(input_roots.end(), roots_of[s].begin(), roots_of[s].end());
        }
      }
    }
    for (int32_t s : p.outputs) {
      if (s < 0 || value_of[s]->kind() != ValueKind::Tensor) continue;
      roots_of[s] = input_roots;
      if (alias != OutputAlias::View) {
        roots_of[s].push_back(static_cast<int32_t>(roots.size()));
        roots.push_back(Root{s, BufferRequest{0, i, i}, false, planned_nbytes(value_of[s])});
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
    if (!options.plan_memory || r.escapes || !r.nbytes) {
      ++stats.unplanned_values;
      continue;
    }
    BufferRequest q = r.request;
    q.nbytes = *r.nbytes;
    requests.push_back(q);
    request_slot.push_back(r.slot);
    stats.unshared_bytes += q.nbytes;
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
  return Status::Ok();
}

// Prepacking happens here, once per delegate node: the backend gets its
// payload (a state tensor) and, per operand, the state tensor it is bound to.
Result<std::shared_ptr<DelegateHandle>> Executor::Impl::init_delegate(
    const DelegateRuntime& rt, const Node& n, const std::unordered_map<const Value*, int32_t>& slot_of) {
  auto bound_state = [&](const Value* v) -> const Tensor* {
    if (!v || !v->is_placeholder()) return nullptr;
    auto it = slot_of.find(v);
    if (it == slot_of.end()) return nullptr;
    for (const InputBinding& in : inputs) {
      if (in.slot == it->second) return in.spec->kind == InputKind::UserInput ? nullptr : program->state_tensor(*in.spec);
    }
    return nullptr;
  };
  const Argument* payload_arg = n.input("payload");
  const Tensor* payload = payload_arg ? bound_state(payload_arg->tensor()) : nullptr;
  if (!payload || payload->dtype != DType::UInt8 || !payload->is_contiguous() || !payload->check_fits().ok()) {
    return make_error("delegate node has no 'payload' argument bound to a contiguous uint8 constant of the program");
  }
  DelegateInitArgs args{*program, n, std::span<const std::byte>(payload->data(), payload->nbytes()), {}};
  const Argument* list = n.input("inputs");
  if (list && !list->is<TensorList>()) return make_error("delegate node's 'inputs' is not a tensor list");
  if (list) {
    for (const Value* v : list->as<TensorList>().items) args.operands.push_back(DelegateOperand{v, bound_state(v)});
  }
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<DelegateHandle> h, rt.init(args));
  return std::shared_ptr<DelegateHandle>(std::move(h));
}

Result<std::vector<EValue>> Executor::Impl::run(const std::vector<EValue>& args) {
  if (args.size() != user_input_bindings.size()) {
    std::string names;
    for (const IoInfo& i : user_in) names += (names.empty() ? "" : ", ") + i.name;
    return make_error("expected " + std::to_string(user_input_bindings.size()) + " user input(s) (" + names + "), got " +
                      std::to_string(args.size()));
  }
  for (size_t k = 0; k < args.size(); ++k) LATHE_RETURN_IF_ERROR(check_user_input(user_in[k], args[k], k));

  std::fill(slots.begin(), slots.end(), EValue());
  size_t next_user = 0;
  for (const InputBinding& in : inputs) {
    if (in.slot < 0) continue;
    if (in.spec->kind == InputKind::UserInput) {
      slots[in.slot] = args[next_user++];
    } else if (const Tensor* t = state_tensor(*in.spec)) {
      slots[in.slot] = *t;
    }
  }
  for (const PlannedNode& p : nodes) {
    current = &p;
    KernelCall call(*p.node, p.args, p.outputs, slots, *this);
    Status s = p.delegate ? p.delegate->execute(call) : p.fn(call);
    if (!s.ok()) return s.error().context(node_label(*p.node));
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      if (p.outputs[i] >= 0 && slots[p.outputs[i]].is_none()) {
        return make_error(node_label(*p.node) + ": the kernel produced no value for output " + std::to_string(i));
      }
    }
    for (int32_t s : p.release) slots[s] = EValue();
  }
  current = nullptr;

  std::vector<EValue> result;
  std::vector<EValue> mutated;  // aligned with outputs
  for (const OutputBinding& o : outputs) {
    EValue v = o.slot >= 0 ? slots[o.slot] : o.literal;
    if (o.kind == OutputKind::BufferMutation || o.kind == OutputKind::ParameterMutation ||
        o.kind == OutputKind::UserInputMutation) {
      mutated.push_back(std::move(v));
    } else {
      mutated.emplace_back();
      if (o.kind != OutputKind::Token) result.push_back(std::move(v));
    }
  }
  // Release every reference into state and buffers before writing back, so
  // the copy-on-write test below sees only outside holders.
  std::fill(slots.begin(), slots.end(), EValue());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputBinding& o = outputs[i];
    if (mutated[i].is_none()) continue;
    if (!mutated[i].is_tensor()) return make_error("mutation of '" + o.target + "' is not a tensor");
    const Tensor& v = mutated[i].tensor();
    if (o.kind == OutputKind::UserInputMutation) {
      size_t k = 0;
      while (inputs[user_input_bindings[k]].name != o.target) ++k;
      Tensor dst = args[k].tensor();
      Status s = kernels::copy_into(v, dst);
      if (!s.ok()) return s.error().context("writing back user input '" + o.target + "'");
      continue;
    }
    auto it = state.find(o.target);
    // Write in place only into a buffer nobody else holds (a returned
    // output may be the previous value) and that `v` does not overlap.
    const bool in_place = it != state.end() && it->second.storage.use_count() == 1 &&
                          it->second.storage != v.storage && it->second.sizes == v.sizes &&
                          it->second.dtype == v.dtype;
    if (in_place) {
      Status s = kernels::copy_into(v, it->second);
      if (!s.ok()) return s.error().context("writing back buffer '" + o.target + "'");
    } else {
      state[o.target] = kernels::contiguous_copy(v);
    }
  }
  return result;
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::create(const ExportedProgram& program, ExecutorOptions options) {
  auto impl = std::make_unique<Impl>();
  LATHE_RETURN_IF_ERROR(impl->plan(program, options));
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

Result<std::vector<EValue>> Executor::run(const std::vector<EValue>& inputs) { return impl_->run(inputs); }

Result<std::vector<Tensor>> Executor::run(const std::vector<Tensor>& inputs) {
  std::vector<EValue> in(inputs.begin(), inputs.end());
  LATHE_ASSIGN_OR_RETURN(std::vector<EValue> out, impl_->run(in));
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].is_tensor()) return make_error("output " + std::to_string(i) + " is " + out[i].describe() + ", not a tensor");
    tensors.push_back(std::move(out[i].tensor()));
  }
  return tensors;
}

const std::vector<IoInfo>& Executor::user_inputs() const { return impl_->user_in; }
const std::vector<IoInfo>& Executor::user_outputs() const { return impl_->user_out; }

const Tensor* Executor::buffer(const std::string& name) const {
  auto it = impl_->state.find(name);
  if (it != impl_->state.end()) return &it->second;
  if (const Tensor* t = impl_->program->buffers.find(name)) return t;
  return impl_->program->constants.find(name);
}

std::vector<std::string> Executor::mutated_buffers() const {
  std::vector<std::string> names;
  for (const OutputBinding& o : impl_->outputs) {
    if (o.kind == OutputKind::BufferMutation) names.push_back(o.target);
  }
  return names;
}

void Executor::reset_state() { impl_->state.clear(); }
const MemoryStats& Executor::memory_stats() const { return impl_->stats; }

}  // namespace lathe
