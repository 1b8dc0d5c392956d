// The fixed-seed slice of the sweep that `make test` runs: kSliceSeeds
// programs from seed 0, in shards so `ctest -j` spreads them over cores.
// Under ASan/UBSan (LATHE_SANITIZE) the slice is smaller; LATHE_SWEEP_COUNT
// overrides the size either way.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "sweep/program_builder.h"
#include "sweep/program_generator.h"
#include "sweep/sweep_checks.h"

namespace lathe::sweep {
namespace {

#ifdef LATHE_SWEEP_SANITIZER_BUILD
constexpr uint64_t kSliceSeeds = 64;
#else
constexpr uint64_t kSliceSeeds = 480;
#endif
constexpr int kShards = 8;

uint64_t slice_seeds() {
  if (const char* e = std::getenv("LATHE_SWEEP_COUNT")) return std::strtoull(e, nullptr, 10);
  return kSliceSeeds;
}

class SweepSlice : public ::testing::TestWithParam<int> {};

TEST_P(SweepSlice, EveryProgramPassesEveryCheck) {
  const uint64_t n = slice_seeds();
  const uint64_t begin = n * static_cast<uint64_t>(GetParam()) / kShards;
  const uint64_t end = n * static_cast<uint64_t>(GetParam() + 1) / kShards;
  const std::string scratch = ::testing::TempDir() + "/sweep_slice_" + std::to_string(GetParam());
  std::filesystem::create_directories(scratch);
  CheckOptions options;
  options.scratch_dir = scratch;
  for (uint64_t seed = begin; seed < end; ++seed) {
    const ProgramSpec spec = generate_program(seed);
    auto failure = run_checks([&] { return build_program(spec); }, options);
    EXPECT_FALSE(failure.has_value()) << "seed " << seed << " (rerun: lathe_sweep --seed-start " << seed
                                      << " --count 1 --shrink --save-failures DIR): " << failure->check << ": "
                                      << failure->message << "\n" << to_string(spec);
  }
  std::filesystem::remove_all(scratch);
}

INSTANTIATE_TEST_SUITE_P(Shards, SweepSlice, ::testing::Range(0, kShards));

}  // namespace
}  // namespace lathe::sweep
