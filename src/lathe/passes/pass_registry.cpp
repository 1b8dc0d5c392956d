#include "lathe/passes/pass_registry.h"

#include "lathe/passes/addmm_mm_to_linear.h"
#include "lathe/passes/bmm_to_linear.h"
#include "lathe/passes/common_subexpression_elimination.h"
#include "lathe/passes/constant_propagation.h"
#include "lathe/passes/decompose.h"
#include "lathe/passes/fuse_dynamic_int8_linear.h"
#include "lathe/passes/fuse_int8_weight_only_matmul.h"
#include "lathe/passes/default_pipeline.h"
#include "lathe/passes/fuse_weight_only_quantized_linear.h"
#include "lathe/passes/inline_grad_regions.h"
#include "lathe/passes/pass_manager.h"
#include "lathe/passes/remove_dead_code.h"
#include "lathe/passes/remove_redundant_views.h"
#include "lathe/passes/sdpa_additive_mask.h"
#include "lathe/passes/sdpa_grouped_query.h"

namespace lathe {

Status PassRegistry::add(Factory factory) {
  std::unique_ptr<Pass> sample = factory();
  if (!sample) return make_error("pass factory made nothing");
  std::string name(sample->name());
  for (const auto& e : entries_)
    if (e.name == name) return make_error("pass '" + name + "' is registered twice");
  entries_.push_back(Entry{name, std::string(sample->description()), std::move(factory)});
  return Status::Ok();
}

std::vector<std::string> PassRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

Result<std::unique_ptr<Pass>> PassRegistry::create(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e.make();
  return make_error("unknown pass '" + name + "'; passes: " + join_names(names()));
}

Result<std::vector<std::unique_ptr<Pass>>> PassRegistry::create_list(const std::string& comma_separated) const {
  std::vector<std::unique_ptr<Pass>> out;
  for (const std::string& item : split_comma_list(comma_separated)) {
    if (item.empty()) return make_error("empty pass name in '" + comma_separated + "'; passes: " + join_names(names()));
    LATHE_ASSIGN_OR_RETURN(std::unique_ptr<Pass> p, create(item));
    out.push_back(std::move(p));
  }
  return out;
}

const PassRegistry& builtin_passes() {
  static const PassRegistry registry = [] {
    PassRegistry r;
    (void)r.add([] { return std::make_unique<AddmmMmToLinear>(); });
    (void)r.add([] { return std::make_unique<BmmToLinear>(); });
    (void)r.add([] { return std::make_unique<SdpaAdditiveMask>(); });
    (void)r.add([] { return std::make_unique<RemoveDeadCode>(); });
    (void)r.add([] { return std::make_unique<Decompose>(); });
    (void)r.add([] { return std::make_unique<ConstantPropagation>(); });
    (void)r.add([] { return std::make_unique<RemoveRedundantViews>(); });
    (void)r.add([] { return std::make_unique<CommonSubexpressionElimination>(); });
    (void)r.add([] { return std::make_unique<FuseWeightOnlyQuantizedLinear>(); });
    (void)r.add([] { return std::make_unique<FuseInt8WeightOnlyMatmul>(); });
    (void)r.add([] { return std::make_unique<FuseDynamicInt8Linear>(); });
    (void)r.add([] { return std::make_unique<InlineGradRegions>(); });
    (void)r.add([] { return std::make_unique<SdpaGroupedQuery>(); });
    return r;
  }();
  return registry;
}

}  // namespace lathe
