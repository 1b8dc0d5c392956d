// Running a fuzzed program under small work limits, shared by
// fuzz_program_structure (programs decoded from mutated JSON) and
// fuzz_runtime (programs built from the sweep's recipes and from the kernel
// registry): give the state the signature names zero-ish tensors, verify,
// make inputs from the metadata (values from ordinary to extreme), and run
// the executor twice (buffer mutations carry over).
//
// Errors are expected (a verified program may still ask a kernel for
// nonsense); each must say something. Crashes, sanitizer reports, hangs and
// out-of-memory are the findings.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "fuzz_util.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/verify.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe::fuzz {

// The largest tensor anything allocates through Tensor::try_empty (kernel
// outputs, grown buffers): a program may legitimately ask for more than
// libFuzzer's -rss_limit_mb, which must be an error here, not an OOM report.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{64} << 20;
// The largest state tensor or input the harness makes itself.
inline constexpr uint64_t kMaxMadeBytes = uint64_t{1} << 20;
// while_loop bodies: a fuzzed condition may never turn false.
inline constexpr int64_t kMaxLoopIterations = 256;
// Elements one node may touch per run (ExecutorOptions::max_elements_per_node,
// 2^34 by default): 2^24 keeps every run well inside libFuzzer's -timeout.
inline constexpr int64_t kMaxElementsPerNode = int64_t{1} << 24;

inline void limit_work() {
  static const bool once = [] {
    Tensor::set_max_tensor_bytes(kMaxTensorBytes);
    return true;
  }();
  (void)once;
}

struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool percent(unsigned p) { return below(100) < p; }
};

inline uint64_t hash_bytes(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

// Integers that break size and index arithmetic.
inline constexpr int64_t kExtremeInts[] = {
    0, 1, -1, 2, -2, 3, 7, 255, 256, 65535, 65536,
    std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(),
    int64_t{1} << 31, int64_t{1} << 32, (int64_t{1} << 32) + 1, int64_t{1} << 53,
    int64_t{1} << 62, -(int64_t{1} << 62), (int64_t{1} << 62) + (int64_t{1} << 61),
    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
    std::numeric_limits<int64_t>::max() - 1, std::numeric_limits<int64_t>::min() + 1,
};
inline int64_t extreme_int(Rng& r) { return kExtremeInts[r.below(std::size(kExtremeInts))]; }

inline double extreme_double(Rng& r) {
  static const double v[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-40, 1e30, -1e30, 65504.0, 3.4e38, 1e308, -1e308,
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(), 9.2233720368547758e18, -9.2233720368547758e18};
  return v[r.below(std::size(v))];
}

// Element values: `extreme_percent` of them from the tables above, the rest
// ordinary (integers in [0, 4): valid indices of small tensors; floats in
// [-1, 1)).
inline Status fill_tensor(Tensor& t, Rng& r, unsigned extreme_percent) {
  if (t.numel() == 0) return Status::Ok();
  return kernels::dispatch_storage(t.dtype, "fuzz fill", [&](auto tag) -> Status {
    using T = decltype(tag);
    T* p = kernels::mdata<T>(t);
    for (int64_t k = 0; k < t.numel(); ++k) {
      const bool extreme = r.percent(extreme_percent);
      if constexpr (std::is_same_v<T, bool>) {
        p[k] = (r.next() & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[k] = static_cast<T>(extreme ? extreme_int(r) : static_cast<int64_t>(r.below(4)));
      } else {
        const double d = extreme ? extreme_double(r) : static_cast<double>(r.below(2048)) / 1024.0 - 1.0;
        p[k] = T(static_cast<float>(d));
      }
    }
    return Status::Ok();
  });
}

// Concrete sizes of a tensor's metadata (symbolic dims at their hint).
inline std::optional<std::vector<int64_t>> sizes_of(const TensorMeta& m) {
  std::vector<int64_t> sizes;
  for (const SymDim& d : m.sizes) {
    if (d.is_concrete()) {
      sizes.push_back(d.value());
    } else if (d.expr().hint && std::holds_alternative<int64_t>(*d.expr().hint)) {
      sizes.push_back(std::get<int64_t>(*d.expr().hint));
    } else {
      return std::nullopt;
    }
  }
  return sizes;
}

// A fresh tensor for `m` (at most kMaxMadeBytes), or nullopt.
inline std::optional<Tensor> make_tensor(const TensorMeta& m, Rng& r, unsigned extreme_percent) {
  auto sizes = sizes_of(m);
  if (!sizes) return std::nullopt;
  auto t = Tensor::try_empty(m.dtype, *sizes, kMaxMadeBytes);
  if (!t.ok()) return std::nullopt;
  if (!fill_tensor(*t, r, extreme_percent).ok()) return std::nullopt;
  return std::move(t).value();
}

// State tensors for every parameter, buffer and tensor constant the
// signature names and the state lacks (a program decoded from JSON alone has
// none). False when one cannot be made (no metadata, too large).
inline bool fill_missing_state(ExportedProgram& ep, Rng& r) {
  const Graph& g = ep.graph();
  for (size_t i = 0; i < ep.input_specs.size() && i < g.inputs().size(); ++i) {
    const InputSpec& spec = ep.input_specs[i];
    NamedTensors* table = nullptr;
    if (spec.kind == InputKind::Parameter) table = &ep.parameters;
    if (spec.kind == InputKind::Buffer) table = spec.persistent ? &ep.buffers : &ep.constants;
    if (spec.kind == InputKind::TensorConstant) table = &ep.constants;
    if (!table || table->contains(spec.target)) continue;
    const Value* v = g.inputs()[i].tensor();
    if (!v || !v->meta()) return false;
    auto t = make_tensor(*v->meta(), r, 10);
    if (!t) return false;
    table->set(spec.target, std::move(*t));
  }
  return true;
}

// Verifies `ep` and, if it verifies, runs it twice on inputs made from its
// metadata. Every error must be non-empty.
inline void run_if_verified(const ExportedProgram& ep, Rng& r, unsigned extreme_percent) {
  limit_work();
  Status ok = verify(ep, "forward");
  check_error(ok, nullptr);
  if (!ok.ok()) return;
  ExecutorOptions options;
  options.max_loop_iterations = kMaxLoopIterations;
  options.max_elements_per_node = kMaxElementsPerNode;
  auto ex = Executor::create(ep, options);
  check_error(ex, nullptr);
  if (!ex.ok()) return;
  std::vector<EValue> inputs;
  for (const IoInfo& in : (*ex)->user_inputs()) {
    if (in.kind == ValueKind::Tensor && in.meta) {
      auto t = make_tensor(*in.meta, r, extreme_percent);
      if (!t) return;
      inputs.emplace_back(std::move(*t));
    } else if (in.kind == ValueKind::SymInt) {
      inputs.emplace_back(r.percent(50) ? static_cast<int64_t>(r.below(8)) : extreme_int(r));
    } else if (in.kind == ValueKind::SymFloat) {
      inputs.emplace_back(extreme_double(r));
    } else if (in.kind == ValueKind::SymBool) {
      inputs.emplace_back(r.percent(50));
    } else {
      return;
    }
  }
  for (int call = 0; call < 2; ++call) {
    auto out = (*ex)->run(inputs);
    check_error(out, nullptr);
    if (!out.ok()) return;
  }
}

}  // namespace lathe::fuzz
