// Names and messages read from a file, made safe to show: a method or value
// name holding terminal escape sequences ("\x1b]0;pwned\x07") must not
// drive the user's terminal or forge output lines, and one holding a bidi
// override (U+202E) must not make a line read as something it is not.
//
// This is the one escaping every printer, log and error path uses: Error
// messages are escaped when made (core/result.h), log() escapes what it
// logs, the `lathe` CLI escapes everything it writes to stdout and stderr
// (cli/printable_streams.h), the graph printer its text, and `lathe view`
// every string it puts in its page.
//
// What is escaped, and how:
//   C0 controls and DEL            \x1b, \x7f
//   C1 controls (U+0080-U+009F)    \u009b
//   bidi controls                  \u202e (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069)
//   bytes that are not UTF-8       \xff (overlong forms and surrogates included)
// Everything else (other UTF-8 text included) is kept. Escaping is
// idempotent, and a JSON document (which holds no raw control characters
// but \n) keeps its meaning: \u202e and \u009b are JSON escapes of the same
// characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lathe {

// One name: every control character escaped, \n and \t too.
std::string printable_name(std::string_view name);

// Names as a list in a message: "model, forward" (each printable_name).
std::string join_names(const std::vector<std::string>& names);

// A message or output that may span lines: as printable_name, but \n and \t
// are kept.
std::string printable_text(std::string_view text);

// Whether printable_text(text) == text (a fast scan, for callers that keep
// the text when it is).
bool is_printable_text(std::string_view text);

// How many bytes at the end of `text` begin a UTF-8 sequence that the next
// bytes may still complete (0 to 3): a stream escaping what it is given in
// pieces holds them back until it sees the rest.
size_t incomplete_utf8_tail(std::string_view text);

}  // namespace lathe
