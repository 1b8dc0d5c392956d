#include "sweep/op_shapes.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

namespace lathe::sweep {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

std::vector<int64_t> Shape::effective_strides() const {
  if (!strides.empty()) return strides;
  std::vector<int64_t> s(d.size(), 1);
  for (int i = rank() - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

bool Shape::contiguous() const {
  if (strides.empty()) return true;
  int64_t want = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (d[i] != 1 && strides[i] != want) return false;
    want *= d[i];
  }
  return true;
}

namespace {

// PyTorch's computeStride: the strides of `shape` as a view of a tensor with
// `old` sizes and `old_strides`, or nothing if no view can express it.
std::optional<std::vector<int64_t>> view_strides(const std::vector<int64_t>& old, const std::vector<int64_t>& old_strides,
                                                 const std::vector<int64_t>& shape) {
  std::vector<int64_t> out(shape.size(), 1);
  if (old.empty()) return out;
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(old.size()) - 1; td >= 0; --td) {
    tensor_numel *= old[td];
    if (td == 0 || (old[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk_base = old_strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

int64_t conv_groups(int64_t mode, int64_t channels) {
  if (mode == 1) return channels;
  if (mode == 2) {
    for (int64_t g : {4, 3, 2}) {
      if (channels % g == 0) return g;
    }
  }
  return 1;
}

int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch: the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

Result<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) return make_error("shapes do not broadcast");
    out[i] = std::max(x, y);
  }
  return out;
}

namespace {

Error bad(const OpSpec& op, const std::string& why) { return Error(std::string(op_kind_name(op.kind)) + ": " + why); }

int64_t norm_dim(int64_t d, int rank) { return d < 0 ? d + rank : d; }

}  // namespace

Result<OpShapes> op_shapes(const OpSpec& op, const std::vector<Shape>& args) {
  OpShapes r;
  auto need = [&](size_t n_args, size_t n_p) -> Status {
    if (args.size() != n_args) return bad(op, "takes " + std::to_string(n_args) + " operand(s)");
    if (op.p.size() < n_p) return bad(op, "needs " + std::to_string(n_p) + " parameters");
    return Status::Ok();
  };
  const std::vector<int64_t> x = args.empty() ? std::vector<int64_t>{} : args[0].d;
  const int rank = static_cast<int>(x.size());
  const auto& p = op.p;
  auto weight = [&](std::vector<int64_t> s, bool positive = false) {
    r.weights.push_back(std::move(s));
    r.positive.push_back(positive);
  };
  switch (op.kind) {
    case OpKind::Linear: {
      LATHE_RETURN_IF_ERROR(need(1, 2));
      if (rank < 1 || p[0] < 1) return bad(op, "needs a tensor and out >= 1");
      weight({p[0], x.back()});
      if (p[1]) weight({p[0]});
      r.out.d = x;
      r.out.d.back() = p[0];
      break;
    }
    case OpKind::Addmm:
    case OpKind::Mm: {
      LATHE_RETURN_IF_ERROR(need(1, op.kind == OpKind::Addmm ? 3 : 2));
      if (rank != 2 || p[0] < 1) return bad(op, "needs a 2-D operand and out >= 1");
      weight(p[1] == 2 ? std::vector<int64_t>{x[1], p[0]} : std::vector<int64_t>{p[0], x[1]});
      if (op.kind == OpKind::Addmm) weight({p[0]});
      r.out.d = {x[0], p[0]};
      break;
    }
    case OpKind::Bmm: {
      LATHE_RETURN_IF_ERROR(need(1, 1));
      if (rank != 3 || p[0] < 1) return bad(op, "needs a 3-D operand and out >= 1");
      weight({x[0], x[2], p[0]});
      r.out.d = {x[0], x[1], p[0]};
      break;
    }
    case OpKind::Binary: {
      if (p.size() < 5) return bad(op, "needs 5 parameters");
      if (p[0] < 0 || p[0] > 3) return bad(op, "unknown binary op");
      if (p[1] == 0) {
        LATHE_RETURN_IF_ERROR(need(2, 5));
        if (p[0] == 3) return bad(op, "divides by an activation");
        LATHE_ASSIGN_OR_RETURN(r.out.d, broadcast_shapes(x, args[1].d));
      } else {
        LATHE_RETURN_IF_ERROR(need(1, 5));
        r.out.d = x;
        if (p[1] == 1) {
          if (p[3] < 0 || p[3] > rank) return bad(op, "drops more dims than the operand has");
          std::vector<int64_t> w(x.begin() + p[3], x.end());
          for (size_t i = 0; i < w.size(); ++i) {
            if (p[2] & (int64_t{1} << i)) w[i] = 1;
          }
          weight(w, p[0] == 3);
        }
      }
      break;
    }
    case OpKind::Unary:
      LATHE_RETURN_IF_ERROR(need(1, 1));
      if (p[0] < 0 || p[0] >= kUnaryOps) return bad(op, "unknown unary op");
      r.out.d = x;
      break;
    case OpKind::Conv2d: {
      LATHE_RETURN_IF_ERROR(need(1, 7));
      if (rank != 4) return bad(op, "needs a 4-D operand");
      const int64_t g = conv_groups(p[5], x[1]);
      const int64_t out = g * p[0];
      if (p[0] < 1 || p[1] < 1 || p[2] < 1 || p[3] < 0 || p[4] < 1) return bad(op, "bad window");
      const int64_t ho = window_out(x[2], p[1], p[2], p[3], p[4], false);
      const int64_t wo = window_out(x[3], p[1], p[2], p[3], p[4], false);
      if (ho < 1 || wo < 1) return bad(op, "the kernel does not fit");
      weight({out, x[1] / g, p[1], p[1]});
      if (p[6]) weight({out});
      r.out.d = {x[0], out, ho, wo};
      break;
    }
    case OpKind::BatchNorm: {
      LATHE_RETURN_IF_ERROR(need(1, 1));
      if (rank < 2 || rank > 4) return bad(op, "needs a 2-D to 4-D operand");
      for (int i = 0; i < 4; ++i) weight({x[1]}, i == 3);
      r.out.d = x;
      break;
    }
    case OpKind::MaxPool:
    case OpKind::AvgPool: {
      const bool max = op.kind == OpKind::MaxPool;
      LATHE_RETURN_IF_ERROR(need(1, 5));
      if (rank != 4) return bad(op, "needs a 4-D operand");
      const int64_t k = p[0], s = p[1], pad = p[2], dil = max ? p[3] : 1;
      const bool ceil_mode = max ? p[4] != 0 : p[3] != 0;
      if (k < 1 || s < 1 || pad < 0 || dil < 1 || pad > k / 2) return bad(op, "bad window");
      const int64_t ho = window_out(x[2], k, s, pad, dil, ceil_mode);
      const int64_t wo = window_out(x[3], k, s, pad, dil, ceil_mode);
      if (ho < 1 || wo < 1) return bad(op, "the window does not fit");
      r.out.d = {x[0], x[1], ho, wo};
      break;
    }
    case OpKind::LayerNorm: {
      LATHE_RETURN_IF_ERROR(need(1, 3));
      if (p[0] < 1 || p[0] > rank) return bad(op, "normalizes more dims than the operand has");
      std::vector<int64_t> ns(x.end() - p[0], x.end());
      if (p[1]) weight(ns);
      if (p[2]) weight(ns);
      r.out.d = x;
      break;
    }
    case OpKind::Softmax:
      LATHE_RETURN_IF_ERROR(need(1, 1));
      if (rank < 1 || p[0] < -rank || p[0] >= rank) return bad(op, "dim out of range");
      r.out.d = x;
      break;
    case OpKind::Permute: {
      LATHE_RETURN_IF_ERROR(need(1, 0));
      if (static_cast<int>(p.size()) != rank) return bad(op, "permutation length differs from rank");
      std::vector<int64_t> seen(p);
      std::sort(seen.begin(), seen.end());
      for (int i = 0; i < rank; ++i) {
        if (seen[i] != i) return bad(op, "not a permutation");
      }
      const auto xs = args[0].effective_strides();
      for (int64_t i : p) {
        r.out.d.push_back(x[i]);
        r.out.strides.push_back(xs[i]);
      }
      break;
    }
    case OpKind::Transpose: {
      LATHE_RETURN_IF_ERROR(need(1, 2));
      if (op.variant == 1 && rank != 2) return bad(op, "t needs a 2-D operand");
      // t swaps the two dims whatever p says.
      const int64_t a = op.variant == 1 ? 0 : norm_dim(p[0], rank), b = op.variant == 1 ? 1 : norm_dim(p[1], rank);
      if (a < 0 || a >= rank || b < 0 || b >= rank) return bad(op, "dim out of range");
      r.out.d = x;
      r.out.strides = args[0].effective_strides();
      std::swap(r.out.d[a], r.out.d[b]);
      std::swap(r.out.strides[a], r.out.strides[b]);
      break;
    }
    case OpKind::Reshape: {
      LATHE_RETURN_IF_ERROR(need(1, 3));
      if (op.variant == 0 && !args[0].contiguous()) return bad(op, "view of a non-contiguous operand");
      const int64_t a = p[1], b = p[2];
      if (p[0] == 0) {
        if (a < 0 || b <= a || b >= rank) return bad(op, "bad merge range");
        r.out.d.assign(x.begin(), x.begin() + a);
        int64_t m = 1;
        for (int64_t i = a; i <= b; ++i) m *= x[i];
        r.out.d.push_back(m);
        r.out.d.insert(r.out.d.end(), x.begin() + b + 1, x.end());
      } else if (p[0] == 1) {
        if (a < 0 || a >= rank || b < 1 || x[a] % b != 0) return bad(op, "bad split");
        r.out.d = x;
        r.out.d[a] = x[a] / b;
        r.out.d.insert(r.out.d.begin() + a, b);
      } else {
        r.out.d = {args[0].numel()};
      }
      // A view keeps the operand's memory when it can (reshape copies otherwise).
      if (auto vs = view_strides(x, args[0].effective_strides(), r.out.d)) r.out.strides = *vs;
      break;
    }
    case OpKind::Cat: {
      if (p.size() < 3) return bad(op, "needs 3 parameters");
      if (rank < 1) return bad(op, "needs a tensor");
      const int64_t d = norm_dim(p[0], rank);
      if (d < 0 || d >= rank) return bad(op, "dim out of range");
      r.out.d = x;
      if (p[1] == 0) {
        LATHE_RETURN_IF_ERROR(need(2, 3));
        const auto& y = args[1].d;
        if (static_cast<int>(y.size()) != rank) return bad(op, "ranks differ");
        for (int i = 0; i < rank; ++i) {
          if (i != d && x[i] != y[i]) return bad(op, "sizes differ off the cat dim");
        }
        r.out.d[d] += y[d];
      } else if (p[1] == 1) {
        LATHE_RETURN_IF_ERROR(need(1, 3));
        if (p[2] < 1) return bad(op, "bad size");
        std::vector<int64_t> w = x;
        w[d] = p[2];
        weight(w);
        r.out.d[d] += p[2];
      } else {
        LATHE_RETURN_IF_ERROR(need(1, 3));
        r.out.d[d] *= 2;
      }
      break;
    }
    case OpKind::Slice: {
      LATHE_RETURN_IF_ERROR(need(1, 4));
      const int64_t d = norm_dim(p[0], rank);
      if (d < 0 || d >= rank || p[1] < 0 || p[3] < 1) return bad(op, "bad slice");
      const int64_t end = std::min(p[2], x[d]);
      const int64_t len = end > p[1] ? (end - p[1] + p[3] - 1) / p[3] : 0;
      r.out.d = x;
      r.out.d[d] = len;
      r.out.strides = args[0].effective_strides();
      r.out.strides[d] *= p[3];
      break;
    }
    case OpKind::Mean: {
      LATHE_RETURN_IF_ERROR(need(1, 2));
      if (p[0] <= 0 || p[0] >= (int64_t{1} << rank)) return bad(op, "bad dim mask");
      for (int i = 0; i < rank; ++i) {
        if (p[0] & (int64_t{1} << i)) {
          if (p[1]) r.out.d.push_back(1);
        } else {
          r.out.d.push_back(x[i]);
        }
      }
      break;
    }
    case OpKind::StateUpdate:
      LATHE_RETURN_IF_ERROR(need(1, 0));
      if (rank < 1) return bad(op, "needs a tensor");
      weight({x.back()});
      r.out.d = {x.back()};
      break;
    case OpKind::Unsqueeze:
      LATHE_RETURN_IF_ERROR(need(1, 1));
      if (p[0] < 0 || p[0] > rank) return bad(op, "dim out of range");
      r.out.d = x;
      r.out.d.insert(r.out.d.begin() + p[0], 1);
      r.out.strides = args[0].effective_strides();
      r.out.strides.insert(r.out.strides.begin() + p[0], p[0] < rank ? x[p[0]] * r.out.strides[p[0]] : 1);
      break;
  }
  for (int64_t s : r.out.d) {
    if (s < 1) return bad(op, "empty output");
  }
  if (op.weights.size() != r.weights.size()) {
    return bad(op, "owns " + std::to_string(r.weights.size()) + " tensor(s), recipe gives " +
                       std::to_string(op.weights.size()) + " kind(s)");
  }
  if (op.kind == OpKind::StateUpdate && op.weights[0] != WeightKind::MutableBuffer) {
    return bad(op, "its buffer must be mutable");
  }
  return r;
}

}  // namespace lathe::sweep
