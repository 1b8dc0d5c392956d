// XNNPACK payload parameters: each struct survives to_ints -> parse_*
// unchanged, and a record with the wrong count or a negative or huge entry
// is refused before init() reads it (_NEG).
#include "lathe/backends/xnnpack_params.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lathe::xnnpack_params {
namespace {

TEST(XnnpackParams, FixedRecordsRoundTrip) {
  const Conv2d c{1, 8, 9, 3, 6, 3, 3, 2, 1, 1, 0, 2, 1, 1, 1, 3, 4, 8};
  auto back = parse_conv2d(to_ints(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(to_ints(*back), to_ints(c));
  EXPECT_EQ(back->pad_bottom, 2);
  EXPECT_EQ(back->groups, 3);
  const Pool2d p{1, 6, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 3, 3};
  EXPECT_EQ(to_ints(*parse_pool2d(to_ints(p))), to_ints(p));
  const FullyConnected f{4, 16, 8, true};
  EXPECT_TRUE(parse_fully_connected(to_ints(f))->transposed_weights);
}

TEST(XnnpackParams, VariableRecordsRoundTrip) {
  const Binary b{{1, 4, 5, 2}, {2}};
  auto back = parse_binary(to_ints(b), 6);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape_a, b.shape_a);
  EXPECT_EQ(back->shape_b, b.shape_b);
  const ConstantPad c{{1, 3, 4}, {0, 1, 2}, {0, 0, 1}};
  auto pad = parse_constant_pad(to_ints(c), 6);
  ASSERT_TRUE(pad.ok());
  EXPECT_EQ(pad->pre, c.pre);
  EXPECT_EQ(pad->post, c.post);
}

TEST(XnnpackParams, WrongCountsAndHostileValuesAreRefused_NEG) {
  EXPECT_FALSE(parse_conv2d(std::vector<int64_t>(17, 1)).ok());
  std::vector<int64_t> conv = to_ints(Conv2d{1, 8, 9, 3, 6, 3, 3, 2, 1, 1, 0, 2, 1, 1, 1, 3, 4, 8});
  conv[9] = -1;  // a negative padding
  EXPECT_FALSE(parse_conv2d(conv).ok());
  conv[9] = int64_t{1} << 40;
  EXPECT_FALSE(parse_conv2d(conv).ok());
  EXPECT_FALSE(parse_binary({7, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 6).ok());  // rank above the limit
  EXPECT_FALSE(parse_binary({2, 1, 1}, 6).ok());                       // truncated
  EXPECT_FALSE(parse_binary({1, 3, 1, 3, 9}, 6).ok());                 // trailing entries
  EXPECT_FALSE(parse_constant_pad({2, 3, 4, 0, 0}, 6).ok());           // padding lists cut short
  EXPECT_FALSE(parse_elementwise({}).ok());
}

TEST(XnnpackParams, HostRecordsRoundTrip) {
  const Roll roll{{2, -1}, {1, 3}};
  const HostRecord r = to_record(roll);
  EXPECT_EQ(r.ints, (std::vector<int64_t>{2, 2, -1, 1, 3}));  // {n, shifts..., dims...}
  auto back = parse_roll(r);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shifts, roll.shifts);
  EXPECT_EQ(back->dims, roll.dims);
  const ChannelAffine a{true, 2, 8, 25, 1e-3};
  EXPECT_EQ(to_record(a).ints, (std::vector<int64_t>{1, 2, 8, 25}));
  auto affine = parse_channel_affine(to_record(a));
  ASSERT_TRUE(affine.ok());
  EXPECT_TRUE(affine->channels_last);
  EXPECT_EQ(affine->spatial, 25);
  EXPECT_EQ(affine->eps, 1e-3);
  auto sdpa = parse_sdpa(to_record(Sdpa{true, std::nan("")}));
  ASSERT_TRUE(sdpa.ok());
  EXPECT_TRUE(sdpa->causal);
  EXPECT_TRUE(std::isnan(sdpa->scale));
  EXPECT_EQ(parse_layer_norm(to_record(LayerNorm{2, 1e-5}))->normalized_rank, 2);
  EXPECT_TRUE(parse_gelu(to_record(Gelu{true}))->tanh);
  EXPECT_EQ(parse_slice(to_record(Slice{4, 10, 3, 5}))->offset, 3);
  EXPECT_EQ(parse_concat(to_record(Concat{6}))->outer, 6);
  EXPECT_EQ(parse_permute(to_record(Permute{{2, 0, 1}}))->dims, (std::vector<int64_t>{2, 0, 1}));
}

TEST(XnnpackParams, MalformedHostRecordsAreRefused_NEG) {
  EXPECT_FALSE(parse_layer_norm({{0}, {1e-5}}).ok());      // normalizes nothing
  EXPECT_FALSE(parse_layer_norm({{1}, {}}).ok());          // no eps
  EXPECT_FALSE(parse_gelu({{1}, {0.5}}).ok());             // a float too many
  EXPECT_FALSE(parse_roll({{0}, {}}).ok());                // rolls no dim
  EXPECT_FALSE(parse_roll({{2, 1, 1, 0}, {}}).ok());       // counts disagree
  EXPECT_FALSE(parse_sdpa({{0}, {}}).ok());
  EXPECT_FALSE(parse_concat({{0}, {}}).ok());              // zero rows
  EXPECT_FALSE(parse_slice({{1, 2, -1, 1}, {}}).ok());     // negative offset
  EXPECT_FALSE(parse_channel_affine({{2, 1, 1, 1}, {1e-5}}).ok());  // layout flag not 0/1
}

}  // namespace
}  // namespace lathe::xnnpack_params
