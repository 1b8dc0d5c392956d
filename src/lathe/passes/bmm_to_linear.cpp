// bmm_to_linear
//
//   BEFORE (torch.einsum("bsh,oh->bso", x, w), decomposed)      AFTER
//
//   w [N, K] ─► unsqueeze ─► permute ─► view [1, K, N] ─┐
//   x' [1, M, K] ───────────────────────────────────────┴► bmm    x' ─┬─► linear(x', w)
//                                                                  w ─┘
//   bmm(x, expand(permute(w, [1, 0]), [B, K, N]))  ->  linear(x, w)
//
// A bmm is a linear when every batch slice of its second operand is the
// same matrix, w^T for a 2-D weight w: linear(x [B, M, K], w [N, K]) is
// then exactly bmm(x, B) — one matrix per batch, the same one. einsum with
// a weight operand and the 3-D-linear decomposition of some PyTorch
// versions write it this way, and neither addmm_mm_to_linear nor a backend
// sees a linear in it; after this pass the weight is prepacked once.
//
// How B is proven to be w^T broadcast: the pass walks from B back through
// layout-only ops (expand, view / reshape / _unsafe_view, (un)squeeze,
// t / permute / transpose, clone / contiguous / alias) to a value the one
// constness analysis calls a compile-time constant weight, and replays the
// walk on the weight's strides: B[b][k][n] = w_flat[b*sB + k*sK + n*sN].
// The rewrite needs sB = 0 (or a batch of 1), sK = 1 and sN = K with w of
// shape [N, K]. Anything else is kept with the reason: a layout that
// cannot be replayed (a view that would copy, symbolic sizes outside a
// broadcast dim), B = w itself ([K, N]: x @ w, whose linear would need w
// transposed — a copy of the weight this pass does not make), a runtime
// operand anywhere on the walk (the guard of linear-rewrite.md §2: a linear
// whose weight is computed at run time is what made the Vulkan delegate
// abort at load).
//
// The bmm node becomes the linear in place (Rewriter::retarget): its value
// keeps its name, metadata and every use, output specs included. The
// layout ops left without users are remove_dead_code's.
#include "lathe/passes/bmm_to_linear.h"

#include <optional>

#include "lathe/analysis/constness.h"
#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

namespace arg = ops::arg;

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

// Where each element of a value lives in the weight: value[i] = w_flat[sum
// i_d * strides[d]]. Sizes may be symbolic only where the stride is 0 (a
// broadcast dim: every index reads the same elements).
struct Layout {
  std::vector<SymDim> sizes;
  std::vector<int64_t> strides;
};

std::optional<std::vector<int64_t>> concrete(const std::vector<SymDim>& sizes) {
  std::vector<int64_t> out;
  for (const SymDim& d : sizes) {
    if (!d.is_concrete()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

int64_t normalized_dim(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

// The strides of a view of `in` with sizes `to`, or nullopt where a view
// would have to copy (PyTorch's own rule: each run of merged dims must be
// contiguous within itself).
std::optional<Layout> reshaped(const Layout& in, const std::vector<int64_t>& to) {
  auto from = concrete(in.sizes);
  if (!from) return std::nullopt;
  int64_t from_numel = 1, to_numel = 1;
  for (int64_t d : *from) from_numel *= d;
  for (int64_t d : to) to_numel *= d;
  if (from_numel != to_numel || from_numel == 0) return std::nullopt;
  Layout out{std::vector<SymDim>(to.begin(), to.end()), std::vector<int64_t>(to.size(), 0)};
  if (from->empty()) return out;  // a scalar viewed as [1, 1, ...]: every stride is immaterial
  int64_t view_d = static_cast<int64_t>(to.size()) - 1;
  int64_t chunk_stride = in.strides.back(), chunk_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(from->size()) - 1; d >= 0; --d) {
    chunk_numel *= (*from)[d];
    const bool chunk_ends = d == 0 || ((*from)[d - 1] != 1 && in.strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || to[view_d] == 1)) {
      out.strides[view_d] = view_numel * chunk_stride;
      view_numel *= to[view_d];
      --view_d;
    }
    if (view_numel != chunk_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = in.strides[d - 1];
      chunk_numel = view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// expand(in, size): new leading dims and size-1 dims made larger read the
// same elements for every index (stride 0). The output's sizes come from its
// metadata (they may be symbolic); a literal size argument must agree.
std::optional<Layout> expanded(const Node& n, const Layout& in) {
  const Value* y = n.defined_values().empty() ? nullptr : n.defined_values()[0];
  if (!y || !y->meta() || y->meta()->sizes.size() < in.sizes.size()) return std::nullopt;
  const std::vector<SymDim>& to = y->meta()->sizes;
  const size_t lead = to.size() - in.sizes.size();
  Layout out{to, std::vector<int64_t>(to.size(), 0)};
  for (size_t i = 0; i < in.sizes.size(); ++i) {
    const SymDim& from = in.sizes[i];
    if (from == to[lead + i]) {
      out.strides[lead + i] = in.strides[i];
    } else if (!(from.is_concrete() && from.value() == 1)) {
      return std::nullopt;  // only a size-1 dim broadcasts
    }
  }
  if (auto size = int_list_literal(n.input(arg::size))) {
    if (size->size() != to.size()) return std::nullopt;
    for (size_t i = 0; i < to.size(); ++i) {
      if ((*size)[i] == -1 && i >= lead) continue;
      if (!(to[i] == SymDim((*size)[i]))) return std::nullopt;
    }
  }
  return out;
}

std::optional<Layout> permuted(const Layout& in, const std::vector<int64_t>& perm) {
  if (perm.size() != in.sizes.size()) return std::nullopt;
  Layout out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.sizes.size())) return std::nullopt;
    out.sizes.push_back(in.sizes[p]);
    out.strides.push_back(in.strides[p]);
  }
  return out;
}

std::optional<Layout> unsqueezed(const Node& n, Layout in) {
  auto dim = literal_int(n, arg::dim);
  if (!dim) return std::nullopt;
  const int64_t d = normalized_dim(*dim, in.sizes.size() + 1);
  if (d < 0 || d > static_cast<int64_t>(in.sizes.size())) return std::nullopt;
  in.sizes.insert(in.sizes.begin() + d, SymDim(1));
  in.strides.insert(in.strides.begin() + d, 0);
  return in;
}

// squeeze.default drops every size-1 dim; squeeze.dim / .dims the named
// ones that are 1 (a named dim of another size stays, as in PyTorch).
std::optional<Layout> squeezed(const Node& n, const Layout& in) {
  std::vector<bool> named(in.sizes.size(), n.op_target() == ops::aten::squeeze);
  if (n.op_target() != ops::aten::squeeze) {
    std::optional<std::vector<int64_t>> dims;
    if (n.op_target() == ops::aten::squeeze_dim) {
      if (auto d = literal_int(n, arg::dim)) dims = std::vector<int64_t>{*d};
    } else {
      dims = literal_int_list(n, arg::dim);
    }
    if (!dims) return std::nullopt;
    for (int64_t d : *dims) {
      const int64_t k = normalized_dim(d, in.sizes.size());
      if (k < 0 || k >= static_cast<int64_t>(named.size())) return std::nullopt;
      named[k] = true;
    }
  }
  Layout out;
  for (size_t i = 0; i < in.sizes.size(); ++i) {
    if (named[i] && in.sizes[i].is_concrete() && in.sizes[i].value() == 1) continue;
    out.sizes.push_back(in.sizes[i]);
    out.strides.push_back(in.strides[i]);
  }
  return out;
}

// A view whose literal size may hold one -1 (the rest of the elements).
std::optional<Layout> viewed(const Node& n, const Layout& in) {
  const bool reshape = n.op_target() == ops::aten::reshape;
  auto size = int_list_literal(n.input(reshape ? arg::shape : arg::size));
  auto from = concrete(in.sizes);
  if (!size || !from) return std::nullopt;
  int64_t known = 1, numel = 1, infer = -1;
  for (int64_t d : *from) numel *= d;
  for (size_t i = 0; i < size->size(); ++i) {
    if ((*size)[i] == -1 && infer < 0) {
      infer = static_cast<int64_t>(i);
    } else if ((*size)[i] < 0) {
      return std::nullopt;
    } else {
      known *= (*size)[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known) return std::nullopt;
    (*size)[infer] = numel / known;
  }
  return reshaped(in, *size);
}

bool is_identity_layout(OpTarget t) {
  return t == ops::aten::clone || t == ops::aten::contiguous || t == ops::aten::alias || t == ops::aten::detach;
}

// One layout op applied to `in`; nullopt if `n` is not one this pass can
// replay, or its arguments are not literal.
std::optional<Layout> replay(const Node& n, const Layout& in) {
  const OpTarget t = n.op_target();
  if (auto perm = ops::permutation_of(n)) return permuted(in, *perm);
  if (t == ops::aten::unsqueeze) return unsqueezed(n, in);
  if (t == ops::aten::squeeze || t == ops::aten::squeeze_dim || t == ops::aten::squeeze_dims) return squeezed(n, in);
  if (t == ops::aten::view || t == ops::aten::_unsafe_view || t == ops::aten::reshape) return viewed(n, in);
  if (t == ops::aten::expand || t == ops::aten::expand_copy) return expanded(n, in);
  if (is_identity_layout(t)) return in;
  return std::nullopt;
}

// What the walk from mat2 found: the constant weight it rests on and mat2's
// layout over it, or why not.
struct Walk {
  Value* weight = nullptr;
  Layout layout;
  std::string refused;
};

Walk walk_to_weight(const Constness& k, Value* mat2) {
  constexpr size_t kMaxChain = 32;
  std::vector<const Node*> chain;  // mat2's producer first
  Value* v = mat2;
  while (!k.is_constant_weight(v)) {
    const Node* p = v->producer();
    Value* self = p ? tensor_input(*p, arg::self) : nullptr;
    if (!p || !self || !ops::is_layout_only(p->target()) || chain.size() == kMaxChain) {
      Walk refused;
      refused.refused = "mat2 " + quoted(mat2) + (v == mat2 ? " " : " rests on " + quoted(v) + ", which ") + k.explain(v);
      return refused;
    }
    chain.push_back(p);
    v = self;
  }
  Walk w;
  w.weight = v;
  if (!v->meta() || v->meta()->sizes.size() != 2 || !concrete(v->meta()->sizes)) {
    w.refused = "weight " + quoted(v) + " is not a 2-D tensor of known sizes";
    return w;
  }
  w.layout.sizes = v->meta()->sizes;
  w.layout.strides = {v->meta()->sizes[1].value(), 1};
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    std::optional<Layout> next = replay(**it, w.layout);
    if (!next) {
      w.refused = "mat2 " + quoted(mat2) + " is reached from weight " + quoted(v) + " through " + (*it)->op_name() + " '" +
                  (*it)->name() + "', which this pass cannot replay as a view of the weight";
      return w;
    }
    w.layout = std::move(*next);
  }
  return w;
}

bool is_one(const SymDim& d) { return d.is_concrete() && d.value() == 1; }

// Is mat2 [B, K, N] the weight w [N, K] transposed in every batch slice?
// "" if so, else why not.
std::string check_broadcast_transpose(const Walk& w, const Value* mat2) {
  const Layout& l = w.layout;
  if (l.sizes.size() != 3) return "mat2 " + quoted(mat2) + " is not 3-D";
  const int64_t n_out = w.weight->meta()->sizes[0].value(), k_in = w.weight->meta()->sizes[1].value();
  if (!(is_one(l.sizes[0]) || l.strides[0] == 0)) {
    return "mat2 " + quoted(mat2) + " holds a different slice of weight " + quoted(w.weight) + " per batch";
  }
  const bool k_ok = l.sizes[1] == SymDim(k_in) && (k_in == 1 || l.strides[1] == 1);
  const bool n_ok = l.sizes[2] == SymDim(n_out) && (n_out == 1 || l.strides[2] == k_in);
  if (k_ok && n_ok) return "";
  const bool is_weight = l.sizes[1] == SymDim(n_out) && l.sizes[2] == SymDim(k_in) && (n_out == 1 || l.strides[1] == k_in) &&
                         (k_in == 1 || l.strides[2] == 1);
  if (is_weight) {
    return "mat2 " + quoted(mat2) + " is weight " + quoted(w.weight) +
           " itself (x @ w): a linear would need it transposed, a copy of the weight";
  }
  return "mat2 " + quoted(mat2) + " is not weight " + quoted(w.weight) + " transposed";
}

Result<bool> rewrite_all(Rewriter& rw, const Constness& k, PassContext& ctx) {
  bool changed = false;
  // retarget changes a node in place and never inserts or erases one.
  for (Node* n : rw.graph().nodes()) {
    if (n->op_target() != ops::aten::bmm) continue;
    Value* x = tensor_input(*n, arg::self);
    Value* mat2 = tensor_input(*n, arg::mat2);
    const std::string head = "bmm '" + n->name() + "' ";
    if (!x || !mat2 || !mat2->meta()) {
      ctx.kept(n->name(), head + "kept: its tensor arguments are not where the aten schema puts them");
      continue;
    }
    Walk w = walk_to_weight(k, mat2);
    std::string why = w.refused.empty() ? check_broadcast_transpose(w, mat2) : w.refused;
    if (!why.empty()) {
      ctx.kept(n->name(), head + "kept: " + why);
      continue;
    }
    Value* weight = w.weight;
    std::vector<NamedArgument> args;
    args.push_back(NamedArgument{std::string(arg::input), TensorRef{x}, ArgKind::Positional});
    args.push_back(NamedArgument{std::string(arg::weight), TensorRef{weight}, ArgKind::Positional});
    const std::string node = n->name();
    LATHE_RETURN_IF_ERROR(rw.retarget(n, ops::aten::linear, std::move(args)));
    changed = true;
    if (ctx.record_rewrites())
      ctx.rewritten(node, head + "rewritten to linear (mat2 is weight " + quoted(weight) + ", " + k.describe(weight) +
                              ", transposed and broadcast over the batch)");
  }
  return changed;
}

}  // namespace

Result<bool> BmmToLinear::run(ExportedProgram& program, PassContext& ctx) {
  Constness k(program);
  Rewriter rw(program);
  return rewrite_all(rw, k, ctx);
}

}  // namespace lathe
