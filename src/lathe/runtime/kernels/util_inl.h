// Template bodies for util.h.
#pragma once

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

template <size_t N, typename F>
void for_each_row(const std::vector<int64_t>& sizes_in, const std::array<std::vector<int64_t>, N>& strides_in,
                  F&& fn) {
  for (int64_t s : sizes_in) {
    if (s == 0) return;
  }
  std::vector<int64_t> sizes = sizes_in;
  std::array<std::vector<int64_t>, N> strides = strides_in;
  coalesce<N>(sizes, strides);
  const size_t rank = sizes.size();
  const int64_t n = sizes[rank - 1];
  std::array<int64_t, N> inner{};
  for (size_t k = 0; k < N; ++k) inner[k] = strides[k][rank - 1];
  std::vector<int64_t> counter(rank, 0);
  std::array<int64_t, N> off{};
  while (true) {
    fn(off, n, inner);
    // Advance the outer dims like an odometer.
    size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++counter[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (counter[d] < sizes[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * sizes[d];
      counter[d] = 0;
    }
  }
}

}  // namespace lathe::kernels
