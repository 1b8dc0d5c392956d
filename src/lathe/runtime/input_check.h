// Checks one call's user inputs against the method's signature before any
// kernel runs, so a wrong input is refused with a message that names it
// instead of failing somewhere inside the graph:
//
//   * kind (tensor / int), dtype, rank and every static size;
//   * every dimension that is a plain shape symbol ("s77", as 2.13 writes
//     it: Symbol('s77', positive=True, integer=True)) against that symbol's
//     range in ExportedProgram::range_constraints;
//   * a SymInt input whose value is a plain symbol, the same way;
//   * one symbol, one size: inputs sharing a symbol must agree.
//
// Dimensions given by an expression of symbols (2*s0, s0 + 1) are not
// checked here; the kernels check what they need.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
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
  InputChecker(const ExportedProgram& program, const std::vector<IoInfo>& user_inputs);
  Status check(const std::vector<EValue>& args) const;

 private:
  static constexpr size_t kWholeValue = SIZE_MAX;  // `dim` of a SymInt input
  struct SymbolicDim {
    size_t input = 0;
    size_t dim = 0;  // kWholeValue: the input is the int itself
    std::string symbol;
    std::optional<RangeConstraint> range;  // nullopt: the program gives none
  };
  Status check_static(size_t index, const EValue& v) const;
  Status check_symbols(const std::vector<EValue>& args) const;
  SymbolicDim symbolic(const ExportedProgram& program, size_t input, size_t dim, std::string symbol) const;
  int64_t size_of(const std::vector<EValue>& args, const SymbolicDim& s) const;
  std::string where(const SymbolicDim& s) const;

  std::vector<IoInfo> inputs_;
  std::vector<SymbolicDim> symbolic_;
};

}  // namespace lathe
