#include "lathe/passes/pass_manager.h"

#include <chrono>

#include "lathe/core/printable.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/verify.h"

namespace lathe {

Result<bool> PassManager::run(ExportedProgram& program, const std::string& method, PassContext& ctx) {
  if (options_.verify_each) {
    Status ok = verify(program, method);
    if (!ok.ok()) return ok.error().context("before any pass");
  }
  bool changed_any = false;
  size_t iterations = options_.fixpoint ? std::max<size_t>(options_.max_iterations, 1) : 1;
  std::vector<std::string> still_changing;
  for (size_t it = 0; it < iterations; ++it) {
    // Later iterations meet the same refused candidates again.
    if (it > 0) ctx.start_deduplicating();
    still_changing.clear();
    for (size_t index = 0; index < passes_.size(); ++index) {
      const auto& pass = passes_[index];
      std::string name(pass->name());
      ctx.set_current(method, name);
      if (options_.before_each) options_.before_each(method, name);
      auto t0 = std::chrono::steady_clock::now();
      Result<bool> changed = pass->run(program, ctx);
      // Work a pass left deferred (name-index erasures) is done, and
      // timed, as part of it.
      program.graph().settle();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!changed.ok()) return changed.error().context("pass '" + name + "' failed on method '" + method + "'");
      timings_.push_back(PassTiming{method, name, it, *changed, seconds});
      if (*changed) {
        changed_any = true;
        still_changing.push_back(name);
      }
      if (options_.verify_each) {
        Status ok = verify(program, method);
        if (!ok.ok()) return ok.error().context("after pass '" + name + "'");
      }
      if (options_.after_each) {
        Status ok = options_.after_each(method, index, program);
        if (!ok.ok()) return ok.error().context("after pass '" + name + "' on method '" + method + "'");
      }
      if (options_.print_after_each) {
        *options_.print_after_each << "// after pass '" << name << "' on method '" << method << "'"
                                   << (options_.fixpoint ? " (iteration " + std::to_string(it + 1) + ")" : "")
                                   << "\n"
                                   << print_program(program);
      }
    }
    if (!options_.fixpoint || still_changing.empty()) return changed_any;
  }
  return make_error("method '" + method + "': passes did not reach a fixpoint within " + std::to_string(iterations) +
                    " iterations (still changing: " + join_names(still_changing) + ")");
}

Result<bool> PassManager::run(Program& program, PassContext& ctx, const std::string& only_method) {
  if (!only_method.empty() && !program.find_method(only_method))
    return make_error("no method '" + only_method + "'; methods: " + join_names(program.method_names()));
  bool changed = false;
  for (Method& m : program.methods) {
    if (!only_method.empty() && m.name != only_method) continue;
    if (!m.program) return make_error("method '" + m.name + "' has no program");
    LATHE_ASSIGN_OR_RETURN(bool c, run(*m.program, m.name, ctx));
    changed = changed || c;
  }
  return changed;
}

}  // namespace lathe
