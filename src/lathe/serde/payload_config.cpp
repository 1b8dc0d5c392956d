#include "lathe/serde/payload_config.h"

#include "lathe/serde/json_reader.h"
#include "lathe/serde/json_writer.h"

namespace lathe {

Result<PayloadConfig> decode_payload_config(std::string_view text, const std::string& origin) {
  simdjson::dom::parser parser;
  LATHE_ASSIGN_OR_RETURN(json::Element root, json::parse(parser, text, origin));
  json::Reader r(origin);
  JsonPath p;
  LATHE_ASSIGN_OR_RETURN(json::Element cfg, r.field(root, "config", p));
  JsonPath cp = p.field("config");
  LATHE_ASSIGN_OR_RETURN(simdjson::dom::object entries, r.object(cfg, cp));
  PayloadConfig out;
  out.reserve(entries.size());
  for (auto kv : entries) {
    JsonPath ep = cp.field(kv.key);
    PayloadMeta m;
    LATHE_ASSIGN_OR_RETURN(json::Element pn, r.field(kv.value, "path_name", ep));
    LATHE_ASSIGN_OR_RETURN(std::string_view path_name, r.string(pn, ep.field("path_name")));
    m.path_name = std::string(path_name);
    if (auto ip = r.optional_field(kv.value, "is_param")) {
      LATHE_ASSIGN_OR_RETURN(m.is_param, r.boolean(*ip, ep.field("is_param")));
    }
    if (auto up = r.optional_field(kv.value, "use_pickle")) {
      LATHE_ASSIGN_OR_RETURN(m.use_pickle, r.boolean(*up, ep.field("use_pickle")));
    }
    if (auto tm = r.optional_field(kv.value, "tensor_meta")) {
      LATHE_ASSIGN_OR_RETURN(m.tensor_meta, r.tensor_meta(*tm, ep.field("tensor_meta")));
    }
    out.emplace_back(std::string(kv.key), std::move(m));
  }
  return out;
}

std::string encode_payload_config(const PayloadConfig& config) {
  json::Json entries = json::Json::object();
  for (const auto& [fqn, m] : config) {
    json::Json j = json::Json::object();
    j["path_name"] = m.path_name;
    j["is_param"] = m.is_param;
    j["use_pickle"] = m.use_pickle;
    j["tensor_meta"] = m.tensor_meta ? json::tensor_meta_json(*m.tensor_meta) : json::Json(nullptr);
    json::append_member(entries, fqn, std::move(j));
  }
  json::Json root = json::Json::object();
  root["config"] = std::move(entries);
  return json::dump(root);
}

}  // namespace lathe
