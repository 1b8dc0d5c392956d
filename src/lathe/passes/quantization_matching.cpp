#include "lathe/passes/quantization_matching.h"

#include <algorithm>
#include <unordered_set>

#include "lathe/ir/printer.h"

namespace lathe::quant_match {

namespace {

constexpr std::string_view kAssertMeta = "torch.ops.aten._assert_tensor_metadata.default";

// Ops that only reshape or retype a value: what stands between a stored
// scale and the matmul that reads it.
bool is_shape_op(std::string_view t) {
  static const std::unordered_set<std::string_view> ops = {
      "torch.ops.aten.flatten.using_ints", "torch.ops.aten.view.default",     "torch.ops.aten.reshape.default",
      "torch.ops.aten.to.dtype",           "torch.ops.aten._to_copy.default", "torch.ops.aten.squeeze.dim",
      "torch.ops.aten.squeeze.dims",       "torch.ops.aten.squeeze.default",  "torch.ops.aten.unsqueeze.default",
      "torch.ops.aten.clone.default",      "torch.ops.aten.contiguous.default"};
  return ops.count(t) != 0;
}

}  // namespace

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

bool is_metadata_check(const Node* n) { return n && n->target() == kAssertMeta; }

Value* tensor_arg(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return nullptr;
  if (Value* v = a->tensor()) return v;
  if (auto* o = a->get_if<OptionalTensor>()) return o->value;
  return nullptr;
}

std::optional<int64_t> int_arg(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return std::nullopt;
  if (auto* i = a->get_if<int64_t>()) return *i;
  if (auto* s = a->get_if<SymIntArg>(); s && !s->is_value()) return s->literal();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> int_list_arg(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return std::nullopt;
  if (auto* l = a->get_if<IntList>()) return l->items;
  if (auto* s = a->get_if<SymIntList>()) {
    std::vector<int64_t> out;
    for (const SymIntArg& i : s->items) {
      if (i.is_value()) return std::nullopt;
      out.push_back(i.literal());
    }
    return out;
  }
  return std::nullopt;
}

std::optional<double> float_arg(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return std::nullopt;
  if (auto* d = a->get_if<double>()) return *d;
  if (auto* s = a->get_if<SymFloatArg>(); s && !s->is_value()) return s->literal();
  return std::nullopt;
}

std::optional<std::string> string_arg(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  if (!a) return std::nullopt;
  if (auto* s = a->get_if<std::string>()) return *s;
  return std::nullopt;
}

std::optional<DType> dtype_arg(const Node* n, std::string_view name, std::optional<DType> absent) {
  const Argument* a = n->input(name);
  if (!a || a->is_none()) return absent;
  if (auto* s = a->get_if<ScalarTypeArg>()) return s->dtype;
  return std::nullopt;
}

std::string arg_text(const Node* n, std::string_view name) {
  const Argument* a = n->input(name);
  return a ? format_argument(*a) : "absent";
}

std::optional<int64_t> static_dim(const Value* v, size_t i) {
  const auto& m = v->meta();
  if (!m || i >= m->sizes.size() || !m->sizes[i].is_concrete()) return std::nullopt;
  return m->sizes[i].value();
}

size_t rank(const Value* v) { return v->meta() ? v->meta()->sizes.size() : 0; }

std::optional<DType> dtype_of(const Value* v) {
  if (!v || !v->meta()) return std::nullopt;
  return v->meta()->dtype;
}

Node* producer_if(const Value* v, std::string_view target) {
  if (!v || v->is_placeholder() || !v->producer()) return nullptr;
  Node* p = v->producer();
  return p->target() == target ? p : nullptr;
}

Node* cast_of(const Value* v) {
  Node* p = producer_if(v, "torch.ops.aten.to.dtype");
  return p ? p : producer_if(v, "torch.ops.aten._to_copy.default");
}

Value* transposed(const Value* v) {
  if (Node* t = producer_if(v, "torch.ops.aten.t.default")) return tensor_arg(t, "self");
  if (Node* p = producer_if(v, "torch.ops.aten.permute.default")) {
    if (int_list_arg(p, "dims") == std::vector<int64_t>{1, 0}) return tensor_arg(p, "self");
  }
  return nullptr;
}

Value* skip_noop_casts(Value* v) {
  for (int depth = 0; v && depth < 8; ++depth) {
    Node* p = cast_of(v);
    Value* in = p ? tensor_arg(p, "self") : nullptr;
    if (!in || dtype_of(in) != dtype_of(v)) break;
    v = in;
  }
  return v;
}

bool only_checked_besides(const Value* v, const Node* user) {
  for (const Use& u : v->uses()) {
    if (u.user != user && !is_metadata_check(u.user)) return false;
  }
  return true;
}

bool from_constants(const Constness& k, const Value* v) {
  for (int depth = 0; v && depth < 16; ++depth) {
    if (v->is_placeholder()) return k.is_compile_time_constant(v);
    const Node* p = v->producer();
    if (!p || !is_shape_op(p->target())) return false;
    v = tensor_arg(p, "self");
  }
  return false;
}

Status erase_dead(Rewriter& rw, const std::vector<Node*>& chain) {
  std::vector<Node*> left(chain.begin(), chain.end());
  for (bool progress = true; progress;) {
    progress = false;
    for (auto it = left.begin(); it != left.end(); ++it) {
      Node* n = *it;
      bool dead = true;
      std::vector<Node*> checks;
      for (const Value* v : n->defined_values()) {
        for (const Use& u : v->uses()) {
          if (is_metadata_check(u.user)) checks.push_back(u.user);
          else dead = false;
        }
      }
      if (!dead) continue;
      std::sort(checks.begin(), checks.end());
      checks.erase(std::unique(checks.begin(), checks.end()), checks.end());
      for (Node* c : checks) LATHE_RETURN_IF_ERROR(rw.erase_node(c));
      LATHE_RETURN_IF_ERROR(rw.erase_node(n));
      left.erase(it);
      progress = true;
      break;
    }
  }
  return Status::Ok();
}

std::optional<int64_t> first_nonzero(const Tensor& t, int64_t* value) {
  if (!t.check_fits().ok()) return -1;
  const int64_t n = t.numel();
  const size_t r = t.sizes.size();
  std::vector<int64_t> idx(r, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = t.storage_offset;
    for (size_t d = 0; d < r; ++d) off += idx[d] * t.strides[d];
    const std::byte* p = t.storage->data() + off * static_cast<int64_t>(dtype_size(t.dtype));
    int64_t v = 0;
    switch (t.dtype) {
      case DType::Int8: v = *reinterpret_cast<const int8_t*>(p); break;
      case DType::UInt8: v = *reinterpret_cast<const uint8_t*>(p); break;
      case DType::Int16: v = *reinterpret_cast<const int16_t*>(p); break;
      case DType::Int32: v = *reinterpret_cast<const int32_t*>(p); break;
      case DType::Int64: v = *reinterpret_cast<const int64_t*>(p); break;
      default: return -1;
    }
    if (v != 0) {
      *value = v;
      return i;
    }
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < t.sizes[d]) break;
      idx[d] = 0;
    }
  }
  return std::nullopt;
}

std::string check_zero_points(const ExportedProgram& ep, const Constness& k, const Value* zeros,
                              const std::string& op) {
  const InputSpec* spec = zeros->is_placeholder() ? k.input_spec(zeros) : nullptr;
  const Tensor* t = spec ? ep.state_tensor(*spec) : nullptr;
  if (!t) return "zero points " + quoted(zeros) + " are not a stored tensor, so they cannot be checked to be 0";
  int64_t value = 0;
  std::optional<int64_t> at = first_nonzero(*t, &value);
  if (!at) return "";
  if (*at < 0) return "zero points " + quoted(zeros) + " are " + std::string(dtype_name(t->dtype)) + ", not integers";
  return "asymmetric weight: zero points " + quoted(zeros) + " are not all 0 (entry " + std::to_string(*at) + " is " +
         std::to_string(value) + "); " + op + " has no zero point";
}

}  // namespace lathe::quant_match
