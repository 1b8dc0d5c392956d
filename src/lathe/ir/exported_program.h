// One method of a program: its graph, its signature and its state.
//
// Signature specs are aligned by position with the graph's inputs and outputs
// and hold no names of their own: the spec of input i describes the
// placeholder graph().inputs()[i]; the spec of output i describes whatever
// value graph().outputs()[i] uses now. Names are materialised only when
// writing, so a replaced output can never leave a stale name behind.
#pragma once

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lathe/ir/argument.h"
#include "lathe/ir/graph.h"
#include "lathe/ir/named_tensors.h"
#include "lathe/ir/spec_kinds.h"

namespace lathe {

// Where a large graph's tables come from (ir/large_block.h: blocks of 1 MiB
// and more straight from the system, not from malloc).
std::pmr::memory_resource* large_block_resource();

// The placeholder name torch.export gives a lifted input: p_<fqn> for a
// parameter, b_<fqn> for a buffer, c_<name> for a tensor constant, '.' -> '_'.
std::string lifted_placeholder_name(InputKind kind, const std::string& target);

struct InputSpec {
  InputKind kind = InputKind::UserInput;
  // What the kind's target key holds (spec_kinds.h: parameter_name,
  // buffer_name, ...; for constant_input the input's name). Empty for user
  // inputs and tokens.
  std::string target;
  bool persistent = true;  // buffers only
  // constant_input only: the constant (None/int/float/string/bool).
  Argument constant_value;
};

struct OutputSpec {
  OutputKind kind = OutputKind::UserOutput;
  // What the kind's target key holds (buffer_name, parameter_name,
  // user_input_name); empty for kinds without one.
  std::string target;
};

struct RangeConstraint {
  std::optional<int64_t> min_val;  // nullopt: unbounded
  std::optional<int64_t> max_val;
};
// "[1, 64]"; an open bound is -inf / inf.
std::string range_text(const RangeConstraint& r);

struct SchemaVersion {
  int64_t major = 8;
  int64_t minor = 0;
};

class ExportedProgram {
 public:
  ExportedProgram() : graph_(std::make_unique<Graph>()) {}

  // A deep copy: the graph (and its subgraphs) cloned; state tensors are
  // shared, which is safe because nothing writes into a state tensor in
  // place (passes add new tensors, runners copy mutable buffers).
  std::unique_ptr<ExportedProgram> clone() const;
  ExportedProgram(ExportedProgram&&) noexcept = default;
  ExportedProgram& operator=(ExportedProgram&&) noexcept = default;

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }

  // Aligned with graph().inputs() / graph().outputs(). Change through the
  // Rewriter (passes) or the reader; verify() checks the alignment.
  // (A program can have a million parameters, and passes ask each one's
  // spec: large_block.h says why these live in their own pages.)
  std::pmr::vector<InputSpec> input_specs{large_block_resource()};
  std::vector<OutputSpec> output_specs;

  // State. Parameters and persistent buffers form the state dict; tensor
  // constants and non-persistent buffers are constants.
  NamedTensors parameters;
  NamedTensors buffers;    // persistent buffers
  NamedTensors constants;  // lifted tensor constants and non-persistent buffers
  // Custom objects and other payloads Lathe does not interpret, kept as bytes.
  std::vector<std::pair<std::string, std::vector<std::byte>>> opaque_constants;

  // Carried faithfully from the file.
  std::vector<std::pair<std::string, int64_t>> opset_version;
  std::vector<std::pair<std::string, RangeConstraint>> range_constraints;
  SchemaVersion schema_version;
  // Set when read from a pre-schema-8 file (PyTorch 2.2/2.3 wrote an integer
  // version); such programs are upgraded and written as schema 8.
  std::optional<int64_t> legacy_schema_version;
  std::vector<std::string> verifiers;
  std::string torch_version = "2.9.0";
  std::vector<std::string> guards_code;
  std::vector<std::pair<std::string, std::string>> graph_module_metadata;
  // JSON text of module_call_graph and treespec_namedtuple_fields, carried
  // verbatim: Lathe does not interpret pytree specs.
  std::string module_call_graph_json = "[]";
  std::string treespec_namedtuple_fields_json = "{}";

  // The state tensor an input spec names, or nullptr.
  const Tensor* state_tensor(const InputSpec& spec) const;
  // Index of the input spec for a placeholder value, or -1.
  int input_index(const Value* placeholder) const;

 private:
  // Copies every field; the graph through Graph::clone (clone() uses it).
  struct OwnedGraph {
    std::unique_ptr<Graph> graph;
    OwnedGraph(std::unique_ptr<Graph> g) : graph(std::move(g)) {}  // NOLINT(implicit)
    OwnedGraph(const OwnedGraph& o) : graph(o.graph->clone()) {}
    OwnedGraph& operator=(const OwnedGraph&) = delete;
    OwnedGraph(OwnedGraph&&) noexcept = default;
    OwnedGraph& operator=(OwnedGraph&&) noexcept = default;
    Graph& operator*() const { return *graph; }
    Graph* get() const { return graph.get(); }
  };
  ExportedProgram(const ExportedProgram&) = default;
  OwnedGraph graph_;
};

}  // namespace lathe
