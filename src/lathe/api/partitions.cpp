// partitions: what lower() would hand a backend, as data (lathe.h), for a
// user who serialises the claimed groups in their own format. The program
// is lowered on a copy by the same partitioner, so the groups, their guard
// (operands prepacked at build time must be constant) and the payloads are
// exactly what lower() makes.
#include "lathe/analysis/constness.h"
#include "lathe/lathe.h"

namespace lathe {
namespace {

// The delegate-call node `name` of a lowered method as a Partition.
Result<Partition> partition_of(const ExportedProgram& lowered, const Constness& constness, const std::string& method,
                               int index, const std::string& name) {
  const Node* node = nullptr;
  for (const Node* n : lowered.graph().nodes()) {
    if (n->name() == name) node = n;
  }
  if (!node) return make_error("partitions: method '" + method + "': delegate node '" + name + "' is missing");
  Partition p;
  p.method = method;
  p.delegate = index;
  const Argument* payload = node->input("payload");
  const Value* pv = payload ? payload->tensor() : nullptr;
  const int k = pv ? lowered.input_index(pv) : -1;
  const Tensor* bytes = k >= 0 ? lowered.state_tensor(lowered.input_specs[k]) : nullptr;
  if (!bytes || bytes->dtype != DType::UInt8 || !bytes->is_contiguous()) {
    return make_error("partitions: method '" + method + "': delegate node '" + name + "' has no uint8 payload");
  }
  p.payload.assign(bytes->data(), bytes->data() + bytes->nbytes());
  if (const Argument* inputs = node->input("inputs")) {
    if (const TensorList* list = inputs->get_if<TensorList>()) {
      for (const Value* v : list->items) {
        p.inputs.push_back(v->name());
        if (constness.is_compile_time_constant(v)) p.constants.push_back(v->name());
      }
    }
  }
  for (const Value* v : node->defined_values()) p.outputs.push_back(v->name());
  return p;
}

}  // namespace

Result<std::vector<Partition>> partitions(const Program& program, const LowerOptions& options) {
  Program copy = program.clone();
  LATHE_ASSIGN_OR_RETURN(LowerReport report, lower(copy, options));
  std::vector<Partition> out;
  for (const MethodLoweringReport& m : report.methods) {
    const ExportedProgram& lowered = *copy.find_method(m.method)->program;
    const Constness constness(lowered);
    for (size_t i = 0; i < m.delegate_nodes.size(); ++i) {
      LATHE_ASSIGN_OR_RETURN(Partition p, partition_of(lowered, constness, m.method, static_cast<int>(i),
                                                       m.delegate_nodes[i]));
      for (const LoweringDecision& d : m.decisions) {
        if (d.claimed && d.delegate == static_cast<int>(i)) p.nodes.push_back(d.node);
      }
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace lathe
