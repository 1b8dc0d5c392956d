#include "lathe/runtime/executor.h"

#include <algorithm>
#include <set>

#include "lathe/ir/in_place_writes.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

bool is_mutation(OutputKind k) {
  return k == OutputKind::BufferMutation || k == OutputKind::ParameterMutation || k == OutputKind::UserInputMutation;
}

// Targets of the buffers and parameters the program writes back.
std::set<std::string> mutated_state(const ExportedProgram& ep) {
  std::set<std::string> out;
  for (const OutputSpec& o : ep.output_specs) {
    if (o.kind == OutputKind::BufferMutation || o.kind == OutputKind::ParameterMutation) out.insert(o.target);
  }
  return out;
}

const Value* first_value(const Argument& a) {
  const Value* v = nullptr;
  a.for_each_value([&](Value* x) {
    if (!v) v = x;
  });
  return v;
}

}  // namespace

struct Executor::Impl {
  const ExportedProgram* program = nullptr;
  std::unique_ptr<GraphPlan> graph;
  std::vector<size_t> user_input_positions;  // graph input index of each user input
  std::unordered_map<std::string, Tensor> state;  // buffers written so far (owned)
  std::set<std::string> written_in_place;         // state the graph's in-place ops write (ir/in_place_writes.h)
  std::vector<IoInfo> user_in, user_out;
  std::optional<InputChecker> checker;

  const Tensor* state_tensor(const InputSpec& spec) const {
    if (spec.kind == InputKind::Buffer || spec.kind == InputKind::Parameter || spec.kind == InputKind::TensorConstant) {
      auto it = state.find(spec.target);
      if (it != state.end()) return &it->second;
    }
    return program->state_tensor(spec);
  }

  Status bind_inputs(const ExportedProgram& ep);
  Status bind_outputs(const ExportedProgram& ep);
  Status plan(const ExportedProgram& ep, const ExecutorOptions& options);
  Result<std::shared_ptr<DelegateHandle>> init_delegate(const DelegateRuntime& rt, const Node& n) const;
  const Tensor* constant_of(const Value* v, const std::set<std::string>& mutated) const;
  Result<std::vector<EValue>> run(const std::vector<EValue>& args);
  Status write_back(const std::vector<EValue>& args, std::vector<EValue>& outputs);
  void own_state_written_in_place();
};

// State written in place gets a writable copy of its initial value before
// the first call (the program's own tensors may be mapped read-only); the
// writes then persist from call to call, as they do on the module.
void Executor::Impl::own_state_written_in_place() {
  for (const InputSpec& spec : program->input_specs) {
    if (!written_in_place.count(spec.target)) continue;
    if (const Tensor* t = program->state_tensor(spec)) state[spec.target] = kernels::contiguous_copy(*t);
  }
}

Status Executor::Impl::bind_inputs(const ExportedProgram& ep) {
  const Graph& g = ep.graph();
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const InputSpec& spec = ep.input_specs[i];
    const Value* v = first_value(g.inputs()[i]);
    if (spec.kind == InputKind::UserInput) {
      if (!v) return make_error("user input " + std::to_string(i) + " has no placeholder value");
      user_input_positions.push_back(i);
      user_in.push_back(IoInfo{v->name(), v->kind(), v->meta()});
    } else if (spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
               spec.kind == InputKind::TensorConstant) {
      const std::string where = "input '" + (v ? v->name() : std::string()) + "': " +
                                std::string(input_kind_name(spec.kind)) + " '" + spec.target + "'";
      const Tensor* t = ep.state_tensor(spec);
      if (!t) return make_error(where + " has no tensor in the program's state");
      // A weight that disagrees with its placeholder's declared dtype or
      // shape would run (kernels read what is stored) and answer for a
      // different model; verify() refuses it, and so does every run path.
      if (v && v->meta()) {
        if (Status st = check_state_matches_placeholder(spec.target, *t, *v->meta()); !st.ok())
          return st.error().context(where);
      }
    }
  }
  return Status::Ok();
}

Status Executor::Impl::bind_outputs(const ExportedProgram& ep) {
  const Graph& g = ep.graph();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const OutputSpec& o = ep.output_specs[i];
    if (o.kind == OutputKind::BufferMutation || o.kind == OutputKind::ParameterMutation) {
      const InputKind want = o.kind == OutputKind::BufferMutation ? InputKind::Buffer : InputKind::Parameter;
      bool found = false;
      for (const InputSpec& in : ep.input_specs) found = found || (in.kind == want && in.target == o.target);
      if (!found) return make_error("output " + std::to_string(i) + " mutates '" + o.target + "', which is no input");
    } else if (o.kind == OutputKind::UserInputMutation) {
      bool found = false;
      for (const IoInfo& in : user_in) found = found || in.name == o.target;
      if (!found) return make_error("output " + std::to_string(i) + " mutates user input '" + o.target + "', which does not exist");
    } else if (o.kind != OutputKind::Token) {
      const Value* v = first_value(g.outputs()[i]);
      user_out.push_back(IoInfo{v ? v->name() : "literal", v ? v->kind() : ValueKind::SymInt, v ? v->meta() : std::nullopt});
    }
  }
  return Status::Ok();
}

Status Executor::Impl::plan(const ExportedProgram& ep, const ExecutorOptions& options) {
  program = &ep;
  const Graph& g = ep.graph();
  if (ep.input_specs.size() != g.inputs().size() || ep.output_specs.size() != g.outputs().size()) {
    return make_error("signature does not match the graph (" + std::to_string(ep.input_specs.size()) + " input specs for " +
                      std::to_string(g.inputs().size()) + " inputs, " + std::to_string(ep.output_specs.size()) +
                      " output specs for " + std::to_string(g.outputs().size()) + " outputs)");
  }
  LATHE_RETURN_IF_ERROR(bind_inputs(ep));
  LATHE_RETURN_IF_ERROR(bind_outputs(ep));
  LATHE_ASSIGN_OR_RETURN(InputChecker inputs_checker, InputChecker::create(ep, user_in));
  checker.emplace(std::move(inputs_checker));

  // User outputs go back to the caller; mutations are copied into state
  // after the call, so they may live in shared buffers.
  std::vector<bool> escapes;
  for (const OutputSpec& o : ep.output_specs) escapes.push_back(!is_mutation(o.kind) && o.kind != OutputKind::Token);
  GraphPlanOptions go;
  go.kernels = options.kernels ? options.kernels : &portable_kernels();
  go.delegates = options.delegates;
  go.plan_memory = options.plan_memory;
  go.max_loop_iterations = options.max_loop_iterations;
  go.max_elements_per_node = options.max_elements_per_node;
  go.interrupted = options.interrupted;
  written_in_place = state_written_in_place(ep);
  own_state_written_in_place();
  std::set<std::string> mutated = mutated_state(ep);
  mutated.insert(written_in_place.begin(), written_in_place.end());
  go.init_delegate = [this](const DelegateRuntime& rt, const Node& n) { return init_delegate(rt, n); };
  go.constant_of = [this, mutated = std::move(mutated)](const Value* v) { return constant_of(v, mutated); };
  LATHE_ASSIGN_OR_RETURN(graph, GraphPlan::create(g, go, escapes));
  return Status::Ok();
}

// Prepacking happens here, once per delegate node: the backend gets its
// payload (a state tensor) and, per operand, the state tensor it is bound to.
Result<std::shared_ptr<DelegateHandle>> Executor::Impl::init_delegate(const DelegateRuntime& rt, const Node& n) const {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<DelegateHandle> h, init_delegate_node(rt, *program, n));
  return std::shared_ptr<DelegateHandle>(std::move(h));
}

// A top-graph placeholder bound to program state that no call changes: what
// a kernel may repack once at plan time (PreparedState).
const Tensor* Executor::Impl::constant_of(const Value* v, const std::set<std::string>& mutated) const {
  if (!v || !v->is_placeholder() || v->graph() != &program->graph()) return nullptr;
  const int k = program->input_index(v);
  if (k < 0) return nullptr;
  const InputSpec& spec = program->input_specs[k];
  const bool state = spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
                     spec.kind == InputKind::TensorConstant;
  if (!state || mutated.count(spec.target)) return nullptr;
  return program->state_tensor(spec);
}

Result<std::vector<EValue>> Executor::Impl::run(const std::vector<EValue>& args) {
  LATHE_RETURN_IF_ERROR(checker->check(args));
  std::vector<EValue> in(program->input_specs.size());
  for (size_t k = 0; k < args.size(); ++k) in[user_input_positions[k]] = args[k];
  for (size_t i = 0; i < in.size(); ++i) {
    const InputSpec& spec = program->input_specs[i];
    if (spec.kind == InputKind::UserInput) continue;
    if (const Tensor* t = state_tensor(spec)) in[i] = *t;
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<EValue> outputs, graph->run(std::move(in)));
  LATHE_RETURN_IF_ERROR(write_back(args, outputs));
  std::vector<EValue> result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputKind k = program->output_specs[i].kind;
    if (!is_mutation(k) && k != OutputKind::Token) result.push_back(std::move(outputs[i]));
  }
  return result;
}

// Mutated buffers, parameters and user inputs take their new values. The
// mutation outputs are moved out of `outputs` first so that the
// copy-on-write test below sees only outside holders of a buffer.
Status Executor::Impl::write_back(const std::vector<EValue>& args, std::vector<EValue>& outputs) {
  std::vector<EValue> mutated(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (is_mutation(program->output_specs[i].kind)) mutated[i] = std::move(outputs[i]);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputSpec& o = program->output_specs[i];
    if (!is_mutation(o.kind)) continue;
    if (!mutated[i].is_tensor()) return make_error("mutation of '" + o.target + "' is not a tensor");
    const Tensor& v = mutated[i].tensor();
    if (o.kind == OutputKind::UserInputMutation) {
      size_t k = 0;
      while (user_in[k].name != o.target) ++k;
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
  return Status::Ok();
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
  for (const OutputSpec& o : impl_->program->output_specs) {
    if (o.kind == OutputKind::BufferMutation) names.push_back(o.target);
  }
  for (const std::string& t : impl_->written_in_place) {
    if (std::find(names.begin(), names.end(), t) == names.end()) names.push_back(t);
  }
  return names;
}

void Executor::reset_state() {
  impl_->state.clear();
  impl_->own_state_written_in_place();
}
const MemoryStats& Executor::memory_stats() const { return impl_->graph->memory_stats(); }

}  // namespace lathe
