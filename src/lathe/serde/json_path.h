// A JSON path ("$.graph_module.graph.nodes[3].inputs[1]") kept as a chain of
// stack frames and formatted only when an error is reported, so decoding a
// large graph pays nothing for the precise error messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lathe {

struct JsonPath {
  const JsonPath* parent = nullptr;
  std::string_view key;  // object member, or empty for an array element
  int64_t index = -1;    // array index when key is empty

  JsonPath field(std::string_view k) const { return JsonPath{this, k, -1}; }
  JsonPath at(int64_t i) const { return JsonPath{this, {}, i}; }
  std::string str() const {
    std::string prefix = parent ? parent->str() : "$";
    if (!parent && key.empty() && index < 0) return prefix;
    if (!key.empty()) return prefix + "." + std::string(key);
    return prefix + "[" + std::to_string(index) + "]";
  }
};

}  // namespace lathe
