#include "lathe/serde/json_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <nlohmann/json.hpp>

namespace lathe::json {

namespace {

// Where a scan of JSON text stands between two bytes.
struct NestingScan {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;  // the next byte (in a string) follows a backslash
};

// The exact rule, a byte at a time: brackets outside strings nest (a closer
// at depth 0 is ignored), strings end at an unescaped quote.
std::optional<size_t> scan_bytes(const unsigned char* p, size_t from, size_t to, size_t max_depth, NestingScan& s) {
  for (size_t i = from; i < to; ++i) {
    const unsigned char c = p[i];
    if (s.in_string) {
      if (s.escaped) s.escaped = false;
      else if (c == '\\') s.escaped = true;
      else if (c == '"') s.in_string = false;
    } else if (c == '"') {
      s.in_string = true;
    } else if (c == '[' || c == '{') {
      if (++s.depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && s.depth > 0) {
      --s.depth;
    }
  }
  return std::nullopt;
}

#if defined(__SSE2__)
// For a 64-byte block: bit k of each mask is set where byte k is a quote, a
// backslash, an opening or a closing bracket. ('[' | 0x20 is '{' and
// ']' | 0x20 is '}', so one comparison finds both kinds of each.)
struct BlockMasks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};
BlockMasks block_masks(const unsigned char* block) {
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), case_bit = _mm_set1_epi8(0x20);
  BlockMasks m;
  for (int k = 0; k < 4; ++k) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * k));
    const __m128i folded = _mm_or_si128(b, case_bit);
    auto bits = [&](__m128i eq) { return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << (16 * k); };
    m.quote |= bits(_mm_cmpeq_epi8(b, quote));
    m.backslash |= bits(_mm_cmpeq_epi8(b, backslash));
    m.open |= bits(_mm_cmpeq_epi8(folded, open));
    m.close |= bits(_mm_cmpeq_epi8(folded, close));
  }
  return m;
}

// Bit k is the XOR of bits 0..k: 1 from an opening quote to before its
// closing one.
uint64_t prefix_xor(uint64_t x) {
  for (int shift = 1; shift < 64; shift *= 2) x ^= x << shift;
  return x;
}

// Set bits, without a library call where the target has no POPCNT.
size_t bit_count(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<size_t>((x * 0x0101010101010101ull) >> 56);
}

// A 64-byte block without backslashes, taken whole: quotes toggle strings,
// brackets outside them are counted. False (nothing changed) when the block
// could cross the limit or a closer could meet depth 0, which scan_bytes
// then settles byte by byte.
bool scan_block(const unsigned char* b, size_t max_depth, NestingScan& s) {
  const BlockMasks m = block_masks(b);
  if (s.escaped || m.backslash != 0) return false;
  const uint64_t in_string = prefix_xor(m.quote) ^ (s.in_string ? ~uint64_t{0} : 0);
  const size_t opens = bit_count(m.open & ~in_string), closes = bit_count(m.close & ~in_string);
  if (s.depth < closes || s.depth + opens > max_depth) return false;
  s.depth = s.depth + opens - closes;
  s.in_string = (in_string >> 63) != 0;
  return true;
}
#endif

}  // namespace

std::optional<size_t> nesting_beyond(std::string_view text, size_t max_depth) {
  // This runs over every byte of every record before simdjson does: 64 bytes
  // at a time where they hold no backslash and cannot reach the limit, byte
  // by byte where they might.
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  NestingScan s;
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 64 <= n; i += 64) {
    if (scan_block(p + i, max_depth, s)) continue;
    if (auto deep = scan_bytes(p, i, i + 64, max_depth, s)) return deep;
  }
#endif
  return scan_bytes(p, i, n, max_depth, s);
}

Result<std::unique_ptr<Document>> Document::parse(std::string_view text, const std::string& origin,
                                                 size_t readable_after) {
  // On-Demand skips what the decoder does not ask for without counting its
  // levels, so the decoder's own depth limits never see nesting under an
  // unknown key; the whole document is bounded here before any value is
  // read. A large text is bounded on a second thread while simdjson indexes
  // it: both only read the text (indexing does not recurse, however deep).
  auto too_deep = [&](size_t at) {
    return make_error(origin + ": JSON nested deeper than " + std::to_string(kMaxDocumentNesting) +
                      " levels (at byte " + std::to_string(at) + ")");
  };
  constexpr size_t kBoundAside = size_t{1} << 20;
  std::future<std::optional<size_t>> bound;
  if (text.size() >= kBoundAside) {
    try {
      bound = std::async(std::launch::async, [text] { return nesting_beyond(text, kMaxDocumentNesting); });
    } catch (const std::system_error&) {
      // no second thread: bounded first, below
    }
  }
  if (!bound.valid()) {
    if (auto deep = nesting_beyond(text, kMaxDocumentNesting)) return too_deep(*deep);
  }
  auto d = std::unique_ptr<Document>(new Document());
  d->origin_ = origin;
  if (readable_after >= simdjson::SIMDJSON_PADDING) {
    d->view_ = simdjson::padded_string_view(text.data(), text.size(), text.size() + readable_after);
  } else {
    d->copy_ = simdjson::padded_string(text);
    d->view_ = simdjson::padded_string_view(d->copy_);
  }
  Status indexed = d->iterate();
  if (bound.valid()) {
    if (auto deep = bound.get()) return too_deep(*deep);
  }
  LATHE_RETURN_IF_ERROR(indexed);
  return d;
}

Status Document::iterate() {
  if (auto err = parser_.iterate(view_).get(doc_)) {
    return make_error(origin_ + ": invalid JSON: " + simdjson::error_message(err));
  }
  return Status::Ok();
}

Result<Value> Document::root() {
  Value v;
  if (auto err = doc_.get_value().get(v)) {
    return make_error(origin_ + ": invalid JSON: " + simdjson::error_message(err));
  }
  return v;
}

Result<Value> Document::rewind() {
  LATHE_RETURN_IF_ERROR(iterate());
  return root();
}

size_t TensorMetaCache::TextHash::operator()(std::string_view s) const {
  uint64_t h = s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001B3ull;
  return static_cast<size_t>(h);
}

Result<MetaRef> TensorMetaCache::get(const Reader& r, Value& v, const JsonPath& p) {
  LATHE_ASSIGN_OR_RETURN(std::string_view text, r.raw_view(v, p));
  if (const MetaRef* known = index_.find(text)) return *known;
  // Decoded from its text (a view inside the document, so the document's
  // padding follows it).
  LATHE_ASSIGN_OR_RETURN(auto doc, Document::parse(text, r.origin(), simdjson::SIMDJSON_PADDING));
  LATHE_ASSIGN_OR_RETURN(Value root, doc->root());
  LATHE_ASSIGN_OR_RETURN(TensorMeta meta, r.tensor_meta(root, p));
  const MetaRef kept = intern_tensor_meta(meta);
  index_.emplace(text, kept);
  return kept;
}

Result<std::string_view> Reader::raw_view(Value& v, const JsonPath& p) const {
  std::string_view text;
  if (auto err = simdjson::to_json_string(v).get(text)) return failure(p, err, "a value");
  return text;
}

Error Reader::failure(const JsonPath& path, simdjson::error_code code, const std::string& what) const {
  if (code == simdjson::INCORRECT_TYPE || code == simdjson::NUMBER_OUT_OF_RANGE) {
    return error(path, "expected " + what);
  }
  return error(path, std::string("invalid JSON: ") + simdjson::error_message(code));
}

namespace {

// The document iterator a value reads from. simdjson keeps it protected;
// naming it through a derived class is the one way to reach it without
// changing the library (Debian's simdjson 3.0.1 is used as installed).
struct IteratorOf : od::value {
  static const od::json_iterator& of(const od::value& v) { return (v.*(&IteratorOf::iter)).json_iter(); }
};

}  // namespace

void release_index_before(const Value& v) {
  // Kept behind the value: what its enclosing arrays and objects may still
  // peek at (the previous token), with a wide margin.
  constexpr size_t kKeptEntries = size_t{16} << 10;
  const od::json_iterator& it = IteratorOf::of(v);
  const uint32_t* root = it.root_position();
  const uint32_t* at = it.position();
  if (at <= root || static_cast<size_t>(at - root) <= kKeptEntries) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = (reinterpret_cast<uintptr_t>(root) + page - 1) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(at - kKeptEntries) & ~(page - 1);
  // Advice only: where the kernel declines, the pages simply stay.
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

void ReadProgress::indexed(const Document& doc) const {
  if (read_past_ && doc.in_place()) read_past_(text_.size());
}

void ReadProgress::reached(Value& v) {
  constexpr size_t kEvery = size_t{1} << 20;
  const std::string_view token = v.raw_json_token();
  if (token.data() < text_.data() || token.data() >= text_.data() + text_.size()) return;
  const auto at = static_cast<size_t>(token.data() - text_.data());
  if (at < reported_ + kEvery) return;
  reported_ = at;
  release_index_before(v);
  if (read_past_) read_past_(at);
}

Result<Object> Reader::object(Value& v, const JsonPath& p) const {
  Object o;
  if (auto err = v.get_object().get(o)) return failure(p, err, "an object");
  return o;
}

Result<Value> Reader::field(Object& obj, std::string_view key, const JsonPath& p) const {
  Value v;
  auto err = obj.find_field_unordered(key).get(v);
  if (err == simdjson::NO_SUCH_FIELD) return error(p, "missing field '" + std::string(key) + "'");
  if (err) return failure(p, err, "an object");
  return v;
}

Result<std::optional<Value>> Reader::optional_field(Object& obj, std::string_view key, const JsonPath& p) const {
  Value v;
  auto err = obj.find_field_unordered(key).get(v);
  if (err == simdjson::NO_SUCH_FIELD) return std::optional<Value>();
  if (err) return failure(p, err, "an object");
  LATHE_ASSIGN_OR_RETURN(bool null, is_null(v, p.field(key)));
  if (null) return std::optional<Value>();
  return std::optional<Value>(v);
}

Result<bool> Reader::is_null(Value& v, const JsonPath& p) const {
  bool null = false;
  if (auto err = v.is_null().get(null)) return failure(p, err, "a value");
  return null;
}

Result<int64_t> Reader::int64(Value& v, const JsonPath& p) const {
  int64_t direct;
  if (!v.get_int64().get(direct)) return direct;  // the common case, parsed once
  od::number_type nt;
  if (auto err = v.get_number_type().get(nt)) return failure(p, err, "an integer");
  if (nt == od::number_type::signed_integer) {
    int64_t i;
    if (auto err = v.get_int64().get(i)) return failure(p, err, "an integer");
    return i;
  }
  // Integral floats (1.0) only by a writer's mistake; accept exact ones.
  double d;
  if (auto err = v.get_double().get(d)) return failure(p, err, "an integer");
  if (std::floor(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  return error(p, "expected an integer");
}

Result<double> Reader::float64(Value& v, const JsonPath& p) const {
  od::json_type t;
  if (auto err = v.type().get(t)) return failure(p, err, "a number");
  if (t == od::json_type::string) {
    std::string_view s;
    if (auto err = v.get_string().get(s)) return failure(p, err, "a number");
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return error(p, "expected a number, got the string '" + std::string(s) + "'");
  }
  double d;
  if (auto err = v.get_double().get(d)) return failure(p, err, "a number");
  return d;
}

Result<bool> Reader::boolean(Value& v, const JsonPath& p) const {
  bool b;
  if (auto err = v.get_bool().get(b)) return failure(p, err, "a boolean");
  return b;
}

Result<std::string_view> Reader::string(Value& v, const JsonPath& p) const {
  // A string without escapes (almost every name) is read where it stands in
  // the text: unescaping it would copy it into the parser's buffer, which
  // then grows with every name of a large graph. The opening quote is the
  // token.
  const std::string_view token = v.raw_json_token();
  if (!token.empty() && token[0] == '"') {
    if (auto plain = plain_string_at(token.data() + 1)) return *plain;
  }
  std::string_view s;
  if (auto err = v.get_string().get(s)) return failure(p, err, "a string");
  return s;
}

Result<std::string> Reader::raw(Value& v, const JsonPath& p) const {
  std::string_view text;
  if (auto err = simdjson::to_json_string(v).get(text)) return failure(p, err, "a value");
  // nlohmann parses iteratively but dumps recursively, one stack frame per
  // level, and On-Demand skips a value without counting its levels: bound
  // the nesting first, or deep brackets in a carried record exhaust the stack.
  constexpr size_t kMaxDepth = 256;
  if (nesting_beyond(text, kMaxDepth)) return error(p, "nesting deeper than " + std::to_string(kMaxDepth));
  // Normalise spacing so the carried text does not depend on the writer.
  auto parsed = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return error(p, "invalid JSON");
  return parsed.dump();
}

Result<SymExpr> Reader::sym_expr(Value& v, const JsonPath& p) const {
  SymExpr out;
  bool have_expr = false;
  LATHE_RETURN_IF_ERROR(for_each_member(v, p, [&](std::string_view key, Value& value, const JsonPath& mp) -> Status {
    if (key == "expr_str") {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, string(value, mp));
      out.expr = std::string(s);
      have_expr = true;
    } else if (key == "hint") {
      LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
      if (null) return Status::Ok();
      od::json_type t;
      if (auto err = value.type().get(t)) return failure(mp, err, "a hint");
      if (t == od::json_type::number) {  // older files: a bare integer hint
        LATHE_ASSIGN_OR_RETURN(int64_t i, int64(value, mp));
        out.hint = i;
        return Status::Ok();
      }
      return union_member(value, mp, [&](std::string_view hk, Value& hv, const JsonPath& hp) -> Status {
        if (hk == "as_int") {
          LATHE_ASSIGN_OR_RETURN(int64_t i, int64(hv, hp));
          out.hint = i;
        } else if (hk == "as_bool") {
          LATHE_ASSIGN_OR_RETURN(bool b, boolean(hv, hp));
          out.hint = b;
        } else if (hk == "as_float") {
          LATHE_ASSIGN_OR_RETURN(double d, float64(hv, hp));
          out.hint = d;
        } else {
          return error(mp, "unknown SymExprHint member '" + std::string(hk) + "'");
        }
        return Status::Ok();
      });
    }
    return Status::Ok();
  }));
  if (!have_expr) return error(p, "missing field 'expr_str'");
  return out;
}

Result<SymDim> Reader::sym_int(Value& v, const JsonPath& p) const {
  SymDim out;
  od::json_type t;
  if (auto err = v.type().get(t)) return failure(p, err, "a SymInt");
  if (t == od::json_type::number) {  // pre-schema-8 files: a bare integer
    LATHE_ASSIGN_OR_RETURN(int64_t i, int64(v, p));
    return SymDim(i);
  }
  LATHE_RETURN_IF_ERROR(union_member(v, p, [&](std::string_view key, Value& value, const JsonPath& mp) -> Status {
    if (key == "as_int") {
      LATHE_ASSIGN_OR_RETURN(int64_t i, int64(value, mp));
      out = SymDim(i);
    } else if (key == "as_expr") {
      LATHE_ASSIGN_OR_RETURN(SymExpr x, sym_expr(value, mp));
      out = SymDim(std::move(x));
    } else {
      return error(p, "unknown SymInt member '" + std::string(key) + "'");
    }
    return Status::Ok();
  }));
  return out;
}

Result<Device> Reader::device(Value& v, const JsonPath& p) const {
  Device d;
  bool have_type = false;
  LATHE_RETURN_IF_ERROR(for_each_member(v, p, [&](std::string_view key, Value& value, const JsonPath& mp) -> Status {
    if (key == "type") {
      LATHE_ASSIGN_OR_RETURN(std::string_view s, string(value, mp));
      d.type = std::string(s);
      have_type = true;
    } else if (key == "index") {
      LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
      if (!null) {
        LATHE_ASSIGN_OR_RETURN(int64_t i, int64(value, mp));
        d.index = i;
      }
    }
    return Status::Ok();
  }));
  if (!have_type) return error(p, "missing field 'type'");
  return d;
}

Result<TensorMeta> Reader::tensor_meta(Value& v, const JsonPath& p) const {
  TensorMeta m;
  bool have_dtype = false, have_sizes = false, have_strides = false;
  auto dims = [&](Value& value, const JsonPath& fp, std::vector<SymDim>& out) -> Status {
    return for_each_element(value, fp, [&](Value& d, const JsonPath& ip) -> Status {
      LATHE_ASSIGN_OR_RETURN(SymDim s, sym_int(d, ip));
      out.push_back(std::move(s));
      return Status::Ok();
    });
  };
  LATHE_RETURN_IF_ERROR(for_each_member(v, p, [&](std::string_view key, Value& value, const JsonPath& mp) -> Status {
    if (key == "dtype") {
      LATHE_ASSIGN_OR_RETURN(int64_t code, int64(value, mp));
      auto dtype = dtype_from_schema(code);
      if (!dtype) return error(mp, "unknown scalar type " + std::to_string(code));
      m.dtype = *dtype;
      have_dtype = true;
    } else if (key == "sizes") {
      have_sizes = true;
      return dims(value, mp, m.sizes);
    } else if (key == "strides") {
      have_strides = true;
      return dims(value, mp, m.strides);
    } else if (key == "requires_grad") {
      LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
      if (!null) {
        LATHE_ASSIGN_OR_RETURN(m.requires_grad, boolean(value, mp));
      }
    } else if (key == "device") {
      LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
      if (!null) {
        LATHE_ASSIGN_OR_RETURN(m.device, device(value, mp));
      }
    } else if (key == "storage_offset") {
      LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
      if (!null) {
        LATHE_ASSIGN_OR_RETURN(m.storage_offset, sym_int(value, mp));
      }
    } else if (key == "layout") {
      LATHE_ASSIGN_OR_RETURN(bool null, is_null(value, mp));
      if (!null) {
        LATHE_ASSIGN_OR_RETURN(m.layout, int64(value, mp));
      }
    }
    return Status::Ok();
  }));
  if (!have_dtype) return error(p, "missing field 'dtype'");
  if (!have_sizes) return error(p, "missing field 'sizes'");
  if (!have_strides) return error(p, "missing field 'strides'");
  if (m.sizes.size() != m.strides.size()) {
    return error(p, "sizes has " + std::to_string(m.sizes.size()) + " dims but strides has " +
                        std::to_string(m.strides.size()));
  }
  return m;
}

}  // namespace lathe::json
