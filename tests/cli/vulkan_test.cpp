// `lathe lower --backend vulkan` and `lathe run` on the result, end to end,
// and the errors when there is no Vulkan device: none installed (the
// loader pointed at a driver list that does not exist) or
// LATHE_VULKAN_DEVICE naming one that is not there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "cli/cli_support.h"
#include "lathe/backends/vulkan/vulkan_test_support.h"
#include "support/testing.h"

namespace lathe::testing {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the commands run in one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

std::string lowered_tts(const Lathe& lathe, const std::string& extra, CommandResult* result) {
  const std::string out = lathe.dir + "/tts.pt2";
  std::error_code ec;
  fs::create_directory_symlink(source_path("fixtures/tts_duration_predictor.ref"), lathe.dir + "/tts.ref", ec);
  *result = lathe("lower " + quoted_fixture("tts_duration_predictor.pt2") + " -o '" + out + "' --backend vulkan " + extra);
  return "'" + out + "'";
}

TEST(VulkanCommand, LowerExplainsAndRunMatchesPyTorch) {
  LATHE_REQUIRE_VULKAN_DRIVER();
  const Lathe lathe;
  CommandResult l;
  const std::string archive = lowered_tts(lathe, "--explain", &l);
  ASSERT_EQ(l.exit_code, 0) << l.out << l.err;
  EXPECT_NE(l.out.find("model: aten.linear.default 'addmm' claimed (delegate 0): linear, weight parameter 'encoder.weight'"),
            std::string::npos) << l.out;
  EXPECT_NE(l.out.find("model: aten.mm.default 'mm' not claimed: mat2 'permute_1' is computed at run time by 'permute_1'"),
            std::string::npos) << l.out;
  EXPECT_NE(l.out.find("2 vulkan delegate(s)"), std::string::npos) << l.out;
  CommandResult r = lathe("run " + archive + " --check --rtol 1e-4");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
  // And lowered in memory by `run --backend vulkan`.
  r = lathe("run " + quoted_fixture("convnet.pt2") + " --backend vulkan --check --rtol 1e-4");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("lowered to vulkan: 1 delegate(s)"), std::string::npos) << r.err;
}

TEST(VulkanCommand, NoDriverInstalledIsAClearErrorFromLowerAndRun_NEG) {
  const Lathe lathe;
  CommandResult l;
  std::string archive;
  {  // lower first, with the real drivers (when there are any)
    const VulkanProbe probe = probe_vulkan();
    if (probe.driver_installed) {
      archive = lowered_tts(lathe, "", &l);
      ASSERT_EQ(l.exit_code, 0) << l.err;
    }
  }
  const ScopedEnv icd("VK_ICD_FILENAMES", "/nonexistent/lathe_no_icd.json");
  const ScopedEnv drivers("VK_DRIVER_FILES", "/nonexistent/lathe_no_icd.json");
  CommandResult r = lathe("lower " + quoted_fixture("tts_duration_predictor.pt2") + " -o '" + lathe.dir + "/x.pt2' --backend vulkan");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
#if LATHE_WITH_VULKAN
  EXPECT_NE(r.err.find("no Vulkan device: the Vulkan loader found no driver (ICD)"), std::string::npos) << r.err;
#else  // built without the backend (LATHE_WITH_VULKAN=OFF): it says so instead
  EXPECT_NE(r.err.find("built without the Vulkan backend"), std::string::npos) << r.err;
#endif
  EXPECT_FALSE(fs::exists(lathe.dir + "/x.pt2"));
  if (!archive.empty()) {
    r = lathe("run " + archive);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("no Vulkan device"), std::string::npos) << r.err;
  }
}

// No Vulkan loader at all (libvulkan.so.1 is opened with dlopen on first
// use, vulkan_loader.h): lathe starts, and asking for the backend says what
// is missing.
TEST(VulkanCommand, NoLoaderIsAClearErrorFromLower_NEG) {
  const Lathe lathe;
  const ScopedEnv loader("LATHE_VULKAN_LOADER", "/nonexistent/libvulkan.so.1");
  CommandResult r = lathe("lower " + quoted_fixture("tts_duration_predictor.pt2") + " -o '" + lathe.dir + "/x.pt2' --backend vulkan");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
#if LATHE_WITH_VULKAN
  EXPECT_NE(r.err.find("vulkan: no Vulkan loader (/nonexistent/libvulkan.so.1) found: install the Vulkan loader and your "
                       "GPU's Vulkan driver"), std::string::npos) << r.err;
#else
  EXPECT_NE(r.err.find("built without the Vulkan backend"), std::string::npos) << r.err;
#endif
  EXPECT_FALSE(fs::exists(lathe.dir + "/x.pt2"));
  r = lathe("run " + quoted_fixture("mlp.pt2"));  // the rest works without it
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(VulkanCommand, DeviceVariableNamingNoDeviceIsAClearError_NEG) {
  LATHE_REQUIRE_VULKAN_DRIVER();
  const Lathe lathe;
  CommandResult l;
  const std::string archive = lowered_tts(lathe, "", &l);
  ASSERT_EQ(l.exit_code, 0) << l.err;
  const ScopedEnv device("LATHE_VULKAN_DEVICE", "no-such-gpu");
  for (const std::string& args : {"lower " + quoted_fixture("mlp.pt2") + " -o '" + lathe.dir + "/y.pt2' --backend vulkan", "run " + archive}) {
    CommandResult r = lathe(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("LATHE_VULKAN_DEVICE='no-such-gpu' names no Vulkan device (devices: 0: "), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace lathe::testing
