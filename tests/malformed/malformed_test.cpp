// Every hand-made malformed archive in tests/malformed/ (written by
// tools/make_malformed.py) must be refused with the error expected.txt
// gives for it: read_pt2 fails, or — for lines "verify: <text>" — the file
// loads and verify() fails, or — for lines "write: <text>" (damaged records
// that are only copied, read lazily) — it loads and write_pt2 fails. Limits are the defaults but for the total of
// inflated bytes (16 MiB instead of 8 GiB, so a small file can exceed it). Errors from read_pt2 name the file. Nothing may
// crash, hang or allocate without bound (the sanitizer build runs this too).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "lathe/ir/verify.h"
#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Case {
  std::string file;
  std::string expected;  // "verify: <text>" for files that load
};

std::vector<Case> manifest() {
  std::vector<Case> out;
  std::ifstream in(testing::source_path("tests/malformed/expected.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    out.push_back({line.substr(0, arrow), line.substr(arrow + 4)});
  }
  return out;
}

// gtest prints parameters in failure messages.
void PrintTo(const Case& c, std::ostream* os) { *os << c.file << " -> " << c.expected; }

class Malformed : public ::testing::TestWithParam<Case> {};

TEST_P(Malformed, RefusedWithTheExpectedError) {
  const Case& c = GetParam();
  const std::string path = testing::source_path("tests/malformed/" + c.file);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  // Default limits, except the total of inflated bytes and the size of a
  // JSON record: 16 MiB lets a file of a few KB show a zip bomb spread over
  // entries, or a graph record padded past the limit.
  Pt2ReadOptions options;
  options.zip.max_total_inflated_bytes = 16 << 20;
  options.max_json_record_bytes = 16 << 20;
  auto program = read_pt2(path, options);
  const std::string verify_prefix = "verify: ";
  if (c.expected.rfind(verify_prefix, 0) == 0) {
    ASSERT_TRUE(program.ok()) << "expected to load (and fail verify): " << program.error().message();
    Status s = verify(*program);
    ASSERT_FALSE(s.ok()) << path << " verifies, but should not";
    EXPECT_THAT(s.error().message(), HasSubstr(c.expected.substr(verify_prefix.size())));
    return;
  }
  // Records Lathe only copies (extra/) are read when they are copied, so a
  // damaged one is refused by the write, which leaves nothing behind.
  const std::string write_prefix = "write: ";
  if (c.expected.rfind(write_prefix, 0) == 0) {
    ASSERT_TRUE(program.ok()) << "expected to load (and fail to be written): " << program.error().message();
    const std::string dir = testing::temp_dir(), out = dir + "/copy.pt2";
    Status s = write_pt2(*program, out);
    ASSERT_FALSE(s.ok()) << path << " was copied, but should not be";
    EXPECT_THAT(s.error().message(), HasSubstr(path + ": "));
    EXPECT_THAT(s.error().message(), HasSubstr(c.expected.substr(write_prefix.size())));
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_THAT(testing::atomic_write_temporaries(dir), ::testing::IsEmpty());
    return;
  }
  ASSERT_FALSE(program.ok()) << path << " loads, but should be refused with: " << c.expected;
  const std::string& message = program.error().message();
  EXPECT_THAT(message, StartsWith(path + ": "));
  EXPECT_THAT(message, HasSubstr(c.expected));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.file.substr(0, info.param.file.rfind('.'));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Archives, Malformed, ::testing::ValuesIn(manifest()), case_name);

TEST(MalformedManifest, ListsEveryFileOnce) {
  std::set<std::string> listed;
  for (const Case& c : manifest()) {
    EXPECT_TRUE(listed.insert(c.file).second) << c.file << " is listed twice";
    EXPECT_FALSE(c.expected.empty()) << c.file;
  }
  EXPECT_GE(listed.size(), 50u);
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("tests/malformed"))) {
    if (entry.path().extension() != ".pt2") continue;
    EXPECT_TRUE(listed.count(entry.path().filename().string()))
        << entry.path() << " has no line in tests/malformed/expected.txt";
  }
}

}  // namespace
}  // namespace lathe
