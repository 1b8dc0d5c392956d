#include "sweep/program_generator.h"

#include <algorithm>
#include <limits>

#include "lathe/core/splitmix64.h"
#include "sweep/op_shapes.h"

namespace lathe::sweep {

namespace {

struct Rng : SplitMix64 {
  int64_t range(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[next() % v.size()]; }
};

// Relative frequencies, in OpKind order.
constexpr int kOpWeights[kOpKinds] = {10, 10, 6, 4, 12, 10, 10, 6, 4, 4, 5, 5, 4, 4, 5, 4, 4, 4, 3, 3};

OpKind pick_kind(Rng& rng) {
  int total = 0;
  for (int w : kOpWeights) total += w;
  int r = static_cast<int>(rng.next() % static_cast<uint64_t>(total));
  for (int k = 0; k < kOpKinds; ++k) {
    if ((r -= kOpWeights[k]) < 0) return static_cast<OpKind>(k);
  }
  return OpKind::Unary;
}

WeightKind pick_weight(Rng& rng, bool positive) {
  // Parameters most often; every other kind regularly.
  static const std::vector<WeightKind> kinds = {
      WeightKind::Parameter,       WeightKind::Parameter,       WeightKind::Buffer,
      WeightKind::Constant,        WeightKind::MutableBuffer,   WeightKind::UserInput,
      WeightKind::FoldedFromState, WeightKind::RuntimeComputed};
  for (;;) {
    WeightKind k = rng.pick(kinds);
    if (positive && k == WeightKind::UserInput) continue;  // random inputs are not positive
    return k;
  }
}

class MethodGenerator {
 public:
  MethodGenerator(Rng& rng, const GeneratorOptions& o) : rng_(rng), o_(o) {}

  MethodSpec run(const std::string& name) {
    m_.name = name;
    const int n_inputs = static_cast<int>(rng_.range(1, 2));
    for (int i = 0; i < n_inputs; ++i) add_input(i == 0 && rng_.chance(50) ? 4 : static_cast<int>(rng_.range(1, 4)));
    const int n_ops = static_cast<int>(rng_.range(1, o_.max_ops));
    for (int i = 0; i < n_ops; ++i) {
      for (int attempt = 0; attempt < 40; ++attempt) {
        if (try_add_op()) break;
      }
    }
    pick_outputs();
    return std::move(m_);
  }

 private:
  void add_input(int rank) {
    std::vector<int64_t> s;
    switch (rank) {
      case 1: s = {rng_.range(1, 16)}; break;
      case 2: s = {rng_.range(1, 6), rng_.range(1, 16)}; break;
      case 3: s = {rng_.range(1, 3), rng_.range(1, 6), rng_.range(1, 12)}; break;
      default: s = {rng_.range(1, 2), rng_.range(1, 6), rng_.range(3, 10), rng_.range(3, 10)}; break;
    }
    m_.inputs.push_back(s);
    shapes_.push_back(Shape{s});
  }

  int pick_value() {
    const int n = static_cast<int>(shapes_.size());
    return rng_.chance(60) ? n - 1 : static_cast<int>(rng_.range(0, n - 1));
  }

  bool try_add_op() {
    OpSpec op;
    op.kind = pick_kind(rng_);
    const int a = pick_value();
    const Shape& xs = shapes_[a];
    const std::vector<int64_t>& x = xs.d;
    const int rank = xs.rank();
    op.args = {a};
    auto& p = op.p;
    auto weights = [&](size_t n) {
      for (size_t i = 0; i < n; ++i) op.weights.push_back(pick_weight(rng_, false));
    };
    switch (op.kind) {
      case OpKind::Linear:
        p = {rng_.range(1, 16), rng_.chance(70)};
        weights(p[1] ? 2 : 1);
        break;
      case OpKind::Addmm:
        p = {rng_.range(1, 16), rng_.chance(60) ? 0 : rng_.range(1, 2), rng_.chance(15)};
        weights(2);
        break;
      case OpKind::Mm:
        p = {rng_.range(1, 16), rng_.chance(60) ? 0 : rng_.range(1, 2)};
        weights(1);
        break;
      case OpKind::Bmm:
        p = {rng_.range(1, 8)};
        weights(1);
        break;
      case OpKind::Binary: {
        p = {rng_.range(0, 3), rng_.range(0, 2), 0, 0, rng_.chance(20)};
        if (p[1] == 0) {
          std::vector<int> partners;
          for (int v = 0; v < static_cast<int>(shapes_.size()); ++v) {
            if (broadcast_shapes(x, shapes_[v].d).ok()) partners.push_back(v);
          }
          if (p[0] == 3 || partners.empty()) p[1] = 1;
          else op.args.push_back(rng_.pick(partners));
        }
        if (p[1] == 1) {
          p[3] = rng_.range(0, rank);
          p[2] = rng_.range(0, (int64_t{1} << (rank - p[3])) - 1);
          op.weights.push_back(pick_weight(rng_, p[0] == 3));
        }
        break;
      }
      case OpKind::Unary:
        p = {rng_.range(0, kUnaryOps - 1)};
        break;
      case OpKind::Conv2d: {
        const int64_t mode = rng_.chance(60) ? 0 : rng_.range(1, 2);
        const int64_t k = rng_.range(1, 3);
        p = {rng_.range(1, mode == 1 ? 2 : 4), k, rng_.range(1, 2), rng_.range(0, 1), rng_.chance(20) ? 2 : 1, mode,
             rng_.chance(70)};
        op.variant = static_cast<int>(rng_.range(0, 1));
        weights(p[6] ? 2 : 1);
        break;
      }
      case OpKind::BatchNorm:
        p = {rng_.range(0, 1)};
        op.variant = static_cast<int>(rng_.range(0, 2));
        for (int i = 0; i < 4; ++i) op.weights.push_back(pick_weight(rng_, i == 3));
        break;
      case OpKind::MaxPool: {
        const int64_t k = rng_.range(1, 3);
        p = {k, rng_.range(1, 2), rng_.range(0, k / 2), rng_.chance(15) ? 2 : 1, rng_.chance(25)};
        op.variant = static_cast<int>(rng_.range(0, 1));
        break;
      }
      case OpKind::AvgPool: {
        const int64_t k = rng_.range(1, 3);
        p = {k, rng_.range(1, 2), rng_.range(0, k / 2), rng_.chance(20), rng_.chance(50)};
        break;
      }
      case OpKind::LayerNorm:
        p = {rng_.range(1, std::max(1, std::min(2, rank))), rng_.chance(70), rng_.chance(70)};
        weights(static_cast<size_t>(p[1] + p[2]));
        op.variant = static_cast<int>(rng_.range(0, 1));
        break;
      case OpKind::Softmax:
        p = {rank ? rng_.range(-rank, rank - 1) : 0};
        op.variant = static_cast<int>(rng_.range(0, 2));
        break;
      case OpKind::Permute: {
        for (int i = 0; i < rank; ++i) p.push_back(i);
        for (int i = rank - 1; i > 0; --i) std::swap(p[i], p[rng_.range(0, i)]);
        if (rank < 2) return false;
        break;
      }
      case OpKind::Transpose:
        if (rank < 2) return false;
        p = {rng_.range(0, rank - 1), rng_.range(-rank, rank - 1)};
        op.variant = rank == 2 && rng_.chance(40) ? 1 : 0;
        break;
      case OpKind::Reshape: {
        const int64_t mode = rng_.range(0, 2);
        if (mode == 0) {
          if (rank < 2) return false;
          const int64_t lo = rng_.range(0, rank - 2);
          p = {0, lo, rng_.range(lo + 1, rank - 1)};
        } else if (mode == 1) {
          if (rank < 1) return false;
          const int64_t d = rng_.range(0, rank - 1);
          std::vector<int64_t> divisors;
          for (int64_t f = 2; f <= x[d]; ++f) {
            if (x[d] % f == 0) divisors.push_back(f);
          }
          if (divisors.empty()) return false;
          p = {1, d, rng_.pick(divisors)};
        } else {
          p = {2, 0, 0};
        }
        op.variant = xs.contiguous() && rng_.chance(50) ? 0 : 1;
        break;
      }
      case OpKind::Cat: {
        if (rank < 1) return false;
        const int64_t d = rng_.range(-rank, rank - 1);
        p = {d, rng_.range(0, 2), rng_.range(1, 4)};
        if (p[1] == 0) {
          const int64_t nd = d < 0 ? d + rank : d;
          std::vector<int> partners;
          for (int v = 0; v < static_cast<int>(shapes_.size()); ++v) {
            const auto& y = shapes_[v].d;
            bool ok = static_cast<int>(y.size()) == rank;
            for (int i = 0; ok && i < rank; ++i) ok = i == nd || y[i] == x[i];
            if (ok) partners.push_back(v);
          }
          if (partners.empty()) p[1] = 2;
          else op.args.push_back(rng_.pick(partners));
        }
        if (p[1] == 1) op.weights.push_back(pick_weight(rng_, false));
        break;
      }
      case OpKind::Slice: {
        if (rank < 1) return false;
        const int64_t d = rng_.range(0, rank - 1);
        const int64_t start = rng_.range(0, x[d] - 1);
        const int64_t end = rng_.chance(20) ? std::numeric_limits<int64_t>::max() : rng_.range(start + 1, x[d]);
        p = {rng_.chance(30) ? d - rank : d, start, end, rng_.range(1, 2)};
        break;
      }
      case OpKind::Mean:
        if (rank < 1) return false;
        p = {rng_.range(1, (int64_t{1} << rank) - 1), rng_.chance(50)};
        break;
      case OpKind::StateUpdate:
        op.weights = {WeightKind::MutableBuffer};
        break;
      case OpKind::Unsqueeze:
        if (rank > 3) return false;
        p = {rng_.range(0, rank)};
        break;
    }
    auto shapes = [&] {
      std::vector<Shape> s;
      for (int v : op.args) s.push_back(shapes_[v]);
      return s;
    }();
    auto r = op_shapes(op, shapes);
    if (!r.ok() || r->out.numel() > o_.max_numel) return false;
    for (const auto& w : r->weights) {
      int64_t n = 1;
      for (int64_t s : w) n *= s;
      if (n > o_.max_numel) return false;
    }
    shapes_.push_back(r->out);
    m_.ops.push_back(std::move(op));
    return true;
  }

  void pick_outputs() {
    const int n_in = static_cast<int>(m_.inputs.size());
    const int n = m_.value_count();
    std::vector<bool> used(n, false);
    for (const OpSpec& op : m_.ops) {
      for (int a : op.args) used[a] = true;
    }
    std::vector<int> leaves;
    for (int v = n_in; v < n; ++v) {
      if (!used[v]) leaves.push_back(v);
    }
    // Up to three leaves; the others stay as dead code.
    for (int v : leaves) {
      if (m_.outputs.size() < 3 && (m_.outputs.empty() || rng_.chance(70))) m_.outputs.push_back(v);
    }
    if (m_.outputs.empty()) m_.outputs.push_back(n - 1);
    if (n > n_in && rng_.chance(20)) m_.outputs.push_back(static_cast<int>(rng_.range(n_in, n - 1)));  // an intermediate
    if (rng_.chance(5)) m_.outputs.push_back(m_.outputs.front());                                     // twice
    if (rng_.chance(3)) m_.outputs.push_back(0);                                                      // an input
  }

  Rng& rng_;
  const GeneratorOptions& o_;
  MethodSpec m_;
  std::vector<Shape> shapes_;
};

}  // namespace

ProgramSpec generate_program(uint64_t seed, const GeneratorOptions& options) {
  ProgramSpec spec;
  spec.seed = seed;
  Rng rng{seed * 0x2545f4914f6cdd1dull + 0x1234567};
  static const std::vector<std::string> names = {"forward", "encode", "decode", "step"};
  const bool two = rng.chance(options.second_method_percent);
  const size_t first = rng.chance(70) ? 0 : rng.next() % names.size();
  spec.methods.push_back(MethodGenerator(rng, options).run(names[first]));
  if (two) spec.methods.push_back(MethodGenerator(rng, options).run(names[(first + 1 + rng.next() % 3) % names.size()]));
  return spec;
}

}  // namespace lathe::sweep
