#include "lathe/core/printable.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

// A method name from a file once reached the terminal raw, escape
// sequences and all.
TEST(PrintableName, EscapesControlCharactersOnly) {
  EXPECT_EQ(printable_name("model"), "model");
  EXPECT_EQ(printable_name("m\x1b]0;pwned\x07"), "m\\x1b]0;pwned\\x07");
  EXPECT_EQ(printable_name("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(printable_name("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI, UTF-8 encoded
  EXPECT_EQ(printable_name("caf\xc3\xa9"), "caf\xc3\xa9");    // other UTF-8 stays
}

}  // namespace
}  // namespace lathe
