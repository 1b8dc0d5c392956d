// transform: the pass pipeline `lathe transform` runs, with its report
// returned as data. constant_propagation gets the portable-kernel evaluator
// here, per pass instance (no process-wide default is touched).
#include <map>
#include <memory>

#include "lathe/ir/verify.h"
#include "lathe/lathe.h"
#include "lathe/passes/constant_propagation.h"
#include "lathe/passes/default_pipeline.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/pass_registry.h"
#include "lathe/runtime/constant_evaluator.h"

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

Result<std::vector<std::unique_ptr<Pass>>> make_passes(const TransformOptions& o) {
  const std::string names = o.passes.empty() ? std::string(kDefaultPasses) : o.passes;
  LATHE_ASSIGN_OR_RETURN(auto list, builtin_passes().create_list(expand_pipeline(names)));
  LATHE_RETURN_IF_ERROR(configure_passes(list, PipelineOptions{o.keep}));
  for (auto& pass : list) {
    if (auto* cp = dynamic_cast<ConstantPropagation*>(pass.get()); cp && !cp->options().evaluator) {
      cp->mutable_options().evaluator = portable_evaluator();
    }
  }
  return list;
}

}  // namespace

Result<TransformReport> transform(Program& program, const TransformOptions& o) {
  // Resolve the pass list first: a typo fails before anything changes.
  LATHE_ASSIGN_OR_RETURN(auto passes, make_passes(o));
  if (!o.method.empty() && !program.find_method(o.method)) {
    return make_error("no method '" + o.method + "'; methods: " + join_names(program.method_names()));
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
  PassManager pm(pmo);
  for (auto& p : passes) pm.add(std::move(p));
  PassContext ctx;
  ctx.set_record_rewrites(o.explain_rewrites);
  LATHE_ASSIGN_OR_RETURN(report.changed, pm.run(program, ctx, o.method));
  Status ok = verify(program);
  if (!ok.ok()) return make_error("the result does not verify: " + ok.error().message());

  report.explanations = ctx.records();
  for (const PassTiming& t : pm.timings()) report.passes.push_back(PassRun{t.method, t.pass, t.changed, t.seconds});
  for (MethodChange& c : report.methods) {
    const Graph& g = program.find_method(c.method)->program->graph();
    c.nodes_after = g.node_count();
    std::map<std::string, std::pair<int64_t, int64_t>> all;
    for (const auto& [op, n] : before[c.method]) all[op].first = n;
    for (const auto& [op, n] : op_counts(g)) all[op].second = n;
    for (const auto& [op, counts] : all) {
      if (counts.first != counts.second) c.ops[op] = counts;
    }
  }
  return report;
}

std::vector<PassInfo> available_passes() {
  std::vector<PassInfo> out;
  for (const auto& e : builtin_passes().entries()) out.push_back(PassInfo{e.name, e.description});
  return out;
}

std::string default_pipeline() { return kDefaultPipeline; }

}  // namespace lathe
