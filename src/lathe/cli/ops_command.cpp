// `lathe ops [--json]`: the ops Lathe can run - every portable kernel, by
// namespace - so a user can tell before running a program whether it will
// run (the executor also names a missing kernel when it plans, before
// anything runs).
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "lathe/cli/commands.h"
#include "lathe/tools.h"

namespace lathe::cli {

namespace {

// How much of the core ATen opset (what run_decompositions() gives) runs,
// and which ops do not, each with its reason.
void print_core_aten(const OpSupport& ops, std::ostream& out) {
  out << "\ncore ATen (torch " << ops.core_aten_torch << ", " << ops.core_aten_ops
      << " forward overloads): " << ops.core_aten_ops - ops.core_aten_missing.size() << " with a portable kernel\n";
  for (const auto& [op, reason] : ops.core_aten_missing) out << "  without: " << op << " (" << reason << ")\n";
}

void print_names(std::ostream& out, const std::vector<std::string>& names) {
  std::string line = " ";
  for (const std::string& n : names) {
    if (line.size() + n.size() + 1 > 100) {
      out << line << "\n";
      line = " ";
    }
    line += " " + n;
  }
  out << line << "\n";
}

// What each backend's support table has a rule for (the same table its
// lowering and its decompose keep-list are derived from); a rule still
// decides per node (constness, shapes, dtypes).
void print_backend_claims(const OpSupport& ops, std::ostream& out) {
  for (const auto& [name, claimed] : ops.backend_rules) {
    if (claimed.empty()) {
      out << "\n" << name << ": not in this build\n";
      continue;
    }
    out << "\n" << name << " can claim (" << claimed.size() << "; each node still decided by its rule):\n";
    print_names(out, claimed);
  }
}

int list_ops(bool json, std::ostream& out) {
  const OpSupport support = op_support();
  const std::vector<std::string>& ops = support.portable;
  if (json) {
    out << nlohmann::json(ops).dump() << "\n";
    return 0;
  }
  // "aten.addmm.default" -> namespace "aten", "addmm.default".
  std::map<std::string, std::vector<std::string>> by_namespace;
  for (const std::string& op : ops) {
    size_t dot = op.find('.');
    by_namespace[dot == std::string::npos ? "" : op.substr(0, dot)].push_back(
        dot == std::string::npos ? op : op.substr(dot + 1));
  }
  out << ops.size() << " ops with a portable kernel\n";
  for (const auto& [ns, names] : by_namespace) {
    out << "\n" << ns << " (" << names.size() << "):\n";
    print_names(out, names);
  }
  print_core_aten(support, out);
  print_backend_claims(support, out);
  return 0;
}

}  // namespace

Command add_ops_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("ops", "List the ops Lathe can run (every portable kernel)");
  cmd->add_flag("--json", *json, "A JSON array of op names (aten.addmm.default, ...)");
  return Command{cmd, [json] { return list_ops(*json, std::cout); }};
}

}  // namespace lathe::cli
