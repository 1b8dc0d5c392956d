#include "lathe/ir/specialize_shapes.h"

#include <unordered_map>

#include "lathe/ir/rewriter.h"
#include "lathe/ir/sym_expr.h"

namespace lathe {

namespace {

// Parsed expressions by text: a transformer repeats "s0" on every value.
class Evaluator {
 public:
  explicit Evaluator(const SymbolValues& symbols) : symbols_(symbols) {}

  Result<int64_t> value(const SymDim& d, const std::string& what) {
    if (d.is_concrete()) return d.value();
    const std::string& text = d.expr().expr;
    auto it = parsed_.find(text);
    if (it == parsed_.end()) {
      std::string why;
      auto e = SymExpression::parse(text, &why);
      if (!e) return make_error(what + ": size '" + text + "' does not parse: " + why);
      it = parsed_.emplace(text, std::move(*e)).first;
    }
    std::string why;
    auto v = it->second.evaluate(symbols_, &why);
    if (!v) return make_error(what + ": '" + it->second.infix() + "' cannot be computed: " + why);
    return *v;
  }

  Result<std::vector<SymDim>> dims(const std::vector<SymDim>& in, const std::string& what) {
    std::vector<SymDim> out;
    out.reserve(in.size());
    for (const SymDim& d : in) {
      LATHE_ASSIGN_OR_RETURN(int64_t v, value(d, what));
      out.emplace_back(v);
    }
    return out;
  }

 private:
  const SymbolValues& symbols_;
  std::unordered_map<std::string, SymExpression> parsed_;
};

bool symbolic_meta(const TensorMeta& m) {
  for (const SymDim& d : m.sizes) {
    if (!d.is_concrete()) return true;
  }
  for (const SymDim& d : m.strides) {
    if (!d.is_concrete()) return true;
  }
  return !m.storage_offset.is_concrete();
}

const SymDim* symbolic_int(const Value& v) {
  if (v.kind() != ValueKind::SymInt || !v.sym()) return nullptr;
  const auto* d = std::get_if<SymDim>(&*v.sym());
  return d && !d->is_concrete() ? d : nullptr;
}

template <typename F>
void for_each_value(const Graph& g, F&& f) {
  for (Value* p : g.placeholders()) f(*p);
  for (const Node* n : g.nodes()) {
    for (Value* v : n->defined_values()) f(*v);
  }
}

void add_symbols(const SymDim& d, std::set<std::string>& out) {
  if (d.is_concrete()) return;
  if (auto e = SymExpression::parse(d.expr().expr)) {
    for (std::string& s : e->symbols()) out.insert(std::move(s));
  }
}

// A SymInt argument naming a value whose meta is now a number becomes
// that number; the rest stay as they are.
bool literalise(Argument& a) {
  if (auto* s = std::get_if<SymIntArg>(&a.v); s && s->is_value()) {
    const Value* v = s->value();
    const auto* d = v->sym() ? std::get_if<SymDim>(&*v->sym()) : nullptr;
    if (!d || !d->is_concrete()) return false;
    a = SymIntArg{d->value()};
    return true;
  }
  if (auto* list = std::get_if<SymIntList>(&a.v)) {
    bool changed = false;
    for (SymIntArg& item : list->items) {
      if (!item.is_value()) continue;
      const Value* v = item.value();
      const auto* d = v->sym() ? std::get_if<SymDim>(&*v->sym()) : nullptr;
      if (!d || !d->is_concrete()) continue;
      item = SymIntArg{d->value()};
      changed = true;
    }
    return changed;
  }
  return false;
}

}  // namespace

bool has_symbolic_shapes(const ExportedProgram& ep) {
  bool found = false;
  for_each_value(ep.graph(), [&](const Value& v) {
    if (found) return;
    found = (v.meta() && symbolic_meta(*v.meta())) || symbolic_int(v) != nullptr;
  });
  return found;
}

std::set<std::string> shape_symbols(const TensorMeta& meta) {
  std::set<std::string> out;
  for (const SymDim& d : meta.sizes) add_symbols(d, out);
  for (const SymDim& d : meta.strides) add_symbols(d, out);
  add_symbols(meta.storage_offset, out);
  return out;
}

Result<SymbolValues> export_hints(const ExportedProgram& ep) {
  SymbolValues hints;
  std::set<std::string> needed;
  auto note = [&](const SymDim& d) {
    if (d.is_concrete()) return;
    add_symbols(d, needed);
    const SymExpr& e = d.expr();
    const int64_t* hint = e.hint ? std::get_if<int64_t>(&*e.hint) : nullptr;
    if (!hint) return;
    auto parsed = SymExpression::parse(e.expr);
    if (auto s = parsed ? parsed->plain_symbol() : std::nullopt) hints.emplace(*s, *hint);
  };
  for_each_value(ep.graph(), [&](const Value& v) {
    if (v.meta()) {
      for (const SymDim& d : v.meta()->sizes) note(d);
    }
    if (const SymDim* d = symbolic_int(v)) note(*d);
  });
  for (const std::string& s : needed) {
    if (!hints.count(s)) return make_error("symbol '" + s + "' has no hint: no size that is '" + s + "' alone records the value torch.export saw");
  }
  return hints;
}

Status bind_symbols(const TensorMeta& meta, const std::vector<int64_t>& sizes, SymbolValues& symbols) {
  if (meta.sizes.size() != sizes.size()) {
    return make_error("rank " + std::to_string(sizes.size()) + ", expected " + std::to_string(meta.sizes.size()));
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (meta.sizes[d].is_concrete()) continue;
    auto e = SymExpression::parse(meta.sizes[d].expr().expr);
    if (auto s = e ? e->plain_symbol() : std::nullopt) symbols.emplace(*s, sizes[d]);
  }
  Evaluator eval(symbols);
  for (size_t d = 0; d < sizes.size(); ++d) {
    const std::string what = "dim " + std::to_string(d);
    LATHE_ASSIGN_OR_RETURN(int64_t want, eval.value(meta.sizes[d], what));
    if (want == sizes[d]) continue;
    if (meta.sizes[d].is_concrete()) return make_error(what + " is " + std::to_string(sizes[d]) + ", expected " + std::to_string(want));
    return make_error(what + " is " + std::to_string(sizes[d]) + ", but " + readable_sym_expr(meta.sizes[d].expr().expr) +
                      " = " + std::to_string(want));
  }
  return Status::Ok();
}

Status specialize_shapes(ExportedProgram& ep, const SymbolValues& symbols) {
  Evaluator eval(symbols);
  Status status = Status::Ok();
  for_each_value(ep.graph(), [&](Value& v) {
    if (!status.ok()) return;
    const std::string what = "value '" + v.name() + "'";
    if (v.meta() && symbolic_meta(*v.meta())) {
      TensorMeta m = *v.meta();
      auto sizes = eval.dims(m.sizes, what);
      auto strides = sizes.ok() ? eval.dims(m.strides, what) : sizes;
      auto offset = strides.ok() ? eval.value(m.storage_offset, what) : Result<int64_t>(strides.error());
      if (!offset.ok()) {
        status = offset.error();
        return;
      }
      m.sizes = std::move(*sizes);
      m.strides = std::move(*strides);
      m.storage_offset = SymDim(*offset);
      v.set_meta(m);
    }
    if (const SymDim* d = symbolic_int(v)) {
      auto n = eval.value(*d, what);
      if (!n.ok()) {
        status = n.error();
        return;
      }
      v.set_sym(SymDim(*n));
    }
  });
  LATHE_RETURN_IF_ERROR(status);
  Rewriter rw(ep);
  for (Node* n : ep.graph().nodes_snapshot()) {
    std::vector<NamedArgument> inputs = n->inputs();
    bool changed = false;
    for (NamedArgument& a : inputs) changed = literalise(a.arg) || changed;
    if (changed) LATHE_RETURN_IF_ERROR(rw.retarget(n, n->op_target(), std::move(inputs)));
  }
  return Status::Ok();
}

}  // namespace lathe
