// torch.save archives: the zip container around a pickle.
//
// Layout (PyTorch's zip writer, caffe2/serialize/inline_container.cc), all
// records under one top folder taken from the first entry:
//   <folder>/data.pkl        protocol 2 pickle (see pickle_reader.h)
//   <folder>/data/<key>      raw bytes of each storage, host (little) endian
//   <folder>/byteorder       "little" (PyTorch >= 2.1; absent means little)
//   <folder>/version         "3\n"
// The archive is usually a record of an outer .pt2 (serialized_state_dict.pt,
// data/weights/<model>.pt, data/sample_inputs/<model>.pt), read in place.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lathe/core/atomic_file.h"
#include "lathe/core/result.h"
#include "lathe/core/tensor.h"
#include "lathe/serde/pickle_reader.h"
#include "lathe/serde/pickle_value.h"

namespace lathe {

// Reads a torch.save archive held in [data, data + size), memory owned by
// `keepalive` (e.g. the Storage of an outer archive's record). Tensors VIEW
// the STORED storage records (zero copy; they keep `keepalive` alive), which
// may be misaligned for their dtype (see PickleLimits::
// copy_misaligned_storages). Only a DEFLATE-compressed record (PyTorch never
// writes one) is inflated into a copy. Errors start with display_name, e.g.
// "model.pt2: serialized_state_dict.pt: archive/data.pkl: GLOBAL at byte 2: ...".
Result<PickleValue> read_torch_save(std::shared_ptr<const void> keepalive, const std::byte* data, size_t size,
                                    const std::string& display_name, const PickleLimits& limits = {});

struct NamedTensor {
  std::string name;
  Tensor tensor;
  bool is_parameter = false;
};

// The entries of a dict / OrderedDict of name -> tensor (a state dict or a
// constants dict), in file order. Errors name the offending key.
Result<std::vector<NamedTensor>> named_tensors(const PickleValue& value, const std::string& display_name);

// read_torch_save + named_tensors.
Result<std::vector<NamedTensor>> read_torch_save_tensors(std::shared_ptr<const void> keepalive,
                                                         const std::byte* data, size_t size,
                                                         const std::string& display_name,
                                                         const PickleLimits& limits = {});

// Writes `value` as torch.save does (see pickle_writer.h): data.pkl,
// byteorder, one data/<key> record per distinct Storage (tensors sharing a
// Storage share the key and keep their storage offsets), version "3\n";
// every entry STORED and 64-byte aligned (ZipWriter). `archive_name` is the
// top folder.
Status write_torch_save(const PickleValue& value, FileSink& sink, const std::string& archive_name = "archive");
Result<std::vector<std::byte>> write_torch_save(const PickleValue& value,
                                                const std::string& archive_name = "archive");

}  // namespace lathe
