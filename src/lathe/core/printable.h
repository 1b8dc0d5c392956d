// Names read from a file, made safe to print: a method or value name holding
// terminal escape sequences ("\x1b]0;pwned\x07") must not drive the user's
// terminal or forge output lines.
#pragma once

#include <string>
#include <string_view>

namespace lathe {

// C0 controls, DEL and the C1 controls (U+0080-U+009F, encoded in UTF-8) as
// \xNN / \u00NN; everything else (other UTF-8 text included) unchanged.
std::string printable_name(std::string_view name);

}  // namespace lathe
