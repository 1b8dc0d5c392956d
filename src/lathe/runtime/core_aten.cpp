#include "lathe/runtime/core_aten.h"

namespace lathe {

const std::vector<std::string_view>& core_aten_ops() {
  static const std::vector<std::string_view> ops = {
#include "lathe/runtime/core_aten_ops.inc"
  };
  return ops;
}

const std::vector<CoreAtenGap>& core_aten_gaps() {
  static const std::vector<CoreAtenGap> gaps = {
      {"aten._fft_r2c.default",
       "complex output: Lathe's kernels have no complex arithmetic, so nothing after an FFT could run"},
      {"aten._fft_c2r.default", "complex input: Lathe's kernels have no complex arithmetic"},
  };
  return gaps;
}

std::string_view core_aten_torch_version() { return "2.13.0"; }

}  // namespace lathe
