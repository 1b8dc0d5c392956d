// The `lathe` command: subcommands over .pt2 archives. Each subcommand lives
// in its own <name>_command.cpp and is listed here.
#include <CLI/CLI.hpp>

#include <vector>

#include "lathe/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Lathe: load, rewrite, lower, run and save torch.export programs (.pt2)", "lathe"};
  app.require_subcommand(1);
  std::vector<lathe::cli::Command> commands = {
      lathe::cli::add_inspect_command(app),
      lathe::cli::add_convert_command(app),
      lathe::cli::add_run_command(app),
      lathe::cli::add_transform_command(app),
      lathe::cli::add_lower_command(app),
      lathe::cli::add_ops_command(app),
      lathe::cli::add_view_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return 2;
}
