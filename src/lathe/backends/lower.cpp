#include "lathe/backends/lower.h"

#include <algorithm>
#include <mutex>

#include "lathe/backends/replanned_delegate.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/core/printable.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/addmm_mm_to_linear.h"
#include "lathe/passes/decompose.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/remove_dead_code.h"
#include "lathe/passes/sdpa_additive_mask.h"
#include "lathe/runtime/delegate.h"

namespace lathe {

namespace {

// What lower writes, run must load: each delegate node lower made is
// initialised here as run initialises it (prepacking included), one at a
// time, and dropped. A payload the backend's own runtime refuses (built
// from tensor sizes the input program declares but its ops do not give)
// then fails lower, naming the node, instead of the later run blaming the
// payload. A backend whose runtime is not registered (a converter lowering
// for another runtime) is not checked.
Status check_delegates_load(const Program& program, const Backend& backend, const LowerResult& result) {
  const DelegateRegistry registry = all_delegates();
  const DelegateRuntime* runtime = registry.find(backend.name());
  if (!runtime) return Status::Ok();
  for (const MethodLowering& lowered : result.methods) {
    const Method* m = program.find_method(lowered.method);
    if (!m || lowered.report.delegates == 0) continue;
    for (const Node* n : m->program->graph().nodes()) {
      if (delegate_backend_name(n->target()) != backend.name()) continue;
      auto handle = init_delegate_node(*runtime, *m->program, *n);
      if (!handle.ok()) {
        return handle.error().context("method '" + lowered.method + "': delegate node '" + n->name() +
                                      "' would not load (does the input declare tensor sizes its ops do not give?)");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<LowerResult> lower_program(Program& program, const Backend& backend, const std::string& method) {
  LATHE_RETURN_IF_ERROR(backend.available());
  LowerResult result;
  PassManager pm;
  // Core ATen first, but what the backend wants whole stays whole
  // (linear-rewrite.md §4): no linear -> permute + addmm -> linear round trip.
  pm.add(std::make_unique<Decompose>(backend.ops_to_keep()));
  pm.add(std::make_unique<AddmmMmToLinear>());
  // A delegate's operands are float: a bool attention mask would keep every
  // attention (and a delegate boundary around it) on the portable kernels.
  pm.add(std::make_unique<SdpaAdditiveMask>());
  pm.add(std::make_unique<RemoveDeadCode>());
  PassContext ctx;
  LATHE_RETURN_IF_ERROR(pm.run(program, ctx, method));
  result.pass_records = ctx.records();
  for (Method& m : program.methods) {
    if (!method.empty() && m.name != method) continue;
    auto report = partition(*m.program, backend);
    if (!report.ok()) return report.error().context("method '" + m.name + "'");
    result.methods.push_back(MethodLowering{m.name, std::move(report).value()});
  }
  Status ok = verify(program);
  if (!ok.ok()) return ok.error().context("the lowered program does not verify");
  LATHE_RETURN_IF_ERROR(check_delegates_load(program, backend, result));
  return result;
}

std::string explain_decision(const std::string& method, const NodeDecision& d) {
  std::string s = method + ": " + d.op + " '" + d.node + "' ";
  if (d.claimed) return s + "claimed (delegate " + std::to_string(d.delegate) + "): " + d.reason;
  return s + "not claimed: " + d.reason;
}

std::string explain_lowering(const MethodLowering& m) {
  std::string s;
  for (const NodeDecision& d : m.report.decisions) s += explain_decision(m.method, d) + "\n";
  return s;
}

const DelegateRegistry& builtin_delegates() {
  static const DelegateRegistry registry = [] {
    DelegateRegistry r;
    // Both always listed: a backend left out of the build says so when asked.
    // Each through a ReplanningRuntime: a delegate of a program with
    // symbolic sizes plans per input sizes (replanned_delegate.h).
    static const ReplanningRuntime xnnpack(xnnpack_backend());
    static const ReplanningRuntime vulkan(vulkan_backend());
    r.add(&xnnpack);
    r.add(&vulkan);
    return r;
  }();
  return registry;
}

namespace {

// Registered backends live as long as the process: delegate handles and
// registries hold plain pointers to them.
struct UserBackends {
  std::mutex mu;
  std::vector<std::shared_ptr<const Backend>> all;
  std::vector<std::unique_ptr<const ReplanningRuntime>> runtimes;  // one per backend, in the same order
};
UserBackends& user_backends() {
  static UserBackends* b = new UserBackends();  // never destroyed: outlives every executor
  return *b;
}

}  // namespace

DelegateRegistry all_delegates() {
  DelegateRegistry r = builtin_delegates();
  UserBackends& u = user_backends();
  std::lock_guard<std::mutex> lock(u.mu);
  for (const auto& rt : u.runtimes) r.add(rt.get());
  return r;
}

const Backend* find_backend(const std::string& name) {
  if (name == "xnnpack") return &xnnpack_backend();
  if (name == "vulkan") return &vulkan_backend();
  UserBackends& u = user_backends();
  std::lock_guard<std::mutex> lock(u.mu);
  for (const auto& b : u.all) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

Status register_backend(std::shared_ptr<const Backend> backend) {
  if (!backend || backend->name().empty()) return make_error("register_backend: a backend needs a name");
  const std::string name(backend->name());
  // The name is written into every archive it lowers, as the op
  // lathe.delegate.<name>: an identifier, so the op name parses back and a
  // NUL or control character cannot end or disguise it.
  const bool identifier = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!identifier) {
    return make_error("register_backend: the name '" + printable_name(name) +
                      "' is not an identifier (letters, digits and '_'): it becomes the op lathe.delegate.<name>");
  }
  if (find_backend(name)) return make_error("register_backend: a backend named '" + name + "' is already registered");
  UserBackends& u = user_backends();
  std::lock_guard<std::mutex> lock(u.mu);
  u.runtimes.push_back(std::make_unique<const ReplanningRuntime>(*backend));
  u.all.push_back(std::move(backend));
  return Status::Ok();
}

}  // namespace lathe
