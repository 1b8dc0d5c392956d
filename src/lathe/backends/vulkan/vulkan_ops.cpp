#include "lathe/backends/vulkan/vulkan_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "lathe/backends/prepacked.h"

namespace lathe {

namespace {

// Sizes and parameters a shader indexes with are 32-bit; every value's
// element count is checked below 2^31 at init, and parameters here.
constexpr int64_t kMaxParam = int64_t{1} << 24;
constexpr uint32_t kMaxGroups = 65535;  // Vulkan's guaranteed maxComputeWorkGroupCount[0]

// Push constants, word by word, in the order the shader declares them.
class Push {
 public:
  Push& u(int64_t v) {
    words_.at(n_++) = static_cast<uint32_t>(v);
    return *this;
  }
  Push& f(double v) {
    words_.at(n_++) = std::bit_cast<uint32_t>(static_cast<float>(v));
    return *this;
  }
  // A fixed-size array of the shader's (unused tail zero).
  Push& arr(const std::vector<int64_t>& v, size_t len = kVulkanMaxRank) {
    for (size_t k = 0; k < len; ++k) u(k < v.size() ? v[k] : 0);
    return *this;
  }
  std::array<uint32_t, kVulkanPushWords> words() const { return words_; }

 private:
  std::array<uint32_t, kVulkanPushWords> words_{};
  size_t n_ = 0;
};

uint32_t groups_for(int64_t invocations) {
  const int64_t g = (invocations + kVulkanWorkgroupSize - 1) / kVulkanWorkgroupSize;
  return static_cast<uint32_t>(std::clamp<int64_t>(g, 1, kMaxGroups));
}
uint32_t row_groups(int64_t rows) { return static_cast<uint32_t>(std::clamp<int64_t>(rows, 1, kMaxGroups)); }

VulkanSlot val(uint32_t v) { return {VulkanSlot::Value, v}; }
VulkanSlot packed(uint32_t k) { return {VulkanSlot::Packed, k}; }

int64_t product(const std::vector<int64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  // Iterators, not indices: GCC 12 at -O3 warns of an index loop here
  // (-Waggressive-loop-optimizations) for a bound it cannot see is small.
  const auto first = s.begin() + static_cast<std::ptrdiff_t>(std::min(from, s.size()));
  const auto last = s.begin() + static_cast<std::ptrdiff_t>(std::min(to, s.size()));
  return first < last ? std::accumulate(first, last, int64_t{1}, std::multiplies<>()) : 1;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

bool in_range(int64_t v, int64_t lo) { return v >= lo && v < kMaxParam; }

// One op's planning: its payload record, the values, and what it builds.
class Planner {
 public:
  Planner(const PayloadOp& op, const std::vector<PayloadValue>& values, const VulkanPrepackReader& read)
      : op_(op), values_(values), read_(read) {}

  Result<VulkanOpPlan> run();

 private:
  Error malformed(const std::string& what) const {
    return Error(op_.kind + " '" + op_.node + "': malformed payload op (" + what + ")");
  }
  const std::vector<int64_t>& in_sizes(size_t k) const { return values_[op_.inputs[k].value].sizes; }
  int64_t in_numel(size_t k) const { return values_[op_.inputs[k].value].numel(); }
  int64_t out_numel() const { return values_[op_.outputs[0]].numel(); }
  uint32_t in(size_t k) const { return op_.inputs[k].value; }
  uint32_t out() const { return op_.outputs[0]; }
  double fl(size_t k, double dflt) const { return k < op_.floats.size() ? op_.floats[k] : dflt; }
  uint32_t pack(std::vector<float> data) {
    plan_.packed.push_back(std::move(data));
    return static_cast<uint32_t>(plan_.packed.size() - 1);
  }
  void dispatch(VulkanShader s, std::array<VulkanSlot, kVulkanBindings> bind, const Push& p, uint32_t groups) {
    plan_.dispatches.push_back(VulkanDispatch{s, bind, p.words(), groups});
  }

  Status linear();
  Status conv2d();
  Status fold_batch_norm(int64_t cout, int64_t per_channel, std::vector<float>& w, std::vector<float>& b);
  Status channel_affine();
  Status binary();
  Status unary();
  Status rowwise();
  Status mean();
  Status pool2d();
  Status copy_ops();
  Status copy(uint32_t from, uint32_t to, const std::vector<int64_t>& size, const std::vector<int64_t>& sin,
              const std::vector<int64_t>& sout, int64_t in_off, int64_t out_off);

  const PayloadOp& op_;
  VulkanKind kind_ = VulkanKind::View;  // op_.kind, parsed by run()
  const std::vector<PayloadValue>& values_;
  const VulkanPrepackReader& read_;
  VulkanOpPlan plan_;
};

Result<VulkanOpPlan> Planner::run() {
  if (op_.outputs.size() != 1 || op_.inputs.empty()) return malformed("operand counts");
  Status s = Status::Ok();
  const std::optional<VulkanKind> kind = vulkan_kind_named(op_.kind);
  if (!kind) return Error("unknown op kind '" + op_.kind + "'");
  kind_ = *kind;
  switch (kind_) {
    case VulkanKind::Linear: s = linear(); break;
    case VulkanKind::Conv2d: s = conv2d(); break;
    case VulkanKind::ChannelAffine: s = channel_affine(); break;
    case VulkanKind::Binary: s = binary(); break;
    case VulkanKind::Unary: s = unary(); break;
    case VulkanKind::Softmax:
    case VulkanKind::LayerNorm: s = rowwise(); break;
    case VulkanKind::Mean: s = mean(); break;
    case VulkanKind::Pool2d: s = pool2d(); break;
    case VulkanKind::Permute:
    case VulkanKind::Cat:
    case VulkanKind::Slice:
    case VulkanKind::View: s = copy_ops(); break;
  }
  if (!s.ok()) return s.error();
  return std::move(plan_);
}

// ---- matmul and convolution (prepacked) -------------------------------------------------

Status Planner::linear() {
  if (op_.ints.size() != 4 || op_.floats.size() != 2 || op_.inputs.size() < 2) return malformed("parameters");
  const int64_t M = op_.ints[0], K = op_.ints[1], N = op_.ints[2];
  const bool transposed = op_.ints[3] != 0;
  if (M < 0 || K < 0 || N < 0 || in_numel(0) != M * K || out_numel() != M * N) return malformed("shapes");
  LATHE_ASSIGN_OR_RETURN(std::vector<float> w, read_(in(1), K * N, "weight"));
  // The shader reads [K, N]: mm's mat2 is that already; linear's [N, K] is transposed once, here.
  std::vector<float> kn = w;
  if (!transposed) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) kn[k * N + n] = w[n * K + k];
  }
  const uint32_t wi = pack(std::move(kn));
  VulkanSlot bias{};
  if (int b = role_index(op_, "bias"); b >= 0) {
    LATHE_ASSIGN_OR_RETURN(std::vector<float> bv, read_(in(b), N, "bias"));
    bias = packed(pack(std::move(bv)));
  }
  Push p;
  p.u(M).u(K).u(N).u(bias.kind != VulkanSlot::None).f(op_.floats[0]).f(op_.floats[1]);
  dispatch(VulkanShader::Linear, {val(in(0)), packed(wi), bias, val(out())}, p, groups_for(M * N));
  return Status::Ok();
}

// w' = w * gamma / sqrt(var + eps), b' = (b - mean) * that scale + beta, in double.
Status Planner::fold_batch_norm(int64_t cout, int64_t per_channel, std::vector<float>& w, std::vector<float>& b) {
  const auto at = batch_norm_operands(op_);
  if (!at) return malformed("batch norm operands");
  if (at->empty()) return Status::Ok();
  std::vector<float> stats[4];
  for (size_t k = 0; k < 4; ++k) {
    LATHE_ASSIGN_OR_RETURN(stats[k], read_(in((*at)[k]), cout, kBatchNormRoles[k]));
  }
  lathe::fold_batch_norm(stats, op_.floats[2], per_channel, w, b);
  return Status::Ok();
}

Status Planner::conv2d() {
  if (op_.ints.size() != 16 || op_.floats.size() != 3 || op_.inputs.size() < 2) return malformed("parameters");
  const auto& q = op_.ints;
  const int64_t N = q[0], C = q[1], H = q[2], W = q[3], CO = q[4], OH = q[5], OW = q[6], KH = q[7], KW = q[8];
  const int64_t SH = q[9], SW = q[10], PH = q[11], PW = q[12], DH = q[13], DW = q[14], G = q[15];
  for (int64_t v : q) {
    if (!in_range(v, 0)) return malformed("a parameter out of range");
  }
  if (G < 1 || C % G != 0 || CO % G != 0 || SH < 1 || SW < 1 || DH < 1 || DW < 1 || KH < 1 || KW < 1) return malformed("groups/strides");
  if (in_numel(0) != N * C * H * W || out_numel() != N * CO * OH * OW) return malformed("shapes");
  if (OH != (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1 || OW != (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1) return malformed("output size");
  const int64_t per_channel = (C / G) * KH * KW;
  LATHE_ASSIGN_OR_RETURN(std::vector<float> w, read_(in(1), CO * per_channel, "weight"));
  std::vector<float> b(static_cast<size_t>(CO), 0.0f);
  if (int bi = role_index(op_, "bias"); bi >= 0) {
    LATHE_ASSIGN_OR_RETURN(b, read_(in(bi), CO, "bias"));
  }
  LATHE_RETURN_IF_ERROR(fold_batch_norm(CO, per_channel, w, b));
  const uint32_t wi = pack(std::move(w)), bi = pack(std::move(b));
  Push p;
  for (int64_t v : q) p.u(v);
  p.f(op_.floats[0]).f(op_.floats[1]);
  dispatch(VulkanShader::Conv2d, {val(in(0)), packed(wi), packed(bi), val(out())}, p, groups_for(N * CO * OH * OW));
  return Status::Ok();
}

// A batch norm on its own: scale and shift per channel from the statistics.
Status Planner::channel_affine() {
  if (op_.ints.size() != 3 || op_.floats.size() != 3 || op_.inputs.size() != 5) return malformed("parameters");
  const int64_t N = op_.ints[0], C = op_.ints[1], inner = op_.ints[2];
  if (N < 0 || C < 1 || inner < 1 || in_numel(0) != N * C * inner || out_numel() != in_numel(0)) return malformed("shapes");
  std::vector<std::vector<float>> s(4);
  const char* roles[4] = {"weight", "bias", "running_mean", "running_var"};
  for (int k = 0; k < 4; ++k) {
    const int r = role_index(op_, roles[k]);
    if (r < 0) return malformed(std::string("no ") + roles[k]);
    LATHE_ASSIGN_OR_RETURN(s[k], read_(in(r), C, roles[k]));
  }
  std::vector<float> ss(static_cast<size_t>(2 * C));
  for (int64_t c = 0; c < C; ++c) {
    const double scale = s[0][c] / std::sqrt(static_cast<double>(s[3][c]) + op_.floats[0]);
    ss[c] = static_cast<float>(scale);
    ss[C + c] = static_cast<float>(s[1][c] - s[2][c] * scale);
  }
  const uint32_t si = pack(std::move(ss));
  Push p;
  p.u(in_numel(0)).u(C).u(inner).f(op_.floats[1]).f(op_.floats[2]);
  dispatch(VulkanShader::ChannelAffine, {val(in(0)), packed(si), {}, val(out())}, p, groups_for(in_numel(0)));
  return Status::Ok();
}

// ---- elementwise ----------------------------------------------------------------------------

Status Planner::binary() {
  const auto& q = op_.ints;
  if (q.size() < 3 || op_.floats.size() != 4) return malformed("parameters");
  const int64_t code = q[0], rank = q[2];
  const bool scalar = q[1] != 0;
  if (code < 0 || code > 3 || rank < 1 || rank > static_cast<int64_t>(kVulkanMaxRank)) return malformed("op or rank");
  if (q.size() != static_cast<size_t>(3 + rank * (scalar ? 2 : 3)) || op_.inputs.size() != (scalar ? 1u : 2u)) return malformed("parameters");
  const std::vector<int64_t> o(q.begin() + 3, q.begin() + 3 + rank), a(q.begin() + 3 + rank, q.begin() + 3 + 2 * rank);
  const std::vector<int64_t> b = scalar ? o : std::vector<int64_t>(q.begin() + 3 + 2 * rank, q.end());
  for (int64_t d = 0; d < rank; ++d) {
    if (o[d] < 0 || (a[d] != o[d] && a[d] != 1) || (b[d] != o[d] && b[d] != 1)) return malformed("broadcast");
  }
  if (in_numel(0) != product(a) || (!scalar && in_numel(1) != product(b)) || out_numel() != product(o)) return malformed("element counts");
  // Each operand's strides over the output's coordinates: 0 where it is broadcast.
  auto over = [&](const std::vector<int64_t>& s) {
    std::vector<int64_t> st = strides_of(s);
    for (int64_t d = 0; d < rank; ++d) st[d] = (s[d] == 1 && o[d] != 1) ? 0 : st[d];
    return st;
  };
  Push p;
  p.u(code).u(rank).u(product(o)).u(scalar).arr(o).arr(over(a)).arr(scalar ? std::vector<int64_t>{} : over(b));
  p.f(op_.floats[0]).f(op_.floats[1]).f(op_.floats[2]).f(op_.floats[3]);
  dispatch(VulkanShader::Binary, {val(in(0)), scalar ? VulkanSlot{} : val(in(1)), {}, val(out())}, p, groups_for(product(o)));
  return Status::Ok();
}

Status Planner::unary() {
  if (op_.ints.size() != 1 || op_.floats.size() != 2 || op_.inputs.size() != 1) return malformed("parameters");
  if (op_.ints[0] < 0 || op_.ints[0] >= kVulkanUnaryCount) return malformed("unknown activation");
  if (in_numel(0) != out_numel()) return malformed("shapes");
  Push p;
  p.u(op_.ints[0]).u(out_numel()).f(op_.floats[0]).f(op_.floats[1]);
  dispatch(VulkanShader::Unary, {val(in(0)), {}, {}, val(out())}, p, groups_for(out_numel()));
  return Status::Ok();
}

// softmax and layer_norm: a workgroup per row of the last `cols` elements.
Status Planner::rowwise() {
  const bool ln = kind_ == VulkanKind::LayerNorm;
  if (op_.ints.size() != 2 || op_.floats.size() != (ln ? 1u : 0u)) return malformed("parameters");
  const int64_t rows = op_.ints[0], cols = op_.ints[1];
  if (rows < 0 || cols < 1 || in_numel(0) != rows * cols || out_numel() != rows * cols) return malformed("shapes");
  Push p;
  p.u(rows).u(cols);
  if (!ln) {
    if (op_.inputs.size() != 1) return malformed("operand counts");
    dispatch(VulkanShader::Softmax, {val(in(0)), {}, {}, val(out())}, p, row_groups(rows));
    return Status::Ok();
  }
  VulkanSlot w{}, b{};
  if (int k = role_index(op_, "weight"); k >= 0) w = val(in(k));
  if (int k = role_index(op_, "bias"); k >= 0) b = val(in(k));
  for (const VulkanSlot& s : {w, b}) {
    if (s.kind != VulkanSlot::None && values_[s.index].numel() != cols) return malformed("weight/bias size");
  }
  p.u(w.kind != VulkanSlot::None).u(b.kind != VulkanSlot::None).f(op_.floats[0]);
  dispatch(VulkanShader::LayerNorm, {val(in(0)), w, b, val(out())}, p, row_groups(rows));
  return Status::Ok();
}

Status Planner::mean() {
  const auto& q = op_.ints;
  if (q.empty() || op_.inputs.size() != 1) return malformed("parameters");
  const int64_t rank = q[0];
  if (rank < 1 || rank > static_cast<int64_t>(kVulkanMaxRank) || q.size() != static_cast<size_t>(1 + 2 * rank)) return malformed("rank");
  const std::vector<int64_t> sizes(q.begin() + 1, q.begin() + 1 + rank), st = strides_of(sizes);
  std::vector<int64_t> ks, kst, rs, rst;
  for (int64_t d = 0; d < rank; ++d) {
    (q[1 + rank + d] ? rs : ks).push_back(sizes[d]);
    (q[1 + rank + d] ? rst : kst).push_back(st[d]);
  }
  if (in_numel(0) != product(sizes) || out_numel() != product(ks)) return malformed("shapes");
  Push p;
  p.u(product(ks)).u(product(rs)).u(ks.size()).u(rs.size()).arr(ks).arr(kst).arr(rs).arr(rst);
  dispatch(VulkanShader::Mean, {val(in(0)), {}, {}, val(out())}, p, groups_for(product(ks)));
  return Status::Ok();
}

Status Planner::pool2d() {
  const auto& q = op_.ints;
  if (q.size() != 16 || op_.inputs.size() != 1) return malformed("parameters");
  for (int64_t v : q) {
    if (!in_range(v, 0)) return malformed("a parameter out of range");
  }
  const int64_t planes = q[1], H = q[2], W = q[3], OH = q[4], OW = q[5], KH = q[6], KW = q[7], SH = q[8], SW = q[9];
  const int64_t PH = q[10], PW = q[11], DH = q[12], DW = q[13];
  if (KH < 1 || KW < 1 || SH < 1 || SW < 1 || DH < 1 || DW < 1 || 2 * PH > KH || 2 * PW > KW) return malformed("window");
  if (in_numel(0) != planes * H * W || out_numel() != planes * OH * OW) return malformed("shapes");
  // Every window must start inside the padded input (ceil_mode's last one included).
  if (OH > 0 && (OH - 1) * SH >= H + PH) return malformed("output size");
  if (OW > 0 && (OW - 1) * SW >= W + PW) return malformed("output size");
  Push p;
  for (int64_t v : q) p.u(v);
  dispatch(VulkanShader::Pool2d, {val(in(0)), {}, {}, val(out())}, p, groups_for(planes * OH * OW));
  return Status::Ok();
}

// ---- layout: permute, cat, slice, view ---------------------------------------------------------

Status Planner::copy(uint32_t from, uint32_t to, const std::vector<int64_t>& size, const std::vector<int64_t>& sin,
                     const std::vector<int64_t>& sout, int64_t in_off, int64_t out_off) {
  if (size.size() > kVulkanMaxRank) return malformed("rank above 6");
  std::vector<int64_t> s = size, a = sin, b = sout;
  if (s.empty()) s = a = b = {1};
  Push p;
  p.u(product(s)).u(s.size()).u(in_off).u(out_off).arr(s).arr(a).arr(b);
  dispatch(VulkanShader::Copy, {val(from), {}, {}, val(to)}, p, groups_for(product(s)));
  return Status::Ok();
}

Status Planner::copy_ops() {
  const std::vector<int64_t>& os = values_[out()].sizes;
  if (kind_ == VulkanKind::View) {
    if (op_.inputs.size() != 1 || in_numel(0) != out_numel()) return malformed("shapes");
    plan_.alias = in(0);
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(os.size());
  if (kind_ == VulkanKind::Permute) {
    const std::vector<int64_t>& is = in_sizes(0);
    if (op_.inputs.size() != 1 || static_cast<int64_t>(op_.ints.size()) != rank || is.size() != os.size()) return malformed("dims");
    std::vector<int64_t> sin(rank), st = strides_of(is), seen(rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t from = op_.ints[d];
      if (from < 0 || from >= rank || seen[from]++ || is[from] != os[d]) return malformed("dims");
      sin[d] = st[from];
    }
    return copy(in(0), out(), os, sin, strides_of(os), 0, 0);
  }
  if (op_.ints.empty() || op_.ints[0] < 0 || op_.ints[0] >= std::max<int64_t>(rank, 1)) return malformed("dim");
  const int64_t dim = op_.ints[0];
  if (kind_ == VulkanKind::Slice) {
    if (op_.ints.size() != 3 || op_.inputs.size() != 1) return malformed("parameters");
    const std::vector<int64_t>& is = in_sizes(0);
    const int64_t start = op_.ints[1], step = op_.ints[2];
    if (is.size() != os.size() || step < 1 || start < 0) return malformed("slice");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim && is[d] != os[d]) return malformed("slice sizes");
    }
    if (os[dim] > 0 && start + (os[dim] - 1) * step >= is[dim]) return malformed("slice past the end");
    std::vector<int64_t> sin = strides_of(is);
    const int64_t off = start * sin[dim];
    sin[dim] *= step;
    return copy(in(0), out(), os, sin, strides_of(os), off, 0);
  }
  // cat along dim: each input into its slice of the output.
  int64_t at = 0;
  const std::vector<int64_t> ost = strides_of(os);
  for (size_t i = 0; i < op_.inputs.size(); ++i) {
    const std::vector<int64_t>& is = in_sizes(i);
    if (is.size() != os.size()) return malformed("cat ranks");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim && is[d] != os[d]) return malformed("cat sizes");
    }
    if (product(is) > 0) LATHE_RETURN_IF_ERROR(copy(in(i), out(), is, strides_of(is), ost, 0, at * ost[dim]));
    at += is[dim];
  }
  if (at != os[dim]) return malformed("cat sizes");
  return Status::Ok();
}

}  // namespace

std::string_view vulkan_kind_name(VulkanKind kind) {
  static constexpr std::string_view kNames[] = {
#define LATHE_VULKAN_OP(name, payload_name) payload_name,
#include "lathe/backends/vulkan/vulkan_ops.def"
#undef LATHE_VULKAN_OP
  };
  return kNames[static_cast<size_t>(kind)];
}

std::optional<VulkanKind> vulkan_kind_named(std::string_view name) {
#define LATHE_VULKAN_OP(kind_name, payload_name) \
  if (name == payload_name) return VulkanKind::kind_name;
#include "lathe/backends/vulkan/vulkan_ops.def"
#undef LATHE_VULKAN_OP
  return std::nullopt;
}

bool vulkan_prepacked_role(VulkanKind kind, std::string_view role) {
  if (kind == VulkanKind::Linear) return role == "weight" || role == "bias";
  if (kind == VulkanKind::Conv2d) return role == "weight" || role == "bias" || role.starts_with("bn_");
  if (kind == VulkanKind::ChannelAffine) return role != "self";
  return false;
}

Result<VulkanOpPlan> plan_vulkan_op(const PayloadOp& op, const std::vector<PayloadValue>& values, const VulkanPrepackReader& read) {
  return Planner(op, values, read).run();
}

}  // namespace lathe
