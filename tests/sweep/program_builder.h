// Builds the ir::Program a recipe describes (program_spec.h), through
// GraphBuilder, laid out as torch.export would lay it out: parameters,
// buffers, constants, then user inputs; buffer mutations before user
// outputs. Weight values are drawn from the recipe's seed and the weight's
// name, so the same recipe always builds the same bytes.
//
// The tensors an op owns become, by WeightKind:
//   Parameter        p_<fqn>                         (ep.parameters)
//   Buffer           b_<fqn>, persistent or not      (ep.buffers / ep.constants)
//   Constant         c_<name>                        (ep.constants)
//   MutableBuffer    b_<fqn>; new = b*0.5 + 0.25 is a buffer_mutation output;
//                    the op reads the old or the new value
//   UserInput        a user input after the activations
//   FoldedFromState  add(p_<fqn>, c_<fqn>_c)         (foldable: state only)
//   RuntimeComputed  mul(p_<fqn>, sigmoid(<fqn>_scale))   (a user input)
#pragma once

#include "lathe/core/result.h"
#include "lathe/ir/program.h"
#include "sweep/program_spec.h"

namespace lathe::sweep {

// An error (naming the method and op) if the recipe's sizes do not fit.
Result<Program> build_program(const ProgramSpec& spec);

}  // namespace lathe::sweep
