// Helpers shared by the libFuzzer harnesses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace lathe::fuzz {

// The input in a heap block of exactly its size, so that ASan reports any
// read past its end (libFuzzer's own buffer is exact too, but readers keep a
// shared_ptr to what they view).
inline std::shared_ptr<std::byte[]> exact_copy(const uint8_t* data, size_t size) {
  std::shared_ptr<std::byte[]> buf(new std::byte[size == 0 ? 1 : size]);
  if (size) std::memcpy(buf.get(), data, size);
  return buf;
}

// A property the code promises was broken: report it as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "FUZZ INVARIANT BROKEN: %s\n", what.c_str());
  std::abort();
}

// Every error must say something (and name where it came from).
template <typename R>
void check_error(const R& r, const char* prefix) {
  if (r.ok()) return;
  const std::string& m = r.error().message();
  if (m.empty()) fail("empty error message");
  if (prefix && m.rfind(prefix, 0) != 0) fail("error does not start with '" + std::string(prefix) + "': " + m);
}

}  // namespace lathe::fuzz
