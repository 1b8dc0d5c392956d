// What a graph Value holds while a program runs: a tensor, a (symbolic) int,
// float or bool, or nothing (None, tokens). One EValue per Value, in the
// executor's slot table.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "lathe/core/tensor.h"

namespace lathe {

struct EValue {
  std::variant<std::monostate, Tensor, int64_t, double, bool> v;

  EValue() = default;
  EValue(Tensor t) : v(std::move(t)) {}  // NOLINT(implicit)
  EValue(int64_t i) : v(i) {}            // NOLINT(implicit)
  EValue(double d) : v(d) {}             // NOLINT(implicit)
  EValue(bool b) : v(b) {}               // NOLINT(implicit)

  bool is_none() const { return v.index() == 0; }
  bool is_tensor() const { return v.index() == 1; }
  bool is_int() const { return v.index() == 2; }
  bool is_double() const { return v.index() == 3; }
  bool is_bool() const { return v.index() == 4; }
  const Tensor& tensor() const { return std::get<1>(v); }
  Tensor& tensor() { return std::get<1>(v); }
  int64_t to_int() const { return std::get<2>(v); }
  double to_double() const { return std::get<3>(v); }
  bool to_bool() const { return std::get<4>(v); }
  // "tensor float32 [2, 3]", "int 4", ... for error messages.
  std::string describe() const;
};

// static_cast from a double to an integer type where that is defined: NaN
// becomes 0, values past the type's range its nearest bound (a float scalar
// from a file may be 1e308; casting it was undefined behaviour).
template <typename T>
T saturating_cast(double v) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (v != v) return T(0);
  // Both bounds are exact in double (-2^k and 2^k, 2^k - 1 rounding up to 2^k).
  constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::min();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// A number argument (Scalar in ATen schemas). Its kind takes part in type
// promotion: a Python float scalar never makes an int tensor's result double.
struct Scalar {
  enum class Kind { Bool, Int, Float };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double d = 0;

  static Scalar from_int(int64_t v) { return Scalar{Kind::Int, v, static_cast<double>(v)}; }
  static Scalar from_double(double v) { return Scalar{Kind::Float, saturating_cast<int64_t>(v), v}; }
  static Scalar from_bool(bool v) { return Scalar{Kind::Bool, v ? 1 : 0, v ? 1.0 : 0.0}; }
  bool is_floating() const { return kind == Kind::Float; }
  double to_double() const { return d; }
  int64_t to_int() const { return i; }
  // The scalar converted to element type T (what ATen does before the loop).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return kind == Kind::Float ? d != 0 : i != 0;
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(kind == Kind::Float ? d : static_cast<double>(i));
    // Through int64, wrapping to narrower types as x86 PyTorch does (-1.0 into uint8 is 255).
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(kind == Kind::Float ? saturating_cast<int64_t>(d) : i);
    else return kind == Kind::Float ? static_cast<T>(d) : static_cast<T>(i);
  }
};

}  // namespace lathe
