// Intra-op parallelism for the heavier portable kernels (matmul, conv).
//
// One process-wide pool, sized by set_num_threads() (like
// torch.set_num_threads). parallel_for runs inline when the pool has one
// thread, when the range is small, or when another parallel_for already
// holds the pool (executors running concurrently never wait on each other's
// work, they just run serially).
#pragma once

#include <cstdint>
#include <functional>

namespace lathe {

void set_num_threads(int n);  // n >= 1
int num_threads();

// Calls fn(begin, end) over disjoint chunks covering [begin, end), each at
// least `grain` long (except the last).
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace lathe
