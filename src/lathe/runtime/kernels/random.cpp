#include "lathe/runtime/kernels/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "lathe/runtime/kernels/register.h"

namespace lathe::kernels {

namespace {

// The process-wide generator: a seed (the Philox key) and the next unused
// counter. Each element consumes one counter.
struct Generator {
  std::mutex mu;
  uint64_t seed = kDefaultRandomSeed;
  uint64_t next = 0;
};

Generator& generator() {
  static Generator g;
  return g;
}

struct Stream {
  uint64_t seed, first;
};

// Reserves `n` counters for one call.
Stream reserve(uint64_t n) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  Stream s{g.seed, g.next};
  g.next += n;
  return s;
}

std::array<uint32_t, 4> block(const Stream& s, uint64_t i) {
  const uint64_t c = s.first + i;
  return philox4x32_10({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0},
                       {static_cast<uint32_t>(s.seed), static_cast<uint32_t>(s.seed >> 32)});
}

constexpr double kTwoPow53 = 9007199254740992.0;

// [0, 1) with 53 random bits.
double unit53(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(bits & ((1ull << 53) - 1)) / kTwoPow53;
}

// A double into any storage type (16-bit floats via float).
template <typename T>
T store(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <typename T>
constexpr bool kFloating = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

Status check_fill_target(const Tensor& out, const char* op) {
  LATHE_RETURN_IF_ERROR(check_writable(out, op));
  return check_out(out, out.dtype, out.sizes, op);
}

// Calls f(T{}) for out's dtype when it is floating.
template <typename F>
Status dispatch_floating(DType dtype, const char* op, F&& f) {
  return dispatch_storage(dtype, op, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (!kFloating<T>) {
      return make_error(std::string(op) + ": needs a floating dtype, got " + std::string(dtype_name(dtype)));
    } else {
      return f(tag);
    }
  });
}

}  // namespace

void set_random_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.next = 0;
}

uint64_t random_seed() {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.seed;
}

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint64_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kW0;
      k[1] += kW1;
    }
    const uint64_t p0 = kM0 * c[0], p1 = kM1 * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

Status uniform_out(Tensor& out, double from, double to) {
  LATHE_RETURN_IF_ERROR(check_fill_target(out, "uniform"));
  if (!(from <= to) || !std::isfinite(from) || !std::isfinite(to)) {
    return make_error("uniform: needs finite from <= to, got [" + std::to_string(from) + ", " + std::to_string(to) + ")");
  }
  return dispatch_floating(out.dtype, "uniform", [&](auto tag) -> Status {
    using T = decltype(tag);
    const int64_t n = out.numel();
    const Stream s = reserve(static_cast<uint64_t>(n));
    T* o = mdata<T>(out);
    for (int64_t i = 0; i < n; ++i) {
      const auto w = block(s, static_cast<uint64_t>(i));
      double v = from + (to - from) * unit53(w[0], w[1]);
      T t = store<T>(v);
      // Rounding to the element type may reach `to`; the interval is open there.
      if (from < to && static_cast<double>(t) >= to) t = store<T>(from);
      o[i] = t;
    }
    return Status::Ok();
  });
}

// Box-Muller: u1 in (0, 1] keeps the log finite.
Status normal_out(Tensor& out, double mean, double std) {
  LATHE_RETURN_IF_ERROR(check_fill_target(out, "normal"));
  if (!(std >= 0.0)) return make_error("normal: std must be >= 0, got " + std::to_string(std));
  return dispatch_floating(out.dtype, "normal", [&](auto tag) -> Status {
    using T = decltype(tag);
    const int64_t n = out.numel();
    const Stream s = reserve(static_cast<uint64_t>(n));
    T* o = mdata<T>(out);
    for (int64_t i = 0; i < n; ++i) {
      const auto w = block(s, static_cast<uint64_t>(i));
      const double u1 = 1.0 - unit53(w[0], w[1]);
      const double u2 = unit53(w[2], w[3]);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      o[i] = store<T>(mean + std * z);
    }
    return Status::Ok();
  });
}

Status randint_out(Tensor& out, int64_t low, int64_t high) {
  LATHE_RETURN_IF_ERROR(check_fill_target(out, "randint"));
  if (low >= high) {
    return make_error("randint: low (" + std::to_string(low) + ") must be less than high (" + std::to_string(high) + ")");
  }
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return dispatch_storage(out.dtype, "randint", [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      if (low < 0 || high > 2) return make_error("randint: bool output needs 0 <= low < high <= 2");
    } else if constexpr (std::is_integral_v<T>) {
      if (low < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          high - 1 > static_cast<int64_t>(std::numeric_limits<T>::max())) {
        return make_error("randint: [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit " +
                          std::string(dtype_name(out.dtype)));
      }
    }
    const int64_t n = out.numel();
    const Stream s = reserve(static_cast<uint64_t>(n));
    T* o = mdata<T>(out);
    for (int64_t i = 0; i < n; ++i) {
      const auto w = block(s, static_cast<uint64_t>(i));
      // 64 random bits scaled to the range (bias below 2^-64 * range).
      const uint64_t bits = (static_cast<uint64_t>(w[0]) << 32) | w[1];
      const uint64_t k = static_cast<uint64_t>((static_cast<unsigned __int128>(bits) * range) >> 64);
      const auto v = static_cast<int64_t>(static_cast<uint64_t>(low) + k);
      if constexpr (std::is_integral_v<T>) o[i] = static_cast<T>(v);
      else o[i] = store<T>(static_cast<double>(v));
    }
    return Status::Ok();
  });
}

// Fisher-Yates on 0..n-1, one counter per swap.
Status randperm_out(Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_fill_target(out, "randperm"));
  if (out.sizes.size() != 1) return make_error("randperm: out must be 1-D, got " + shape_string(out.sizes));
  const int64_t n = out.numel();
  return dispatch_storage(out.dtype, "randperm", [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return make_error("randperm: bool output is not supported");
    } else {
      if constexpr (std::is_integral_v<T>) {
        if (n > 0 && n - 1 > static_cast<int64_t>(std::numeric_limits<T>::max())) {
          return make_error("randperm: n = " + std::to_string(n) + " does not fit " + std::string(dtype_name(out.dtype)));
        }
      }
      std::vector<int64_t> perm(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) perm[i] = i;
      const Stream s = reserve(static_cast<uint64_t>(n));
      for (int64_t i = n - 1; i > 0; --i) {
        const auto w = block(s, static_cast<uint64_t>(i));
        const uint64_t bits = (static_cast<uint64_t>(w[0]) << 32) | w[1];
        const auto j = static_cast<int64_t>((static_cast<unsigned __int128>(bits) * static_cast<uint64_t>(i + 1)) >> 64);
        std::swap(perm[i], perm[j]);
      }
      T* o = mdata<T>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = store<T>(static_cast<double>(perm[i]));
      return Status::Ok();
    }
  });
}

Status bernoulli_out(const Tensor* probs, double p, Tensor& out) {
  LATHE_RETURN_IF_ERROR(check_fill_target(out, "bernoulli"));
  std::vector<double> ps;
  if (probs) {
    LATHE_RETURN_IF_ERROR(check_input(*probs, "bernoulli", "self"));
    if (probs->sizes != out.sizes) return make_error("bernoulli: probabilities and out differ in shape");
    const Tensor pc = as_contiguous(as_dtype(*probs, DType::Float64));
    ps.assign(cdata<double>(pc), cdata<double>(pc) + pc.numel());
    for (double q : ps) {
      if (!(q >= 0.0 && q <= 1.0)) return make_error("bernoulli: probabilities must be in [0, 1], got " + std::to_string(q));
    }
  } else if (!(p >= 0.0 && p <= 1.0)) {
    return make_error("bernoulli: p must be in [0, 1], got " + std::to_string(p));
  }
  return dispatch_storage(out.dtype, "bernoulli", [&](auto tag) -> Status {
    using T = decltype(tag);
    const int64_t n = out.numel();
    const Stream s = reserve(static_cast<uint64_t>(n));
    T* o = mdata<T>(out);
    for (int64_t i = 0; i < n; ++i) {
      const auto w = block(s, static_cast<uint64_t>(i));
      const double q = probs ? ps[static_cast<size_t>(i)] : p;
      o[i] = store<T>(unit53(w[0], w[1]) < q ? 1.0 : 0.0);
    }
    return Status::Ok();
  });
}

Status dropout_out(const Tensor& in_raw, double p, Tensor& out, Tensor& mask) {
  LATHE_RETURN_IF_ERROR(check_input(in_raw, "native_dropout", "input"));
  if (!(p >= 0.0 && p <= 1.0)) return make_error("native_dropout: p must be in [0, 1], got " + std::to_string(p));
  LATHE_RETURN_IF_ERROR(check_out(out, in_raw.dtype, in_raw.sizes, "native_dropout"));
  LATHE_RETURN_IF_ERROR(check_out(mask, DType::Bool, in_raw.sizes, "native_dropout"));
  const Tensor in = as_contiguous(in_raw);
  // p == 1 drops everything (scale 0 rather than inf, as ATen).
  const double scale = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
  return dispatch_floating(in.dtype, "native_dropout", [&](auto tag) -> Status {
    using T = decltype(tag);
    const int64_t n = in.numel();
    const Stream s = reserve(static_cast<uint64_t>(n));
    const T* x = cdata<T>(in);
    T* o = mdata<T>(out);
    bool* m = mdata<bool>(mask);
    for (int64_t i = 0; i < n; ++i) {
      const auto w = block(s, static_cast<uint64_t>(i));
      m[i] = unit53(w[0], w[1]) >= p;
      o[i] = m[i] ? store<T>(static_cast<double>(x[i]) * scale) : store<T>(0.0);
    }
    return Status::Ok();
  });
}

// ---- adapters ------------------------------------------------------------------
namespace {

// dtype from the call, else `fallback`. Every tensor Lathe makes is a
// strided CPU tensor: a layout or device naming anything else is refused,
// pin_memory is accepted and means nothing here.
Result<DType> out_dtype(KernelCall& c, DType fallback) {
  for (const NamedArgument& a : c.node().inputs()) {
    if (const auto* layout = a.arg.get_if<LayoutArg>(); layout && layout->layout != 0) {  // 0: torch.strided
      return c.arg_error("layout", "only torch.strided is supported");
    }
    if (const auto* device = a.arg.get_if<DeviceArg>(); device && device->device.type != "cpu") {
      return c.arg_error("device", "only the CPU is supported, got " + device->device.type);
    }
  }
  LATHE_ASSIGN_OR_RETURN(auto dtype, c.dtype_arg("dtype"));
  return dtype.value_or(fallback);
}

// rand / randn (size) and rand_like / randn_like (self).
template <bool normal, bool like>
Status fill_kernel(KernelCall& c) {
  std::vector<int64_t> size;
  DType fallback = DType::Float32;
  if constexpr (like) {
    LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
    size = self->sizes;
    fallback = self->dtype;
  } else {
    LATHE_ASSIGN_OR_RETURN(size, c.int_list("size"));
  }
  for (int64_t d : size) {
    if (d < 0) return c.arg_error("size", "negative dimension " + std::to_string(d));
  }
  LATHE_ASSIGN_OR_RETURN(DType dt, out_dtype(c, fallback));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, size));
  return normal ? normal_out(*out, 0.0, 1.0) : uniform_out(*out, 0.0, 1.0);
}

// normal_functional(self, mean, std) / uniform(self, from, to): self's
// shape and dtype.
template <bool normal>
Status fill_like_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  LATHE_ASSIGN_OR_RETURN(double a, c.double_arg(normal ? "mean" : "from", 0.0));
  LATHE_ASSIGN_OR_RETURN(double b, c.double_arg(normal ? "std" : "to", 1.0));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return normal ? normal_out(*out, a, b) : uniform_out(*out, a, b);
}

// randint(high, size) / randint.low(low, high, size); int64 by default.
Status randint_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(int64_t low, c.int_arg("low", 0));
  LATHE_ASSIGN_OR_RETURN(int64_t high, c.int_arg("high"));
  LATHE_ASSIGN_OR_RETURN(auto size, c.int_list("size"));
  for (int64_t d : size) {
    if (d < 0) return c.arg_error("size", "negative dimension " + std::to_string(d));
  }
  if (low >= high) return c.arg_error("high", "must be greater than low (" + std::to_string(low) + ")");
  LATHE_ASSIGN_OR_RETURN(DType dt, out_dtype(c, DType::Int64));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, size));
  return randint_out(*out, low, high);
}

Status randperm_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(int64_t n, c.int_arg("n"));
  if (n < 0) return c.arg_error("n", "must be >= 0, got " + std::to_string(n));
  LATHE_ASSIGN_OR_RETURN(DType dt, out_dtype(c, DType::Int64));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, dt, {n}));
  return randperm_out(*out);
}

// bernoulli.p(self, p): self gives shape and dtype; bernoulli.default(self):
// self holds the probabilities.
Status bernoulli_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* self, c.tensor("self"));
  const bool scalar_p = c.node().target().find("bernoulli.p") != std::string::npos;
  double p = 0.5;
  if (scalar_p) {
    LATHE_ASSIGN_OR_RETURN(p, c.double_arg("p", 0.5));
  } else if (is_integral(self->dtype, true)) {
    return c.arg_error("self", "probabilities must be floating, got " + std::string(dtype_name(self->dtype)));
  }
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, self->dtype, self->sizes));
  return bernoulli_out(scalar_p ? nullptr : self, p, *out);
}

// native_dropout(input, p, train?): train None counts as training, as in
// ATen; in eval mode the output is the input and the mask all true.
Status native_dropout_kernel(KernelCall& c) {
  LATHE_ASSIGN_OR_RETURN(const Tensor* input, c.tensor("input"));
  LATHE_ASSIGN_OR_RETURN(double p, c.double_arg("p"));
  bool train = true;
  if (c.has("train")) {
    LATHE_ASSIGN_OR_RETURN(train, c.bool_arg("train"));
  }
  if (!(p >= 0.0 && p <= 1.0)) return c.arg_error("p", "must be in [0, 1], got " + std::to_string(p));
  LATHE_ASSIGN_OR_RETURN(Tensor * out, c.alloc_output(0, input->dtype, input->sizes));
  Tensor out_t = *out;  // alloc_output(1) may invalidate the pointer
  LATHE_ASSIGN_OR_RETURN(Tensor * mask, c.alloc_output(1, DType::Bool, input->sizes));
  if (train) return dropout_out(*input, p, out_t, *mask);
  LATHE_RETURN_IF_ERROR(copy_into(*input, out_t));
  std::fill(mdata<bool>(*mask), mdata<bool>(*mask) + mask->numel(), true);
  return Status::Ok();
}

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  register_overloads(r, "rand", {"default"}, fill_kernel<false, false>);
  register_overloads(r, "randn", {"default"}, fill_kernel<true, false>);
  register_overloads(r, "rand_like", {"default"}, fill_kernel<false, true>);
  register_overloads(r, "randn_like", {"default"}, fill_kernel<true, true>);
  register_overloads(r, "randint", {"default", "low"}, randint_kernel);
  register_overloads(r, "randperm", {"default"}, randperm_kernel);
  register_overloads(r, "bernoulli", {"p", "default"}, bernoulli_kernel);
  register_overloads(r, "normal_functional", {"default"}, fill_like_kernel<true>);
  register_overloads(r, "uniform", {"default"}, fill_like_kernel<false>);
  // Replaces copy.cpp's eval-only entry (registered earlier).
  register_overloads(r, "native_dropout", {"default"}, native_dropout_kernel);
}

}  // namespace lathe::kernels
