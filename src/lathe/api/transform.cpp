// transform: the pass pipeline `lathe transform` runs, with its report
// returned as data. constant_propagation gets the portable-kernel evaluator
// here, per pass instance (no process-wide default is touched).
#include <map>
#include <memory>

#include "lathe/api/pass_differential.h"
#include "lathe/core/printable.h"
#include "lathe/ir/verify.h"
#include "lathe/lathe.h"
#include "lathe/passes/constant_propagation.h"
#include "lathe/passes/default_pipeline.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/pass_registry.h"
#include "lathe/runtime/constant_evaluator.h"
#include "lathe/serde/pt2.h"

namespace lathe {

namespace {

std::map<std::string, int64_t> op_counts(const Graph& g) {
  std::map<std::string, int64_t> ops;
  for (const Node* n : g.nodes()) ops[n->op_name()]++;
  return ops;
}

ConstantEvaluator portable_evaluator() {
  return ConstantEvaluator{[](std::string_view target) { return has_kernel(target); },
                           [](const ExportedProgram& p) { return evaluate_closed_program(p); }};
}

// A caller's pass in the pipeline: shared (the differential check runs a
// mirror of the pipeline), and the method is verified after every run, so
// a pass that leaves it invalid is stopped there, named, whatever
// verify_each says.
class CallerPass : public Pass {
 public:
  explicit CallerPass(std::shared_ptr<Pass> pass) : pass_(std::move(pass)) {}
  std::string_view name() const override { return pass_->name(); }
  std::string_view description() const override { return pass_->description(); }
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override {
    // PassManager names the pass and the method in any error returned here.
    LATHE_ASSIGN_OR_RETURN(bool changed, pass_->run(program, ctx));
    program.graph().settle();
    Status ok = verify(program, ctx.method());
    if (!ok.ok()) return ok.error().context("it left the method invalid");
    return changed;
  }

 private:
  std::shared_ptr<Pass> pass_;
};

// `o.pipeline`, or `o.passes` as one step.
Result<std::vector<std::unique_ptr<Pass>>> resolve_steps(const TransformOptions& o) {
  std::vector<PassStep> steps = o.pipeline;
  if (steps.empty()) steps.emplace_back(o.passes.empty() ? std::string(kDefaultPasses) : o.passes);
  std::vector<std::unique_ptr<Pass>> list;
  for (const PassStep& step : steps) {
    if (step.pass) {
      const std::string_view name = step.pass->name();
      if (name.empty()) return make_error("a pass object in the pipeline has no name");
      // Its name is printed in explanations and errors: nothing that would
      // end it (NUL) or drive the terminal (escapes, bidi overrides).
      if (printable_name(name) != name) {
        return make_error("a pass object in the pipeline is named '" + printable_name(name) +
                          "': pass names must be printable (no NUL, control or bidi-override characters)");
      }
      list.push_back(std::make_unique<CallerPass>(step.pass));
      continue;
    }
    LATHE_ASSIGN_OR_RETURN(auto named, builtin_passes().create_list(expand_pipeline(step.name)));
    for (auto& p : named) list.push_back(std::move(p));
  }
  return list;
}

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const TransformOptions& o) {
  LATHE_ASSIGN_OR_RETURN(auto list, resolve_steps(o));
  LATHE_RETURN_IF_ERROR(configure_passes(list, PipelineOptions{o.keep}));
  for (auto& pass : list) {
    if (auto* cp = dynamic_cast<ConstantPropagation*>(pass.get()); cp && !cp->options().evaluator) {
      cp->mutable_options().evaluator = portable_evaluator();
    }
  }
  return list;
}

// The "before" copy check_outputs keeps one pass behind: the source archive
// read again, or the program copied through an in-memory archive.
Result<Program> reference_copy(const Program& program, const TransformOptions& o) {
  if (!o.source.empty()) return read_pt2(o.source);
  LATHE_ASSIGN_OR_RETURN(auto bytes, write_pt2_bytes(program, Pt2WriteOptions{}));
  auto shared = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  std::span<const std::byte> span(shared->data(), shared->size());
  return read_pt2_memory(shared, span, "<copy>");
}

Result<std::unique_ptr<DifferentialPassCheck>> make_check(const Program& program, const TransformOptions& o) {
  LATHE_ASSIGN_OR_RETURN(Program reference, reference_copy(program, o));
  LATHE_ASSIGN_OR_RETURN(auto mirror, make_passes(o));
  auto check = std::make_unique<DifferentialPassCheck>(std::move(reference), std::move(mirror),
                                                       DifferentialPassOptions{o.source, Tolerance{o.rtol, o.atol}, 0});
  LATHE_RETURN_IF_ERROR(check->prepare(o.method));
  return check;
}

// Nodes and op counts after the passes, against the counts before.
void record_changes(const Program& program, const std::map<std::string, std::map<std::string, int64_t>>& before,
                    std::vector<MethodChange>& methods) {
  for (MethodChange& c : methods) {
    const Graph& g = program.find_method(c.method)->program->graph();
    c.nodes_after = g.node_count();
    std::map<std::string, std::pair<int64_t, int64_t>> all;
    for (const auto& [op, n] : before.at(c.method)) all[op].first = n;
    for (const auto& [op, n] : op_counts(g)) all[op].second = n;
    for (const auto& [op, counts] : all) {
      if (counts.first != counts.second) c.ops[op] = counts;
    }
  }
}

}  // namespace

Status check_passes(const TransformOptions& options) {
  auto passes = make_passes(options);
  return passes.ok() ? Status::Ok() : Status(passes.error());
}

Result<TransformReport> transform(Program& program, const TransformOptions& o) {
  // Resolve the pass list first: a typo fails before anything changes.
  LATHE_ASSIGN_OR_RETURN(auto passes, make_passes(o));
  if (!o.method.empty() && !program.find_method(o.method)) {
    const std::string where = o.source.empty() ? "" : o.source + " has ";
    return make_error(where + "no method '" + o.method + "'; methods: " + join_names(program.method_names()));
  }
  TransformReport report;
  std::map<std::string, std::map<std::string, int64_t>> before;
  for (const Method& m : program.methods) {
    before[m.name] = op_counts(m.program->graph());
    report.methods.push_back(MethodChange{m.name, o.method.empty() || m.name == o.method,
                                          m.program->graph().node_count(), 0, {}});
  }
  PassManagerOptions pmo;
  pmo.verify_each = o.verify_each;
  pmo.print_after_each = o.print_after_each;
  pmo.before_each = o.before_each_pass;
  std::unique_ptr<DifferentialPassCheck> check;
  if (o.check_outputs) {
    LATHE_ASSIGN_OR_RETURN(check, make_check(program, o));
    pmo.after_each = [&check](const std::string& method, size_t index, ExportedProgram& p) {
      return check->after_pass(method, index, p);
    };
  }
  PassManager pm(pmo);
  for (auto& p : passes) pm.add(std::move(p));
  PassContext ctx;
  ctx.set_record_rewrites(o.explain_rewrites);
  LATHE_ASSIGN_OR_RETURN(report.changed, pm.run(program, ctx, o.method));
  if (o.verify_result) {
    Status ok = verify(program);
    if (!ok.ok()) {
      const std::string what = o.source.empty() ? "the result" : "the result of transforming " + o.source;
      return make_error(what + " does not verify: " + ok.error().message());
    }
  }
  report.explanations = ctx.records();
  for (const PassTiming& t : pm.timings()) report.passes.push_back(PassRun{t.method, t.pass, t.changed, t.seconds});
  record_changes(program, before, report.methods);
  if (check) report.checked = check->summary();
  return report;
}

std::vector<PassInfo> available_passes() {
  std::vector<PassInfo> out;
  for (const auto& e : builtin_passes().entries()) out.push_back(PassInfo{e.name, e.description});
  return out;
}

std::string default_pipeline() { return kDefaultPipeline; }

std::string default_transform_passes() { return kDefaultPasses; }

}  // namespace lathe
