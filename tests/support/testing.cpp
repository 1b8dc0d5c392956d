#include "support/testing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

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

std::vector<std::string> fixture_names() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path("fixtures")))
    if (e.path().extension() == ".pt2") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool fixture_runnable(const std::string& name) {
  static const nlohmann::json manifest = nlohmann::json::parse(read_text(source_path("fixtures/manifest.json")));
  if (!manifest.contains(name)) {
    ADD_FAILURE() << "fixture '" << name << "' is not in fixtures/manifest.json";
    return false;
  }
  return manifest[name].value("runnable", true);
}

std::vector<std::string> runnable_fixture_names() {
  std::vector<std::string> out;
  for (const std::string& n : fixture_names())
    if (fixture_runnable(n)) out.push_back(n);
  return out;
}

}  // namespace lathe::testing
