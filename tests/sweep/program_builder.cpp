#include "sweep/program_builder.h"

#include <cstring>
#include <limits>

#include "lathe/ir/graph_builder.h"
#include "sweep/op_shapes.h"

namespace lathe::sweep {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

uint64_t hash_string(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Replaces the named state tensor with seeded values: [-0.5, 0.5), or
// [0.5, 1.5) for a variance or a divisor.
void fill_state(ExportedProgram& ep, const std::string& name, uint64_t seed, bool positive) {
  for (NamedTensors* table : {&ep.parameters, &ep.buffers, &ep.constants}) {
    const Tensor* old = table->find(name);
    if (!old) continue;
    Tensor t = Tensor::empty(DType::Float32, old->sizes);
    float* p = reinterpret_cast<float*>(t.storage->mutable_data());
    uint64_t s = mix(seed, hash_string(name)) | 1;
    for (int64_t i = 0; i < t.numel(); ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      // Multiples of 1/256: exact in float, so foldings cannot round differently.
      const float u = static_cast<float>((s >> 33) % 256) / 256.0f;
      p[i] = positive ? 0.5f + u : u - 0.5f;
    }
    table->set(name, std::move(t));
    return;
  }
}

std::string flat(const std::string& fqn) {
  std::string s = fqn;
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s;
}

class MethodBuilder {
 public:
  MethodBuilder(ExportedProgram& ep, uint64_t seed) : ep_(ep), b_(ep), seed_(seed) {}

  Status build(const MethodSpec& m) {
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      values_.push_back(b_.user_input("x" + std::to_string(i), m.inputs[i]));
      shapes_.push_back(Shape{m.inputs[i], {}});
    }
    for (size_t i = 0; i < m.ops.size(); ++i) {
      Status s = add_op(m.ops[i], static_cast<int>(i));
      if (!s.ok()) return s.error().context("op " + std::to_string(i) + " (v" + std::to_string(m.inputs.size() + i) + ")");
    }
    if (m.outputs.empty()) return make_error("no outputs");
    for (int o : m.outputs) {
      if (o < 0 || o >= static_cast<int>(values_.size())) return make_error("output v" + std::to_string(o) + " does not exist");
      b_.user_output(values_[o]);
    }
    return Status::Ok();
  }

 private:
  using A = GraphBuilder::Arg;

  Value* call(const std::string& op, std::vector<A> args, const std::vector<int64_t>& sizes) {
    return b_.call(op, std::move(args), sizes);
  }
  Value* scalar_op(const char* op, Value* x, double s, const std::vector<int64_t>& sizes) {
    return call(op, {{"self", x}, {"other", Argument(s)}}, sizes);
  }

  Value* weight(WeightKind kind, const std::string& fqn, const std::vector<int64_t>& sizes, bool positive, int salt) {
    switch (kind) {
      case WeightKind::Parameter: {
        Value* v = b_.parameter(fqn, sizes);
        fill_state(ep_, fqn, seed_, positive);
        return v;
      }
      case WeightKind::Buffer: {
        Value* v = b_.buffer(fqn, sizes, salt % 2 == 0);
        fill_state(ep_, fqn, seed_, positive);
        return v;
      }
      case WeightKind::Constant: {
        const std::string name = flat(fqn) + "_const";
        Value* v = b_.constant(name, sizes);
        fill_state(ep_, name, seed_, positive);
        return v;
      }
      case WeightKind::MutableBuffer: {
        Value* v = b_.buffer(fqn, sizes, true);
        fill_state(ep_, fqn, seed_, positive);
        Value* half = scalar_op("aten.mul.Tensor", v, 0.5, sizes);
        Value* next = scalar_op("aten.add.Tensor", half, 0.25, sizes);
        b_.buffer_mutation(next, fqn);
        return salt % 2 == 0 ? v : next;  // read before or after the update
      }
      case WeightKind::UserInput:
        return b_.user_input(flat(fqn), sizes);
      case WeightKind::FoldedFromState: {
        Value* a = b_.parameter(fqn, sizes);
        fill_state(ep_, fqn, seed_, positive);
        const std::string cname = flat(fqn) + "_c";
        Value* c = b_.constant(cname, sizes);
        fill_state(ep_, cname, seed_, positive);
        return call("aten.add.Tensor", {{"self", a}, {"other", c}}, sizes);
      }
      case WeightKind::RuntimeComputed: {
        Value* a = b_.parameter(fqn, sizes);
        fill_state(ep_, fqn, seed_, positive);
        // The scale has the weight's rank (a 0-d weight times a [1] scale would be [1]).
        const std::vector<int64_t> one(sizes.empty() ? 0 : 1, 1);
        Value* s = b_.user_input(flat(fqn) + "_scale", one);
        Value* g = call("aten.sigmoid.default", {{"self", s}}, one);
        return call("aten.mul.Tensor", {{"self", a}, {"other", g}}, sizes);
      }
    }
    return nullptr;
  }

  static IntList pair(int64_t v) { return IntList{{v, v}}; }

  Status add_op(const OpSpec& op, int index) {
    std::vector<Shape> arg_shapes;
    std::vector<Value*> args;
    for (int a : op.args) {
      if (a < 0 || a >= static_cast<int>(values_.size())) return make_error("operand v" + std::to_string(a) + " does not exist");
      arg_shapes.push_back(shapes_[a]);
      args.push_back(values_[a]);
    }
    LATHE_ASSIGN_OR_RETURN(OpShapes os, op_shapes(op, arg_shapes));
    const std::string prefix = "op" + std::to_string(index) + ".";
    static const char* const roles[] = {"weight", "bias", "running_mean", "running_var"};
    std::vector<Value*> w;
    for (size_t k = 0; k < op.weights.size(); ++k) {
      const std::string role = op.kind == OpKind::StateUpdate ? "running_stat" : (k < 4 ? roles[k] : "w" + std::to_string(k));
      if (op.kind == OpKind::StateUpdate) {  // updated below, by the op itself
        w.push_back(b_.buffer(prefix + role, os.weights[k], true));
        fill_state(ep_, prefix + role, seed_, false);
        continue;
      }
      w.push_back(weight(op.weights[k], prefix + role, os.weights[k], os.positive[k], index + static_cast<int>(k)));
    }
    const std::vector<int64_t>& out = os.out.d;
    const auto& p = op.p;
    Value* x = args.empty() ? nullptr : args[0];
    const int rank = arg_shapes.empty() ? 0 : arg_shapes[0].rank();
    Value* y = nullptr;
    switch (op.kind) {
      case OpKind::Linear: {
        std::vector<A> a{{"input", x}, {"weight", w[0]}};
        if (p[1]) a.push_back({"bias", w[1]});
        y = call("aten.linear.default", std::move(a), out);
        break;
      }
      case OpKind::Addmm:
      case OpKind::Mm: {
        Value* mat2 = w[0];
        const auto& ws = os.weights[0];
        if (p[1] == 0) mat2 = call("aten.permute.default", {{"self", w[0]}, {"dims", IntList{{1, 0}}}}, {ws[1], ws[0]});
        if (p[1] == 1) mat2 = call("aten.t.default", {{"self", w[0]}}, {ws[1], ws[0]});
        if (op.kind == OpKind::Mm) {
          y = call("aten.mm.default", {{"self", x}, {"mat2", mat2}}, out);
        } else {
          std::vector<A> a{{"self", w[1]}, {"mat1", x}, {"mat2", mat2}};
          if (p[2]) {
            a.push_back({"beta", Argument(0.5), ArgKind::Keyword});
            a.push_back({"alpha", Argument(2.0), ArgKind::Keyword});
          }
          y = call("aten.addmm.default", std::move(a), out);
        }
        break;
      }
      case OpKind::Bmm:
        y = call("aten.bmm.default", {{"self", x}, {"mat2", w[0]}}, out);
        break;
      case OpKind::Binary: {
        static const char* const names[] = {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor"};
        std::vector<A> a{{"self", x}};
        if (p[1] == 0) a.push_back({"other", args[1]});
        else if (p[1] == 1) a.push_back({"other", w[0]});
        else a.push_back({"other", Argument(p[0] == 3 ? 1.5 : 0.75)});
        if (p[4] && p[0] <= 1) a.push_back({"alpha", Argument(int64_t{2}), ArgKind::Keyword});
        y = call(names[p[0]], std::move(a), out);
        break;
      }
      case OpKind::Unary: {
        std::vector<A> a{{"self", x}};
        if (p[0] == 2) a.push_back({"approximate", Argument(std::string("tanh")), ArgKind::Keyword});
        if (p[0] == 7) {
          a.push_back({"min_val", Argument(-0.5)});
          a.push_back({"max_val", Argument(1.0)});
        }
        if (p[0] == 10) {
          a.push_back({"min", Argument(-0.5)});
          a.push_back({"max", Argument(0.5)});
        }
        y = call(unary_op_name(p[0]), std::move(a), out);
        break;
      }
      case OpKind::Conv2d: {
        const int64_t groups = conv_groups(p[5], arg_shapes[0].d[1]);
        if (op.variant == 0) {
          std::vector<A> a{{"input", x}, {"weight", w[0]}};
          if (p[6]) a.push_back({"bias", w[1]});
          a.push_back({"stride", pair(p[2])});
          a.push_back({"padding", pair(p[3])});
          a.push_back({"dilation", pair(p[4])});
          a.push_back({"groups", Argument(groups)});
          y = call("aten.conv2d.default", std::move(a), out);
        } else {
          y = call("aten.convolution.default",
                   {{"input", x}, {"weight", w[0]}, {"bias", p[6] ? Argument(TensorRef{w[1]}) : Argument()},
                    {"stride", pair(p[2])}, {"padding", pair(p[3])}, {"dilation", pair(p[4])},
                    {"transposed", Argument(false)}, {"output_padding", pair(0)}, {"groups", Argument(groups)}},
                   out);
        }
        break;
      }
      case OpKind::BatchNorm: {
        const double eps = p[0] ? 1e-3 : 1e-5;
        std::vector<A> a{{"input", x}, {"weight", w[0]}, {"bias", w[1]}, {"running_mean", w[2]}, {"running_var", w[3]}};
        if (op.variant == 0) {
          a.push_back({"momentum", Argument(0.1)});
          a.push_back({"eps", Argument(eps)});
          y = b_.call("aten._native_batch_norm_legit_no_training.default", std::move(a),
                      {GraphBuilder::tensor_meta(out), GraphBuilder::tensor_meta({0}), GraphBuilder::tensor_meta({0})})[0];
        } else if (op.variant == 1) {
          a.push_back({"training", Argument(false)});
          a.push_back({"momentum", Argument(0.1)});
          a.push_back({"eps", Argument(eps)});
          a.push_back({"cudnn_enabled", Argument(true)});
          y = call("aten.batch_norm.default", std::move(a), out);
        } else {
          a.push_back({"training", Argument(false)});
          a.push_back({"momentum", Argument(0.1)});
          a.push_back({"eps", Argument(eps)});
          y = b_.call("aten.native_batch_norm.default", std::move(a),
                      {GraphBuilder::tensor_meta(out), GraphBuilder::tensor_meta({0}), GraphBuilder::tensor_meta({0})})[0];
        }
        break;
      }
      case OpKind::MaxPool: {
        std::vector<A> a{{"self", x}, {"kernel_size", pair(p[0])}, {"stride", pair(p[1])}, {"padding", pair(p[2])},
                         {"dilation", pair(p[3])}, {"ceil_mode", Argument(p[4] != 0)}};
        if (op.variant == 0) {
          y = b_.call("aten.max_pool2d_with_indices.default", std::move(a),
                      {GraphBuilder::tensor_meta(out), GraphBuilder::tensor_meta(out, DType::Int64)})[0];
        } else {
          y = call("aten.max_pool2d.default", std::move(a), out);
        }
        break;
      }
      case OpKind::AvgPool:
        y = call("aten.avg_pool2d.default",
                 {{"self", x}, {"kernel_size", pair(p[0])}, {"stride", pair(p[1])}, {"padding", pair(p[2])},
                  {"ceil_mode", Argument(p[3] != 0)}, {"count_include_pad", Argument(p[4] != 0)}},
                 out);
        break;
      case OpKind::LayerNorm: {
        const auto& xs = arg_shapes[0].d;
        IntList ns{std::vector<int64_t>(xs.end() - p[0], xs.end())};
        Value* lw = p[1] ? w[0] : nullptr;
        Value* lb = p[2] ? w[p[1] ? 1 : 0] : nullptr;
        if (op.variant == 0) {
          std::vector<A> a{{"input", x}, {"normalized_shape", ns}};
          if (lw) a.push_back({"weight", lw});
          if (lb) a.push_back({"bias", lb});
          a.push_back({"eps", Argument(1e-5)});
          y = call("aten.layer_norm.default", std::move(a), out);
        } else {
          std::vector<int64_t> stat(xs.begin(), xs.end() - p[0]);
          stat.resize(xs.size(), 1);
          y = b_.call("aten.native_layer_norm.default",
                      {{"input", x}, {"normalized_shape", ns}, {"weight", lw ? Argument(TensorRef{lw}) : Argument()},
                       {"bias", lb ? Argument(TensorRef{lb}) : Argument()}, {"eps", Argument(1e-5)}},
                      {GraphBuilder::tensor_meta(out), GraphBuilder::tensor_meta(stat), GraphBuilder::tensor_meta(stat)})[0];
        }
        break;
      }
      case OpKind::Softmax:
        if (op.variant == 1) {
          y = call("aten.softmax.int", {{"self", x}, {"dim", Argument(p[0])}}, out);
        } else {
          y = call(op.variant == 0 ? "aten._softmax.default" : "aten._log_softmax.default",
                   {{"self", x}, {"dim", Argument(p[0])}, {"half_to_float", Argument(false)}}, out);
        }
        break;
      case OpKind::Permute:
        y = call("aten.permute.default", {{"self", x}, {"dims", IntList{p}}}, out);
        break;
      case OpKind::Transpose:
        if (op.variant == 1) y = call("aten.t.default", {{"self", x}}, out);
        else y = call("aten.transpose.int", {{"self", x}, {"dim0", Argument(p[0])}, {"dim1", Argument(p[1])}}, out);
        break;
      case OpKind::Reshape:
        if (op.variant == 0) y = call("aten.view.default", {{"self", x}, {"size", IntList{out}}}, out);
        else y = call("aten.reshape.default", {{"self", x}, {"shape", IntList{out}}}, out);
        break;
      case OpKind::Cat: {
        std::vector<Value*> items{x, p[1] == 0 ? args[1] : p[1] == 1 ? w[0] : x};
        y = call("aten.cat.default", {{"tensors", TensorList{items}}, {"dim", Argument(p[0])}}, out);
        break;
      }
      case OpKind::Slice:
        y = call("aten.slice.Tensor",
                 {{"self", x}, {"dim", Argument(p[0])}, {"start", Argument(p[1])}, {"end", Argument(p[2])},
                  {"step", Argument(p[3])}},
                 out);
        break;
      case OpKind::Mean: {
        IntList dims;
        for (int i = 0; i < rank; ++i) {
          if (p[0] & (int64_t{1} << i)) dims.items.push_back(i);
        }
        y = call("aten.mean.dim", {{"self", x}, {"dim", dims}, {"keepdim", Argument(p[1] != 0)}}, out);
        break;
      }
      case OpKind::StateUpdate: {
        // An input-dependent state update: a running statistic of x.
        Value* m = x;
        if (rank > 1) {
          IntList dims;
          for (int i = 0; i + 1 < rank; ++i) dims.items.push_back(i);
          m = call("aten.mean.dim", {{"self", x}, {"dim", dims}, {"keepdim", Argument(false)}}, out);
        }
        Value* decayed = scalar_op("aten.mul.Tensor", w[0], 0.9, out);
        Value* fresh = scalar_op("aten.mul.Tensor", m, 0.1, out);
        y = call("aten.add.Tensor", {{"self", decayed}, {"other", fresh}}, out);
        b_.buffer_mutation(y, prefix + "running_stat");
        break;
      }
      case OpKind::Unsqueeze:
        y = call("aten.unsqueeze.default", {{"self", x}, {"dim", Argument(p[0])}}, out);
        break;
    }
    if (!os.out.strides.empty()) {  // a view: its metadata keeps the operand's memory layout
      TensorMeta meta = *y->meta();
      meta.strides.clear();
      for (int64_t s : os.out.strides) meta.strides.push_back(SymDim(s));
      y->set_meta(std::move(meta));
    }
    values_.push_back(y);
    shapes_.push_back(os.out);
    return Status::Ok();
  }

 private:
  ExportedProgram& ep_;
  GraphBuilder b_;
  uint64_t seed_;
  std::vector<Value*> values_;
  std::vector<Shape> shapes_;
};

}  // namespace

Result<Program> build_program(const ProgramSpec& spec) {
  Program program;
  if (spec.methods.empty()) return make_error("no methods");
  for (size_t i = 0; i < spec.methods.size(); ++i) {
    const MethodSpec& m = spec.methods[i];
    ExportedProgram& ep = program.add_method(m.name);
    MethodBuilder mb(ep, mix(spec.seed, i));
    Status s = mb.build(m);
    if (!s.ok()) return s.error().context("method '" + m.name + "'");
  }
  return program;
}

}  // namespace lathe::sweep
