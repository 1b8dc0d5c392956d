#include "lathe/cli/progress.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>

namespace lathe::cli {
namespace {

using namespace std::chrono_literals;

// What the sink was given, safe to read while the ticker writes.
struct Captured {
  std::mutex mu;
  std::string text;
  Progress::Sink sink() {
    return [this](std::string_view s) {
      std::lock_guard<std::mutex> lock(mu);
      text += s;
    };
  }
  std::string get() {
    std::lock_guard<std::mutex> lock(mu);
    return text;
  }
};

// Waits (up to 10 s, for a loaded machine) until the sink holds `what`.
bool eventually_contains(Captured& c, const std::string& what) {
  for (int i = 0; i < 1000; ++i) {
    if (c.get().find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Progress, ALongJobShowsItsCurrentStepAndErasesTheLineAtTheEnd) {
  Captured c;
  Progress p(true, c.sink(), 0ms, 5ms);
  p.step("loading big.pt2");
  ASSERT_TRUE(eventually_contains(c, "\r\033[Klathe: loading big.pt2 ("));
  p.step("pass decompose on method forward");
  ASSERT_TRUE(eventually_contains(c, "lathe: pass decompose on method forward ("));
  p.finish();
  const std::string text = c.get();
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K") << "the last line is not erased";
  EXPECT_NE(text.find(" s)"), std::string::npos);
  p.finish();  // idempotent: nothing more is written
  EXPECT_EQ(c.get(), text);
}

TEST(Progress, AJobShorterThanTheDelayPrintsNothing_NEG) {
  Captured c;
  {
    Progress p(true, c.sink(), 10s);
    p.step("loading small.pt2");
  }  // the destructor finishes, without waiting out the delay
  EXPECT_EQ(c.get(), "");
}

TEST(Progress, DisabledProgressNeverWrites_NEG) {
  Captured c;
  Progress p(false, c.sink(), 0ms, 1ms);
  p.step("loading big.pt2");
  std::this_thread::sleep_for(30ms);
  p.finish();
  EXPECT_EQ(c.get(), "");
}

TEST(Progress, QuietOrNotATerminalMeansNoProgress_NEG) {
  // stderr redirected to a file (as ctest and `2> log` do) is not a
  // terminal: no progress, with or without --quiet.
  testing::internal::CaptureStderr();
  const bool shown_on_file = Progress::shown_on_stderr(false);
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(shown_on_file);
  EXPECT_FALSE(Progress::shown_on_stderr(true));
}

}  // namespace
}  // namespace lathe::cli
