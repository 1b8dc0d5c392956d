#include "lathe/cli/view_model.h"

#include <nlohmann/json.hpp>

#include <span>
#include <unordered_map>
#include <unordered_set>

#include "lathe/extend.h"
#include "lathe/lathe.h"
#include "lathe/tools.h"
#include "lathe/view/view_template.h"  // generated from src/lathe/view/view.html

namespace lathe::cli {
namespace {

using Json = nlohmann::json;

// One method's nodes as the page draws them, plus what the diff compares.
struct GraphModel {
  Json json;
  std::vector<std::string> keys;  // alignment key per node: name, "in:name", "out:<i>"
  std::vector<std::string> ops;
  std::vector<std::string> args;
  std::vector<std::string> types;
  std::unordered_map<std::string, size_t> by_key;
};

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

// "self=%x, [1, 0]": positional arguments bare, keyword ones named, as the
// text printer writes them.
std::string arguments_text(const Node& n) {
  std::vector<std::string> parts;
  for (const NamedArgument& a : n.inputs()) {
    std::string v = format_argument(a.arg);
    parts.push_back(a.kind == ArgKind::Positional ? v : a.name + "=" + v);
  }
  return join(parts, ", ");
}

std::string metadata(const Node& n, std::string_view key) {
  for (const auto& [k, v] : n.metadata())
    if (k == key) return v;
  return {};
}

class GraphBuilder {
 public:
  GraphBuilder(const ExportedProgram& ep, const ViewSource& source, const std::string& method)
      : ep_(ep), constness_(ep) {
    model_.json = Json::object();
    model_.json["file"] = source.path;
    model_.json["method"] = method;
    model_.json["format"] = source.program->source_format;
    mods_ = Json::array();
    stacks_ = Json::array();
    nodes_ = Json::array();
  }

  GraphModel build() {
    const Graph& g = ep_.graph();
    for (size_t i = 0; i < g.inputs().size(); ++i) add_input(i);
    for (const Node* n : g.nodes()) add_node(*n);
    for (size_t i = 0; i < g.outputs().size(); ++i) add_output(i);
    model_.json["nodes"] = std::move(nodes_);
    model_.json["mods"] = std::move(mods_);
    model_.json["stacks"] = std::move(stacks_);
    return std::move(model_);
  }

 private:
  size_t push(Json node, std::string key, std::string op, std::string args, std::string type) {
    size_t index = nodes_.size();
    nodes_.push_back(std::move(node));
    model_.by_key.emplace(key, index);
    model_.keys.push_back(std::move(key));
    model_.ops.push_back(std::move(op));
    model_.args.push_back(std::move(args));
    model_.types.push_back(std::move(type));
    return index;
  }

  void add_input(size_t i) {
    const Argument& arg = ep_.graph().inputs()[i];
    Value* v = nullptr;
    arg.for_each_value([&](Value* x) {
      if (!v) v = x;
    });
    const InputSpec* spec = i < ep_.input_specs.size() ? &ep_.input_specs[i] : nullptr;
    std::string name = v ? v->name() : (spec ? spec->target : "input" + std::to_string(i));
    std::string kind;
    if (v) {
      Origin o = constness_.origin(v);
      kind = o == Origin::Unknown && spec ? std::string(input_kind_name(spec->kind)) : std::string(origin_name(o));
    } else {
      kind = spec ? std::string(input_kind_name(spec->kind)) : "input";
    }
    std::string type = v ? format_type(*v) : format_argument(arg);
    Json j = {{"n", name}, {"k", "in"}, {"o", kind}, {"t", type}};
    if (spec && !spec->target.empty()) j["g"] = spec->target;
    size_t index = push(std::move(j), "in:" + name, kind, "", type);
    if (v) value_node_[v] = index;
  }

  void add_node(const Node& n) {
    std::string op = n.op_name();
    std::string args = arguments_text(n);
    std::vector<std::string> types;
    for (Value* v : n.defined_values()) types.push_back(format_type(*v));
    std::string type = types.size() == 1 ? types[0] : "(" + join(types, ", ") + ")";
    Json j = {{"n", n.name()}, {"k", "op"}, {"o", op}, {"a", args}, {"t", type}};
    std::vector<size_t> ins;
    std::unordered_set<size_t> seen;
    for (Value* v : n.operand_values()) {
      auto it = value_node_.find(v);
      if (it != value_node_.end() && seen.insert(it->second).second) ins.push_back(it->second);
    }
    if (!ins.empty()) j["i"] = ins;
    if (Value* out = n.output()) {
      if (out->kind() == ValueKind::Tensor && constness_.is_constant_weight(out))
        j["w"] = "constant weight: " + constness_.describe(out);
    }
    if (int m = module_of(n); m >= 0) j["m"] = m;
    if (std::string st = metadata(n, "stack_trace"); !st.empty()) j["s"] = intern_stack(st);
    if (op.starts_with("lathe.delegate.")) {
      if (Json d = delegate_contents(n); !d.is_null()) j["d"] = std::move(d);
    }
    size_t index = push(std::move(j), n.name(), op, std::move(args), type);
    for (Value* v : n.defined_values()) value_node_[v] = index;
  }

  void add_output(size_t i) {
    const Argument& arg = ep_.graph().outputs()[i];
    const OutputSpec* spec = i < ep_.output_specs.size() ? &ep_.output_specs[i] : nullptr;
    std::string kind = spec ? std::string(output_kind_name(spec->kind)) : "output";
    std::string text = format_argument(arg);
    std::string type;
    std::vector<size_t> ins;
    arg.for_each_value([&](Value* v) {
      if (type.empty()) type = format_type(*v);
      auto it = value_node_.find(v);
      if (it != value_node_.end()) ins.push_back(it->second);
    });
    std::string name = text.starts_with("%") ? text.substr(1) : text;
    Json j = {{"n", name}, {"k", "out"}, {"o", kind}, {"t", type}};
    if (!ins.empty()) j["i"] = ins;
    if (spec && !spec->target.empty()) j["g"] = spec->target;
    push(std::move(j), "out:" + std::to_string(i), kind, text, type);
  }

  // nn_module_stack as torch.export serializes it: "key,path,type;..." from
  // the outermost module in. The root (empty path) is the whole program and
  // not a group. A path may hold commas, so each entry is cut at its first
  // and last comma.
  int module_of(const Node& n) {
    std::string stack = metadata(n, "nn_module_stack");
    if (stack.empty()) return -1;
    auto it = stack_modules_.find(stack);
    if (it != stack_modules_.end()) return it->second;
    int parent = -1;
    size_t start = 0;
    while (start <= stack.size()) {
      size_t end = stack.find(';', start);
      if (end == std::string::npos) end = stack.size();
      std::string entry = stack.substr(start, end - start);
      size_t first = entry.find(',');
      size_t last = entry.rfind(',');
      if (first != std::string::npos && last > first) {
        std::string path = entry.substr(first + 1, last - first - 1);
        std::string type = entry.substr(last + 1);
        if (!path.empty()) {
          auto [m, inserted] = modules_.emplace(path, static_cast<int>(mods_.size()));
          if (inserted) mods_.push_back(Json::array({path, type, parent}));
          parent = m->second;
        }
      }
      start = end + 1;
    }
    stack_modules_.emplace(stack, parent);
    return parent;
  }

  int intern_stack(const std::string& trace) {
    auto [it, inserted] = stack_ids_.emplace(trace, static_cast<int>(stacks_.size()));
    if (inserted) stacks_.push_back(trace);
    return it->second;
  }

  // A delegate's payload (a uint8 constant of the program) decoded to its
  // ops: what the backend runs in place of the nodes it claimed.
  Json delegate_contents(const Node& n) {
    const Argument* payload = n.input("payload");
    Value* v = payload ? payload->tensor() : nullptr;
    const InputSpec* spec = v ? constness_.input_spec(v) : nullptr;
    const Tensor* t = spec ? ep_.constants.find(spec->target) : nullptr;
    if (!t || t->dtype != DType::UInt8 || !t->is_contiguous() || !t->check_fits().ok()) return nullptr;
    const std::span<const std::byte> bytes(t->data(), t->nbytes());
    if (is_replanned_payload(bytes)) return replanned_contents(bytes);
    auto decoded = decode_payload(bytes);
    if (!decoded.ok()) return Json{{"error", decoded.error().message()}};
    Json ops = Json::array();
    for (const PayloadOp& op : decoded->ops) {
      std::vector<std::string> operands;
      for (const PayloadOperand& o : op.inputs) {
        std::string s = (o.role.empty() ? "" : o.role + "=") + "v" + std::to_string(o.value);
        if (o.value < decoded->values.size()) {
          const PayloadValue& pv = decoded->values[o.value];
          if (pv.input >= 0) s += " (input " + std::to_string(pv.input) + ")";
        }
        operands.push_back(std::move(s));
      }
      std::vector<std::string> outs;
      for (uint32_t o : op.outputs) {
        std::string s = "v" + std::to_string(o);
        if (o < decoded->values.size()) s += shape_string(decoded->values[o].sizes);
        outs.push_back(std::move(s));
      }
      ops.push_back({{"o", op.kind}, {"n", op.node}, {"a", join(operands, ", ")}, {"t", join(outs, ", ")}});
    }
    return Json{{"backend", decoded->backend}, {"ops", std::move(ops)}};
  }

  // A delegate of a program with symbolic sizes holds the claimed nodes
  // themselves (program JSON), planned per input size at run time: shown
  // as those nodes, each with its symbolic output sizes.
  static Json replanned_contents(std::span<const std::byte> bytes) {
    auto record = decode_replanned_payload(bytes);
    if (!record.ok()) return Json{{"error", record.error().message()}};
    const Json program = Json::parse(record->program_json, nullptr, false);
    const Json* nodes = nullptr;
    if (program.is_object() && program.contains("graph_module")) {
      const Json& g = program["graph_module"];
      if (g.is_object() && g.contains("graph") && g["graph"].is_object() && g["graph"].contains("nodes")) nodes = &g["graph"]["nodes"];
    }
    if (!nodes || !nodes->is_array()) return Json{{"error", "the re-planned record's program has no graph nodes"}};
    Json ops = Json::array();
    for (const Json& node : *nodes) {
      std::string target = node.is_object() && node.contains("target") && node["target"].is_string() ? node["target"].get<std::string>() : "?";
      if (target.rfind("torch.ops.", 0) == 0) target = target.substr(10);
      std::string name;
      if (node.is_object() && node.contains("outputs") && node["outputs"].is_array() && !node["outputs"].empty()) {
        const Json& o = node["outputs"][0];
        if (o.is_object() && o.contains("as_tensor") && o["as_tensor"].is_object() && o["as_tensor"].contains("name") &&
            o["as_tensor"]["name"].is_string())
          name = o["as_tensor"]["name"].get<std::string>();
      }
      ops.push_back({{"o", target}, {"n", name}, {"a", ""}, {"t", "planned per input size"}});
    }
    return Json{{"backend", record->backend}, {"ops", std::move(ops)}};
  }

  const ExportedProgram& ep_;
  Constness constness_;
  GraphModel model_;
  Json nodes_, mods_, stacks_;
  std::unordered_map<const Value*, size_t> value_node_;
  std::unordered_map<std::string, int> modules_;
  std::unordered_map<std::string, int> stack_modules_;
  std::unordered_map<std::string, int> stack_ids_;
};

Result<const Method*> pick_method(const ViewSource& source, const std::string& method) {
  if (source.program->methods.empty()) return make_error(source.path + ": has no methods");
  if (method.empty()) return &source.program->methods.front();
  if (const Method* m = source.program->find_method(method)) return m;
  return make_error(source.path + " has no method '" + method + "'; methods: " +
                    join_names(source.program->method_names()));
}

Result<GraphModel> graph_model(const ViewSource& source, const std::string& method) {
  LATHE_ASSIGN_OR_RETURN(const Method* m, pick_method(source, method));
  return GraphBuilder(*m->program, source, m->name).build();
}

// Every string the page shows is escaped as the terminal would show it
// (printable_text): the page inserts names as text, never as markup, but a
// bidi override would still turn a name around.
void escape_strings(Json& j) {
  if (j.is_string()) {
    auto& s = j.get_ref<std::string&>();
    if (!is_printable_text(s)) s = printable_text(s);
  } else if (j.is_structured()) {
    for (Json& item : j) escape_strings(item);
  }
}

// The model as the text of its <script type="application/json"> element.
// '<' only occurs inside strings, where \u003c means the same: the JSON can
// then never close the element that holds it or open a comment. U+2028 and
// U+2029 are escaped too, as JSON allows, so the text is also a valid
// script literal.
std::string dump(Json j) {
  escape_strings(j);
  const std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size() + s.size() / 64);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') {
      out += "\\u003c";
    } else if (s.compare(i, 2, "\xe2\x80") == 0 && i + 2 < s.size() && (s[i + 2] == '\xa8' || s[i + 2] == '\xa9')) {
      out += s[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

Status write_text(const std::string& path, const std::string& text) {
  return write_text_file(path, text);
}

}  // namespace

std::vector<ExplainRecord> parse_explain_text(const std::string& text, const Program& program) {
  std::vector<ExplainRecord> records;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) continue;
    std::string method = line.substr(0, colon);
    if (!program.find_method(method)) continue;  // "method m: 11 -> 9 nodes", "verified m: ..."
    ExplainRecord r;
    r.method = method;
    r.message = line.substr(colon + 2);
    size_t q = r.message.find('\'');
    size_t q2 = q == std::string::npos ? q : r.message.find('\'', q + 1);
    if (q2 == std::string::npos) continue;
    r.node = r.message.substr(q + 1, q2 - q - 1);
    r.rewritten = r.message.find(" kept") == std::string::npos && r.message.find("not claimed") == std::string::npos;
    records.push_back(std::move(r));
  }
  return records;
}

Result<std::string> view_model_json(const ViewSource& source, const std::string& method) {
  LATHE_ASSIGN_OR_RETURN(GraphModel g, graph_model(source, method));
  Json root = {{"mode", "single"}, {"graphs", Json::array({std::move(g.json)})}};
  return dump(std::move(root));
}

namespace {

// The method a diff shows: `method`, or else the first method of AFTER that
// BEFORE has too.
Result<std::string> diff_method(const ViewSource& before, const ViewSource& after, const std::string& method) {
  if (!method.empty()) return method;
  for (const Method& m : after.program->methods) {
    if (before.program->find_method(m.name)) return m.name;
  }
  return make_error(before.path + " and " + after.path + " have no method in common");
}

// Explain records attached to the node they name: the after node, else the
// before node (a node the pass removed), else to neither.
struct DiffNotes {
  std::unordered_map<size_t, Json> after, before;
  Json unattached = Json::array();
};

DiffNotes attach_notes(const GraphModel& b, const GraphModel& a, const std::vector<ExplainRecord>& records,
                       const std::string& method) {
  DiffNotes notes;
  for (const ExplainRecord& r : records) {
    if (r.method != method) continue;
    Json note = {{"m", r.message}, {"r", r.rewritten}};
    if (!r.pass.empty()) note["p"] = r.pass;
    if (auto it = a.by_key.find(r.node); it != a.by_key.end()) {
      notes.after[it->second].push_back(std::move(note));
    } else if (auto it2 = b.by_key.find(r.node); it2 != b.by_key.end()) {
      notes.before[it2->second].push_back(std::move(note));
    } else {
      notes.unattached.push_back(std::move(note));
    }
  }
  return notes;
}

// The diff's rows [before index, after index, state]. Nodes are matched by
// name (inputs by name, outputs by position): a pass that rewrites a node in
// place keeps its name. A matched pair whose op, arguments or type changed,
// or that a record says was rewritten, is "rewritten". Rows go in AFTER's
// order; each removed BEFORE node is placed just before the first matched
// node that followed it in BEFORE.
Json diff_rows(const GraphModel& b, const GraphModel& a, const DiffNotes& notes) {
  std::vector<int> match_of_after(a.keys.size(), -1);
  std::vector<bool> before_matched(b.keys.size(), false);
  for (size_t j = 0; j < a.keys.size(); ++j) {
    auto it = b.by_key.find(a.keys[j]);
    if (it != b.by_key.end() && !before_matched[it->second]) {
      match_of_after[j] = static_cast<int>(it->second);
      before_matched[it->second] = true;
    }
  }
  auto state_of = [&](size_t bi, size_t aj) -> std::string {
    bool changed = b.ops[bi] != a.ops[aj] || b.args[bi] != a.args[aj] || b.types[bi] != a.types[aj];
    if (!changed) {
      auto it = notes.after.find(aj);
      if (it != notes.after.end())
        for (const Json& n : it->second) changed |= n["r"].get<bool>();
    }
    return changed ? "rewritten" : "same";
  };
  Json rows = Json::array();
  size_t next_before = 0;
  auto flush_removed = [&](size_t upto) {
    for (; next_before < upto; ++next_before)
      if (!before_matched[next_before]) rows.push_back(Json::array({next_before, -1, "removed"}));
  };
  for (size_t j = 0; j < a.keys.size(); ++j) {
    int bi = match_of_after[j];
    if (bi < 0) {
      rows.push_back(Json::array({-1, j, "added"}));
      continue;
    }
    if (static_cast<size_t>(bi) >= next_before) flush_removed(static_cast<size_t>(bi) + 1);
    rows.push_back(Json::array({bi, j, state_of(static_cast<size_t>(bi), j)}));
  }
  flush_removed(b.keys.size());
  return rows;
}

}  // namespace

Result<std::string> view_diff_model_json(const ViewSource& before, const ViewSource& after,
                                         const std::vector<ExplainRecord>& records, const std::string& method) {
  LATHE_ASSIGN_OR_RETURN(std::string name, diff_method(before, after, method));
  LATHE_ASSIGN_OR_RETURN(GraphModel b, graph_model(before, name));
  LATHE_ASSIGN_OR_RETURN(GraphModel a, graph_model(after, name));
  DiffNotes notes = attach_notes(b, a, records, name);
  Json rows = diff_rows(b, a, notes);
  for (auto& [i, n] : notes.after) a.json["nodes"][i]["x"] = std::move(n);
  for (auto& [i, n] : notes.before) b.json["nodes"][i]["x"] = std::move(n);
  Json root = {{"mode", "diff"},
               {"graphs", Json::array({std::move(b.json), std::move(a.json)})},
               {"rows", std::move(rows)},
               {"unattached", std::move(notes.unattached)}};
  return dump(std::move(root));
}

std::string view_html(const std::string& model_json) {
  static const std::string kMarker = "__LATHE_MODEL__";
  std::string_view page(reinterpret_cast<const char*>(kViewTemplate), sizeof(kViewTemplate) - 1);
  size_t at = page.find(kMarker);
  std::string html;
  html.reserve(page.size() + model_json.size());
  html.append(page.substr(0, at));
  html.append(model_json);
  html.append(page.substr(at + kMarker.size()));
  return html;
}

Status write_view(const ViewSource& source, const std::string& method, const std::string& out_path) {
  LATHE_ASSIGN_OR_RETURN(std::string model, view_model_json(source, method));
  return write_text(out_path, view_html(model));
}

Status write_view_diff(const ViewSource& before, const ViewSource& after, const std::vector<ExplainRecord>& records,
                       const std::string& method, const std::string& out_path) {
  LATHE_ASSIGN_OR_RETURN(std::string model, view_diff_model_json(before, after, records, method));
  return write_text(out_path, view_html(model));
}

}  // namespace lathe::cli
