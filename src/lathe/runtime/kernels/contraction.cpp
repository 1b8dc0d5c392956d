#include "lathe/runtime/kernels/contraction.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

#include "lathe/core/int_arith.h"
#include "lathe/runtime/kernels/binary.h"
#include "lathe/runtime/kernels/gemm.h"
#include "lathe/runtime/kernels/reduce.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

// check_out, without the layout check for an empty output: with a zero in
// an inner dim, Tensor::is_contiguous() rejects the strides the executor
// allocates (Tensor::contiguous_strides), and nothing is written anyway.
Status check_result(const Tensor& out, DType dtype, const std::vector<int64_t>& sizes, const char* op) {
  if (numel_of(sizes) == 0 && out.dtype == dtype && out.sizes == sizes) return Status::Ok();
  return check_out(out, dtype, sizes, op);
}

// ---- labelled contraction (einsum, _trilinear, bilinear) -------------------

// A view whose dims each carry a distinct label, at the problem's label
// sizes (broadcast dims have stride 0).
struct Labeled {
  Tensor t;
  std::vector<int> labels;
};

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int64_t> sizes_of(const std::vector<int>& labels, const std::vector<int64_t>& label_sizes) {
  std::vector<int64_t> s;
  for (int l : labels) s.push_back(label_sizes[static_cast<size_t>(l)]);
  return s;
}

// Element offsets (sum of index * stride) of every index of `sizes`, in
// row-major order.
std::vector<int64_t> offsets(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  const int64_t n = numel_of(sizes);
  std::vector<int64_t> off(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::vector<int64_t> idx(sizes.size(), 0);
  int64_t cur = 0;
  for (int64_t i = 0; i < n; ++i) {
    off[static_cast<size_t>(i)] = cur;
    for (size_t d = sizes.size(); d-- > 0;) {
      cur += strides[d];
      if (++idx[d] < sizes[d]) break;
      cur -= strides[d] * sizes[d];
      idx[d] = 0;
    }
  }
  return off;
}

// The label sizes of a problem: per label the size every operand agrees on,
// size-1 dims broadcasting (1 for a label no operand has).
Result<std::vector<int64_t>> label_sizes(const std::vector<const Tensor*>& ops, const std::vector<std::vector<int>>& labels,
                                         size_t label_count, const char* op) {
  std::vector<int64_t> sizes(label_count, 1);
  for (size_t k = 0; k < ops.size(); ++k) {
    for (size_t d = 0; d < labels[k].size(); ++d) {
      const int l = labels[k][d];
      const int64_t s = ops[k]->sizes[d];
      for (size_t e = 0; e < d; ++e) {
        if (labels[k][e] == l && ops[k]->sizes[e] != s) {
          return make_error(std::string(op) + ": operand " + std::to_string(k) + " " + shape_string(ops[k]->sizes) +
                            " repeats a subscript over dims of sizes " + std::to_string(ops[k]->sizes[e]) + " and " +
                            std::to_string(s));
        }
      }
      int64_t& g = sizes[static_cast<size_t>(l)];
      if (s == 1) continue;
      if (g != 1 && g != s) {
        return make_error(std::string(op) + ": operand " + std::to_string(k) + " " + shape_string(ops[k]->sizes) +
                          " has size " + std::to_string(s) + " at dim " + std::to_string(d) +
                          ", which does not broadcast with size " + std::to_string(g) + " of another operand");
      }
      g = s;
    }
  }
  return sizes;
}

// Operand k as a Labeled view: repeated labels become the diagonal (their
// strides add), size-1 dims broadcast to the label's size.
Labeled label_operand(const Tensor& t, const std::vector<int>& labels, const std::vector<int64_t>& sizes) {
  Labeled v;
  std::vector<int64_t> st;
  for (size_t d = 0; d < labels.size(); ++d) {
    const int64_t stride = t.sizes[d] == 1 ? 0 : t.strides[d];
    auto it = std::find(v.labels.begin(), v.labels.end(), labels[d]);
    if (it == v.labels.end()) {
      v.labels.push_back(labels[d]);
      st.push_back(stride);
    } else {
      st[static_cast<size_t>(it - v.labels.begin())] += stride;
    }
  }
  v.t = make_view(t, sizes_of(v.labels, sizes), st, t.storage_offset);
  return v;
}

// out (contiguous, dims `order`) = v summed over its labels not in `order`;
// labels of `order` that v lacks broadcast.
template <typename T>
void arrange(const Labeled& v, const std::vector<int>& order, Tensor& out) {
  std::vector<int64_t> kept;
  for (int l : order) {
    auto it = std::find(v.labels.begin(), v.labels.end(), l);
    kept.push_back(it == v.labels.end() ? 0 : v.t.strides[static_cast<size_t>(it - v.labels.begin())]);
  }
  std::vector<int64_t> sum_sizes, sum_strides;
  for (size_t d = 0; d < v.labels.size(); ++d) {
    if (contains(order, v.labels[d])) continue;
    sum_sizes.push_back(v.t.sizes[d]);
    sum_strides.push_back(v.t.strides[d]);
  }
  if (sum_sizes.empty()) {
    (void)copy_into(make_view(v.t, out.sizes, kept, v.t.storage_offset), out);  // shapes agree by construction
    return;
  }
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  const std::vector<int64_t> po = offsets(out.sizes, kept), ps = offsets(sum_sizes, sum_strides);
  const T* src = cdata<T>(v.t);
  T* dst = mdata<T>(out);
  for (size_t i = 0; i < po.size(); ++i) {
    Acc s = 0;
    for (int64_t o : ps) s = wrapping_add(s, static_cast<Acc>(src[po[i] + o]));  // integers wrap as in ATen
    dst[i] = static_cast<T>(s);
  }
}

// C[M, N] = A[M, K] @ B[K, N], all contiguous.
template <typename T>
void gemm_contiguous(int64_t M, int64_t N, int64_t K, const T* a, const T* b, T* c) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    std::fill(c, c + M * N, T(0));
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    gemm_f32(M, N, K, MatView{a, K, 1}, MatView{b, N, 1}, c, N);
  } else {
    gemm_ref<T>(M, N, K, MatView{a, K, 1}, MatView{b, N, 1}, c, N);
  }
}

// A and B contracted into one contiguous view over the labels `needed`
// keeps: shared needed labels batch, shared others are summed by the GEMM,
// one-sided others are summed before it.
template <typename T>
Labeled contract_pair(const Labeled& A, const Labeled& B, const std::set<int>& needed, const std::vector<int64_t>& sizes) {
  std::vector<int> batch, m, k, n;
  for (int l : A.labels) {
    const bool shared = contains(B.labels, l), keep = needed.count(l) > 0;
    if (shared) (keep ? batch : k).push_back(l);
    else if (keep) m.push_back(l);
  }
  for (int l : B.labels) {
    if (!contains(A.labels, l) && needed.count(l)) n.push_back(l);
  }
  auto cat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  const std::vector<int> order_a = cat(batch, m, k), order_b = cat(batch, k, n), order_c = cat(batch, m, n);
  Tensor a = Tensor::empty(A.t.dtype, sizes_of(order_a, sizes));
  Tensor b = Tensor::empty(A.t.dtype, sizes_of(order_b, sizes));
  arrange<T>(A, order_a, a);
  arrange<T>(B, order_b, b);
  const int64_t nb = numel_of(sizes_of(batch, sizes)), M = numel_of(sizes_of(m, sizes)), K = numel_of(sizes_of(k, sizes)),
                N = numel_of(sizes_of(n, sizes));
  Labeled c{Tensor::empty(A.t.dtype, sizes_of(order_c, sizes)), order_c};
  for (int64_t i = 0; i < nb; ++i) {
    gemm_contiguous<T>(M, N, K, cdata<T>(a) + i * M * K, cdata<T>(b) + i * K * N, mdata<T>(c.t) + i * M * N);
  }
  return c;
}

// out (dims `output`) = the contraction of `ops`, left to right.
Status contract_all(const std::vector<Labeled>& ops, const std::vector<int>& output, const std::vector<int64_t>& sizes,
                    Tensor& out, const char* op) {
  for (size_t k = 1; k < ops.size(); ++k) {
    if (ops[k].t.dtype != ops[0].t.dtype) {
      return make_error(std::string(op) + ": operands must have one dtype, operand " + std::to_string(k) + " is " +
                        std::string(dtype_name(ops[k].t.dtype)) + ", operand 0 is " + std::string(dtype_name(ops[0].t.dtype)));
    }
  }
  LATHE_RETURN_IF_ERROR(check_result(out, ops[0].t.dtype, sizes_of(output, sizes), op));
  return dispatch<Types::Numeric>(out.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    Labeled acc = ops[0];
    for (size_t k = 1; k < ops.size(); ++k) {
      std::set<int> needed(output.begin(), output.end());
      for (size_t j = k + 1; j < ops.size(); ++j) needed.insert(ops[j].labels.begin(), ops[j].labels.end());
      acc = contract_pair<T>(acc, ops[k], needed, sizes);
    }
    arrange<T>(acc, output, out);
    return Status::Ok();
  });
}

// ---- einsum equations --------------------------------------------------------

// Letters are labels 0..51 (A-Z before a-z, torch's order for an implicit
// output); ellipsis dims follow, right-aligned across operands.
constexpr int kEllipsisBase = 52;
constexpr int kEllipsis = -1;

struct Equation {
  std::vector<std::vector<int>> inputs;  // a label per operand dim
  std::vector<int> output;
  size_t label_count = 0;
};

// One term: a label per letter, kEllipsis for "...".
Result<std::vector<int>> parse_term(const std::string& s, bool output) {
  std::vector<int> term;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '.') {
      if (s.compare(i, 3, "...") != 0 || contains(term, kEllipsis)) {
        return make_error("einsum(): invalid ellipsis in '" + s + "' (one '...' per term)");
      }
      term.push_back(kEllipsis);
      i += 2;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      const int l = ch <= 'Z' ? ch - 'A' : ch - 'a' + 26;
      if (output && contains(term, l)) return make_error(std::string("einsum(): output subscript ") + ch + " appears more than once in the output");
      term.push_back(l);
    } else {
      return make_error(std::string("einsum(): invalid subscript '") + ch + "' in the equation, subscripts must be in [a-zA-Z]");
    }
  }
  return term;
}

Result<Equation> parse_equation(const std::string& equation, const std::vector<const Tensor*>& ops) {
  std::string e;
  for (char ch : equation) {
    if (ch != ' ') e += ch;
  }
  const size_t arrow = e.find("->");
  const std::string lhs = e.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char ch : lhs) {
    if (ch == ',') terms.emplace_back();
    else terms.back() += ch;
  }
  if (terms.size() != ops.size()) {
    return make_error("einsum(): the equation '" + equation + "' names " + std::to_string(terms.size()) +
                      " operand(s), but " + std::to_string(ops.size()) + " were given");
  }
  std::vector<std::vector<int>> raw;
  size_t ell_max = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    LATHE_ASSIGN_OR_RETURN(auto t, parse_term(terms[k], false));
    const bool ell = contains(t, kEllipsis);
    const size_t letters = t.size() - (ell ? 1 : 0), rank = ops[k]->sizes.size();
    if (ell ? letters > rank : letters != rank) {
      return make_error("einsum(): operand " + std::to_string(k) + " " + shape_string(ops[k]->sizes) + " has " +
                        std::to_string(rank) + " dims, but its subscripts '" + terms[k] + "' name " + std::to_string(letters));
    }
    if (ell) ell_max = std::max(ell_max, rank - letters);
    raw.push_back(std::move(t));
  }
  Equation eq;
  eq.label_count = kEllipsisBase + ell_max;
  std::vector<int> count(eq.label_count, 0);
  for (size_t k = 0; k < ops.size(); ++k) {
    std::vector<int> labels;
    const size_t ell_len = ops[k]->sizes.size() - (raw[k].size() - (contains(raw[k], kEllipsis) ? 1 : 0));
    for (int l : raw[k]) {
      if (l != kEllipsis) {
        labels.push_back(l);
        ++count[static_cast<size_t>(l)];
        continue;
      }
      for (size_t i = 0; i < ell_len; ++i) labels.push_back(kEllipsisBase + static_cast<int>(ell_max - ell_len + i));
    }
    eq.inputs.push_back(std::move(labels));
  }
  auto ellipsis_labels = [&](std::vector<int>& v) {
    for (size_t i = 0; i < ell_max; ++i) v.push_back(kEllipsisBase + static_cast<int>(i));
  };
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the labels used exactly once.
    ellipsis_labels(eq.output);
    for (int l = 0; l < kEllipsisBase; ++l) {
      if (count[static_cast<size_t>(l)] == 1) eq.output.push_back(l);
    }
    return eq;
  }
  LATHE_ASSIGN_OR_RETURN(auto out, parse_term(e.substr(arrow + 2), true));
  for (int l : out) {
    if (l == kEllipsis) {
      ellipsis_labels(eq.output);
      continue;
    }
    if (count[static_cast<size_t>(l)] == 0) {
      const char ch = static_cast<char>(l < 26 ? 'A' + l : 'a' + l - 26);
      return make_error(std::string("einsum(): output subscript ") + ch + " does not appear in the equation for any input operand");
    }
    eq.output.push_back(l);
  }
  return eq;
}

Status check_operands(const std::vector<const Tensor*>& ops, const char* op) {
  if (ops.empty()) return make_error(std::string(op) + ": must provide at least one operand");
  for (const Tensor* t : ops) {
    if (!t) return make_error(std::string(op) + ": an operand is None");
    LATHE_RETURN_IF_ERROR(check_input(*t, op, "tensors"));
  }
  return Status::Ok();
}

std::vector<Labeled> label_all(const std::vector<const Tensor*>& ops, const std::vector<std::vector<int>>& labels,
                               const std::vector<int64_t>& sizes) {
  std::vector<Labeled> v;
  for (size_t k = 0; k < ops.size(); ++k) v.push_back(label_operand(*ops[k], labels[k], sizes));
  return v;
}

// ---- _trilinear / bilinear as label problems -------------------------------

// Labels of an input of the _trilinear rank `total` that is unsqueezed at
// `expand`: its dims in order, skipping the expanded ones.
Result<std::vector<int>> trilinear_labels(const Tensor& t, const std::vector<int64_t>& expand, int64_t total, const char* arg) {
  std::vector<bool> expanded(static_cast<size_t>(std::max<int64_t>(total, 0)), false);
  for (int64_t d : expand) {
    if (d < 0 || d >= total) return make_error(std::string("_trilinear: ") + arg + " dim " + std::to_string(d) + " out of range");
    expanded[static_cast<size_t>(d)] = true;
  }
  std::vector<int> labels;
  for (int64_t d = 0; d < total; ++d) {
    if (!expanded[static_cast<size_t>(d)]) labels.push_back(static_cast<int>(d));
  }
  if (labels.size() != t.sizes.size()) {
    return make_error(std::string("_trilinear: input ") + shape_string(t.sizes) + " with " + arg +
                      " does not reach rank " + std::to_string(total));
  }
  return labels;
}

struct LabelProblem {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::vector<int64_t> sizes;
};

Result<LabelProblem> trilinear_problem(const Tensor& i1, const Tensor& i2, const Tensor& i3, const TrilinearDims& d) {
  const std::vector<const Tensor*> ops{&i1, &i2, &i3};
  LATHE_RETURN_IF_ERROR(check_operands(ops, "_trilinear"));
  const int64_t total = static_cast<int64_t>(i1.sizes.size() + d.expand1.size());
  LabelProblem p;
  LATHE_ASSIGN_OR_RETURN(auto l1, trilinear_labels(i1, d.expand1, total, "expand1"));
  LATHE_ASSIGN_OR_RETURN(auto l2, trilinear_labels(i2, d.expand2, total, "expand2"));
  LATHE_ASSIGN_OR_RETURN(auto l3, trilinear_labels(i3, d.expand3, total, "expand3"));
  p.inputs = {l1, l2, l3};
  for (int64_t s : d.sumdim) {
    if (s < 0 || s >= total) return make_error("_trilinear: sumdim " + std::to_string(s) + " out of range");
  }
  for (int64_t l = 0; l < total; ++l) {
    if (std::find(d.sumdim.begin(), d.sumdim.end(), l) == d.sumdim.end()) p.output.push_back(static_cast<int>(l));
  }
  LATHE_ASSIGN_OR_RETURN(p.sizes, label_sizes(ops, p.inputs, static_cast<size_t>(total), "_trilinear"));
  return p;
}

Result<LabelProblem> bilinear_problem(const Tensor& x1, const Tensor& x2, const Tensor& w) {
  const char* op = "bilinear";
  LATHE_RETURN_IF_ERROR(check_input(x1, op, "input1"));
  LATHE_RETURN_IF_ERROR(check_input(x2, op, "input2"));
  LATHE_RETURN_IF_ERROR(check_input(w, op, "weight"));
  LATHE_RETURN_IF_ERROR(check_rank(w, 3, op, "weight"));
  if (x1.sizes.empty() || x1.sizes.size() != x2.sizes.size()) {
    return make_error("bilinear: input1 " + shape_string(x1.sizes) + " and input2 " + shape_string(x2.sizes) +
                      " must have the same (non-zero) number of dims");
  }
  const size_t r = x1.sizes.size();
  if (!std::equal(x1.sizes.begin(), x1.sizes.end() - 1, x2.sizes.begin())) {
    return make_error("bilinear: input batch dimensions do not match: input1 " + shape_string(x1.sizes) + ", input2 " +
                      shape_string(x2.sizes));
  }
  if (x1.sizes.back() != w.sizes[1] || x2.sizes.back() != w.sizes[2]) {
    return make_error("bilinear: inputs " + shape_string(x1.sizes) + " and " + shape_string(x2.sizes) +
                      " do not match weight " + shape_string(w.sizes) + " ([out, in1, in2])");
  }
  // Leading dims 0..r-2, then i, j, o.
  const int i = static_cast<int>(r) - 1, j = i + 1, o = i + 2;
  LabelProblem p;
  std::vector<int> lead;
  for (int d = 0; d < i; ++d) lead.push_back(d);
  p.inputs = {lead, {o, i, j}, lead};
  p.inputs[0].push_back(i);
  p.inputs[2].push_back(j);
  p.output = lead;
  p.output.push_back(o);
  // Operands in the order x1, weight, x2: x1 @ W first is one large GEMM.
  LATHE_ASSIGN_OR_RETURN(p.sizes, label_sizes({&x1, &w, &x2}, p.inputs, r + 2, op));
  return p;
}

// ---- elementwise composites ------------------------------------------------

// `t` (converted to `dtype`) read at `shape` (broadcast; a 0-d shape reads
// as [1]).
Tensor broadcast_view(const Tensor& t, DType dtype, const std::vector<int64_t>& shape) {
  Tensor c = as_dtype(t, dtype);
  if (shape.empty()) return make_view(c, {1}, {0}, c.storage_offset);
  return make_view(c, shape, broadcast_strides(c, shape), c.storage_offset);
}

Status check_pair(const Tensor& a, const Tensor& b, const char* op, const char* an, const char* bn) {
  LATHE_RETURN_IF_ERROR(check_input(a, op, an));
  LATHE_RETURN_IF_ERROR(check_input(b, op, bn));
  return Status::Ok();
}

DType floating_result(const Tensor& a, const Tensor& b) {
  ResultType rt;
  rt.add(a);
  rt.add(b);
  const DType d = rt.get();
  return is_integral(d, true) ? DType::Float32 : d;
}

template <typename T>
double p_norm_step(double acc, T d, double p) {
  const double a = std::abs(static_cast<double>(d));
  if (p == 0) return acc + (a != 0 ? 1.0 : 0.0);
  if (p == 1) return acc + a;
  if (p == 2) return acc + a * a;
  if (std::isinf(p)) return std::max(acc, a);
  return acc + std::pow(a, p);
}

double p_norm_finish(double acc, double p) {
  if (p == 0 || p == 1 || std::isinf(p)) return acc;
  if (p == 2) return std::sqrt(acc);
  return std::pow(acc, 1.0 / p);
}

}  // namespace

// ---- einsum ----------------------------------------------------------------------

Result<std::vector<int64_t>> einsum_shape(const std::string& equation, const std::vector<const Tensor*>& operands) {
  LATHE_RETURN_IF_ERROR(check_operands(operands, "einsum"));
  LATHE_ASSIGN_OR_RETURN(Equation eq, parse_equation(equation, operands));
  LATHE_ASSIGN_OR_RETURN(auto sizes, label_sizes(operands, eq.inputs, eq.label_count, "einsum"));
  return sizes_of(eq.output, sizes);
}

Status einsum_out(const std::string& equation, const std::vector<const Tensor*>& operands, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_operands(operands, "einsum"));
  LATHE_ASSIGN_OR_RETURN(Equation eq, parse_equation(equation, operands));
  LATHE_ASSIGN_OR_RETURN(auto sizes, label_sizes(operands, eq.inputs, eq.label_count, "einsum"));
  return contract_all(label_all(operands, eq.inputs, sizes), eq.output, sizes, out, "einsum");
}

Result<std::vector<int64_t>> trilinear_shape(const Tensor& i1, const Tensor& i2, const Tensor& i3, const TrilinearDims& d) {
  LATHE_ASSIGN_OR_RETURN(LabelProblem p, trilinear_problem(i1, i2, i3, d));
  return sizes_of(p.output, p.sizes);
}

Status trilinear_out(const Tensor& i1, const Tensor& i2, const Tensor& i3, const TrilinearDims& d, Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(LabelProblem p, trilinear_problem(i1, i2, i3, d));
  return contract_all(label_all({&i1, &i2, &i3}, p.inputs, p.sizes), p.output, p.sizes, out, "_trilinear");
}

Result<std::vector<int64_t>> bilinear_shape(const Tensor& x1, const Tensor& x2, const Tensor& weight) {
  LATHE_ASSIGN_OR_RETURN(LabelProblem p, bilinear_problem(x1, x2, weight));
  return sizes_of(p.output, p.sizes);
}

Status bilinear_out(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor* bias, Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(LabelProblem p, bilinear_problem(x1, x2, weight));
  const std::vector<Labeled> ops = label_all({&x1, &weight, &x2}, p.inputs, p.sizes);
  if (!bias) return contract_all(ops, p.output, p.sizes, out, "bilinear");
  LATHE_RETURN_IF_ERROR(check_input(*bias, "bilinear", "bias"));
  LATHE_RETURN_IF_ERROR(check_dtype(*bias, x1.dtype, "bilinear", "bias"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(out.sizes, bias->sizes));
  if (shape != out.sizes) {
    return make_error("bilinear: bias " + shape_string(bias->sizes) + " does not broadcast to the output " + shape_string(out.sizes));
  }
  Tensor prod = Tensor::empty(x1.dtype, out.sizes);
  LATHE_RETURN_IF_ERROR(contract_all(ops, p.output, p.sizes, prod, "bilinear"));
  return binary_out(BinaryOp::Add, prod, *bias, x1.dtype, out);
}

// ---- outer, cross ------------------------------------------------------------

Status outer_out(const Tensor& a, const Tensor& b, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_pair(a, b, "outer", "self", "vec2"));
  if (a.sizes.size() != 1 || b.sizes.size() != 1) {
    return make_error("outer: expected 1-D vectors, got self " + shape_string(a.sizes) + " and vec2 " + shape_string(b.sizes));
  }
  ResultType rt;
  rt.add(a);
  rt.add(b);
  const DType dtype = rt.get();
  LATHE_RETURN_IF_ERROR(check_result(out, dtype, {a.sizes[0], b.sizes[0]}, "outer"));
  const Tensor x = as_dtype(a, dtype), y = as_dtype(b, dtype);
  return dispatch<Types::All>(dtype, "outer", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* px = cdata<T>(x);
    const T* py = cdata<T>(y);
    T* po = mdata<T>(out);
    const int64_t n = a.sizes[0], m = b.sizes[0];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) po[i * m + j] = static_cast<T>(wrapping_mul(px[i * x.strides[0]], py[j * y.strides[0]]));
    return Status::Ok();
  });
}

Result<std::vector<int64_t>> cross_shape(const Tensor& a, const Tensor& b, int64_t dim) {
  LATHE_RETURN_IF_ERROR(check_pair(a, b, "linalg_cross", "self", "other"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(a, b, "linalg_cross"));
  if (a.sizes.size() != b.sizes.size()) {
    return make_error("linalg_cross: inputs must have the same number of dims, got " + shape_string(a.sizes) + " and " +
                      shape_string(b.sizes));
  }
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(a.sizes.size())));
  if (a.sizes.empty() || a.sizes[d] != 3 || b.sizes[d] != 3) {
    return make_error("linalg_cross: inputs dimension " + std::to_string(dim) + " must have length 3, got " +
                      shape_string(a.sizes) + " and " + shape_string(b.sizes));
  }
  return broadcast_shapes(a.sizes, b.sizes);
}

Status linalg_cross_out(const Tensor& a, const Tensor& b, int64_t dim, Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(auto shape, cross_shape(a, b, dim));
  LATHE_RETURN_IF_ERROR(check_result(out, a.dtype, shape, "linalg_cross"));
  const size_t d = static_cast<size_t>(*normalize_dim(dim, static_cast<int64_t>(shape.size())));
  const std::vector<int64_t> sa = broadcast_strides(a, shape), sb = broadcast_strides(b, shape);
  const std::vector<int64_t> so = Tensor::contiguous_strides(shape);
  std::vector<int64_t> outer = shape;
  outer[d] = 1;
  const auto oa = offsets(outer, sa), ob = offsets(outer, sb), oo = offsets(outer, so);
  return dispatch<Types::Numeric>(a.dtype, "linalg_cross", [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* pa = cdata<T>(a);
    const T* pb = cdata<T>(b);
    T* po = mdata<T>(out);
    for (size_t i = 0; i < oo.size(); ++i) {
      const T* x = pa + oa[i];
      const T* y = pb + ob[i];
      T* z = po + oo[i];
      const int64_t s = sa[d], t = sb[d], u = so[d];
      // Integers wrap as in ATen (int_arith.h).
      auto det = [](T p, T q, T r, T w) { return static_cast<T>(wrapping_sub(wrapping_mul(p, q), wrapping_mul(r, w))); };
      z[0] = det(x[s], y[2 * t], x[2 * s], y[t]);
      z[u] = det(x[2 * s], y[0], x[0], y[2 * t]);
      z[2 * u] = det(x[0], y[t], x[s], y[0]);
    }
    return Status::Ok();
  });
}

// ---- similarity and distances --------------------------------------------------

Result<std::vector<int64_t>> cosine_similarity_shape(const Tensor& x1, const Tensor& x2, int64_t dim) {
  LATHE_RETURN_IF_ERROR(check_pair(x1, x2, "cosine_similarity", "x1", "x2"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(x1.sizes, x2.sizes));
  LATHE_ASSIGN_OR_RETURN(int64_t d, normalize_dim(dim, static_cast<int64_t>(shape.size())));
  if (!shape.empty()) shape.erase(shape.begin() + d);
  return shape;
}

Status cosine_similarity_out(const Tensor& x1, const Tensor& x2, int64_t dim, double eps, Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(auto out_shape, cosine_similarity_shape(x1, x2, dim));
  const DType dtype = floating_result(x1, x2);
  LATHE_RETURN_IF_ERROR(check_result(out, dtype, out_shape, "cosine_similarity"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(x1.sizes, x2.sizes));
  const size_t d = shape.empty() ? 0 : static_cast<size_t>(*normalize_dim(dim, static_cast<int64_t>(shape.size())));
  const Tensor a = broadcast_view(x1, dtype, shape), b = broadcast_view(x2, dtype, shape);
  std::vector<int64_t> outer = a.sizes;
  outer[d] = 1;
  const auto oa = offsets(outer, a.strides), ob = offsets(outer, b.strides);
  const int64_t n = a.sizes[d], s = a.strides[d], t = b.strides[d];
  return dispatch<Types::Float>(dtype, "cosine_similarity", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* po = mdata<T>(out);
    for (size_t i = 0; i < oa.size(); ++i) {
      if (n == 0) {  // no elements (and no data to offset into): the dot of empty vectors
        po[i] = T(0);
        continue;
      }
      const T* x = cdata<T>(a) + oa[i];
      const T* y = cdata<T>(b) + ob[i];
      double nx = 0, ny = 0;
      for (int64_t k = 0; k < n; ++k) {
        nx += static_cast<double>(x[k * s]) * x[k * s];
        ny += static_cast<double>(y[k * t]) * y[k * t];
      }
      // torch 2.x: each vector divided by its norm clamped to eps, then the dot.
      const double dx = std::max(std::sqrt(nx), eps), dy = std::max(std::sqrt(ny), eps);
      double dot = 0;
      for (int64_t k = 0; k < n; ++k) dot += (x[k * s] / dx) * (y[k * t] / dy);
      po[i] = static_cast<T>(dot);
    }
    return Status::Ok();
  });
}

Result<std::vector<int64_t>> pairwise_distance_shape(const Tensor& x1, const Tensor& x2, bool keepdim) {
  LATHE_RETURN_IF_ERROR(check_pair(x1, x2, "pairwise_distance", "x1", "x2"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(x1.sizes, x2.sizes));
  if (shape.empty()) return shape;
  if (keepdim) shape.back() = 1;
  else shape.pop_back();
  return shape;
}

Status pairwise_distance_out(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim, Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(auto out_shape, pairwise_distance_shape(x1, x2, keepdim));
  ResultType rt;
  rt.add(x1);
  rt.add(x2);
  const DType dtype = rt.get();
  if (is_integral(dtype, true)) return make_error("pairwise_distance: expected floating inputs, got " + std::string(dtype_name(dtype)));
  LATHE_RETURN_IF_ERROR(check_result(out, dtype, out_shape, "pairwise_distance"));
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(x1.sizes, x2.sizes));
  // (x1 - x2) + eps in the element type, as torch rounds it; then the norm.
  Tensor diff = Tensor::empty(dtype, shape), shifted = Tensor::empty(dtype, shape);
  LATHE_RETURN_IF_ERROR(binary_out(BinaryOp::Sub, x1, x2, dtype, diff));
  LATHE_RETURN_IF_ERROR(binary_out(BinaryOp::Add, diff, scalar_tensor(Scalar::from_double(eps), dtype), dtype, shifted));
  if (shape.empty()) {  // a 0-d pair: |x1 - x2 + eps| (any p but 0)
    shifted = make_view(shifted, {1}, {1}, 0);
    Tensor o = make_view(out, {1}, {1}, out.storage_offset);
    return vector_norm_out(shifted, p, std::vector<int64_t>{0}, false, o);
  }
  return vector_norm_out(shifted, p, std::vector<int64_t>{-1}, keepdim, out);
}

Result<std::vector<int64_t>> cdist_shape(const Tensor& x1, const Tensor& x2, double p) {
  LATHE_RETURN_IF_ERROR(check_pair(x1, x2, "cdist", "x1", "x2"));
  LATHE_RETURN_IF_ERROR(check_floating(x1, "cdist", "x1"));
  LATHE_RETURN_IF_ERROR(check_same_dtype(x1, x2, "cdist"));
  if (x1.sizes.size() < 2 || x2.sizes.size() < 2) {
    return make_error("cdist: x1 " + shape_string(x1.sizes) + " and x2 " + shape_string(x2.sizes) + " must be at least 2-D");
  }
  if (x1.sizes.back() != x2.sizes.back()) {
    return make_error("cdist: x1 " + shape_string(x1.sizes) + " and x2 " + shape_string(x2.sizes) +
                      " must have the same number of columns");
  }
  if (!(p >= 0)) return make_error("cdist: p must be non-negative, got " + std::to_string(p));
  std::vector<int64_t> b1(x1.sizes.begin(), x1.sizes.end() - 2), b2(x2.sizes.begin(), x2.sizes.end() - 2);
  LATHE_ASSIGN_OR_RETURN(auto shape, broadcast_shapes(b1, b2));
  shape.push_back(x1.sizes[x1.sizes.size() - 2]);
  shape.push_back(x2.sizes[x2.sizes.size() - 2]);
  return shape;
}

Status cdist_out(const Tensor& x1, const Tensor& x2, double p, Tensor& out) {
  LATHE_ASSIGN_OR_RETURN(auto shape, cdist_shape(x1, x2, p));
  LATHE_RETURN_IF_ERROR(check_result(out, x1.dtype, shape, "cdist"));
  const size_t r = shape.size();
  const int64_t P = shape[r - 2], R = shape[r - 1], M = x1.sizes.back();
  // Each operand read at [batch..., rows, M] (batch dims broadcast).
  auto view = [&](const Tensor& x) {
    std::vector<int64_t> s(shape.begin(), shape.end() - 2);
    s.push_back(x.sizes[x.sizes.size() - 2]);
    s.push_back(M);
    return make_view(x, s, broadcast_strides(x, s), x.storage_offset);
  };
  const Tensor a = view(x1), b = view(x2);
  const std::vector<int64_t> batch(shape.begin(), shape.end() - 2);
  const auto ob1 = offsets(batch, std::vector<int64_t>(a.strides.begin(), a.strides.end() - 2));
  const auto ob2 = offsets(batch, std::vector<int64_t>(b.strides.begin(), b.strides.end() - 2));
  return dispatch<Types::Float>(x1.dtype, "cdist", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* po = mdata<T>(out);
    for (size_t n = 0; n < ob1.size(); ++n) {
      for (int64_t i = 0; i < P; ++i) {
        const T* x = cdata<T>(a) + ob1[n] + i * a.strides[r - 2];
        for (int64_t j = 0; j < R; ++j) {
          const T* y = cdata<T>(b) + ob2[n] + j * b.strides[r - 2];
          double acc = 0;
          for (int64_t k = 0; k < M; ++k) acc = p_norm_step<T>(acc, static_cast<T>(x[k * a.strides[r - 1]] - y[k * b.strides[r - 1]]), p);
          po[(static_cast<int64_t>(n) * P + i) * R + j] = static_cast<T>(p_norm_finish(acc, p));
        }
      }
    }
    return Status::Ok();
  });
}

// ---- rms_norm ----------------------------------------------------------------------

Status rms_norm_out(const Tensor& input_raw, const std::vector<int64_t>& normalized_shape, const Tensor* weight,
                    std::optional<double> eps, Tensor& out) {
  const char* op = "rms_norm";
  LATHE_RETURN_IF_ERROR(check_input(input_raw, op, "input"));
  LATHE_RETURN_IF_ERROR(check_floating(input_raw, op, "input"));
  const size_t r = input_raw.sizes.size(), k = normalized_shape.size();
  if (k == 0 || k > r || !std::equal(normalized_shape.begin(), normalized_shape.end(), input_raw.sizes.end() - static_cast<int64_t>(k))) {
    return make_error("rms_norm: normalized_shape " + shape_string(normalized_shape) + " does not end input shape " +
                      shape_string(input_raw.sizes));
  }
  if (weight) {
    LATHE_RETURN_IF_ERROR(check_input(*weight, op, "weight"));
    LATHE_RETURN_IF_ERROR(check_dtype(*weight, input_raw.dtype, op, "weight"));
    if (weight->sizes != normalized_shape) {
      return make_error("rms_norm: weight " + shape_string(weight->sizes) + " must have the normalized_shape " +
                        shape_string(normalized_shape));
    }
  }
  LATHE_RETURN_IF_ERROR(check_result(out, input_raw.dtype, input_raw.sizes, op));
  const int64_t N = numel_of(normalized_shape);
  const int64_t M = N == 0 ? 0 : input_raw.numel() / N;
  const Tensor input = as_contiguous(input_raw);
  const Tensor w = weight ? as_contiguous(*weight) : Tensor{};
  return dispatch<Types::Float>(input.dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    const T e = static_cast<T>(eps ? *eps : std::numeric_limits<T>::epsilon());
    const T* x = cdata<T>(input);
    const T* pw = weight ? cdata<T>(w) : nullptr;
    T* y = mdata<T>(out);
    for (int64_t i = 0; i < M; ++i) {
      const T* xr = x + i * N;
      double ss = 0;
      for (int64_t j = 0; j < N; ++j) ss += static_cast<double>(xr[j]) * xr[j];
      const T rs = T(1) / std::sqrt(static_cast<T>(ss / static_cast<double>(N)) + e);
      for (int64_t j = 0; j < N; ++j) y[i * N + j] = pw ? (xr[j] * rs) * pw[j] : xr[j] * rs;
    }
    return Status::Ok();
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

Status einsum_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(std::string equation, c.string_arg("equation"));
  LATHE_ASSIGN_OR_RETURN(auto ops, c.tensor_list("tensors"));  // `path` only orders the pairs: ignored
  LATHE_ASSIGN_OR_RETURN(auto shape, einsum_shape(equation, ops));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, ops[0]->dtype, shape));
  return einsum_out(equation, ops, *out);
}

Status trilinear_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* i1, c.tensor("i1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* i2, c.tensor("i2"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* i3, c.tensor("i3"));
  TrilinearDims d;
  LATHE_ASSIGN_OR_RETURN(d.expand1, c.int_list("expand1"));
  LATHE_ASSIGN_OR_RETURN(d.expand2, c.int_list("expand2"));
  LATHE_ASSIGN_OR_RETURN(d.expand3, c.int_list("expand3"));
  LATHE_ASSIGN_OR_RETURN(d.sumdim, c.int_list("sumdim"));  // unroll_dim only steers ATen's loop order
  LATHE_ASSIGN_OR_RETURN(auto shape, trilinear_shape(*i1, *i2, *i3, d));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, i1->dtype, shape));
  return trilinear_out(*i1, *i2, *i3, d, *out);
}

Status bilinear_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x1, c.tensor("input1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* x2, c.tensor("input2"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* w, c.tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* bias, c.optional_tensor("bias"));
  LATHE_ASSIGN_OR_RETURN(auto shape, bilinear_shape(*x1, *x2, *w));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x1->dtype, shape));
  return bilinear_out(*x1, *x2, *w, bias, *out);
}

Status outer_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* a, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* b, c.tensor("vec2"));
  if (a->sizes.size() != 1 || b->sizes.size() != 1) {
    return make_error("outer: expected 1-D vectors, got self " + shape_string(a->sizes) + " and vec2 " + shape_string(b->sizes));
  }
  ResultType rt;
  rt.add(*a);
  rt.add(*b);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, rt.get(), {a->sizes[0], b->sizes[0]}));
  return outer_out(*a, *b, *out);
}

Status cross_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* a, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* b, c.tensor("other"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim", -1));
  LATHE_ASSIGN_OR_RETURN(auto shape, cross_shape(*a, *b, dim));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, a->dtype, shape));
  return linalg_cross_out(*a, *b, dim, *out);
}

Status cosine_similarity_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x1, c.tensor("x1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* x2, c.tensor("x2"));
  LATHE_ASSIGN_OR_RETURN(int64_t dim, c.int_arg("dim", 1));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps", 1e-8));
  LATHE_ASSIGN_OR_RETURN(auto shape, cosine_similarity_shape(*x1, *x2, dim));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, floating_result(*x1, *x2), shape));
  return cosine_similarity_out(*x1, *x2, dim, eps, *out);
}

Status pairwise_distance_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x1, c.tensor("x1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* x2, c.tensor("x2"));
  LATHE_ASSIGN_OR_RETURN(double p, c.double_arg("p", 2.0));
  LATHE_ASSIGN_OR_RETURN(double eps, c.double_arg("eps", 1e-6));
  LATHE_ASSIGN_OR_RETURN(bool keepdim, c.bool_arg("keepdim", false));
  LATHE_ASSIGN_OR_RETURN(auto shape, pairwise_distance_shape(*x1, *x2, keepdim));
  ResultType rt;
  rt.add(*x1);
  rt.add(*x2);
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, rt.get(), shape));
  return pairwise_distance_out(*x1, *x2, p, eps, keepdim, *out);
}

Status cdist_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* x1, c.tensor("x1"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* x2, c.tensor("x2"));
  LATHE_ASSIGN_OR_RETURN(double p, c.double_arg("p", 2.0));
  // compute_mode picks ATen's p = 2 algorithm (GEMM or direct); the values
  // agree within tolerance, so only its range is checked.
  LATHE_ASSIGN_OR_RETURN(auto mode, c.optional_int("compute_mode"));
  if (mode && (*mode < 0 || *mode > 2)) return c.arg_error("compute_mode", "must be None, 0, 1 or 2, got " + std::to_string(*mode));
  LATHE_ASSIGN_OR_RETURN(auto shape, cdist_shape(*x1, *x2, p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, x1->dtype, shape));
  return cdist_out(*x1, *x2, p, *out);
}

Status rms_norm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(auto normalized_shape, c.int_list("normalized_shape"));
  LATHE_ASSIGN_OR_RETURN(const Tensor* weight, c.optional_tensor("weight"));
  LATHE_ASSIGN_OR_RETURN(auto eps, c.optional_double("eps"));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  return rms_norm_out(*input, normalized_shape, weight, eps, *out);
}

}  // namespace

void register_contraction_kernels(KernelRegistry& r) {
  register_overloads(r, "einsum", {"default"}, einsum_kernel);
  register_overloads(r, "_trilinear", {"default"}, trilinear_kernel);
  register_overloads(r, "bilinear", {"default"}, bilinear_kernel);
  register_overloads(r, "outer", {"default"}, outer_kernel);
  register_overloads(r, "linalg_cross", {"default"}, cross_kernel);
  register_overloads(r, "cosine_similarity", {"default"}, cosine_similarity_kernel);
  register_overloads(r, "pairwise_distance", {"default"}, pairwise_distance_kernel);
  register_overloads(r, "cdist", {"default"}, cdist_kernel);
  register_overloads(r, "rms_norm", {"default"}, rms_norm_kernel);
}

}  // namespace lathe::kernels
