#include "lathe/harness/npy_header.h"

#include <cctype>
#include <charconv>
#include <set>
#include <utility>

namespace lathe {

namespace {

// A cursor over the header text; every error says where it stopped.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Result<NpyHeader> parse() {
    NpyHeader header;
    std::set<std::string> seen;
    LATHE_RETURN_IF_ERROR(expect('{'));
    while (!peek('}')) {
      if (pos_ == text_.size()) return fail("the {...} dict is not closed");
      LATHE_ASSIGN_OR_RETURN(std::string key, string_literal());
      if (!seen.insert(key).second) return fail("key '" + key + "' appears twice");
      LATHE_RETURN_IF_ERROR(expect(':'));
      LATHE_RETURN_IF_ERROR(value_of(key, header));
      if (!peek('}')) LATHE_RETURN_IF_ERROR(expect(','));
    }
    LATHE_RETURN_IF_ERROR(expect('}'));
    skip_space();
    if (pos_ != text_.size()) return fail("data after the closing '}'");
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      if (!seen.count(key)) return make_error(std::string("npy header has no '") + key + "'");
    }
    return header;
  }

 private:
  Status value_of(const std::string& key, NpyHeader& header) {
    if (key == "descr") {
      if (peek('[')) return fail("'descr' is a structured dtype (a list); only plain dtypes are read");
      LATHE_ASSIGN_OR_RETURN(header.descr, string_literal());
      return Status::Ok();
    }
    if (key == "fortran_order") {
      LATHE_ASSIGN_OR_RETURN(header.fortran_order, bool_literal());
      return Status::Ok();
    }
    if (key == "shape") {
      LATHE_ASSIGN_OR_RETURN(header.shape, int_tuple());
      return Status::Ok();
    }
    return fail("unknown key '" + key + "' (NumPy allows only 'descr', 'fortran_order' and 'shape')");
  }

  Result<std::string> string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return fail("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos) return fail("escape sequence in string '" + s + "'");
    pos_ = end + 1;
    return s;
  }

  Result<bool> bool_literal() {
    skip_space();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::string_view w(word);
      if (text_.substr(pos_, w.size()) == w && !word_char_at(pos_ + w.size())) {
        pos_ += w.size();
        return value;
      }
    }
    return fail("'fortran_order' must be True or False, not " + token_here());
  }

  // (), (n,) or (n, m, ...) with an optional trailing comma; decimal ints.
  Result<std::vector<int64_t>> int_tuple() {
    LATHE_RETURN_IF_ERROR(expect('('));
    std::vector<int64_t> dims;
    while (!peek(')')) {
      LATHE_ASSIGN_OR_RETURN(int64_t d, dimension());
      dims.push_back(d);
      if (!peek(')')) LATHE_RETURN_IF_ERROR(expect(','));
    }
    LATHE_RETURN_IF_ERROR(expect(')'));
    return dims;
  }

  Result<int64_t> dimension() {
    skip_space();
    const std::string token = token_here();
    int64_t v = 0;
    const char* begin = text_.data() + pos_;
    const char* end = begin + token.size();
    auto [p, ec] = std::from_chars(begin, end, v, 10);
    const bool plain_decimal = !token.empty() && token[0] != '-' && (token == "0" || token[0] != '0');
    if (ec != std::errc() || p != end || !plain_decimal) {
      return fail("dimension '" + token + "' is not a non-negative decimal integer below 2^63");
    }
    pos_ += token.size();
    return v;
  }

  // The run of characters up to the next separator, for messages.
  std::string token_here() const {
    size_t end = pos_;
    while (end < text_.size() && std::string_view(",)}: \t\n").find(text_[end]) == std::string_view::npos) ++end;
    return std::string(text_.substr(pos_, end - pos_));
  }

  bool word_char_at(size_t i) const {
    if (i >= text_.size()) return false;
    const char c = text_[i];
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  Status expect(char c) {
    if (!peek(c)) return fail(std::string("expected '") + c + "'");
    ++pos_;
    return Status::Ok();
  }
  // The header is quoted (its padding trimmed, at most 200 bytes of it).
  Error fail(const std::string& what) const {
    std::string_view quoted = text_.substr(0, text_.find_last_not_of(" \t\n") + 1);
    std::string shown(quoted.substr(0, 200));
    if (quoted.size() > 200) shown += "...";
    return Error("npy header: " + what + " (at byte " + std::to_string(pos_) + " of " + shown + ")");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Result<NpyHeader> parse_npy_header(std::string_view text) { return HeaderParser(text).parse(); }

}  // namespace lathe
