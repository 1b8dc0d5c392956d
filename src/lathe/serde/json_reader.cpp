#include "lathe/serde/json_reader.h"

#include <cmath>
#include <limits>

namespace lathe::json {

namespace dom = simdjson::dom;

Result<Element> parse(dom::parser& parser, std::string_view text, const std::string& origin) {
  // simdjson reads up to SIMDJSON_PADDING bytes past the end; the record may
  // sit at the end of a mapping, so parse a padded copy.
  simdjson::padded_string padded(text);
  dom::element doc;
  auto err = parser.parse(padded).get(doc);
  if (err) return make_error(origin + ": invalid JSON: " + simdjson::error_message(err));
  return doc;
}

Result<dom::object> Reader::object(Element e, const JsonPath& p) const {
  dom::object o;
  if (e.get_object().get(o)) return error(p, "expected an object");
  return o;
}

Result<dom::array> Reader::array(Element e, const JsonPath& p) const {
  dom::array a;
  if (e.get_array().get(a)) return error(p, "expected an array");
  return a;
}

Result<Element> Reader::field(Element obj, std::string_view key, const JsonPath& p) const {
  dom::object o;
  if (obj.get_object().get(o)) return error(p, "expected an object");
  Element v;
  if (o.at_key(key).get(v)) return error(p, "missing field '" + std::string(key) + "'");
  return v;
}

std::optional<Element> Reader::optional_field(Element obj, std::string_view key) const {
  Element v;
  if (obj.at_key(key).get(v) || v.is_null()) return std::nullopt;
  return v;
}

Result<int64_t> Reader::int64(Element e, const JsonPath& p) const {
  int64_t v;
  if (!e.get_int64().get(v)) return v;
  // Python writes integral floats only by mistake; accept exact ones.
  double d;
  if (!e.get_double().get(d) && std::floor(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  return error(p, "expected an integer");
}

Result<double> Reader::float64(Element e, const JsonPath& p) const {
  double d;
  if (!e.get_double().get(d)) return d;
  std::string_view s;
  if (!e.get_string().get(s)) {
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return error(p, "expected a number");
}

Result<bool> Reader::boolean(Element e, const JsonPath& p) const {
  bool b;
  if (!e.get_bool().get(b)) return b;
  return error(p, "expected a boolean");
}

Result<std::string_view> Reader::string(Element e, const JsonPath& p) const {
  std::string_view s;
  if (!e.get_string().get(s)) return s;
  return error(p, "expected a string");
}

Result<std::pair<std::string_view, Element>> Reader::union_member(Element e, const JsonPath& p) const {
  dom::object o;
  if (e.get_object().get(o)) return error(p, "expected a union (an object with one member)");
  if (o.size() == 1) {
    auto kv = *o.begin();
    return std::make_pair(kv.key, kv.value);
  }
  std::optional<std::pair<std::string_view, Element>> active;
  for (auto kv : o) {
    if (kv.value.is_null()) continue;
    if (active) {
      return error(p, "union has several members set ('" + std::string(active->first) + "' and '" +
                          std::string(kv.key) + "')");
    }
    active = std::make_pair(kv.key, kv.value);
  }
  if (!active) return error(p, "union has no member set");
  return *active;
}

Result<SymExpr> Reader::sym_expr(Element e, const JsonPath& p) const {
  SymExpr out;
  LATHE_ASSIGN_OR_RETURN(Element es, field(e, "expr_str", p));
  LATHE_ASSIGN_OR_RETURN(std::string_view s, string(es, p.field("expr_str")));
  out.expr = std::string(s);
  if (auto hint = optional_field(e, "hint")) {
    JsonPath hp = p.field("hint");
    int64_t i;
    if (!hint->get_int64().get(i)) {  // older files: a bare integer hint
      out.hint = i;
    } else {
      LATHE_ASSIGN_OR_RETURN(auto m, union_member(*hint, hp));
      if (m.first == "as_int") {
        LATHE_ASSIGN_OR_RETURN(int64_t v, int64(m.second, hp.field(m.first)));
        out.hint = v;
      } else if (m.first == "as_bool") {
        LATHE_ASSIGN_OR_RETURN(bool v, boolean(m.second, hp.field(m.first)));
        out.hint = v;
      } else if (m.first == "as_float") {
        LATHE_ASSIGN_OR_RETURN(double v, float64(m.second, hp.field(m.first)));
        out.hint = v;
      } else {
        return error(hp, "unknown SymExprHint member '" + std::string(m.first) + "'");
      }
    }
  }
  return out;
}

Result<SymDim> Reader::sym_int(Element e, const JsonPath& p) const {
  LATHE_ASSIGN_OR_RETURN(auto m, union_member(e, p));
  JsonPath mp = p.field(m.first);
  if (m.first == "as_int") {
    LATHE_ASSIGN_OR_RETURN(int64_t v, int64(m.second, mp));
    return SymDim(v);
  }
  if (m.first == "as_expr") {
    LATHE_ASSIGN_OR_RETURN(SymExpr x, sym_expr(m.second, mp));
    return SymDim(std::move(x));
  }
  return error(p, "unknown SymInt member '" + std::string(m.first) + "'");
}

Result<Device> Reader::device(Element e, const JsonPath& p) const {
  Device d;
  LATHE_ASSIGN_OR_RETURN(Element t, field(e, "type", p));
  LATHE_ASSIGN_OR_RETURN(std::string_view ts, string(t, p.field("type")));
  d.type = std::string(ts);
  if (auto idx = optional_field(e, "index")) {
    LATHE_ASSIGN_OR_RETURN(int64_t i, int64(*idx, p.field("index")));
    d.index = i;
  }
  return d;
}

Result<TensorMeta> Reader::tensor_meta(Element e, const JsonPath& p) const {
  TensorMeta m;
  LATHE_ASSIGN_OR_RETURN(Element dt, field(e, "dtype", p));
  LATHE_ASSIGN_OR_RETURN(int64_t code, int64(dt, p.field("dtype")));
  auto dtype = dtype_from_schema(code);
  if (!dtype) return error(p.field("dtype"), "unknown scalar type " + std::to_string(code));
  m.dtype = *dtype;
  auto dims = [&](std::string_view key, std::vector<SymDim>& out) -> Status {
    JsonPath fp = p.field(key);
    LATHE_ASSIGN_OR_RETURN(Element arr, field(e, key, p));
    LATHE_ASSIGN_OR_RETURN(auto a, array(arr, fp));
    int64_t i = 0;
    for (Element d : a) {
      LATHE_ASSIGN_OR_RETURN(SymDim s, sym_int(d, fp.at(i++)));
      out.push_back(std::move(s));
    }
    return Status::Ok();
  };
  LATHE_RETURN_IF_ERROR(dims("sizes", m.sizes));
  LATHE_RETURN_IF_ERROR(dims("strides", m.strides));
  if (m.sizes.size() != m.strides.size()) {
    return error(p, "sizes has " + std::to_string(m.sizes.size()) + " dims but strides has " +
                        std::to_string(m.strides.size()));
  }
  if (auto rg = optional_field(e, "requires_grad")) {
    LATHE_ASSIGN_OR_RETURN(m.requires_grad, boolean(*rg, p.field("requires_grad")));
  }
  if (auto dev = optional_field(e, "device")) {
    LATHE_ASSIGN_OR_RETURN(m.device, device(*dev, p.field("device")));
  }
  if (auto so = optional_field(e, "storage_offset")) {
    LATHE_ASSIGN_OR_RETURN(m.storage_offset, sym_int(*so, p.field("storage_offset")));
  }
  if (auto lay = optional_field(e, "layout")) {
    LATHE_ASSIGN_OR_RETURN(m.layout, int64(*lay, p.field("layout")));
  }
  return m;
}

}  // namespace lathe::json
