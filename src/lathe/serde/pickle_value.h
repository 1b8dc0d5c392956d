// The values a torch.save pickle may hold, as far as Lathe reads them.
//
// A plain tree (no sharing, no cycles): the reader resolves Python's object
// sharing (memo references) into copies, bounded by PickleLimits, so callers
// never meet aliasing or reference cycles. Tensors are the exception that
// matters: copies share their Storage, and tensors that shared one storage in
// PyTorch share one Storage object here, which is how the writer knows to
// emit it once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lathe/core/dtype.h"
#include "lathe/core/result.h"
#include "lathe/core/tensor.h"

namespace lathe {

struct PickleValue {
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,     // Python int that fits in int64
    Float,   // Python float
    String,  // Python str, UTF-8
    Bytes,   // Python bytes
    Tensor,  // torch.Tensor or torch.nn.Parameter (is_parameter)
    List,
    Tuple,   // also what torch.Size reads as (a tuple of Ints)
    Dict,    // dict or collections.OrderedDict (ordered), insertion order
    Device,  // torch.device, as "cpu", "cuda:0", ...
    DType,   // torch.dtype, e.g. torch.float32
  };
  using Items = std::vector<PickleValue>;
  using Entries = std::vector<std::pair<PickleValue, PickleValue>>;

  Kind kind = Kind::None;
  bool boolean = false;          // Bool
  int64_t integer = 0;           // Int
  double real = 0;               // Float
  std::string text;              // String (UTF-8), Bytes (raw bytes), Device
  DType dtype = DType::Unknown;  // DType
  Tensor tensor;                 // Tensor (requires_grad lives in the tensor)
  bool is_parameter = false;     // Tensor: rebuilt as torch.nn.Parameter
  Items items;                   // List, Tuple
  Entries entries;               // Dict
  bool ordered = false;          // Dict: collections.OrderedDict rather than dict

  // Declared here, defined in the .cpp: with clang and libstdc++ 12, an
  // implicit default constructor makes std::pair<PickleValue, PickleValue>
  // (Entries) depend on itself and fails to compile.
  PickleValue();
  static PickleValue of_none() { return {}; }
  static PickleValue of_bool(bool b);
  static PickleValue of_int(int64_t i);
  static PickleValue of_double(double d);
  static PickleValue of_string(std::string s);
  static PickleValue of_bytes(std::string raw);
  static PickleValue of_tensor(Tensor t, bool is_parameter = false);
  static PickleValue of_list(Items items);
  static PickleValue of_tuple(Items items);
  static PickleValue of_dict(Entries entries, bool ordered = false);
  static PickleValue of_device(std::string device);
  static PickleValue of_dtype(DType dtype);

  bool is(Kind k) const { return kind == k; }
  // For a Dict: the value under the String key `key`, or nullptr.
  const PickleValue* get(std::string_view key) const;
};

std::string_view kind_name(PickleValue::Kind kind);

// Deep equality. Floats compare bit for bit (NaN equals itself, -0.0 differs
// from 0.0) because the point is "did the bytes survive a round trip".
// Tensors compare dtype, sizes, strides, storage offset, requires_grad,
// is_parameter and the bytes of the elements they address (not storage
// identity, nor storage bytes outside the view).
bool operator==(const PickleValue& a, const PickleValue& b);

// Compact, bounded rendering for messages and test failures:
// {'w': Parameter(float32[3, 4]), 'n': 3, 'k': (1, 'a')}
std::string debug_string(const PickleValue& value, size_t max_chars = 2000);

// The elements a tensor addresses, in row-major order, as raw bytes.
// Requires a tensor that passed check_tensor_view().
std::vector<std::byte> tensor_bytes_row_major(const Tensor& t);

// Tensor::check_fits() plus the checks it relies on callers to have made:
// sizes whose running product fits in int64 (so numel() is defined, even
// for empty tensors) and a storage offset inside the storage (so its
// arithmetic cannot overflow). Every tensor the reader hands out and the
// writer accepts passed this.
Status check_tensor_view(const Tensor& t);

namespace pickle_detail {
// Well-formed UTF-8, with surrogate code points allowed (Python decodes
// pickled str with 'surrogatepass').
bool valid_utf8(std::string_view s);
// Text from a file, safe to print in a message: non-printable bytes escaped
// as \xNN, cut after `max` bytes.
std::string printable(std::string_view s, size_t max = 100);
// Protocol 2 pickles bytes as _codecs.encode(<text>, 'latin1'), <text>
// holding one code point per byte: the UTF-8 of that text, and back
// (nullopt if a code point exceeds U+00FF or the UTF-8 is malformed).
std::string latin1_text_of_bytes(std::string_view raw);
std::optional<std::string> bytes_from_latin1_text(std::string_view utf8);
// Whether Python could use the value as a dict key (no list or dict in it).
bool hashable(const PickleValue& v);
}  // namespace pickle_detail

}  // namespace lathe
