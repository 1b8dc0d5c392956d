#include "lathe/cli/inspect_command.h"

#include <iostream>

#include "lathe/cli/commands.h"
#include "lathe/lathe.h"
#include "lathe/tools.h"

namespace lathe::cli {

Command add_inspect_command(CLI::App& app) {
  struct State {
    std::string path;
    InspectOptions options;
  };
  auto state = std::make_shared<State>();
  auto* cmd = app.add_subcommand("inspect", "Show methods, signature, op histogram and weights of a .pt2");
  cmd->add_option("file", state->path, "The .pt2 archive")->required();
  cmd->add_flag("--json", state->options.json, "One JSON object on stdout");
  cmd->add_flag("--graph", state->options.graph, "Also print each method's graph");
  return Command{cmd, [state] { return run_inspect(state->path, state->options, std::cout, std::cerr); }};
}

int run_inspect(const std::string& path, const InspectOptions& options, std::ostream& out, std::ostream& err) {
  auto program = load(path);
  if (!program.ok()) {
    err << "lathe inspect: " << program.error().message() << "\n";
    return 1;
  }
  if (options.json) {
    out << lathe::inspect_json(*program) << "\n";
  } else {
    out << lathe::inspect_text(*program, path, options.graph);
  }
  // What was read is shown either way (it helps find the fault), but a
  // program that does not verify (a parameter whose stored shape disagrees
  // with its placeholder, say) is an error, as every other command says.
  Status ok = verify(*program);
  if (!ok.ok()) {
    err << "lathe inspect: " << path << ": " << ok.error().message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace lathe::cli
