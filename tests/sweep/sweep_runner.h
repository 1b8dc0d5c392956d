// The sweep loop behind `lathe_sweep` and `make sweep`: generate a recipe
// per seed, run the checks (in a forked child by default, so a crash is a
// failure with a seed, not the end of the sweep), shrink failures and save
// them as DIR/<seed>.pt2 + DIR/<seed>.txt (check, message, recipe).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/program_generator.h"
#include "sweep/sweep_checks.h"

namespace lathe::sweep {

struct SweepOptions {
  uint64_t seed_start = 0;
  uint64_t count = 0;     // 0: no limit (then `seconds` must be set)
  double seconds = 0;     // 0: no limit
  std::string save_failures;  // directory; empty: do not save
  bool shrink = false;
  bool isolate = true;    // fork per program
  GeneratorOptions generator;
  CheckOptions checks;    // scratch_dir empty: a fresh temporary directory
  std::ostream* log = nullptr;
};

struct SweepFailure {
  uint64_t seed = 0;
  CheckFailure failure;
  size_t ops = 0;         // in the recipe as generated
  size_t shrunk_ops = 0;  // after shrinking (== ops when not shrunk)
  std::string saved;      // the .pt2 written, if any
};

struct SweepSummary {
  uint64_t programs = 0;
  double seconds = 0;
  CheckStats stats;
  std::vector<SweepFailure> failures;
};

SweepSummary run_sweep(const SweepOptions& options);

// Runs the checks on one recipe (forked when `isolate`): a crash comes back
// as check "crash" with the signal.
std::optional<CheckFailure> check_recipe(const ProgramSpec& spec, const CheckOptions& options, bool isolate,
                                         CheckStats* stats = nullptr);

}  // namespace lathe::sweep
