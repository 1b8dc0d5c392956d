// Building the export schema's JSON with nlohmann::ordered_json, which keeps
// members in insertion order: every struct is written in the schema's
// declaration order, so output is deterministic and diff-friendly.
#pragma once

#include <nlohmann/json.hpp>

#include "lathe/ir/symbolic.h"
#include "lathe/ir/value.h"

namespace lathe::json {

using Json = nlohmann::ordered_json;

// Floats as Python's json writes them: finite numbers as numbers, the others
// as "Infinity", "-Infinity", "NaN" (nlohmann would write null).
Json float_json(double d);
Json sym_expr_json(const SymExpr& e);
Json sym_int_json(const SymDim& d);
Json device_json(const Device& d);
Json tensor_meta_json(const TensorMeta& m);
Json union_json(const char* key, Json value);
// Appends a member without looking the key up. nlohmann's ordered_map finds
// keys by linear search, so `obj[key] = v` is quadratic on large tables
// (tensor_values of a 100k-node graph); callers guarantee unique keys.
void append_member(Json& object, const std::string& key, Json value);
// Text with the same separators as Python's json.dumps defaults.
std::string dump(const Json& j);

}  // namespace lathe::json
