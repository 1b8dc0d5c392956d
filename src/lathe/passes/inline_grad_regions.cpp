#include "lathe/passes/inline_grad_regions.h"

#include <unordered_map>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

// Where a region node keeps its body: set_grad_enabled(enabled, graph,
// *args); autocast(device, dtype, enabled, cache_enabled, graph, *args).
struct Region {
  const GraphArg* body = nullptr;
  size_t first_operand = 0;
};

bool literal_true(const Node& n, size_t index) {
  if (index >= n.inputs().size()) return false;
  const bool* b = n.inputs()[index].arg.get_if<bool>();
  return b && *b;
}

// The region `n` opens, or why it must stay; nullopt body: not a region.
Result<Region> region_of(const Node& n) {
  const bool grad = ops::same_op(n.op_target(), ops::higher_order::wrap_with_set_grad_enabled);
  const bool autocast = ops::same_op(n.op_target(), ops::higher_order::wrap_with_autocast);
  if (!grad && !autocast) return Region{};
  if (autocast && literal_true(n, 2)) return make_error("an enabled autocast region changes dtypes its body does not spell out");
  const size_t at = grad ? 1 : 4;
  const GraphArg* body = at < n.inputs().size() ? n.inputs()[at].arg.get_if<GraphArg>() : nullptr;
  if (!body || !body->graph) return make_error("argument #" + std::to_string(at) + " is not a subgraph");
  return Region{body, at + 1};
}

// What stops a body from being copied node for node.
std::string unsupported(const Graph& body, size_t operands) {
  if (body.inputs().size() != operands) {
    return "its body takes " + std::to_string(body.inputs().size()) + " inputs for " + std::to_string(operands) + " operands";
  }
  for (const Node* sn : body.nodes()) {
    for (const NamedArgument& a : sn->inputs()) {
      if (a.arg.is<GraphArg>()) return "node '" + sn->name() + "' of its body has a subgraph of its own";
    }
    for (const Argument& o : sn->outputs()) {
      if (!o.is<TensorRef>()) return "node '" + sn->name() + "' of its body has an output that is not one tensor";
    }
  }
  return "";
}

class Inliner {
 public:
  Inliner(ExportedProgram& ep, PassContext& ctx) : ep_(ep), ctx_(ctx), rw_(ep) {}

  Result<bool> run() {
    bool changed = false;
    for (Node* n : ep_.graph().nodes_snapshot()) {
      auto region = region_of(*n);
      if (!region.ok()) {
        ctx_.kept(n->name(), region.error().message());
        continue;
      }
      if (!region->body) continue;
      LATHE_ASSIGN_OR_RETURN(bool done, inline_region(n, *region));
      changed = changed || done;
    }
    return changed;
  }

 private:
  Result<bool> inline_region(Node* n, const Region& r) {
    const Graph& body = *r.body->graph;
    const size_t operands = n->inputs().size() - r.first_operand;
    if (std::string why = unsupported(body, operands); !why.empty()) {
      ctx_.kept(n->name(), "region kept: " + why);
      return false;
    }
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < operands; ++i) {
      const Value* inner = body.inputs()[i].tensor();
      Value* outer = n->inputs()[r.first_operand + i].arg.tensor();
      if (!inner || !outer) {
        ctx_.kept(n->name(), "region kept: operand " + std::to_string(i) + " is not a tensor");
        return false;
      }
      map[inner] = outer;
    }
    for (const Node* sn : body.nodes()) LATHE_RETURN_IF_ERROR(copy_node(*sn, n, map));
    const std::vector<Value*>& results = n->defined_values();
    if (results.size() != body.outputs().size()) {
      return make_error("region '" + n->name() + "' defines " + std::to_string(results.size()) + " values, its body returns " +
                        std::to_string(body.outputs().size()));
    }
    for (size_t k = 0; k < results.size(); ++k) {
      Value* inner = body.outputs()[k].tensor();
      auto it = inner ? map.find(inner) : map.end();
      if (it == map.end()) return make_error("region '" + n->name() + "': body output " + std::to_string(k) + " is not a tensor it defines or takes");
      LATHE_RETURN_IF_ERROR(rw_.replace_all_uses(results[k], it->second));
    }
    ctx_.rewritten(n->name(), "inlined its " + std::to_string(body.node_count()) + "-node body");
    LATHE_RETURN_IF_ERROR(rw_.erase_node(n));
    return true;
  }

  // A copy of body node `sn` before `at`, its operands mapped to this graph.
  Status copy_node(const Node& sn, Node* at, std::unordered_map<const Value*, Value*>& map) {
    std::vector<NamedArgument> inputs = sn.inputs();
    Status bad = Status::Ok();
    for (NamedArgument& a : inputs) {
      a.arg.map_values([&](Value* v) -> Value* {
        auto it = map.find(v);
        if (it != map.end()) return it->second;
        bad = make_error("node '" + sn.name() + "' reads '" + v->name() + "', which its region does not define");
        return v;
      });
    }
    LATHE_RETURN_IF_ERROR(bad);
    std::vector<NewOutput> outs;
    for (const Value* v : sn.defined_values()) outs.push_back(NewOutput{v->kind(), v->name(), std::optional<TensorMeta>(v->meta())});
    LATHE_ASSIGN_OR_RETURN(Node * copy, rw_.create_node(sn.target(), std::move(inputs), std::move(outs), at));
    copy->mutable_metadata() = sn.metadata();  // stack traces and module paths stay the user's
    for (size_t i = 0; i < sn.defined_values().size(); ++i) map[sn.defined_values()[i]] = copy->defined_values()[i];
    return Status::Ok();
  }

  ExportedProgram& ep_;
  PassContext& ctx_;
  Rewriter rw_;
};

}  // namespace

Result<bool> InlineGradRegions::run(ExportedProgram& program, PassContext& ctx) { return Inliner(program, ctx).run(); }

}  // namespace lathe
