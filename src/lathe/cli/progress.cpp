#include "lathe/cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include "lathe/tools.h"

namespace lathe::cli {

namespace {

constexpr std::string_view kEraseLine = "\r\033[K";

void write_stderr(std::string_view s) {
  // One write(2) per redraw, so the line is never torn by the C++ streams'
  // own buffering.
  while (!s.empty()) {
    ssize_t n = ::write(STDERR_FILENO, s.data(), s.size());
    if (n <= 0) return;  // a closed terminal: progress is not worth an error
    s.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

Progress::Progress(bool enabled, Sink sink, std::chrono::milliseconds after, std::chrono::milliseconds every)
    : enabled_(enabled),
      sink_(std::move(sink)),
      after_(after),
      every_(every),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) ticker_ = std::thread([this] { tick(); });
}

bool Progress::shown_on_stderr(bool quiet) { return !quiet && ::isatty(STDERR_FILENO) == 1; }

Progress Progress::for_stderr(bool quiet) { return Progress(shown_on_stderr(quiet), write_stderr); }

Progress::~Progress() { finish(); }

void Progress::step(std::string what) {
  // Drawn straight to the terminal, past the escaping streams (a pass or
  // method name from the file may be in it).
  std::string line = printable_name(what);
  std::lock_guard<std::mutex> lock(mu_);
  step_ = std::move(line);
}

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (drawn_) sink_(kEraseLine);
}

std::string Progress::line_locked() const {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, " (%.1f s)", seconds);
  return std::string(kEraseLine) + "lathe: " + step_ + elapsed;
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  if (wake_.wait_until(lock, start_ + after_, [this] { return done_; })) return;
  while (true) {
    sink_(line_locked());
    drawn_ = true;
    if (wake_.wait_for(lock, every_, [this] { return done_; })) return;
  }
}

}  // namespace lathe::cli
