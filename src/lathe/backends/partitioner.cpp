#include "lathe/backends/partitioner.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "lathe/analysis/constness.h"
#include "lathe/backends/replanned_delegate.h"
#include "lathe/core/printable.h"
#include "lathe/ir/rewriter.h"
#include "lathe/ir/specialize_shapes.h"

namespace lathe {

namespace {

// Union-find over group ids, with each root's members.
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

// The graph seen with every group contracted to one node: a group runs when
// all its members' outside operands are ready, so whatever reads one member
// waits for everything any member reads. Groups are grown only while this
// contracted graph stays acyclic; then a topological order of it exists,
// and each delegate can sit where all of its users come after it.
struct Plan {
  std::vector<Node*> order;
  std::unordered_map<const Node*, int> index;
  std::vector<std::vector<int>> producers;  // per node: indices of nodes defining its operands
  std::vector<int> group;                   // per node: raw group id or -1
  Groups groups;
  std::vector<unsigned> seen;  // per node: visit stamp of the last search
  unsigned stamp = 0;

  int root_of(int n) { return group[n] < 0 ? -1 : groups.find(group[n]); }

  // Would joining node `extra` and the groups `roots` into one group keep
  // the contracted graph acyclic? Not if an operand from outside the merged
  // set depends, through plain nodes or other groups, on the set itself.
  bool stays_acyclic(const std::vector<int>& roots, int extra) {
    auto in_set = [&](int n) {
      if (n == extra) return true;
      int r = root_of(n);
      return r >= 0 && std::find(roots.begin(), roots.end(), r) != roots.end();
    };
    ++stamp;
    std::vector<int> stack;
    auto push_outside_producers = [&](int n) {
      for (int q : producers[n]) {
        if (seen[q] != stamp && !in_set(q)) stack.push_back(q);
      }
    };
    push_outside_producers(extra);
    for (int r : roots) {
      for (int m : groups.members[r]) push_outside_producers(m);
    }
    while (!stack.empty()) {
      const int q = stack.back();
      stack.pop_back();
      if (seen[q] == stamp) continue;
      if (in_set(q)) return false;  // set -> outside -> set
      seen[q] = stamp;
      const int r = root_of(q);
      if (r < 0) {
        for (int p : producers[q]) stack.push_back(p);
        continue;
      }
      for (int m : groups.members[r]) {  // a group depends on what any member reads
        seen[m] = stamp;
        for (int p : producers[m]) stack.push_back(p);
      }
    }
    return true;
  }
};

std::string node_op(const Node& n) { return n.op_name(); }

// `decided_on` is the program itself, or its copy specialised at the
// export's sizes (the same nodes in the same order).
void decide(const ExportedProgram& decided_on, const Backend& backend, PartitionReport& report) {
  const Constness constness(decided_on);
  for (const Node* n : decided_on.graph().nodes()) {
    NodeSupport s = backend.support(*n, constness);
    report.decisions.push_back(NodeDecision{n->name(), node_op(*n), s.claimed, s.reason, -1});
  }
}

// A program with symbolic sizes, specialised at the sizes torch.export saw,
// or nullptr when it has none (or a symbol has no hint: then its nodes are
// decided on as they are, and a backend declines what it cannot size).
std::unique_ptr<ExportedProgram> specialised_at_hints(const ExportedProgram& ep) {
  if (!has_symbolic_shapes(ep)) return nullptr;
  auto hints = export_hints(ep);
  if (!hints.ok()) return nullptr;
  std::unique_ptr<ExportedProgram> copy = ep.clone();
  if (!specialize_shapes(*copy, *hints).ok()) return nullptr;
  return copy;
}

// Groups in graph order: a claimed node joins its claimed producers' groups
// (all of them if that keeps the contracted graph acyclic, else the largest
// one that does), or starts a group of its own.
void build_groups(Plan& plan, const PartitionReport& report) {
  const int count = static_cast<int>(plan.order.size());
  for (int i = 0; i < count; ++i) {
    std::vector<int>& prod = plan.producers[i];
    for (const Value* v : plan.order[i]->operand_values()) {
      if (v->producer()) prod.push_back(plan.index.at(v->producer()));
    }
    std::sort(prod.begin(), prod.end());
    prod.erase(std::unique(prod.begin(), prod.end()), prod.end());
    if (!report.decisions[i].claimed) continue;
    std::vector<int> cands;
    for (int p : prod) {
      if (int r = plan.root_of(p); r >= 0) cands.push_back(r);
    }
    std::sort(cands.begin(), cands.end());
    cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
    int joined = -1;
    if (!cands.empty() && plan.stays_acyclic(cands, i)) {
      joined = cands[0];
      for (size_t k = 1; k < cands.size(); ++k) joined = plan.groups.unite(joined, cands[k]);
    } else {
      std::stable_sort(cands.begin(), cands.end(), [&](int a, int b) {
        return plan.groups.members[a].size() > plan.groups.members[b].size();
      });
      for (int c : cands) {
        if (plan.stays_acyclic({c}, i)) {
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
}

// Each group's members, sorted, in the order of their first member.
std::vector<std::vector<int>> final_groups(Plan& plan) {
  std::vector<std::vector<int>> out;
  for (size_t root = 0; root < plan.groups.members.size(); ++root) {
    if (plan.groups.find(static_cast<int>(root)) != static_cast<int>(root) || plan.groups.members[root].empty()) continue;
    std::vector<int> m = plan.groups.members[root];
    std::sort(m.begin(), m.end());
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

// A node order in which every group's members are adjacent: a topological
// order of the contracted graph (Kahn's algorithm, earliest original node
// first, so nodes move as little as possible).
std::vector<Node*> contracted_order(Plan& plan, const std::vector<std::vector<int>>& groups) {
  const int count = static_cast<int>(plan.order.size());
  // Super-nodes: groups first (ids 0..G-1), then every ungrouped node.
  std::vector<int> super_of(count, -1);
  std::vector<std::vector<int>> members;
  for (size_t k = 0; k < groups.size(); ++k) {
    for (int m : groups[k]) super_of[m] = static_cast<int>(k);
    members.push_back(groups[k]);
  }
  for (int i = 0; i < count; ++i) {
    if (super_of[i] < 0) {
      super_of[i] = static_cast<int>(members.size());
      members.push_back({i});
    }
  }
  const size_t supers = members.size();
  std::vector<std::vector<int>> users(supers);
  std::vector<int> pending(supers, 0);
  for (size_t s = 0; s < supers; ++s) {
    std::vector<int> deps;
    for (int m : members[s]) {
      for (int p : plan.producers[m]) {
        if (super_of[p] != static_cast<int>(s)) deps.push_back(super_of[p]);
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    pending[s] = static_cast<int>(deps.size());
    for (int d : deps) users[d].push_back(static_cast<int>(s));
  }
  using Item = std::pair<int, int>;  // (first member's original index, super-node)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (size_t s = 0; s < supers; ++s) {
    if (pending[s] == 0) ready.push({members[s].front(), static_cast<int>(s)});
  }
  std::vector<Node*> order;
  order.reserve(count);
  while (!ready.empty()) {
    const int s = ready.top().second;
    ready.pop();
    for (int m : members[s]) order.push_back(plan.order[m]);
    for (int u : users[s]) {
      if (--pending[u] == 0) ready.push({members[u].front(), u});
    }
  }
  return order;  // shorter than the graph only if grouping left a cycle (a bug)
}

// One group as partition() found it, with its payload: every group is
// preprocessed before the graph changes, so a backend that refuses one
// leaves the program untouched, and one Constness serves them all.
struct PreparedGroup {
  std::vector<int> members;
  std::vector<Value*> inputs;   // every value it reads from outside, in first-use order
  std::vector<Value*> outputs;  // every value it defines that is read outside (or returned)
  std::vector<std::byte> payload;
};

PreparedGroup describe_group(const Plan& plan, const std::vector<int>& members,
                             const std::unordered_set<const Node*>& in_group) {
  PreparedGroup g{members, {}, {}, {}};
  std::unordered_set<const Value*> seen;
  for (int m : members) {
    for (Value* v : plan.order[m]->operand_values()) {
      if ((v->producer() && in_group.count(v->producer())) || !seen.insert(v).second) continue;
      g.inputs.push_back(v);
    }
  }
  for (int m : members) {
    for (Value* v : plan.order[m]->defined_values()) {
      bool outside = false;
      for (const Use& u : v->uses()) outside = outside || !u.user || !in_group.count(u.user);
      if (outside) g.outputs.push_back(v);
    }
  }
  return g;
}

// A group with symbolic sizes: checked by preprocessing its copy in the
// program specialised at the export's sizes (so a backend that refuses it
// fails lower, not the first run), then lowered to the re-planned record.
// Its delegate reads only tensors: a symbolic int it read is bound by its
// expression at run time instead.
Result<std::vector<std::byte>> replanned_group_payload(const Backend& backend, const DelegateSubgraph& sub,
                                                       const ExportedProgram& hinted, const Constness& hinted_constness,
                                                       const std::vector<Node*>& hinted_order, const std::vector<int>& members) {
  DelegateSubgraph at_hints{hinted, hinted_constness, {}, {}, {}};
  for (int m : members) at_hints.nodes.push_back(hinted_order[m]);
  for (const Value* v : sub.inputs) {
    if (v->kind() == ValueKind::Tensor) at_hints.inputs.push_back(hinted.graph().find_value(v->name()));
  }
  for (const Value* v : sub.outputs) at_hints.outputs.push_back(hinted.graph().find_value(v->name()));
  auto checked = backend.preprocess(at_hints);
  if (!checked.ok()) return checked.error().context("at the export's sizes");
  return replanned_payload(sub, backend.name());
}

Result<std::vector<PreparedGroup>> prepare_groups(ExportedProgram& ep, const Backend& backend, const Plan& plan,
                                                  const std::vector<std::vector<int>>& groups, const ExportedProgram* hinted) {
  const Constness constness(ep);
  std::optional<Constness> hinted_constness;
  std::vector<Node*> hinted_order;
  if (hinted) {
    hinted_constness.emplace(*hinted);
    hinted_order = hinted->graph().nodes_snapshot();
  }
  std::vector<PreparedGroup> out;
  for (const std::vector<int>& members : groups) {
    std::unordered_set<const Node*> in_group;
    for (int m : members) in_group.insert(plan.order[m]);
    PreparedGroup g = describe_group(plan, members, in_group);
    DelegateSubgraph sub{ep, constness, {}, {g.inputs.begin(), g.inputs.end()}, {g.outputs.begin(), g.outputs.end()}};
    for (int m : members) sub.nodes.push_back(plan.order[m]);
    const bool dynamic = hinted && group_has_symbolic_shapes(sub);
    auto payload = dynamic ? replanned_group_payload(backend, sub, *hinted, *hinted_constness, hinted_order, members)
                           : backend.preprocess(sub);
    if (!payload.ok()) {
      return payload.error().context("delegate " + std::to_string(out.size()) + " (" + std::string(backend.name()) +
                                     ", from node '" + plan.order[members.front()]->name() + "')");
    }
    g.payload = std::move(payload).value();
    if (dynamic) std::erase_if(g.inputs, [](const Value* v) { return v->kind() != ValueKind::Tensor; });
    out.push_back(std::move(g));
  }
  return out;
}

// A group whose sizes use a symbol no input of it has as a whole size
// could not bind it at run time: its nodes stay on the portable kernels.
void drop_unbindable_groups(const ExportedProgram& ep, const Plan& plan, std::vector<std::vector<int>>& groups,
                            PartitionReport& report) {
  const Constness constness(ep);
  std::erase_if(groups, [&](const std::vector<int>& members) {
    std::unordered_set<const Node*> in_group;
    for (int m : members) in_group.insert(plan.order[m]);
    PreparedGroup g = describe_group(plan, members, in_group);
    DelegateSubgraph sub{ep, constness, {}, {g.inputs.begin(), g.inputs.end()}, {g.outputs.begin(), g.outputs.end()}};
    for (int m : members) sub.nodes.push_back(plan.order[m]);
    const std::vector<std::string> unbound = unbindable_symbols(sub);
    if (unbound.empty()) return false;
    for (int m : members) {
      report.decisions[m].claimed = false;
      report.decisions[m].reason = "its group's sizes use " + join_names(unbound) +
                                   ", which no tensor the group reads has as a whole size (nothing to bind it from at run time)";
    }
    return true;
  });
}

Result<Value*> add_payload_constant(ExportedProgram& ep, Rewriter& rw, const std::string& backend_name, int id,
                                    const std::vector<std::byte>& payload) {
  Tensor record = Tensor::empty(DType::UInt8, {static_cast<int64_t>(payload.size())});
  std::copy(payload.begin(), payload.end(), record.storage->mutable_data());
  const std::string base = "lathe_delegate_" + backend_name + "_" + std::to_string(id);
  std::string cname = base;
  for (int k = 1; ep.constants.find(cname) || ep.parameters.find(cname) || ep.buffers.find(cname); ++k) {
    cname = base + "_" + std::to_string(k);
  }
  LATHE_ASSIGN_OR_RETURN(Value * pv, rw.add_constant(cname, std::move(record)));
  TensorMeta pmeta;
  pmeta.dtype = DType::UInt8;
  pmeta.sizes = {SymDim(static_cast<int64_t>(payload.size()))};
  pmeta.strides = {SymDim(int64_t{1})};
  pmeta.storage_offset = SymDim(int64_t{0});
  pv->set_meta(pmeta);
  return pv;
}

// Replaces one group (its members adjacent in the graph) by a delegate node
// placed right after its last member. `replaced` maps the values earlier
// delegates took over to their delegate outputs; this group's are added.
// Returns the delegate node's name.
Result<std::string> replace_group(ExportedProgram& ep, const Backend& backend, const Plan& plan, const PreparedGroup& g,
                                  int id, std::unordered_map<const Value*, Value*>& replaced) {
  const std::string backend_name(backend.name());
  std::unordered_set<const Node*> in_group;
  for (int m : g.members) in_group.insert(plan.order[m]);
  Node* after_last = nullptr;
  for (int m : g.members) {
    Node* next = plan.order[m]->next_node();
    if (!next || !in_group.count(next)) after_last = next;
  }
  Rewriter rw(ep);
  LATHE_ASSIGN_OR_RETURN(Value * pv, add_payload_constant(ep, rw, backend_name, id, g.payload));
  std::vector<Value*> ins;
  for (Value* v : g.inputs) {
    auto r = replaced.find(v);
    ins.push_back(r == replaced.end() ? v : r->second);
  }
  std::vector<NamedArgument> args;
  args.push_back(NamedArgument{"payload", TensorRef{pv}, ArgKind::Positional});
  args.push_back(NamedArgument{"inputs", TensorList{ins}, ArgKind::Positional});
  std::vector<NewOutput> outs;
  for (const Value* v : g.outputs) outs.push_back(NewOutput{ValueKind::Tensor, v->name() + "_delegate", v->meta()});
  auto node = rw.create_node(std::string(kDelegateTargetPrefix) + backend_name, std::move(args), std::move(outs), after_last);
  if (!node.ok()) return node.error().context("delegate " + std::to_string(id));
  std::vector<Value*> defined = (*node)->defined_values();
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    // Members that read it come before the delegate node; they are erased
    // below, so they keep reading the old value until then.
    Status moved = rw.replace_all_uses(g.outputs[k], defined[k], in_group);
    if (!moved.ok()) return moved.error().context("delegate " + std::to_string(id));
    replaced[g.outputs[k]] = defined[k];
  }
  std::vector<std::string> names;
  for (const Value* v : g.outputs) names.push_back(v->name());
  for (auto it = g.members.rbegin(); it != g.members.rend(); ++it) LATHE_RETURN_IF_ERROR(rw.erase_node(plan.order[*it]));
  for (size_t k = 0; k < defined.size(); ++k) LATHE_RETURN_IF_ERROR(rw.rename(defined[k], names[k]));
  return (*node)->name();
}

}  // namespace

Result<PartitionReport> partition(ExportedProgram& ep, const Backend& backend) {
  PartitionReport report;
  Plan plan;
  plan.order = ep.graph().nodes_snapshot();
  const int count = static_cast<int>(plan.order.size());
  for (int i = 0; i < count; ++i) plan.index[plan.order[i]] = i;
  plan.producers.resize(count);
  plan.group.assign(count, -1);
  plan.seen.assign(count, 0);
  const std::unique_ptr<ExportedProgram> hinted = specialised_at_hints(ep);
  decide(hinted ? *hinted : ep, backend, report);
  build_groups(plan, report);
  std::vector<std::vector<int>> groups = final_groups(plan);
  if (hinted) drop_unbindable_groups(ep, plan, groups, report);
  if (groups.empty()) return report;

  LATHE_ASSIGN_OR_RETURN(std::vector<PreparedGroup> prepared, prepare_groups(ep, backend, plan, groups, hinted.get()));
  std::vector<Node*> order = contracted_order(plan, groups);
  if (order.size() != plan.order.size()) return make_error("partition: the delegate groups depend on each other in a cycle");
  {
    Rewriter rw(ep);
    Status moved = rw.reorder(order);
    if (!moved.ok()) return moved.error().context("partition");
  }
  std::unordered_map<const Value*, Value*> replaced;
  for (const PreparedGroup& g : prepared) {
    const int id = report.delegates++;
    LATHE_ASSIGN_OR_RETURN(std::string node, replace_group(ep, backend, plan, g, id, replaced));
    report.delegate_nodes.push_back(std::move(node));
    for (int m : g.members) report.decisions[m].delegate = id;
    report.claimed_nodes += static_cast<int>(g.members.size());
  }
  return report;
}

}  // namespace lathe
