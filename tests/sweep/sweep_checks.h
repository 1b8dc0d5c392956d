// The checks every generated (or saved) program must pass, in order; the
// first failure is reported with the check's name:
//
//   build        the recipe builds (a generator bug otherwise)
//   verify       verify() accepts it
//   run          every method runs on the portable kernels (2 calls)
//   roundtrip    write -> read -> write is byte-identical, and the re-read
//                program's outputs equal the original's
//   pass:<name>  each registered pass alone keeps every user output and
//                mutated buffer (verified after it, compared by the
//                `--verify` machinery, DifferentialPassCheck (api)), and
//                adds no linear over a run-time weight (the unsound
//                addmm/mm -> linear: equal numbers on the portable kernels,
//                a stale prepacked weight on a backend)
//   pipeline     the default pipeline, checked after every pass; its result
//                writes, reads back and verifies
//   xnnpack      lowering succeeds, every node it does not claim has a
//                reason, and the lowered program's outputs (in memory and
//                written/read back) equal the portable run of the original;
//                the lowered archive, too, writes back byte-identical
//   vulkan       the same for the Vulkan backend (skipped only when no
//                Vulkan driver is installed at all)
//
// Programs are never cloned in memory: a ProgramFactory makes a fresh copy
// for each side of each comparison (building the recipe again, or reading
// the saved file again).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "lathe/core/result.h"
#include "lathe/ir/program.h"
#include "lathe/runtime/compare.h"

namespace lathe::sweep {

using ProgramFactory = std::function<Result<Program>()>;

struct CheckOptions {
  std::string scratch_dir;  // archives are written here (overwritten per program)
  Tolerance tolerance{1e-5, 1e-6};
  // Backends (XNNPACK, Vulkan) accumulate in another order and approximate sigmoid & co.
  Tolerance backend_tolerance{1e-4, 1e-5};
  uint64_t input_seed = 7;
  // Only checks whose name starts with this (the shrinker reruns one check).
  std::string only;
};

struct CheckFailure {
  std::string check;    // "roundtrip", "pass:decompose", "xnnpack", ...
  std::string message;
};

struct CheckStats {
  int programs = 0;
  int delegates = 0;        // XNNPACK and Vulkan delegates made
  int claimed_nodes = 0;
  int refused_nodes = 0;
};

// nullopt when every check passes.
std::optional<CheckFailure> run_checks(const ProgramFactory& make, const CheckOptions& options,
                                       CheckStats* stats = nullptr);

// The names run_checks uses, in order (pass:<name> for every registered pass).
std::vector<std::string> check_names();

}  // namespace lathe::sweep
