// Differential validation: run two programs (a method before and after a
// pass, or on two kernel registries) on the same inputs and compare every
// user output and every mutated buffer, call by call.
//
//   LATHE_RETURN_IF_ERROR(differential_check(before, after));           // seeded random inputs
//   DifferentialOptions o; o.inputs = {{x}}; o.tolerance.rtol = 1e-4;
//   LATHE_RETURN_IF_ERROR(differential_check(before, after, o));        // given inputs
//
// The error names the first output beyond tolerance with its max abs and
// relative error (see compare.h for the metric).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
#include "lathe/runtime/compare.h"
#include "lathe/runtime/delegate.h"
#include "lathe/runtime/kernel_registry.h"

namespace lathe {

struct DifferentialOptions {
  // User inputs per call, in signature order. Empty: `calls` calls of
  // random inputs from `seed` (see random_inputs).
  std::vector<std::vector<Tensor>> inputs;
  uint64_t seed = 0;
  int calls = 1;
  Tolerance tolerance{1e-5, 1e-6};
  // nullptr: the portable kernels.
  const KernelRegistry* before_kernels = nullptr;
  const KernelRegistry* after_kernels = nullptr;
  // Delegates each side may run (a lowered program); nullptr: none.
  const DelegateRegistry* before_delegates = nullptr;
  const DelegateRegistry* after_delegates = nullptr;
};

struct DifferentialReport {
  struct Entry {
    std::string what;  // "call 0 output 1 'addmm_2'", "call 2 buffer 'running_mean'"
    TensorDiff diff;
  };
  std::vector<Entry> entries;
  bool ok = true;
  double max_abs = 0, max_rel = 0;
  std::string summary() const;  // one line per entry
};

Result<DifferentialReport> differential_run(const ExportedProgram& before, const ExportedProgram& after,
                                            const DifferentialOptions& options = {});
// OK, or an error naming what differs beyond tolerance (or why either
// program could not run).
Status differential_check(const ExportedProgram& before, const ExportedProgram& after,
                          const DifferentialOptions& options = {});

// Deterministic user inputs from the input metadata: floats uniform in
// [-1, 1); integers in [0, bound) where bound is the row count of an
// embedding/index they feed (else 2); bools random. Symbolic dims use their
// hint. Same seed, same tensors, on every platform.
// Each generated input may take at most kMaxRandomInputBytes (its sizes are
// the file's; a larger one is an error naming the input).
inline constexpr uint64_t kMaxRandomInputBytes = 1ull << 30;
Result<std::vector<Tensor>> random_inputs(const ExportedProgram& program, uint64_t seed);

}  // namespace lathe
