// The delegate payload record: what preprocess() writes and init() reads.
// Lathe's own format (PyTorch never runs it); a lowered archive stores it as
// a lifted uint8 tensor constant that the delegate-call node reads as its
// `payload` argument (see runtime/delegate.h).
//
// Layout, little-endian, no padding (u32/i32/i64/f64 are fixed-size ints
// and IEEE doubles; str is u32 length + bytes):
//
//   "LATHEDLG" (8 bytes)  u32 version (=1)  str backend
//   u32 value_count, per value:
//       i32 input        index into the node's `inputs` list, or -1 (made by an op)
//       u32 rank, i64 sizes[rank]      logical sizes (PyTorch order)
//   u32 op_count, per op:
//       str kind         backend op ("fully_connected", "conv2d", "add", ...)
//       str node         the graph node(s) it came from, for messages
//       u32 n, per operand: u32 value, str role   ("input", "weight", "bias", ...)
//       u32 n, u32 output values[n]
//       u32 n, i64 ints[n]         op parameters (shapes, strides, flags; named per
//                                  op in xnnpack_params.h / xnnpack_host_ops.h)
//       u32 n, f64 floats[n]       op parameters (output min/max, eps)
//   u32 output_count, u32 values[output_count]   the node's outputs, in order
//
// Weights are never in the payload: a weight is a delegate input (an
// operand of the node, bound to the program's state), so it is stored once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/result.h"

namespace lathe {

struct PayloadValue {
  int32_t input = -1;
  std::vector<int64_t> sizes;
  int64_t numel() const;
};

struct PayloadOperand {
  uint32_t value = 0;
  std::string role;
};

struct PayloadOp {
  std::string kind;
  std::string node;
  std::vector<PayloadOperand> inputs;
  std::vector<uint32_t> outputs;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

struct DelegatePayload {
  static constexpr uint32_t kVersion = 1;
  std::string backend;
  std::vector<PayloadValue> values;
  std::vector<PayloadOp> ops;
  std::vector<uint32_t> outputs;

  uint32_t add_value(std::vector<int64_t> sizes, int32_t input = -1);
};

// Where `op` reads the operand with this role ("weight"), or -1.
int role_index(const PayloadOp& op, std::string_view role);

std::vector<std::byte> encode_payload(const DelegatePayload& payload);
// Validates every count and value index against what is present: a
// truncated or hand-made record is an error, never an out-of-bounds read.
Result<DelegatePayload> decode_payload(std::span<const std::byte> bytes);

// What every backend's init() relies on before it looks at any op: each
// delegate input a value names exists (the node has `operands` inputs),
// the record has one output per node output, every op reads only values
// defined before it and defines each value once, and every output is
// computed by an op.
Status check_payload_dataflow(const DelegatePayload& payload, size_t operands, size_t node_outputs);

// The record of a delegate whose values have symbolic sizes: not a plan
// but what to plan from, once per distinct set of input sizes
// (replanned_delegate.h).
//
//   "LATHEDYN" (8 bytes)  u32 version (=1)  str backend
//   u32 input_count, str placeholder[input_count]   the subprogram's input each
//                                                    of the node's `inputs` binds
//   str program                                      the claimed nodes as a program
//                                                    of their own (program JSON)
struct ReplannedPayload {
  static constexpr uint32_t kVersion = 1;
  std::string backend;
  std::vector<std::string> inputs;
  std::string program_json;
};

bool is_replanned_payload(std::span<const std::byte> bytes);
std::vector<std::byte> encode_replanned_payload(const ReplannedPayload& payload);
Result<ReplannedPayload> decode_replanned_payload(std::span<const std::byte> bytes);

}  // namespace lathe
