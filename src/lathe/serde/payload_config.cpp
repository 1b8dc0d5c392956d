#include "lathe/serde/payload_config.h"

#include "lathe/serde/json_reader.h"
#include "lathe/serde/json_writer.h"

namespace lathe {

TensorMeta payload_tensor_meta(const Tensor& t) {
  TensorMeta m;
  m.dtype = t.dtype;
  for (int64_t s : t.sizes) m.sizes.emplace_back(s);
  for (int64_t s : t.strides) m.strides.emplace_back(s);
  m.storage_offset = SymDim(t.storage_offset);
  m.requires_grad = t.requires_grad;
  return m;
}

Result<PayloadConfig> decode_payload_config(std::string_view text, const std::string& origin,
                                            size_t readable_after) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<json::Document> doc, json::Document::parse(text, origin, readable_after));
  LATHE_ASSIGN_OR_RETURN(json::Value root, doc->root());
  json::Reader r(origin);
  JsonPath p;
  LATHE_ASSIGN_OR_RETURN(json::Object ro, r.object(root, p));
  LATHE_ASSIGN_OR_RETURN(json::Value cfg, r.field(ro, "config", p));
  PayloadConfig out;
  json::TensorMetaCache metas;
  LATHE_RETURN_IF_ERROR(r.for_each_member(cfg, p.field("config"), [&](std::string_view fqn, json::Value& entry,
                                                                       const JsonPath& ep) -> Status {
    PayloadMeta m;
    bool have_path = false;
    LATHE_RETURN_IF_ERROR(r.for_each_member(entry, ep, [&](std::string_view k, json::Value& x,
                                                            const JsonPath& xp) -> Status {
      LATHE_ASSIGN_OR_RETURN(bool null, r.is_null(x, xp));
      if (null) return Status::Ok();
      if (k == "path_name") {
        LATHE_ASSIGN_OR_RETURN(std::string_view s, r.string(x, xp));
        m.path_name = std::string(s);
        have_path = true;
      } else if (k == "is_param") {
        LATHE_ASSIGN_OR_RETURN(m.is_param, r.boolean(x, xp));
      } else if (k == "use_pickle") {
        LATHE_ASSIGN_OR_RETURN(m.use_pickle, r.boolean(x, xp));
      } else if (k == "tensor_meta") {
        LATHE_ASSIGN_OR_RETURN(MetaRef meta, metas.get(r, x, xp));
        m.tensor_meta = *meta;
      }
      return Status::Ok();
    }));
    if (!have_path) return r.error(ep, "missing field 'path_name'");
    out.emplace_back(std::string(fqn), std::move(m));
    return Status::Ok();
  }));
  return out;
}

std::string encode_payload_config(const PayloadConfig& config) {
  std::string out;
  out.reserve(256 * config.size() + 64);
  {
    json::Writer w(out);  // gives `out` its length when it goes
    w.begin_object().key("config").begin_object();
    for (const auto& [fqn, m] : config) {
      w.key(fqn).begin_object().key("path_name").string(m.path_name);
      w.key("is_param").boolean(m.is_param).key("use_pickle").boolean(m.use_pickle).key("tensor_meta");
      if (m.tensor_meta) json::write_tensor_meta(w, *m.tensor_meta);
      else w.null();
      w.end_object();
    }
    w.end_object().end_object();
  }
  return out;
}

}  // namespace lathe
