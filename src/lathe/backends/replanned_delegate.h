// Delegates of programs with symbolic sizes: planned once per distinct set
// of input sizes.
//
// XNNPACK's operators and Vulkan's pipelines are planned for fixed sizes,
// and a backend's support() and preprocess() read concrete ones. So a
// program exported with a Dim is partitioned on a copy specialised at the
// sizes torch.export saw (ir/specialize_shapes.h), and each group whose
// values have symbolic sizes is lowered not to a plan but to what to plan
// from (ReplannedPayload, payload.h): the group as a program of its own,
// its sizes still expressions.
//
//   lower:   group ──► subprogram (symbolic) ──► "LATHEDYN" record
//   run:     input sizes ──► bind s0, s1 ──► specialise a copy ──► backend.preprocess ──► backend.init
//                                                       └── kept for these sizes (the last kReplannedPlansKept)
//
// A call with sizes seen before runs the kept plan: only the first call at
// each size pays for planning and prepacking. A static group is lowered
// and run exactly as before.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "lathe/backends/backend.h"

namespace lathe {

// How many sizes' plans a delegate keeps (each holds its own prepacked
// weights), the most recently used first.
inline constexpr size_t kReplannedPlansKept = 4;

// Whether a value the group reads or defines has a symbolic size.
bool group_has_symbolic_shapes(const DelegateSubgraph& sub);

// The symbols the group's sizes use that no tensor input of the group has
// as a whole size: a run could not bind them from the delegate's inputs.
std::vector<std::string> unbindable_symbols(const DelegateSubgraph& sub);

// The re-planned record of a group (its inputs in `sub.inputs` order,
// symbolic ints among them bound by their expressions instead of passed).
Result<std::vector<std::byte>> replanned_payload(const DelegateSubgraph& sub, std::string_view backend);

// A backend's runtime for either kind of record: a re-planned one makes a
// handle that plans per input sizes, any other goes to backend.init().
class ReplanningRuntime final : public DelegateRuntime {
 public:
  explicit ReplanningRuntime(const Backend& backend) : backend_(backend) {}
  std::string_view name() const override { return backend_.name(); }
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs& args) const override;

 private:
  const Backend& backend_;
};

}  // namespace lathe
