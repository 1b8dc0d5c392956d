// The header of a .npy file: the Python dict literal NumPy writes after the
// magic, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// NumPy reads it with ast.literal_eval and then insists on exactly these
// three keys, a bool and a tuple of ints. This parser accepts the literals
// NumPy's writers produce and refuses, by name, anything it would read
// differently or not at all (a float or hexadecimal dimension, a string for
// fortran_order, a repeated or unknown key), so a file is never read with
// another shape or order than NumPy gives it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lathe/core/result.h"

namespace lathe {

struct NpyHeader {
  std::string descr;  // the type string as written, e.g. "<f4", "|b1"
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

Result<NpyHeader> parse_npy_header(std::string_view text);

}  // namespace lathe
