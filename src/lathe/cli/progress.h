// Progress: what a long `lathe` job is doing, on one line of stderr.
//
// A transform of a million-node program takes seconds; without a word the
// user cannot tell loading from a hung pass. The command names each step
// (loading, each pass, verifying, saving) as it starts; nothing appears
// until the job has run for `after` (1 s), so short jobs print nothing.
// Then a ticker thread redraws "lathe: <step> (<seconds> s)" ten times a
// second, overwriting the line (carriage return + erase), and the line is
// erased when the job ends, before the command prints its results.
//
// Shown only when stderr is a terminal and --quiet is not given
// (Progress::for_stderr decides): a log file or a pipe never gets
// carriage-return noise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace lathe::cli {

// --quiet's help text, the same on every command that shows progress.
inline constexpr const char* kQuietHelp = "No progress line on stderr (shown only on a terminal, for jobs over 1 s)";

class Progress {
 public:
  using Sink = std::function<void(std::string_view)>;

  // Disabled: step() only records the step, nothing is ever written.
  Progress(bool enabled, Sink sink, std::chrono::milliseconds after = std::chrono::seconds(1),
           std::chrono::milliseconds every = std::chrono::milliseconds(100));
  // Enabled iff shown_on_stderr(quiet); writes to stderr.
  static Progress for_stderr(bool quiet);
  // !quiet and stderr is a terminal.
  static bool shown_on_stderr(bool quiet);
  ~Progress();  // finish()

  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&& other) = delete;

  // The step now running ("loading model.pt2", "pass decompose").
  void step(std::string what);
  // Erases the line if one was drawn and stops the ticker. Idempotent.
  void finish();

 private:
  void tick();
  std::string line_locked() const;

  const bool enabled_;
  const Sink sink_;
  const std::chrono::milliseconds after_, every_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::string step_;
  bool drawn_ = false;
  bool done_ = false;
  std::thread ticker_;
};

}  // namespace lathe::cli
