#include "lathe/serde/pickle_reader.h"

#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "lathe/serde/pickle_opcodes.h"

namespace lathe {
namespace {

using namespace pickle_op;
using pickle_detail::printable;

// The callables and type tags the allow-list resolves GLOBAL to.
enum class Global : uint8_t {
  OrderedDict, RebuildTensorV2, RebuildParameter, RebuildParameterWithState,
  StorageType, Size, Device, CodecsEncode, Bytes,
};

// Unpickler-internal value kinds: PickleValue's plus what only exists while
// unpickling (allowed globals, storages before a tensor wraps them).
enum class NK : uint8_t {
  None, Bool, Int, Float, String, Bytes, Tensor, List, Tuple, Dict, Device, DType, Global, Storage,
};

// One Python object. Objects live in an arena and refer to each other by
// index, exactly like Python's references: a memo GET yields the same
// object, and mutating a list later is seen through every reference. The
// arena owns everything flatly, so cycles and deep nesting cost nothing until
// convert() (which bounds both) turns the graph into a PickleValue tree.
struct Node {
  explicit Node(NK k) : kind(k) {}
  NK kind;
  uint8_t op = 0;       // opcode that made it, for messages
  bool flag = false;    // Bool: value; Dict: ordered; Tensor: is_parameter
  Global global{};      // Global
  DType dtype{};        // Global StorageType, DType, Storage
  uint32_t ref = 0;     // index into texts_ / tensors_ / storages_
  size_t pos = 0;       // byte offset of that opcode
  int64_t i = 0;        // Int
  double f = 0;         // Float
  std::vector<uint32_t> items;  // List, Tuple; Dict: key, value, key, value...
};

class Unpickler {
 public:
  Unpickler(std::span<const std::byte> in, const PickleStorageLoader& loader, const PickleLimits& limits)
      : in_(in), loader_(loader), limits_(limits) {}

  Result<PickleValue> run() {
    for (;;) {
      if (pos_ >= in_.size()) {
        return make_error("the pickle ends at byte " + std::to_string(in_.size()) + " without STOP");
      }
      op_pos_ = pos_;
      op_ = static_cast<uint8_t>(in_[pos_++]);
      if (op_ == STOP) return stop();
      LATHE_RETURN_IF_ERROR(step());
    }
  }

 private:
  Error fail(const std::string& what) const {
    const char* name = pickle_op::name(op_);
    static const char* hex = "0123456789abcdef";
    std::string label = name ? name : std::string("opcode 0x") + hex[op_ >> 4] + hex[op_ & 15];
    return make_error(label + " at byte " + std::to_string(op_pos_) + ": " + what);
  }

  // --- reading the instruction stream -------------------------------------
  Result<const std::byte*> take(uint64_t n) {
    const size_t left = in_.size() - pos_;
    if (n > left) {
      return fail("truncated: needs " + std::to_string(n) + " bytes, " + std::to_string(left) + " left");
    }
    const std::byte* p = in_.data() + pos_;
    pos_ += static_cast<size_t>(n);
    return p;
  }
  // Little-endian unsigned integer of `n` bytes.
  Result<uint64_t> uint_le(size_t n) {
    LATHE_ASSIGN_OR_RETURN(const std::byte* p, take(n));
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;) v = (v << 8) | std::to_integer<uint64_t>(p[k]);
    return v;
  }
  // The bytes after a length prefix of `len_bytes`, checked against what is
  // left before anything is allocated.
  Result<std::string> counted(size_t len_bytes) {
    LATHE_ASSIGN_OR_RETURN(uint64_t n, uint_le(len_bytes));
    LATHE_ASSIGN_OR_RETURN(const std::byte* p, take(n));
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  }
  // A GLOBAL operand line ("module\n"); the allowed names are short.
  Result<std::string> line() {
    const size_t limit = std::min(in_.size() - pos_, size_t{256});
    const auto* begin = reinterpret_cast<const char*>(in_.data() + pos_);
    const void* nl = std::memchr(begin, '\n', limit);
    if (!nl) return fail("no newline-terminated name within " + std::to_string(limit) + " bytes");
    const size_t n = static_cast<const char*>(nl) - begin;
    pos_ += n + 1;
    return std::string(begin, n);
  }

  // --- the object graph ----------------------------------------------------
  Result<uint32_t> make(Node n) {
    if (nodes_.size() >= std::min<size_t>(limits_.max_values, UINT32_MAX)) {
      return fail("more than " + std::to_string(limits_.max_values) + " values");
    }
    n.op = op_;
    n.pos = op_pos_;
    nodes_.push_back(std::move(n));
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  Status push_id(uint32_t id) {
    if (stack_.size() >= limits_.max_stack) {
      return fail("more than " + std::to_string(limits_.max_stack) + " values on the stack");
    }
    stack_.push_back(id);
    return Status::Ok();
  }
  Status push(Node n) {
    LATHE_ASSIGN_OR_RETURN(uint32_t id, make(std::move(n)));
    return push_id(id);
  }
  Status push_kind(NK kind) { return push(Node(kind)); }
  Status push_text(NK kind, std::string text) {
    if (kind == NK::String && !pickle_detail::valid_utf8(text)) return fail("string is not valid UTF-8");
    Node n(kind);
    n.ref = static_cast<uint32_t>(texts_.size());
    texts_.push_back(std::move(text));
    return push(std::move(n));
  }
  Status push_int(int64_t v) {
    Node n(NK::Int);
    n.i = v;
    return push(std::move(n));
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // Values below the innermost MARK belong to an enclosing instruction.
  Result<uint32_t> pop() {
    if (stack_.size() <= floor()) return fail("stack underflow");
    uint32_t id = stack_.back();
    stack_.pop_back();
    return id;
  }
  Result<uint32_t> top() {
    if (stack_.size() <= floor()) return fail("stack underflow");
    return stack_.back();
  }
  Result<std::vector<uint32_t>> pop_mark() {
    if (marks_.empty()) return fail("no MARK to pop to");
    std::vector<uint32_t> items(stack_.begin() + static_cast<ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  Status push_tuple(std::vector<uint32_t> items) {
    Node n(NK::Tuple);
    n.items = std::move(items);
    return push(std::move(n));
  }
  Status tuple_n(size_t n) {
    std::vector<uint32_t> items(n);
    for (size_t k = n; k-- > 0;) {
      LATHE_ASSIGN_OR_RETURN(items[k], pop());
    }
    return push_tuple(std::move(items));
  }
  const std::string& text(uint32_t id) const { return texts_[nodes_[id].ref]; }
  std::string describe(uint32_t id) const {
    const Node& n = nodes_[id];
    if (n.kind == NK::Global) return "'" + text(id) + "'";
    static const char* names[] = {"None", "bool", "int", "float", "str", "bytes", "tensor",
                                  "list", "tuple", "dict", "torch.device", "torch.dtype",
                                  "global", "storage"};
    return names[static_cast<int>(n.kind)];
  }
  Status append_to(uint32_t target, const std::vector<uint32_t>& values, NK want, const char* what) {
    if (nodes_[target].kind != want) {
      return fail("can only add to a " + std::string(what) + ", not to a " + describe(target));
    }
    auto& items = nodes_[target].items;
    items.insert(items.end(), values.begin(), values.end());
    return Status::Ok();
  }

  Status step();
  Status literal();
  Status container();
  Status memo();
  Status global_op();
  Status global(std::string module, std::string name);  // copies: callers pass texts_ entries
  Status reduce();
  Status rebuild_tensor(const std::vector<uint32_t>& args);
  Status rebuild_parameter(const std::vector<uint32_t>& args, bool with_state);
  Status persistent_id();
  Result<std::vector<int64_t>> int_tuple(uint32_t id, const char* what);
  Result<PickleValue> stop();
  Result<PickleValue> convert(uint32_t id, size_t depth);

  std::span<const std::byte> in_;
  const PickleStorageLoader& loader_;
  PickleLimits limits_;
  size_t pos_ = 0, op_pos_ = 0;
  uint8_t op_ = 0;
  std::vector<Node> nodes_;
  std::vector<std::string> texts_;
  std::vector<Tensor> tensors_;
  std::vector<std::shared_ptr<Storage>> storages_;
  std::unordered_map<std::string, uint32_t> storage_by_key_;  // -> node
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
  std::vector<uint8_t> visiting_;
  size_t produced_ = 0, budget_ = 0;
  size_t copied_ = 0;  // ints copied by int_tuple()
};

// One opcode (op_, its argument bytes next in the input), by family.
Status Unpickler::step() {
  switch (op_) {
    case PROTO: case FRAME: case NONE: case NEWTRUE: case NEWFALSE: case BININT1: case BININT2: case BININT:
    case LONG1: case BINFLOAT: case SHORT_BINUNICODE: case BINUNICODE: case BINUNICODE8: case SHORT_BINBYTES:
    case BINBYTES: case BINBYTES8:
      return literal();
    case EMPTY_TUPLE: case TUPLE1: case TUPLE2: case TUPLE3: case TUPLE: case EMPTY_LIST: case EMPTY_DICT: case MARK:
    case APPEND: case APPENDS: case SETITEM: case SETITEMS:
      return container();
    case BINPUT: case LONG_BINPUT: case MEMOIZE: case BINGET: case LONG_BINGET: return memo();
    case GLOBAL: case STACK_GLOBAL: return global_op();
    case REDUCE: return reduce();
    case BINPERSID: return persistent_id();
    default: {
      const char* name = pickle_op::name(op_);
      if (!name) return fail("unknown opcode");
      return fail("not supported in torch.save pickles");
    }
  }
}

// Protocol and framing, and the opcodes that push a literal: None, bools,
// ints, floats, strings, bytes.
Status Unpickler::literal() {
  switch (op_) {
    case PROTO: {
      LATHE_ASSIGN_OR_RETURN(uint64_t v, uint_le(1));
      if (v > 5) return fail("unsupported pickle protocol " + std::to_string(v));
      return Status::Ok();
    }
    case FRAME: {  // framing only groups the opcodes that follow
      LATHE_ASSIGN_OR_RETURN(uint64_t n, uint_le(8));
      if (n > in_.size() - pos_) {
        return fail("frame of " + std::to_string(n) + " bytes, " + std::to_string(in_.size() - pos_) + " left");
      }
      return Status::Ok();
    }
    case NONE: return push_kind(NK::None);
    case NEWTRUE:
    case NEWFALSE: {
      Node n(NK::Bool);
      n.flag = op_ == NEWTRUE;
      return push(std::move(n));
    }
    case BININT1: case BININT2: case BININT: {  // unsigned 1 or 2 bytes; signed 4
      LATHE_ASSIGN_OR_RETURN(uint64_t v, uint_le(op_ == BININT1 ? 1 : op_ == BININT2 ? 2 : 4));
      return push_int(op_ == BININT ? static_cast<int32_t>(static_cast<uint32_t>(v)) : static_cast<int64_t>(v));
    }
    case LONG1: {  // little-endian two's complement of n bytes
      LATHE_ASSIGN_OR_RETURN(uint64_t n, uint_le(1));
      if (n > 8) return fail("integer of " + std::to_string(n) + " bytes does not fit in 64 bits");
      LATHE_ASSIGN_OR_RETURN(uint64_t v, uint_le(static_cast<size_t>(n)));
      if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
      return push_int(static_cast<int64_t>(v));
    }
    case BINFLOAT: {  // big-endian IEEE 754 double
      LATHE_ASSIGN_OR_RETURN(const std::byte* p, take(8));
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = (bits << 8) | std::to_integer<uint64_t>(p[k]);
      Node n(NK::Float);
      std::memcpy(&n.f, &bits, sizeof bits);
      return push(std::move(n));
    }
    case SHORT_BINUNICODE: case BINUNICODE: case BINUNICODE8: {
      LATHE_ASSIGN_OR_RETURN(std::string s, counted(op_ == SHORT_BINUNICODE ? 1 : op_ == BINUNICODE ? 4 : 8));
      return push_text(NK::String, std::move(s));
    }
    case SHORT_BINBYTES: case BINBYTES: case BINBYTES8: {
      LATHE_ASSIGN_OR_RETURN(std::string s, counted(op_ == SHORT_BINBYTES ? 1 : op_ == BINBYTES ? 4 : 8));
      return push_text(NK::Bytes, std::move(s));
    }
    default: return fail("unexpected opcode");
  }
}

// Tuples, lists, dicts and MARK, and the opcodes that fill them.
Status Unpickler::container() {
  switch (op_) {
    case EMPTY_TUPLE: return push_tuple({});
    case TUPLE1: return tuple_n(1);
    case TUPLE2: return tuple_n(2);
    case TUPLE3: return tuple_n(3);
    case TUPLE: {
      LATHE_ASSIGN_OR_RETURN(auto items, pop_mark());
      return push_tuple(std::move(items));
    }
    case EMPTY_LIST: return push_kind(NK::List);
    case EMPTY_DICT: return push_kind(NK::Dict);
    case MARK:
      if (marks_.size() >= limits_.max_depth) {
        return fail("more than " + std::to_string(limits_.max_depth) + " nested MARKs");
      }
      marks_.push_back(stack_.size());
      return Status::Ok();
    case APPEND: {
      LATHE_ASSIGN_OR_RETURN(uint32_t v, pop());
      LATHE_ASSIGN_OR_RETURN(uint32_t list, top());
      return append_to(list, {v}, NK::List, "list");
    }
    case APPENDS: {
      LATHE_ASSIGN_OR_RETURN(auto items, pop_mark());
      LATHE_ASSIGN_OR_RETURN(uint32_t list, top());
      return append_to(list, items, NK::List, "list");
    }
    case SETITEM: {
      LATHE_ASSIGN_OR_RETURN(uint32_t v, pop());
      LATHE_ASSIGN_OR_RETURN(uint32_t k, pop());
      LATHE_ASSIGN_OR_RETURN(uint32_t dict, top());
      return append_to(dict, {k, v}, NK::Dict, "dict");
    }
    case SETITEMS: {
      LATHE_ASSIGN_OR_RETURN(auto items, pop_mark());
      if (items.size() % 2) return fail("odd number of values (" + std::to_string(items.size()) + ") for key/value pairs");
      LATHE_ASSIGN_OR_RETURN(uint32_t dict, top());
      return append_to(dict, items, NK::Dict, "dict");
    }
    default: return fail("unexpected opcode");
  }
}

// The memo: PUT (BINPUT, LONG_BINPUT, MEMOIZE) and GET.
Status Unpickler::memo() {
  switch (op_) {
    case BINPUT: case LONG_BINPUT: case MEMOIZE: {
      uint64_t index = memo_.size();
      if (op_ != MEMOIZE) {
        LATHE_ASSIGN_OR_RETURN(index, uint_le(op_ == BINPUT ? 1 : 4));
      }
      LATHE_ASSIGN_OR_RETURN(uint32_t v, top());
      if (index >= limits_.max_memo || (memo_.size() >= limits_.max_memo && !memo_.count(index))) {
        return fail("memo index " + std::to_string(index) + " exceeds the limit of " + std::to_string(limits_.max_memo));
      }
      memo_[index] = v;
      return Status::Ok();
    }
    case BINGET: case LONG_BINGET: {
      LATHE_ASSIGN_OR_RETURN(uint64_t index, uint_le(op_ == BINGET ? 1 : 4));
      auto it = memo_.find(index);
      if (it == memo_.end()) return fail("memo index " + std::to_string(index) + " was never stored");
      return push_id(it->second);
    }
    default: return fail("unexpected opcode");
  }
}

// A module attribute, named inline (GLOBAL) or by two strings on the stack.
Status Unpickler::global_op() {
  switch (op_) {
    case GLOBAL: {
      LATHE_ASSIGN_OR_RETURN(std::string module, line());
      LATHE_ASSIGN_OR_RETURN(std::string name, line());
      return global(module, name);
    }
    case STACK_GLOBAL: {  // protocol 4: module and name are strings on the stack
      LATHE_ASSIGN_OR_RETURN(uint32_t name, pop());
      LATHE_ASSIGN_OR_RETURN(uint32_t module, pop());
      if (nodes_[name].kind != NK::String || nodes_[module].kind != NK::String) {
        return fail("module and name must be strings");
      }
      return global(text(module), text(name));
    }
    default: return fail("unexpected opcode");
  }
}

Status Unpickler::global(std::string module, std::string name) {
  Node n(NK::Global);
  std::optional<Global> g;
  if (module == "collections" && name == "OrderedDict") g = Global::OrderedDict;
  if (module == "torch._utils") {
    if (name == "_rebuild_tensor_v2") g = Global::RebuildTensorV2;
    if (name == "_rebuild_parameter") g = Global::RebuildParameter;
    if (name == "_rebuild_parameter_with_state") g = Global::RebuildParameterWithState;
  }
  if (module == "_codecs" && name == "encode") g = Global::CodecsEncode;
  if ((module == "__builtin__" || module == "builtins") && name == "bytes") g = Global::Bytes;
  if (module == "torch") {
    if (name == "Size") g = Global::Size;
    if (name == "device") g = Global::Device;
    if (auto d = dtype_from_storage_name(name)) {
      g = Global::StorageType;
      n.dtype = *d;
    }
    // torch.float32 and friends pickle as module attributes named like
    // Lathe's dtype names; they are values, not callables.
    for (int64_t code = 1; code < 64 && !g; ++code) {
      auto d = dtype_from_schema(code);
      if (d && dtype_name(*d) == name) {
        Node v(NK::DType);
        v.dtype = *d;
        return push(std::move(v));
      }
    }
  }
  if (!g) {
    return fail("'" + printable(module) + "." + printable(name) +
                "' is not allowed in a torch.save pickle (Lathe imports and calls nothing)");
  }
  n.global = *g;
  n.ref = static_cast<uint32_t>(texts_.size());
  texts_.push_back(module + "." + name);
  return push(std::move(n));
}

Result<std::vector<int64_t>> Unpickler::int_tuple(uint32_t id, const char* what) {
  const Node& n = nodes_[id];
  if (n.kind != NK::Tuple && n.kind != NK::List) {
    return fail(std::string(what) + " is a " + describe(id) + ", not a tuple of ints");
  }
  // The ints are copied out of a container a memo reference may share, so a
  // few bytes could copy one long tuple again and again: copies are bounded
  // like created values.
  if (n.items.size() > limits_.max_values - std::min(copied_, limits_.max_values)) {
    return fail(std::string(what) + ": more than " + std::to_string(limits_.max_values) +
                " values copied from tuples in all");
  }
  copied_ += n.items.size();
  std::vector<int64_t> out;
  for (uint32_t item : n.items) {
    if (nodes_[item].kind != NK::Int) return fail(std::string(what) + " holds a " + describe(item) + ", not an int");
    out.push_back(nodes_[item].i);
  }
  return out;
}

Status Unpickler::reduce() {
  LATHE_ASSIGN_OR_RETURN(uint32_t args_id, pop());
  LATHE_ASSIGN_OR_RETURN(uint32_t fn, pop());
  if (nodes_[fn].kind != NK::Global) return fail("cannot call a " + describe(fn));
  if (nodes_[args_id].kind != NK::Tuple) {
    return fail("arguments of " + describe(fn) + " are a " + describe(args_id) + ", not a tuple");
  }
  const std::vector<uint32_t> args = nodes_[args_id].items;
  auto want_args = [&](size_t n) -> Status {
    if (args.size() == n) return Status::Ok();
    return fail(describe(fn) + " takes " + std::to_string(n) + " arguments here, got " + std::to_string(args.size()));
  };
  switch (nodes_[fn].global) {
    case Global::OrderedDict: {
      LATHE_RETURN_IF_ERROR(want_args(0));
      Node n(NK::Dict);
      n.flag = true;
      return push(std::move(n));
    }
    case Global::RebuildTensorV2: return rebuild_tensor(args);
    case Global::RebuildParameter: return rebuild_parameter(args, false);
    case Global::RebuildParameterWithState: return rebuild_parameter(args, true);
    case Global::Size: {  // torch.Size((2, 3)) reads as the tuple (2, 3)
      LATHE_RETURN_IF_ERROR(want_args(1));
      LATHE_RETURN_IF_ERROR(int_tuple(args[0], "torch.Size argument"));
      return push_tuple(nodes_[args[0]].items);
    }
    case Global::Device: {  // torch.device('cuda', 0) / torch.device('cpu')
      if (args.empty() || args.size() > 2 || nodes_[args[0]].kind != NK::String ||
          (args.size() == 2 && (nodes_[args[1]].kind != NK::Int || nodes_[args[1]].i < 0))) {
        return fail("torch.device takes a type string and an optional index >= 0");
      }
      std::string device = text(args[0]);
      if (args.size() == 2) device += ":" + std::to_string(nodes_[args[1]].i);
      return push_text(NK::Device, std::move(device));
    }
    case Global::CodecsEncode: {  // protocol 2 bytes: _codecs.encode(latin-1 text, 'latin1')
      LATHE_RETURN_IF_ERROR(want_args(2));
      if (nodes_[args[0]].kind != NK::String || nodes_[args[1]].kind != NK::String ||
          (text(args[1]) != "latin1" && text(args[1]) != "latin-1")) {
        return fail("_codecs.encode is only read as encode(str, 'latin1')");
      }
      std::optional<std::string> raw = pickle_detail::bytes_from_latin1_text(text(args[0]));
      if (!raw) return fail("_codecs.encode: text is not latin-1");
      return push_text(NK::Bytes, std::move(*raw));
    }
    case Global::Bytes:  // protocol 2 writes b'' as bytes()
      LATHE_RETURN_IF_ERROR(want_args(0));
      return push_text(NK::Bytes, "");
    case Global::StorageType: break;
  }
  return fail(describe(fn) + " cannot be called");
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
//                    backward_hooks[, metadata])
Status Unpickler::rebuild_tensor(const std::vector<uint32_t>& args) {
  if (args.size() != 6 && args.size() != 7) {
    return fail("_rebuild_tensor_v2 takes 6 or 7 arguments, got " + std::to_string(args.size()));
  }
  if (nodes_[args[0]].kind != NK::Storage) return fail("_rebuild_tensor_v2: storage is a " + describe(args[0]));
  if (nodes_[args[1]].kind != NK::Int) return fail("_rebuild_tensor_v2: storage offset is a " + describe(args[1]));
  if (nodes_[args[4]].kind != NK::Bool) return fail("_rebuild_tensor_v2: requires_grad is a " + describe(args[4]));
  // Hooks would be callables (refused as globals anyway); metadata carries
  // flags such as conj/neg bits that change the values, which Lathe lacks.
  for (size_t k = 5; k < args.size(); ++k) {
    const Node& d = nodes_[args[k]];
    if (d.kind != NK::Dict || !d.items.empty()) {
      return fail(std::string("_rebuild_tensor_v2: ") + (k == 5 ? "backward hooks" : "tensor metadata") +
                  " must be an empty dict, got " + (d.kind == NK::Dict ? "a non-empty dict" : describe(args[k])));
    }
  }
  Tensor t;
  const Node& s = nodes_[args[0]];
  t.storage = storages_[s.ref];
  t.dtype = s.dtype;
  t.storage_offset = nodes_[args[1]].i;
  LATHE_ASSIGN_OR_RETURN(t.sizes, int_tuple(args[2], "_rebuild_tensor_v2: size"));
  LATHE_ASSIGN_OR_RETURN(t.strides, int_tuple(args[3], "_rebuild_tensor_v2: stride"));
  t.requires_grad = nodes_[args[4]].flag;
  Status fits = check_tensor_view(t);
  if (!fits.ok()) return fail("_rebuild_tensor_v2: " + fits.error().message());
  Node n(NK::Tensor);
  n.ref = static_cast<uint32_t>(tensors_.size());
  tensors_.push_back(std::move(t));
  return push(std::move(n));
}

// _rebuild_parameter(data, requires_grad, backward_hooks) and
// _rebuild_parameter_with_state(..., state): the state holds Python
// attributes set on the parameter, not tensor data, so it is dropped (it is
// made only of values this unpickler already accepted).
Status Unpickler::rebuild_parameter(const std::vector<uint32_t>& args, bool with_state) {
  const size_t want = with_state ? 4 : 3;
  if (args.size() != want) {
    return fail("_rebuild_parameter takes " + std::to_string(want) + " arguments, got " + std::to_string(args.size()));
  }
  if (nodes_[args[0]].kind != NK::Tensor) return fail("_rebuild_parameter: data is a " + describe(args[0]));
  if (nodes_[args[1]].kind != NK::Bool) return fail("_rebuild_parameter: requires_grad is a " + describe(args[1]));
  const Node& hooks = nodes_[args[2]];
  if (hooks.kind != NK::Dict || !hooks.items.empty()) {
    return fail("_rebuild_parameter: backward hooks must be an empty dict");
  }
  Tensor t = tensors_[nodes_[args[0]].ref];
  t.requires_grad = nodes_[args[1]].flag;
  Node n(NK::Tensor);
  n.flag = true;
  n.ref = static_cast<uint32_t>(tensors_.size());
  tensors_.push_back(std::move(t));
  return push(std::move(n));
}

// BINPERSID with ('storage', torch.<X>Storage, key, location, numel).
Status Unpickler::persistent_id() {
  LATHE_ASSIGN_OR_RETURN(uint32_t pid, pop());
  const Node& p = nodes_[pid];
  auto is = [&](size_t k, NK kind) { return nodes_[p.items[k]].kind == kind; };
  if (p.kind != NK::Tuple || p.items.size() != 5 || !is(0, NK::String) || text(p.items[0]) != "storage" ||
      !is(1, NK::Global) || nodes_[p.items[1]].global != Global::StorageType || !is(2, NK::String) ||
      !is(3, NK::String) || !is(4, NK::Int) || nodes_[p.items[4]].i < 0) {
    return fail("persistent id is not ('storage', torch.<X>Storage, key, location, numel)");
  }
  const DType dtype = nodes_[p.items[1]].dtype;
  const std::string key = text(p.items[2]);
  const int64_t numel = nodes_[p.items[4]].i;
  if (static_cast<uint64_t>(numel) > SIZE_MAX / dtype_size(dtype)) {
    return fail("storage '" + printable(key) + "' declares " + std::to_string(numel) + " elements, too many to address");
  }
  auto it = storage_by_key_.find(key);
  if (it != storage_by_key_.end()) {
    const Node& seen = nodes_[it->second];
    const int64_t seen_numel = static_cast<int64_t>(storages_[seen.ref]->nbytes() / dtype_size(seen.dtype));
    if (seen.dtype != dtype || seen_numel != numel) {
      return fail("storage '" + printable(key) + "' is referenced as both " + std::string(dtype_name(seen.dtype)) +
                  " x " + std::to_string(seen_numel) + " and " + std::string(dtype_name(dtype)) + " x " +
                  std::to_string(numel));
    }
    return push_id(it->second);
  }
  auto loaded = loader_(key, dtype, numel);
  if (!loaded.ok()) return fail(loaded.error().message());
  std::shared_ptr<Storage> storage = std::move(loaded).value();
  const size_t nbytes = static_cast<size_t>(numel) * dtype_size(dtype);
  if (!storage || storage->nbytes() < nbytes) return fail("storage '" + printable(key) + "' is too small");
  if (storage->nbytes() != nbytes) storage = Storage::view(storage, storage->data(), nbytes);
  Node n(NK::Storage);
  n.dtype = dtype;
  n.ref = static_cast<uint32_t>(storages_.size());
  storages_.push_back(std::move(storage));
  LATHE_ASSIGN_OR_RETURN(uint32_t id, make(std::move(n)));
  storage_by_key_[key] = id;
  return push_id(id);
}

Result<PickleValue> Unpickler::stop() {
  LATHE_ASSIGN_OR_RETURN(uint32_t result, pop());
  if (!marks_.empty()) return fail(std::to_string(marks_.size()) + " MARK(s) never closed");
  if (!stack_.empty()) return fail(std::to_string(stack_.size()) + " value(s) left on the stack");
  if (pos_ != in_.size()) return fail(std::to_string(in_.size() - pos_) + " bytes follow STOP");
  visiting_.assign(nodes_.size(), 0);
  // How many values the tree may hold: see PickleLimits::max_copies_per_object.
  const size_t ratio = std::max<size_t>(limits_.max_copies_per_object, 1), n = nodes_.size();
  budget_ = n > (SIZE_MAX - 4096) / ratio ? limits_.max_values : std::min(limits_.max_values, n * ratio + 4096);
  return convert(result, 0);
}

// Turns the object graph into a tree. Memo references become copies, so
// both depth and the total count are bounded here; a container met again
// while it is being converted is a reference cycle.
Result<PickleValue> Unpickler::convert(uint32_t id, size_t depth) {
  const Node& n = nodes_[id];
  auto error = [&](const std::string& what) {
    return make_error("value made by " + std::string(pickle_op::name(n.op)) + " at byte " + std::to_string(n.pos) +
                      ": " + what);
  };
  if (depth > limits_.max_depth) return error("values nested deeper than " + std::to_string(limits_.max_depth));
  if (++produced_ > budget_) {
    return error("more than " + std::to_string(budget_) + " values once shared references are expanded");
  }
  switch (n.kind) {
    case NK::None: return PickleValue::of_none();
    case NK::Bool: return PickleValue::of_bool(n.flag);
    case NK::Int: return PickleValue::of_int(n.i);
    case NK::Float: return PickleValue::of_double(n.f);
    case NK::String: return PickleValue::of_string(texts_[n.ref]);
    case NK::Bytes: return PickleValue::of_bytes(texts_[n.ref]);
    case NK::Device: return PickleValue::of_device(texts_[n.ref]);
    case NK::DType: return PickleValue::of_dtype(n.dtype);
    case NK::Tensor: return PickleValue::of_tensor(tensors_[n.ref], n.flag);
    case NK::Global: return error("'" + texts_[n.ref] + "' is a reference to code, not a value");
    case NK::Storage: return error("a storage outside a tensor is not supported");
    case NK::List:
    case NK::Tuple:
    case NK::Dict: break;
  }
  if (visiting_[id]) return error("the pickle contains a reference cycle");
  visiting_[id] = 1;
  PickleValue out;
  out.kind = n.kind == NK::List ? PickleValue::Kind::List
             : n.kind == NK::Tuple ? PickleValue::Kind::Tuple : PickleValue::Kind::Dict;
  if (n.kind == NK::Dict) {
    out.ordered = n.flag;
    std::unordered_set<std::string> keys;
    for (size_t k = 0; k + 1 < n.items.size(); k += 2) {
      LATHE_ASSIGN_OR_RETURN(PickleValue key, convert(n.items[k], depth + 1));
      if (!pickle_detail::hashable(key)) return error("dict key " + debug_string(key, 100) + " is not hashable");
      if (key.kind == PickleValue::Kind::String && !keys.insert(key.text).second) {
        return error("dict key '" + printable(key.text) + "' appears twice");
      }
      LATHE_ASSIGN_OR_RETURN(PickleValue value, convert(n.items[k + 1], depth + 1));
      out.entries.emplace_back(std::move(key), std::move(value));
    }
  } else {
    out.items.reserve(n.items.size());
    for (uint32_t item : n.items) {
      LATHE_ASSIGN_OR_RETURN(PickleValue v, convert(item, depth + 1));
      out.items.push_back(std::move(v));
    }
  }
  visiting_[id] = 0;
  return out;
}

}  // namespace

Result<PickleValue> unpickle(std::span<const std::byte> bytes, const PickleStorageLoader& load_storage,
                             const PickleLimits& limits) {
  Unpickler u(bytes, load_storage, limits);
  return u.run();
}

}  // namespace lathe
