#include "support/testing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace lathe::testing {

std::string source_path(const std::string& relative) {
  return std::string(LATHE_SOURCE_DIR) + "/" + relative;
}

std::string shared_path(const std::string& relative) {
  return std::string(LATHE_SOURCE_DIR) + "/../shared/" + relative;
}

namespace {
// Removes this process's temporary test folders when the test binary exits.
struct TempRoot {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lathe-test-" + std::to_string(::getpid()));
  ~TempRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
TempRoot& temp_root() {
  static TempRoot root;
  return root;
}
}  // namespace

std::string temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "lathe";
  auto dir = temp_root().path / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::vector<std::string> atomic_write_temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) out.push_back(name);
  }
  return out;
}

}  // namespace lathe::testing
