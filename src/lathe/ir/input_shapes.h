// What a method's signature must hold for its inputs to be checkable, so a
// program that breaks it is refused when it is loaded (serde's reader) or
// verified (verify(), for programs built in memory), never run with the
// check quietly off:
//
//   * every range in range_constraints has min_val <= max_val (an empty
//     range refuses every size: "outside s77's range [64, 1]");
//   * no placeholder declares a negative size;
//   * every symbolic size of a user input (a tensor dim, or a SymInt
//     input's value) parses, names only symbols range_constraints bounds
//     (torch.export writes a range for every input symbol), and can be
//     computed at the bounded ends of those ranges (no division by zero,
//     no result past 64 bits).
//
// Sizes of intermediate values (unbacked u0 from .item(), ...) are not
// inputs and are not checked here. The runtime's InputChecker checks each
// call's sizes against what this lets through.
#pragma once

#include <string>
#include <string_view>

#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"

namespace lathe {

// The first violation, e.g.
//   user input 'x' dim 0: size "s77//0" cannot be computed for s77 = 1
//   (the lower end of its range): division by zero (1 // 0)
// Callers prefix where the program came from (file and record, method).
Status check_input_shapes(const ExportedProgram& ep);

// A size expression for a message: quoted, cut to its first 120
// characters when longer (a hostile one can be megabytes).
std::string quoted_size(std::string_view text);

}  // namespace lathe
