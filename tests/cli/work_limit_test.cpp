// `lathe run` and the per-node work limit (issue 33, item 6): an archive
// whose expand of [1, 8] to [2^20, 2^20, 8] is summed ends at once with one
// line naming the node (it ran 85 minutes), and --max-elements-per-node
// moves the limit. The archives are built here.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "cli/cli_support.h"
#include "lathe/ir/graph_builder.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe::testing {
namespace {

// x [1, 8] -> expand(size) -> sum, as an archive.
std::string expand_sum_archive(const std::string& dir, const std::vector<int64_t>& size) {
  Program p;
  GraphBuilder b(p.add_method("model"));
  Value* x = b.user_input("x", {1, 8});
  Value* e = b.call("aten.expand.default", {{"self", x}, {"size", IntList{size}}}, size);
  b.user_output(b.call("aten.sum.default", {{"self", e}}, std::vector<int64_t>{}));
  const std::string path = dir + "/expand_sum.pt2";
  EXPECT_TRUE(write_pt2(p, path).ok());
  return path;
}

// x = [1, 2, ..., 8] as float32 [1, 8] (.npy version 1: header padded to a multiple of 64).
std::string ones_to_eight_npy(const std::string& dir) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 8), }";
  h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(h.size());
  bytes += '\0';
  bytes += h;
  for (float v = 1; v <= 8; ++v) bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  const std::string path = dir + "/x.npy";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(WorkLimit, AHugeBroadcastSumEndsAtOnceNamingTheNode_NEG) {
  const Lathe lathe;
  const std::string archive = expand_sum_archive(lathe.dir, {int64_t{1} << 20, int64_t{1} << 20, 8});
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = lathe("run '" + archive + "' --inputs '" + ones_to_eight_npy(lathe.dir) + "'");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("lathe run: " + archive + ": model: node 'sum' (aten.sum.default): would touch at least 8796093022208 "
                       "elements"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--max-elements-per-node"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 10.0);
}

// sum over expand [2, 8]: 16 elements read, 1 written.
TEST(WorkLimit, MaxElementsPerNodeMovesTheLimit) {
  const Lathe lathe;
  const std::string run = "run '" + expand_sum_archive(lathe.dir, {2, 8}) + "' --inputs '" +
                          ones_to_eight_npy(lathe.dir) + "' --out '" + lathe.dir + "'";
  CommandResult refused = lathe(run + " --max-elements-per-node 16");
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("would touch at least 17 elements"), std::string::npos) << refused.err;
  CommandResult ran = lathe(run + " --max-elements-per-node 17");
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("output 0 'sum': float32 []"), std::string::npos) << ran.out;
  CommandResult zero = lathe(run + " --max-elements-per-node 0");
  EXPECT_NE(zero.exit_code, 0);
}

}  // namespace
}  // namespace lathe::testing
