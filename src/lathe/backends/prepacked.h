// What init() of any backend checks before it prepacks an operand of a
// payload op (a weight, bias or batch-norm statistic): the operand must be
// a delegate input bound to a compile-time constant of the program. A
// payload can be hand-made, so a runtime value there is an error naming
// the op, the operand and the node that computes it — never an abort.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "lathe/backends/payload.h"
#include "lathe/core/result.h"
#include "lathe/runtime/delegate.h"

namespace lathe {

// `backend` is the message prefix ("xnnpack"), `who` the op's label
// ("fully_connected 'mm'"), `prepacker` the sentence's subject ("XNNPACK").
Status check_prepacked_operand(const DelegateInitArgs& args, const DelegatePayload& payload, const PayloadOperand& operand,
                               std::string_view backend, std::string_view who, std::string_view prepacker);

// The float32 elements of a prepacked operand (already checked above), as a
// contiguous copy; an error when its dtype or element count is not the one
// the op needs.
Result<std::vector<float>> prepacked_floats(const DelegateInitArgs& args, const DelegatePayload& payload, uint32_t value,
                                            int64_t numel, std::string_view who, std::string_view role);

// A convolution payload op with a batch norm folded in reads its statistics
// as these operands, in this order.
inline constexpr const char* kBatchNormRoles[4] = {"bn_weight", "bn_bias", "bn_running_mean", "bn_running_var"};

// Where `op` reads each kBatchNormRoles operand: empty when it has no batch
// norm (no bn_weight), nullopt when it has bn_weight but not the rest.
std::optional<std::vector<int>> batch_norm_operands(const PayloadOp& op);

// Folds an inference batch norm into the weight [cout, per_channel] and bias
// [cout] of the convolution before it, in double: w' = w * gamma /
// sqrt(var + eps), b' = (b - mean) * that scale + beta. `stats` are gamma,
// beta, mean and var (kBatchNormRoles order), each of cout elements.
void fold_batch_norm(const std::vector<float> (&stats)[4], double eps, int64_t per_channel, std::vector<float>& w,
                     std::vector<float>& b);

}  // namespace lathe
