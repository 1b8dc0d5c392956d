// Where a method's inputs come from when the user gives none, in the order a
// user would expect:
//
//   1. the fixture's reference calls beside the archive
//      (<stem>.ref/<method>/call_<k>/input_*.npy) - they come with PyTorch's
//      outputs, so `--check` can compare;
//   2. the archive's own sample inputs (data/sample_inputs/<method>.pt or
//      serialized_example_inputs.pt, a torch.save pickle);
//   3. for differential checks only: seeded random inputs built from the
//      input metadata (random_inputs in differential.h).
//
// `lathe run` uses 1-2; `lathe transform --verify` uses 2, 1, then 3 (the
// archive's own inputs are what the program was exported with).
#pragma once

#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/harness/reference.h"
#include "lathe/ir/program.h"

namespace lathe {

struct DefaultInputs {
  std::vector<ReferenceCall> calls;  // outputs empty unless from reference files
  std::string source;                // "reference inputs at DIR", "the archive's sample inputs", ...
};

// The method's sample inputs as tensors, in signature order; an empty vector
// when the archive has none. A sample input that is not a tensor (a Python
// int or float the method takes) is an error naming its position and kind.
Result<std::vector<Tensor>> sample_input_tensors(const Method& method);

enum class InputPreference { ReferenceFirst, SampleFirst };

// Calls from the reference files or the sample inputs; an empty `calls` when
// neither exists (the caller decides whether random inputs will do).
// `reference_root`, when given, replaces "<dir>/<stem>.ref" (so a
// transformed or lowered copy can be checked against the original's
// reference: `lathe run out.pt2 --check --reference fixtures/mlp.ref`).
Result<DefaultInputs> default_inputs(const std::string& archive_path, const Method& method,
                                     InputPreference preference, const std::string& reference_root = "");

}  // namespace lathe
