#include "lathe/core/printable.h"

namespace lathe {

std::string printable_name(std::string_view name) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else if (c == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) <= 0x9f &&
               static_cast<unsigned char>(name[i + 1]) >= 0x80) {
      const auto c1 = static_cast<unsigned char>(name[++i]);
      out += "\\u00";
      out += hex[c1 >> 4];
      out += hex[c1 & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace lathe
