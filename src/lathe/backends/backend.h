// A backend, as the lowering flow sees it (ARCHITECTURE.md "Backends"):
//
//   support(node)        claimed or not, and why — including whether the
//                        weights it must prepack are compile-time constants
//   ops_to_keep()        ops that decomposition must leave whole (linear...)
//   preprocess(subgraph) the claimed nodes -> a payload record (payload.h)
//   init(payload, operands) -> handle     prepack, in memory the backend owns
//   handle.execute(call), ~handle         (DelegateRuntime, runtime/delegate.h)
//
// The compile-time half lives here; the load/run half is the runtime's
// DelegateRuntime interface, so the executor runs delegate nodes without
// depending on any backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lathe/analysis/constness.h"
#include "lathe/backends/payload.h"
#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
#include "lathe/runtime/delegate.h"

namespace lathe {

struct NodeSupport {
  bool claimed = false;
  // Claimed: what it becomes ("fully_connected, weight 'fc.weight' prepacked").
  // Not claimed: why, as a predicate ("weight 'permute' is computed at run time by 'squeeze_1'").
  std::string reason;
  static NodeSupport yes(std::string what) { return {true, std::move(what)}; }
  static NodeSupport no(std::string why) { return {false, std::move(why)}; }
};

// What preprocess() lowers: claimed nodes in graph order, every value they
// read from outside (the delegate node's `inputs`, in order) and every value
// they define that is used outside (its outputs, in order).
struct DelegateSubgraph {
  const ExportedProgram& program;
  const Constness& constness;
  std::vector<const Node*> nodes;
  std::vector<const Value*> inputs;
  std::vector<const Value*> outputs;
};

// preprocess()'s frame, the same for every backend: `lower` each node in
// graph order (an error names the node), then list each output's value id
// (`id_of`, which may itself fail) and encode the record.
template <typename Lower, typename IdOf>
Result<std::vector<std::byte>> lower_subgraph(const DelegateSubgraph& sub, DelegatePayload& payload, Lower lower, IdOf id_of) {
  for (const Node* n : sub.nodes) {
    Status s = lower(*n);
    if (!s.ok()) return s.error().context("node '" + n->name() + "' (" + n->op_name() + ")");
  }
  for (const Value* v : sub.outputs) {
    LATHE_ASSIGN_OR_RETURN(uint32_t id, id_of(v));
    payload.outputs.push_back(id);
  }
  return encode_payload(payload);
}

// A backend's init(): a new `Handle`, set up by its init(args).
template <typename Handle>
Result<std::unique_ptr<DelegateHandle>> init_handle(const DelegateInitArgs& args) {
  auto h = std::make_unique<Handle>();
  LATHE_RETURN_IF_ERROR(h->init(args));
  return std::unique_ptr<DelegateHandle>(std::move(h));
}

class Backend : public DelegateRuntime {
 public:
  // Whether this backend can lower and run here (a Vulkan device present);
  // lower_program asks first, so the error comes before any work.
  virtual Status available() const { return Status::Ok(); }
  virtual NodeSupport support(const Node& node, const Constness& constness) const = 0;
  virtual std::vector<std::string> ops_to_keep() const = 0;
  virtual Result<std::vector<std::byte>> preprocess(const DelegateSubgraph& subgraph) const = 0;
  // Every op support() has a rule for ("aten.linear.default"), sorted, for
  // `lathe ops`; empty when the backend does not say.
  virtual std::vector<std::string> claimed_ops() const { return {}; }
};

// A backend this build left out (LATHE_WITH_XNNPACK / LATHE_WITH_VULKAN
// off): it keeps its name, so `lathe lower --backend NAME` and running an
// archive lowered elsewhere say why they cannot instead of "unknown
// backend"; it claims nothing, and every other call returns `why`.
class UnbuiltBackend : public Backend {
 public:
  UnbuiltBackend(std::string name, std::string why) : name_(std::move(name)), why_(std::move(why)) {}
  std::string_view name() const override { return name_; }
  Status available() const override { return Error(why_); }
  NodeSupport support(const Node&, const Constness&) const override {
    return NodeSupport::no("this Lathe was built without " + name_);
  }
  std::vector<std::string> ops_to_keep() const override { return {}; }
  Result<std::vector<std::byte>> preprocess(const DelegateSubgraph&) const override { return Error(why_); }
  Result<std::unique_ptr<DelegateHandle>> init(const DelegateInitArgs&) const override { return Error(why_); }

 private:
  std::string name_;
  std::string why_;
};

}  // namespace lathe
