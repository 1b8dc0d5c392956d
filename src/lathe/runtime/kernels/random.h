// Random tensors (rand, randn, randint, randperm, bernoulli, normal,
// uniform, dropout) from Lathe's own generator: Philox4x32-10, a
// counter-based generator (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC 2011). Each element draws one 128-bit block, the Philox
// function of (counter, seed); a call reserves a run of counters from one
// process-wide position, under a lock, so concurrent calls never share
// numbers and a fixed seed and call order give the same tensors. The
// streams are not PyTorch's: only the distributions match.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "lathe/runtime/kernels/util.h"

namespace lathe::kernels {

inline constexpr uint64_t kDefaultRandomSeed = 0x4c617468652d3031ull;

// Reseeds the process-wide generator and restarts its stream.
void set_random_seed(uint64_t seed);
uint64_t random_seed();

// One Philox4x32-10 block (exposed for the known-answer test).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// Fills contiguous, writable `out` (any floating dtype):
// uniform on [from, to), normal(mean, std).
Status uniform_out(Tensor& out, double from, double to);
Status normal_out(Tensor& out, double mean, double std);
// Integers uniform on [low, high) in out's (numeric) dtype.
Status randint_out(Tensor& out, int64_t low, int64_t high);
// A random permutation of 0..n-1, n = out's numel (1-D out).
Status randperm_out(Tensor& out);
// out[i] = 1 with probability p (probs == nullptr) or probs[i] (same shape as out).
Status bernoulli_out(const Tensor* probs, double p, Tensor& out);
// Training dropout: mask[i] ~ bernoulli(1 - p), out = mask ? in / (1 - p) : 0.
Status dropout_out(const Tensor& in, double p, Tensor& out, Tensor& mask);

}  // namespace lathe::kernels
