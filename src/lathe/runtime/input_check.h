// Checks one call's user inputs against the method's signature before any
// kernel runs, so a wrong input is refused with a message that names it
// instead of failing somewhere inside the graph:
//
//   * kind (tensor / int), dtype, rank and every static size;
//   * every dimension that is a plain shape symbol ("s77", as 2.13 writes
//     it: Symbol('s77', positive=True, integer=True)) against that symbol's
//     range in ExportedProgram::range_constraints;
//   * a SymInt input whose value is a plain symbol, the same way;
//   * one symbol, one size: inputs sharing a symbol must agree;
//   * a dimension given by an expression (torch.export's derived dims:
//     2*s0, s0 + 1) against its value for the symbols the other inputs
//     give; a symbol no plain dimension gives is solved for from the
//     expression, within its range.
//
// Nothing is skipped: a signature whose sizes could not be checked (a size
// that does not parse, a symbol with no range) is refused when the checker
// is made (the loader and verify() refuse it first: ir/input_shapes.h),
// and a call whose expression cannot be computed or solved is refused.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/sym_expr.h"
#include "lathe/runtime/evalue.h"

namespace lathe {

struct IoInfo {
  std::string name;                // placeholder / output value name
  ValueKind kind = ValueKind::Tensor;
  std::optional<TensorMeta> meta;  // tensors only
};

// "s77" for "s77" or "Symbol('s77', positive=True, integer=True)"; nullopt
// for anything else (an expression, a number).
std::optional<std::string> plain_symbol(const std::string& expr);

class InputChecker {
 public:
  static Result<InputChecker> create(const ExportedProgram& program, const std::vector<IoInfo>& user_inputs);
  Status check(const std::vector<EValue>& args) const;

 private:
  InputChecker() = default;
  static constexpr size_t kWholeValue = SIZE_MAX;  // `dim` of a SymInt input
  struct SymbolicDim {
    size_t input = 0;
    size_t dim = 0;  // kWholeValue: the input is the int itself
    SymExpression expr;
    std::vector<std::string> symbols;
    std::optional<std::string> symbol;  // set when the size is one symbol
    std::string text;                   // for messages: "2*s0"
  };
  using Bindings = std::map<std::string, int64_t>;

  Status add_symbolic(size_t input, size_t dim, const std::string& expr);
  Status check_static(size_t index, const EValue& v) const;
  Status check_symbols(const std::vector<EValue>& args) const;
  Status bind_plain(const std::vector<EValue>& args, Bindings& values) const;
  Status check_expressions(const std::vector<EValue>& args, Bindings& values) const;
  Result<bool> settle(const SymbolicDim& s, int64_t size, Bindings& values) const;
  Status compare(const SymbolicDim& s, int64_t size, const Bindings& values) const;
  Result<int64_t> solve(const SymbolicDim& s, int64_t size, const std::string& symbol, Bindings values) const;
  Status in_range(const SymbolicDim& s, const std::string& symbol, int64_t size) const;
  Status unsettled(const SymbolicDim& s, const Bindings& values) const;
  int64_t size_of(const std::vector<EValue>& args, const SymbolicDim& s) const;
  std::string where(const SymbolicDim& s) const;

  std::vector<IoInfo> inputs_;
  std::vector<SymbolicDim> symbolic_;
  std::map<std::string, RangeConstraint> ranges_;
};

}  // namespace lathe
