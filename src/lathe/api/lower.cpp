// lower: a program to one of the built-in backends (backends/lower.h).
#include <map>

#include "lathe/backends/lower.h"
#include "lathe/lathe.h"
#include "lathe/passes/pass_manager.h"

namespace lathe {

Result<LowerReport> lower(Program& program, const LowerOptions& options) {
  const Backend* backend = find_backend(options.backend);
  if (!backend) {
    return make_error("unknown backend '" + options.backend + "'; backends: " +
                      join_names(builtin_delegates().names()));
  }
  std::map<std::string, size_t> nodes_before;
  for (const Method& m : program.methods) nodes_before[m.name] = m.program->graph().node_count();
  LATHE_ASSIGN_OR_RETURN(LowerResult lowered, lower_program(program, *backend, options.method));
  LowerReport report;
  report.pass_explanations = std::move(lowered.pass_records);
  for (const MethodLowering& m : lowered.methods) {
    MethodLoweringReport r;
    r.method = m.method;
    r.nodes_before = nodes_before[m.method];
    r.nodes_after = program.find_method(m.method)->program->graph().node_count();
    r.delegates = static_cast<size_t>(m.report.delegates);
    r.claimed_nodes = static_cast<size_t>(m.report.claimed_nodes);
    r.delegate_nodes = m.report.delegate_nodes;
    r.explanation = explain_lowering(m);
    for (const NodeDecision& d : m.report.decisions) {
      r.decisions.push_back(LoweringDecision{m.method, d.node, d.op, d.claimed, d.claimed ? d.delegate : -1, d.reason});
    }
    report.methods.push_back(std::move(r));
  }
  return report;
}

std::string to_string(const LoweringDecision& d) {
  return explain_decision(d.method, NodeDecision{d.node, d.op, d.claimed, d.reason, d.delegate});
}

std::vector<std::string> available_backends() { return all_delegates().names(); }

}  // namespace lathe
