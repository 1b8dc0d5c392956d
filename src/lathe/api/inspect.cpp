// inspect_json: the summary `lathe inspect --json` prints.
//
// `lathe inspect --json` calls this (cli/inspect_command.cpp), so the CLI,
// the facade and the Python package print the same summary.
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "lathe/lathe.h"
#include "lathe/ir/program_summary.h"

namespace lathe {

using Json = nlohmann::ordered_json;

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
