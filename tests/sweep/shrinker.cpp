#include "sweep/shrinker.h"

#include <algorithm>

namespace lathe::sweep {

namespace {

bool used(const MethodSpec& m, int v) {
  for (const OpSpec& op : m.ops) {
    if (std::find(op.args.begin(), op.args.end(), v) != op.args.end()) return true;
  }
  return std::find(m.outputs.begin(), m.outputs.end(), v) != m.outputs.end();
}

// Removes value v (unused) and renumbers the later ones.
void erase_value(MethodSpec& m, int v) {
  const int n_in = static_cast<int>(m.inputs.size());
  if (v < n_in) m.inputs.erase(m.inputs.begin() + v);
  else m.ops.erase(m.ops.begin() + (v - n_in));
  auto renumber = [v](int& x) {
    if (x > v) --x;
  };
  for (OpSpec& op : m.ops) std::for_each(op.args.begin(), op.args.end(), renumber);
  std::for_each(m.outputs.begin(), m.outputs.end(), renumber);
}

void replace_uses(MethodSpec& m, int from, int to) {
  for (OpSpec& op : m.ops) std::replace(op.args.begin(), op.args.end(), from, to);
  std::replace(m.outputs.begin(), m.outputs.end(), from, to);
}

// Every value nobody reads (an op's state update counts as a reader).
bool drop_dead(MethodSpec& m) {
  bool changed = false;
  for (int v = m.value_count() - 1; v >= 0; --v) {
    const int n_in = static_cast<int>(m.inputs.size());
    if (used(m, v)) continue;
    if (v >= n_in && m.ops[v - n_in].kind == OpKind::StateUpdate) continue;
    if (v < n_in && m.inputs.size() == 1) continue;
    erase_value(m, v);
    changed = true;
  }
  return changed;
}

// Parameters that are sizes, per op kind (index into OpSpec::p).
std::vector<size_t> size_params(OpKind k) {
  switch (k) {
    case OpKind::Linear: case OpKind::Addmm: case OpKind::Mm: case OpKind::Bmm: return {0};
    case OpKind::Conv2d: return {0, 1, 2, 3, 4};
    case OpKind::MaxPool: return {0, 1, 2, 3};
    case OpKind::AvgPool: return {0, 1, 2};
    case OpKind::Cat: return {2};
    default: return {};
  }
}

class Shrinker {
 public:
  Shrinker(const StillFails& f, int max_attempts) : still_fails_(f), max_(max_attempts) {}

  ShrinkResult run(ProgramSpec spec) {
    best_ = std::move(spec);
    bool progress = true;
    while (progress && attempts_ < max_) {
      progress = false;
      progress |= pass_structure();
      progress |= pass_simplify();
      progress |= pass_sizes();
    }
    return ShrinkResult{std::move(best_), attempts_, accepted_};
  }

 private:
  bool attempt(ProgramSpec candidate) {
    if (attempts_ >= max_) return false;
    ++attempts_;
    if (!still_fails_(candidate)) return false;
    best_ = std::move(candidate);
    ++accepted_;
    return true;
  }

  bool pass_structure() {
    bool any = false;
    // A whole method.
    for (size_t i = 0; best_.methods.size() > 1 && i < best_.methods.size(); ++i) {
      ProgramSpec c = best_;
      c.methods.erase(c.methods.begin() + static_cast<long>(i));
      if (attempt(std::move(c))) { any = true; --i; }
    }
    for (size_t mi = 0; mi < best_.methods.size(); ++mi) {
      {  // dead code first: one candidate
        ProgramSpec c = best_;
        if (drop_dead(c.methods[mi]) && attempt(std::move(c))) any = true;
      }
      // An output, then what only it kept alive.
      for (size_t o = 0; best_.methods[mi].outputs.size() > 1 && o < best_.methods[mi].outputs.size(); ++o) {
        ProgramSpec c = best_;
        c.methods[mi].outputs.erase(c.methods[mi].outputs.begin() + static_cast<long>(o));
        drop_dead(c.methods[mi]);
        if (attempt(std::move(c))) { any = true; --o; }
      }
      // An output moved to another op's value (what a side effect kept alive).
      for (size_t o = 0; o < best_.methods[mi].outputs.size(); ++o) {
        for (int v = static_cast<int>(best_.methods[mi].inputs.size()); v < best_.methods[mi].value_count(); ++v) {
          if (v == best_.methods[mi].outputs[o]) continue;
          ProgramSpec c = best_;
          c.methods[mi].outputs[o] = v;
          drop_dead(c.methods[mi]);
          if (op_count(c) >= op_count(best_)) continue;
          if (attempt(std::move(c))) { any = true; break; }
        }
      }
      // A state update nobody reads (drop_dead keeps them: they write a buffer).
      for (int v = best_.methods[mi].value_count() - 1; v >= static_cast<int>(best_.methods[mi].inputs.size()); --v) {
        const MethodSpec& m = best_.methods[mi];
        if (v >= m.value_count() || used(m, v)) continue;
        ProgramSpec c = best_;
        erase_value(c.methods[mi], v);
        drop_dead(c.methods[mi]);
        if (attempt(std::move(c))) any = true;
      }
      // Bypass an op: its readers read one of its operands instead (or it
      // becomes an output's replacement), then it is dropped.
      for (int v = best_.methods[mi].value_count() - 1; v >= static_cast<int>(best_.methods[mi].inputs.size()); --v) {
        const MethodSpec& m = best_.methods[mi];
        if (v >= m.value_count()) continue;
        const OpSpec& op = m.ops[v - m.inputs.size()];
        for (int a : op.args) {
          ProgramSpec c = best_;
          replace_uses(c.methods[mi], v, a);
          drop_dead(c.methods[mi]);
          if (attempt(std::move(c))) { any = true; break; }
        }
      }
    }
    return any;
  }

  bool pass_simplify() {
    bool any = false;
    for (size_t mi = 0; mi < best_.methods.size(); ++mi) {
      for (size_t i = 0; i < best_.methods[mi].ops.size(); ++i) {
        if (best_.methods[mi].ops[i].variant != 0) {
          ProgramSpec c = best_;
          c.methods[mi].ops[i].variant = 0;
          any |= attempt(std::move(c));
        }
        for (size_t w = 0; w < best_.methods[mi].ops[i].weights.size(); ++w) {
          const WeightKind k = best_.methods[mi].ops[i].weights[w];
          if (k == WeightKind::Parameter || best_.methods[mi].ops[i].kind == OpKind::StateUpdate) continue;
          ProgramSpec c = best_;
          c.methods[mi].ops[i].weights[w] = WeightKind::Parameter;
          any |= attempt(std::move(c));
        }
      }
    }
    return any;
  }

  // Tries v -> 1, v / 2, v - 1 through `slot`; true if any was kept.
  template <typename Slot>
  bool smaller(Slot slot, int64_t floor) {
    const int64_t v = slot(best_);
    for (int64_t nv : {floor, v / 2, v - 1}) {
      if (nv < floor || nv >= slot(best_)) continue;
      ProgramSpec c = best_;
      slot(c) = nv;
      if (attempt(std::move(c))) return true;
    }
    return false;
  }

  bool pass_sizes() {
    bool any = false;
    for (size_t mi = 0; mi < best_.methods.size(); ++mi) {
      for (size_t i = 0; i < best_.methods[mi].inputs.size(); ++i) {
        for (size_t d = 0; d < best_.methods[mi].inputs[i].size(); ++d) {
          any |= smaller([&](ProgramSpec& s) -> int64_t& { return s.methods[mi].inputs[i][d]; }, 1);
        }
      }
      for (size_t i = 0; i < best_.methods[mi].ops.size(); ++i) {
        for (size_t k : size_params(best_.methods[mi].ops[i].kind)) {
          if (k >= best_.methods[mi].ops[i].p.size()) continue;
          const int64_t floor = (best_.methods[mi].ops[i].kind == OpKind::Conv2d && k == 3) ||
                                        (best_.methods[mi].ops[i].kind != OpKind::Conv2d && k == 2 &&
                                         best_.methods[mi].ops[i].kind != OpKind::Cat)
                                    ? 0
                                    : 1;
          any |= smaller([&](ProgramSpec& s) -> int64_t& { return s.methods[mi].ops[i].p[k]; }, floor);
        }
      }
    }
    return any;
  }

  const StillFails& still_fails_;
  int max_;
  int attempts_ = 0;
  int accepted_ = 0;
  ProgramSpec best_;
};

}  // namespace

ShrinkResult shrink(ProgramSpec spec, const StillFails& still_fails, int max_attempts) {
  return Shrinker(still_fails, max_attempts).run(std::move(spec));
}

}  // namespace lathe::sweep
