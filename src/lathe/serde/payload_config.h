// data/weights/<model>_weights_config.json and
// data/constants/<model>_constants_config.json: for each state entry (by
// fully qualified name) the record holding its storage and how to view it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/value.h"

namespace lathe {

struct PayloadMeta {
  std::string path_name;  // record name relative to data/weights/ or data/constants/
  bool is_param = false;
  bool use_pickle = false;
  std::optional<TensorMeta> tensor_meta;
};

using PayloadConfig = std::vector<std::pair<std::string, PayloadMeta>>;

// What a payload config records of a state tensor: its dtype, sizes,
// strides, storage offset and requires_grad.
TensorMeta payload_tensor_meta(const Tensor& t);

// `origin` prefixes errors ("model.pt2: data/weights/model_weights_config.json").
// `readable_after`: readable bytes following `json` (see JsonDecodeOptions).
Result<PayloadConfig> decode_payload_config(std::string_view json, const std::string& origin,
                                            size_t readable_after = 0);
std::string encode_payload_config(const PayloadConfig& config);

}  // namespace lathe
