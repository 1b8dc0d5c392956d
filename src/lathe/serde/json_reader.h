// Streaming access to JSON records with simdjson's On-Demand API, with errors
// that name the origin (file and record) and the JSON path.
//
// Why On-Demand rather than a DOM: a DOM costs about ten bytes of memory per
// byte of JSON, and the graph record of a 100k-node program is ~80 MB. On
// this kind of machine the page faults alone for that memory cost more than
// parsing; On-Demand walks the text once with an index of ~1 byte per byte.
//
// The price is discipline: a Value is a position in the document, read once
// and in document order. Every function below consumes the value it is
// given. Object members may be looked up out of order (find()), each once.
#pragma once

#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "lathe/core/result.h"
#include "lathe/ir/flat_map.h"
#include "lathe/ir/symbolic.h"
#include "lathe/ir/value.h"
#include "lathe/serde/json_path.h"

namespace lathe::json {

namespace od = simdjson::ondemand;
using Value = od::value;
using Object = od::object;

// Every document is refused when brackets nest deeper than this, wherever
// they are (see Document::parse).
inline constexpr size_t kMaxDocumentNesting = 1024;
// The byte offset where `text` first nests deeper than max_depth brackets
// (strings skipped), or nullopt.
std::optional<size_t> nesting_beyond(std::string_view text, size_t max_depth);

// A parsed document: owns the padded copy of the text and the parser state
// every Value points into. Strings read from it stay valid while it lives.
class Document {
 public:
  // `readable_after`: bytes after `text` that may be read (not used as
  // JSON). With enough of them the text is parsed in place; otherwise it is
  // copied into a padded buffer.
  static Result<std::unique_ptr<Document>> parse(std::string_view text, const std::string& origin,
                                                 size_t readable_after = 0);
  Result<Value> root();
  // Back to the start, for a second look (Values from before are invalid).
  // Iterates the text afresh: after an error simdjson abandons a document,
  // and rewinding that one would read through a null parser.
  Result<Value> rewind();
  // Whether the text is parsed where it stands (not copied).
  bool in_place() const { return copy_.size() == 0; }

 private:
  Document() = default;
  Status iterate();
  // Allocates the parser for view_ and returns its token index, before
  // simdjson's first pass writes it (nullptr if it cannot tell).
  const uint32_t* allocate_token_index();
  simdjson::padded_string copy_;  // empty when parsing in place
  simdjson::padded_string_view view_;
  od::parser parser_;
  od::document doc_;
  std::string origin_;
};

// The string whose text starts at `p` (just after its opening quote), as a
// view of the text itself, if it holds no escape; nullopt if it does (it
// must then be unescaped). Stage 1 has already checked the string closes,
// and every document is followed by SIMDJSON_PADDING readable bytes, so a
// 16-byte load that starts inside the string stays inside the buffer.
inline std::optional<std::string_view> plain_string_at(const char* p) {
  const char* end = p;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (;; end += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(end));
    const int stops = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)));
    if (stops != 0) {
      end += std::countr_zero(static_cast<unsigned>(stops));
      break;
    }
  }
#else
  while (*end != '"' && *end != '\\') ++end;
#endif
  if (*end != '"') return std::nullopt;
  return std::string_view(p, static_cast<size_t>(end - p));
}

// Drops from memory the part of the document's token index that lies
// before `v` (less a margin). simdjson indexes every token of a document
// before the first value is read, four bytes per token: for a large graph
// that index is as big as its text, and most of it has been passed long
// before the end. The entries come back as zeros, so call this only where
// nothing before `v` is read again: no find() on an object that encloses it,
// no rewind() without a fresh iteration (Document::rewind iterates afresh).
void release_index_before(const Value& v);

// A decoder's way through a text it reads front to back: what lies just
// ahead is asked for, what it no longer needs leaves memory
// (JsonDecodeOptions::read_past says what the caller does with the
// reports). indexed(): simdjson's first pass has read all of the text, so
// all of it may be dropped. reached(v): the text and index ahead of `v` are
// asked for (ahead()) and, about every MiB, the token index behind `v` is
// dropped and the caller told how far the decoder has got; call it only
// where release_index_before may be. A document parsed from a copy reports
// nothing (its positions are not in `text`).
class ReadProgress {
 public:
  ReadProgress(std::string_view text, const std::function<void(size_t)>& read_past)
      : text_(text), read_past_(read_past) {}
  void indexed(const Document& doc) const;
  void reached(Value& v);
  // Brings the text and token index just ahead of `v` toward the cache.
  // Only a hint: any value, anywhere, in any order.
  void ahead(Value& v);

 private:
  // Where `v` starts in text_, or nullopt for a document parsed from a copy.
  std::optional<size_t> offset_of(Value& v) const;
  // ahead(), for a value at `at` in text_.
  void prefetch_from(size_t at, const Value& v);
  std::string_view text_;
  const std::function<void(size_t)>& read_past_;  // the caller's, which outlives the decode
  size_t reported_ = 0;
  size_t text_fetched_ = 0;      // text asked for up to here
  uintptr_t index_fetched_ = 0;  // token index asked for up to here
};

// The member names met so far in one object, to refuse a repeat: PyTorch's
// reader keeps a repeated member's last value, Lathe would keep its first,
// and a file that means two programs is refused rather than read as either.
// Objects are small (a node has six members), so names are compared
// in place up to kCompared, then moved into a set. The views point into
// the document, which outlives the walk over its object.
class MemberNames {
 public:
  // False if `name` was met before.
  bool insert(std::string_view name) {
    if (!many_) {
      for (size_t i = 0; i < count_; ++i) {
        if (few_[i] == name) return false;
      }
      if (count_ < kCompared) {
        few_[count_++] = name;
        return true;
      }
      many_ = std::make_unique<std::unordered_set<std::string_view>>(few_.begin(), few_.end());
    }
    return many_->insert(name).second;
  }

 private:
  static constexpr size_t kCompared = 16;
  std::array<std::string_view, kCompared> few_;
  size_t count_ = 0;
  std::unique_ptr<std::unordered_set<std::string_view>> many_;
};

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}
  const std::string& origin() const { return origin_; }

  Error error(const JsonPath& path, const std::string& message) const {
    return Error(origin_ + ": " + path.str() + ": " + message);
  }
  // An error for a simdjson failure: "expected <what>" for a type mismatch,
  // "invalid JSON (...)" for anything structural.
  Error failure(const JsonPath& path, simdjson::error_code code, const std::string& what) const;

  Result<Object> object(Value& v, const JsonPath& p) const;
  // A required member of `obj` (looked up out of order if need be).
  Result<Value> field(Object& obj, std::string_view key, const JsonPath& p) const;
  // A member that may be absent or null.
  Result<std::optional<Value>> optional_field(Object& obj, std::string_view key, const JsonPath& p) const;

  // Calls fn(key, value, member_path) for every member, in document order;
  // a member name that appears twice is refused (see MemberNames). Every
  // object of a document is read through here: Lathe never reads a
  // document that means two different things to two readers.
  template <typename Fn>
  Status for_each_member(Value& v, const JsonPath& p, Fn&& fn) const;
  // Calls fn(item, item_path) for every element.
  template <typename Fn>
  Status for_each_element(Value& v, const JsonPath& p, Fn&& fn) const;
  // A schema union: {"as_x": value}. Older files write every member with all
  // but one null; the active member is the single non-null one. Calls
  // fn(key, value, member_path) for it.
  template <typename Fn>
  Status union_member(Value& v, const JsonPath& p, Fn&& fn) const;

  Result<int64_t> int64(Value& v, const JsonPath& p) const;
  // Numbers, and the strings "Infinity", "-Infinity", "NaN".
  Result<double> float64(Value& v, const JsonPath& p) const;
  Result<bool> boolean(Value& v, const JsonPath& p) const;
  // Valid while the Document lives.
  Result<std::string_view> string(Value& v, const JsonPath& p) const;
  Result<bool> is_null(Value& v, const JsonPath& p) const;
  // The value's JSON text, compact (for records carried verbatim).
  Result<std::string> raw(Value& v, const JsonPath& p) const;
  // The value's text as it stands in the document (no copy): a member met
  // before the members it depends on is kept so, and decoded later with
  // Document::parse(text, origin, SIMDJSON_PADDING) (the document's own
  // bytes and padding follow it).
  Result<std::string_view> raw_view(Value& v, const JsonPath& p) const;

  // Checks the grammar of a value nobody read (to_json_string alone would
  // find its end by brackets and accept `tru`, `[1,]` or `{a: 1}` inside).
  Status check_unread(Value& v, const JsonPath& p) const;
  // Where the document's iterator stands (null past the end): unchanged
  // across a callback when it read nothing.
  static const char* unread_position(Value& v) {
    const char* at = nullptr;
    return v.current_location().get(at) ? nullptr : at;
  }

  Result<SymDim> sym_int(Value& v, const JsonPath& p) const;  // SymInt union
  Result<SymExpr> sym_expr(Value& v, const JsonPath& p) const;
  Result<TensorMeta> tensor_meta(Value& v, const JsonPath& p) const;
  Result<Device> device(Value& v, const JsonPath& p) const;

 private:
  std::string origin_;
};

// Tensor metadata by its text. Most tensors of a program share their
// metadata's text with many others (every layer of a stack has the same
// shapes), so each distinct text is decoded once; the others are found by
// their text and copied. Keys view the document: a cache lives no longer.
class TensorMetaCache {
 public:
  // The interned metadata the member `v` spells.
  Result<MetaRef> get(const Reader& r, Value& v, const JsonPath& p);

 private:
  // A quick hash of a short text (~200 bytes), 32 bytes at a time.
  struct TextHash {
    size_t operator()(std::string_view s) const;
  };
  FlatMap<std::string_view, MetaRef, TextHash> index_;
  // The last few texts found, asked first: a graph lists its tensors in the
  // order it defines them, and neighbours repeat each other's metadata (a
  // layer's weight, bias and outputs, then the next layer's), so most
  // entries are one comparison, without hashing their text.
  static constexpr size_t kRecent = 4;
  std::array<std::pair<std::string_view, MetaRef>, kRecent> recent_{};
  size_t next_recent_ = 0;
};

template <typename Fn>
Status Reader::for_each_member(Value& v, const JsonPath& p, Fn&& fn) const {
  LATHE_ASSIGN_OR_RETURN(Object o, object(v, p));
  MemberNames names;
  for (auto member : o) {
    od::field f;
    if (auto err = std::move(member).get(f)) return failure(p, err, "an object member");
    // Keys are read in place; only a key with an escape is unescaped (into
    // the parser's buffer), which keeps memory proportional to the values.
    std::string_view key;
    if (auto plain = plain_string_at(f.key().raw())) {
      key = *plain;
    } else if (auto err = f.unescaped_key().get(key)) {
      return failure(p, err, "a member name");
    }
    Value value = f.value();
    JsonPath mp = p.field(key);
    if (!names.insert(key)) return error(mp, "member appears twice in one object (readers disagree on which to keep)");
    // A member fn did not read (a name Lathe does not know) would be
    // skipped by its brackets alone, unchecked; it is checked instead, so a
    // file PyTorch's reader refuses is not read (see check_unread).
    const char* before = unread_position(value);
    LATHE_RETURN_IF_ERROR(fn(key, value, mp));
    if (before && unread_position(value) == before) LATHE_RETURN_IF_ERROR(check_unread(value, mp));
  }
  return Status::Ok();
}

template <typename Fn>
Status Reader::for_each_element(Value& v, const JsonPath& p, Fn&& fn) const {
  od::array a;
  if (auto err = v.get_array().get(a)) return failure(p, err, "an array");
  int64_t i = 0;
  for (auto element : a) {
    Value item;
    JsonPath ip = p.at(i++);
    if (auto err = std::move(element).get(item)) return failure(ip, err, "an array element");
    LATHE_RETURN_IF_ERROR(fn(item, ip));
  }
  return Status::Ok();
}

template <typename Fn>
Status Reader::union_member(Value& v, const JsonPath& p, Fn&& fn) const {
  // A view of the key in the document (valid while it lives): no copy.
  std::string_view active;
  LATHE_RETURN_IF_ERROR(for_each_member(v, p, [&](std::string_view key, Value& value, const JsonPath& mp) -> Status {
    LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
    if (null) return Status::Ok();
    if (!active.empty()) {
      return error(p, "union has several members set ('" + std::string(active) + "' and '" + std::string(key) + "')");
    }
    active = key;
    return fn(key, value, mp);
  }));
  if (active.empty()) return error(p, "union has no member set");
  return Status::Ok();
}

}  // namespace lathe::json
