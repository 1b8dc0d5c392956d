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

// A bidi override made a name read backwards ("exe.txt" shown for
// "\u202etxt.exe"); it and the other bidi controls were printed raw.
TEST(PrintableName, EscapesBidiControls) {
  EXPECT_EQ(printable_name("a\xe2\x80\xaetxt.exe"), "a\\u202etxt.exe");  // U+202E RLO
  EXPECT_EQ(printable_name("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");  // U+2066 LRI, U+2069 PDI
  EXPECT_EQ(printable_name("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");  // LRM, RLM, ALM
  EXPECT_EQ(printable_name("\xe2\x80\xaa\xe2\x80\xac"), "\\u202a\\u202c");  // LRE, PDF
  EXPECT_EQ(printable_name("\xe2\x80\x8d\xe2\x80\xaf"), "\xe2\x80\x8d\xe2\x80\xaf");  // ZWJ, NNBSP: not bidi
}

// Bytes that are not UTF-8 reached the terminal as they were (a lone 0x9b
// is CSI on terminals that read 8-bit controls).
TEST(PrintableName, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(printable_name("a\x9b" "31m"), "a\\x9b31m");                // a lone continuation byte
  EXPECT_EQ(printable_name("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable_name("\xc0\xaf"), "\\xc0\\xaf");                // overlong '/'
  EXPECT_EQ(printable_name("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");      // overlong, 3 bytes
  EXPECT_EQ(printable_name("\xed\xa0\x80"), "\\xed\\xa0\\x80");      // a surrogate
  EXPECT_EQ(printable_name("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable_name("caf\xc3"), "caf\\xc3");                    // cut short
  EXPECT_EQ(printable_name("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");      // U+1F600 stays
}

TEST(PrintableText, KeepsLineBreaksAndIsIdempotent) {
  EXPECT_EQ(printable_text("a\nb\tc\r\x1b[2J"), "a\nb\tc\\x0d\\x1b[2J");
  const std::string hostile = "x\x1b]0;t\x07\xe2\x80\xae\xc2\x9b\xff\n";
  EXPECT_EQ(printable_text(printable_text(hostile)), printable_text(hostile));
  EXPECT_FALSE(is_printable_text(hostile));
  EXPECT_TRUE(is_printable_text(printable_text(hostile)));
  EXPECT_TRUE(is_printable_text("caf\xc3\xa9 line\n"));
}

TEST(PrintableText, IncompleteUtf8Tail) {
  EXPECT_EQ(incomplete_utf8_tail("ab"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe2"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe2\x80"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe2\x80\xae"), 0u);  // complete
  EXPECT_EQ(incomplete_utf8_tail("a\xf0\x9f\x98"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe0\x80"), 0u);     // overlong: nothing completes it
  EXPECT_EQ(incomplete_utf8_tail("a\x80"), 0u);          // a stray continuation byte
}

}  // namespace
}  // namespace lathe
