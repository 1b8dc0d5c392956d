#include "lathe/cli/printable_streams.h"

#include <iostream>

#include "lathe/tools.h"

namespace lathe::cli {

namespace {
// Passed on once this much is pending, so a large output is not held whole.
constexpr size_t kChunk = 64 << 10;
}  // namespace

PrintableStreambuf::~PrintableStreambuf() {
  std::lock_guard<std::mutex> lock(mu_);
  pass_on(false);
  target_->pubsync();
}

PrintableStreambuf::int_type PrintableStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

std::streamsize PrintableStreambuf::xsputn(const char* s, std::streamsize n) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.append(s, static_cast<size_t>(n));
  if (pending_.size() >= kChunk) pass_on(true);
  return n;
}

int PrintableStreambuf::sync() {
  std::lock_guard<std::mutex> lock(mu_);
  pass_on(true);
  return target_->pubsync();
}

void PrintableStreambuf::pass_on(bool hold_incomplete) {
  const size_t held = hold_incomplete ? incomplete_utf8_tail(pending_) : 0;
  const std::string text = printable_text(std::string_view(pending_).substr(0, pending_.size() - held));
  target_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
  pending_.erase(0, pending_.size() - held);
}

void escape_standard_streams() {
  // Never destroyed: static destructors and the streams' own flush at exit
  // may still write through them.
  for (std::ostream* s : {&std::cout, &std::cerr, &std::clog}) s->rdbuf(new PrintableStreambuf(s->rdbuf()));
}

}  // namespace lathe::cli
