// Each `lathe` subcommand registers itself on the CLI11 app and returns the
// action to run when it was the one parsed. main.cpp only lists them.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace lathe::cli {

// Returns the subcommand; after parsing, `run` is called if it was parsed and
// its return value is the process exit code.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_inspect_command(CLI::App& app);
Command add_convert_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_transform_command(CLI::App& app);
Command add_lower_command(CLI::App& app);
Command add_ops_command(CLI::App& app);
Command add_view_command(CLI::App& app);


}  // namespace lathe::cli
