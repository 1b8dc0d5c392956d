// data/weights/<model>_weights_config.json and
// data/constants/<model>_constants_config.json: for each state entry (by
// fully qualified name) the record holding its storage and how to view it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/value.h"
#include "lathe/serde/json_writer.h"

namespace lathe {

struct PayloadMeta {
  std::string path_name;  // record name relative to data/weights/ or data/constants/
  bool is_param = false;
  bool use_pickle = false;
  MetaRef tensor_meta;  // interned: a deep network's weights share a few
};

using PayloadConfig = std::vector<std::pair<std::string, PayloadMeta>>;

// What a payload config records of a state tensor: its dtype, sizes,
// strides, storage offset and requires_grad.
TensorMeta payload_tensor_meta(const Tensor& t);

// `origin` prefixes errors ("model.pt2: data/weights/model_weights_config.json").
// `readable_after`: readable bytes following `json`, and `read_past`: told
// which bytes of it need not stay in memory, as JsonDecodeOptions has them
// (a deep network's config has an entry per weight: 5.4 MB for 20,000).
Result<PayloadConfig> decode_payload_config(std::string_view json, const std::string& origin,
                                            size_t readable_after = 0,
                                            const std::function<void(size_t)>& read_past = {});
std::string encode_payload_config(const PayloadConfig& config);

// The same JSON written entry by entry as the archive writer walks the
// state, in chunks into `out` (json::Writer): nothing is built per entry
// (a 10,000-layer MLP has 20,000), and a state tensor's entry is written
// straight from the tensor, as encode_payload_config writes it for
// payload_tensor_meta(t).
class PayloadConfigWriter {
 public:
  explicit PayloadConfigWriter(const ByteSource::Sink& out);
  void tensor(std::string_view fqn, std::string_view path_name, bool is_param, const Tensor& t);
  void entry(std::string_view fqn, const PayloadMeta& meta);
  Status finish();

 private:
  void begin_entry(std::string_view fqn, std::string_view path_name, bool is_param, bool use_pickle);
  json::Writer w_;
};

}  // namespace lathe
