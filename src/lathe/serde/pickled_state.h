// State (parameters, buffers, constants) stored as torch.save pickles, as
// PyTorch 2.2-2.8 archives keep it, and example inputs stored the same way.
#pragma once

#include <string>
#include <vector>

#include "lathe/archive/zip_reader.h"
#include "lathe/core/result.h"
#include "lathe/ir/exported_program.h"
#include "lathe/ir/program.h"
#include "lathe/serde/pickle_value.h"
#include "lathe/serde/torch_save.h"

namespace lathe {

// Reads a torch.save record of `zip` whose value is a dict of tensors; the
// tensors view the record in place when it is stored uncompressed.
Result<std::vector<NamedTensor>> read_pickled_tensors(const ZipReader& zip, const ZipEntry& entry,
                                                      const std::string& display_name);

// Puts each tensor where the program's input specs say it belongs: a
// parameter spec -> parameters, a persistent buffer -> buffers, a tensor
// constant or non-persistent buffer -> constants. A name no spec mentions (a
// tied alias torch.export keeps in the state dict) goes by what the pickle
// says it is. `from_constants`: the tensors came from the constants record.
Status assign_pickled_state(ExportedProgram& ep, std::vector<NamedTensor> tensors, bool from_constants,
                            const std::string& display_name);

// The method's example inputs (a torch.save of `(args, kwargs)`), flattened
// the way torch.export flattens them: args depth-first, then kwargs values in
// order. Empty when the method has none. The record (and what its zip
// inflates) may hold at most kMaxSampleInputBytes; errors name the file and
// the record.
inline constexpr uint64_t kMaxSampleInputBytes = 1ull << 30;
Result<std::vector<PickleValue>> sample_inputs(const Method& method);

}  // namespace lathe
