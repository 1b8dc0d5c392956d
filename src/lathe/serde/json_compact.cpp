#include "lathe/serde/json_compact.h"

#include <cmath>
#include <memory>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "lathe/serde/json_reader.h"
#include "lathe/serde/json_writer.h"

namespace lathe::json {

namespace {

// nlohmann's event parser (it parses with an explicit stack, so depth costs
// no recursion) feeding Lathe's writer. A DOM would hold the whole value and
// nlohmann's ordered object looks names up one by one: quadratic in the
// names of one object, which is what made a metadata entry with a million
// keys take minutes.
class CompactingHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit CompactingHandler(std::string& out) : writer_(out) {}

  bool null() override { return writer_.null(), true; }
  bool boolean(bool b) override { return writer_.boolean(b), true; }
  bool number_integer(number_integer_t i) override { return writer_.integer(i), true; }
  bool number_unsigned(number_unsigned_t u) override {
    if (u <= static_cast<number_unsigned_t>(INT64_MAX)) return writer_.integer(static_cast<int64_t>(u)), true;
    return writer_.raw(std::to_string(u)), true;
  }
  bool number_float(number_float_t d, const string_t&) override {
    // A literal beyond double's range parses as infinity; JSON has no
    // spelling for it, and nlohmann's dump, which this replaces, wrote null.
    if (!std::isfinite(d)) return writer_.null(), true;
    return writer_.number(d), true;
  }
  bool string(string_t& s) override { return writer_.string(s), true; }
  bool binary(binary_t&) override { return fail("binary value"); }
  bool start_object(std::size_t) override {
    if (!enter()) return false;
    names_.emplace_back();
    writer_.begin_object();
    return true;
  }
  bool key(string_t& k) override {
    if (!names_.back().insert(k).second) return fail("member '" + k + "' appears twice in one object");
    writer_.key(std::string_view(k));
    return true;
  }
  bool end_object() override {
    names_.pop_back();
    --depth_;
    writer_.end_object();
    return true;
  }
  bool start_array(std::size_t) override {
    if (!enter()) return false;
    writer_.begin_array();
    return true;
  }
  bool end_array() override {
    --depth_;
    writer_.end_array();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    if (error_.empty()) error_ = "invalid JSON at byte " + std::to_string(position) + " (" + e.what() + ")";
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  bool enter() {
    if (++depth_ <= kMaxDocumentNesting) return true;
    return fail("nested deeper than " + std::to_string(kMaxDocumentNesting) + " levels");
  }
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  Writer writer_;
  size_t depth_ = 0;
  // The names of each open object: one set per level, so the check is
  // linear in all names however they are spread over objects.
  std::vector<std::unordered_set<std::string>> names_;
  std::string error_;
};

}  // namespace

Result<std::string> compact(std::string_view text) {
  std::string out;
  {
    CompactingHandler handler(out);
    // strict: anything but white space after the value is an error.
    const bool ok = nlohmann::json::sax_parse(text, &handler, nlohmann::json::input_format_t::json,
                                              /*strict=*/true, /*ignore_comments=*/false);
    if (!ok) return make_error(handler.error().empty() ? std::string("invalid JSON") : handler.error());
  }  // the writer gives `out` its final length when it goes
  return out;
}

}  // namespace lathe::json
