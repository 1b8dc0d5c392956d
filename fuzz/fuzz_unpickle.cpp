// Fuzzes the safe unpickler and the torch.save reader
// (src/lathe/serde/pickle_reader.h, torch_save.h).
//
// An input that starts like a zip ("PK\3\4") is read as a whole torch.save
// archive (zip + data.pkl + storages) and turned into named tensors, as the
// .pt2 reader does with state dicts. Anything else is a bare pickle, whose
// storages the harness serves from zero-filled memory (at most 1 MiB each).
//
// Invariants: errors are non-empty; every tensor the reader hands out lies
// inside its storage (check_tensor_view) and can be read end to end; what
// the torch.save writer accepts back, the reader reads back equal.
#include <string_view>

#include "fuzz_util.h"
#include "lathe/serde/pickle_reader.h"
#include "lathe/serde/pickle_value.h"
#include "lathe/serde/torch_save.h"

using namespace lathe;

namespace {

void touch(const PickleValue& v, size_t depth = 0) {
  if (depth > 2000) fuzz::fail("value nested deeper than the reader's limit");
  switch (v.kind) {
    case PickleValue::Kind::Tensor: {
      Status fits = check_tensor_view(v.tensor);
      if (!fits.ok()) fuzz::fail("the reader handed out a tensor outside its storage: " + fits.error().message());
      volatile unsigned sum = 0;
      for (std::byte b : v.tensor.storage->bytes()) sum = sum + std::to_integer<unsigned>(b);
      break;
    }
    case PickleValue::Kind::List:
    case PickleValue::Kind::Tuple:
      for (const auto& item : v.items) touch(item, depth + 1);
      break;
    case PickleValue::Kind::Dict:
      for (const auto& [k, item] : v.entries) {
        touch(k, depth + 1);
        touch(item, depth + 1);
      }
      break;
    default: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buf = fuzz::exact_copy(data, size);
  PickleLimits limits;
  limits.max_values = 1 << 18;
  limits.max_stack = 1 << 16;
  limits.max_memo = 1 << 16;

  if (size >= 4 && std::memcmp(data, "PK\x03\x04", 4) == 0) {
    auto value = read_torch_save(buf, buf.get(), size, "fuzz.pt", limits);
    fuzz::check_error(value, "fuzz.pt: ");
    if (!value.ok()) return 0;
    touch(*value);
    (void)debug_string(*value, 500);
    auto tensors = named_tensors(*value, "fuzz.pt");
    fuzz::check_error(tensors, "fuzz.pt: ");
    // Round trip through the writer: what it writes, the reader must read
    // back as the same value.
    auto written = write_torch_save(*value);
    if (written.ok()) {
      auto owned = std::make_shared<std::vector<std::byte>>(std::move(*written));
      auto back = read_torch_save(owned, owned->data(), owned->size(), "rewritten.pt");
      if (!back.ok()) fuzz::fail("torch.save output does not read back: " + back.error().message());
      if (!(*back == *value)) fuzz::fail("torch.save output reads back different: " + debug_string(*back, 300));
    }
    return 0;
  }

  auto loader = [](const std::string& key, DType dtype, int64_t numel) -> Result<std::shared_ptr<Storage>> {
    const size_t elem = dtype_size(dtype);
    if (elem == 0 || numel < 0 || static_cast<uint64_t>(numel) > (1u << 20) / elem) {
      return make_error("storage '" + key + "' too large for the harness");
    }
    return Storage::allocate(static_cast<size_t>(numel) * elem);
  };
  auto value = unpickle(std::span<const std::byte>(buf.get(), size), loader, limits);
  fuzz::check_error(value, nullptr);
  if (value.ok()) {
    touch(*value);
    (void)debug_string(*value, 500);
  }
  return 0;
}
