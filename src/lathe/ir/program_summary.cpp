#include "lathe/ir/program_summary.h"

#include <set>

namespace lathe {

std::string first_value_name(const Argument& a) {
  std::string name;
  a.for_each_value([&](Value* v) {
    if (name.empty()) name = v->name();
  });
  return name;
}

std::map<std::string, int64_t> op_histogram(const Graph& g) {
  std::map<std::string, int64_t> ops;
  for (const Node* n : g.nodes()) ops[n->op_name()]++;
  return ops;
}

WeightSummary weight_summary(const ExportedProgram& ep) {
  WeightSummary s;
  std::set<const Storage*> seen;
  for (const NamedTensors* group : {&ep.parameters, &ep.buffers, &ep.constants}) {
    for (const auto& [name, t] : *group) {
      ++s.count;
      s.dtypes[std::string(dtype_name(t.dtype))]++;
      if (seen.insert(t.storage.get()).second) s.bytes += t.storage->nbytes();
    }
  }
  return s;
}

}  // namespace lathe
