#include "lathe/runtime/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if LATHE_WITH_PTHREADPOOL
#include <pthreadpool.h>
#endif

namespace lathe {

namespace {

// Lathe's own pool, for builds without pthreadpool (no XNNPACK).
class OwnPool {
 public:
  explicit OwnPool(int threads) {
    for (int i = 0; i < threads - 1; ++i) workers_.emplace_back([this] { work(); });
  }
  ~OwnPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs chunks [0, n) of `fn` on the workers and the caller. Returns false
  // (having run nothing) if the pool is busy with another job.
  bool run(int64_t n, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(job_mu_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &fn;
      chunks_ = n;
      next_.store(0);
      pending_ = n;
      ++generation_;
    }
    cv_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  void drain() {
    for (;;) {
      int64_t i = next_.fetch_add(1);
      if (i >= chunks_) return;
      (*job_)(i);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
        if (stop_) return;
        seen = generation_;
      }
      drain();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t)>* job_ = nullptr;
  std::atomic<int64_t> chunks_{0};
  std::atomic<int64_t> next_{0};
  int64_t pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

#if LATHE_WITH_PTHREADPOOL
// The pool XNNPACK's operators run on, shared with the portable kernels:
// one set of workers, sized once (set_num_threads), so no second pool
// spins while this one works.
//
// Between jobs the workers spin a bounded while (pthreadpool's default)
// before they sleep, rather than sleep at once (YIELD_WORKERS): a decode
// step is some 180 parallel jobs of 50-300 us each, a few us of serial work
// apart, and waking a sleeping worker by futex each time cost 1.5-2.7 ms a
// token at 2 threads (TinyLlama int4: 27.5-28.0 -> 24.9-26.6 ms).
constexpr uint32_t kWorkersSpinBetweenJobs = 0;
class SharedPthreadpool {
 public:
  explicit SharedPthreadpool(int threads)
      : threads_(threads),
        pool_(threads > 1 ? pthreadpool_create(static_cast<size_t>(threads)) : nullptr, [](pthreadpool* p) {
          if (p) pthreadpool_destroy(p);
        }) {}
  int size() const { return pool_ ? threads_ : 1; }
  std::shared_ptr<pthreadpool> raw() const { return pool_; }

  // As OwnPool::run: false (nothing run) when another job holds the pool,
  // so concurrent executors run serially instead of queueing.
  bool run(int64_t n, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(job_mu_, std::try_to_lock);
    if (!busy.owns_lock() || !pool_) return false;
    auto task = [](void* ctx, size_t i) { (*static_cast<const std::function<void(int64_t)>*>(ctx))(static_cast<int64_t>(i)); };
    pthreadpool_parallelize_1d(pool_.get(), task, const_cast<std::function<void(int64_t)>*>(&fn), static_cast<size_t>(n),
                               kWorkersSpinBetweenJobs);
    return true;
  }

 private:
  int threads_;
  std::shared_ptr<pthreadpool> pool_;
  std::mutex job_mu_;
};
using Pool = SharedPthreadpool;
#else
using Pool = OwnPool;
#endif

std::mutex g_mu;
std::shared_ptr<Pool> g_pool;

std::shared_ptr<Pool> pool() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_pool) g_pool = std::make_shared<Pool>(1);
  return g_pool;
}

}  // namespace

void set_num_threads(int n) {
  n = std::max(1, n);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_pool && g_pool->size() == n) return;
  g_pool = std::make_shared<Pool>(n);
}

int num_threads() { return pool()->size(); }

std::shared_ptr<pthreadpool> shared_pthreadpool() {
#if LATHE_WITH_PTHREADPOOL
  return pool()->raw();
#else
  return nullptr;
#endif
}

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t total = end - begin;
  std::shared_ptr<Pool> p = pool();
  const int64_t chunks = std::min<int64_t>(p->size(), (total + grain - 1) / grain);
  if (chunks <= 1) {
    fn(begin, end);
    return;
  }
  const int64_t step = (total + chunks - 1) / chunks;
  std::function<void(int64_t)> chunk = [&](int64_t i) {
    const int64_t b = begin + i * step;
    const int64_t e = std::min(end, b + step);
    if (b < e) fn(b, e);
  };
  if (!p->run(chunks, chunk)) fn(begin, end);
}

}  // namespace lathe
