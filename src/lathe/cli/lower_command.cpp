// `lathe lower IN.pt2 -o OUT.pt2 --backend xnnpack|vulkan [--method NAME] [--explain]`
//
// Lowers every method (or one) to a backend: decompose (keeping what the
// backend wants whole), addmm_mm_to_linear and remove_dead_code, then the partitioner replaces each group of claimed
// nodes by a lathe.delegate.<backend> node whose payload record is a lifted
// uint8 constant (layout: src/lathe/backends/payload.h). The archive keeps
// every weight once (delegates read them from the program's state). PyTorch
// cannot run the delegate nodes; `lathe run OUT.pt2` does, prepacking at
// load. --explain prints, per node, claimed or not and why.
#include <iostream>
#include <map>
#include <memory>

#include "lathe/backends/lower.h"
#include "lathe/cli/commands.h"
#include "lathe/cli/option_checks.h"
#include "lathe/core/printable.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/serde/pt2.h"

namespace lathe::cli {

namespace {

struct LowerOptions {
  std::string input;
  std::string output;
  std::string backend = "xnnpack";
  std::string method;
  bool explain = false;
};

int run_lower(const LowerOptions& o, std::ostream& out, std::ostream& err) {
  const Backend* backend = find_backend(o.backend);
  if (!backend) {
    err << "lathe lower: unknown backend '" << o.backend << "'; backends: " << join_names(builtin_delegates().names()) << "\n";
    return 2;
  }
  auto program = read_pt2(o.input);
  if (!program.ok()) {
    err << "lathe lower: " << program.error().message() << "\n";
    return 1;
  }
  std::map<std::string, size_t> nodes_before;
  for (const Method& m : program->methods) nodes_before[m.name] = m.program->graph().node_count();
  auto lowered = lower_program(*program, *backend, o.method);
  if (!lowered.ok()) {
    err << "lathe lower: " << o.input << ": " << lowered.error().message() << "\n";
    return 1;
  }
  Status written = write_pt2(*program, o.output);
  if (!written.ok()) {
    err << "lathe lower: " << written.error().message() << "\n";
    return 1;
  }
  for (const MethodLowering& m : lowered->methods) {
    if (o.explain) out << explain_lowering(m);
    const size_t after = program->find_method(m.method)->program->graph().node_count();
    out << "method " << printable_name(m.method) << ": " << nodes_before[m.method] << " -> " << after << " nodes; " << m.report.delegates
        << " " << o.backend << " delegate(s) holding " << m.report.claimed_nodes << " node(s)\n";
  }
  out << "wrote " << o.output << "\n";
  return 0;
}

}  // namespace

Command add_lower_command(CLI::App& app) {
  auto o = std::make_shared<LowerOptions>();
  auto* cmd = app.add_subcommand("lower", "Lower a .pt2 to a backend (delegate nodes with prepackable payloads) and write it");
  cmd->add_option("input", o->input, "The .pt2 archive to read")->required();
  cmd->add_option("-o,--output", o->output, "The .pt2 archive to write (atomically)")->required();
  cmd->add_option("--backend", o->backend, "Backend: xnnpack (default) or vulkan");
  cmd->add_option("--method", o->method, "Only this method (the others are written unchanged)")->check(non_empty_check());
  cmd->add_flag("--explain", o->explain, "One line per node: claimed (and as what) or not, and why");
  return Command{cmd, [o] { return run_lower(*o, std::cout, std::cerr); }};
}

}  // namespace lathe::cli
