// Runner: a runtime::Executor over one method, with the built-in delegates.
#include "lathe/backends/lower.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/core/mapped_file.h"
#include "lathe/lathe.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/parallel.h"

namespace lathe {

void set_threads(int threads, int delegates) {
  // One pool for the portable kernels and every delegate (runtime/parallel.h);
  // `delegates` sizes it only when `threads` is not given (the API had two).
  if (threads >= 1) set_num_threads(threads);
  else if (delegates >= 1) set_num_threads(delegates);
}

struct Runner::Impl {
  std::string method;
  DelegateRegistry delegates;  // built-in and registered backends, as at create()
  std::unique_ptr<Executor> executor;
  // The mapped archives the method's weights are read from in place: every
  // run ends by asking whether one changed (MappedFile::check_intact), so a
  // run on a truncated or rewritten archive is an error naming it, never a
  // result computed from other bytes. One fstat per file and run.
  MappedSources sources;
};

namespace {

MappedSources weight_sources(const ExportedProgram& ep) {
  MappedSources sources;
  for (const NamedTensors* state : {&ep.parameters, &ep.buffers, &ep.constants}) {
    for (const auto& [name, tensor] : *state) {
      if (tensor.storage) sources.add(tensor.storage->data());
    }
  }
  return sources;
}

}  // namespace

Result<const Method*> select_method(const Program& program, const std::string& name) {
  if (!name.empty()) {
    if (const Method* m = program.find_method(name)) return m;
    return make_error("no method '" + name + "'; methods: " + join_names(program.method_names()));
  }
  if (program.methods.size() == 1) return &program.methods[0];
  if (program.methods.empty()) return make_error("the program has no methods");
  return make_error("the program has methods " + join_names(program.method_names()) + "; pick one");
}

Result<std::unique_ptr<Runner>> Runner::create(const Program& program, const std::string& method,
                                               const RunnerOptions& options) {
  LATHE_ASSIGN_OR_RETURN(const Method* m, select_method(program, method));
  auto impl = std::make_unique<Impl>(Impl{m->name, all_delegates(), nullptr, weight_sources(*m->program)});
  ExecutorOptions eo;
  eo.plan_memory = options.plan_memory;
  eo.interrupted = options.interrupted;
  eo.max_elements_per_node = options.max_elements_per_node;
  eo.delegates = &impl->delegates;
  auto executor = Executor::create(*m->program, eo);
  if (!executor.ok()) return executor.error().context(m->name);
  impl->executor = std::move(executor).value();
  return std::unique_ptr<Runner>(new Runner(std::move(impl)));
}

Runner::Runner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runner::~Runner() = default;

Result<std::vector<Tensor>> Runner::run(const std::vector<Tensor>& inputs) {
  auto out = impl_->executor->run(inputs);
  LATHE_RETURN_IF_ERROR(impl_->sources.check());
  if (!out.ok()) return out.error().context(impl_->method);
  return out;
}

Result<std::vector<EValue>> Runner::run(const std::vector<EValue>& inputs) {
  auto out = impl_->executor->run(inputs);
  LATHE_RETURN_IF_ERROR(impl_->sources.check());
  if (!out.ok()) return out.error().context(impl_->method);
  return out;
}

const std::string& Runner::method() const { return impl_->method; }
const std::vector<IoInfo>& Runner::inputs() const { return impl_->executor->user_inputs(); }
const std::vector<IoInfo>& Runner::outputs() const { return impl_->executor->user_outputs(); }
void Runner::reset_state() { impl_->executor->reset_state(); }

}  // namespace lathe
