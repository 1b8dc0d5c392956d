// Helpers for the runtime's and the kernels' unit tests (header only; not
// part of the library): float32 tensors from and to plain vectors, the
// reproducible pseudo-random inputs the kernel tests draw, and the check
// that a program is refused at plan time with a given message.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/tensor.h"
#include "lathe/ir/exported_program.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::testing {

// A contiguous float32 tensor of `sizes` holding `values`.
inline Tensor float_tensor(std::vector<int64_t> sizes, const std::vector<float>& values) {
  Tensor t = Tensor::empty(DType::Float32, std::move(sizes));
  std::copy(values.begin(), values.end(), kernels::mdata<float>(t));
  return t;
}

// The elements of a float32 tensor, in logical order whatever its strides.
inline std::vector<float> float_values(const Tensor& t) {
  Tensor c = kernels::as_contiguous(t);
  const float* p = kernels::cdata<float>(c);
  return std::vector<float>(p, p + c.numel());
}

// n values k / divisor - offset, k drawn from [0, 2000] by a 32-bit LCG
// seeded with `seed` (the same inputs on every machine and run).
inline std::vector<float> lcg_floats(int64_t n, uint32_t seed, float divisor, float offset) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(seed >> 8) % 2001) / divisor - offset;
  }
  return v;
}

// Executor::create(program) must fail, with a message holding each of `parts`.
inline void expect_create_fails(const ExportedProgram& program, std::initializer_list<std::string_view> parts) {
  auto ex = Executor::create(program);
  ASSERT_FALSE(ex.ok());
  const std::string msg = ex.error().message();
  for (std::string_view part : parts) EXPECT_NE(msg.find(part), std::string::npos) << msg;
}

}  // namespace lathe::testing
