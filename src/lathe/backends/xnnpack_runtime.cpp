// XnnpackBackend::init / execute: prepacks each payload op into an XNNPACK
// operator (weights copied and packed by XNNPACK into memory it owns), then
// runs them in order on every call. Fully-connected ops are the exception:
// their weights are packed at init for Lathe's blocked GEMM
// (runtime/kernels/gemm_blocked.h), which reached 4-7x the GFLOP/s of this
// (February 2022) XNNPACK's fully-connected on a large linear
// (docs/benchmarks.md); bias and a fused clamp are its epilogue.
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "lathe/backends/payload.h"
#include "lathe/backends/prepacked.h"
#include "lathe/backends/xnnpack_host_ops.h"
#include "lathe/backends/xnnpack_params.h"
#include "lathe/backends/xnnpack_backend.h"
#include "lathe/runtime/parallel.h"
#include "lathe/runtime/kernels/gemm_blocked.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

// ---- library and thread pool ------------------------------------------------------------

Status ensure_initialized() {
  static const xnn_status status = xnn_initialize(nullptr);
  if (status != xnn_status_success) return make_error("xnnpack: xnn_initialize failed (status " + std::to_string(status) + "; unsupported CPU?)");
  return Status::Ok();
}

// XNNPACK runs on the runtime's one pool (runtime/parallel.h), the
// workers the portable kernels use: nullptr when it has one thread.
std::shared_ptr<pthreadpool> thread_pool() { return shared_pthreadpool(); }

// ---- ops ------------------------------------------------------------------------------------

using Kind = XnnpackKind;

Result<Kind> kind_of(const std::string& k) {
  if (auto kind = xnnpack_kind_named(k)) return *kind;
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
  std::vector<int64_t> setup;            // what xnn_setup_* takes per call (batch, height, width...), from the parsed parameters
  std::vector<size_t> shape_a, shape_b;  // add / mul; constant_pad: input shape, pre-padding
  std::vector<size_t> shape_c;           // constant_pad: post-padding
  std::optional<HostOpCall> host;
  const PayloadOp* pop = nullptr;  // host ops: their operand roles (payload_ does not change after init)
  // fully_connected: the weight packed at init, the bias, the output bounds
  std::optional<kernels::PackedB> weight;
  std::vector<float> bias;
  kernels::GemmEpilogue epilogue;
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
  Status create_fully_connected(const DelegateInitArgs& args, const PayloadOp& pop, Op& op);
  Status create_conv2d(const DelegateInitArgs& args, const PayloadOp& pop, Op& op);
  Status fold_batch_norm(const DelegateInitArgs& args, const PayloadOp& pop, const Op& op, int64_t cout, int64_t per_channel,
                         std::vector<float>& w, std::vector<float>& b);
  Status create_binary(const PayloadOp& pop, Op& op);
  Status create_elementwise(const PayloadOp& pop, Op& op);
  Status create_pool(const PayloadOp& pop, Op& op);
  Status create_global_pool(Op& op);
  Status create_constant_pad(const PayloadOp& pop, Op& op);
  Status create_softmax(Op& op);
  Status create_layout(Op& op);
  Status malformed(const Op& op, const std::string& what) const;
  int64_t in_numel(const Op& op, size_t k) const;
  int64_t out_numel(const Op& op) const;
  template <class Params>
  Result<Params> parsed(const Op& op, Result<Params> r) const;
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
    LATHE_RETURN_IF_ERROR(check_prepacked_operand(args, payload_, o, "xnnpack", pop.kind + " '" + pop.node + "'", "XNNPACK"));
  }
  return Status::Ok();
}

Result<std::vector<float>> XnnpackHandle::constant(const DelegateInitArgs& args, uint32_t id, int64_t numel, const Op& op, const char* role) {
  return prepacked_floats(args, payload_, id, numel, op.label, role);
}

// ---- create: one function per payload op kind -----------------------------------------

namespace P = xnnpack_params;

// The op's XNNPACK output bounds (a fused relu/clamp), unbounded by default.
float lower_bound(const PayloadOp& pop) { return pop.floats.size() > 0 ? static_cast<float>(pop.floats[0]) : -INFINITY; }
float upper_bound(const PayloadOp& pop) { return pop.floats.size() > 1 ? static_cast<float>(pop.floats[1]) : INFINITY; }

Status XnnpackHandle::malformed(const Op& op, const std::string& what) const {
  return make_error(op.label + ": malformed payload op (" + what + ")");
}

int64_t XnnpackHandle::in_numel(const Op& op, size_t k) const { return payload_.values[op.in.at(k)].numel(); }
int64_t XnnpackHandle::out_numel(const Op& op) const { return payload_.values[op.out.at(0)].numel(); }

template <class Params>
Result<Params> XnnpackHandle::parsed(const Op& op, Result<Params> r) const {
  if (!r.ok()) return malformed(op, r.error().message()).error();
  return r;
}

Status XnnpackHandle::create_fully_connected(const DelegateInitArgs& args, const PayloadOp& pop, Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::FullyConnected p, parsed(op, P::parse_fully_connected(op.ints)));
  if (pop.floats.size() != 2 || op.in.size() < 2) return malformed(op, "parameters");
  const int64_t k = p.input_channels, n = p.output_channels;
  if (in_numel(op, 0) != p.batch * k || out_numel(op) != p.batch * n) return malformed(op, "shapes");
  LATHE_ASSIGN_OR_RETURN(std::vector<float> w, constant(args, op.in[1], k * n, op, "weight"));
  std::vector<float> b;
  if (int bi = role_index(pop, "bias"); bi >= 0) {
    LATHE_ASSIGN_OR_RETURN(b, constant(args, op.in[bi], n, op, "bias"));
  }
  // W is [N, K] (a linear's weight: B = W^T), or [K, N] for mm/addmm.
  const kernels::MatView B = p.transposed_weights ? kernels::MatView{w.data(), n, 1} : kernels::MatView{w.data(), 1, k};
  op.weight = kernels::PackedB::pack(kernels::gemm_tiles(), k, n, B);
  op.bias = std::move(b);
  op.epilogue.bias = op.bias.empty() ? nullptr : op.bias.data();
  op.epilogue.lo = lower_bound(pop);
  op.epilogue.hi = upper_bound(pop);
  op.epilogue.clamp = op.epilogue.lo > -INFINITY || op.epilogue.hi < INFINITY;
  op.setup = {p.batch};
  op.in.resize(1);
  return Status::Ok();
}

// The convolution's weights and bias, with a following batch norm (bn_*
// operands) folded in: w' = w * gamma / sqrt(var + eps), b' = (b - mean) *
// that scale + beta, in double.
Status XnnpackHandle::fold_batch_norm(const DelegateInitArgs& args, const PayloadOp& pop, const Op& op, int64_t cout,
                                      int64_t per_channel, std::vector<float>& w, std::vector<float>& b) {
  const auto at = batch_norm_operands(pop);
  if (!at) return malformed(op, "batch norm operands");
  if (at->empty()) return Status::Ok();
  std::vector<float> stats[4];
  for (size_t k = 0; k < 4; ++k) {
    LATHE_ASSIGN_OR_RETURN(stats[k], constant(args, op.in[(*at)[k]], cout, op, kBatchNormRoles[k]));
  }
  lathe::fold_batch_norm(stats, pop.floats[2], per_channel, w, b);
  return Status::Ok();
}

Status XnnpackHandle::create_conv2d(const DelegateInitArgs& args, const PayloadOp& pop, Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::Conv2d p, parsed(op, P::parse_conv2d(op.ints)));
  if (pop.floats.size() != 3) return malformed(op, "parameters");
  const int64_t g = p.groups, cin = p.input_channels, cout = p.output_channels, kh = p.kernel_h, kw = p.kernel_w;
  if (g <= 0 || cin % g != 0 || cout % g != 0 || p.stride_h <= 0 || p.stride_w <= 0 || p.dilation_h <= 0 || p.dilation_w <= 0)
    return malformed(op, "groups/strides");
  if (in_numel(op, 0) != p.batch * p.height * p.width * cin || out_numel(op) != p.batch * p.output_h * p.output_w * cout)
    return malformed(op, "shapes");
  if (p.output_h != (p.height + p.pad_top + p.pad_bottom - p.dilation_h * (kh - 1) - 1) / p.stride_h + 1 ||
      p.output_w != (p.width + p.pad_left + p.pad_right - p.dilation_w * (kw - 1) - 1) / p.stride_w + 1)
    return malformed(op, "output size");
  const int64_t gin = cin / g;
  LATHE_ASSIGN_OR_RETURN(std::vector<float> w, constant(args, op.in[1], cout * gin * kh * kw, op, "weight"));
  std::vector<float> b(static_cast<size_t>(cout), 0.0f);
  if (int bi = role_index(pop, "bias"); bi >= 0) {
    LATHE_ASSIGN_OR_RETURN(b, constant(args, op.in[bi], cout, op, "bias"));
  }
  LATHE_RETURN_IF_ERROR(fold_batch_norm(args, pop, op, cout, gin * kh * kw, w, b));
  // [Cout, Cin/g, kh, kw] -> XNNPACK's [Cout, kh, kw, Cin/g].
  std::vector<float> packed(w.size());
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t i = 0; i < gin; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) packed[((o * kh + y) * kw + x) * gin + i] = w[((o * gin + i) * kh + y) * kw + x];
  auto u = [](int64_t x) { return static_cast<uint32_t>(x); };
  LATHE_XNN(xnn_create_convolution2d_nhwc_f32(u(p.pad_top), u(p.pad_right), u(p.pad_bottom), u(p.pad_left), u(kh), u(kw),
                                              u(p.stride_h), u(p.stride_w), u(p.dilation_h), u(p.dilation_w), u(g), gin, cout / g,
                                              cin, cout, packed.data(), b.data(), lower_bound(pop), upper_bound(pop), 0, &op.op),
            op.label + ": xnn_create_convolution2d_nhwc_f32");
  op.setup = {p.batch, p.height, p.width};
  op.in.resize(1);
  return Status::Ok();
}

Status XnnpackHandle::create_binary(const PayloadOp& pop, Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::Binary p, parsed(op, P::parse_binary(op.ints, XNN_MAX_TENSOR_DIMS)));
  if (op.in.size() != 2 || pop.floats.size() != 2) return malformed(op, "parameters");
  op.shape_a.assign(p.shape_a.begin(), p.shape_a.end());
  op.shape_b.assign(p.shape_b.begin(), p.shape_b.end());
  // Broadcast shape, right-aligned.
  const size_t r = std::max(op.shape_a.size(), op.shape_b.size());
  std::vector<size_t> o(r);
  for (size_t d = 0; d < r; ++d) {
    const size_t a = d + op.shape_a.size() >= r ? op.shape_a[d + op.shape_a.size() - r] : 1;
    const size_t b = d + op.shape_b.size() >= r ? op.shape_b[d + op.shape_b.size() - r] : 1;
    if (a != b && a != 1 && b != 1) return malformed(op, "broadcast");
    o[d] = std::max(a, b);
  }
  if (in_numel(op, 0) != numel_of(op.shape_a) || in_numel(op, 1) != numel_of(op.shape_b) || out_numel(op) != numel_of(o))
    return malformed(op, "element counts");
  if (op.kind == Kind::Add) {
    LATHE_XNN(xnn_create_add_nd_f32(lower_bound(pop), upper_bound(pop), 0, &op.op), op.label + ": xnn_create_add_nd_f32");
  } else {
    LATHE_XNN(xnn_create_multiply_nd_f32(lower_bound(pop), upper_bound(pop), 0, &op.op), op.label + ": xnn_create_multiply_nd_f32");
  }
  return Status::Ok();
}

Status XnnpackHandle::create_elementwise(const PayloadOp& pop, Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::Elementwise p, parsed(op, P::parse_elementwise(op.ints)));
  if (in_numel(op, 0) != p.count || out_numel(op) != p.count) return malformed(op, "shapes");
  op.setup = {p.count};
  if (op.kind == Kind::Clamp) {
    LATHE_XNN(xnn_create_clamp_nc_f32(1, 1, 1, lower_bound(pop), upper_bound(pop), 0, &op.op), op.label + ": xnn_create_clamp_nc_f32");
  }
#define LATHE_XNNPACK_UNARY(name, payload_name, aten_op, xnn_stem)                                              \
  if (op.kind == Kind::name) {                                                                                   \
    LATHE_XNN(xnn_create_##xnn_stem##_nc_f32(1, 1, 1, 0, &op.op), op.label + ": xnn_create_" #xnn_stem "_nc_f32"); \
  }
#include "lathe/backends/xnnpack_ops.def"
  return Status::Ok();  // LATHE_XNNPACK_UNARY_LOOP rows: a loop of our own in run_op
}

Status XnnpackHandle::create_pool(const PayloadOp& pop, Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::Pool2d p, parsed(op, P::parse_pool2d(op.ints)));
  if (p.stride_h <= 0 || p.stride_w <= 0 || p.dilation_h <= 0 || p.dilation_w <= 0) return malformed(op, "parameters");
  const int64_t C = p.channels;
  if (in_numel(op, 0) != p.batch * p.height * p.width * C || out_numel(op) != p.batch * p.output_h * p.output_w * C)
    return malformed(op, "shapes");
  if (p.output_h != (p.height + p.pad_top + p.pad_bottom - p.dilation_h * (p.kernel_h - 1) - 1) / p.stride_h + 1 ||
      p.output_w != (p.width + p.pad_left + p.pad_right - p.dilation_w * (p.kernel_w - 1) - 1) / p.stride_w + 1)
    return malformed(op, "output size");
  auto u = [](int64_t x) { return static_cast<uint32_t>(x); };
  if (op.kind == Kind::MaxPool) {
    LATHE_XNN(xnn_create_max_pooling2d_nhwc_f32(u(p.pad_top), u(p.pad_right), u(p.pad_bottom), u(p.pad_left), u(p.kernel_h),
                                                u(p.kernel_w), u(p.stride_h), u(p.stride_w), u(p.dilation_h), u(p.dilation_w), C, C, C,
                                                lower_bound(pop), upper_bound(pop), 0, &op.op),
              op.label + ": xnn_create_max_pooling2d_nhwc_f32");
  } else {
    LATHE_XNN(xnn_create_average_pooling2d_nhwc_f32(u(p.pad_top), u(p.pad_right), u(p.pad_bottom), u(p.pad_left), u(p.kernel_h),
                                                    u(p.kernel_w), u(p.stride_h), u(p.stride_w), C, C, C, lower_bound(pop),
                                                    upper_bound(pop), 0, &op.op),
              op.label + ": xnn_create_average_pooling2d_nhwc_f32");
  }
  op.setup = {p.batch, p.height, p.width};
  return Status::Ok();
}

Status XnnpackHandle::create_global_pool(Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::GlobalPool p, parsed(op, P::parse_global_pool(op.ints)));
  if (in_numel(op, 0) != p.batch * p.pixels * p.channels || out_numel(op) != p.batch * p.channels) return malformed(op, "shapes");
  LATHE_XNN(xnn_create_global_average_pooling_nwc_f32(p.channels, p.channels, p.channels, -INFINITY, INFINITY, 0, &op.op),
            op.label + ": xnn_create_global_average_pooling_nwc_f32");
  op.setup = {p.batch, p.pixels};
  return Status::Ok();
}

Status XnnpackHandle::create_constant_pad(const PayloadOp& pop, Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::ConstantPad p, parsed(op, P::parse_constant_pad(op.ints, XNN_MAX_TENSOR_DIMS)));
  if (pop.floats.size() != 1 || op.in.size() != 1) return malformed(op, "parameters");
  int64_t in_count = 1, out_count = 1;
  for (size_t d = 0; d < p.sizes.size(); ++d) {
    in_count *= p.sizes[d];
    out_count *= p.sizes[d] + p.pre[d] + p.post[d];
  }
  if (in_numel(op, 0) != in_count || out_numel(op) != out_count) return malformed(op, "shapes");
  op.shape_a.assign(p.sizes.begin(), p.sizes.end());
  op.shape_b.assign(p.pre.begin(), p.pre.end());
  op.shape_c.assign(p.post.begin(), p.post.end());
  const float value = static_cast<float>(pop.floats[0]);
  LATHE_XNN(xnn_create_constant_pad_nd_x32(&value, 0, &op.op), op.label + ": xnn_create_constant_pad_nd_x32");
  return Status::Ok();
}

Status XnnpackHandle::create_softmax(Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::Softmax p, parsed(op, P::parse_softmax(op.ints)));
  if (in_numel(op, 0) != p.rows * p.channels || out_numel(op) != p.rows * p.channels) return malformed(op, "shapes");
  LATHE_XNN(xnn_create_softmax_nc_f32(p.channels, p.channels, p.channels, 0, &op.op), op.label + ": xnn_create_softmax_nc_f32");
  op.setup = {p.rows};
  return Status::Ok();
}

Status XnnpackHandle::create_layout(Op& op) {
  LATHE_ASSIGN_OR_RETURN(P::Layout p, parsed(op, P::parse_layout(op.ints)));
  const int64_t count = p.batch * p.channels * p.height * p.width;
  if (in_numel(op, 0) != count || out_numel(op) != count) return malformed(op, "shapes");
  op.setup = {p.batch, p.channels, p.height, p.width};
  return Status::Ok();
}

Status XnnpackHandle::create(const DelegateInitArgs& args, const PayloadOp& pop, Op& op) {
  if (const std::optional<HostOp> host = host_op_of(op.kind)) {  // own checks: roll shifts may be negative, an sdpa scale NaN
    LATHE_ASSIGN_OR_RETURN(HostOpCall call, check_host_op(*host, pop, payload_.values));
    op.host = std::move(call);
    op.pop = &pop;
    return Status::Ok();
  }
  if (op.out.size() != 1 || op.in.empty()) return malformed(op, "operand counts");
  switch (op.kind) {
    case Kind::FullyConnected: return create_fully_connected(args, pop, op);
    case Kind::Conv2d: return create_conv2d(args, pop, op);
    case Kind::Add:
    case Kind::Mul: return create_binary(pop, op);
    case Kind::Clamp: return create_elementwise(pop, op);
#define LATHE_XNNPACK_UNARY(name, payload_name, aten_op, xnn_stem) case Kind::name:
#define LATHE_XNNPACK_UNARY_LOOP(name, payload_name, aten_op, expression) case Kind::name:
#include "lathe/backends/xnnpack_ops.def"
      return create_elementwise(pop, op);
    case Kind::MaxPool:
    case Kind::AvgPool: return create_pool(pop, op);
    case Kind::GlobalAvgPool: return create_global_pool(op);
    case Kind::ConstantPad: return create_constant_pad(pop, op);
    case Kind::Softmax: return create_softmax(op);
    case Kind::ToNhwc:
    case Kind::ToNchw: return create_layout(op);
    default: break;  // host ops: above
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
  if (op.host) {
    std::vector<const Tensor*> ins;
    for (uint32_t v : op.in) ins.push_back(&bound_[v]);
    Status r = run_host_op(*op.host, *op.pop, ins, bound_[op.out[0]]);
    if (!r.ok()) return r.error().context("xnnpack: " + op.label);
    return Status::Ok();
  }
  const float* x = ptr_[op.in[0]];
  float* y = ptr_[op.out[0]];
  const std::vector<int64_t>& S = op.setup;
  xnn_status s = xnn_status_success;
  switch (op.kind) {
    case Kind::FullyConnected:
      kernels::gemm_packed(S[0], kernels::MatView{x, op.weight->k(), 1}, *op.weight, y, op.weight->n(), op.epilogue);
      return Status::Ok();
    case Kind::Conv2d: s = xnn_setup_convolution2d_nhwc_f32(op.op, S[0], S[1], S[2], x, y, pool); break;
    case Kind::Add:
      s = xnn_setup_add_nd_f32(op.op, op.shape_a.size(), op.shape_a.data(), op.shape_b.size(), op.shape_b.data(), x, ptr_[op.in[1]], y, pool);
      break;
    case Kind::Mul:
      s = xnn_setup_multiply_nd_f32(op.op, op.shape_a.size(), op.shape_a.data(), op.shape_b.size(), op.shape_b.data(), x, ptr_[op.in[1]], y, pool);
      break;
    case Kind::Clamp: s = xnn_setup_clamp_nc_f32(op.op, S[0], x, y, pool); break;
#define LATHE_XNNPACK_UNARY(name, payload_name, aten_op, xnn_stem) \
  case Kind::name: s = xnn_setup_##xnn_stem##_nc_f32(op.op, S[0], x, y, pool); break;
#include "lathe/backends/xnnpack_ops.def"
    case Kind::MaxPool: s = xnn_setup_max_pooling2d_nhwc_f32(op.op, S[0], S[1], S[2], x, y, pool); break;
    case Kind::AvgPool: s = xnn_setup_average_pooling2d_nhwc_f32(op.op, S[0], S[1], S[2], x, y, pool); break;
    case Kind::GlobalAvgPool: s = xnn_setup_global_average_pooling_nwc_f32(op.op, S[0], S[1], x, y, pool); break;
    case Kind::Softmax: s = xnn_setup_softmax_nc_f32(op.op, S[0], x, y, pool); break;
#define LATHE_XNNPACK_UNARY_LOOP(name, payload_name, aten_op, expression) \
  case Kind::name:                                                        \
    for (int64_t i = 0; i < S[0]; ++i) {                                  \
      const float x_i = x[i];                                             \
      y[i] = [](float x) { return expression; }(x_i);                     \
    }                                                                     \
    return Status::Ok();
#include "lathe/backends/xnnpack_ops.def"
    case Kind::ToNhwc:
    case Kind::ToNchw:
      transpose_layout(x, y, S, op.kind == Kind::ToNhwc);
      return Status::Ok();
    case Kind::ConstantPad:
      s = xnn_setup_constant_pad_nd_x32(op.op, op.shape_a.size(), op.shape_a.data(), op.shape_b.data(), op.shape_c.data(), x, y, pool);
      break;
    default: return make_error(op.label + ": not an XNNPACK operator");  // host ops: above
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
  const std::shared_ptr<pthreadpool> pool = thread_pool();  // held: set_num_threads may replace it meanwhile
  for (const Op& op : ops_) LATHE_RETURN_IF_ERROR(run_op(op, pool.get()));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<DelegateHandle>> XnnpackBackend::init(const DelegateInitArgs& args) const {
  return init_handle<XnnpackHandle>(args);
}

void set_xnnpack_threads(int n) { set_num_threads(std::max(1, n)); }

int xnnpack_threads() { return num_threads(); }

}  // namespace lathe
