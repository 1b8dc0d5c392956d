#include "lathe/serde/pickle_writer.h"

#include <cstring>
#include <unordered_map>

#include "lathe/serde/pickle_opcodes.h"

namespace lathe {
namespace {

using namespace pickle_op;
using Kind = PickleValue::Kind;

// Python's pickler batches APPENDS / SETITEMS by this many items.
constexpr size_t kBatch = 1000;

class Pickler {
 public:
  explicit Pickler(size_t max_depth) : max_depth_(max_depth) {}

  Result<Pickled> run(const PickleValue& v) {
    op(PROTO);
    byte(2);
    LATHE_RETURN_IF_ERROR(value(v, 0));
    op(STOP);
    return Pickled{std::move(out_), std::move(storages_)};
  }

 private:
  Error fail(const std::string& what) const {
    std::string where;
    for (const auto& p : path_) where += p;
    return make_error((where.empty() ? "value" : where) + ": " + what);
  }

  void byte(uint8_t b) { out_.push_back(static_cast<std::byte>(b)); }
  void op(uint8_t o) { byte(o); }
  void le(uint64_t v, size_t n) {
    for (size_t k = 0; k < n; ++k) byte(static_cast<uint8_t>(v >> (8 * k)));
  }
  void raw(std::string_view s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out_.insert(out_.end(), p, p + s.size());
  }
  void global(std::string_view module, std::string_view name) {
    op(GLOBAL);
    raw(module);
    byte('\n');
    raw(name);
    byte('\n');
  }
  // As Python's save_long: the smallest of BININT1, BININT2, BININT, LONG1.
  void integer(int64_t v) {
    if (v >= 0 && v <= 0xFF) {
      op(BININT1);
      le(static_cast<uint64_t>(v), 1);
    } else if (v >= 0 && v <= 0xFFFF) {
      op(BININT2);
      le(static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op(BININT);
      le(static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    } else {
      // Minimal two's complement: drop leading bytes that only repeat the
      // sign of the next one.
      const auto u = static_cast<uint64_t>(v);
      size_t n = 8;
      while (n > 1) {
        const uint8_t top = static_cast<uint8_t>(u >> (8 * (n - 1)));
        const bool next_negative = (u >> (8 * (n - 1) - 1)) & 1;
        if ((top == 0x00 && !next_negative) || (top == 0xFF && next_negative)) {
          --n;
        } else {
          break;
        }
      }
      op(LONG1);
      byte(static_cast<uint8_t>(n));
      le(u, n);
    }
  }
  Status string(std::string_view s) {
    if (!pickle_detail::valid_utf8(s)) return fail("string is not valid UTF-8");
    op(BINUNICODE);
    le(s.size(), 4);
    raw(s);
    return Status::Ok();
  }
  void boolean(bool b) { op(b ? NEWTRUE : NEWFALSE); }
  // A tuple of ints, with the short forms Python uses for sizes and strides.
  void int_tuple(const std::vector<int64_t>& v) {
    if (v.empty()) {
      op(EMPTY_TUPLE);
      return;
    }
    if (v.size() > 3) op(MARK);
    for (int64_t x : v) integer(x);
    static constexpr uint8_t kShort[] = {0, TUPLE1, TUPLE2, TUPLE3};
    op(v.size() > 3 ? TUPLE : kShort[v.size()]);
  }
  void empty_ordered_dict() {
    global("collections", "OrderedDict");
    op(EMPTY_TUPLE);
    op(REDUCE);
  }

  Status value(const PickleValue& v, size_t depth);
  Status tensor(const PickleValue& v);
  Status item(const PickleValue& v, size_t i, size_t depth);
  Status sequence(const PickleValue& v, size_t depth);
  Status dict(const PickleValue& v, size_t depth);
  Status device(const std::string& d);

  size_t max_depth_;
  std::vector<std::byte> out_;
  std::vector<PickledStorage> storages_;
  std::unordered_map<const Storage*, size_t> storage_index_;
  std::vector<std::string> path_;
};

Status Pickler::value(const PickleValue& v, size_t depth) {
  if (depth > max_depth_) return fail("nested deeper than " + std::to_string(max_depth_));
  switch (v.kind) {
    case Kind::None: op(NONE); return Status::Ok();
    case Kind::Bool: boolean(v.boolean); return Status::Ok();
    case Kind::Int: integer(v.integer); return Status::Ok();
    case Kind::Float: {
      uint64_t bits;
      std::memcpy(&bits, &v.real, sizeof bits);
      op(BINFLOAT);
      for (int k = 7; k >= 0; --k) byte(static_cast<uint8_t>(bits >> (8 * k)));
      return Status::Ok();
    }
    case Kind::String: return string(v.text);
    case Kind::Bytes: {
      // Protocol 2 has no bytes opcode; Python writes bytes() for b'' and
      // _codecs.encode(<the bytes as latin-1 text>, 'latin1') otherwise.
      if (v.text.empty()) {
        global("__builtin__", "bytes");
        op(EMPTY_TUPLE);
      } else {
        global("_codecs", "encode");
        LATHE_RETURN_IF_ERROR(string(pickle_detail::latin1_text_of_bytes(v.text)));
        LATHE_RETURN_IF_ERROR(string("latin1"));
        op(TUPLE2);
      }
      op(REDUCE);
      return Status::Ok();
    }
    case Kind::Device: return device(v.text);
    case Kind::DType: {
      if (dtype_size(v.dtype) == 0) return fail("unknown dtype");
      global("torch", dtype_name(v.dtype));  // torch.float32 pickles by name
      return Status::Ok();
    }
    case Kind::Tensor: return tensor(v);
    case Kind::List:
    case Kind::Tuple: return sequence(v, depth);
    case Kind::Dict: return dict(v, depth);
  }
  return fail("unknown value kind");
}

// torch.device('cuda', 0) pickles as device.__reduce__: (torch.device,
// ('cuda', 0)), or ('cpu',) without an index.
Status Pickler::device(const std::string& d) {
  const size_t colon = d.find(':');
  const std::string type = d.substr(0, colon);
  if (type.empty()) return fail("device '" + d + "' has no type");
  int64_t index = -1;
  if (colon != std::string::npos) {
    const std::string digits = d.substr(colon + 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
      return fail("device '" + d + "' is not 'type' or 'type:index'");
    }
    index = std::stoll(digits);
  }
  global("torch", "device");
  LATHE_RETURN_IF_ERROR(string(type));
  if (index >= 0) {
    integer(index);
    op(TUPLE2);
  } else {
    op(TUPLE1);
  }
  op(REDUCE);
  return Status::Ok();
}

Status Pickler::tensor(const PickleValue& v) {
  const Tensor& t = v.tensor;
  Status ok = check_tensor_view(t);
  if (!ok.ok()) return fail(ok.error().message());
  if (dtype_storage_name(t.dtype).empty()) return fail("dtype " + std::string(dtype_name(t.dtype)) + " has no storage type");
  const size_t elem = dtype_size(t.dtype);
  auto [it, fresh] = storage_index_.emplace(t.storage.get(), storages_.size());
  if (fresh) {
    if (t.storage->nbytes() % elem) {
      return fail("storage of " + std::to_string(t.storage->nbytes()) + " bytes is not a whole number of " +
                  std::string(dtype_name(t.dtype)) + " elements");
    }
    storages_.push_back({std::to_string(storages_.size()), t.storage, t.dtype});
  }
  const PickledStorage& s = storages_[it->second];
  if (s.dtype != t.dtype) {
    // torch.save refuses this too: a storage has one element type on disk.
    return fail("storage " + s.key + " is used as both " + std::string(dtype_name(s.dtype)) + " and " +
                std::string(dtype_name(t.dtype)));
  }
  if (v.is_parameter) global("torch._utils", "_rebuild_parameter");
  global("torch._utils", "_rebuild_tensor_v2");
  op(MARK);
  op(MARK);  // the persistent id
  LATHE_RETURN_IF_ERROR(string("storage"));
  global("torch", dtype_storage_name(t.dtype));
  LATHE_RETURN_IF_ERROR(string(s.key));
  LATHE_RETURN_IF_ERROR(string("cpu"));
  integer(static_cast<int64_t>(s.storage->nbytes() / elem));
  op(TUPLE);
  op(BINPERSID);
  integer(t.storage_offset);
  int_tuple(t.sizes);
  int_tuple(t.strides);
  // As torch does: the tensor inside a parameter is the parameter's .data,
  // which never requires grad; the parameter carries the flag.
  boolean(v.is_parameter ? false : t.requires_grad);
  empty_ordered_dict();  // backward hooks, never serialized
  op(TUPLE);
  op(REDUCE);
  if (v.is_parameter) {
    boolean(t.requires_grad);
    empty_ordered_dict();
    op(TUPLE3);
    op(REDUCE);
  }
  return Status::Ok();
}

Status Pickler::item(const PickleValue& v, size_t i, size_t depth) {
  path_.push_back("[" + std::to_string(i) + "]");
  LATHE_RETURN_IF_ERROR(value(v, depth + 1));
  path_.pop_back();
  return Status::Ok();
}

Status Pickler::sequence(const PickleValue& v, size_t depth) {
  const size_t n = v.items.size();
  if (v.kind == Kind::Tuple) {  // as Python: EMPTY_TUPLE, TUPLE1..3, or MARK ... TUPLE
    if (n > 3) op(MARK);
    for (size_t i = 0; i < n; ++i) {
      LATHE_RETURN_IF_ERROR(item(v.items[i], i, depth));
    }
    static constexpr uint8_t kShort[] = {EMPTY_TUPLE, TUPLE1, TUPLE2, TUPLE3};
    op(n > 3 ? TUPLE : kShort[n]);
    return Status::Ok();
  }
  op(EMPTY_LIST);
  for (size_t start = 0; start < n; start += kBatch) {
    op(MARK);
    for (size_t i = start; i < std::min(n, start + kBatch); ++i) {
      LATHE_RETURN_IF_ERROR(item(v.items[i], i, depth));
    }
    op(APPENDS);
  }
  return Status::Ok();
}

Status Pickler::dict(const PickleValue& v, size_t depth) {
  if (v.ordered) {
    empty_ordered_dict();
  } else {
    op(EMPTY_DICT);
  }
  const size_t n = v.entries.size();
  for (size_t start = 0; start < n; start += kBatch) {
    op(MARK);
    for (size_t i = start; i < std::min(n, start + kBatch); ++i) {
      const auto& [key, val] = v.entries[i];
      path_.push_back(key.kind == Kind::String ? "['" + pickle_detail::printable(key.text) + "']"
                                                 : "[<key " + std::to_string(i) + ">]");
      if (!pickle_detail::hashable(key)) return fail("a " + std::string(kind_name(key.kind)) + " cannot be a dict key");
      LATHE_RETURN_IF_ERROR(value(key, depth + 1));
      LATHE_RETURN_IF_ERROR(value(val, depth + 1));
      path_.pop_back();
    }
    op(SETITEMS);
  }
  return Status::Ok();
}

}  // namespace

Result<Pickled> pickle_value(const PickleValue& value, size_t max_depth) {
  Pickler p(max_depth);
  return p.run(value);
}

}  // namespace lathe
