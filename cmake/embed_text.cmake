# Embeds a text file in C++ as a NUL-terminated unsigned char array (any
# bytes, no raw-string length limits):
#   cmake -DIN=page.html -DOUT=page.h -DNAME=kPage -DNAMESPACE=lathe::cli -P embed_text.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by cmake/embed_text.cmake; do not edit.\n"
  "#pragma once\n"
  "namespace ${NAMESPACE} {\n"
  "inline constexpr unsigned char ${NAME}[] = {${bytes}0x00};\n"
  "}  // namespace ${NAMESPACE}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
