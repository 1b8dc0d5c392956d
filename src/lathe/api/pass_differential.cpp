#include "lathe/api/pass_differential.h"

#include <cstdio>

#include "lathe/harness/default_inputs.h"
#include "lathe/harness/differential.h"

namespace lathe {

DifferentialPassCheck::DifferentialPassCheck(Program reference, std::vector<std::unique_ptr<Pass>> mirror,
                                             DifferentialPassOptions options)
    : reference_(std::move(reference)), mirror_(std::move(mirror)), options_(std::move(options)) {}

Result<DifferentialPassCheck::MethodState*> DifferentialPassCheck::state_for(const std::string& method) {
  auto it = methods_.find(method);
  if (it != methods_.end()) return &it->second;
  const Method* m = reference_.find_method(method);
  if (!m || !m->program) return make_error("no method '" + method + "' in the reference copy");
  MethodState s;
  LATHE_ASSIGN_OR_RETURN(DefaultInputs found, default_inputs(options_.archive_path, *m, InputPreference::SampleFirst));
  for (ReferenceCall& c : found.calls) s.inputs.push_back(std::move(c.inputs));
  // Random inputs are made per call later; making one set now refuses a
  // program whose declared sizes cannot be had before any pass runs.
  if (s.inputs.empty()) {
    auto probe = random_inputs(*m->program, options_.seed);
    if (!probe.ok()) return probe.error();
  }
  s.source = s.inputs.empty() ? "seeded random inputs (seed " + std::to_string(options_.seed) + ", 2 calls)"
                              : found.source;
  order_.push_back(method);
  return &methods_.emplace(method, std::move(s)).first->second;
}

Status DifferentialPassCheck::prepare(const std::string& only) {
  for (const Method& m : reference_.methods) {
    if (!only.empty() && m.name != only) continue;
    auto state = state_for(m.name);
    if (!state.ok()) return state.error().context("method '" + m.name + "': cannot load inputs to verify with");
  }
  return Status::Ok();
}

Status DifferentialPassCheck::after_pass(const std::string& method, size_t pass_index, ExportedProgram& after) {
  if (pass_index >= mirror_.size()) return make_error("no mirror for pass #" + std::to_string(pass_index));
  LATHE_ASSIGN_OR_RETURN(MethodState * s, state_for(method));
  ExportedProgram& before = *reference_.find_method(method)->program;

  DifferentialOptions d;
  d.inputs = s->inputs;
  d.seed = options_.seed;
  d.calls = 2;
  d.tolerance = options_.tolerance;
  auto report = differential_run(before, after, d);
  if (!report.ok()) return report.error().context("differential run on " + s->source);
  if (!report->ok) {
    return make_error("outputs changed (on " + s->source + "):\n" + report->summary());
  }
  s->max_rel = std::max(s->max_rel, report->max_rel);
  ++s->passes_checked;

  // Bring the reference copy one pass forward.
  PassContext scratch;
  scratch.set_record_rewrites(false);
  scratch.set_current(method, std::string(mirror_[pass_index]->name()));
  auto mirrored = mirror_[pass_index]->run(before, scratch);
  if (!mirrored.ok()) return mirrored.error().context("applying the pass to the reference copy");
  return Status::Ok();
}

std::vector<std::string> DifferentialPassCheck::summary() const {
  std::vector<std::string> lines;
  for (const std::string& name : order_) {
    const MethodState& s = methods_.at(name);
    char rel[32];
    std::snprintf(rel, sizeof rel, "%.2g", s.max_rel);
    lines.push_back(name + ": outputs equal after each of " + std::to_string(s.passes_checked) + " pass(es) on " +
                    s.source + " (max relative difference " + rel + ")");
  }
  return lines;
}

}  // namespace lathe
