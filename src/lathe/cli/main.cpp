// The `lathe` command: subcommands over .pt2 archives.
#include <CLI/CLI.hpp>

#include <iostream>

#include "lathe/cli/inspect_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Lathe: load, rewrite, lower, run and save torch.export programs (.pt2)", "lathe"};
  app.require_subcommand(1);

  std::string inspect_path;
  lathe::cli::InspectOptions inspect_options;
  auto* inspect = app.add_subcommand("inspect", "Show methods, signature, op histogram and weights of a .pt2");
  inspect->add_option("file", inspect_path, "The .pt2 archive")->required();
  inspect->add_flag("--json", inspect_options.json, "One JSON object on stdout");
  inspect->add_flag("--graph", inspect_options.graph, "Also print each method's graph");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (inspect->parsed()) return lathe::cli::run_inspect(inspect_path, inspect_options, std::cout, std::cerr);
  return 2;
}
