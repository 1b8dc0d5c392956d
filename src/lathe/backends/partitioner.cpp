#include "lathe/backends/partitioner.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "lathe/analysis/constness.h"
#include "lathe/ir/rewriter.h"

namespace lathe {

namespace {

// Union-find over group ids, with each root's members in graph order.
struct Groups {
  std::vector<int> parent;
  std::vector<std::vector<int>> members;  // by root
  int make(int node) {
    parent.push_back(static_cast<int>(parent.size()));
    members.push_back({node});
    return parent.back();
  }
  int find(int g) {
    while (parent[g] != g) g = parent[g] = parent[parent[g]];
    return g;
  }
  int unite(int a, int b) {
    a = find(a), b = find(b);
    if (a == b) return a;
    parent[b] = a;
    members[a].insert(members[a].end(), members[b].begin(), members[b].end());
    members[b].clear();
    return a;
  }
};

struct Plan {
  std::vector<Node*> order;
  std::unordered_map<const Node*, int> index;
  std::vector<std::vector<int>> producers;  // per node: indices of nodes defining its operands
  std::vector<int> group;                   // per node: group id (raw) or -1
  std::vector<std::vector<int>> reach;      // per node: raw group ids it depends on
  Groups groups;

  // Would the group made of `roots` plus node `extra` be convex? It is not if
  // a member reads a non-member that depends on one of the groups.
  bool convex(const std::vector<int>& roots, int extra) {
    auto in_merged = [&](int g) { return std::find(roots.begin(), roots.end(), groups.find(g)) != roots.end(); };
    auto member = [&](int n) { return n == extra || (group[n] >= 0 && in_merged(group[n])); };
    std::vector<int> all{extra};
    for (int r : roots) all.insert(all.end(), groups.members[r].begin(), groups.members[r].end());
    for (int m : all) {
      for (int q : producers[m]) {
        if (member(q)) continue;
        for (int g : reach[q]) {
          if (in_merged(g)) return false;
        }
      }
    }
    return true;
  }
};

std::string node_op(const Node& n) { return n.op_name(); }

// Moves every use of a group's escaping value `from` to the delegate's
// output `to`. A member that also reads `from` comes before the delegate
// node, so Rewriter::replace_all_uses would refuse; such members are erased
// right after this, so only the users outside the group are checked.
Status redirect_outside_uses(Rewriter& rw, const std::unordered_set<const Node*>& in_group, Value* from, Value* to) {
  for (const Use& u : from->uses()) {
    if (u.user && !in_group.count(u.user) && !rw.defined_before(to, u.user)) {
      return make_error("delegate output '" + to->name() + "' is not defined before '" + u.user->name() +
                        "', which reads '" + from->name() + "'");
    }
  }
  rw.graph().replace_all_uses(from, to);
  return Status::Ok();
}

}  // namespace

Result<PartitionReport> partition(ExportedProgram& ep, const Backend& backend) {
  Graph& g = ep.graph();
  PartitionReport report;
  Plan plan;
  plan.order = g.nodes_snapshot();
  const int count = static_cast<int>(plan.order.size());
  for (int i = 0; i < count; ++i) plan.index[plan.order[i]] = i;
  plan.producers.resize(count);
  plan.group.assign(count, -1);
  plan.reach.resize(count);

  {
    Constness constness(ep);
    for (int i = 0; i < count; ++i) {
      const Node& n = *plan.order[i];
      NodeSupport s = backend.support(n, constness);
      report.decisions.push_back(NodeDecision{n.name(), node_op(n), s.claimed, s.reason, -1});
    }
  }

  // ---- grouping, in graph order ----------------------------------------------------
  for (int i = 0; i < count; ++i) {
    std::vector<int>& prod = plan.producers[i];
    for (const Value* v : plan.order[i]->operand_values()) {
      if (v->producer()) prod.push_back(plan.index.at(v->producer()));
    }
    std::sort(prod.begin(), prod.end());
    prod.erase(std::unique(prod.begin(), prod.end()), prod.end());
    if (report.decisions[i].claimed) {
      std::vector<int> cands;
      for (int p : prod) {
        if (plan.group[p] >= 0) cands.push_back(plan.groups.find(plan.group[p]));
      }
      std::sort(cands.begin(), cands.end());
      cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
      int joined = -1;
      if (!cands.empty() && plan.convex(cands, i)) {
        joined = cands[0];
        for (size_t k = 1; k < cands.size(); ++k) joined = plan.groups.unite(joined, cands[k]);
      } else {
        // Merging every producer's group would close a cycle: join the
        // largest one that stays convex on its own.
        std::sort(cands.begin(), cands.end(), [&](int a, int b) {
          return plan.groups.members[a].size() > plan.groups.members[b].size();
        });
        for (int c : cands) {
          if (plan.convex({c}, i)) {
            joined = c;
            break;
          }
        }
      }
      if (joined >= 0) {
        plan.group[i] = joined;
        plan.groups.members[joined].push_back(i);
      } else {
        plan.group[i] = plan.groups.make(i);
      }
    }
    std::vector<int>& r = plan.reach[i];
    for (int p : prod) {
      for (int x : plan.reach[p]) r.push_back(plan.groups.find(x));
      if (plan.group[p] >= 0) r.push_back(plan.groups.find(plan.group[p]));
    }
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }

  // ---- one delegate node per group ----------------------------------------------------
  std::vector<std::vector<int>> groups;
  for (size_t root = 0; root < plan.groups.members.size(); ++root) {
    if (plan.groups.find(static_cast<int>(root)) != static_cast<int>(root) || plan.groups.members[root].empty()) continue;
    std::vector<int> m = plan.groups.members[root];
    std::sort(m.begin(), m.end());
    groups.push_back(std::move(m));
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });

  const std::string backend_name(backend.name());
  for (const std::vector<int>& members : groups) {
    const int id = report.delegates++;
    std::unordered_set<const Node*> in_group;
    for (int m : members) in_group.insert(plan.order[m]);

    // Nodes between the members that depend on a member move after the
    // last member (convexity: no member depends on them).
    std::vector<Node*> current = g.nodes_snapshot();
    size_t first = SIZE_MAX, last = 0;
    for (size_t k = 0; k < current.size(); ++k) {
      if (in_group.count(current[k])) {
        first = std::min(first, k);
        last = k;
      }
    }
    std::unordered_set<const Node*> tainted(in_group.begin(), in_group.end());
    std::vector<Node*> to_move;
    for (size_t k = first + 1; k < last; ++k) {
      Node* x = current[k];
      if (in_group.count(x)) continue;
      bool depends = false;
      for (const Value* v : x->operand_values()) depends = depends || (v->producer() && tainted.count(v->producer()));
      if (depends) {
        tainted.insert(x);
        to_move.push_back(x);
      }
    }
    Node* after_last = last + 1 < current.size() ? current[last + 1] : nullptr;
    for (Node* x : to_move) g.move_before(x, after_last);

    const Constness constness(ep);
    DelegateSubgraph sub{ep, constness, {}, {}, {}};
    std::unordered_set<const Value*> seen;
    for (int m : members) {
      const Node* n = plan.order[m];
      sub.nodes.push_back(n);
      for (const Value* v : n->operand_values()) {
        if ((v->producer() && in_group.count(v->producer())) || !seen.insert(v).second) continue;
        sub.inputs.push_back(v);
      }
    }
    for (int m : members) {
      for (const Value* v : plan.order[m]->defined_values()) {
        bool outside = false;
        for (const Use& u : v->uses()) outside = outside || !u.user || !in_group.count(u.user);
        if (outside) sub.outputs.push_back(v);
      }
    }
    auto payload = backend.preprocess(sub);
    if (!payload.ok()) return payload.error().context("delegate " + std::to_string(id) + " (" + backend_name + ", from node '" + plan.order[members.front()]->name() + "')");

    Rewriter rw(ep);
    Tensor record = Tensor::empty(DType::UInt8, {static_cast<int64_t>(payload->size())});
    std::copy(payload->begin(), payload->end(), record.storage->mutable_data());
    std::string cname = "lathe_delegate_" + backend_name + "_" + std::to_string(id);
    for (int k = 1; ep.constants.find(cname) || ep.parameters.find(cname) || ep.buffers.find(cname); ++k) {
      cname = "lathe_delegate_" + backend_name + "_" + std::to_string(id) + "_" + std::to_string(k);
    }
    LATHE_ASSIGN_OR_RETURN(Value * pv, rw.add_constant(cname, std::move(record)));
    TensorMeta pmeta;
    pmeta.dtype = DType::UInt8;
    pmeta.sizes = {SymDim(static_cast<int64_t>(payload->size()))};
    pmeta.strides = {SymDim(int64_t{1})};
    pmeta.storage_offset = SymDim(int64_t{0});
    pv->set_meta(pmeta);

    std::vector<Value*> ins;
    for (const Value* v : sub.inputs) ins.push_back(const_cast<Value*>(v));
    std::vector<NamedArgument> args;
    args.push_back(NamedArgument{"payload", TensorRef{pv}, ArgKind::Positional});
    args.push_back(NamedArgument{"inputs", TensorList{ins}, ArgKind::Positional});
    std::vector<NewOutput> outs;
    for (const Value* v : sub.outputs) outs.push_back(NewOutput{ValueKind::Tensor, v->name() + "_delegate", v->meta()});
    // Right after the last member, before the consumers moved there.
    Node* insert_at = to_move.empty() ? after_last : to_move.front();
    auto node = rw.create_node(std::string(kDelegateTargetPrefix) + backend_name, std::move(args), std::move(outs), insert_at);
    if (!node.ok()) return node.error().context("delegate " + std::to_string(id));
    std::vector<Value*> defined = (*node)->defined_values();
    for (size_t k = 0; k < sub.outputs.size(); ++k) {
      LATHE_RETURN_IF_ERROR(redirect_outside_uses(rw, in_group, const_cast<Value*>(sub.outputs[k]), defined[k]));
    }
    std::vector<std::string> names;
    for (const Value* v : sub.outputs) names.push_back(v->name());
    for (auto it = members.rbegin(); it != members.rend(); ++it) LATHE_RETURN_IF_ERROR(rw.erase_node(plan.order[*it]));
    for (size_t k = 0; k < defined.size(); ++k) LATHE_RETURN_IF_ERROR(rw.rename(defined[k], names[k]));
    for (int m : members) report.decisions[m].delegate = id;
    report.claimed_nodes += static_cast<int>(members.size());
  }
  return report;
}

}  // namespace lathe
