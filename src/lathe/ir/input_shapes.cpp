#include "lathe/ir/input_shapes.h"

#include <map>
#include <optional>
#include <vector>

#include "lathe/ir/graph.h"
#include "lathe/ir/spec_kinds.h"
#include "lathe/ir/sym_expr.h"

namespace lathe {

std::string quoted_size(std::string_view text) {
  constexpr size_t kShown = 120;
  if (text.size() <= kShown) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, kShown)) + "...\" (" + std::to_string(text.size()) + " characters)";
}

namespace {

Status check_ranges(const ExportedProgram& ep) {
  for (const auto& [symbol, r] : ep.range_constraints) {
    if (r.min_val && r.max_val && *r.min_val > *r.max_val)
      return make_error("range_constraints: " + symbol + "'s range " + range_text(r) + " is empty: min_val " +
                        std::to_string(*r.min_val) + " is above max_val " + std::to_string(*r.max_val));
  }
  return Status::Ok();
}

// The one value a graph input holds, or nullptr (a constant input's literal).
const Value* input_value(const Argument& in) {
  const Value* v = nullptr;
  size_t n = 0;
  in.for_each_value([&](Value* x) {
    v = x;
    ++n;
  });
  return n == 1 ? v : nullptr;
}

// Built only for a message: a program can have a million placeholders.
std::string placeholder_desc(const ExportedProgram& ep, size_t i, const Value& v) {
  std::string d = "placeholder '" + v.name() + "' (input " + std::to_string(i);
  if (i < ep.input_specs.size()) {
    const InputSpec& s = ep.input_specs[i];
    d += ", " + std::string(input_kind_name(s.kind)) + (s.target.empty() ? "" : " '" + s.target + "'");
  }
  return d + ")";
}

Status check_concrete_sizes(const ExportedProgram& ep, size_t i, const Value& v) {
  const std::vector<SymDim>& sizes = v.meta()->sizes;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d].is_concrete() && sizes[d].value() < 0)
      return make_error(placeholder_desc(ep, i, v) + " declares a negative size: dim " + std::to_string(d) + " is " +
                        std::to_string(sizes[d].value()));
  }
  return Status::Ok();
}

std::string assignments(const std::map<std::string, int64_t>& values) {
  std::string s;
  for (const auto& [name, value] : values) s += (s.empty() ? "" : ", ") + name + " = " + std::to_string(value);
  return s;
}

// The symbolic sizes of user inputs, against the program's ranges.
class SizeCheck {
 public:
  explicit SizeCheck(const ExportedProgram& ep) {
    for (const auto& [symbol, r] : ep.range_constraints) ranges_[symbol] = r;
  }
  // `is_size`: a tensor dim (a SymInt input's value may be negative).
  Status check(const std::string& what, const std::string& text, bool is_size) const;

 private:
  Status computable(const std::string& at, const SymExpression& e, const std::vector<std::string>& symbols,
                    bool is_size) const;
  std::map<std::string, RangeConstraint> ranges_;
};

Status SizeCheck::check(const std::string& what, const std::string& text, bool is_size) const {
  const std::string at = what + (is_size ? ": size " : ": value ") + quoted_size(text);
  std::string why;
  auto e = SymExpression::parse(text, &why);
  if (!e) return make_error(at + " does not parse: " + why);
  const std::vector<std::string> symbols = e->symbols();
  for (const std::string& s : symbols) {
    if (!ranges_.count(s)) return make_error(at + " names symbol '" + s + "', which has no range in range_constraints");
  }
  return computable(at, *e, symbols, is_size);
}

// torch.export promises an input's size over its symbols' whole ranges, so
// the size must compute at their bounded ends: all at the lower end, then
// all at the upper. A division by zero or a result past 64 bits there
// (s77//0, s77**s77**s77) is a broken file, and no call could be checked.
Status SizeCheck::computable(const std::string& at, const SymExpression& e, const std::vector<std::string>& symbols,
                             bool is_size) const {
  for (bool upper : {false, true}) {
    std::map<std::string, int64_t> values;
    for (const std::string& s : symbols) {
      const RangeConstraint& r = ranges_.at(s);
      if (auto end = upper ? r.max_val : r.min_val) values[s] = *end;
    }
    if (values.size() != symbols.size()) continue;  // an unbounded end: nothing to compute at
    std::string why;
    auto value = e.evaluate(values, &why);
    if (value && (*value >= 0 || !is_size || !symbols.empty())) continue;
    if (value) return make_error(at + " is negative (" + std::to_string(*value) + ")");
    return make_error(at + " cannot be computed for " + assignments(values) + " (the " + (upper ? "upper" : "lower") +
                      " end of " + (symbols.size() == 1 ? "its range" : "their ranges") + "): " + why);
  }
  return Status::Ok();
}

// A tensor input's symbolic dims, or a SymInt input's value.
Status check_user_input(const SizeCheck& sizes, const Value& v) {
  const std::string what = "user input '" + v.name() + "'";
  if (v.kind() == ValueKind::SymInt && v.sym()) {
    const auto* d = std::get_if<SymDim>(&*v.sym());
    return d && !d->is_concrete() ? sizes.check(what, d->expr().expr, false) : Status::Ok();
  }
  if (!v.meta()) return Status::Ok();
  const std::vector<SymDim>& dims = v.meta()->sizes;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!dims[d].is_concrete()) LATHE_RETURN_IF_ERROR(sizes.check(what + " dim " + std::to_string(d), dims[d].expr().expr, true));
  }
  return Status::Ok();
}

}  // namespace

Status check_input_shapes(const ExportedProgram& ep) {
  LATHE_RETURN_IF_ERROR(check_ranges(ep));
  const SizeCheck sizes(ep);
  const auto& inputs = ep.graph().inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = input_value(inputs[i]);
    if (!v) continue;
    if (v->meta()) LATHE_RETURN_IF_ERROR(check_concrete_sizes(ep, i, *v));
    const bool user = i < ep.input_specs.size() && ep.input_specs[i].kind == InputKind::UserInput;
    if (user) LATHE_RETURN_IF_ERROR(check_user_input(sizes, *v));
  }
  return Status::Ok();
}

}  // namespace lathe
