#include "lathe/serde/torch_save.h"

#include <algorithm>
#include <cstdint>

#include "lathe/archive/zip_reader.h"
#include "lathe/archive/zip_writer.h"
#include "lathe/serde/pickle_writer.h"

namespace lathe {
namespace {

using pickle_detail::printable;

std::string str_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// A record's bytes as a Storage: a view for STORED entries, an inflated copy
// otherwise (Python's zipfile may have rewritten the archive compressed).
Result<std::shared_ptr<Storage>> record_storage(const ZipReader& zip, const ZipEntry& e) {
  if (e.method == 0) return zip.view_storage(e);
  LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, zip.read(e));
  return Storage::copy_of(bytes);
}

}  // namespace

Result<PickleValue> read_torch_save(std::shared_ptr<const void> keepalive, const std::byte* data, size_t size,
                                    const std::string& display_name, const PickleLimits& limits) {
  ZipLimits zip_limits;
  zip_limits.max_inflated_bytes = std::min(zip_limits.max_inflated_bytes, limits.max_inflated_bytes);
  zip_limits.max_total_inflated_bytes = std::min(zip_limits.max_total_inflated_bytes, limits.max_inflated_bytes);
  LATHE_ASSIGN_OR_RETURN(ZipReader zip, ZipReader::open_memory(std::move(keepalive), data, size, display_name, zip_limits));
  // As PyTorch's reader: the folder is whatever the first entry sits in.
  if (zip.entries().empty()) return make_error(display_name + ": an empty zip, not a torch.save archive");
  const std::string& first = zip.entries()[0].name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    return make_error(display_name + ": first entry '" + printable(first) +
                      "' is not inside a folder, so this is not a torch.save archive");
  }
  const std::string folder = first.substr(0, slash + 1);

  const ZipEntry* pkl = zip.find(folder + "data.pkl");
  if (!pkl) {
    return make_error(display_name + ": no " + printable(folder) + "data.pkl, so this is not a torch.save archive");
  }
  if (const ZipEntry* order = zip.find(folder + "byteorder")) {
    LATHE_ASSIGN_OR_RETURN(std::vector<std::byte> text, zip.read(*order));
    if (str_of(text) != "little") {
      return make_error(display_name + ": " + printable(order->name) + " is '" + printable(str_of(text), 16) +
                        "'; only little-endian archives are read");
    }
  }
  LATHE_ASSIGN_OR_RETURN(std::shared_ptr<Storage> pickle, record_storage(zip, *pkl));

  // Each storage is data/<key>; the unpickler asks once per key and shares
  // the result between the tensors that view it.
  auto load = [&](const std::string& key, DType dtype, int64_t numel) -> Result<std::shared_ptr<Storage>> {
    const std::string name = folder + "data/" + key;
    const ZipEntry* e = zip.find(name);
    if (!e) return make_error("storage '" + printable(key) + "' has no record " + printable(name));
    const size_t elem = dtype_size(dtype);
    if (static_cast<uint64_t>(numel) > e->size / elem) {
      return make_error("storage '" + printable(key) + "' declares " + std::to_string(numel) + " " +
                        std::string(dtype_name(dtype)) + " elements but its record " + printable(name) + " has " +
                        std::to_string(e->size) + " bytes");
    }
    LATHE_ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, record_storage(zip, *e));
    const auto address = reinterpret_cast<uintptr_t>(storage->data());
    if (limits.copy_misaligned_storages && numel > 0 && address % std::min<size_t>(elem, 8) != 0) {
      storage = Storage::copy_of(storage->bytes().first(static_cast<size_t>(numel) * elem));
    }
    return storage;
  };
  auto value = unpickle(pickle->bytes(), load, limits);
  if (!value.ok()) return value.error().context(display_name + ": " + pkl->name);
  return value;
}

Result<std::vector<NamedTensor>> named_tensors(const PickleValue& value, const std::string& display_name) {
  if (value.kind != PickleValue::Kind::Dict) {
    return make_error(display_name + ": holds a " + std::string(kind_name(value.kind)) +
                      ", not a dict of name -> tensor");
  }
  std::vector<NamedTensor> out;
  out.reserve(value.entries.size());
  for (size_t i = 0; i < value.entries.size(); ++i) {
    const auto& [key, v] = value.entries[i];
    if (key.kind != PickleValue::Kind::String) {
      return make_error(display_name + ": key " + std::to_string(i) + " is a " + std::string(kind_name(key.kind)) +
                        " (" + debug_string(key, 80) + "), not a string");
    }
    if (v.kind != PickleValue::Kind::Tensor) {
      return make_error(display_name + ": '" + printable(key.text) + "' is a " + std::string(kind_name(v.kind)) +
                        ", not a tensor");
    }
    out.push_back({key.text, v.tensor, v.is_parameter});
  }
  return out;
}

Result<std::vector<NamedTensor>> read_torch_save_tensors(std::shared_ptr<const void> keepalive,
                                                         const std::byte* data, size_t size,
                                                         const std::string& display_name,
                                                         const PickleLimits& limits) {
  LATHE_ASSIGN_OR_RETURN(PickleValue value, read_torch_save(std::move(keepalive), data, size, display_name, limits));
  return named_tensors(value, display_name);
}

Status write_torch_save(const PickleValue& value, FileSink& sink, const std::string& archive_name) {
  if (archive_name.empty() || archive_name.find('/') != std::string::npos) {
    return make_error("torch.save archive name '" + archive_name + "' must be one non-empty folder name");
  }
  LATHE_ASSIGN_OR_RETURN(Pickled p, pickle_value(value));
  const std::string dir = archive_name + "/";
  // The record order of torch.save: pickle, byte order, storages, version.
  ZipWriter zip(sink);
  LATHE_RETURN_IF_ERROR(zip.add(dir + "data.pkl", p.bytes));
  LATHE_RETURN_IF_ERROR(zip.add(dir + "byteorder", std::string("little")));
  for (const PickledStorage& s : p.storages) {
    LATHE_RETURN_IF_ERROR(zip.add(dir + "data/" + s.key, s.storage->bytes()));
  }
  LATHE_RETURN_IF_ERROR(zip.add(dir + "version", std::string("3\n")));
  return zip.finish();
}

Result<std::vector<std::byte>> write_torch_save(const PickleValue& value, const std::string& archive_name) {
  MemorySink sink;
  LATHE_RETURN_IF_ERROR(write_torch_save(value, sink, archive_name));
  return sink.take();
}

}  // namespace lathe
