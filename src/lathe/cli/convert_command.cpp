// `lathe convert IN.pt2 -o OUT.pt2 [--format 2.9|2.8|legacy]`: rewrite any
// readable generation as the chosen one, so nobody has to re-export.
#include <algorithm>
#include <iostream>
#include <memory>

#include "lathe/cli/commands.h"
#include "lathe/cli/option_checks.h"
#include "lathe/cli/progress.h"
#include "lathe/lathe.h"
#include "lathe/tools.h"

namespace lathe::cli {

namespace {

// The writer keeps each method's schema minor unless the program uses
// something that minor cannot express; then it writes the lowest one that
// can. Say so: an older loader may refuse the file. Returns what was
// written: "export schema 8.12" (or "8.12, 8.20" when methods differ).
std::string report_schemas(const std::vector<WrittenSchema>& schemas) {
  std::vector<std::string> minors;
  for (const WrittenSchema& w : schemas) {
    if (!w.raised_because.empty()) {
      std::cout << "note: method '" << w.method << "' was read as export schema 8." << w.read_minor << " but uses "
                << w.raised_because << ", which needs 8." << w.written_minor << "; written as schema 8."
                << w.written_minor << "\n";
    }
    const std::string v = "8." + std::to_string(w.written_minor);
    if (std::find(minors.begin(), minors.end(), v) == minors.end()) minors.push_back(v);
  }
  std::string s = "export schema ";
  for (size_t i = 0; i < minors.size(); ++i) s += (i ? ", " : "") + minors[i];
  return s;
}

int run_convert(const std::string& in, const std::string& out, const std::string& format_name, bool quiet) {
  if (Status f = check_save_format(format_name); !f.ok()) {
    std::cerr << "lathe convert: " << f.error().message() << "\n";
    return 2;
  }
  Progress progress = Progress::for_stderr(quiet);
  auto fail = [&](const std::string& message) {
    progress.finish();
    std::cerr << "lathe convert: " << message << "\n";
    return 1;
  };
  progress.step("loading " + in);
  auto program = load(in);
  if (!program.ok()) return fail(program.error().message());
  progress.step("verifying " + in);
  if (Status v = verify(*program); !v.ok()) return fail(in + ": " + v.error().message());
  auto schemas = written_schemas(*program, format_name);
  if (!schemas.ok()) return fail(schemas.error().message());
  const std::string written = report_schemas(*schemas);  // its notes come before the summary line
  progress.step("writing " + out);
  Status w = save(*program, out, SaveOptions{.format = format_name, .verify = false});  // verified above
  if (!w.ok()) return fail(w.error().message());
  progress.finish();
  std::cout << in << " (" << program->source_format << ") -> " << out << " (" << format_name << ", "
            << written << "), "
            << program->methods.size() << (program->methods.size() == 1 ? " method" : " methods") << "\n";
  return 0;
}

}  // namespace

Command add_convert_command(CLI::App& app) {
  struct State {
    std::string in, out, format = "2.9";
    bool quiet = false;
  };
  auto state = std::make_shared<State>();
  auto* cmd = app.add_subcommand("convert", "Write any readable .pt2 generation as PyTorch 2.9, 2.8 or 2.4-2.7 (legacy)");
  add_input_archive(cmd, state->in)->required();
  cmd->add_option("-o,--output", state->out, "The .pt2 archive to write")->required();
  cmd->add_option("--format", state->format, "2.9 (default: raw weights), 2.8 (torch.save weights) or legacy (flat zip)");
  cmd->add_flag("-q,--quiet", state->quiet, kQuietHelp);
  return Command{cmd, [state] { return run_convert(state->in, state->out, state->format, state->quiet); }};
}

}  // namespace lathe::cli
