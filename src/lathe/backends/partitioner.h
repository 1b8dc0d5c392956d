// Partitioner: groups the nodes a backend claims into delegate subgraphs
// and replaces each with one delegate-call node, through the Rewriter.
//
//   before:   x ─► linear ─► relu ─► mm(·, runtime) ─► linear ─► out
//   after:    x ─► lathe.delegate.xnnpack[linear+relu] ─► mm ─► lathe.delegate.xnnpack[linear] ─► out
//
// Groups are connected (a node joins the group of a claimed producer) and
// convex: a node never joins a group it also reaches through an unclaimed
// node, so replacing a group by one node cannot create a cycle. Nodes
// between a group's members that consume its values move after it.
//
// The delegate node reads `payload` (a new lifted uint8 constant holding
// preprocess()'s record) and `inputs` (every value the group reads, weights
// included), so each weight stays in the program's state once.
#pragma once

#include <string>
#include <vector>

#include "lathe/backends/backend.h"
#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

struct NodeDecision {
  std::string node;
  std::string op;
  bool claimed = false;
  std::string reason;
  int delegate = -1;  // index of the delegate it went into
};

struct PartitionReport {
  std::vector<NodeDecision> decisions;  // every node of the method, in order
  int delegates = 0;
  int claimed_nodes = 0;
  std::vector<std::string> delegate_nodes;  // the delegate-call node each delegate became, by index
};

Result<PartitionReport> partition(ExportedProgram& program, const Backend& backend);

}  // namespace lathe
