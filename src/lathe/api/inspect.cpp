// inspect_text / inspect_json: the summaries `lathe inspect` prints, as text
// and as JSON.
//
// `lathe inspect` calls these (cli/inspect_command.cpp), so the CLI, the
// facade and the Python package print the same summary.
#include <nlohmann/json.hpp>

#include <array>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "lathe/lathe.h"
#include "lathe/tools.h"
#include "lathe/core/printable.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/program_summary.h"

namespace lathe {

using Json = nlohmann::ordered_json;

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
    case TorchVersionStatus::Newer: return s + ", newer than the verified " + verified_torch_text();
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

std::string verified_torch_text() {
  const std::vector<std::string> v = verified_torch_versions();
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

std::string inspect_text(const Program& program, const std::string& path, bool graph) {
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
    if (graph) {
      std::istringstream body(print_program(ep));
      o << "  graph:\n";
      for (std::string line; std::getline(body, line);) o << "    " << line << "\n";
    }
  }
  return o.str();
}


std::string inspect_json(const Program& program) {
  Json root = Json::object();
  root["format"] = program.source_format;
  Json methods = Json::object();
  for (const auto& m : program.methods) {
    const ExportedProgram& ep = *m.program;
    const Graph& g = ep.graph();
    Json mj = Json::object();
    mj["nodes"] = g.node_count();
    mj["schema_version"] = std::to_string(ep.schema_version.major) + "." + std::to_string(ep.schema_version.minor);
    mj["torch_version"] = ep.torch_version;
    Json ranges = Json::object();
    for (const auto& [symbol, r] : ep.range_constraints) {
      ranges[symbol] = Json::array({r.min_val ? Json(*r.min_val) : Json(nullptr), r.max_val ? Json(*r.max_val) : Json(nullptr)});
    }
    mj["range_constraints"] = std::move(ranges);
    Json ops = Json::object();
    for (const auto& [op, count] : op_histogram(g)) ops[op] = count;
    mj["ops"] = std::move(ops);
    Json inputs = Json::array();
    for (size_t i = 0; i < ep.input_specs.size() && i < g.inputs().size(); ++i) {
      const auto& spec = ep.input_specs[i];
      Json in = Json::object();
      in["name"] = spec.kind == InputKind::ConstantInput ? spec.target : first_value_name(g.inputs()[i]);
      in["kind"] = std::string(input_kind_name(spec.kind));
      in["target"] = spec.target.empty() || spec.kind == InputKind::ConstantInput ? Json(nullptr) : Json(spec.target);
      if (spec.kind == InputKind::Buffer) in["persistent"] = spec.persistent;
      inputs.push_back(std::move(in));
    }
    mj["inputs"] = std::move(inputs);
    Json outputs = Json::array();
    for (size_t i = 0; i < ep.output_specs.size() && i < g.outputs().size(); ++i) {
      const auto& spec = ep.output_specs[i];
      Json out = Json::object();
      out["name"] = first_value_name(g.outputs()[i]);
      out["kind"] = std::string(output_kind_name(spec.kind));
      out["target"] = spec.target.empty() ? Json(nullptr) : Json(spec.target);
      outputs.push_back(std::move(out));
    }
    mj["outputs"] = std::move(outputs);
    WeightSummary w = weight_summary(ep);
    Json weights = Json::object();
    weights["count"] = w.count;
    weights["bytes"] = w.bytes;
    Json dtypes = Json::object();
    for (const auto& [dt, n] : w.dtypes) dtypes[dt] = n;
    weights["dtypes"] = std::move(dtypes);
    mj["weights"] = std::move(weights);
    methods[m.name] = std::move(mj);
  }
  root["methods"] = std::move(methods);
  // Names are the file's bytes: not always valid UTF-8, which dump() would
  // throw on; invalid sequences become U+FFFD.
  const std::string text = root.dump(-1, ' ', false, Json::error_handler_t::replace);
  // DEL is the one control character JSON leaves raw (and only inside
  // strings). Spelled \u007f, the text goes through the CLI's escaping
  // (printable_text) unchanged in meaning: what else that escapes in JSON
  // (C1 and bidi controls) it spells as the same JSON escapes.
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\x7f')
      out += "\\u007f";
    else
      out += c;
  }
  return out;
}

}  // namespace lathe
