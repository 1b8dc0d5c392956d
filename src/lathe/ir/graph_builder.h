// GraphBuilder: a fluent helper that builds small ExportedPrograms
// ("graphlets") in C++ for tests and benchmarks, the way torch.export would
// lay them out:
//
//   ExportedProgram ep;
//   GraphBuilder b(ep);
//   Value* w = b.parameter("linear.weight", {3, 3});   // %p_linear_weight
//   Value* x = b.user_input("arg", {2, 3});             // %arg
//   Value* t = b.call("aten.permute_copy.default", {{"self", w}, {"dims", IntList{{1, 0}}}}, {3, 3});
//   b.user_output(t);
//
// Every input is inserted where torch.export puts it (tokens, parameters,
// buffers, constants, then user inputs) together with its spec and state, so
// a graphlet passes verify() unless a test breaks it on purpose.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "lathe/core/dtype.h"
#include "lathe/ir/argument.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/graph.h"
#include "lathe/ir/graph_assembler.h"

namespace lathe {

class GraphBuilder {
 public:
  // One node argument. Value* becomes TensorRef (SymIntArg, CustomObjRef...
  // by the value's kind); anything else goes through Argument's constructors
  // (int64_t, double, bool, std::string, IntList, OptionalTensor, ...).
  struct Arg {
    std::string name;
    Argument value;
    ArgKind kind = ArgKind::Positional;

    // A template so that a literal 0 (a null pointer constant) picks the
    // Argument overload and becomes an int, not a null TensorRef.
    template <typename V, std::enable_if_t<std::is_same_v<V, Value*>, int> = 0>
    Arg(std::string n, V v, ArgKind k = ArgKind::Positional) : name(std::move(n)), value(value_arg(v)), kind(k) {}
    Arg(std::string n, Argument a, ArgKind k = ArgKind::Positional)
        : name(std::move(n)), value(std::move(a)), kind(k) {}
  };

  // Builds a whole method: inputs get specs and state.
  explicit GraphBuilder(ExportedProgram& ep);
  // Builds a bare graph (a subgraph of a higher-order op): no specs, no
  // state; only input(), call*() and output() may be used.
  explicit GraphBuilder(Graph& graph);

  Graph& graph() { return *graph_; }
  ExportedProgram& program();

  // ---- inputs (ExportedProgram mode) ----------------------------------
  // Placeholder p_<fqn with '.'→'_'>, spec parameter <fqn>, and a tensor in
  // ep.parameters filled with deterministic values (seeded by the name).
  Value* parameter(const std::string& fqn, std::vector<int64_t> sizes, DType dtype = DType::Float32);
  // b_<fqn>; persistent buffers live in ep.buffers, others in ep.constants.
  Value* buffer(const std::string& fqn, std::vector<int64_t> sizes, bool persistent = true,
                DType dtype = DType::Float32);
  // A lifted tensor constant: c_<name>, spec tensor_constant <name>, tensor
  // in ep.constants.
  Value* constant(const std::string& name, std::vector<int64_t> sizes, DType dtype = DType::Float32);
  Value* user_input(const std::string& name, std::vector<int64_t> sizes, DType dtype = DType::Float32);
  // A user input with explicit (possibly symbolic) metadata.
  Value* user_input(const std::string& name, TensorMeta meta);
  // A symbolic int user input (e.g. a size passed as an argument).
  Value* sym_int_input(const std::string& name, SymExpr expr);

  // ---- inputs (either mode) --------------------------------------------
  // A placeholder without a spec; in ExportedProgram mode this is a user
  // input (same as user_input).
  Value* input(const std::string& name, TensorMeta meta);

  // ---- nodes -----------------------------------------------------------
  // `op` is "aten.addmm.default" (or already "torch.ops.aten..."; Python
  // targets such as "_operator.add" are kept as they are). The output is
  // named after the op ("addmm", "addmm_1", ...) unless `name` is given.
  // For a 0-d output write std::vector<int64_t>{}: a bare {} is ambiguous.
  Value* call(const std::string& op, std::vector<Arg> args, std::vector<int64_t> sizes, DType dtype = DType::Float32,
              const std::string& name = "");
  Value* call(const std::string& op, std::vector<Arg> args, TensorMeta meta, const std::string& name = "");
  // Several tensor outputs, each its own output argument (a tuple return,
  // e.g. native_batch_norm). Named getitem, getitem_1, ... like torch's
  // serialized graphs, unless `names` are given. (An initializer_list, not
  // a vector: vector's explicit size constructor would make {2} ambiguous.)
  std::vector<Value*> call(const std::string& op, std::vector<Arg> args, std::initializer_list<TensorMeta> outputs,
                           std::vector<std::string> names = {});
  std::vector<Value*> call_multi(const std::string& op, std::vector<Arg> args, std::vector<TensorMeta> outputs,
                                 std::vector<std::string> names = {});
  // Several tensor outputs as one list output argument (a Tensor[] return,
  // e.g. split).
  std::vector<Value*> call_list(const std::string& op, std::vector<Arg> args, std::vector<TensorMeta> outputs,
                                std::vector<std::string> names = {});
  // A node returning a SymInt (e.g. aten.sym_size.int).
  Value* call_sym_int(const std::string& op, std::vector<Arg> args, SymDim sym, const std::string& name = "");
  // The node created by the last call*().
  Node* last_node() const { return last_node_; }

  // ---- outputs ---------------------------------------------------------
  // Appends a graph output; in ExportedProgram mode with a user_output spec.
  void user_output(Value* value);
  void user_output(Argument arg);
  void output(Argument arg) { user_output(std::move(arg)); }
  void output(Value* value) { user_output(value); }
  // A buffer_mutation output. Mutation outputs come before user outputs, so
  // it is inserted after the last existing mutation/token output.
  void buffer_mutation(Value* value, const std::string& buffer_name);
  void user_input_mutation(Value* value, const std::string& user_input_name);

  // ---- helpers ---------------------------------------------------------
  // Contiguous metadata; symbolic sizes get product-expression strides.
  static TensorMeta tensor_meta(DType dtype, std::vector<SymDim> sizes);
  static TensorMeta tensor_meta(std::vector<int64_t> sizes, DType dtype = DType::Float32);
  // "aten.permute_copy.default" → "permute_copy".
  static std::string op_base_name(const std::string& op);
  // "aten.addmm.default" → "torch.ops.aten.addmm.default".
  static std::string full_target(const std::string& op);
  // The deterministic tensor parameter()/buffer()/constant() store.
  static Tensor deterministic_tensor(const std::string& seed_name, DType dtype, std::vector<int64_t> sizes);
  static Argument value_arg(Value* v);

 private:
  Value* add_input(InputSpec spec, ValueKind kind, const std::string& name, std::optional<TensorMeta> meta);
  Node* make_node(const std::string& op, std::vector<Arg> args);
  // Each output its own argument, or (`list`) all in one Tensor[] argument.
  std::vector<Value*> call_outputs(const std::string& op, std::vector<Arg> args, std::vector<TensorMeta> outputs,
                                   std::vector<std::string> names, bool list);
  void insert_mutation_output(Value* value, OutputSpec spec);

  ExportedProgram* ep_ = nullptr;
  Graph* graph_;
  GraphAssembler assembler_;
  Node* last_node_ = nullptr;
};

// The SimpleLinear graphlet of linear-rewrite.md §1 (nn.Linear(3, 3) on a
// [2, 3] input, exported and decomposed):
//   permute_copy = aten.permute_copy.default(p_linear_weight, [1, 0])
//   addmm        = aten.addmm.default(p_linear_bias, arg, permute_copy)
//   output: addmm (user_output)
struct SimpleLinear {
  Value* weight;
  Value* bias;
  Value* arg;
  Value* permute;
  Value* addmm;
};
SimpleLinear build_simple_linear(ExportedProgram& ep);

}  // namespace lathe
