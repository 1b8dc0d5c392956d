// `lathe view FILE.pt2 [--method M] -o OUT.html`
// `lathe view BEFORE.pt2 AFTER.pt2 [--method M] [--explain-file F | --passes P] -o DIFF.html`
//
// One self-contained HTML page (no network): the graph top-down, module
// groups collapsed, inputs and outputs coloured by kind, delegates that open
// on their ops, and a panel with each node's op, arguments, types, origin
// and stack trace. With two archives, both are aligned row by row and
// rewritten, added and removed nodes are marked; `--explain-file` attaches
// the records of a saved `lathe transform --explain` output to their nodes,
// `--passes` runs those passes again on BEFORE (in memory) to get them. An
// archive that does not load is one line on stderr, as `lathe inspect`
// says it, and nothing is written.
#include <fstream>
#include <iostream>
#include <sstream>

#include "lathe/cli/commands.h"
#include "lathe/cli/view_model.h"
#include "lathe/lathe.h"

namespace lathe::cli {
namespace {

struct ViewOptions {
  std::vector<std::string> files;
  std::string output;
  std::string method;
  std::string explain_file;
  std::string passes;
};

// The explain records of running `passes` over a fresh copy of BEFORE,
// through the facade as `lathe transform` runs them (constant_propagation
// folds on the portable kernels; nothing process-wide is set).
Result<std::vector<ExplainRecord>> rerun_explain(const std::string& before_path, const std::string& passes,
                                                 const std::string& method) {
  LATHE_ASSIGN_OR_RETURN(Program program, load(before_path));
  TransformOptions o;
  o.passes = passes;
  o.method = method;
  o.source = before_path;
  o.verify_result = false;  // only the records are wanted; the archives shown were verified when read
  LATHE_ASSIGN_OR_RETURN(TransformReport report, transform(program, o));
  return std::move(report.explanations);
}

int run_view(const ViewOptions& o, std::ostream& out, std::ostream& err) {
  if (o.files.empty() || o.files.size() > 2 || o.output.empty()) {
    err << "lathe view: needs FILE.pt2 (or BEFORE.pt2 AFTER.pt2) and -o OUT.html\n";
    return 2;
  }
  std::vector<Program> programs;
  for (const std::string& f : o.files) {
    auto p = load(f);
    if (!p.ok()) {
      err << "lathe view: " << p.error().message() << "\n";
      return 1;
    }
    // A program that does not verify (a parameter whose stored shape
    // disagrees with its placeholder, say) is refused as inspect, convert
    // and run refuse it: a page must not show a program Lathe would not run.
    if (Status ok = verify(*p); !ok.ok()) {
      err << "lathe view: " << f << ": " << ok.error().message() << "\n";
      return 1;
    }
    programs.push_back(std::move(p).value());
  }
  if (o.files.size() == 1) {
    if (!o.explain_file.empty() || !o.passes.empty()) {
      err << "lathe view: --explain-file and --passes need two archives (BEFORE AFTER)\n";
      return 2;
    }
    Status s = write_view(ViewSource{&programs[0], o.files[0]}, o.method, o.output);
    if (!s.ok()) {
      err << "lathe view: " << s.error().message() << "\n";
      return 1;
    }
    out << "wrote " << o.output << "\n";
    return 0;
  }
  std::vector<ExplainRecord> records;
  if (!o.explain_file.empty()) {
    std::ifstream in(o.explain_file);
    if (!in) {
      err << "lathe view: " << o.explain_file << ": cannot open\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    records = parse_explain_text(text.str(), programs[0]);
  }
  if (!o.passes.empty()) {
    auto r = rerun_explain(o.files[0], o.passes, o.method);
    if (!r.ok()) {
      err << "lathe view: " << r.error().message() << "\n";
      return 1;
    }
    records.insert(records.end(), r->begin(), r->end());
  }
  Status s = write_view_diff(ViewSource{&programs[0], o.files[0]}, ViewSource{&programs[1], o.files[1]}, records,
                             o.method, o.output);
  if (!s.ok()) {
    err << "lathe view: " << s.error().message() << "\n";
    return 1;
  }
  out << "wrote " << o.output << "\n";
  return 0;
}

}  // namespace

Command add_view_command(CLI::App& app) {
  auto o = std::make_shared<ViewOptions>();
  auto* cmd = app.add_subcommand("view", "Write a self-contained HTML view of a .pt2, or of a before/after diff");
  cmd->add_option("files", o->files, "FILE.pt2, or BEFORE.pt2 AFTER.pt2")->required();
  cmd->add_option("-o,--output", o->output, "The HTML file to write")->required();
  cmd->add_option("--method", o->method, "The method to show (default: the first)");
  cmd->add_option("--explain-file", o->explain_file,
                  "Diff: the saved output of `lathe transform --explain`; each record is attached to its node");
  cmd->add_option("--passes", o->passes,
                  "Diff: run these passes on BEFORE again (in memory) and attach their explain records");
  return Command{cmd, [o] { return run_view(*o, std::cout, std::cerr); }};
}

}  // namespace lathe::cli
