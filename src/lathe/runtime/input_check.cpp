#include "lathe/runtime/input_check.h"

#include <cstdint>
#include <map>

#include "lathe/ir/input_shapes.h"
#include "lathe/ir/printer.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

std::string expected_shape(const TensorMeta& m) { return format_dims(m.sizes); }

std::string input_label(size_t index, const IoInfo& info) {
  return "input " + std::to_string(index) + " '" + info.name + "'";
}

}  // namespace

std::optional<std::string> plain_symbol(const std::string& expr) {
  auto e = SymExpression::parse(expr);
  return e ? e->plain_symbol() : std::nullopt;
}

Result<InputChecker> InputChecker::create(const ExportedProgram& program, const std::vector<IoInfo>& user_inputs) {
  LATHE_RETURN_IF_ERROR(check_input_shapes(program));
  InputChecker c;
  c.inputs_ = user_inputs;
  for (const auto& [name, range] : program.range_constraints) c.ranges_[name] = range;
  // The SymInt user inputs' own values, from their placeholders (in order).
  std::vector<const Value*> placeholders;
  for (size_t i = 0; i < program.graph().inputs().size() && i < program.input_specs.size(); ++i) {
    if (program.input_specs[i].kind != InputKind::UserInput) continue;
    const Value* v = nullptr;
    program.graph().inputs()[i].for_each_value([&](Value* x) {
      if (!v) v = x;
    });
    placeholders.push_back(v);
  }
  for (size_t i = 0; i < c.inputs_.size(); ++i) {
    const Value* p = i < placeholders.size() ? placeholders[i] : nullptr;
    if (c.inputs_[i].kind == ValueKind::SymInt && p && p->sym()) {
      const auto* d = std::get_if<SymDim>(&*p->sym());
      if (d && !d->is_concrete()) LATHE_RETURN_IF_ERROR(c.add_symbolic(i, kWholeValue, d->expr().expr));
    }
    if (c.inputs_[i].kind != ValueKind::Tensor || !c.inputs_[i].meta) continue;
    const std::vector<SymDim>& sizes = c.inputs_[i].meta->sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!sizes[d].is_concrete()) LATHE_RETURN_IF_ERROR(c.add_symbolic(i, d, sizes[d].expr().expr));
    }
  }
  return c;
}

Status InputChecker::add_symbolic(size_t input, size_t dim, const std::string& expr) {
  SymbolicDim s{input, dim, {}, {}, std::nullopt, {}};
  std::string why;
  auto e = SymExpression::parse(expr, &why);
  if (!e) return make_error(where(s) + ": size " + quoted_size(expr) + " does not parse: " + why);
  s.expr = std::move(*e);
  s.symbols = s.expr.symbols();
  s.symbol = s.expr.plain_symbol();
  s.text = quoted_size(readable_sym_expr(expr));
  for (const std::string& name : s.symbols) {
    if (!ranges_.count(name)) return make_error(where(s) + ": size " + s.text + " names symbol '" + name + "', which has no range");
  }
  symbolic_.push_back(std::move(s));
  return Status::Ok();
}

int64_t InputChecker::size_of(const std::vector<EValue>& args, const SymbolicDim& s) const {
  return s.dim == kWholeValue ? args[s.input].to_int() : args[s.input].tensor().sizes[s.dim];
}

std::string InputChecker::where(const SymbolicDim& s) const {
  return "input '" + inputs_[s.input].name + "'" + (s.dim == kWholeValue ? "" : " dim " + std::to_string(s.dim));
}

Status InputChecker::check(const std::vector<EValue>& args) const {
  if (args.size() != inputs_.size()) {
    std::string names;
    for (const IoInfo& i : inputs_) names += (names.empty() ? "" : ", ") + i.name;
    return make_error("expected " + std::to_string(inputs_.size()) + " user input(s) (" + names + "), got " +
                      std::to_string(args.size()));
  }
  for (size_t k = 0; k < args.size(); ++k) LATHE_RETURN_IF_ERROR(check_static(k, args[k]));
  return check_symbols(args);
}

Status InputChecker::check_static(size_t index, const EValue& v) const {
  const IoInfo& info = inputs_[index];
  const std::string where = input_label(index, info);
  if (info.kind == ValueKind::SymInt) {
    if (!v.is_int()) return make_error(where + ": expected an int, got " + v.describe());
    return Status::Ok();
  }
  if (info.kind != ValueKind::Tensor) return Status::Ok();
  if (!v.is_tensor()) return make_error(where + ": expected a tensor, got " + v.describe());
  const Tensor& t = v.tensor();
  Status fits = t.check_fits();
  if (!fits.ok()) return fits.error().context(where);
  if (!info.meta) return Status::Ok();
  const TensorMeta& m = *info.meta;
  bool shape_ok = m.sizes.size() == t.sizes.size();
  for (size_t d = 0; shape_ok && d < m.sizes.size(); ++d) {
    shape_ok = !m.sizes[d].is_concrete() || m.sizes[d].value() == t.sizes[d];
  }
  if (m.dtype != t.dtype || !shape_ok) {
    return make_error(where + ": expected " + std::string(dtype_name(m.dtype)) + " " + expected_shape(m) + ", got " +
                      std::string(dtype_name(t.dtype)) + " " + shape_string(t.sizes));
  }
  return Status::Ok();
}

Status InputChecker::check_symbols(const std::vector<EValue>& args) const {
  Bindings values;
  LATHE_RETURN_IF_ERROR(bind_plain(args, values));
  return check_expressions(args, values);
}

Status InputChecker::in_range(const SymbolicDim& s, const std::string& symbol, int64_t size) const {
  const RangeConstraint& r = ranges_.at(symbol);  // create() refused a symbol without one
  if ((r.min_val && size < *r.min_val) || (r.max_val && size > *r.max_val)) {
    return make_error(where(s) + " is " + std::to_string(size) + ", outside " + symbol + "'s range " + range_text(r));
  }
  return Status::Ok();
}

// Dimensions that are one symbol, in input order: each against its range,
// and one symbol, one size.
Status InputChecker::bind_plain(const std::vector<EValue>& args, Bindings& values) const {
  std::map<std::string, const SymbolicDim*> first_seen;
  for (const SymbolicDim& s : symbolic_) {
    if (!s.symbol) continue;
    const int64_t size = size_of(args, s);
    LATHE_RETURN_IF_ERROR(in_range(s, *s.symbol, size));
    auto [it, fresh] = first_seen.emplace(*s.symbol, &s);
    if (fresh) {
      values[*s.symbol] = size;
      continue;
    }
    const int64_t other = size_of(args, *it->second);
    if (other != size) {
      return make_error(where(s) + " is " + std::to_string(size) + ", but " + where(*it->second) + " is " +
                        std::to_string(other) + " and both are " + *s.symbol);
    }
  }
  return Status::Ok();
}

// Dimensions given by an expression, once their symbols are known; one
// whose symbols but one are known gives that one (solved for). Repeated
// while that settles more; one left over cannot be checked: an error.
Status InputChecker::check_expressions(const std::vector<EValue>& args, Bindings& values) const {
  std::vector<const SymbolicDim*> pending;
  for (const SymbolicDim& s : symbolic_) {
    if (!s.symbol) pending.push_back(&s);
  }
  while (!pending.empty()) {
    const size_t before = pending.size();
    for (auto it = pending.begin(); it != pending.end();) {
      LATHE_ASSIGN_OR_RETURN(bool settled, settle(**it, size_of(args, **it), values));
      it = settled ? pending.erase(it) : it + 1;
    }
    if (pending.size() == before) return unsettled(*pending.front(), values);
  }
  return Status::Ok();
}

// False: two or more of its symbols are not known yet.
Result<bool> InputChecker::settle(const SymbolicDim& s, int64_t size, Bindings& values) const {
  std::vector<std::string> unknown;
  for (const std::string& name : s.symbols) {
    if (!values.count(name)) unknown.push_back(name);
  }
  if (unknown.size() > 1) return false;
  if (unknown.empty()) {
    LATHE_RETURN_IF_ERROR(compare(s, size, values));
    return true;
  }
  LATHE_ASSIGN_OR_RETURN(int64_t value, solve(s, size, unknown[0], values));
  values[unknown[0]] = value;
  return true;
}

namespace {

std::string assignments(const std::vector<std::string>& symbols, const std::map<std::string, int64_t>& values) {
  std::string s;
  for (const std::string& name : symbols) {
    auto it = values.find(name);
    if (it != values.end()) s += (s.empty() ? "" : ", ") + name + " = " + std::to_string(it->second);
  }
  return s;
}

}  // namespace

Status InputChecker::compare(const SymbolicDim& s, int64_t size, const Bindings& values) const {
  std::string why;
  std::optional<int64_t> want = s.expr.evaluate(values, &why);
  const std::string given = assignments(s.symbols, values);
  if (!want) return make_error(where(s) + ": its size " + s.text + " cannot be computed for " + given + ": " + why);
  if (*want == size) return Status::Ok();
  return make_error(where(s) + " is " + std::to_string(size) + ", but its size " + s.text + " is " +
                    std::to_string(*want) + (given.empty() ? "" : " for " + given));
}

// torch.export's derived sizes grow with their symbol (a*s + b with a > 0,
// s//k), so the value is the smallest in the symbol's range whose size
// reaches `size` (a size past 64 bits counts as reaching it), if that one
// gives `size` exactly.
Result<int64_t> InputChecker::solve(const SymbolicDim& s, int64_t size, const std::string& symbol, Bindings values) const {
  const RangeConstraint& r = ranges_.at(symbol);
  int64_t lo = r.min_val.value_or(INT64_MIN), hi = r.max_val.value_or(INT64_MAX);
  auto size_at = [&](int64_t v) {
    values[symbol] = v;
    return s.expr.evaluate(values);
  };
  while (lo < hi) {
    // (hi - lo) / 2 in unsigned arithmetic: the difference can pass INT64_MAX.
    const int64_t mid = lo + static_cast<int64_t>((static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)) / 2);
    std::optional<int64_t> v = size_at(mid);
    if (!v || *v >= size) hi = mid;
    else lo = mid + 1;
  }
  if (size_at(lo) == size) return lo;
  return make_error(where(s) + " is " + std::to_string(size) + ", which its size " + s.text + " is for no " + symbol +
                    " in its range " + range_text(r));
}

Status InputChecker::unsettled(const SymbolicDim& s, const Bindings& values) const {
  std::string unknown;
  for (const std::string& name : s.symbols) {
    if (!values.count(name)) unknown += (unknown.empty() ? "" : ", ") + name;
  }
  return make_error(where(s) + ": its size " + s.text + " cannot be checked: no other input gives " + unknown);
}

}  // namespace lathe
