// Integer arithmetic without undefined behaviour, in the two meanings Lathe
// needs:
//
//   - as PyTorch's kernels compute fixed-width integer tensors: two's-
//     complement wrap-around (int64 max + 1 is int64 min; INT64_MIN // -1 is
//     INT64_MIN and INT64_MIN % -1 is 0). C++ leaves signed overflow
//     undefined and INT_MIN / -1 traps with SIGFPE on x86, so every integer
//     kernel goes through the wrapping_* functions. Floating types pass
//     straight through, so a kernel writes one expression for both.
//   - as Python computes symbolic sizes: exactly. Lathe holds them in int64,
//     so the checked_* functions say when a result does not fit (nullopt),
//     and the caller reports it instead of returning a wrong shape.
//
// The divisions take a non-zero divisor: callers report division by zero.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

namespace lathe {

namespace int_arith_detail {
// Unsigned arithmetic at least as wide as `unsigned int`: uint16 * uint16
// would otherwise be promoted to (signed) int and could overflow.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
constexpr bool kWraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;
}  // namespace int_arith_detail

template <typename T>
constexpr T wrapping_add(T a, T b) {
  using namespace int_arith_detail;
  if constexpr (kWraps<T>) return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
  else return a + b;
}

template <typename T>
constexpr T wrapping_sub(T a, T b) {
  using namespace int_arith_detail;
  if constexpr (kWraps<T>) return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b));
  else return a - b;
}

template <typename T>
constexpr T wrapping_mul(T a, T b) {
  using namespace int_arith_detail;
  if constexpr (kWraps<T>) return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
  else if constexpr (std::is_same_v<T, bool>) return a && b;  // bool's product, without -Wint-in-bool-context
  else return a * b;
}

// a / b rounded toward zero (C++'s `/`), with INT_MIN / -1 wrapping to INT_MIN.
template <typename T>
constexpr T wrapping_trunc_div(T a, T b) {
  if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) {
    if (b == T(-1)) return wrapping_sub(T(0), a);
  }
  return static_cast<T>(a / b);
}

// a % b with the sign of a (C++'s `%`, torch.fmod); x % -1 is 0.
template <typename T>
constexpr T wrapping_trunc_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}

// a // b rounded toward negative infinity (Python's `//`, torch.floor_divide).
template <typename T>
constexpr T wrapping_floor_div(T a, T b) {
  const T q = wrapping_trunc_div(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (wrapping_trunc_mod(a, b) != T(0) && ((a < 0) != (b < 0))) return static_cast<T>(q - 1);
  }
  return q;
}

// a mod b with the sign of b (Python's `%`, torch.remainder).
template <typename T>
constexpr T wrapping_floor_mod(T a, T b) {
  const T r = wrapping_trunc_mod(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != T(0) && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
  }
  return r;
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The element count of a tensor of `sizes`, exactly: nullopt for a negative
// size or a count past int64. The one place element counts are multiplied
// (Tensor::numel, kernels::numel_of, views, delegate payloads): a broadcast
// view makes any count from no memory (expand [1, 8] -> [2^62, 2^62, 8]),
// so a count is never assumed to fit. A zero size makes the count 0 however
// large the others are.
inline std::optional<int64_t> checked_numel(std::span<const int64_t> sizes) {
  int64_t n = 1;
  bool zero = false, overflow = false;
  for (int64_t d : sizes) {
    if (d < 0) return std::nullopt;
    zero = zero || d == 0;
    overflow = overflow || __builtin_mul_overflow(n, d, &n);
  }
  if (zero) return 0;
  if (overflow) return std::nullopt;
  return n;
}

// a + b, or INT64_MAX past it: for counts that are compared with a limit,
// where "more than int64 holds" and "int64 max" mean the same.
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

// Python's a // b; nullopt for b == 0 and for INT64_MIN // -1 (2^63).
inline std::optional<int64_t> checked_floor_div(int64_t a, int64_t b) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) return std::nullopt;
  return wrapping_floor_div(a, b);
}

// Python's a % b (sign of b); nullopt for b == 0.
inline std::optional<int64_t> checked_floor_mod(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  return wrapping_floor_mod(a, b);
}

// a ** b for b >= 0; nullopt when it does not fit (or b < 0).
inline std::optional<int64_t> checked_pow(int64_t a, int64_t b) {
  if (b < 0) return std::nullopt;
  int64_t r = 1;
  while (b > 0) {
    if (b & 1) {
      auto m = checked_mul(r, a);
      if (!m) return std::nullopt;
      r = *m;
    }
    b >>= 1;
    if (b > 0) {
      auto sq = checked_mul(a, a);
      if (!sq) return std::nullopt;
      a = *sq;
    }
  }
  return r;
}

}  // namespace lathe
