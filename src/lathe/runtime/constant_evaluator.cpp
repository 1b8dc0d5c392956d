#include "lathe/runtime/constant_evaluator.h"

#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

Result<std::vector<Tensor>> evaluate_closed_program(const ExportedProgram& program, const KernelRegistry* kernels) {
  for (const InputSpec& s : program.input_specs) {
    if (s.kind == InputKind::UserInput)
      return make_error("evaluate a closed program: it has a user input; every input must be state");
  }
  ExecutorOptions options;
  options.kernels = kernels;
  LATHE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex, Executor::create(program, options));
  LATHE_ASSIGN_OR_RETURN(std::vector<EValue> outs, ex->run(std::vector<EValue>{}));
  std::vector<Tensor> owned;
  owned.reserve(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_tensor())
      return make_error("evaluate a closed program: output " + std::to_string(i) + " is " + outs[i].describe() +
                        ", not a tensor");
    owned.push_back(kernels::contiguous_copy(outs[i].tensor()));
  }
  return owned;
}

bool has_kernel(std::string_view target, const KernelRegistry* kernels) {
  return (kernels ? kernels : &portable_kernels())->find(target) != nullptr;
}

}  // namespace lathe
