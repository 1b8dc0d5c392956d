// scaled_dot_product_attention in its math form, for callers outside the
// kernel registry (the XNNPACK delegate runs it between its own operators).
#pragma once

#include <optional>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

struct SdpaArgs {
  const Tensor* q;
  const Tensor* k;
  const Tensor* v;
  const Tensor* mask = nullptr;
  double dropout_p = 0;
  bool causal = false;
  std::optional<double> scale;
  // Grouped-query attention: k and v have fewer heads (dim -3) than q, a
  // divisor of them; query head h reads key/value head h / (q heads / kv heads).
  bool enable_gqa = false;
};

// out = softmax(q @ k^T * scale + mask) @ v; logsumexp (optional) is the
// row log-sum-exp of the scaled, masked scores.
Status sdpa(const SdpaArgs& a, Tensor& out, Tensor* logsumexp);

}  // namespace lathe::kernels
