// Writing PickleValues as protocol 2 pickles the way torch.save does:
// tensors as torch._utils._rebuild_tensor_v2 (wrapped in _rebuild_parameter
// for parameters) over persistent-id storages ('storage', torch.<X>Storage,
// key, 'cpu', numel), OrderedDicts as collections.OrderedDict() + SETITEMS.
//
// Only the opcodes of Python's own protocol 2 pickler are used, and for
// state-dict content (tensors, containers, ints, strings, bools, None,
// torch.Size-like tuples) only those PyTorch 1.13's weights_only unpickler
// accepts. Floats (BINFLOAT), bytes, torch.device and most torch.dtype
// values are written as Python does; older weights_only loaders refuse them,
// the regular loader and newer weights_only loaders read them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/serde/pickle_value.h"

namespace lathe {

// A storage the pickle refers to by persistent id: one per distinct Storage
// object, keys "0", "1", ... in first-use order.
struct PickledStorage {
  std::string key;
  std::shared_ptr<Storage> storage;
  DType dtype = DType::Unknown;
};

struct Pickled {
  std::vector<std::byte> bytes;  // data.pkl
  std::vector<PickledStorage> storages;
};

// Errors name the path to the offending value, e.g. "['w'][1]: ...". Refused:
// tensors that fail check_tensor_view(), one Storage used with two dtypes (as
// torch.save refuses), storages whose size is not a whole number of
// elements, strings that are not UTF-8, dict keys holding a list or dict
// (unhashable in Python), devices that are not "type" or "type:index", nesting deeper
// than max_depth.
Result<Pickled> pickle_value(const PickleValue& value, size_t max_depth = 1000);

}  // namespace lathe
