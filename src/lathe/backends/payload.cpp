#include "lathe/backends/payload.h"

#include <cstring>
#include <limits>

#include "lathe/core/int_arith.h"

namespace lathe {

namespace {

constexpr char kMagic[8] = {'L', 'A', 'T', 'H', 'E', 'D', 'L', 'G'};
constexpr char kReplannedMagic[8] = {'L', 'A', 'T', 'H', 'E', 'D', 'Y', 'N'};
// A whole claimed subprogram's JSON: far larger than any name.
constexpr uint32_t kMaxProgramBytes = 1u << 30;
// Bounds what a hostile record can make us allocate.
constexpr uint32_t kMaxCount = 1u << 24;
constexpr uint32_t kMaxRank = 16;

class Writer {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void str(const std::string& s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out.insert(out.end(), p, p + s.size());
  }
  std::vector<std::byte> out;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> b) : b_(b) {}
  template <typename T>
  Result<T> get(const char* what) {
    if (b_.size() - pos_ < sizeof(T)) return make_error(std::string("delegate payload: truncated at ") + what + " (byte " + std::to_string(pos_) + ")");
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  Result<uint32_t> count(const char* what, uint32_t max = kMaxCount) {
    LATHE_ASSIGN_OR_RETURN(uint32_t n, get<uint32_t>(what));
    if (n > max) return make_error(std::string("delegate payload: ") + what + " count " + std::to_string(n) + " is implausible");
    return n;
  }
  Result<std::string> str(const char* what, uint32_t max = kMaxCount) {
    LATHE_ASSIGN_OR_RETURN(uint32_t n, count(what, max));
    if (b_.size() - pos_ < n) return make_error(std::string("delegate payload: truncated in ") + what);
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  bool at_end() const { return pos_ == b_.size(); }

 private:
  std::span<const std::byte> b_;
  size_t pos_ = 0;
};

// The magic, version and backend name every record starts with.
Result<std::string> read_header(Reader& r, const char (&magic)[8], uint32_t version, const char* record) {
  for (char c : magic) {
    LATHE_ASSIGN_OR_RETURN(char got, r.get<char>("magic"));
    if (got != c) return make_error(std::string("delegate payload: bad magic (not a Lathe ") + record + ")");
  }
  LATHE_ASSIGN_OR_RETURN(uint32_t got, r.get<uint32_t>("version"));
  if (got != version) return make_error(std::string("delegate payload: unknown ") + record + " version " + std::to_string(got));
  return r.str("backend");
}

}  // namespace

// Saturates: sizes come from a file, and a wrapped product of sizes each
// under 2^40 (2^120 wraps to 0) would pass the "implausibly large" check.
int64_t PayloadValue::numel() const { return checked_numel(sizes).value_or(std::numeric_limits<int64_t>::max()); }

uint32_t DelegatePayload::add_value(std::vector<int64_t> sizes, int32_t input) {
  values.push_back(PayloadValue{input, std::move(sizes)});
  return static_cast<uint32_t>(values.size() - 1);
}

int role_index(const PayloadOp& op, std::string_view role) {
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    if (op.inputs[k].role == role) return static_cast<int>(k);
  }
  return -1;
}

std::vector<std::byte> encode_payload(const DelegatePayload& p) {
  Writer w;
  for (char c : kMagic) w.put<char>(c);
  w.put<uint32_t>(DelegatePayload::kVersion);
  w.str(p.backend);
  w.put<uint32_t>(static_cast<uint32_t>(p.values.size()));
  for (const PayloadValue& v : p.values) {
    w.put<int32_t>(v.input);
    w.put<uint32_t>(static_cast<uint32_t>(v.sizes.size()));
    for (int64_t s : v.sizes) w.put<int64_t>(s);
  }
  w.put<uint32_t>(static_cast<uint32_t>(p.ops.size()));
  for (const PayloadOp& op : p.ops) {
    w.str(op.kind);
    w.str(op.node);
    w.put<uint32_t>(static_cast<uint32_t>(op.inputs.size()));
    for (const PayloadOperand& o : op.inputs) {
      w.put<uint32_t>(o.value);
      w.str(o.role);
    }
    w.put<uint32_t>(static_cast<uint32_t>(op.outputs.size()));
    for (uint32_t o : op.outputs) w.put<uint32_t>(o);
    w.put<uint32_t>(static_cast<uint32_t>(op.ints.size()));
    for (int64_t i : op.ints) w.put<int64_t>(i);
    w.put<uint32_t>(static_cast<uint32_t>(op.floats.size()));
    for (double f : op.floats) w.put<double>(f);
  }
  w.put<uint32_t>(static_cast<uint32_t>(p.outputs.size()));
  for (uint32_t o : p.outputs) w.put<uint32_t>(o);
  return std::move(w.out);
}

Result<DelegatePayload> decode_payload(std::span<const std::byte> bytes) {
  Reader r(bytes);
  DelegatePayload p;
  LATHE_ASSIGN_OR_RETURN(p.backend, read_header(r, kMagic, DelegatePayload::kVersion, "delegate record"));
  LATHE_ASSIGN_OR_RETURN(uint32_t nv, r.count("values"));
  for (uint32_t i = 0; i < nv; ++i) {
    PayloadValue v;
    LATHE_ASSIGN_OR_RETURN(v.input, r.get<int32_t>("value input"));
    LATHE_ASSIGN_OR_RETURN(uint32_t rank, r.count("rank", kMaxRank));
    for (uint32_t d = 0; d < rank; ++d) {
      LATHE_ASSIGN_OR_RETURN(int64_t s, r.get<int64_t>("size"));
      if (s < 0 || s > (int64_t{1} << 40)) return make_error("delegate payload: value " + std::to_string(i) + " has size " + std::to_string(s));
      v.sizes.push_back(s);
    }
    if (v.numel() > (int64_t{1} << 40)) return make_error("delegate payload: value " + std::to_string(i) + " is implausibly large");
    p.values.push_back(std::move(v));
  }
  auto check_id = [&](uint32_t id, const std::string& where) -> Status {
    if (id >= p.values.size()) return make_error("delegate payload: " + where + " names value " + std::to_string(id) + " of " + std::to_string(p.values.size()));
    return Status::Ok();
  };
  LATHE_ASSIGN_OR_RETURN(uint32_t nops, r.count("ops"));
  for (uint32_t i = 0; i < nops; ++i) {
    PayloadOp op;
    LATHE_ASSIGN_OR_RETURN(op.kind, r.str("op kind"));
    LATHE_ASSIGN_OR_RETURN(op.node, r.str("op node"));
    const std::string where = "op " + std::to_string(i) + " (" + op.kind + ")";
    LATHE_ASSIGN_OR_RETURN(uint32_t ni, r.count("operands"));
    for (uint32_t k = 0; k < ni; ++k) {
      PayloadOperand o;
      LATHE_ASSIGN_OR_RETURN(o.value, r.get<uint32_t>("operand"));
      LATHE_RETURN_IF_ERROR(check_id(o.value, where));
      LATHE_ASSIGN_OR_RETURN(o.role, r.str("role"));
      op.inputs.push_back(std::move(o));
    }
    LATHE_ASSIGN_OR_RETURN(uint32_t no, r.count("outputs"));
    for (uint32_t k = 0; k < no; ++k) {
      LATHE_ASSIGN_OR_RETURN(uint32_t o, r.get<uint32_t>("output"));
      LATHE_RETURN_IF_ERROR(check_id(o, where));
      if (p.values[o].input >= 0) return make_error("delegate payload: " + where + " writes delegate input value " + std::to_string(o));
      op.outputs.push_back(o);
    }
    LATHE_ASSIGN_OR_RETURN(uint32_t nint, r.count("ints"));
    for (uint32_t k = 0; k < nint; ++k) {
      LATHE_ASSIGN_OR_RETURN(int64_t x, r.get<int64_t>("int"));
      op.ints.push_back(x);
    }
    LATHE_ASSIGN_OR_RETURN(uint32_t nf, r.count("floats"));
    for (uint32_t k = 0; k < nf; ++k) {
      LATHE_ASSIGN_OR_RETURN(double x, r.get<double>("float"));
      op.floats.push_back(x);
    }
    p.ops.push_back(std::move(op));
  }
  LATHE_ASSIGN_OR_RETURN(uint32_t nout, r.count("node outputs"));
  for (uint32_t k = 0; k < nout; ++k) {
    LATHE_ASSIGN_OR_RETURN(uint32_t o, r.get<uint32_t>("node output"));
    LATHE_RETURN_IF_ERROR(check_id(o, "node output " + std::to_string(k)));
    p.outputs.push_back(o);
  }
  if (!r.at_end()) return make_error("delegate payload: trailing bytes after the record");
  return p;
}

Status check_payload_dataflow(const DelegatePayload& p, size_t operands, size_t node_outputs) {
  for (const PayloadValue& v : p.values) {
    if (v.input >= 0 && static_cast<size_t>(v.input) >= operands)
      return make_error("the payload reads delegate input " + std::to_string(v.input) + ", the node has " + std::to_string(operands));
  }
  if (p.outputs.size() != node_outputs)
    return make_error("the payload has " + std::to_string(p.outputs.size()) + " outputs, the node " + std::to_string(node_outputs));
  std::vector<bool> defined(p.values.size(), false);
  for (size_t i = 0; i < p.values.size(); ++i) defined[i] = p.values[i].input >= 0;
  for (const PayloadOp& op : p.ops) {
    const std::string label = op.kind + " '" + op.node + "'";
    for (const PayloadOperand& o : op.inputs) {
      if (!defined[o.value]) return make_error(label + " reads value " + std::to_string(o.value) + " before it is computed");
    }
    for (uint32_t o : op.outputs) {
      if (defined[o]) return make_error(label + " redefines value " + std::to_string(o));
      defined[o] = true;
    }
  }
  for (uint32_t o : p.outputs) {
    if (!defined[o] || p.values[o].input >= 0) return make_error("payload output value " + std::to_string(o) + " is not computed by the delegate");
  }
  return Status::Ok();
}

bool is_replanned_payload(std::span<const std::byte> bytes) {
  return bytes.size() >= sizeof(kReplannedMagic) && std::memcmp(bytes.data(), kReplannedMagic, sizeof(kReplannedMagic)) == 0;
}

std::vector<std::byte> encode_replanned_payload(const ReplannedPayload& p) {
  Writer w;
  for (char c : kReplannedMagic) w.put(c);
  w.put<uint32_t>(ReplannedPayload::kVersion);
  w.str(p.backend);
  w.put<uint32_t>(static_cast<uint32_t>(p.inputs.size()));
  for (const std::string& name : p.inputs) w.str(name);
  w.str(p.program_json);
  return std::move(w.out);
}

Result<ReplannedPayload> decode_replanned_payload(std::span<const std::byte> bytes) {
  Reader r(bytes);
  ReplannedPayload p;
  LATHE_ASSIGN_OR_RETURN(p.backend, read_header(r, kReplannedMagic, ReplannedPayload::kVersion, "re-planned delegate record"));
  LATHE_ASSIGN_OR_RETURN(uint32_t n, r.count("inputs"));
  for (uint32_t i = 0; i < n; ++i) {
    LATHE_ASSIGN_OR_RETURN(std::string name, r.str("input name"));
    p.inputs.push_back(std::move(name));
  }
  LATHE_ASSIGN_OR_RETURN(p.program_json, r.str("program", kMaxProgramBytes));
  if (!r.at_end()) return make_error("delegate payload: trailing bytes after the re-planned record");
  return p;
}

}  // namespace lathe
