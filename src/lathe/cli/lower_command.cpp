// `lathe lower IN.pt2 -o OUT.pt2 --backend xnnpack|vulkan [--method NAME] [--explain]`
//
// Lowers every method (or one) to a backend: decompose (keeping what the
// backend wants whole), addmm_mm_to_linear and remove_dead_code, then the partitioner replaces each group of claimed
// nodes by a lathe.delegate.<backend> node whose payload record is a lifted
// uint8 constant (layout: src/lathe/backends/payload.h). The archive keeps
// every weight once (delegates read them from the program's state). PyTorch
// cannot run the delegate nodes; `lathe run OUT.pt2` does, prepacking at
// load. --explain prints, per node, claimed or not and why.
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

struct LowerCommandOptions {
  std::string input;
  std::string output;
  std::string backend = "xnnpack";
  std::string method;
  bool explain = false;
  bool quiet = false;
};

int run_lower(const LowerCommandOptions& o, std::ostream& out, std::ostream& err) {
  const std::vector<std::string> backends = available_backends();
  if (std::find(backends.begin(), backends.end(), o.backend) == backends.end()) {
    err << "lathe lower: unknown backend '" << o.backend << "'; backends: " << join_names(backends) << "\n";
    return 2;
  }
  Progress progress = Progress::for_stderr(o.quiet);
  auto fail = [&](const std::string& message) {
    progress.finish();
    err << "lathe lower: " << message << "\n";
    return 1;
  };
  progress.step("loading " + o.input);
  auto program = load(o.input);
  if (!program.ok()) return fail(program.error().message());
  progress.step("lowering to " + o.backend);
  auto lowered = lower(*program, LowerOptions{o.backend, o.method});
  if (!lowered.ok()) return fail(o.input + ": " + lowered.error().message());
  // lower() verified the lowered program already.
  progress.step("writing " + o.output);
  if (Status written = save(*program, o.output, SaveOptions{.verify = false}); !written.ok()) {
    return fail(written.error().message());
  }
  progress.finish();
  for (const MethodLoweringReport& m : lowered->methods) {
    if (o.explain) out << m.explanation;
    out << "method " << printable_name(m.method) << ": " << m.nodes_before << " -> " << m.nodes_after << " nodes; "
        << m.delegates << " " << o.backend << " delegate(s) holding " << m.claimed_nodes << " node(s)\n";
  }
  out << "wrote " << o.output << "\n";
  return 0;
}

}  // namespace

Command add_lower_command(CLI::App& app) {
  auto o = std::make_shared<LowerCommandOptions>();
  auto* cmd = app.add_subcommand("lower", "Lower a .pt2 to a backend (delegate nodes with prepackable payloads) and write it");
  add_input_archive(cmd, o->input)->required();
  cmd->add_option("-o,--output", o->output, "The .pt2 archive to write (atomically)")->required();
  cmd->add_option("--backend", o->backend, "Backend: xnnpack (default) or vulkan");
  add_method_option(cmd, o->method);
  cmd->add_flag("--explain", o->explain, "One line per node: claimed (and as what) or not, and why");
  cmd->add_flag("-q,--quiet", o->quiet, kQuietHelp);
  return Command{cmd, [o] { return run_lower(*o, std::cout, std::cerr); }};
}

}  // namespace lathe::cli
