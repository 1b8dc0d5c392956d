// Template bodies for util.h.
#pragma once

#include <algorithm>
#include <climits>

#include "lathe/runtime/parallel.h"

namespace lathe::kernels {

template <size_t N>
void coalesce(std::vector<int64_t>& sizes, std::array<std::vector<int64_t>, N>& strides) {
  // Drop size-1 dims (their stride is irrelevant), then merge dim i into
  // i+1 when stride[i] == stride[i+1] * size[i+1] for every operand.
  std::vector<int64_t> s;
  std::array<std::vector<int64_t>, N> st;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    s.push_back(sizes[d]);
    for (size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
  }
  if (s.empty()) {
    sizes.assign(1, 1);
    for (size_t k = 0; k < N; ++k) strides[k].assign(1, 1);
    return;
  }
  std::vector<int64_t> ms{s[0]};
  std::array<std::vector<int64_t>, N> mst;
  for (size_t k = 0; k < N; ++k) mst[k].push_back(st[k][0]);
  for (size_t d = 1; d < s.size(); ++d) {
    bool mergeable = true;
    for (size_t k = 0; k < N; ++k) mergeable = mergeable && mst[k].back() == st[k][d] * s[d];
    if (mergeable) {
      ms.back() *= s[d];
      for (size_t k = 0; k < N; ++k) mst[k].back() = st[k][d];
    } else {
      ms.push_back(s[d]);
      for (size_t k = 0; k < N; ++k) mst[k].push_back(st[k][d]);
    }
  }
  sizes = std::move(ms);
  strides = std::move(mst);
}

// A loop's rows after coalescing: every dim but the last is an outer dim;
// the last is the row, n long, with per-operand stride inner.
template <size_t N>
struct Rows {
  std::vector<int64_t> sizes;
  std::array<std::vector<int64_t>, N> strides;
  int64_t n = 0;
  std::array<int64_t, N> inner{};
};

template <size_t N>
Rows<N> coalesced_rows(const std::vector<int64_t>& sizes, const std::array<std::vector<int64_t>, N>& strides) {
  Rows<N> r{sizes, strides};
  coalesce<N>(r.sizes, r.strides);
  r.n = r.sizes.back();
  for (size_t k = 0; k < N; ++k) r.inner[k] = r.strides[k].back();
  return r;
}

// Moves counter/off (the outer dims' indices and each operand's offset) to
// the next row like an odometer; false after the last row.
template <size_t N>
bool next_row(const Rows<N>& loop, std::vector<int64_t>& counter, std::array<int64_t, N>& off) {
  for (size_t d = loop.sizes.size() - 1; d-- > 0;) {
    ++counter[d];
    for (size_t k = 0; k < N; ++k) off[k] += loop.strides[k][d];
    if (counter[d] < loop.sizes[d]) return true;
    for (size_t k = 0; k < N; ++k) off[k] -= loop.strides[k][d] * loop.sizes[d];
    counter[d] = 0;
  }
  return false;
}

template <size_t N, typename F>
void for_each_row(const std::vector<int64_t>& sizes_in, const std::array<std::vector<int64_t>, N>& strides_in,
                  F&& fn) {
  for (int64_t s : sizes_in) {
    if (s == 0) return;
  }
  const Rows<N> loop = coalesced_rows<N>(sizes_in, strides_in);
  std::vector<int64_t> counter(loop.sizes.size(), 0);
  std::array<int64_t, N> off{};
  do {
    fn(off, loop.n, loop.inner);
  } while (next_row<N>(loop, counter, off));
}

template <size_t N, typename F>
void parallel_for_each_row(const std::vector<int64_t>& sizes_in, const std::array<std::vector<int64_t>, N>& strides_in,
                           F&& fn) {
  int64_t total = 1;
  for (int64_t s : sizes_in) {
    if (s == 0) return;
    if (__builtin_mul_overflow(total, s, &total)) total = INT64_MAX;
  }
  if (total < kParallelElements || num_threads() <= 1) {
    for_each_row<N>(sizes_in, strides_in, fn);
    return;
  }
  const Rows<N> loop = coalesced_rows<N>(sizes_in, strides_in);
  const int64_t rows = total / loop.n;
  constexpr int64_t kGrain = kParallelElements / 4;
  if (rows == 1) {  // one long row (contiguous operands): split it
    parallel_for(0, loop.n, kGrain, [&](int64_t b, int64_t e) {
      std::array<int64_t, N> off{};
      for (size_t k = 0; k < N; ++k) off[k] = b * loop.inner[k];
      fn(off, e - b, loop.inner);
    });
    return;
  }
  parallel_for(0, rows, std::max<int64_t>(1, kGrain / loop.n), [&](int64_t r0, int64_t r1) {
    // Row r0's counters (outer dims, last fastest) and offsets, then on
    // row by row.
    std::vector<int64_t> counter(loop.sizes.size(), 0);
    std::array<int64_t, N> off{};
    int64_t r = r0;
    for (size_t d = loop.sizes.size() - 1; d-- > 0;) {
      counter[d] = r % loop.sizes[d];
      r /= loop.sizes[d];
      for (size_t k = 0; k < N; ++k) off[k] += counter[d] * loop.strides[k][d];
    }
    for (int64_t row = r0; row < r1; ++row) {
      fn(off, loop.n, loop.inner);
      next_row<N>(loop, counter, off);
    }
  });
}

}  // namespace lathe::kernels
