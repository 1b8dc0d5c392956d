// XnnpackBackend::init / execute: prepacks each payload op into an XNNPACK
// operator (weights copied and packed by XNNPACK into memory it owns), then
// runs them in order on every call.
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "lathe/backends/payload.h"
#include "lathe/backends/xnnpack_host_ops.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

// ---- library and thread pool ------------------------------------------------------------

Status ensure_initialized() {
  static const xnn_status status = xnn_initialize(nullptr);
  if (status != xnn_status_success) return make_error("xnnpack: xnn_initialize failed (status " + std::to_string(status) + "; unsupported CPU?)");
  return Status::Ok();
}

struct Pool {
  std::mutex mu;
  int threads = 0;  // 0: not chosen yet -> every core
  pthreadpool_t pool = nullptr;
};
Pool& pool_state() {
  static Pool p;
  return p;
}

pthreadpool_t thread_pool() {
  Pool& p = pool_state();
  std::lock_guard<std::mutex> lock(p.mu);
  if (!p.threads) p.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!p.pool && p.threads > 1) p.pool = pthreadpool_create(static_cast<size_t>(p.threads));
  return p.pool;  // nullptr: one thread, XNNPACK runs inline
}

// ---- ops ------------------------------------------------------------------------------------

// Host: a portable kernel run between the XNNPACK operators (xnnpack_host_ops.h).
enum class Kind { FullyConnected, Conv2d, Add, Mul, Clamp, Hardswish, Sigmoid, Hardsigmoid, MaxPool, AvgPool, GlobalAvgPool, Softmax, ToNhwc, ToNchw, ConstantPad, Host };

Result<Kind> kind_of(const std::string& k) {
  static const std::pair<const char*, Kind> table[] = {
      {"fully_connected", Kind::FullyConnected}, {"conv2d", Kind::Conv2d}, {"add", Kind::Add}, {"mul", Kind::Mul},
      {"clamp", Kind::Clamp}, {"hardswish", Kind::Hardswish}, {"sigmoid", Kind::Sigmoid}, {"hardsigmoid", Kind::Hardsigmoid},
      {"max_pool2d", Kind::MaxPool}, {"avg_pool2d", Kind::AvgPool}, {"global_avg_pool", Kind::GlobalAvgPool},
      {"softmax", Kind::Softmax}, {"to_nhwc", Kind::ToNhwc}, {"to_nchw", Kind::ToNchw}, {"constant_pad", Kind::ConstantPad}};
  for (const auto& [name, kind] : table) {
    if (k == name) return kind;
  }
  if (host_op_named(k)) return Kind::Host;
  return make_error("unknown op kind '" + k + "'");
}

// Operands XNNPACK packs at init: they must be compile-time constants.
bool prepacked_role(Kind k, const std::string& role) {
  if (k == Kind::FullyConnected) return role == "weight" || role == "bias";
  if (k == Kind::Conv2d) return role == "weight" || role == "bias" || role.starts_with("bn_");
  return false;
}

struct Op {
  Kind kind;
  std::string label;  // "fully_connected 'linear'"
  xnn_operator_t op = nullptr;
  std::vector<uint32_t> in, out;
  std::vector<int64_t> ints;
  std::vector<size_t> shape_a, shape_b;  // add / mul; constant_pad: input shape, pre-padding
  std::vector<size_t> shape_c;           // constant_pad: post-padding
  std::optional<HostOp> host;
  const PayloadOp* pop = nullptr;  // host ops: their parameters and operand roles (payload_ does not change after init)
};

std::string status_text(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "status " + std::to_string(static_cast<int>(s));
}

#define LATHE_XNN(call, what)                                                                   \
  do {                                                                                          \
    xnn_status st_ = (call);                                                                    \
    if (st_ != xnn_status_success) return make_error(std::string(what) + ": " + status_text(st_)); \
  } while (0)

class XnnpackHandle final : public DelegateHandle {
 public:
  ~XnnpackHandle() override {
    for (Op& op : ops_) {
      if (op.op) xnn_delete_operator(op.op);
    }
  }
  Status init(const DelegateInitArgs& args);
  Status execute(KernelCall& call) override;

 private:
  Status check_operands(const DelegateInitArgs& args, const PayloadOp& pop, Kind kind);
  Result<std::vector<float>> constant(const DelegateInitArgs& args, uint32_t id, int64_t numel, const Op& op, const char* role);
  Status create(const DelegateInitArgs& args, const PayloadOp& pop, Op& op);
  Status run_op(const Op& op, pthreadpool_t pool);

  DelegatePayload payload_;
  std::vector<Op> ops_;
  std::vector<Tensor> scratch_;  // per value made inside the delegate (owned, contiguous)
  std::vector<Tensor> bound_;    // per value during execute(): its tensor, with the payload's sizes
  std::vector<float*> ptr_;      // per value, valid during execute()
  std::vector<Tensor> keep_;                 // contiguous copies of strided inputs, per call
};

int64_t numel_of(const std::vector<size_t>& s) {
  int64_t n = 1;
  for (size_t d : s) n *= static_cast<int64_t>(d);
  return n;
}

Status XnnpackHandle::check_operands(const DelegateInitArgs& args, const PayloadOp& pop, Kind kind) {
  for (const PayloadOperand& o : pop.inputs) {
    if (!prepacked_role(kind, o.role)) continue;
    const PayloadValue& pv = payload_.values[o.value];
    const std::string who = "xnnpack: " + pop.kind + " '" + pop.node + "'";
    if (pv.input < 0) {
      return make_error(who + ": operand '" + o.role + "' is computed inside the delegate; XNNPACK prepacks it at init, so it must be a compile-time constant");
    }
    if (static_cast<size_t>(pv.input) >= args.operands.size()) {
      return make_error(who + ": operand '" + o.role + "' names delegate input " + std::to_string(pv.input) + " of " + std::to_string(args.operands.size()));
    }
    const DelegateOperand& d = args.operands[pv.input];
    const Constness constness(args.program);
    if (d.state && d.value && constness.is_compile_time_constant(d.value)) continue;
    std::string producer;
    if (!d.value) producer = "no value";
    else if (d.value->producer()) producer = "produced at run time by node '" + d.value->producer()->name() + "' (" + d.value->producer()->op_name() + ")";
    else producer = "a placeholder: " + std::string(origin_name(constness.origin(d.value)));
    std::string why = d.value ? constness.explain(d.value) : "";
    return make_error(who + ": operand '" + o.role + "' is '" + (d.value ? d.value->name() : "?") + "', " + producer +
                      (why.empty() ? "" : " (" + why + ")") +
                      ", not a compile-time constant; XNNPACK prepacks weights at init, so this payload cannot be initialised");
  }
  return Status::Ok();
}

Result<std::vector<float>> XnnpackHandle::constant(const DelegateInitArgs& args, uint32_t id, int64_t numel, const Op& op, const char* role) {
  const Tensor& t = *args.operands[payload_.values[id].input].state;
  if (t.dtype != DType::Float32) return make_error(op.label + ": " + role + " is " + std::string(dtype_name(t.dtype)) + ", not float32");
  LATHE_RETURN_IF_ERROR(t.check_fits());
  if (t.numel() != numel) return make_error(op.label + ": " + role + " has " + std::to_string(t.numel()) + " elements, expected " + std::to_string(numel));
  Tensor c = t.is_contiguous() ? t : kernels::contiguous_copy(t);
  const float* p = reinterpret_cast<const float*>(c.data());
  return std::vector<float>(p, p + numel);
}

Status XnnpackHandle::create(const DelegateInitArgs& args, const PayloadOp& pop, Op& op) {
  auto in_numel = [&](size_t k) { return payload_.values[op.in.at(k)].numel(); };
  auto out_numel = [&] { return payload_.values[op.out.at(0)].numel(); };
  auto need = [&](bool ok, const std::string& what) -> Status {
    if (!ok) return make_error(op.label + ": malformed payload op (" + what + ")");
    return Status::Ok();
  };
  auto role_index = [&](const char* role) -> int {
    for (size_t k = 0; k < pop.inputs.size(); ++k) {
      if (pop.inputs[k].role == role) return static_cast<int>(k);
    }
    return -1;
  };
  const std::vector<int64_t>& I = op.ints;
  if (op.kind == Kind::Host) {  // own checks: roll shifts may be negative, an sdpa scale NaN
    op.host = host_op_named(pop.kind);
    op.pop = &pop;
    return check_host_op(*op.host, pop, payload_.values);
  }
  LATHE_RETURN_IF_ERROR(need(op.out.size() == 1 && !op.in.empty(), "operand counts"));
  for (int64_t x : I) LATHE_RETURN_IF_ERROR(need(x >= 0 && x < (int64_t{1} << 32), "negative or huge parameter"));
  const float lo = pop.floats.size() > 0 ? static_cast<float>(pop.floats[0]) : -INFINITY;
  const float hi = pop.floats.size() > 1 ? static_cast<float>(pop.floats[1]) : INFINITY;
  switch (op.kind) {
    case Kind::FullyConnected: {
      LATHE_RETURN_IF_ERROR(need(I.size() == 4 && pop.floats.size() == 2 && op.in.size() >= 2, "parameters"));
      const int64_t batch = I[0], k = I[1], n = I[2];
      LATHE_RETURN_IF_ERROR(need(in_numel(0) == batch * k && out_numel() == batch * n, "shapes"));
      LATHE_ASSIGN_OR_RETURN(std::vector<float> w, constant(args, op.in[1], k * n, op, "weight"));
      std::vector<float> b;
      if (int bi = role_index("bias"); bi >= 0) {
        LATHE_ASSIGN_OR_RETURN(b, constant(args, op.in[bi], n, op, "bias"));
      }
      LATHE_XNN(xnn_create_fully_connected_nc_f32(k, n, k, n, w.data(), b.empty() ? nullptr : b.data(), lo, hi,
                                                   I[3] ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0, &op.op),
                op.label + ": xnn_create_fully_connected_nc_f32");
      op.in.resize(1);
      return Status::Ok();
    }
    case Kind::Conv2d: {
      LATHE_RETURN_IF_ERROR(need(I.size() == 18 && pop.floats.size() == 3, "parameters"));
      const int64_t N = I[0], H = I[1], W = I[2], cin = I[3], cout = I[4], kh = I[5], kw = I[6], g = I[15], OH = I[16], OW = I[17];
      LATHE_RETURN_IF_ERROR(need(g > 0 && cin % g == 0 && cout % g == 0 && I[7] > 0 && I[8] > 0 && I[13] > 0 && I[14] > 0, "groups/strides"));
      LATHE_RETURN_IF_ERROR(need(in_numel(0) == N * H * W * cin && out_numel() == N * OH * OW * cout, "shapes"));
      LATHE_RETURN_IF_ERROR(need(OH == (H + I[9] + I[11] - I[13] * (kh - 1) - 1) / I[7] + 1 &&
                                 OW == (W + I[10] + I[12] - I[14] * (kw - 1) - 1) / I[8] + 1, "output size"));
      const int64_t gin = cin / g;
      LATHE_ASSIGN_OR_RETURN(std::vector<float> w, constant(args, op.in[1], cout * gin * kh * kw, op, "weight"));
      std::vector<float> b(static_cast<size_t>(cout), 0.0f);
      if (int bi = role_index("bias"); bi >= 0) {
        LATHE_ASSIGN_OR_RETURN(b, constant(args, op.in[bi], cout, op, "bias"));
      }
      if (int gi = role_index("bn_weight"); gi >= 0) {  // fold the batch norm
        LATHE_RETURN_IF_ERROR(need(role_index("bn_bias") >= 0 && role_index("bn_running_mean") >= 0 && role_index("bn_running_var") >= 0, "batch norm operands"));
        LATHE_ASSIGN_OR_RETURN(std::vector<float> gamma, constant(args, op.in[gi], cout, op, "bn_weight"));
        LATHE_ASSIGN_OR_RETURN(std::vector<float> beta, constant(args, op.in[role_index("bn_bias")], cout, op, "bn_bias"));
        LATHE_ASSIGN_OR_RETURN(std::vector<float> mean, constant(args, op.in[role_index("bn_running_mean")], cout, op, "bn_running_mean"));
        LATHE_ASSIGN_OR_RETURN(std::vector<float> var, constant(args, op.in[role_index("bn_running_var")], cout, op, "bn_running_var"));
        const double eps = pop.floats[2];
        const int64_t per = gin * kh * kw;
        for (int64_t c = 0; c < cout; ++c) {
          const double scale = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
          for (int64_t j = 0; j < per; ++j) w[c * per + j] = static_cast<float>(w[c * per + j] * scale);
          b[c] = static_cast<float>((b[c] - mean[c]) * scale + beta[c]);
        }
      }
      // [Cout, Cin/g, kh, kw] -> XNNPACK's [Cout, kh, kw, Cin/g].
      std::vector<float> packed(w.size());
      for (int64_t o = 0; o < cout; ++o)
        for (int64_t i = 0; i < gin; ++i)
          for (int64_t y = 0; y < kh; ++y)
            for (int64_t x = 0; x < kw; ++x) packed[((o * kh + y) * kw + x) * gin + i] = w[((o * gin + i) * kh + y) * kw + x];
      LATHE_XNN(xnn_create_convolution2d_nhwc_f32(
                    static_cast<uint32_t>(I[9]), static_cast<uint32_t>(I[12]), static_cast<uint32_t>(I[11]), static_cast<uint32_t>(I[10]),
                    static_cast<uint32_t>(kh), static_cast<uint32_t>(kw), static_cast<uint32_t>(I[7]), static_cast<uint32_t>(I[8]),
                    static_cast<uint32_t>(I[13]), static_cast<uint32_t>(I[14]), static_cast<uint32_t>(g), gin, cout / g, cin, cout,
                    packed.data(), b.data(), lo, hi, 0, &op.op),
                op.label + ": xnn_create_convolution2d_nhwc_f32");
      op.in.resize(1);
      return Status::Ok();
    }
    case Kind::Add:
    case Kind::Mul: {
      LATHE_RETURN_IF_ERROR(need(op.in.size() == 2 && pop.floats.size() == 2 && !I.empty(), "parameters"));
      size_t pos = 0;
      for (std::vector<size_t>* s : {&op.shape_a, &op.shape_b}) {
        LATHE_RETURN_IF_ERROR(need(pos < I.size() && I[pos] <= XNN_MAX_TENSOR_DIMS && pos + 1 + static_cast<size_t>(I[pos]) <= I.size(), "shapes"));
        for (int64_t d = 0; d < I[pos]; ++d) s->push_back(static_cast<size_t>(I[pos + 1 + d]));
        pos += 1 + static_cast<size_t>(I[pos]);
      }
      // Broadcast shape, right-aligned.
      const size_t r = std::max(op.shape_a.size(), op.shape_b.size());
      std::vector<size_t> o(r);
      for (size_t d = 0; d < r; ++d) {
        const size_t a = d + op.shape_a.size() >= r ? op.shape_a[d + op.shape_a.size() - r] : 1;
        const size_t b = d + op.shape_b.size() >= r ? op.shape_b[d + op.shape_b.size() - r] : 1;
        LATHE_RETURN_IF_ERROR(need(a == b || a == 1 || b == 1, "broadcast"));
        o[d] = std::max(a, b);
      }
      LATHE_RETURN_IF_ERROR(need(in_numel(0) == numel_of(op.shape_a) && in_numel(1) == numel_of(op.shape_b) && out_numel() == numel_of(o), "element counts"));
      if (op.kind == Kind::Add) LATHE_XNN(xnn_create_add_nd_f32(lo, hi, 0, &op.op), op.label + ": xnn_create_add_nd_f32");
      else LATHE_XNN(xnn_create_multiply_nd_f32(lo, hi, 0, &op.op), op.label + ": xnn_create_multiply_nd_f32");
      return Status::Ok();
    }
    case Kind::Clamp:
    case Kind::Hardswish:
    case Kind::Sigmoid:
    case Kind::Hardsigmoid: {
      LATHE_RETURN_IF_ERROR(need(I.size() == 1 && in_numel(0) == I[0] && out_numel() == I[0], "shapes"));
      if (op.kind == Kind::Clamp) LATHE_XNN(xnn_create_clamp_nc_f32(1, 1, 1, lo, hi, 0, &op.op), op.label + ": xnn_create_clamp_nc_f32");
      if (op.kind == Kind::Hardswish) LATHE_XNN(xnn_create_hardswish_nc_f32(1, 1, 1, 0, &op.op), op.label + ": xnn_create_hardswish_nc_f32");
      if (op.kind == Kind::Sigmoid) LATHE_XNN(xnn_create_sigmoid_nc_f32(1, 1, 1, 0, &op.op), op.label + ": xnn_create_sigmoid_nc_f32");
      return Status::Ok();
    }
    case Kind::MaxPool:
    case Kind::AvgPool: {
      LATHE_RETURN_IF_ERROR(need(I.size() == 16 && I[6] > 0 && I[7] > 0 && I[12] > 0 && I[13] > 0, "parameters"));
      const int64_t N = I[0], H = I[1], W = I[2], C = I[3], kh = I[4], kw = I[5], OH = I[14], OW = I[15];
      LATHE_RETURN_IF_ERROR(need(in_numel(0) == N * H * W * C && out_numel() == N * OH * OW * C, "shapes"));
      LATHE_RETURN_IF_ERROR(need(OH == (H + I[8] + I[10] - I[12] * (kh - 1) - 1) / I[6] + 1 &&
                                 OW == (W + I[9] + I[11] - I[13] * (kw - 1) - 1) / I[7] + 1, "output size"));
      auto u = [](int64_t x) { return static_cast<uint32_t>(x); };
      if (op.kind == Kind::MaxPool) {
        LATHE_XNN(xnn_create_max_pooling2d_nhwc_f32(u(I[8]), u(I[11]), u(I[10]), u(I[9]), u(kh), u(kw), u(I[6]), u(I[7]),
                                                    u(I[12]), u(I[13]), C, C, C, lo, hi, 0, &op.op),
                  op.label + ": xnn_create_max_pooling2d_nhwc_f32");
      } else {
        LATHE_XNN(xnn_create_average_pooling2d_nhwc_f32(u(I[8]), u(I[11]), u(I[10]), u(I[9]), u(kh), u(kw), u(I[6]), u(I[7]),
                                                        C, C, C, lo, hi, 0, &op.op),
                  op.label + ": xnn_create_average_pooling2d_nhwc_f32");
      }
      return Status::Ok();
    }
    case Kind::GlobalAvgPool: {
      LATHE_RETURN_IF_ERROR(need(I.size() == 3 && in_numel(0) == I[0] * I[1] * I[2] && out_numel() == I[0] * I[2], "shapes"));
      LATHE_XNN(xnn_create_global_average_pooling_nwc_f32(I[2], I[2], I[2], -INFINITY, INFINITY, 0, &op.op),
                op.label + ": xnn_create_global_average_pooling_nwc_f32");
      return Status::Ok();
    }
    case Kind::ConstantPad: {
      // ints: rank, input shape, pre-padding, post-padding (the buffer's own layout).
      LATHE_RETURN_IF_ERROR(need(!I.empty() && I[0] >= 1 && I[0] <= XNN_MAX_TENSOR_DIMS && I.size() == 1 + 3 * static_cast<size_t>(I[0]) &&
                                 pop.floats.size() == 1 && op.in.size() == 1, "parameters"));
      const size_t r = static_cast<size_t>(I[0]);
      int64_t in_count = 1, out_count = 1;
      for (size_t d = 0; d < r; ++d) {
        op.shape_a.push_back(static_cast<size_t>(I[1 + d]));
        op.shape_b.push_back(static_cast<size_t>(I[1 + r + d]));
        op.shape_c.push_back(static_cast<size_t>(I[1 + 2 * r + d]));
        in_count *= I[1 + d];
        out_count *= I[1 + d] + I[1 + r + d] + I[1 + 2 * r + d];
      }
      LATHE_RETURN_IF_ERROR(need(in_numel(0) == in_count && out_numel() == out_count, "shapes"));
      const float value = static_cast<float>(pop.floats[0]);
      LATHE_XNN(xnn_create_constant_pad_nd_x32(&value, 0, &op.op), op.label + ": xnn_create_constant_pad_nd_x32");
      return Status::Ok();
    }
    case Kind::Host:
      return Status::Ok();
    case Kind::Softmax: {
      LATHE_RETURN_IF_ERROR(need(I.size() == 2 && in_numel(0) == I[0] * I[1] && out_numel() == I[0] * I[1], "shapes"));
      LATHE_XNN(xnn_create_softmax_nc_f32(I[1], I[1], I[1], 0, &op.op), op.label + ": xnn_create_softmax_nc_f32");
      return Status::Ok();
    }
    case Kind::ToNhwc:
    case Kind::ToNchw:
      LATHE_RETURN_IF_ERROR(need(I.size() == 4 && in_numel(0) == I[0] * I[1] * I[2] * I[3] && out_numel() == in_numel(0), "shapes"));
      return Status::Ok();
  }
  return Status::Ok();
}

Status XnnpackHandle::init(const DelegateInitArgs& args) {
  LATHE_RETURN_IF_ERROR(ensure_initialized());
  LATHE_ASSIGN_OR_RETURN(payload_, decode_payload(args.payload));
  if (payload_.backend != "xnnpack") return make_error("xnnpack: the payload is for backend '" + payload_.backend + "'");
  for (const PayloadValue& v : payload_.values) {
    if (v.input >= static_cast<int32_t>(args.operands.size())) {
      return make_error("xnnpack: the payload reads delegate input " + std::to_string(v.input) + ", the node has " + std::to_string(args.operands.size()));
    }
  }
  const size_t outputs = args.node.defined_values().size();
  if (payload_.outputs.size() != outputs) {
    return make_error("xnnpack: the payload has " + std::to_string(payload_.outputs.size()) + " outputs, the node " + std::to_string(outputs));
  }
  std::vector<bool> defined(payload_.values.size(), false);
  for (size_t i = 0; i < payload_.values.size(); ++i) defined[i] = payload_.values[i].input >= 0;
  for (const PayloadOp& pop : payload_.ops) {
    Op op;
    LATHE_ASSIGN_OR_RETURN(op.kind, kind_of(pop.kind));
    op.label = pop.kind + " '" + pop.node + "'";
    // Soundness first: nothing is read before every prepacked operand is
    // known to be a compile-time constant.
    LATHE_RETURN_IF_ERROR(check_operands(args, pop, op.kind));
    for (const PayloadOperand& o : pop.inputs) {
      if (!defined[o.value]) return make_error("xnnpack: " + op.label + " reads value " + std::to_string(o.value) + " before it is computed");
      op.in.push_back(o.value);
    }
    for (uint32_t o : pop.outputs) {
      if (defined[o]) return make_error("xnnpack: " + op.label + " redefines value " + std::to_string(o));
      defined[o] = true;
      op.out.push_back(o);
    }
    op.ints = pop.ints;
    Status created = create(args, pop, op);
    if (!created.ok()) return created.error().context("xnnpack");
    ops_.push_back(std::move(op));
  }
  for (uint32_t o : payload_.outputs) {
    if (!defined[o] || payload_.values[o].input >= 0) return make_error("xnnpack: payload output value " + std::to_string(o) + " is not computed by the delegate");
  }
  scratch_.resize(payload_.values.size());
  std::vector<bool> is_output(payload_.values.size(), false);
  for (uint32_t o : payload_.outputs) is_output[o] = true;
  for (size_t i = 0; i < payload_.values.size(); ++i) {
    if (payload_.values[i].input < 0 && !is_output[i]) scratch_[i] = Tensor::empty(DType::Float32, payload_.values[i].sizes);
  }
  ptr_.assign(payload_.values.size(), nullptr);
  bound_.assign(payload_.values.size(), Tensor{});
  return Status::Ok();
}

void transpose_layout(const float* in, float* out, const std::vector<int64_t>& s, bool to_nhwc) {
  const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
  for (int64_t n = 0; n < N; ++n) {
    const float* src = in + n * C * HW;
    float* dst = out + n * C * HW;
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t p = 0; p < HW; ++p) {
        if (to_nhwc) dst[p * C + c] = src[c * HW + p];
        else dst[c * HW + p] = src[p * C + c];
      }
    }
  }
}

Status XnnpackHandle::run_op(const Op& op, pthreadpool_t pool) {
  const float* x = ptr_[op.in[0]];
  float* y = ptr_[op.out[0]];
  const std::vector<int64_t>& I = op.ints;
  xnn_status s = xnn_status_success;
  switch (op.kind) {
    case Kind::FullyConnected: s = xnn_setup_fully_connected_nc_f32(op.op, I[0], x, y, pool); break;
    case Kind::Conv2d: s = xnn_setup_convolution2d_nhwc_f32(op.op, I[0], I[1], I[2], x, y, pool); break;
    case Kind::Add:
      s = xnn_setup_add_nd_f32(op.op, op.shape_a.size(), op.shape_a.data(), op.shape_b.size(), op.shape_b.data(), x, ptr_[op.in[1]], y, pool);
      break;
    case Kind::Mul:
      s = xnn_setup_multiply_nd_f32(op.op, op.shape_a.size(), op.shape_a.data(), op.shape_b.size(), op.shape_b.data(), x, ptr_[op.in[1]], y, pool);
      break;
    case Kind::Clamp: s = xnn_setup_clamp_nc_f32(op.op, I[0], x, y, pool); break;
    case Kind::Hardswish: s = xnn_setup_hardswish_nc_f32(op.op, I[0], x, y, pool); break;
    case Kind::Sigmoid: s = xnn_setup_sigmoid_nc_f32(op.op, I[0], x, y, pool); break;
    case Kind::MaxPool: s = xnn_setup_max_pooling2d_nhwc_f32(op.op, I[0], I[1], I[2], x, y, pool); break;
    case Kind::AvgPool: s = xnn_setup_average_pooling2d_nhwc_f32(op.op, I[0], I[1], I[2], x, y, pool); break;
    case Kind::GlobalAvgPool: s = xnn_setup_global_average_pooling_nwc_f32(op.op, I[0], I[1], x, y, pool); break;
    case Kind::Softmax: s = xnn_setup_softmax_nc_f32(op.op, I[0], x, y, pool); break;
    case Kind::Hardsigmoid:
      for (int64_t i = 0; i < I[0]; ++i) y[i] = std::min(1.0f, std::max(0.0f, x[i] * (1.0f / 6.0f) + 0.5f));
      return Status::Ok();
    case Kind::ToNhwc:
    case Kind::ToNchw:
      transpose_layout(x, y, I, op.kind == Kind::ToNhwc);
      return Status::Ok();
    case Kind::ConstantPad:
      s = xnn_setup_constant_pad_nd_x32(op.op, op.shape_a.size(), op.shape_a.data(), op.shape_b.data(), op.shape_c.data(), x, y, pool);
      break;
    case Kind::Host: {
      std::vector<const Tensor*> ins;
      for (uint32_t v : op.in) ins.push_back(&bound_[v]);
      Status r = run_host_op(*op.host, *op.pop, ins, bound_[op.out[0]]);
      if (!r.ok()) return r.error().context("xnnpack: " + op.label);
      return Status::Ok();
    }
  }
  if (s != xnn_status_success) return make_error(op.label + ": setup: " + status_text(s));
  s = xnn_run_operator(op.op, pool);
  if (s != xnn_status_success) return make_error(op.label + ": run: " + status_text(s));
  return Status::Ok();
}

Status XnnpackHandle::execute(KernelCall& call) {
  LATHE_ASSIGN_OR_RETURN(std::vector<const Tensor*> ins, call.tensor_list("inputs"));
  keep_.clear();
  for (size_t i = 0; i < payload_.values.size(); ++i) {
    const PayloadValue& v = payload_.values[i];
    if (v.input < 0) {  // scratch; a delegate output is bound below instead
      if (scratch_[i].storage) {
        bound_[i] = scratch_[i];
        ptr_[i] = kernels::mdata<float>(bound_[i]);
      }
      continue;
    }
    if (static_cast<size_t>(v.input) >= ins.size()) return make_error("xnnpack: the node passes " + std::to_string(ins.size()) + " inputs");
    const Tensor* t = ins[v.input];
    if (t->dtype != DType::Float32 || t->numel() != v.numel()) {
      return make_error("xnnpack: input " + std::to_string(v.input) + " is " + std::string(dtype_name(t->dtype)) + " " + shape_string(t->sizes) +
                        ", expected float32 " + shape_string(v.sizes));
    }
    if (!t->is_contiguous()) {
      keep_.push_back(kernels::contiguous_copy(*t));
      t = &keep_.back();
    }
    bound_[i] = kernels::make_view(*t, v.sizes, Tensor::contiguous_strides(v.sizes), t->storage_offset);
    ptr_[i] = const_cast<float*>(reinterpret_cast<const float*>(t->data()));
  }
  for (size_t k = 0; k < payload_.outputs.size(); ++k) {
    const PayloadValue& v = payload_.values[payload_.outputs[k]];
    LATHE_ASSIGN_OR_RETURN(Tensor * out, call.alloc_output(k, DType::Float32, v.sizes));
    bound_[payload_.outputs[k]] = *out;
    ptr_[payload_.outputs[k]] = reinterpret_cast<float*>(out->storage->mutable_data()) + out->storage_offset;
  }
  pthreadpool_t pool = thread_pool();
  for (const Op& op : ops_) LATHE_RETURN_IF_ERROR(run_op(op, pool));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<DelegateHandle>> XnnpackBackend::init(const DelegateInitArgs& args) const {
  auto h = std::make_unique<XnnpackHandle>();
  Status s = h->init(args);
  if (!s.ok()) return s.error();
  return std::unique_ptr<DelegateHandle>(std::move(h));
}

void set_xnnpack_threads(int n) {
  Pool& p = pool_state();
  std::lock_guard<std::mutex> lock(p.mu);
  n = std::max(1, n);
  if (n == p.threads) return;
  if (p.pool) pthreadpool_destroy(p.pool);
  p.pool = nullptr;
  p.threads = n;
}

int xnnpack_threads() {
  thread_pool();
  return pool_state().threads;
}

}  // namespace lathe
