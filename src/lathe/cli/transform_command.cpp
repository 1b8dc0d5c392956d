// `lathe transform IN.pt2 -o OUT.pt2 [--passes a,b,...|default] [--keep OP,...] [--method NAME]
//                  [--explain] [--verify] [--print-after-each]`
// `lathe transform --list-passes`
//
// Runs passes over every method (or one), each method against its own
// signature, and writes the result atomically. Without --passes it runs
// lathe::default_transform_passes(): addmm_mm_to_linear,remove_dead_code. The result is always
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
#include <vector>

#include "lathe/cli/commands.h"
#include "lathe/cli/option_checks.h"
#include "lathe/cli/progress.h"
#include "lathe/cli/view_model.h"
#include "lathe/lathe.h"
#include "lathe/tools.h"

namespace lathe::cli {

namespace {

struct TransformCommandOptions {
  std::string input;
  std::string output;
  std::string passes = default_transform_passes();
  std::string method;
  bool explain = false;
  bool verify = false;
  bool print_after_each = false;
  bool list_passes = false;
  bool quiet = false;
  std::string view;  // --view DIFF.html: `lathe view` of input and output
  std::string keep;  // decompose: ops to leave whole
  double rtol = 1e-5;
  double atol = 1e-6;
};

// "aten.addmm.default 2 -> 0, aten.linear.default 0 -> 2" (changed ops only).
std::string op_changes(const MethodChange& c) {
  std::string s;
  for (const auto& [op, counts] : c.ops) {
    s += (s.empty() ? "" : ", ") + op + " " + std::to_string(counts.first) + " -> " + std::to_string(counts.second);
  }
  return s.empty() ? "no op changed" : s;
}

std::string milliseconds(double seconds) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(seconds < 0.01 ? 3 : 1) << seconds * 1e3 << " ms";
  return o.str();
}

int list_passes(std::ostream& out) {
  const std::vector<PassInfo> passes = available_passes();
  size_t width = 0;
  for (const PassInfo& p : passes) width = std::max(width, p.name.size());
  out << "passes (default: " << default_transform_passes() << "):\n";
  for (const PassInfo& p : passes) {
    out << "  " << std::left << std::setw(static_cast<int>(width)) << p.name << "  " << p.description << "\n";
  }
  out << "--passes default: " << default_pipeline() << "\n";
  return 0;
}

lathe::TransformOptions facade_options(const TransformCommandOptions& o, std::ostream& out) {
  lathe::TransformOptions t;
  t.passes = o.passes;
  t.keep = comma_items(o.keep);
  t.method = o.method;
  t.verify_each = o.verify;
  t.check_outputs = o.verify;
  t.rtol = o.rtol;
  t.atol = o.atol;
  t.explain_rewrites = o.explain || !o.view.empty();
  t.source = o.input;
  t.print_after_each = o.print_after_each ? &out : nullptr;
  t.verify_result = false;  // verified below, naming the output that is not written
  return t;
}

void print_report(const TransformCommandOptions& o, const TransformReport& report, std::ostream& out) {
  if (o.explain) {
    for (const auto& r : report.explanations) out << printable_name(r.method) << ": " << printable_name(r.message) << "\n";
  }
  for (const MethodChange& m : report.methods) {
    if (!m.selected) {
      out << "method " << printable_name(m.method) << ": not selected, unchanged\n";
      continue;
    }
    out << "method " << printable_name(m.method) << ": " << m.nodes_before << " -> " << m.nodes_after << " nodes; "
        << op_changes(m) << "\n";
    for (const PassRun& p : report.passes) {
      if (p.method != m.method) continue;
      out << "  " << p.pass << ": " << (p.changed ? "changed" : "no change") << ", " << milliseconds(p.seconds) << "\n";
    }
  }
  for (const std::string& line : report.checked) out << "verified " << line << "\n";
  out << "wrote " << o.output << "\n";
}

// The input read again is the "before" (the passes rewrote it in place).
Status write_view(const TransformCommandOptions& o, const Program& program, const TransformReport& report) {
  LATHE_ASSIGN_OR_RETURN(Program original, load(o.input));
  return write_view_diff(ViewSource{&original, o.input}, ViewSource{&program, o.output}, report.explanations, o.method,
                         o.view);
}

// The command's last use of the program: `lathe` exits next, and the system
// takes a process's memory back at once, where freeing a graph node by node
// costs about a tenth of a whole transform of a deep network (compilers skip
// it the same way, e.g. clang's -disable-free). Held from a static, the
// program stays reachable, so leak checkers do not report it.
void keep_until_exit(Program&& program) {
  static auto* kept = new std::vector<Program>();
  kept->push_back(std::move(program));
}

int run_transform(const TransformCommandOptions& o, std::ostream& out, std::ostream& err) {
  if (o.list_passes) return list_passes(out);
  if (o.input.empty() || o.output.empty()) {
    err << "lathe transform: needs IN.pt2 and -o OUT.pt2 (or --list-passes)\n";
    return 2;
  }
  Progress progress = Progress::for_stderr(o.quiet);
  auto fail = [&err, &progress](const Error& e, int code) {
    progress.finish();
    err << "lathe transform: " << e.message() << "\n";
    return code;
  };
  lathe::TransformOptions options = facade_options(o, out);
  options.before_each_pass = [&progress](const std::string& method, const std::string& pass) {
    progress.step("pass " + pass + " on method " + method);
  };
  // Resolve the pass list before reading anything: a typo fails fast.
  if (Status passes = check_passes(options); !passes.ok()) return fail(passes.error(), 2);
  progress.step("loading " + o.input);
  auto program = load(o.input);
  if (!program.ok()) return fail(program.error(), 1);
  if (!o.method.empty() && !program->find_method(o.method)) {
    progress.finish();
    err << "lathe transform: " << o.input << " has no method '" << o.method
        << "'; methods: " << join_names(program->method_names()) << "\n";
    return 2;
  }
  auto report = transform(*program, options);
  if (!report.ok()) return fail(report.error(), 1);
  // Never write a program that does not verify, whatever the flags: save()
  // verifies while it writes, and the file appears only if it verified.
  progress.step("verifying and writing " + o.output);
  if (Status written = save(*program, o.output); !written.ok()) {
    if (Status ok = verify(*program); !ok.ok()) {
      progress.finish();
      err << "lathe transform: " << o.output << ": the result of transforming " << o.input
          << " does not verify, nothing written: " << ok.error().message() << "\n";
      return 1;
    }
    return fail(written.error(), 1);
  }
  progress.finish();
  print_report(o, *report, out);
  if (!o.view.empty()) {
    if (Status viewed = write_view(o, *program, *report); !viewed.ok()) return fail(viewed.error(), 1);
    out << "wrote " << o.view << "\n";
  }
  keep_until_exit(std::move(*program));
  return 0;
}

}  // namespace

Command add_transform_command(CLI::App& app) {
  auto o = std::make_shared<TransformCommandOptions>();
  auto* cmd = app.add_subcommand("transform", "Run rewrite passes over a .pt2 and write the result");
  add_input_archive(cmd, o->input);
  cmd->add_option("-o,--output", o->output, "The .pt2 archive to write (atomically)");
  cmd->add_option("--passes", o->passes,
                  std::string("Comma-separated passes, in order (default: ") + default_transform_passes() + ")");
  add_method_option(cmd, o->method);
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
  cmd->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  return Command{cmd, [o] { return run_transform(*o, std::cout, std::cerr); }};
}

}  // namespace lathe::cli
