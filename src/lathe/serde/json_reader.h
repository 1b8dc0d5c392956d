// Typed access to a simdjson DOM with errors that name the origin (file and
// record) and the JSON path. Shared by the program and weights-config codecs.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "lathe/core/result.h"
#include "lathe/ir/symbolic.h"
#include "lathe/ir/value.h"
#include "lathe/serde/json_path.h"

namespace lathe::json {

using Element = simdjson::dom::element;

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}
  const std::string& origin() const { return origin_; }

  Error error(const JsonPath& path, const std::string& message) const {
    return Error(origin_ + ": " + path.str() + ": " + message);
  }

  Result<simdjson::dom::object> object(Element e, const JsonPath& p) const;
  Result<simdjson::dom::array> array(Element e, const JsonPath& p) const;
  // A required member of an object.
  Result<Element> field(Element obj, std::string_view key, const JsonPath& p) const;
  // A member that may be absent or null.
  std::optional<Element> optional_field(Element obj, std::string_view key) const;

  Result<int64_t> int64(Element e, const JsonPath& p) const;
  // Accepts numbers and the strings "Infinity", "-Infinity", "NaN".
  Result<double> float64(Element e, const JsonPath& p) const;
  Result<bool> boolean(Element e, const JsonPath& p) const;
  Result<std::string_view> string(Element e, const JsonPath& p) const;

  // A schema union: {"as_x": value}. Older files write every member with all
  // but one null; the active member is then the single non-null one.
  Result<std::pair<std::string_view, Element>> union_member(Element e, const JsonPath& p) const;

  Result<SymDim> sym_int(Element e, const JsonPath& p) const;  // SymInt union
  Result<SymExpr> sym_expr(Element e, const JsonPath& p) const;
  Result<TensorMeta> tensor_meta(Element e, const JsonPath& p) const;
  Result<Device> device(Element e, const JsonPath& p) const;

 private:
  std::string origin_;
};

// Parses `text` into `parser`'s document; errors name the origin.
Result<Element> parse(simdjson::dom::parser& parser, std::string_view text, const std::string& origin);

}  // namespace lathe::json
