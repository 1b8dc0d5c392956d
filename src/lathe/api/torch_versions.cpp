// The PyTorch releases Lathe is verified against (lathe.h).
#include <array>
#include <charconv>
#include <string_view>

#include "lathe/ir/aten_schemas.h"
#include "lathe/lathe.h"

namespace lathe {
namespace {

// Oldest first. Each is pinned by a requirements file and tested by a make
// target: 2.13.0 by tools/requirements.txt (`make test`), 2.14.1 by
// tools/requirements-torch214.txt (`make test-torch-next`). The ATen schema
// table (ir/aten_schemas.inc) holds each one's schemas: AtenSchemasTest
// checks it names these releases, tests/torch/core_aten_test.py that the
// requirements files pin them.
constexpr std::array<std::string_view, 2> kVerified = {"2.13.0", "2.14.1"};

// "2.14.1+cu130" -> {2, 14, 1}; "2.15.0a0+git..." -> {2, 15, 0}; what does
// not start with a number -> false.
bool parse_release(std::string_view v, std::array<int, 3>& out) {
  out = {0, 0, 0};
  for (size_t i = 0; i < 3; ++i) {
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out[i]);
    if (ec != std::errc()) return i > 0;
    v.remove_prefix(static_cast<size_t>(end - v.data()));
    if (v.empty() || v.front() != '.') return true;
    v.remove_prefix(1);
  }
  return true;
}

std::string_view release_of(std::string_view v) { return v.substr(0, v.find_first_of("+ ")); }

}  // namespace

std::vector<std::string> verified_torch_versions() { return {kVerified.begin(), kVerified.end()}; }

TorchVersionStatus torch_version_status(std::string_view torch_version) {
  std::array<int, 3> v{};
  if (!parse_release(torch_version, v)) return TorchVersionStatus::Unknown;
  for (std::string_view r : kVerified) {
    if (release_of(torch_version) == r) return TorchVersionStatus::Verified;
  }
  std::array<int, 3> newest{};
  parse_release(kVerified.back(), newest);
  return v > newest ? TorchVersionStatus::Newer : TorchVersionStatus::Older;
}

}  // namespace lathe
