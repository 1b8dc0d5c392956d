// Programs the sweep once failed on, shrunk and saved (tests/sweep/regressions/
// <seed>.pt2, each with <seed>.txt saying what failed): every check must
// pass on each of them now, read from the file as a user would.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "lathe/serde/pt2.h"
#include "sweep/sweep_checks.h"

namespace lathe::sweep {
namespace {

std::vector<std::string> saved_programs(const std::string& folder) {
  std::vector<std::string> files;
  const std::filesystem::path dir = std::filesystem::path(LATHE_SOURCE_DIR) / "tests/sweep" / folder;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".pt2") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SweepRegressions, EverySavedProgramPassesEveryCheck) {
  const std::string scratch = ::testing::TempDir() + "/sweep_regressions";
  std::filesystem::create_directories(scratch);
  CheckOptions options;
  options.scratch_dir = scratch;
  for (const std::string& path : saved_programs("regressions")) {
    auto failure = run_checks([&] { return read_pt2(path); }, options);
    EXPECT_FALSE(failure.has_value()) << path << ": " << failure->check << ": " << failure->message;
  }
  std::filesystem::remove_all(scratch);
}

}  // namespace
}  // namespace lathe::sweep
