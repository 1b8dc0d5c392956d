// The one intra-op pool (parallel.h): the portable kernels' parallel_for
// and XNNPACK's operators run on the same pthreadpool workers, sized once
// (issue 32: two pools, sized separately, spun against each other on two
// cores and made XNNPACK slower at 2 threads than at 1).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "lathe/runtime/parallel.h"

#if LATHE_WITH_PTHREADPOOL
#include <pthreadpool.h>
#endif

namespace lathe {
namespace {

struct RestoreThreads {
  int before = num_threads();
  ~RestoreThreads() { set_num_threads(before); }
};

TEST(ThreadPool, ParallelForCoversTheRangeOnceOnEveryPoolSize) {
  RestoreThreads restore;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    EXPECT_EQ(num_threads(), threads);
    std::vector<std::atomic<int>> seen(1000);
    parallel_for(0, 1000, 10, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)]++;
    });
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << i << " with " << threads << " threads";
  }
}

#if LATHE_WITH_PTHREADPOOL
// What XNNPACK is handed is the pool parallel_for runs on: same workers,
// same size; one thread means no pool (XNNPACK then runs inline).
TEST(ThreadPool, DelegatesGetTheSamePthreadpool) {
  RestoreThreads restore;
  set_num_threads(1);
  EXPECT_EQ(shared_pthreadpool(), nullptr);
  set_num_threads(2);
  const std::shared_ptr<pthreadpool> pool = shared_pthreadpool();
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pthreadpool_get_threads_count(pool.get()), 2u);
  EXPECT_EQ(shared_pthreadpool(), pool);  // one pool, not one per caller
  // parallel_for's chunks run on that pool's threads (and the caller's).
  std::mutex mu;
  std::set<std::thread::id> ran_on;
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard<std::mutex> lock(mu);
    ran_on.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ran_on.size(), 2u);
  // A nested parallel_for (a kernel inside a parallel region) runs inline.
  std::atomic<int> inner{0};
  parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    parallel_for(0, 4, 1, [&](int64_t b, int64_t e) { inner += static_cast<int>(e - b); });
  });
  EXPECT_EQ(inner.load(), 8);
}
#endif

}  // namespace
}  // namespace lathe
