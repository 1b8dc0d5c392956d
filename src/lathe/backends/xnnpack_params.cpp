#include "lathe/backends/xnnpack_params.h"

#include <algorithm>
#include <string>

namespace lathe::xnnpack_params {

namespace {

constexpr int64_t kLimit = int64_t{1} << 32;

// `count` entries, each in [0, 2^32): what every fixed-size record needs.
Status check_fixed(const std::vector<int64_t>& ints, size_t count) {
  if (ints.size() != count) {
    return make_error(std::to_string(ints.size()) + " parameters, expected " + std::to_string(count));
  }
  if (std::any_of(ints.begin(), ints.end(), [](int64_t x) { return x < 0 || x >= kLimit; })) {
    return make_error("negative or huge parameter");
  }
  return Status::Ok();
}

void append(std::vector<int64_t>& out, const std::vector<int64_t>& v) { out.insert(out.end(), v.begin(), v.end()); }

}  // namespace

std::vector<int64_t> to_ints(const FullyConnected& p) {
  return {p.batch, p.input_channels, p.output_channels, p.transposed_weights ? 1 : 0};
}

std::vector<int64_t> to_ints(const Conv2d& p) {
  return {p.batch,    p.height,   p.width,      p.input_channels, p.output_channels, p.kernel_h,
          p.kernel_w, p.stride_h, p.stride_w,   p.pad_top,        p.pad_left,        p.pad_bottom,
          p.pad_right, p.dilation_h, p.dilation_w, p.groups,       p.output_h,        p.output_w};
}

std::vector<int64_t> to_ints(const Pool2d& p) {
  return {p.batch,   p.height,   p.width,      p.channels,   p.kernel_h,   p.kernel_w, p.stride_h, p.stride_w,
          p.pad_top, p.pad_left, p.pad_bottom, p.pad_right, p.dilation_h, p.dilation_w, p.output_h, p.output_w};
}

std::vector<int64_t> to_ints(const GlobalPool& p) { return {p.batch, p.pixels, p.channels}; }
std::vector<int64_t> to_ints(const Softmax& p) { return {p.rows, p.channels}; }
std::vector<int64_t> to_ints(const Elementwise& p) { return {p.count}; }
std::vector<int64_t> to_ints(const Layout& p) { return {p.batch, p.channels, p.height, p.width}; }

std::vector<int64_t> to_ints(const Binary& p) {
  std::vector<int64_t> out{static_cast<int64_t>(p.shape_a.size())};
  append(out, p.shape_a);
  out.push_back(static_cast<int64_t>(p.shape_b.size()));
  append(out, p.shape_b);
  return out;
}

std::vector<int64_t> to_ints(const ConstantPad& p) {
  std::vector<int64_t> out{static_cast<int64_t>(p.sizes.size())};
  append(out, p.sizes);
  append(out, p.pre);
  append(out, p.post);
  return out;
}

Result<FullyConnected> parse_fully_connected(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 4));
  return FullyConnected{I[0], I[1], I[2], I[3] != 0};
}

Result<Conv2d> parse_conv2d(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 18));
  return Conv2d{I[0], I[1], I[2],  I[3],  I[4],  I[5],  I[6],  I[7],  I[8],
                I[9], I[10], I[11], I[12], I[13], I[14], I[15], I[16], I[17]};
}

Result<Pool2d> parse_pool2d(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 16));
  return Pool2d{I[0], I[1], I[2], I[3], I[4], I[5], I[6], I[7], I[8], I[9], I[10], I[11], I[12], I[13], I[14], I[15]};
}

Result<GlobalPool> parse_global_pool(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 3));
  return GlobalPool{I[0], I[1], I[2]};
}

Result<Softmax> parse_softmax(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 2));
  return Softmax{I[0], I[1]};
}

Result<Elementwise> parse_elementwise(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 1));
  return Elementwise{I[0]};
}

Result<Layout> parse_layout(const std::vector<int64_t>& I) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, 4));
  return Layout{I[0], I[1], I[2], I[3]};
}

Result<Binary> parse_binary(const std::vector<int64_t>& I, size_t max_rank) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, I.size()));  // ranges only
  Binary p;
  size_t pos = 0;
  for (std::vector<int64_t>* s : {&p.shape_a, &p.shape_b}) {
    if (pos >= I.size() || static_cast<size_t>(I[pos]) > max_rank || pos + 1 + static_cast<size_t>(I[pos]) > I.size()) {
      return make_error("operand shapes");
    }
    s->assign(I.begin() + static_cast<int64_t>(pos) + 1, I.begin() + static_cast<int64_t>(pos) + 1 + I[pos]);
    pos += 1 + static_cast<size_t>(I[pos]);
  }
  if (pos != I.size()) return make_error("operand shapes");
  return p;
}

Result<ConstantPad> parse_constant_pad(const std::vector<int64_t>& I, size_t max_rank) {
  LATHE_RETURN_IF_ERROR(check_fixed(I, I.size()));
  if (I.empty() || I[0] < 1 || static_cast<size_t>(I[0]) > max_rank || I.size() != 1 + 3 * static_cast<size_t>(I[0])) {
    return make_error("rank and padding counts");
  }
  const int64_t r = I[0];
  ConstantPad p;
  p.sizes.assign(I.begin() + 1, I.begin() + 1 + r);
  p.pre.assign(I.begin() + 1 + r, I.begin() + 1 + 2 * r);
  p.post.assign(I.begin() + 1 + 2 * r, I.end());
  return p;
}

// ---- host ops ----

HostRecord to_record(const LayerNorm& p) { return {{p.normalized_rank}, {p.eps}}; }
HostRecord to_record(const Gelu& p) { return {{p.tanh ? 1 : 0}, {}}; }
HostRecord to_record(const Permute& p) { return {p.dims, {}}; }

HostRecord to_record(const Roll& p) {
  HostRecord r{{static_cast<int64_t>(p.dims.size())}, {}};
  append(r.ints, p.shifts);
  append(r.ints, p.dims);
  return r;
}

HostRecord to_record(const Sdpa& p) { return {{p.causal ? 1 : 0, p.enable_gqa ? 1 : 0}, {p.scale}}; }
HostRecord to_record(const Concat& p) { return {{p.outer}, {}}; }
HostRecord to_record(const Slice& p) { return {{p.outer, p.row_in, p.offset, p.row_out}, {}}; }

HostRecord to_record(const ChannelAffine& p) {
  return {{p.channels_last ? 1 : 0, p.batch, p.channels, p.spatial}, {p.eps}};
}

namespace {

Status counts(const HostRecord& r, size_t ints, size_t floats) {
  if (r.ints.size() != ints || r.floats.size() != floats) return make_error("parameters");
  return Status::Ok();
}

}  // namespace

Result<LayerNorm> parse_layer_norm(const HostRecord& r) {
  LATHE_RETURN_IF_ERROR(counts(r, 1, 1));
  if (r.ints[0] < 1) return make_error("parameters");
  return LayerNorm{r.ints[0], r.floats[0]};
}

Result<Gelu> parse_gelu(const HostRecord& r) {
  LATHE_RETURN_IF_ERROR(counts(r, 1, 0));
  return Gelu{r.ints[0] != 0};
}

Result<Permute> parse_permute(const HostRecord& r) { return Permute{r.ints}; }

Result<Roll> parse_roll(const HostRecord& r) {
  const std::vector<int64_t>& I = r.ints;
  if (I.empty() || I[0] < 1 || I.size() != 1 + 2 * static_cast<size_t>(I[0])) return make_error("parameters");
  return Roll{std::vector<int64_t>(I.begin() + 1, I.begin() + 1 + I[0]), std::vector<int64_t>(I.begin() + 1 + I[0], I.end())};
}

Result<Sdpa> parse_sdpa(const HostRecord& r) {
  // Records written before enable_gqa have one int.
  if (r.ints.size() == 1) LATHE_RETURN_IF_ERROR(counts(r, 1, 1));
  else LATHE_RETURN_IF_ERROR(counts(r, 2, 1));
  return Sdpa{r.ints[0] != 0, r.floats[0], r.ints.size() == 2 && r.ints[1] != 0};
}

Result<Concat> parse_concat(const HostRecord& r) {
  if (r.ints.size() != 1 || r.ints[0] < 1) return make_error("parameters");
  return Concat{r.ints[0]};
}

Result<Slice> parse_slice(const HostRecord& r) {
  const std::vector<int64_t>& I = r.ints;
  if (I.size() != 4 || std::any_of(I.begin(), I.end(), [](int64_t v) { return v < 0; })) return make_error("parameters");
  return Slice{I[0], I[1], I[2], I[3]};
}

Result<ChannelAffine> parse_channel_affine(const HostRecord& r) {
  LATHE_RETURN_IF_ERROR(counts(r, 4, 1));
  const std::vector<int64_t>& I = r.ints;
  if (I[0] < 0 || I[0] > 1 || I[1] < 0 || I[2] < 0 || I[3] < 0) return make_error("parameters");
  return ChannelAffine{I[0] != 0, I[1], I[2], I[3], r.floats[0]};
}

}  // namespace lathe::xnnpack_params
