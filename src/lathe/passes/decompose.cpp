// decompose
//
//   BEFORE                                    AFTER
//
//   %y = aten.linear(%x, %w, %b)  (x 2-D)     %permute = aten.permute(%w, [1, 0])
//                                             %y = aten.addmm(%b, %x, %permute)
//   %y = aten.linear(%x, %w, %b)  (x [B,T,K]) %permute = aten.permute(%w, [1, 0])
//                                             %view = aten.view(%x, [B*T, K])
//                                             %addmm = aten.addmm(%b, %view, %permute)
//                                             %y = aten.view(%addmm, [B, T, N])
//
// The forms are the ones torch.export's core ATen decomposition gives (2.x
// exports). Every rule needs concrete shapes, except a 2-D linear (whose
// batch may stay symbolic), and keeps anything else, with a reason:
//   linear.default        2-D input: permute + addmm (mm without bias);
//                         N-D input: permute + view + addmm/mm + view
//                         (reshape instead of the first view when the input
//                         is not contiguous); a 1-D input is kept
//   matmul.default        2-D x 2-D: mm; N-D x 2-D: view + mm + view;
//                         3-D x 3-D with equal batch: bmm; others kept
//   t.default             2-D: permute [1, 0]
//   transpose.int         permute
//   softmax.int,          _softmax / _log_softmax (half_to_float False);
//   log_softmax.int       kept when a dtype is given
//   layer_norm.default    native_layer_norm (its mean and rstd unused)
//   conv1d/conv2d.default convolution (transposed False, output_padding 0)
//   dropout.default       clone, when train is False or p is 0
// Ops on the keep-list are left whole (one "kept" explain record each).
// The last node of a decomposition is the original node retargeted in place
// (Rewriter::retarget), or takes over its name, so graph outputs and names
// do not move.
#include "lathe/passes/decompose.h"

#include <numeric>

#include "lathe/ir/graph_builder.h"
#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/printer.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

namespace aten = ops::aten;
namespace arg = ops::arg;

std::string strip(std::string_view s) { return std::string(ops::strip_torch_ops(s)); }

NamedArgument pos(std::string_view name, Argument a) { return NamedArgument{std::string(name), std::move(a), ArgKind::Positional}; }

Value* tensor_arg(const Node* n, std::string_view name) { return tensor_input(*n, name); }

std::optional<std::vector<int64_t>> sizes_of(const Value* v) {
  if (!v || !v->meta()) return std::nullopt;
  return v->meta()->concrete_sizes();
}

// Metadata of permute(v, dims): sizes and strides permuted.
TensorMeta permuted_meta(const Value* v, const std::vector<int64_t>& dims) {
  TensorMeta m = *v->meta();
  TensorMeta out = m;
  for (size_t i = 0; i < dims.size(); ++i) {
    out.sizes[i] = m.sizes[dims[i]];
    if (m.strides.size() == dims.size()) out.strides[i] = m.strides[dims[i]];
  }
  return out;
}

bool is_contiguous_meta(const Value* v) {
  auto sizes = sizes_of(v);
  if (!sizes) return false;
  const auto& strides = v->meta()->strides;
  if (strides.empty()) return true;
  std::vector<int64_t> want = Tensor::contiguous_strides(*sizes);
  for (size_t i = 0; i < want.size(); ++i) {
    if ((*sizes)[i] == 1) continue;
    if (i >= strides.size() || !strides[i].is_concrete() || strides[i].value() != want[i]) return false;
  }
  return true;
}

IntList int_list(std::vector<int64_t> v) { return IntList{std::move(v)}; }

class Decomposer {
 public:
  Decomposer(ExportedProgram& ep, PassContext& ctx, const Decompose& pass) : ep_(ep), ctx_(ctx), pass_(pass), rw_(ep) {}

  Result<bool> run() {
    for (Node* n : ep_.graph().nodes_snapshot()) {
      Rule rule = find_rule(n->op_target());
      if (!rule) continue;
      if (pass_.keeps(n->target())) {
        ctx_.kept(n->name(), head(n) + "kept: on the keep-list");
        continue;
      }
      std::string node = n->name(), h = head(n);
      LATHE_ASSIGN_OR_RETURN(std::string result, (this->*rule)(n));
      if (result.rfind("into ", 0) == 0) {
        changed_ = true;
        ctx_.rewritten(node, h + "decomposed " + result);
      } else {
        ctx_.kept(node, h + "kept: " + result);
      }
    }
    return changed_;
  }

 private:
  // A rule returns "into <what>" when it rewrote, else why it kept the node.
  using Rule = Result<std::string> (Decomposer::*)(Node*);

  static Rule find_rule(OpTarget op) {
    if (op == aten::linear) return &Decomposer::linear;
    if (op == aten::matmul) return &Decomposer::matmul;
    if (op == aten::t) return &Decomposer::t;
    if (op == aten::transpose_int) return &Decomposer::transpose;
    if (op == aten::softmax_int || op == aten::log_softmax_int) return &Decomposer::softmax;
    if (op == aten::layer_norm) return &Decomposer::layer_norm;
    if (op == aten::conv1d || op == aten::conv2d) return &Decomposer::conv;
    if (op == aten::dropout) return &Decomposer::dropout;
    return nullptr;
  }

  static std::string head(const Node* n) { return n->op_name() + " '" + n->name() + "' "; }

  Result<Value*> call(OpTarget op, std::vector<NamedArgument> args, TensorMeta meta, const std::string& name,
                      Node* before) {
    return rw_.create_call(op.str(), std::move(args), std::move(meta), name, before);
  }

  Result<Value*> permute(Value* v, std::vector<int64_t> dims, Node* before) {
    TensorMeta m = permuted_meta(v, dims);
    return call(aten::permute, {pos(arg::self, TensorRef{v}), pos(arg::dims, int_list(std::move(dims)))}, m, "permute",
                before);
  }

  // x viewed as 2-D [prod(leading dims), last dim].
  Result<Value*> flatten_leading(Value* x, const std::vector<int64_t>& xs, Node* before) {
    int64_t rows = std::accumulate(xs.begin(), xs.end() - 1, int64_t{1}, std::multiplies<>());
    std::vector<int64_t> shape = {rows, xs.back()};
    const bool view = is_contiguous_meta(x);
    // view(Tensor self, SymInt[] size); reshape(Tensor self, SymInt[] shape).
    return call(view ? aten::view : aten::reshape, {pos(arg::self, TensorRef{x}), pos(view ? arg::size : arg::shape, int_list(shape))},
                GraphBuilder::tensor_meta(shape, x->meta()->dtype), view ? "view" : "reshape", before);
  }

  Result<std::string> linear(Node* n) {
    Value* x = tensor_arg(n, arg::input);
    Value* w = tensor_arg(n, arg::weight);
    Value* b = tensor_arg(n, arg::bias);
    if (!x || !w || !n->output() || !x->meta()) {
      return std::string("its tensor arguments are not where the aten schema puts them");
    }
    auto ws = sizes_of(w);
    if (!ws) return std::string("its weight's shape is not concrete");
    if (ws->size() != 2) return "weight '" + w->name() + "' is " + std::to_string(ws->size()) + "-D, not 2-D";
    const size_t x_rank = x->meta()->sizes.size();
    if (x_rank < 2) return "input '" + x->name() + "' is " + std::to_string(x_rank) + "-D";
    // A 2-D input needs no sizes (a dynamic batch stays symbolic); a larger
    // one is flattened to 2-D, which needs them all.
    auto xs = sizes_of(x), out = sizes_of(n->output());
    if (x_rank > 2 && (!xs || !out)) return std::string("its input shape is not concrete");
    LATHE_ASSIGN_OR_RETURN(Value * wt, permute(w, {1, 0}, n));
    const OpTarget mm_op = b ? aten::addmm : aten::mm;
    auto mm_args = [&](Value* lhs) {
      if (b) return std::vector<NamedArgument>{pos(arg::self, TensorRef{b}), pos(arg::mat1, TensorRef{lhs}), pos(arg::mat2, TensorRef{wt})};
      return std::vector<NamedArgument>{pos(arg::self, TensorRef{lhs}), pos(arg::mat2, TensorRef{wt})};
    };
    if (x_rank == 2) {
      LATHE_RETURN_IF_ERROR(rw_.retarget(n, mm_op, mm_args(x)));
      return std::string("into permute + ") + (b ? "addmm" : "mm");
    }
    LATHE_ASSIGN_OR_RETURN(Value * flat, flatten_leading(x, *xs, n));
    std::vector<int64_t> mm_shape = {flat->meta()->concrete_sizes()->at(0), (*ws)[0]};
    LATHE_ASSIGN_OR_RETURN(Value * mm, call(mm_op, mm_args(flat), GraphBuilder::tensor_meta(mm_shape, n->output()->meta()->dtype),
                                            b ? "addmm" : "mm", n));
    LATHE_RETURN_IF_ERROR(
        rw_.retarget(n, aten::view, {pos(arg::self, TensorRef{mm}), pos(arg::size, int_list(*out))}));
    return std::string("into permute + ") + std::string(ops::aten_op_name(flat->producer()->target())) + " + " + (b ? "addmm" : "mm") + " + view";
  }

  Result<std::string> matmul(Node* n) {
    Value* a = tensor_arg(n, arg::self);
    Value* b = tensor_arg(n, arg::other);
    auto as = sizes_of(a), bs = sizes_of(b), out = sizes_of(n->output());
    if (!a || !b || !as || !bs || !out) return std::string("its shapes are not concrete");
    if (as->size() == 2 && bs->size() == 2) {
      LATHE_RETURN_IF_ERROR(rw_.retarget(n, aten::mm, {pos(arg::self, TensorRef{a}), pos(arg::mat2, TensorRef{b})}));
      return std::string("into mm");
    }
    if (as->size() == 3 && bs->size() == 3 && (*as)[0] == (*bs)[0]) {
      LATHE_RETURN_IF_ERROR(rw_.retarget(n, aten::bmm, {pos(arg::self, TensorRef{a}), pos(arg::mat2, TensorRef{b})}));
      return std::string("into bmm");
    }
    if (as->size() >= 3 && bs->size() == 2) {
      LATHE_ASSIGN_OR_RETURN(Value * flat, flatten_leading(a, *as, n));
      std::vector<int64_t> mm_shape = {flat->meta()->concrete_sizes()->at(0), (*bs)[1]};
      LATHE_ASSIGN_OR_RETURN(Value * mm, call(aten::mm, {pos(arg::self, TensorRef{flat}), pos(arg::mat2, TensorRef{b})},
                                              GraphBuilder::tensor_meta(mm_shape, n->output()->meta()->dtype), "mm", n));
      LATHE_RETURN_IF_ERROR(
          rw_.retarget(n, aten::view, {pos(arg::self, TensorRef{mm}), pos(arg::size, int_list(*out))}));
      return std::string("into ") + std::string(ops::aten_op_name(flat->producer()->target())) + " + mm + view";
    }
    return "a matmul of a " + std::to_string(as->size()) + "-D and a " + std::to_string(bs->size()) +
           "-D tensor has no decomposition here";
  }

  Result<std::string> t(Node* n) {
    Value* x = tensor_arg(n, arg::self);
    auto xs = sizes_of(x);
    if (!xs || xs->size() != 2) return std::string("t of a tensor that is not 2-D is left as it is");
    LATHE_RETURN_IF_ERROR(rw_.retarget(n, aten::permute, {pos(arg::self, TensorRef{x}), pos(arg::dims, int_list({1, 0}))}));
    return std::string("into permute [1, 0]");
  }

  Result<std::string> transpose(Node* n) {
    auto p = ops::permutation_of(*n);
    if (!p) return std::string("its dims or rank are not known");
    Value* x = tensor_arg(n, arg::self);
    std::string dims = format_argument(int_list(*p));
    LATHE_RETURN_IF_ERROR(rw_.retarget(n, aten::permute, {pos(arg::self, TensorRef{x}), pos(arg::dims, int_list(*p))}));
    return "into permute " + dims;
  }

  Result<std::string> softmax(Node* n) {
    const Argument* dtype = n->input(arg::dtype);
    if (dtype && !dtype->is_none()) return "a dtype (" + format_argument(*dtype) + ") is given";
    const Argument* dim = n->input(arg::dim);
    Value* x = tensor_arg(n, arg::self);
    if (!dim || !x) return std::string("its arguments are not where the aten schema puts them");
    const bool log = n->op_target() == aten::log_softmax_int;
    const OpTarget op = log ? aten::_log_softmax : aten::_softmax;
    LATHE_RETURN_IF_ERROR(rw_.retarget(n, op, {pos(arg::self, TensorRef{x}), pos(arg::dim, *dim), pos(arg::half_to_float, false)}));
    return std::string("into ") + (log ? "_log_softmax" : "_softmax");
  }

  Result<std::string> layer_norm(Node* n) {
    Value* x = tensor_arg(n, arg::input);
    const Argument* shape = n->input(arg::normalized_shape);
    auto xs = sizes_of(x);
    if (!x || !shape || !xs || !n->output()) return std::string("its input shape is not concrete");
    size_t k = 0;
    if (const auto* l = shape->get_if<IntList>()) k = l->items.size();
    else if (const auto* s = shape->get_if<SymIntList>()) k = s->items.size();
    if (k == 0 || k > xs->size()) return "normalized_shape " + format_argument(*shape) + " does not fit the input";
    std::vector<int64_t> stat = *xs;
    for (size_t i = stat.size() - k; i < stat.size(); ++i) stat[i] = 1;
    auto opt = [&](std::string_view name) -> Argument {
      const Argument* a = n->input(name);
      return a ? *a : Argument(NoneArg{});
    };
    const Argument* eps = n->input(arg::eps);
    std::vector<NamedArgument> args = {pos(arg::input, TensorRef{x}), pos(arg::normalized_shape, *shape),
                                       pos(arg::weight, opt(arg::weight)), pos(arg::bias, opt(arg::bias)),
                                       pos(arg::eps, eps ? *eps : Argument(1e-5))};
    DType dt = x->meta()->dtype;
    std::string name = n->name();
    std::vector<NewOutput> outs = {NewOutput{ValueKind::Tensor, name + "_out", *n->output()->meta()},
                                   NewOutput{ValueKind::Tensor, name + "_mean", GraphBuilder::tensor_meta(stat, dt)},
                                   NewOutput{ValueKind::Tensor, name + "_rstd", GraphBuilder::tensor_meta(stat, dt)}};
    LATHE_ASSIGN_OR_RETURN(Node * ln, rw_.create_node(aten::native_layer_norm.str(), std::move(args), std::move(outs), n));
    Value* old = n->output();
    std::string old_name = old->name();
    LATHE_RETURN_IF_ERROR(rw_.replace_all_uses(old, ln->defined_values()[0]));
    LATHE_RETURN_IF_ERROR(rw_.erase_node(n));
    LATHE_RETURN_IF_ERROR(rw_.rename(ln->defined_values()[0], old_name));
    return std::string("into native_layer_norm");
  }

  Result<std::string> conv(Node* n) {
    Value* x = tensor_arg(n, arg::input);
    Value* w = tensor_arg(n, arg::weight);
    if (!x || !w) return std::string("its tensor arguments are not where the aten schema puts them");
    size_t k = n->op_target() == aten::conv1d ? 1 : 2;
    auto expand = [&](std::string_view name, int64_t dflt) -> Result<IntList> {
      const Argument* a = n->input(name);
      std::vector<int64_t> v;
      if (!a) v.assign(k, dflt);
      else if (const auto* l = a->get_if<IntList>()) v = l->items;
      else if (const auto* i = a->get_if<int64_t>()) v.assign(k, *i);
      else return make_error(std::string(name) + " is " + format_argument(*a));
      if (v.size() == 1) v.assign(k, v[0]);
      if (v.size() != k) return make_error(std::string(name) + " has " + std::to_string(v.size()) + " entries");
      return IntList{v};
    };
    auto stride = expand(arg::stride, 1), padding = expand(arg::padding, 0), dilation = expand(arg::dilation, 1);
    for (auto* r : {&stride, &padding, &dilation})
      if (!r->ok()) return r->error().message();
    const Argument* bias = n->input(arg::bias);
    const Argument* groups = n->input(arg::groups);
    LATHE_RETURN_IF_ERROR(rw_.retarget(
        n, aten::convolution,
        {pos(arg::input, TensorRef{x}), pos(arg::weight, TensorRef{w}), pos(arg::bias, bias ? *bias : Argument(NoneArg{})),
         pos(arg::stride, *stride), pos(arg::padding, *padding), pos(arg::dilation, *dilation), pos(arg::transposed, false),
         pos(arg::output_padding, int_list(std::vector<int64_t>(k, 0))),
         pos(arg::groups, groups ? *groups : Argument(int64_t{1}))}));
    return std::string("into convolution");
  }

  Result<std::string> dropout(Node* n) {
    Value* x = tensor_arg(n, arg::input);
    const Argument* train = n->input(arg::train);
    const Argument* p = n->input(arg::p);
    bool off = (train && train->is<bool>() && !train->as<bool>()) || (p && p->is<double>() && p->as<double>() == 0.0);
    if (!x || !off) return std::string("it is a training-mode dropout (random)");
    LATHE_RETURN_IF_ERROR(rw_.retarget(n, aten::clone, {pos(arg::self, TensorRef{x})}));
    return std::string("into clone (inference dropout)");
  }

  ExportedProgram& ep_;
  PassContext& ctx_;
  const Decompose& pass_;
  Rewriter rw_;
  bool changed_ = false;
};

}  // namespace

void Decompose::set_keep(const std::vector<std::string>& keep) {
  keep_.clear();
  for (const auto& k : keep) keep_.insert(strip(k));
}

bool Decompose::keeps(std::string_view target) const {
  std::string op = strip(target);
  if (keep_.count(op)) return true;
  size_t dot = op.rfind('.');
  return dot != std::string::npos && keep_.count(op.substr(0, dot));
}

std::vector<std::string> Decompose::decomposed_ops() {
  std::vector<std::string> out;
  for (OpTarget op : {aten::linear, aten::matmul, aten::t, aten::transpose_int, aten::softmax_int, aten::log_softmax_int,
                      aten::layer_norm, aten::conv1d, aten::conv2d, aten::dropout}) {
    out.emplace_back(ops::op_name(op));
  }
  return out;
}

Result<bool> Decompose::run(ExportedProgram& program, PassContext& ctx) { return Decomposer(program, ctx, *this).run(); }

}  // namespace lathe
