#include "lathe/passes/quantization_matching.h"

#include <algorithm>
#include <unordered_set>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/printer.h"

namespace lathe::quant_match {

namespace {

// Ops that only reshape or retype a value: what stands between a stored
// scale and the matmul that reads it.
bool is_shape_op(OpTarget t) {
  using namespace ops::aten;
  return t == flatten_using_ints || t == view || t == reshape || t == to_dtype || t == _to_copy || t == squeeze_dim ||
         t == squeeze_dims || t == squeeze || t == unsqueeze || t == clone || t == contiguous;
}

}  // namespace

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

bool is_metadata_check(const Node* n) { return n && n->op_target() == ops::aten::_assert_tensor_metadata; }

Value* tensor_arg(const Node* n, std::string_view name) { return tensor_input(*n, name); }

std::optional<int64_t> int_arg(const Node* n, std::string_view name) { return int_literal(n->input(name)); }

std::optional<std::vector<int64_t>> int_list_arg(const Node* n, std::string_view name) {
  return int_list_literal(n->input(name));
}

std::optional<double> float_arg(const Node* n, std::string_view name) { return float_literal(n->input(name)); }

std::optional<std::string> string_arg(const Node* n, std::string_view name) {
  const std::string* s = literal_string(*n, name);
  return s ? std::optional<std::string>(*s) : std::nullopt;
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

Node* producer_if(const Value* v, OpTarget target) {
  if (!v || v->is_placeholder() || !v->producer()) return nullptr;
  Node* p = v->producer();
  return p->op_target() == target ? p : nullptr;
}

Node* cast_of(const Value* v) {
  Node* p = producer_if(v, ops::aten::to_dtype);
  return p ? p : producer_if(v, ops::aten::_to_copy);
}

Value* transposed(const Value* v) {
  if (Node* t = producer_if(v, ops::aten::t)) return tensor_arg(t, "self");
  if (Node* p = producer_if(v, ops::aten::permute)) {
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
    if (!p || !is_shape_op(p->op_target())) return false;
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
