#include "lathe/serde/json_writer.h"

#include <cmath>

namespace lathe::json {

Json float_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

Json union_json(const char* key, Json value) {
  Json j = Json::object();
  j[key] = std::move(value);
  return j;
}

Json sym_expr_json(const SymExpr& e) {
  Json j = Json::object();
  j["expr_str"] = e.expr;
  if (e.hint) {
    j["hint"] = std::visit(
        [](const auto& h) -> Json {
          using T = std::decay_t<decltype(h)>;
          if constexpr (std::is_same_v<T, int64_t>) return union_json("as_int", h);
          else if constexpr (std::is_same_v<T, bool>) return union_json("as_bool", h);
          else return union_json("as_float", float_json(h));
        },
        *e.hint);
  } else {
    j["hint"] = nullptr;
  }
  return j;
}

Json sym_int_json(const SymDim& d) {
  if (d.is_concrete()) return union_json("as_int", d.value());
  return union_json("as_expr", sym_expr_json(d.expr()));
}

Json device_json(const Device& d) {
  Json j = Json::object();
  j["type"] = d.type;
  j["index"] = d.index ? Json(*d.index) : Json(nullptr);
  return j;
}

Json tensor_meta_json(const TensorMeta& m) {
  Json j = Json::object();
  j["dtype"] = static_cast<int64_t>(m.dtype);
  Json sizes = Json::array();
  for (const auto& s : m.sizes) sizes.push_back(sym_int_json(s));
  j["sizes"] = std::move(sizes);
  j["requires_grad"] = m.requires_grad;
  j["device"] = device_json(m.device);
  Json strides = Json::array();
  for (const auto& s : m.strides) strides.push_back(sym_int_json(s));
  j["strides"] = std::move(strides);
  j["storage_offset"] = sym_int_json(m.storage_offset);
  j["layout"] = m.layout;
  return j;
}

void append_member(Json& object, const std::string& key, Json value) {
  auto& members = object.get_ref<Json::object_t&>();
  using Base = std::vector<std::pair<const std::string, Json>>;
  static_cast<Base&>(members).emplace_back(key, std::move(value));
}

std::string dump(const Json& j) {
  // Compact form: the records are machine-read, and compact output keeps
  // graph JSON for large programs small. ensure_ascii off: UTF-8 as is.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace lathe::json
