// sdpa_grouped_query: scaled_dot_product_attention whose key and value are
// repeat_kv copies reads the grouped key/value heads in place
// (enable_gqa=True). See the .cpp.
#pragma once

#include "lathe/passes/pass.h"

namespace lathe {

class SdpaGroupedQuery
    : public NamedPass<"sdpa_grouped_query",
                       "scaled_dot_product_attention whose key and value are grouped heads copied per query head "
                       "(reshape(expand(unsqueeze(kv, 2)))) reads the grouped heads in place with enable_gqa=True"> {
 public:
  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;
};

}  // namespace lathe
