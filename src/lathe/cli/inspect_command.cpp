#include "lathe/cli/inspect_command.h"

#include "lathe/lathe.h"

#include "lathe/cli/commands.h"


#include <array>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "lathe/core/printable.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/program_summary.h"
#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"

namespace lathe::cli {

std::string verified_torch_list() {
  const std::vector<std::string> v = verified_torch_versions();
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

namespace {

std::string human_bytes(uint64_t b) {
  std::ostringstream o;
  if (b < 1024) {
    o << b << " B";
  } else if (b < (1 << 20)) {
    o << std::fixed << std::setprecision(1) << b / 1024.0 << " KiB";
  } else {
    o << std::fixed << std::setprecision(1) << b / 1048576.0 << " MiB";
  }
  return o.str();
}

// "export schema 8.20, torch 2.13.0+cpu, verified"; a pre-schema-8 file says
// what it was. A release Lathe is verified against says so, and one newer
// than those names them; an older one is read as any other (formats.md).
std::string schema_text(const ExportedProgram& ep) {
  const std::string v = std::to_string(ep.schema_version.major) + "." + std::to_string(ep.schema_version.minor);
  std::string s = ep.legacy_schema_version
                      ? "export schema " + std::to_string(*ep.legacy_schema_version) + ", upgraded to " + v
                      : "export schema " + v;
  s += ", torch " + printable_name(ep.torch_version);
  switch (torch_version_status(ep.torch_version)) {
    case TorchVersionStatus::Verified: return s + ", verified";
    case TorchVersionStatus::Newer: return s + ", newer than the verified " + verified_torch_list();
    default: return s;
  }
}

// "s77 in [1, 64], u0 in [0, inf]"
std::string ranges_text(const ExportedProgram& ep) {
  std::string s;
  for (const auto& [symbol, r] : ep.range_constraints) {
    s += (s.empty() ? "" : ", ") + printable_name(symbol) + " in " + range_text(r);
  }
  return s;
}

// kind, value name, type, target: one row per input or output.
using SignatureRow = std::array<std::string, 4>;

template <typename Specs, typename KindName>
void add_signature_rows(const Specs& specs, const std::vector<Argument>& ios, KindName kind_name, std::vector<SignatureRow>& rows) {
  for (size_t i = 0; i < specs.size() && i < ios.size(); ++i) {
    std::string type;
    ios[i].for_each_value([&](Value* v) { type = format_type(*v); });
    rows.push_back({std::string(kind_name(specs[i].kind)), printable_name(first_value_name(ios[i])), printable_name(type),
                    printable_name(specs[i].target)});
  }
}

// The inputs and outputs, in columns sized to this method's longest
// entries, so long names from deep module paths still line up.
void print_signature(const ExportedProgram& ep, std::ostream& o) {
  std::vector<SignatureRow> rows;
  add_signature_rows(ep.input_specs, ep.graph().inputs(), input_kind_name, rows);
  const size_t outputs_begin = rows.size();
  add_signature_rows(ep.output_specs, ep.graph().outputs(), output_kind_name, rows);
  std::array<size_t, 3> width{0, 0, 0};
  for (const auto& r : rows)
    for (size_t c = 0; c < 3; ++c) width[c] = std::max(width[c], r[c].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0) o << "  inputs:\n";
    if (i == outputs_begin) o << "  outputs:\n";
    const auto& r = rows[i];
    std::string line = "    " + r[0] + std::string(width[0] - r[0].size() + 2, ' ') + r[1] +
                       std::string(width[1] - r[1].size() + 2, ' ') + r[2];
    if (!r[3].empty()) line += std::string(width[2] - r[2].size() + 2, ' ') + r[3];
    o << line << "\n";
  }
}

}  // namespace

std::string inspect_text(const Program& program, const std::string& path, const InspectOptions& options) {
  std::ostringstream o;
  o << path << ": " << program.source_format << ", " << program.methods.size()
    << (program.methods.size() == 1 ? " method" : " methods") << "\n";
  for (const auto& m : program.methods) {
    const ExportedProgram& ep = *m.program;
    const Graph& g = ep.graph();
    o << "\nmethod " << printable_name(m.name) << ": " << g.node_count() << " nodes (" << schema_text(ep) << ")\n";
    if (!ep.range_constraints.empty()) o << "  ranges: " << ranges_text(ep) << "\n";
    print_signature(ep, o);
    o << "  ops:\n";
    for (const auto& [op, count] : op_histogram(g)) {
      o << "    " << std::right << std::setw(5) << count << "  " << printable_name(op) << "\n";
    }
    WeightSummary w = weight_summary(ep);
    o << "  weights: " << w.count << " tensors, " << human_bytes(w.bytes);
    if (!w.dtypes.empty()) {
      o << " (";
      bool first = true;
      for (const auto& [dt, n] : w.dtypes) {
        o << (first ? "" : ", ") << dt << " x" << n;
        first = false;
      }
      o << ")";
    }
    o << "\n";
    if (options.graph) {
      std::istringstream body(print_program(ep));
      o << "  graph:\n";
      for (std::string line; std::getline(body, line);) o << "    " << line << "\n";
    }
  }
  return o.str();
}

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
  auto program = read_pt2(path);
  if (!program.ok()) {
    err << "lathe inspect: " << program.error().message() << "\n";
    return 1;
  }
  if (options.json) {
    out << lathe::inspect_json(*program) << "\n";
  } else {
    out << inspect_text(*program, path, options);
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
