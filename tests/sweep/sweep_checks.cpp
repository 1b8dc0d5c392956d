#include "sweep/sweep_checks.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "lathe/analysis/constness.h"
#include "lathe/backends/lower.h"
#include "lathe/backends/vulkan/vulkan_backend.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/api/pass_differential.h"
#include "lathe/harness/differential.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/constant_propagation.h"
#include "lathe/passes/default_pipeline.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/pass_registry.h"
#include "lathe/runtime/constant_evaluator.h"
#include "lathe/runtime/executor.h"
#include "lathe/serde/pt2.h"

namespace lathe::sweep {

namespace {

Result<std::string> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

Status write(const Program& p, const std::string& path) {
  Pt2WriteOptions o;
  o.archive_name = "sweep";  // the same top folder whatever the file is called
  return write_pt2(p, path, o);
}

// Each method of `after` against the same method of `before`, 2 calls.
Status compare_methods(const Program& before, const Program& after, const Tolerance& tol, uint64_t seed,
                       const DelegateRegistry* after_delegates = nullptr) {
  for (const Method& m : before.methods) {
    const Method* a = after.find_method(m.name);
    if (!a) return make_error("method '" + m.name + "' is missing");
    DifferentialOptions d;
    d.seed = seed;
    d.calls = 2;
    d.tolerance = tol;
    d.after_delegates = after_delegates;
    Status s = differential_check(*m.program, *a->program, d);
    if (!s.ok()) return s.error().context("method '" + m.name + "'");
  }
  return Status::Ok();
}

Status check_run(const Program& p, uint64_t seed) {
  for (const Method& m : p.methods) {
    auto ex = Executor::create(*m.program);
    if (!ex.ok()) return ex.error().context("method '" + m.name + "'");
    for (uint64_t k = 0; k < 2; ++k) {
      LATHE_ASSIGN_OR_RETURN(std::vector<Tensor> in, random_inputs(*m.program, seed + k));
      auto out = (*ex)->run(in);
      if (!out.ok()) return out.error().context("method '" + m.name + "' call " + std::to_string(k));
    }
  }
  return Status::Ok();
}

Status check_roundtrip(const ProgramFactory& make, const CheckOptions& o) {
  LATHE_ASSIGN_OR_RETURN(Program original, make());
  const std::string a = o.scratch_dir + "/roundtrip_a.pt2", b = o.scratch_dir + "/roundtrip_b.pt2";
  LATHE_RETURN_IF_ERROR(write(original, a));
  auto reread = read_pt2(a);
  if (!reread.ok()) return reread.error().context("reading what was written");
  LATHE_RETURN_IF_ERROR(verify(*reread));
  LATHE_RETURN_IF_ERROR(write(*reread, b));
  LATHE_ASSIGN_OR_RETURN(std::string ba, slurp(a));
  LATHE_ASSIGN_OR_RETURN(std::string bb, slurp(b));
  if (ba != bb) {
    size_t i = 0;
    while (i < ba.size() && i < bb.size() && ba[i] == bb[i]) ++i;
    return make_error("write -> read -> write differs (" + std::to_string(ba.size()) + " vs " +
                      std::to_string(bb.size()) + " bytes, first difference at byte " + std::to_string(i) + ")");
  }
  Status s = compare_methods(original, *reread, Tolerance{0, 0}, o.input_seed);
  if (!s.ok()) return s.error().context("the re-read program computes something else");
  return Status::Ok();
}

// linear nodes whose weight is not a compile-time constant, per method.
std::map<std::string, int> runtime_weight_linears(const Program& p) {
  std::map<std::string, int> n;
  for (const Method& m : p.methods) {
    Constness c(*m.program);
    for (const Node* node : m.program->graph().nodes()) {
      if (node->op_name() != "aten.linear.default") continue;
      const Argument* w = node->input("weight");
      if (w && w->tensor() && !c.is_compile_time_constant(w->tensor())) ++n[m.name];
    }
  }
  return n;
}

Status check_passes(const ProgramFactory& make, const std::string& list, const CheckOptions& o, bool write_back) {
  LATHE_ASSIGN_OR_RETURN(Program reference, make());
  LATHE_ASSIGN_OR_RETURN(Program program, make());
  LATHE_ASSIGN_OR_RETURN(auto passes, builtin_passes().create_list(list));
  LATHE_ASSIGN_OR_RETURN(auto mirror, builtin_passes().create_list(list));
  DifferentialPassOptions dopt;
  dopt.tolerance = o.tolerance;
  dopt.seed = o.input_seed;
  DifferentialPassCheck check(std::move(reference), std::move(mirror), dopt);
  PassManagerOptions pmo;
  pmo.verify_each = true;
  pmo.after_each = [&](const std::string& m, size_t i, ExportedProgram& p) { return check.after_pass(m, i, p); };
  PassManager pm(pmo);
  for (auto& p : passes) pm.add(std::move(p));
  PassContext ctx;
  ctx.set_record_rewrites(false);
  auto r = pm.run(program, ctx);
  if (!r.ok()) return r.error();
  // addmm/mm -> linear only over a constant weight: with a run-time weight
  // the numbers agree on the portable kernels, but a backend would prepack
  // a stale weight (linear-rewrite.md). No pass may add such a linear.
  LATHE_ASSIGN_OR_RETURN(Program original, make());
  const auto before = runtime_weight_linears(original), after = runtime_weight_linears(program);
  for (const auto& [method, n] : after) {
    const int had = before.count(method) ? before.at(method) : 0;
    if (n > had) {
      return make_error("method '" + method + "': " + std::to_string(n - had) +
                        " linear node(s) over a run-time weight appeared (an unsound addmm/mm -> linear rewrite)");
    }
  }
  if (write_back) {
    const std::string path = o.scratch_dir + "/transformed.pt2";
    Status w = write(program, path);
    if (!w.ok()) return w.error().context("writing the rewritten program");
    auto back = read_pt2(path);
    if (!back.ok()) return back.error().context("reading the rewritten program back");
    Status v = verify(*back);
    if (!v.ok()) return v.error().context("the rewritten program, read back");
  }
  return Status::Ok();
}

Status check_backend(const ProgramFactory& make, const CheckOptions& o, CheckStats* stats, const Backend& backend) {
  LATHE_ASSIGN_OR_RETURN(Program original, make());
  LATHE_ASSIGN_OR_RETURN(Program lowered, make());
  auto result = lower_program(lowered, backend);
  if (!result.ok()) return result.error().context("lowering failed (instead of refusing nodes)");
  for (const MethodLowering& m : result->methods) {
    for (const NodeDecision& d : m.report.decisions) {
      if (!d.claimed && d.reason.empty()) return make_error("method '" + m.method + "': node '" + d.node + "' refused without a reason");
    }
    if (stats) {
      stats->delegates += m.report.delegates;
      stats->claimed_nodes += m.report.claimed_nodes;
      stats->refused_nodes += static_cast<int>(m.report.decisions.size()) - m.report.claimed_nodes;
    }
  }
  Status s = compare_methods(original, lowered, o.backend_tolerance, o.input_seed, &builtin_delegates());
  if (!s.ok()) return s.error().context("lowered program (in memory)");
  const std::string path = o.scratch_dir + "/lowered.pt2";
  Status w = write(lowered, path);
  if (!w.ok()) return w.error().context("writing the lowered program");
  auto back = read_pt2(path);
  if (!back.ok()) return back.error().context("reading the lowered program back");
  s = compare_methods(original, *back, o.backend_tolerance, o.input_seed, &builtin_delegates());
  if (!s.ok()) return s.error().context("lowered program (written and read back)");
  const std::string again = o.scratch_dir + "/lowered_b.pt2";
  LATHE_RETURN_IF_ERROR(write(*back, again));
  LATHE_ASSIGN_OR_RETURN(std::string la, slurp(path));
  LATHE_ASSIGN_OR_RETURN(std::string lb, slurp(again));
  if (la != lb) return make_error("the lowered program: write -> read -> write differs");
  return Status::Ok();
}

}  // namespace

std::vector<std::string> check_names() {
  std::vector<std::string> names = {"build", "verify", "run", "roundtrip"};
  for (const std::string& p : builtin_passes().names()) names.push_back("pass:" + p);
  names.push_back("pipeline");
  names.push_back("xnnpack");
  names.push_back("vulkan");
  return names;
}

std::optional<CheckFailure> run_checks(const ProgramFactory& make, const CheckOptions& options, CheckStats* stats) {
  // constant_propagation folds on the portable kernels, as `lathe transform` sets it up.
  static const bool evaluator_installed = [] {
    ConstantPropagation::set_default_evaluator(
        ConstantEvaluator{[](std::string_view target) { return has_kernel(target); },
                          [](const ExportedProgram& p) { return evaluate_closed_program(p); }});
    return true;
  }();
  (void)evaluator_installed;
  if (stats) ++stats->programs;
  auto wanted = [&](const std::string& name) { return name.rfind(options.only, 0) == 0; };
  auto fail = [](std::string check, const Status& s) -> std::optional<CheckFailure> {
    if (s.ok()) return std::nullopt;
    return CheckFailure{std::move(check), s.error().message()};
  };
  auto program = make();
  if (!program.ok()) return CheckFailure{"build", program.error().message()};
  if (wanted("verify")) {
    if (auto f = fail("verify", verify(*program))) return f;
  }
  if (wanted("run")) {
    if (auto f = fail("run", check_run(*program, options.input_seed))) return f;
  }
  if (wanted("roundtrip")) {
    if (auto f = fail("roundtrip", check_roundtrip(make, options))) return f;
  }
  for (const std::string& pass : builtin_passes().names()) {
    if (!wanted("pass:" + pass)) continue;
    if (auto f = fail("pass:" + pass, check_passes(make, pass, options, false))) return f;
  }
  if (wanted("pipeline")) {
    if (auto f = fail("pipeline", check_passes(make, kDefaultPipeline, options, true))) return f;
  }
  if (wanted("xnnpack") && xnnpack_backend().available().ok()) {  // not in a build without XNNPACK
    if (auto f = fail("xnnpack", check_backend(make, options, stats, xnnpack_backend()))) return f;
  }
  // On lavapipe where no GPU is (scripts/setup-deps.sh installs it); not
  // run only when no Vulkan driver is installed at all.
  static const bool vulkan_driver = probe_vulkan().driver_installed;
  if (wanted("vulkan") && vulkan_driver) {
    if (auto f = fail("vulkan", check_backend(make, options, stats, vulkan_backend()))) return f;
  }
  return std::nullopt;
}

}  // namespace lathe::sweep
