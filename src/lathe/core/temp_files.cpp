#include "lathe/core/temp_files.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

namespace lathe {
namespace {

// Free -> Claimed (path being copied in) -> Live -> Free. The handler only
// reads Live slots, whose path is complete.
enum : int { kFree = 0, kClaimed = 1, kLive = 2 };
constexpr size_t kSlots = 64;
constexpr size_t kPathMax = 4096;

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathMax];
};
std::array<Slot, kSlots> g_slots;

constexpr std::array<int, 4> kSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void remove_temp_files_and_die(int sig) {
  for (Slot& s : g_slots) {
    if (s.state.load(std::memory_order_acquire) == kLive) ::unlink(s.path);
  }
  // Die of the same signal, so the parent sees what happened.
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int register_temp_file(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_temp_file(int slot) {
  if (slot >= 0 && static_cast<size_t>(slot) < kSlots) g_slots[slot].state.store(kFree, std::memory_order_release);
}

void install_temp_file_cleanup() {
  for (int sig : kSignals) {
    struct sigaction sa {};
    sa.sa_handler = remove_temp_files_and_die;
    sigemptyset(&sa.sa_mask);
    // A signal ignored by whoever started us (nohup) stays ignored.
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace lathe
