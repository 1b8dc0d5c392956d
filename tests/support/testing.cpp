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

std::string torch_python() {
  const std::string python = source_path(".venv/bin/python");
  EXPECT_TRUE(std::filesystem::exists(python)) << python << " is missing: run `make venv` (scripts/setup-venv.sh)";
  return python;
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

std::vector<std::string> archives_in(const std::string& relative_dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path(relative_dir))) {
    if (e.path().extension() == ".pt2") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path("fixtures")))
    if (e.path().extension() == ".pt2") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool fixture_runnable(const std::string& fixture) {
  const bool is_path = fixture.find('/') != std::string::npos;
  const std::filesystem::path archive = is_path ? fixture : source_path("fixtures/" + fixture + ".pt2");
  const std::filesystem::path manifest = archive.parent_path() / "manifest.json";
  if (!std::filesystem::exists(manifest)) return true;
  const nlohmann::json doc = nlohmann::json::parse(read_text(manifest.string()), nullptr, false);
  if (!doc.is_object()) {
    ADD_FAILURE() << manifest << " is not a JSON object";
    return false;
  }
  auto entry = doc.find(archive.stem().string());
  if (entry == doc.end() || !entry->is_object()) return true;
  return entry->value("runnable", true);
}

std::vector<std::string> runnable_fixture_names() {
  std::vector<std::string> out;
  for (const std::string& n : fixture_names())
    if (fixture_runnable(n)) out.push_back(n);
  return out;
}

long resident_kib(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::ostringstream want;
  want << std::hex << reinterpret_cast<uintptr_t>(start) << "-";
  bool in_mapping = false;
  for (std::string line; std::getline(smaps, line);) {
    const std::string first = line.substr(0, line.find(' '));
    if (!first.empty() && first.back() != ':') {  // a mapping's header line, "start-end perms ..."
      in_mapping = first.rfind(want.str(), 0) == 0;
    } else if (in_mapping && first == "Rss:") {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

}  // namespace lathe::testing
