// Where a value comes from, and whether it is known when a program is
// compiled (ARCHITECTURE invariant 4). Computed once per program; passes and
// partitioners ask here instead of re-deriving it from name maps.
//
//   origin(v)                    UserInput | Parameter | ConstantBuffer |
//                                MutableBuffer | LiftedConstant | Computed
//                                (| Unknown: a placeholder of a bare graph or
//                                a custom object, which cannot be classified)
//   is_compile_time_constant(v)  a parameter the program does not mutate, a
//                                buffer it does not mutate (and that shares
//                                no storage with one it does), a lifted
//                                tensor constant
//   is_constant_weight(v)        the above, or a quantize/dequantize node
//                                whose every operand is a constant weight —
//                                how a quantized weight reaches a matmul
//   explain(v)                   why v is not a constant weight, naming the
//                                input or the node that makes it runtime
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph.h"

namespace lathe {

enum class Origin : uint8_t { UserInput, Parameter, ConstantBuffer, MutableBuffer, LiftedConstant, Computed, Unknown };

std::string_view origin_name(Origin origin);  // "user_input", "parameter", "constant_buffer", ...

class Constness {
 public:
  explicit Constness(const ExportedProgram& program);
  // A bare graph has no signature: every placeholder is Origin::Unknown and
  // never a constant (a parameter cannot be told from a user input).
  explicit Constness(const Graph& graph);

  bool has_program() const { return ep_ != nullptr; }

  Origin origin(const Value* v) const;
  bool is_compile_time_constant(const Value* v) const;
  bool is_constant_weight(const Value* v) const;
  // Why `v` is not a constant weight, as a predicate: "is user input 'x'",
  // "reads mutable buffer 'running_mean'", "is computed at run time by
  // 'squeeze_1'", "is computed at run time by 'dq': its input 'x' is user
  // input 'x'". Empty if it is a constant weight.
  std::string explain(const Value* v) const;
  // What a constant weight is: "parameter 'linear.weight'", "lifted
  // constant 'c0'", "'dq' (dequantize_per_channel of constants)".
  std::string describe(const Value* v) const;
  // The input spec of a placeholder of this program, or nullptr.
  const InputSpec* input_spec(const Value* placeholder) const;

 private:
  struct Input {
    Origin origin = Origin::Unknown;
    const InputSpec* spec = nullptr;
    bool mutated = false;      // a parameter the program mutates
    const std::string* shares_with = nullptr;  // a mutated buffer sharing this buffer's storage
  };
  bool weight(const Value* v, int depth) const;
  std::string explain(const Value* v, int depth) const;
  // Classifies a placeholder from its spec, found by its input position
  // (Value::input_index).
  Input classify(const Value* placeholder) const;
  // The same, reading the spec itself.
  Input classify_spec(const Value* placeholder) const;
  Input spec_origin(const InputSpec& spec) const;
  // Origins by input position, taken from the signature in one sequential
  // sweep the first time a placeholder is classified (a program with a
  // million parameters costs nothing until a pass looks). Reading each
  // parameter's spec as a pass meets it was a cache miss per weight: the
  // specs are large and far from the nodes. The table holds while the
  // graph's inputs are unchanged (Graph::inputs_version); after a change,
  // placeholders are classified from their spec until such lookups are
  // frequent enough to pay for a new sweep. (Like the mutation sets above,
  // it is the signature as first read: a spec edited in place later, not
  // through an input change, is not seen.)
  void build_origins() const;
  mutable std::vector<Origin> origins_;
  mutable uint64_t origins_version_ = 0;
  mutable size_t stale_lookups_ = 0;

  const ExportedProgram* ep_ = nullptr;
  const Graph* graph_;
  // What the signature says is mutated (small: buffers and parameters
  // named by mutation outputs).
  std::set<std::string> mutated_buffers_, mutated_params_;
  std::unordered_map<const Storage*, const std::string*> mutated_storage_;
  mutable std::unordered_map<const Value*, bool> weight_memo_;
};

}  // namespace lathe
