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

namespace {

// The entries of the "config" object, one per weight.
Status decode_config_entries(const json::Reader& r, json::Value& cfg, const JsonPath& cp, json::ReadProgress& progress,
                             json::TensorMetaCache& metas, PayloadConfig& out) {
  return r.for_each_member(cfg, cp, [&](std::string_view fqn, json::Value& entry, const JsonPath& ep) -> Status {
    // Entries are read front to back, and nothing before them is looked up
    // again: what lies behind may be dropped.
    progress.reached(entry);
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
        m.tensor_meta = meta;
      }
      return Status::Ok();
    }));
    if (!have_path) return r.error(ep, "missing field 'path_name'");
    out.emplace_back(std::string(fqn), std::move(m));
    return Status::Ok();
  });
}

}  // namespace

Result<PayloadConfig> decode_payload_config(std::string_view text, const std::string& origin,
                                            size_t readable_after, const std::function<void(size_t)>& read_past) {
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<json::Document> doc, json::Document::parse(text, origin, readable_after));
  json::ReadProgress progress(text, read_past);
  progress.indexed(*doc);
  LATHE_ASSIGN_OR_RETURN(json::Value root, doc->root());
  json::Reader r(origin);
  JsonPath p;
  PayloadConfig out;
  json::TensorMetaCache metas;
  bool have_config = false;
  LATHE_RETURN_IF_ERROR(r.for_each_member(root, p, [&](std::string_view key, json::Value& cfg, const JsonPath& cp) {
    if (key != "config") return Status::Ok();
    have_config = true;
    return decode_config_entries(r, cfg, cp, progress, metas, out);
  }));
  if (!have_config) return r.error(p, "missing field 'config'");
  return out;
}

namespace {

// What json::write_tensor_meta writes for payload_tensor_meta(t), without
// building it: every dimension concrete, the default device and layout.
void write_payload_tensor_meta(json::Writer& w, const Tensor& t) {
  static const TensorMeta kDefaults;
  auto ints = [&](const std::vector<int64_t>& dims) {
    w.begin_array();
    for (int64_t d : dims) w.begin_union("as_int").integer(d).end_object();
    w.end_array();
  };
  w.begin_object().key("dtype").integer(static_cast<int64_t>(t.dtype)).key("sizes");
  ints(t.sizes);
  w.key("requires_grad").boolean(t.requires_grad).key("device");
  json::write_device(w, kDefaults.device);
  w.key("strides");
  ints(t.strides);
  w.key("storage_offset").begin_union("as_int").integer(t.storage_offset).end_object();
  w.key("layout").integer(kDefaults.layout).end_object();
}

}  // namespace

PayloadConfigWriter::PayloadConfigWriter(const ByteSource::Sink& out) : w_(out) {
  w_.begin_object().key("config").begin_object();
}

void PayloadConfigWriter::begin_entry(std::string_view fqn, std::string_view path_name, bool is_param,
                                      bool use_pickle) {
  w_.key(fqn).begin_object().key("path_name").string(path_name);
  w_.key("is_param").boolean(is_param).key("use_pickle").boolean(use_pickle).key("tensor_meta");
}

void PayloadConfigWriter::tensor(std::string_view fqn, std::string_view path_name, bool is_param, const Tensor& t) {
  begin_entry(fqn, path_name, is_param, false);
  write_payload_tensor_meta(w_, t);
  w_.end_object();
}

void PayloadConfigWriter::entry(std::string_view fqn, const PayloadMeta& m) {
  begin_entry(fqn, m.path_name, m.is_param, m.use_pickle);
  if (m.tensor_meta) json::write_tensor_meta(w_, *m.tensor_meta);
  else w_.null();
  w_.end_object();
}

Status PayloadConfigWriter::finish() {
  w_.end_object().end_object();
  return w_.finish();
}

std::string encode_payload_config(const PayloadConfig& config) {
  std::string out;
  PayloadConfigWriter w([&](std::span<const std::byte> piece) {
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    return Status::Ok();
  });
  for (const auto& [fqn, m] : config) w.entry(fqn, m);
  static_cast<void>(w.finish());  // appending cannot fail
  return out;
}

}  // namespace lathe
