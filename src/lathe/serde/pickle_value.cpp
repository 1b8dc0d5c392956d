#include "lathe/serde/pickle_value.h"

#include <cstring>

namespace lathe {

PickleValue::PickleValue() = default;

namespace {

// A value of `kind` whose payload `set` fills in.
template <typename Set>
PickleValue make(PickleValue::Kind kind, Set set) {
  PickleValue v;
  v.kind = kind;
  set(v);
  return v;
}

}  // namespace

PickleValue PickleValue::of_bool(bool b) { return make(Kind::Bool, [&](PickleValue& v) { v.boolean = b; }); }
PickleValue PickleValue::of_int(int64_t i) { return make(Kind::Int, [&](PickleValue& v) { v.integer = i; }); }
PickleValue PickleValue::of_double(double d) { return make(Kind::Float, [&](PickleValue& v) { v.real = d; }); }
PickleValue PickleValue::of_string(std::string s) {
  return make(Kind::String, [&](PickleValue& v) { v.text = std::move(s); });
}
PickleValue PickleValue::of_bytes(std::string raw) {
  return make(Kind::Bytes, [&](PickleValue& v) { v.text = std::move(raw); });
}
PickleValue PickleValue::of_tensor(Tensor t, bool is_parameter) {
  return make(Kind::Tensor, [&](PickleValue& v) {
    v.tensor = std::move(t);
    v.is_parameter = is_parameter;
  });
}
PickleValue PickleValue::of_list(Items items) {
  return make(Kind::List, [&](PickleValue& v) { v.items = std::move(items); });
}
PickleValue PickleValue::of_tuple(Items items) {
  return make(Kind::Tuple, [&](PickleValue& v) { v.items = std::move(items); });
}
PickleValue PickleValue::of_dict(Entries entries, bool ordered) {
  return make(Kind::Dict, [&](PickleValue& v) {
    v.entries = std::move(entries);
    v.ordered = ordered;
  });
}
PickleValue PickleValue::of_device(std::string device) {
  return make(Kind::Device, [&](PickleValue& v) { v.text = std::move(device); });
}
PickleValue PickleValue::of_dtype(DType dtype) { return make(Kind::DType, [&](PickleValue& v) { v.dtype = dtype; }); }

const PickleValue* PickleValue::get(std::string_view key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : entries) {
    if (k.kind == Kind::String && k.text == key) return &v;
  }
  return nullptr;
}

std::string_view kind_name(PickleValue::Kind kind) {
  using K = PickleValue::Kind;
  switch (kind) {
    case K::None: return "None";
    case K::Bool: return "bool";
    case K::Int: return "int";
    case K::Float: return "float";
    case K::String: return "str";
    case K::Bytes: return "bytes";
    case K::Tensor: return "tensor";
    case K::List: return "list";
    case K::Tuple: return "tuple";
    case K::Dict: return "dict";
    case K::Device: return "torch.device";
    case K::DType: return "torch.dtype";
  }
  return "?";
}

std::vector<std::byte> tensor_bytes_row_major(const Tensor& t) {
  const size_t elem = dtype_size(t.dtype);
  const int64_t n = t.numel();
  std::vector<std::byte> out(static_cast<size_t>(n) * elem);
  if (n == 0) return out;
  // Odometer over the multi-index; `offset` tracks the element offset of the
  // current index so each step costs O(1) amortised.
  std::vector<int64_t> index(t.sizes.size(), 0);
  int64_t offset = t.storage_offset;
  const std::byte* base = t.storage->data();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out.data() + static_cast<size_t>(i) * elem, base + offset * static_cast<int64_t>(elem), elem);
    for (size_t d = t.sizes.size(); d-- > 0;) {
      if (++index[d] < t.sizes[d]) {
        offset += t.strides[d];
        break;
      }
      offset -= (index[d] - 1) * t.strides[d];
      index[d] = 0;
    }
  }
  return out;
}

Status check_tensor_view(const Tensor& t) {
  if (!t.storage) return make_error("tensor has no storage");
  const size_t elem = dtype_size(t.dtype);
  if (elem == 0) return make_error("tensor has an unknown dtype");
  int64_t n = 1;
  for (int64_t d : t.sizes) {
    if (d < 0) return make_error("negative size in " + shape_string(t.sizes));
    if (__builtin_mul_overflow(n, d, &n)) {
      return make_error("sizes " + shape_string(t.sizes) + " overflow 64 bits");
    }
  }
  const uint64_t elements = t.storage->nbytes() / elem;
  if (t.storage_offset < 0 || static_cast<uint64_t>(t.storage_offset) > elements) {
    return make_error("storage offset " + std::to_string(t.storage_offset) + " lies outside its storage of " +
                      std::to_string(elements) + " " + std::string(dtype_name(t.dtype)) + " elements");
  }
  return t.check_fits();
}

namespace {

bool tensors_equal(const PickleValue& a, const PickleValue& b) {
  const Tensor& x = a.tensor;
  const Tensor& y = b.tensor;
  if (a.is_parameter != b.is_parameter || x.dtype != y.dtype || x.sizes != y.sizes ||
      x.strides != y.strides || x.storage_offset != y.storage_offset ||
      x.requires_grad != y.requires_grad) {
    return false;
  }
  // Equality of values the reader produced or the caller validated; anything
  // else is compared by metadata only rather than read out of bounds.
  if (!check_tensor_view(x).ok() || !check_tensor_view(y).ok()) return x.storage == y.storage;
  return tensor_bytes_row_major(x) == tensor_bytes_row_major(y);
}

}  // namespace

bool operator==(const PickleValue& a, const PickleValue& b) {
  using K = PickleValue::Kind;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case K::None: return true;
    case K::Bool: return a.boolean == b.boolean;
    case K::Int: return a.integer == b.integer;
    case K::Float: return std::memcmp(&a.real, &b.real, sizeof(double)) == 0;
    case K::String:
    case K::Bytes:
    case K::Device: return a.text == b.text;
    case K::DType: return a.dtype == b.dtype;
    case K::Tensor: return tensors_equal(a, b);
    case K::List:
    case K::Tuple: return a.items == b.items;
    case K::Dict: return a.ordered == b.ordered && a.entries == b.entries;
  }
  return false;
}

namespace {

void quote(std::string& out, std::string_view s) {
  out += '\'';
  for (unsigned char c : s) {
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '\'';
}

// Appends to `out` until it holds max_chars; depth guards hand-built trees.
void render(std::string& out, const PickleValue& v, size_t max_chars, int depth) {
  using K = PickleValue::Kind;
  if (out.size() >= max_chars) return;
  if (depth > 64) {
    out += "...";
    return;
  }
  switch (v.kind) {
    case K::None: out += "None"; break;
    case K::Bool: out += v.boolean ? "True" : "False"; break;
    case K::Int: out += std::to_string(v.integer); break;
    case K::Float: out += std::to_string(v.real); break;
    case K::String: quote(out, v.text); break;
    case K::Bytes: out += 'b'; quote(out, v.text); break;
    case K::Device: out += "device("; quote(out, v.text); out += ')'; break;
    case K::DType: out += "torch."; out += dtype_name(v.dtype); break;
    case K::Tensor:
      out += v.is_parameter ? "Parameter(" : "Tensor(";
      out += dtype_name(v.tensor.dtype);
      out += shape_string(v.tensor.sizes);
      out += ')';
      break;
    case K::List:
    case K::Tuple: {
      const bool list = v.kind == K::List;
      out += list ? '[' : '(';
      for (size_t i = 0; i < v.items.size() && out.size() < max_chars; ++i) {
        if (i) out += ", ";
        render(out, v.items[i], max_chars, depth + 1);
      }
      if (!list && v.items.size() == 1) out += ',';
      out += list ? ']' : ')';
      break;
    }
    case K::Dict:
      out += v.ordered ? "OrderedDict{" : "{";
      for (size_t i = 0; i < v.entries.size() && out.size() < max_chars; ++i) {
        if (i) out += ", ";
        render(out, v.entries[i].first, max_chars, depth + 1);
        out += ": ";
        render(out, v.entries[i].second, max_chars, depth + 1);
      }
      out += '}';
      break;
  }
}

}  // namespace

std::string debug_string(const PickleValue& value, size_t max_chars) {
  std::string out;
  render(out, value, max_chars, 0);
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

namespace pickle_detail {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms and code points past U+10FFFF are invalid; surrogates
    // (U+D800..U+DFFF) pass, as with Python's 'surrogatepass'.
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF) return false;
    i += len;
  }
  return true;
}

std::string printable(std::string_view s, size_t max) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string latin1_text_of_bytes(std::string_view raw) {
  std::string out;
  for (unsigned char c : raw) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

std::optional<std::string> bytes_from_latin1_text(std::string_view utf8) {
  std::string out;
  for (size_t k = 0; k < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[k]);
    if (c < 0x80) {
      out += static_cast<char>(c);
      k += 1;
    } else if ((c & 0xFE) == 0xC2 && k + 1 < utf8.size() &&  // U+0080..U+00FF: C2 or C3, then 80..BF
               (static_cast<unsigned char>(utf8[k + 1]) & 0xC0) == 0x80) {
      out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[k + 1]) & 0x3F));
      k += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

bool hashable(const PickleValue& v) {
  if (v.kind == PickleValue::Kind::List || v.kind == PickleValue::Kind::Dict) return false;
  for (const auto& item : v.items) {
    if (!hashable(item)) return false;
  }
  return true;
}

}  // namespace pickle_detail

}  // namespace lathe
