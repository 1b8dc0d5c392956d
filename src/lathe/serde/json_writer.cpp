#include "lathe/serde/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

// Two things are taken from nlohmann rather than written again, so that the
// bytes stay what they were when the writer built nlohmann documents: its
// shortest round-trip float formatting (Grisu2 with its own layout: "1.0",
// "1e+20"), and its U+FFFD replacement of invalid UTF-8, which only strings
// built in memory can contain (the reader accepts valid UTF-8 only).
#include <nlohmann/json.hpp>

#include "lathe/serde/json_compact.h"

namespace lathe::json {
namespace {

// What a byte needs inside a JSON string: nothing, an escape, or (non-ASCII)
// a check that it starts a well-formed UTF-8 sequence.
enum : uint8_t { kPlain = 0, kEscape = 1, kMultibyte = 2 };

constexpr std::array<uint8_t, 256> make_byte_classes() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = kEscape;
  t['"'] = kEscape;
  t['\\'] = kEscape;
  for (int c = 0x80; c < 0x100; ++c) t[c] = kMultibyte;
  return t;
}
constexpr std::array<uint8_t, 256> kByteClass = make_byte_classes();

// Length of the well-formed UTF-8 sequence at s[i] (Unicode 15, table 3-7:
// no overlong forms, no surrogates, nothing above U+10FFFF), or 0.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<uint8_t>(s[i + k]) : 0; };
  const auto cont = [&](size_t k, uint8_t lo = 0x80, uint8_t hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
  const uint8_t c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Appends the escape for a byte of class kEscape.
void append_escape(std::string& out, uint8_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('\\');
  switch (c) {
    case '"': out.push_back('"'); return;
    case '\\': out.push_back('\\'); return;
    case '\b': out.push_back('b'); return;
    case '\t': out.push_back('t'); return;
    case '\n': out.push_back('n'); return;
    case '\f': out.push_back('f'); return;
    case '\r': out.push_back('r'); return;
    default: {
      const char u[] = {'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(u, sizeof u);
    }
  }
}

// The body of a string with escapes or multibyte characters; false if it
// holds invalid UTF-8 (nothing sensible was appended then).
bool append_escaped(std::string& out, std::string_view s) {
  size_t run = 0;  // start of the bytes not yet appended
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    switch (kByteClass[c]) {
      case kPlain: ++i; break;
      case kEscape:
        out.append(s.data() + run, i - run);
        append_escape(out, c);
        run = ++i;
        break;
      default: {
        const size_t n = utf8_sequence_length(s, i);
        if (n == 0) return false;
        i += n;
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  return true;
}

}  // namespace

// The room ahead is made 64 KiB at a time: std::string fills what it grows
// by with zeros, and a small step keeps those bytes in cache until they are
// overwritten (growing to the reserved capacity at once wrote it all twice).
constexpr size_t kRoomStep = 64 << 10;

Writer::Writer(std::string& out) : out_(&out), data_(nullptr), used_(out.size()), capacity_(out.size()) {}

Writer::Writer(ByteSource::Sink sink) : sink_(std::move(sink)), chunk_(kChunk), data_(chunk_.data()), used_(0), capacity_(kChunk) {}

Writer::~Writer() {
  if (out_ != nullptr) out_->resize(used_);
}

void Writer::grow(size_t n) {
  if (out_ != nullptr) {
    out_->resize(used_ + std::max(n, kRoomStep));  // within the reserved capacity, no copy
    data_ = out_->data();
    capacity_ = out_->size();
    return;
  }
  flush();
  if (n > chunk_.size()) {  // one token larger than a chunk (a long string)
    chunk_.resize(n);
    data_ = chunk_.data();
    capacity_ = n;
  }
}

void Writer::flush() {
  if (used_ > 0 && status_.ok()) status_ = sink_(std::as_bytes(std::span<const char>(data_, used_)));
  used_ = 0;
}

Status Writer::finish() {
  if (out_ == nullptr) flush();
  return status_;
}

void Writer::quoted(std::string_view s) {
  // Most strings (names, targets, keys) are plain ASCII: one scan, one copy.
  size_t i = 0;
  while (i < s.size() && kByteClass[static_cast<uint8_t>(s[i])] == kPlain) ++i;
  if (i == s.size()) {
    char* p = room(s.size() + 2);
    *p++ = '"';
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '"';
    used_ += s.size() + 2;
    return;
  }
  // Escapes: rare (stack traces, odd names), so built on the side.
  std::string body;
  if (append_escaped(body, s)) {
    put('"');
    append(body.data(), body.size());
    put('"');
    return;
  }
  nlohmann::ordered_json j = std::string(s);
  const std::string text = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  append(text.data(), text.size());
}

Writer& Writer::key(std::string_view k) {
  separate();
  quoted(k);
  put(':');
  first_ = true;  // the member's value takes no comma
  return *this;
}

Writer& Writer::string(std::string_view s) {
  separate();
  quoted(s);
  return *this;
}

Writer& Writer::integer(int64_t i) {
  separate();
  char* p = room(24);
  used_ += static_cast<size_t>(std::to_chars(p, p + 24, i).ptr - p);
  return *this;
}

Writer& Writer::boolean(bool b) {
  separate();
  append(b ? "true" : "false", b ? 4 : 5);
  return *this;
}

Writer& Writer::null() {
  separate();
  append("null", 4);
  return *this;
}

Writer& Writer::number(double d) {
  if (std::isnan(d)) return string("NaN");
  if (std::isinf(d)) return string(d > 0 ? "Infinity" : "-Infinity");
  separate();
  char* p = room(64);
  used_ += static_cast<size_t>(nlohmann::detail::to_chars(p, p + 64, d) - p);
  return *this;
}

Writer& Writer::raw(std::string_view json) {
  separate();
  append(json.data(), json.size());
  return *this;
}

void write_sym_expr(Writer& w, const SymExpr& e) {
  w.begin_object().key("expr_str").string(e.expr).key("hint");
  if (!e.hint) {
    w.null();
  } else if (const auto* i = std::get_if<int64_t>(&*e.hint)) {
    w.begin_union("as_int").integer(*i).end_object();
  } else if (const auto* b = std::get_if<bool>(&*e.hint)) {
    w.begin_union("as_bool").boolean(*b).end_object();
  } else {
    w.begin_union("as_float").number(std::get<double>(*e.hint)).end_object();
  }
  w.end_object();
}

void write_sym_int(Writer& w, const SymDim& d) {
  if (d.is_concrete()) {
    w.begin_union("as_int").integer(d.value()).end_object();
  } else {
    w.begin_union("as_expr");
    write_sym_expr(w, d.expr());
    w.end_object();
  }
}

void write_device(Writer& w, const Device& d) {
  w.begin_object().key("type").string(d.type).key("index");
  if (d.index) w.integer(*d.index);
  else w.null();
  w.end_object();
}

void write_tensor_meta(Writer& w, const TensorMeta& m) {
  w.begin_object().key("dtype").integer(static_cast<int64_t>(m.dtype)).key("sizes").begin_array();
  for (const SymDim& s : m.sizes) write_sym_int(w, s);
  w.end_array().key("requires_grad").boolean(m.requires_grad).key("device");
  write_device(w, m.device);
  w.key("strides").begin_array();
  for (const SymDim& s : m.strides) write_sym_int(w, s);
  w.end_array().key("storage_offset");
  write_sym_int(w, m.storage_offset);
  w.key("layout").integer(m.layout).end_object();
}

void write_string_map(Writer& w, const std::vector<std::pair<std::string, std::string>>& pairs) {
  w.begin_object();
  for_each_last_value(pairs, [&](const std::string& k, const std::string& v) { w.key(k).string(v); });
  w.end_object();
}

std::string normalized(std::string_view text, std::string_view fallback) {
  auto out = compact(text);
  return out.ok() ? std::move(out).value() : std::string(fallback);
}

}  // namespace lathe::json
