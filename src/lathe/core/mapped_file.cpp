#include "lathe/core/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace lathe {
namespace {

// ---- the SIGBUS guard (mapped_file.h) ----
//
// A fixed table the handler reads without locks or allocation. Each slot is
// a sequence lock: `seq` is odd while the slot is being changed (under
// g_registry), and the handler uses a slot's range only if `seq` was even
// and the same before and after it read begin and end. begin == 0: free.
struct GuardSlot {
  std::atomic<uint64_t> seq{0};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};  // rounded up to whole pages, as the map is
  std::atomic<bool> faulted{false};
  const MappedFile* owner = nullptr;  // under g_registry
};
constexpr size_t kGuardSlots = 1024;
GuardSlot g_slots[kGuardSlots];
std::atomic<size_t> g_slots_used{0};  // slots [0, used) have been live
std::mutex g_registry;
struct sigaction g_previous {};

// What would have happened to a SIGBUS without Lathe's handler.
void chain(int sig, siginfo_t* info, void* context) {
  const bool sent = info == nullptr || info->si_code <= 0;  // kill()/raise(), not a fault
  if ((g_previous.sa_flags & SA_SIGINFO) != 0) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler == SIG_IGN && sent) return;
  if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    // The default action (a fault cannot be ignored): a fault recurs as the
    // instruction restarts, a sent signal is sent again; either is fatal now.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    if (sent) ::raise(sig);
    return;
  }
  g_previous.sa_handler(sig);
}

// A fault inside a registered map: its file lost the page (truncated). The
// whole map becomes zero pages and is marked; the faulting access restarts
// and reads zeros. Async-signal-safe: atomics, mmap, errno.
extern "C" void lathe_on_sigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (info != nullptr && info->si_code > 0) {
    const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    const size_t used = g_slots_used.load(std::memory_order_acquire);
    for (size_t i = 0; i < used; ++i) {
      GuardSlot& s = g_slots[i];
      const uint64_t before = s.seq.load(std::memory_order_acquire);
      const uintptr_t begin = s.begin.load(std::memory_order_relaxed), end = s.end.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((before & 1) != 0 || s.seq.load(std::memory_order_relaxed) != before) continue;
      if (begin == 0 || addr < begin || addr >= end) continue;
      void* p = ::mmap(reinterpret_cast<void*>(begin), end - begin, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (p == MAP_FAILED) break;
      s.faulted.store(true, std::memory_order_release);
      errno = saved_errno;
      return;
    }
  }
  errno = saved_errno;
  chain(sig, info, context);
}

void install_guard() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::sigaction(SIGBUS, nullptr, &g_previous);
    struct sigaction sa {};
    sa.sa_sigaction = lathe_on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, nullptr);
  });
}

// Writes slot `i` under g_registry.
void set_slot(size_t i, uintptr_t begin, uintptr_t end, const MappedFile* owner) {
  GuardSlot& s = g_slots[i];
  s.seq.fetch_add(1, std::memory_order_relaxed);  // odd: being changed
  std::atomic_thread_fence(std::memory_order_release);
  s.begin.store(begin, std::memory_order_relaxed);
  s.end.store(end, std::memory_order_relaxed);
  s.faulted.store(false, std::memory_order_relaxed);
  s.owner = owner;
  s.seq.fetch_add(1, std::memory_order_release);  // even again
}

int guard_map(const MappedFile* owner, const std::byte* data, size_t size) {
  install_guard();
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + (size + page - 1) / page * page;
  std::lock_guard<std::mutex> lock(g_registry);
  for (size_t i = 0; i < kGuardSlots; ++i) {
    if (g_slots[i].begin.load(std::memory_order_relaxed) != 0) continue;
    set_slot(i, begin, end, owner);
    if (g_slots_used.load(std::memory_order_relaxed) < i + 1) g_slots_used.store(i + 1, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;  // 1024 archives open at once: this one is not guarded (check_intact still compares stat)
}

int64_t nanoseconds(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

constexpr const char* kInUse =
    " while in use (Lathe reads its weights in place): load it again, and replace an archive in use by renaming a "
    "new file over it, not by writing into it";

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer, for ever; it is then refused below as not a regular file. (On a
  // regular file the flag changes nothing.)
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return make_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  const std::byte* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return make_error(path + ": cannot map: " + std::strerror(err));
    }
    data = static_cast<const std::byte*>(p);
  }
  auto* file = new MappedFile(path, fd, data, size,
                              Snapshot{static_cast<int64_t>(st.st_size), nanoseconds(st.st_mtim)});
  if (data != nullptr) file->guard_slot_ = guard_map(file, data, size);
  return std::shared_ptr<const MappedFile>(file);
}

void MappedFile::release(uint64_t offset, uint64_t size) const {
  if (data_ == nullptr || offset >= size_) return;
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min<uint64_t>(offset + size, size_);
  const uint64_t first = (offset + page - 1) / page * page, last = end / page * page;
  if (last <= first) return;
  // Advice on a read-only private file map: dropping the pages loses nothing.
  ::madvise(const_cast<std::byte*>(data_) + first, last - first, MADV_DONTNEED);
}

bool MappedFile::faulted() const {
  return guard_slot_ >= 0 && g_slots[guard_slot_].faulted.load(std::memory_order_acquire);
}

Status MappedFile::check_intact() const {
  if (faulted()) return make_error(path_ + ": the archive was truncated or replaced" + kInUse);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return make_error(path_ + ": cannot stat the archive in use: " + std::strerror(errno));
  const Snapshot now{static_cast<int64_t>(st.st_size), nanoseconds(st.st_mtim)};
  if (now == snapshot_) return Status::Ok();
  if (now.size < snapshot_.size) return make_error(path_ + ": the archive was truncated or replaced" + kInUse);
  return make_error(path_ + ": the archive was modified (its size or modification time changed since it was opened)" + kInUse);
}

std::shared_ptr<const MappedFile> MappedFile::containing(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(g_registry);
  const size_t used = g_slots_used.load(std::memory_order_relaxed);
  for (size_t i = 0; i < used; ++i) {
    const GuardSlot& s = g_slots[i];
    const uintptr_t begin = s.begin.load(std::memory_order_relaxed);
    if (begin == 0 || addr < begin || addr >= s.end.load(std::memory_order_relaxed)) continue;
    // Null while the owner is being destroyed (it waits for g_registry).
    return s.owner->weak_from_this().lock();
  }
  return nullptr;
}

MappedFile::~MappedFile() {
  if (guard_slot_ >= 0) {
    std::lock_guard<std::mutex> lock(g_registry);
    set_slot(static_cast<size_t>(guard_slot_), 0, 0, nullptr);
  }
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  ::close(fd_);
}

void MappedSources::add(const void* p) {
  const auto* b = static_cast<const std::byte*>(p);
  if (b == nullptr || (b >= last_begin_ && b < last_end_)) return;
  std::shared_ptr<const MappedFile> file = MappedFile::containing(p);
  if (!file) return;
  last_begin_ = file->data();
  last_end_ = file->data() + file->size();
  for (const auto& known : files_) {
    if (known == file) return;
  }
  files_.push_back(std::move(file));
}

Status MappedSources::check() const {
  for (const auto& file : files_) LATHE_RETURN_IF_ERROR(file->check_intact());
  return Status::Ok();
}

std::span<const std::byte> FileExtent::bytes() const { return {file->data() + offset, static_cast<size_t>(size)}; }

}  // namespace lathe
