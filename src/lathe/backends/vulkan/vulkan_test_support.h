// For the Vulkan tests: skip, saying why, only when no Vulkan driver is
// installed at all (CI installs lavapipe through scripts/setup-deps.sh, so
// there they run); any other failure to open the device fails the test.
#pragma once

#include <gtest/gtest.h>

#include "lathe/backends/vulkan/vulkan_backend.h"

#define LATHE_REQUIRE_VULKAN_DRIVER()                                      \
  do {                                                                     \
    static const ::lathe::VulkanProbe lathe_probe_ = ::lathe::probe_vulkan(); \
    if (!lathe_probe_.driver_installed) GTEST_SKIP() << lathe_probe_.message; \
  } while (0)
