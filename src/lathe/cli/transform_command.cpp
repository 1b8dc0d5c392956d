// `lathe transform IN.pt2 -o OUT.pt2 [--passes a,b,...|default] [--keep OP,...] [--method NAME]
//                  [--explain] [--verify] [--print-after-each]`
// `lathe transform --list-passes`
//
// Runs passes over every method (or one), each method against its own
// signature, and writes the result atomically. Without --passes it runs
// kDefaultPasses: addmm_mm_to_linear,remove_dead_code. The result is always
// verified before it is written (a program that does not verify is never
// written); --verify also verifies the input and after every pass, and runs
// the method before and after every pass on the same inputs (see
// pass_differential.h), naming the pass that broke either. --explain prints one line per candidate a pattern
// pass looked at: rewritten, or kept and why.
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "lathe/cli/commands.h"
#include "lathe/cli/option_checks.h"
#include "lathe/core/printable.h"
#include "lathe/cli/pass_differential.h"
#include "lathe/cli/view_model.h"
#include "lathe/ir/verify.h"
#include "lathe/passes/constant_propagation.h"
#include "lathe/passes/default_pipeline.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/pass_registry.h"
#include "lathe/runtime/constant_evaluator.h"
#include "lathe/serde/pt2.h"

namespace lathe::cli {

namespace {

struct TransformOptions {
  std::string input;
  std::string output;
  std::string passes = kDefaultPasses;
  std::string method;
  bool explain = false;
  bool verify = false;
  bool print_after_each = false;
  bool list_passes = false;
  std::string view;  // --view DIFF.html: `lathe view` of input and output
  std::string keep;  // decompose: ops to leave whole
  double rtol = 1e-5;
  double atol = 1e-6;
};

std::map<std::string, int64_t> op_counts(const Graph& g) {
  std::map<std::string, int64_t> ops;
  for (const Node* n : g.nodes()) ops[n->op_name()]++;
  return ops;
}

// "aten.addmm.default 2 -> 0, aten.linear.default 0 -> 2" (changed ops only).
std::string op_changes(const std::map<std::string, int64_t>& before, const std::map<std::string, int64_t>& after) {
  std::map<std::string, std::pair<int64_t, int64_t>> all;
  for (const auto& [op, n] : before) all[op].first = n;
  for (const auto& [op, n] : after) all[op].second = n;
  std::string s;
  for (const auto& [op, c] : all) {
    if (c.first == c.second) continue;
    s += (s.empty() ? "" : ", ") + op + " " + std::to_string(c.first) + " -> " + std::to_string(c.second);
  }
  return s.empty() ? "no op changed" : s;
}

std::string milliseconds(double seconds) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(seconds < 0.01 ? 3 : 1) << seconds * 1e3 << " ms";
  return o.str();
}

int list_passes(std::ostream& out) {
  const PassRegistry& r = builtin_passes();
  size_t width = 0;
  for (const auto& e : r.entries()) width = std::max(width, e.name.size());
  out << "passes (default: " << kDefaultPasses << "):\n";
  for (const auto& e : r.entries()) out << "  " << std::left << std::setw(static_cast<int>(width)) << e.name << "  " << e.description << "\n";
  out << "--passes " << kDefaultPipelineName << ": " << kDefaultPipeline << "\n";
  return 0;
}

// The passes --passes names ("default" expanded) with --keep applied; built
// twice under --verify (the run and its mirror), identically.
Result<std::vector<std::unique_ptr<Pass>>> make_passes(const TransformOptions& o) {
  LATHE_ASSIGN_OR_RETURN(auto list, builtin_passes().create_list(expand_pipeline(o.passes)));
  LATHE_RETURN_IF_ERROR(configure_passes(list, PipelineOptions{split_list(o.keep)}));
  return list;
}

int run_transform(const TransformOptions& o, std::ostream& out, std::ostream& err) {
  if (o.list_passes) return list_passes(out);
  if (o.input.empty() || o.output.empty()) {
    err << "lathe transform: needs IN.pt2 and -o OUT.pt2 (or --list-passes)\n";
    return 2;
  }
  // constant_propagation folds on the portable kernels (passes sit below
  // the runtime, so the evaluator is handed to them here).
  ConstantPropagation::set_default_evaluator(
      ConstantEvaluator{[](std::string_view target) { return has_kernel(target); },
                        [](const ExportedProgram& p) { return evaluate_closed_program(p); }});
  // Resolve the pass list before reading anything: a typo fails fast.
  auto passes = make_passes(o);
  if (!passes.ok()) {
    err << "lathe transform: " << passes.error().message() << "\n";
    return 2;
  }
  auto program = read_pt2(o.input);
  if (!program.ok()) {
    err << "lathe transform: " << program.error().message() << "\n";
    return 1;
  }
  if (!o.method.empty() && !program->find_method(o.method)) {
    err << "lathe transform: " << o.input << " has no method '" << o.method
        << "'; methods: " << join_names(program->method_names()) << "\n";
    return 2;
  }

  std::map<std::string, std::map<std::string, int64_t>> before;
  std::map<std::string, size_t> nodes_before;
  for (const Method& m : program->methods) {
    before[m.name] = op_counts(m.program->graph());
    nodes_before[m.name] = m.program->graph().node_count();
  }

  PassManagerOptions pmo;
  pmo.verify_each = o.verify;
  pmo.print_after_each = o.print_after_each ? &out : nullptr;
  // --verify: a second copy of the program, kept one pass behind, is the
  // "before" of every differential run.
  std::unique_ptr<DifferentialPassCheck> check;
  if (o.verify) {
    auto reference = read_pt2(o.input);
    if (!reference.ok()) {
      err << "lathe transform: " << reference.error().message() << "\n";
      return 1;
    }
    auto mirror = make_passes(o);
    if (!mirror.ok()) {
      err << "lathe transform: " << mirror.error().message() << "\n";
      return 2;
    }
    check = std::make_unique<DifferentialPassCheck>(std::move(reference).value(), std::move(mirror).value(),
                                                    DifferentialPassOptions{o.input, Tolerance{o.rtol, o.atol}, 0});
    Status inputs = check->prepare(o.method);
    if (!inputs.ok()) {
      err << "lathe transform: " << inputs.error().message() << "\n";
      return 1;
    }
    pmo.after_each = [&check](const std::string& method, size_t index, ExportedProgram& program) {
      return check->after_pass(method, index, program);
    };
  }
  PassManager pm(pmo);
  for (auto& p : *passes) pm.add(std::move(p));
  PassContext ctx;
  ctx.set_record_rewrites(o.explain || !o.view.empty());
  Result<bool> ran = pm.run(*program, ctx, o.method);
  if (!ran.ok()) {
    err << "lathe transform: " << ran.error().message() << "\n";
    return 1;
  }
  // Never write a program that does not verify, whatever the flags.
  Status ok = verify(*program);
  if (!ok.ok()) {
    err << "lathe transform: " << o.output << ": the result of transforming " << o.input
        << " does not verify, nothing written: " << ok.error().message() << "\n";
    return 1;
  }
  Status written = write_pt2(*program, o.output);
  if (!written.ok()) {
    err << "lathe transform: " << written.error().message() << "\n";
    return 1;
  }

  if (o.explain) {
    for (const auto& r : ctx.records()) out << printable_name(r.method) << ": " << printable_name(r.message) << "\n";
  }
  for (const Method& m : program->methods) {
    if (!o.method.empty() && m.name != o.method) {
      out << "method " << printable_name(m.name) << ": not selected, unchanged\n";
      continue;
    }
    out << "method " << printable_name(m.name) << ": " << nodes_before[m.name] << " -> " << m.program->graph().node_count()
        << " nodes; " << op_changes(before[m.name], op_counts(m.program->graph())) << "\n";
    for (const auto& t : pm.timings()) {
      if (t.method != m.name) continue;
      out << "  " << t.pass << ": " << (t.changed ? "changed" : "no change") << ", " << milliseconds(t.seconds)
          << "\n";
    }
  }
  if (check) {
    for (const std::string& line : check->summary()) out << "verified " << line << "\n";
  }
  out << "wrote " << o.output << "\n";
  if (!o.view.empty()) {  // the input read again is the "before" (the passes rewrote it in place)
    auto original = read_pt2(o.input);
    Status viewed = original.ok() ? write_view_diff(ViewSource{&*original, o.input}, ViewSource{&*program, o.output},
                                                    ctx.records(), o.method, o.view)
                                  : Status(original.error());
    if (!viewed.ok()) {
      err << "lathe transform: " << viewed.error().message() << "\n";
      return 1;
    }
    out << "wrote " << o.view << "\n";
  }
  return 0;
}

}  // namespace

Command add_transform_command(CLI::App& app) {
  auto o = std::make_shared<TransformOptions>();
  auto* cmd = app.add_subcommand("transform", "Run rewrite passes over a .pt2 and write the result");
  cmd->add_option("input", o->input, "The .pt2 archive to read");
  cmd->add_option("-o,--output", o->output, "The .pt2 archive to write (atomically)");
  cmd->add_option("--passes", o->passes,
                  std::string("Comma-separated passes, in order (default: ") + kDefaultPasses + ")");
  cmd->add_option("--method", o->method, "Only this method (the others are written unchanged)")->check(non_empty_check());
  cmd->add_flag("--explain", o->explain, "One line per candidate: rewritten, or kept and why");
  cmd->add_flag("--verify", o->verify,
                "Verify the input and the program after every pass, and run each method before and after every "
                "pass on the same inputs (fails naming the pass whose outputs differ)");
  cmd->add_option("--rtol", o->rtol, "--verify: tolerance relative to the output's max |value| (default 1e-5)")->check(tolerance_check());
  cmd->add_option("--atol", o->atol, "--verify: absolute tolerance (default 1e-6)")->check(tolerance_check());
  cmd->add_flag("--print-after-each", o->print_after_each, "Print each method's IR after every pass");
  cmd->add_option("--keep", o->keep,
                  "Ops the decompose pass leaves whole, comma-separated (e.g. aten.linear.default)");
  cmd->add_option("--view", o->view, "Also write `lathe view`'s before/after page (explain records attached) here");
  cmd->add_flag("--list-passes", o->list_passes, "List the passes with a one-line description each");
  return Command{cmd, [o] { return run_transform(*o, std::cout, std::cerr); }};
}

}  // namespace lathe::cli
