// A safe unpickler for exactly the subset of Python's pickle that torch.save
// writes (protocol 2; the protocol 3-5 opcodes torch emits when asked for a
// higher protocol are accepted too).
//
// Nothing is ever imported or called. GLOBAL / STACK_GLOBAL resolve against a
// fixed allow-list (collections.OrderedDict, the torch._utils tensor and
// parameter rebuild functions, torch.<X>Storage type tags, torch.Size,
// torch.device, torch.<dtype>, and the two helpers protocol 2 uses for bytes);
// REDUCE is interpreted only for the callables on that list, each checking
// its arguments. Everything else - other globals, BUILD, NEWOBJ, sets,
// unknown opcodes - is refused with an error naming the opcode, its byte
// offset and, for globals, the name.
//
// Untrusted input: every declared length is checked against the bytes that
// remain before anything is allocated, and PickleLimits bounds the stack,
// MARK nesting, memo, value nesting and the number of values, including the
// copies that Python's object sharing expands into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/serde/pickle_value.h"

namespace lathe {

struct PickleLimits {
  // Nesting of values (containers inside containers) and of MARKs.
  size_t max_depth = 1000;
  // Memo entries (BINPUT / MEMOIZE); also bounds memo indices.
  size_t max_memo = 1 << 20;
  // Values on the unpickler stack at once.
  size_t max_stack = 1 << 20;
  // Objects created while unpickling (about 64 bytes each), and values in
  // the result. A state dict takes some 10 per tensor.
  size_t max_values = 1 << 22;
  // Memo references are expanded into copies, so the result may hold more
  // values than the pickle created objects; at most this many per object
  // (plus 4096). torch.save shares only leaves (a tied tensor, a repeated
  // string), far below this; without the bound, a few hundred bytes of
  // nested references would ask for gigabytes before max_values refused.
  size_t max_copies_per_object = 4;
  // Not a limit, but read alongside them (read_torch_save only). Storages
  // are zero-copy views, and a view can be misaligned for its element type:
  // a torch.save zip nested at an odd offset in a .pt2 that Python's zipfile
  // wrote (PyTorch 2.4-2.7) has 64-aligned records relative to itself only.
  // Typed loads (reinterpret_cast<const float*>, as every kernel does) from
  // such a view are undefined behaviour (UBSan stops the PyTorch 2.2
  // archive's run on it), so by default just those storages are copied into
  // aligned memory; aligned ones stay views. Off: every storage is a view,
  // to be read with memcpy.
  bool copy_misaligned_storages = true;
  // read_torch_save only: all bytes inflated from the zip's DEFLATE records
  // (checked against each record's declared size before inflating it).
  uint64_t max_inflated_bytes = 8ull << 30;
};

// Resolves a storage persistent id ('storage', torch.<X>Storage, key,
// location, numel) to at least numel * dtype_size(dtype) bytes. Called once
// per distinct key; the unpickler shares the result between tensors.
using PickleStorageLoader =
    std::function<Result<std::shared_ptr<Storage>>(const std::string& key, DType dtype, int64_t numel)>;

// Unpickles `bytes`. Errors read "<OPCODE> at byte <offset>: <what>". Tensors
// are views of the loader's storages, checked with check_tensor_view().
Result<PickleValue> unpickle(std::span<const std::byte> bytes, const PickleStorageLoader& load_storage,
                             const PickleLimits& limits = {});

}  // namespace lathe
