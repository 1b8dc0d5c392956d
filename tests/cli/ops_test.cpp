// `lathe ops`: every op of every committed fixture is listed (they all run
// on the portable kernels), and the text form counts what the JSON lists.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

#include "cli/cli_support.h"
#include "support/testing.h"

namespace lathe {
namespace {

using nlohmann::json;

TEST(OpsCli, ListsEveryOpTheFixturesUse) {
  const std::string err = testing::temp_dir() + "/stderr.txt";
  auto r = testing::run_lathe("ops --json", err);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> ops;
  for (const auto& op : json::parse(r.out)) ops.insert(op.get<std::string>());
  EXPECT_GT(ops.size(), 200u);
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::source_path("fixtures"))) {
    if (e.path().extension() != ".pt2") continue;
    if (!testing::fixture_runnable(e.path().stem().string())) continue;  // a user's custom op
    auto in = testing::run_lathe("inspect --json '" + e.path().string() + "'", err);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    const json doc = json::parse(in.out);  // named: a temporary would die before the loop runs
    for (auto& [method, m] : doc["methods"].items()) {
      for (auto& [op, count] : m["ops"].items()) {
        EXPECT_TRUE(ops.count(op)) << e.path().filename() << " " << method << " uses " << op;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20);
  auto text = testing::run_lathe("ops", err);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out.rfind(std::to_string(ops.size()) + " ops with a portable kernel\n", 0), 0u) << text.out;
}

// The backends' claims come from their support tables: an op one table has
// a row for is listed under that backend, one it has none for is not.
TEST(OpsCli, ListsWhatEachBackendCanClaim) {
  auto r = testing::run_lathe("ops", testing::temp_dir() + "/stderr.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto section = [&](const std::string& name) {
    const size_t at = r.out.find("\n" + name + " ");
    if (at == std::string::npos) return std::string();
    const size_t end = r.out.find("\n\n", at + 1);
    return r.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
  };
#if LATHE_WITH_XNNPACK
  const std::string xnnpack = section("xnnpack");
  EXPECT_NE(xnnpack.find(" aten.sigmoid.default"), std::string::npos) << r.out;
  EXPECT_NE(xnnpack.find(" aten.linear.default"), std::string::npos) << r.out;
  EXPECT_EQ(xnnpack.find(" aten.tanh.default"), std::string::npos) << r.out;  // no XNNPACK operator in this version
#endif
#if LATHE_WITH_VULKAN
  const std::string vulkan = section("vulkan");
  EXPECT_NE(vulkan.find(" aten.tanh.default"), std::string::npos) << r.out;  // a unary_ops.def row
  EXPECT_EQ(vulkan.find(" aten.bmm.default"), std::string::npos) << r.out;
#endif
  EXPECT_NE(r.out.find("\nxnnpack"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nvulkan"), std::string::npos) << r.out;
}

TEST(OpsCli, UnknownFlagIsAnError_NEG) {
  auto r = testing::run_lathe("ops --bogus", testing::temp_dir() + "/stderr.txt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lathe
