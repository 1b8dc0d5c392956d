#include "lathe/core/printable.h"

namespace lathe {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// A well-formed UTF-8 sequence (Unicode table 3-7: no overlong forms, no
// surrogates, nothing past U+10FFFF) at the start of `s`.
struct CodePoint {
  char32_t value = 0;
  size_t length = 0;  // 0: the first byte does not start one
};

// The range a sequence's second byte must fall in, given its first byte.
bool second_byte_fits(unsigned char first, unsigned char second) {
  switch (first) {
    case 0xe0: return second >= 0xa0 && second <= 0xbf;
    case 0xed: return second >= 0x80 && second <= 0x9f;
    case 0xf0: return second >= 0x90 && second <= 0xbf;
    case 0xf4: return second >= 0x80 && second <= 0x8f;
    default: return second >= 0x80 && second <= 0xbf;
  }
}

size_t sequence_length(unsigned char first) {
  if (first < 0x80) return 1;
  if (first >= 0xc2 && first <= 0xdf) return 2;
  if (first >= 0xe0 && first <= 0xef) return 3;
  if (first >= 0xf0 && first <= 0xf4) return 4;
  return 0;
}

CodePoint decode(std::string_view s) {
  const auto first = static_cast<unsigned char>(s[0]);
  const size_t length = sequence_length(first);
  if (length == 1) return {first, 1};
  if (length == 0 || s.size() < length) return {};
  if (!second_byte_fits(first, static_cast<unsigned char>(s[1]))) return {};
  char32_t value = first & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xc0) != 0x80) return {};
    value = (value << 6) | (c & 0x3f);
  }
  return {value, length};
}

bool is_bidi_control(char32_t c) {
  return c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

bool must_escape(char32_t c, bool keep_line_breaks) {
  if (c == '\n' || c == '\t') return !keep_line_breaks;
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || is_bidi_control(c);
}

void append_hex(std::string& out, const char* prefix, char32_t value, int digits) {
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 15];
}

// Appends the code point (or the byte that starts no sequence) at the start
// of `s`, escaped if it has to be; returns how many bytes it took.
size_t append_escaped(std::string& out, std::string_view s, bool keep_line_breaks) {
  const CodePoint cp = decode(s);
  if (cp.length == 0) {
    append_hex(out, "\\x", static_cast<unsigned char>(s[0]), 2);
    return 1;
  }
  const char32_t c = cp.value;
  if (!must_escape(c, keep_line_breaks))
    out.append(s.substr(0, cp.length));
  else if (c < 0x80)
    append_hex(out, "\\x", c, 2);
  else
    append_hex(out, "\\u", c, 4);
  return cp.length;
}

std::string escape(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) i += append_escaped(out, text.substr(i), keep_line_breaks);
  return out;
}

}  // namespace

std::string printable_name(std::string_view name) { return escape(name, false); }

std::string printable_text(std::string_view text) {
  if (is_printable_text(text)) return std::string(text);
  return escape(text, true);
}

bool is_printable_text(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {  // the common case, decoded by hand
      ++i;
      continue;
    }
    const CodePoint cp = decode(text.substr(i));
    if (cp.length == 0 || must_escape(cp.value, true)) return false;
    i += cp.length;
  }
  return true;
}

size_t incomplete_utf8_tail(std::string_view text) {
  // A sequence is at most 4 bytes: look at the last 3 for its start.
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte: its start is further back
    const size_t length = sequence_length(c);
    if (length <= back) return 0;  // complete (or not UTF-8 at all: escaped as bytes)
    // The bytes present must fit so far, or nothing will complete them.
    if (back >= 2 && !second_byte_fits(c, static_cast<unsigned char>(text[text.size() - back + 1]))) return 0;
    return back;
  }
  return 0;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + printable_name(n);  // names from a file
  return s;
}

}  // namespace lathe
