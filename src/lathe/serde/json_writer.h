// Writing the export schema's JSON as a stream of tokens appended to one
// string: no document tree, no heap object per value. Callers emit members
// in the schema's declaration order, so output is deterministic and
// diff-friendly.
//
// The bytes are exactly what nlohmann::ordered_json::dump() gives for the
// same document (compact separators, UTF-8 kept as is, invalid UTF-8
// replaced by U+FFFD, floats in nlohmann's shortest round-trip form): files
// Lathe wrote before the writer streamed are reproduced byte for byte, and
// write -> read -> write stays byte-identical.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/ir/symbolic.h"
#include "lathe/ir/value.h"

namespace lathe::json {

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  Writer& begin_object() { return open('{'); }
  Writer& end_object() { return close('}'); }
  Writer& begin_array() { return open('['); }
  Writer& end_array() { return close(']'); }
  // A member name; its value follows.
  Writer& key(std::string_view k);

  Writer& string(std::string_view s);
  Writer& integer(int64_t i);
  Writer& boolean(bool b);
  Writer& null();
  // Finite numbers as numbers; the others as Python's json spells them, as
  // strings: "Infinity", "-Infinity", "NaN".
  Writer& number(double d);
  // A value that is already JSON text.
  Writer& raw(std::string_view json);

  // {"<k>": <value written by the caller>}: opens the object and names the
  // member; close it with end_object().
  Writer& begin_union(std::string_view k) { return begin_object().key(k); }

 private:
  Writer& open(char c) {
    separate();
    out_.push_back(c);
    first_ = true;
    return *this;
  }
  Writer& close(char c) {
    out_.push_back(c);
    first_ = false;
    return *this;
  }
  // A comma before every value but the first of its object or array.
  void separate() {
    if (!first_) out_.push_back(',');
    first_ = false;
  }
  void quoted(std::string_view s);

  std::string& out_;
  bool first_ = true;  // nothing written yet at this level (or after a key)
};

void write_sym_expr(Writer& w, const SymExpr& e);
void write_sym_int(Writer& w, const SymDim& d);
void write_device(Writer& w, const Device& d);
void write_tensor_meta(Writer& w, const TensorMeta& m);
// Calls fn(key, value) once per distinct key of `pairs`, in order of first
// appearance, with the last value given for it: what assigning the pairs to
// a JSON object one by one leaves (the IR's tables are vectors of pairs and
// may repeat a key). Tables are small (a node's metadata), so repeats are
// looked for by comparison, not with an index.
template <typename V, typename Fn>
void for_each_last_value(const std::vector<std::pair<std::string, V>>& pairs, Fn&& fn) {
  bool repeats = false;
  for (size_t i = 1; i < pairs.size() && !repeats; ++i) {
    for (size_t j = 0; j < i && !repeats; ++j) repeats = pairs[i].first == pairs[j].first;
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const V* value = &pairs[i].second;
    if (repeats) {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = pairs[j].first == pairs[i].first;
      if (seen) continue;
      for (size_t j = i + 1; j < pairs.size(); ++j) {
        if (pairs[j].first == pairs[i].first) value = &pairs[j].second;
      }
    }
    fn(pairs[i].first, *value);
  }
}

// A string-to-string table as an object (see for_each_last_value).
void write_string_map(Writer& w, const std::vector<std::pair<std::string, std::string>>& pairs);

// JSON text carried from a file (module_call_graph, ...) in the writer's
// compact form, or `fallback` if it is not JSON.
std::string normalized(std::string_view text, std::string_view fallback);

}  // namespace lathe::json
