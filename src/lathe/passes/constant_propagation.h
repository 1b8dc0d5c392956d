// constant_propagation: folds nodes whose inputs are all compile-time
// constants (analysis/constness.h) into lifted tensor constants. See the
// .cpp for what is folded and what is never folded.
//
// The pass does not run kernels itself: passes sit below the runtime (see
// docs/architecture.md), so it hands the constant part of the graph, as a
// small program with only lifted-constant inputs, to a ConstantEvaluator.
// `lathe transform` installs one backed by the portable kernels
// (runtime/constant_evaluator.h); tests may pass their own.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/exported_program.h"
#include "lathe/passes/pass.h"

namespace lathe {

struct ConstantEvaluator {
  // Whether the evaluator can run a node with this target
  // ("torch.ops.aten.mm.default"). A node it cannot run is not folded.
  std::function<bool(std::string_view target)> supports;
  // Runs a program whose inputs are all lifted tensor constants and returns
  // its user outputs, in order, as owned contiguous tensors.
  std::function<Result<std::vector<Tensor>>(const ExportedProgram&)> evaluate;

  explicit operator bool() const { return supports && evaluate; }
};

struct ConstantPropagationOptions {
  // A node is folded only if every tensor it defines fits in this many
  // bytes: folding must not blow up the file (expand/full of a scalar into
  // a huge tensor) or the memory folding takes.
  size_t max_folded_bytes = size_t{16} << 20;
  // Empty: the process-wide default (set_default_evaluator).
  ConstantEvaluator evaluator;
};

class ConstantPropagation
    : public NamedPass<"constant_propagation",
                       "fold nodes computed only from constants into lifted tensor constants (never mutable buffers or q/dq)"> {
 public:

  explicit ConstantPropagation(ConstantPropagationOptions options = {}) : options_(std::move(options)) {}

  Result<bool> run(ExportedProgram& program, PassContext& ctx) override;

  const ConstantPropagationOptions& options() const { return options_; }
  ConstantPropagationOptions& mutable_options() { return options_; }

  // The evaluator used by instances created without one (the pass
  // registry's); returns the previous one. Not thread-safe: install once,
  // before running passes.
  static ConstantEvaluator set_default_evaluator(ConstantEvaluator evaluator);
  static const ConstantEvaluator& default_evaluator();

 private:
  ConstantPropagationOptions options_;
};

}  // namespace lathe
