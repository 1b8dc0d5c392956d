#include "lathe/runtime/input_check.h"

#include <cstdint>
#include <map>

#include "lathe/ir/printer.h"
#include "lathe/ir/sym_expr.h"
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
  if (!e) return std::nullopt;
  const std::vector<std::string> symbols = e->symbols();
  if (symbols.size() != 1 || e->infix() != symbols[0]) return std::nullopt;
  return symbols[0];
}

InputChecker::InputChecker(const ExportedProgram& program, const std::vector<IoInfo>& user_inputs)
    : inputs_(user_inputs) {
  // The SymInt user inputs' own symbols, from their placeholders (in order).
  std::vector<const Value*> placeholders;
  for (size_t i = 0; i < program.graph().inputs().size() && i < program.input_specs.size(); ++i) {
    if (program.input_specs[i].kind != InputKind::UserInput) continue;
    const Value* v = nullptr;
    program.graph().inputs()[i].for_each_value([&](Value* x) {
      if (!v) v = x;
    });
    placeholders.push_back(v);
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].kind == ValueKind::SymInt && i < placeholders.size() && placeholders[i] && placeholders[i]->sym()) {
      const auto* d = std::get_if<SymDim>(&*placeholders[i]->sym());
      std::optional<std::string> sym = d && !d->is_concrete() ? plain_symbol(d->expr().expr) : std::nullopt;
      if (sym) symbolic_.push_back(symbolic(program, i, kWholeValue, *sym));
    }
    if (inputs_[i].kind != ValueKind::Tensor || !inputs_[i].meta) continue;
    const std::vector<SymDim>& sizes = inputs_[i].meta->sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d].is_concrete()) continue;
      std::optional<std::string> sym = plain_symbol(sizes[d].expr().expr);
      if (sym) symbolic_.push_back(symbolic(program, i, d, *sym));
    }
  }
}

InputChecker::SymbolicDim InputChecker::symbolic(const ExportedProgram& program, size_t input, size_t dim,
                                                 std::string symbol) const {
  SymbolicDim s{input, dim, std::move(symbol), std::nullopt};
  for (const auto& [name, range] : program.range_constraints) {
    if (name == s.symbol) s.range = range;
  }
  return s;
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
  std::map<std::string, const SymbolicDim*> first_seen;
  for (const SymbolicDim& s : symbolic_) {
    const int64_t size = size_of(args, s);
    const std::string what = where(s) + " is " + std::to_string(size);
    if (s.range && ((s.range->min_val && size < *s.range->min_val) || (s.range->max_val && size > *s.range->max_val))) {
      return make_error(what + ", outside " + s.symbol + "'s range " + range_text(*s.range));
    }
    auto [it, fresh] = first_seen.emplace(s.symbol, &s);
    if (fresh) continue;
    const int64_t other = size_of(args, *it->second);
    if (other != size) {
      return make_error(what + ", but " + where(*it->second) + " is " + std::to_string(other) + " and both are " + s.symbol);
    }
  }
  return Status::Ok();
}

}  // namespace lathe
