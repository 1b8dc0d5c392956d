// Shrinks a failing recipe while it still fails the same way: drops
// methods, outputs, ops and inputs, moves outputs earlier, turns weights
// into plain parameters and spellings into the first variant, and makes
// sizes smaller. Every candidate is rebuilt from scratch; one whose sizes
// no longer fit fails to build, which the predicate counts as "passes".
#pragma once

#include <functional>

#include "sweep/program_spec.h"

namespace lathe::sweep {

// True while the candidate still fails the check the original failed.
using StillFails = std::function<bool(const ProgramSpec&)>;

struct ShrinkResult {
  ProgramSpec spec;
  int attempts = 0;  // candidates tried
  int accepted = 0;  // candidates that still failed (each one smaller)
};

ShrinkResult shrink(ProgramSpec spec, const StillFails& still_fails, int max_attempts = 3000);

}  // namespace lathe::sweep
