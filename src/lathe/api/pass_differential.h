// `lathe transform --verify`: after every pass, run the method as it was
// before the pass and as it is after, on the same inputs, and fail naming the
// pass if any user output or mutated buffer differs beyond tolerance.
//
// "Before" is a second copy of the program, read from the same file, that
// is kept exactly one pass behind: after each comparison the same pass
// (a second instance built with the same options) is applied to it. Passes
// are deterministic, so the two copies agree again before the next pass,
// and no program ever needs to be cloned in memory.
//
//   DifferentialPassCheck check(std::move(reference), std::move(mirror_passes), options);
//   pm_options.after_each = [&](auto& m, size_t i, ExportedProgram& p) { return check.after_pass(m, i, p); };
//
// Inputs per method (default_inputs.h): the archive's sample inputs, else
// the fixture's reference inputs, else seeded random inputs built from the
// input metadata (two calls, so buffer mutations are compared too).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/program.h"
#include "lathe/passes/pass.h"
#include "lathe/runtime/compare.h"

namespace lathe {

struct DifferentialPassOptions {
  std::string archive_path;  // where reference inputs are looked for
  Tolerance tolerance{1e-5, 1e-6};
  uint64_t seed = 0;
};

class DifferentialPassCheck {
 public:
  // `mirror[i]` must be built exactly like the i-th pass the PassManager runs.
  DifferentialPassCheck(Program reference, std::vector<std::unique_ptr<Pass>> mirror,
                        DifferentialPassOptions options);

  // Loads each method's inputs (or just `only`'s) before any pass runs, so a
  // damaged sample-input record is reported as such, naming the record, and
  // not as a failure after the first pass.
  Status prepare(const std::string& only);

  // The PassManager's after_each hook.
  Status after_pass(const std::string& method, size_t pass_index, ExportedProgram& after);

  // Per method checked: which inputs were used and how many comparisons
  // passed, e.g. "model: outputs equal after 2 pass(es) on the archive's sample inputs".
  std::vector<std::string> summary() const;

 private:
  struct MethodState {
    std::vector<std::vector<Tensor>> inputs;  // empty: seeded random
    std::string source;
    int passes_checked = 0;
    double max_rel = 0;
  };
  Result<MethodState*> state_for(const std::string& method);

  Program reference_;
  std::vector<std::unique_ptr<Pass>> mirror_;
  DifferentialPassOptions options_;
  std::map<std::string, MethodState> methods_;
  std::vector<std::string> order_;
};

}  // namespace lathe
