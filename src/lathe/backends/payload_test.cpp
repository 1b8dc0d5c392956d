// The delegate payload record (payload.h): the layout the header documents,
// byte for byte on a hand-written record; every field survives a round
// trip; truncated, oversized and inconsistent records are refused with the
// field named (_NEG), never read out of bounds.
#include "lathe/backends/payload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace lathe {
namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

void append(std::vector<std::byte>& to, const std::vector<std::byte>& more) { to.insert(to.end(), more.begin(), more.end()); }

std::string error_of(const std::vector<std::byte>& record) {
  auto p = decode_payload(record);
  return p.ok() ? "" : p.error().message();
}

DelegatePayload two_op_payload() {
  DelegatePayload p;
  p.backend = "xnnpack";
  const uint32_t x = p.add_value({2, 3}, 0);
  const uint32_t w = p.add_value({4, 3}, 1);
  const uint32_t y = p.add_value({2, 4});
  const uint32_t z = p.add_value({2, 4});
  p.ops.push_back(PayloadOp{"fully_connected", "linear", {{x, "input"}, {w, "weight"}}, {y}, {2, 3, 4, 0},
                            {-INFINITY, INFINITY}});
  p.ops.push_back(PayloadOp{"clamp", "relu", {{y, "self"}}, {z}, {8}, {0.0, INFINITY}});
  p.outputs = {z};
  return p;
}

// backend "x"; one value (delegate input 0, sizes [3]); no ops; output value 0.
std::vector<std::byte> hand_written() {
  std::vector<std::byte> r = bytes_of({'L', 'A', 'T', 'H', 'E', 'D', 'L', 'G', 1, 0, 0, 0});
  append(r, bytes_of({1, 0, 0, 0, 'x'}));                                  // backend
  append(r, bytes_of({1, 0, 0, 0}));                                       // value count
  append(r, bytes_of({0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}));   // input 0, rank 1, size 3
  append(r, bytes_of({0, 0, 0, 0}));                                       // op count
  append(r, bytes_of({1, 0, 0, 0, 0, 0, 0, 0}));                           // outputs: [0]
  return r;
}

TEST(Payload, TheLayoutIsTheDocumentedOne) {
  DelegatePayload p;
  p.backend = "x";
  p.add_value({3}, 0);
  p.outputs = {0};
  EXPECT_EQ(encode_payload(p), hand_written());
  auto back = decode_payload(hand_written());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->backend, "x");
  ASSERT_EQ(back->values.size(), 1u);
  EXPECT_EQ(back->values[0].input, 0);
  EXPECT_EQ(back->values[0].sizes, std::vector<int64_t>{3});
}

TEST(Payload, EveryFieldRoundTrips) {
  const DelegatePayload p = two_op_payload();
  const std::vector<std::byte> record = encode_payload(p);
  auto back = decode_payload(record);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->backend, p.backend);
  ASSERT_EQ(back->values.size(), p.values.size());
  for (size_t i = 0; i < p.values.size(); ++i) {
    EXPECT_EQ(back->values[i].input, p.values[i].input);
    EXPECT_EQ(back->values[i].sizes, p.values[i].sizes);
  }
  ASSERT_EQ(back->ops.size(), 2u);
  const PayloadOp& fc = back->ops[0];
  EXPECT_EQ(fc.kind, "fully_connected");
  EXPECT_EQ(fc.node, "linear");
  ASSERT_EQ(fc.inputs.size(), 2u);
  EXPECT_EQ(fc.inputs[1].value, 1u);
  EXPECT_EQ(fc.inputs[1].role, "weight");
  EXPECT_EQ(fc.outputs, std::vector<uint32_t>{2});
  EXPECT_EQ(fc.ints, (std::vector<int64_t>{2, 3, 4, 0}));
  EXPECT_EQ(fc.floats, (std::vector<double>{-INFINITY, INFINITY}));
  EXPECT_EQ(back->outputs, std::vector<uint32_t>{3});
  EXPECT_EQ(encode_payload(*back), record);  // and back to the same bytes
}

TEST(Payload, EveryTruncationIsRefused_NEG) {
  const std::vector<std::byte> record = encode_payload(two_op_payload());
  for (size_t n = 0; n < record.size(); ++n) {
    const std::string err = error_of(std::vector<std::byte>(record.begin(), record.begin() + n));
    EXPECT_NE(err.find("delegate payload: truncated"), std::string::npos) << n << ": " << err;
  }
  std::vector<std::byte> longer = record;
  longer.push_back(std::byte{0});
  EXPECT_EQ(error_of(longer), "delegate payload: trailing bytes after the record");
}

TEST(Payload, HeaderAndCountsAreChecked_NEG) {
  std::vector<std::byte> r = hand_written();
  r[0] = std::byte{'X'};
  EXPECT_EQ(error_of(r), "delegate payload: bad magic (not a Lathe delegate record)");
  r = hand_written();
  r[8] = std::byte{2};
  EXPECT_EQ(error_of(r), "delegate payload: unknown delegate record version 2");
  r = hand_written();
  r[17] = std::byte{0xff}, r[18] = std::byte{0xff}, r[19] = std::byte{0xff}, r[20] = std::byte{0x7f};  // value count
  EXPECT_EQ(error_of(r), "delegate payload: values count 2147483647 is implausible");
  r = hand_written();
  r[25] = std::byte{17};  // rank
  EXPECT_EQ(error_of(r), "delegate payload: rank count 17 is implausible");
  r = hand_written();
  r[36] = std::byte{0x80};  // size 3 -> negative
  EXPECT_NE(error_of(r).find("value 0 has size -"), std::string::npos) << error_of(r);
}

// Sizes each under the per-size bound whose product wraps: [2^40, 2^40,
// 2^40] was 2^120, counted as 0 elements, and passed (issue 33, item 6).
TEST(Payload, ValuesWhoseElementCountWrapsAreRefused_NEG) {
  DelegatePayload p;
  p.backend = "x";
  p.add_value({int64_t{1} << 40, int64_t{1} << 40, int64_t{1} << 40}, 0);
  p.outputs = {0};
  EXPECT_EQ(error_of(encode_payload(p)), "delegate payload: value 0 is implausibly large");
}

TEST(Payload, ValueIndicesAreChecked_NEG) {
  DelegatePayload p = two_op_payload();
  p.ops[1].inputs[0].value = 9;
  EXPECT_EQ(error_of(encode_payload(p)), "delegate payload: op 1 (clamp) names value 9 of 4");
  p = two_op_payload();
  p.ops[0].outputs = {1};  // the weight: a delegate input
  EXPECT_EQ(error_of(encode_payload(p)), "delegate payload: op 0 (fully_connected) writes delegate input value 1");
  p = two_op_payload();
  p.outputs = {4};
  EXPECT_EQ(error_of(encode_payload(p)), "delegate payload: node output 0 names value 4 of 4");
}

}  // namespace
}  // namespace lathe
