// write_pt2 is atomic: when encoding fails part-way through an archive, the
// file that was there keeps its bytes and no temporary file is left.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "lathe/serde/pt2.h"
#include "support/testing.h"

namespace lathe {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class AtomicWritePt2 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir();
    path_ = dir_ + "/out.pt2";
    auto p = read_pt2(testing::source_path("fixtures/two_methods.pt2"));
    ASSERT_TRUE(p.ok()) << p.error().message();
    program_ = std::move(*p);
    // The previous file: a good archive, written by Lathe.
    ASSERT_TRUE(write_pt2(program_, path_).ok());
    old_ = testing::read_text(path_);
    ASSERT_GT(old_.size(), 1000u);
  }
  void ExpectOldFileIntactAndNoTemporaries() {
    EXPECT_EQ(testing::read_text(path_), old_) << "the previous archive was changed";
    EXPECT_THAT(testing::atomic_write_temporaries(dir_), IsEmpty());
  }
  std::string dir_, path_, old_;
  Program program_;
};

// Both methods, their weights and configs are written before the bad extra
// record is reached: the failure happens with most of the archive on disk.
TEST_F(AtomicWritePt2, EncodingFailsAfterMostOfTheArchive) {
  program_.extra.emplace_back("../outside", std::vector<std::byte>(3 << 20, std::byte{1}));
  Status s = write_pt2(program_, path_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message(), HasSubstr(path_));
  EXPECT_THAT(s.error().message(), HasSubstr("'..' path component"));
  ExpectOldFileIntactAndNoTemporaries();
}

TEST_F(AtomicWritePt2, EveryFormatLeavesNoPartialFile) {
  program_.extra.emplace_back("a\\b", std::vector<std::byte>(16));
  for (const char* format : {"2.9", "2.8", "legacy"}) {
    Pt2WriteOptions options;
    options.format = *parse_pt2_format(format);
    Status s = write_pt2(program_, path_, options);
    EXPECT_FALSE(s.ok()) << format;
    ExpectOldFileIntactAndNoTemporaries();
  }
}

TEST_F(AtomicWritePt2, MissingFolderCreatesNothing) {
  Status s = write_pt2(program_, dir_ + "/missing/out.pt2");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message(), HasSubstr("cannot create a temporary file"));
  EXPECT_FALSE(fs::exists(dir_ + "/missing"));
  ExpectOldFileIntactAndNoTemporaries();
}

TEST_F(AtomicWritePt2, SuccessfulRewriteLeavesNoTemporaries) {
  ASSERT_TRUE(write_pt2(program_, path_).ok());
  EXPECT_EQ(testing::read_text(path_), old_);  // deterministic output
  EXPECT_THAT(testing::atomic_write_temporaries(dir_), IsEmpty());
}

}  // namespace
}  // namespace lathe
