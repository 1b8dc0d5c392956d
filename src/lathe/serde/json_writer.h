// Writing the export schema's JSON as a stream of tokens, appended to one
// string or handed on in chunks as they fill (straight into an archive
// entry: memory bounded by the chunk, not the document): no document tree,
// no heap object per value. Callers emit members in the schema's
// declaration order, so output is deterministic and diff-friendly.
//
// The bytes are exactly what nlohmann::ordered_json::dump() gives for the
// same document (compact separators, UTF-8 kept as is, invalid UTF-8
// replaced by U+FFFD, floats in nlohmann's shortest round-trip form): files
// Lathe wrote before the writer streamed are reproduced byte for byte, and
// write -> read -> write stays byte-identical.
#pragma once

#include <cstdint>
#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lathe/core/byte_source.h"
#include "lathe/core/result.h"
#include "lathe/ir/symbolic.h"
#include "lathe/ir/value.h"

namespace lathe::json {

class Writer {
 public:
  // Appends to `out` (whose contents stay in front).
  explicit Writer(std::string& out);
  // Hands the text to `sink` in consecutive pieces of about kChunk bytes
  // (a single token longer than that, a long string, in one piece); the
  // last piece goes at finish(). After the sink fails the rest is dropped.
  explicit Writer(ByteSource::Sink sink);
  static constexpr size_t kChunk = 64 << 10;
  // Gives `out` its final length (the writer keeps spare room while it runs).
  ~Writer();
  // Streaming: hands on what is left; the sink's first error, if any.
  Status finish();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  Writer& begin_object() { return open('{'); }
  Writer& end_object() { return close('}'); }
  Writer& begin_array() { return open('['); }
  Writer& end_array() { return close(']'); }
  // A member name; its value follows. Names that are string literals (the
  // schema's own) are known to need no escaping and are copied as they are.
  template <size_t N>
  Writer& key(const char (&k)[N]) {
    separate();
    char* p = room(N + 2);
    *p++ = '"';
    std::memcpy(p, k, N - 1);
    p += N - 1;
    *p++ = '"';
    *p++ = ':';
    used_ = static_cast<size_t>(p - data_);
    first_ = true;  // the member's value takes no comma
    return *this;
  }
  Writer& key(std::string_view k);

  Writer& string(std::string_view s);
  Writer& integer(int64_t i);
  Writer& boolean(bool b);
  Writer& null();
  // Finite numbers as numbers; the others as Python's json spells them, as
  // strings: "Infinity", "-Infinity", "NaN".
  Writer& number(double d);
  // A value that is already JSON text.
  Writer& raw(std::string_view json);

  // {"<k>": <value written by the caller>}: opens the object and names the
  // member; close it with end_object().
  template <typename K>
  Writer& begin_union(const K& k) {
    return begin_object().key(k);
  }

 private:
  Writer& open(char c) {
    separate();
    put(c);
    first_ = true;
    return *this;
  }
  Writer& close(char c) {
    put(c);
    first_ = false;
    return *this;
  }
  // A comma before every value but the first of its object or array.
  void separate() {
    if (!first_) put(',');
    first_ = false;
  }
  void put(char c) { *room(1) = c, ++used_; }
  void append(const char* p, size_t n) {
    std::memcpy(room(n), p, n);
    used_ += n;
  }
  // At least n writable bytes at data_ + used_.
  char* room(size_t n) {
    if (capacity_ - used_ < n) grow(n);
    return data_ + used_;
  }
  void grow(size_t n);
  // Streaming: hands the chunk to the sink and starts it again.
  void flush();
  void quoted(std::string_view s);

  // Appending: out_ is kept larger than what is written (spare room instead
  // of a capacity check per character); used_ is the written length.
  std::string* out_ = nullptr;
  // Streaming: the chunk being filled, and the first error of the sink.
  ByteSource::Sink sink_;
  std::vector<char> chunk_;
  Status status_;
  char* data_;
  size_t used_, capacity_;
  bool first_ = true;  // nothing written yet at this level (or after a key)
};

void write_sym_expr(Writer& w, const SymExpr& e);
void write_sym_int(Writer& w, const SymDim& d);
void write_device(Writer& w, const Device& d);
void write_tensor_meta(Writer& w, const TensorMeta& m);
// Calls fn(key, value) once per distinct key of `pairs`, in order of first
// appearance, with the last value given for it: what assigning the pairs to
// a JSON object one by one leaves (the IR's tables are vectors of pairs and
// may repeat a key). Most tables are small (a node's metadata): repeats are
// looked for by comparison there, and with an index in a larger one, which
// comparison would make quadratic.
template <typename V, typename Fn>
void for_each_last_value(const std::vector<std::pair<std::string, V>>& pairs, Fn&& fn) {
  constexpr size_t kCompareUpTo = 32;
  if (pairs.size() > kCompareUpTo) {
    constexpr size_t kDone = SIZE_MAX;
    std::unordered_map<std::string_view, size_t> last;
    last.reserve(pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) last[pairs[i].first] = i;
    for (const auto& pair : pairs) {
      size_t& at = last.find(pair.first)->second;
      if (at == kDone) continue;
      fn(pair.first, pairs[at].second);
      at = kDone;
    }
    return;
  }
  bool repeats = false;
  for (size_t i = 1; i < pairs.size() && !repeats; ++i) {
    for (size_t j = 0; j < i && !repeats; ++j) repeats = pairs[i].first == pairs[j].first;
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const V* value = &pairs[i].second;
    if (repeats) {
      bool seen = false;
      for (size_t j = 0; j < i && !seen; ++j) seen = pairs[j].first == pairs[i].first;
      if (seen) continue;
      for (size_t j = i + 1; j < pairs.size(); ++j) {
        if (pairs[j].first == pairs[i].first) value = &pairs[j].second;
      }
    }
    fn(pairs[i].first, *value);
  }
}

// A string-to-string table as an object (see for_each_last_value).
void write_string_map(Writer& w, const std::vector<std::pair<std::string, std::string>>& pairs);

// JSON text carried from a file (module_call_graph, ...) in the writer's
// compact form, or `fallback` if it is not JSON.
std::string normalized(std::string_view text, std::string_view fallback);

}  // namespace lathe::json
