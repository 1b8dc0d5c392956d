// Intra-op parallelism for the heavier portable kernels (matmul, conv).
//
// One process-wide pool, sized by set_num_threads() (like
// torch.set_num_threads), shared with the delegates: with XNNPACK built it
// is a pthreadpool that XNNPACK's operators run on too. parallel_for runs
// inline when the pool has one thread, when the range is small, or when
// another parallel_for already
// holds the pool (executors running concurrently never wait on each other's
// work, they just run serially).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

struct pthreadpool;  // pthreadpool.h's pool (pthreadpool_t is a pointer to it)

namespace lathe {

void set_num_threads(int n);  // n >= 1
int num_threads();

// The same pool as pthreadpool, for delegates whose library takes one
// (XNNPACK): kept alive while held; nullptr when it has one thread (run
// inline) or Lathe is built without pthreadpool.
std::shared_ptr<pthreadpool> shared_pthreadpool();

// Calls fn(begin, end) over disjoint chunks covering [begin, end), each at
// least `grain` long (except the last).
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace lathe
