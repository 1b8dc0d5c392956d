// splitmix64: a tiny, fast generator specified bit for bit, so a seed gives
// the same numbers on every machine (random --verify inputs, the sweep's
// programs).
#pragma once

#include <cstdint>

namespace lathe {

struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
};

}  // namespace lathe
