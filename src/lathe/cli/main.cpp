// The `lathe` command: subcommands over .pt2 archives. Each subcommand lives
// in its own <name>_command.cpp and is listed here.
#include <CLI/CLI.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <exception>
#include <iostream>
#include <new>
#include <vector>

#include "lathe/cli/commands.h"
#include "lathe/cli/printable_streams.h"
#include "lathe/tools.h"

namespace {

// The last resort: every subcommand validates its inputs and returns errors,
// but whatever still escapes (an allocation a memory limit refuses, a thread
// the system will not start) must end as one line and exit status 1, not as
// std::terminate's abort. Temporary files are removed on the way out by
// their owners' destructors, which unwinding to here runs.
int run_guarded(const lathe::cli::Command& c) {
  const std::string who = "lathe " + c.app->get_name() + ": ";
  try {
    return c.run();
  } catch (const std::bad_alloc&) {
    std::cerr << who << "out of memory (an allocation was refused; is a memory limit set, or does the input "
              << "declare sizes larger than it holds?)\n";
  } catch (const std::exception& e) {
    std::cerr << who << "unexpected error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << who << "unexpected error\n";
  }
  return 1;
}

// glibc serves a block above its mmap threshold with a mapping of its own,
// returned to the system when freed; below it, from the heap, where freed
// pages stay resident. It also raises the threshold to the size of the
// largest mapped block freed so far: after simdjson's index of a deep
// network's weights config (about 22 MB) was freed, every table of verify
// and of the writer came from the heap and stayed resident after use
// (peak RSS of the 10,000-layer MLP's transform 62.5 -> 59.2 MiB with the
// threshold fixed). A fixed threshold also turns that adjustment off.
void keep_large_blocks_mapped() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 10);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  lathe::install_temp_file_cleanup();
  keep_large_blocks_mapped();
  lathe::cli::escape_standard_streams();
  CLI::App app{"Lathe: load, rewrite, lower, run and save torch.export programs (.pt2)", "lathe"};
  app.set_version_flag("--version", std::string("lathe " LATHE_VERSION "\nverified with PyTorch ") + lathe::verified_torch_text());
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
    if (c.app->parsed()) return run_guarded(c);
  }
  return 2;
}
