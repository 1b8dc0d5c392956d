#include "lathe/runtime/auto_functionalized.h"

#include <unordered_map>
#include <unordered_set>

#include "lathe/ir/literal_args.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/runtime/graph_plan.h"
#include "lathe/runtime/kernel_call.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

// How a mutated argument views its base (read_view_information_from_args
// in torch/_higher_order_ops/auto_functionalize.py).
struct ViewInfo {
  enum class Kind { Base, AsStrided, Slice } kind = Kind::Base;
  size_t base = 0;
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0;
  int64_t dim = 0, start = 0, end = 0;
};

struct MutatedArg {
  std::string name;
  std::optional<ViewInfo> view;  // nullopt: the argument is None
};

// The auxiliary names that describe mutated argument `m`.
std::vector<std::string> aux_names(const std::string& m) {
  std::vector<std::string> out;
  for (const char* s : {"base_index", "alias", "size", "stride", "storage_offset", "slice_dim", "slice_start", "slice_end"}) {
    out.push_back("_" + m + "_" + s);
  }
  return out;
}

Result<MutatedArg> read_mutated(const Node& n, const std::string& m, size_t bases) {
  MutatedArg out{m, std::nullopt};
  const Argument* index = n.input("_" + m + "_base_index");
  if (index->is_none()) return out;
  auto b = int_literal(index);
  if (!b || *b < 0 || static_cast<size_t>(*b) >= bases) return make_error("'_" + m + "_base_index' is not a base index");
  ViewInfo v;
  v.base = static_cast<size_t>(*b);
  if (n.input("_" + m + "_storage_offset")) {
    auto sizes = int_list_literal(n.input("_" + m + "_size"));
    auto strides = int_list_literal(n.input("_" + m + "_stride"));
    auto offset = int_literal(n.input("_" + m + "_storage_offset"));
    if (!sizes || !strides || !offset || sizes->size() != strides->size()) {
      return make_error("argument '" + m + "' is a view with symbolic or malformed size/stride/offset");
    }
    v.kind = ViewInfo::Kind::AsStrided;
    v.sizes = *sizes, v.strides = *strides, v.storage_offset = *offset;
  } else if (n.input("_" + m + "_slice_dim")) {
    auto dim = int_literal(n.input("_" + m + "_slice_dim"));
    auto start = int_literal(n.input("_" + m + "_slice_start"));
    auto end = int_literal(n.input("_" + m + "_slice_end"));
    if (!dim || !start || !end) return make_error("argument '" + m + "' is a slice with symbolic bounds");
    v.kind = ViewInfo::Kind::Slice;
    v.dim = *dim, v.start = *start, v.end = *end;
  }
  out.view = v;
  return out;
}

// The mutated argument as a view of its base's clone (contiguous, offset 0).
Result<Tensor> regenerate(const ViewInfo& v, const Tensor& base, const Tensor& clone) {
  if (v.kind == ViewInfo::Kind::Base) return clone;
  Tensor t = clone;
  if (v.kind == ViewInfo::Kind::AsStrided) {
    // Offsets and strides were recorded against the original base; they
    // hold for the clone only if the base was contiguous from offset 0.
    if (!base.is_contiguous() || base.storage_offset != 0) {
      return make_error("a strided view of a base that is not contiguous from offset 0 cannot be rebuilt");
    }
    t.sizes = v.sizes, t.strides = v.strides, t.storage_offset = v.storage_offset;
  } else {
    LATHE_ASSIGN_OR_RETURN(int64_t d, kernels::normalize_dim(v.dim, static_cast<int64_t>(t.sizes.size())));
    const int64_t start = std::clamp<int64_t>(v.start, 0, t.sizes[d]);
    const int64_t end = std::clamp<int64_t>(v.end, start, t.sizes[d]);
    t.storage_offset += start * t.strides[d];
    t.sizes[d] = end - start;
  }
  LATHE_RETURN_IF_ERROR(t.check_fits());
  return t;
}

class FreshMemory : public OutputAllocator {
 public:
  Result<Tensor> allocate(size_t, DType dtype, const std::vector<int64_t>& sizes) override {
    return Tensor::empty(dtype, sizes);
  }
};

class AutoFunctionalizedHandle : public DelegateHandle {
 public:
  Status execute(KernelCall& call) override;

  KernelFn fn = nullptr;
  size_t bases_arg = 0;             // position of `_all_bases` among the node's arguments
  std::vector<size_t> passed;       // positions of the op's own arguments (outer)
  std::vector<NamedArgument> args;  // the op's arguments: passed ones, then the mutated ones
  std::vector<BoundArgument> bound;
  std::vector<MutatedArg> mutated;  // aligned with args[passed.size()...]
  std::vector<int32_t> op_outputs;  // local slots of the op's own outputs
  size_t local_slots = 0;
};

Status AutoFunctionalizedHandle::execute(KernelCall& call) {
  std::vector<EValue> local(local_slots);
  for (size_t k = 0; k < passed.size(); ++k) {
    LATHE_ASSIGN_OR_RETURN(std::vector<EValue> items, call.arg_items(passed[k]));
    for (size_t i = 0; i < bound[k].slots.size() && i < items.size(); ++i) {
      if (bound[k].slots[i] >= 0) local[bound[k].slots[i]] = std::move(items[i]);
    }
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<EValue> bases, call.arg_items(bases_arg));
  std::vector<Tensor> clones;
  for (const EValue& b : bases) {
    if (!b.is_tensor()) return make_error("_all_bases holds " + b.describe());
    clones.push_back(kernels::contiguous_copy(b.tensor()));
  }
  for (size_t k = 0; k < mutated.size(); ++k) {
    const BoundArgument& b = bound[passed.size() + k];
    if (!mutated[k].view) continue;
    const ViewInfo& v = *mutated[k].view;
    auto t = regenerate(v, bases[v.base].tensor(), clones[v.base]);
    if (!t.ok()) return t.error().context("argument '" + mutated[k].name + "'");
    local[b.slots[0]] = std::move(t).value();
  }
  FreshMemory memory;
  KernelCall inner(call.node(), bound, op_outputs, local, memory);
  LATHE_RETURN_IF_ERROR(fn(inner));
  for (size_t i = 0; i < op_outputs.size(); ++i) {
    LATHE_RETURN_IF_ERROR(call.set_output(i, op_outputs[i] >= 0 ? local[op_outputs[i]] : EValue()));
  }
  for (size_t b = 0; b < clones.size(); ++b) LATHE_RETURN_IF_ERROR(call.set_output(op_outputs.size() + b, clones[b]));
  return Status::Ok();
}

size_t output_count(const Node& n) {
  size_t count = 0;
  for (const Argument& a : n.outputs()) {
    if (auto* l = a.get_if<TensorList>()) count += l->items.size();
    else if (auto* ol = a.get_if<OptionalTensorList>()) count += ol->items.size();
    else ++count;
  }
  return count;
}

// Splits the node's arguments into the op's own, the mutated ones and the
// bases; binds the op's arguments to local slots.
Status read_arguments(const Node& n, AutoFunctionalizedHandle& h) {
  const auto& inputs = n.inputs();
  size_t bases = 0;
  std::unordered_set<std::string> aux = {"_all_bases"};
  std::vector<std::string> mutated_names;
  for (size_t k = 1; k < inputs.size(); ++k) {
    const std::string& name = inputs[k].name;
    if (name == "_all_bases") {
      h.bases_arg = k;
      const auto* l = inputs[k].arg.get_if<TensorList>();
      if (!l) return make_error("'_all_bases' is not a tensor list");
      bases = l->items.size();
    } else if (name.size() > 12 && name.starts_with("_") && name.ends_with("_base_index")) {
      mutated_names.push_back(name.substr(1, name.size() - 12));
    } else if (name.starts_with("_") && name.ends_with("_length")) {
      return make_error("mutated tensor lists ('" + name + "') are not supported");
    }
  }
  if (h.bases_arg == 0) return make_error("no '_all_bases' argument");
  for (const std::string& m : mutated_names) {
    for (const std::string& a : aux_names(m)) aux.insert(a);
  }
  std::unordered_map<const Value*, int32_t> slot_of;
  for (size_t k = 1; k < inputs.size(); ++k) {
    if (aux.count(inputs[k].name)) continue;
    h.passed.push_back(k);
    h.args.push_back(inputs[k]);
    inputs[k].arg.for_each_value([&](Value* v) { slot_of.emplace(v, static_cast<int32_t>(slot_of.size())); });
  }
  for (const std::string& m : mutated_names) {
    LATHE_ASSIGN_OR_RETURN(MutatedArg a, read_mutated(n, m, bases));
    h.mutated.push_back(std::move(a));
    h.args.push_back(NamedArgument{m, Argument(), ArgKind::Keyword});
  }
  // `args` is final: bind to its elements only now (BoundArgument points into it).
  for (size_t k = 0; k < h.passed.size(); ++k) {
    LATHE_ASSIGN_OR_RETURN(BoundArgument b, bind_argument(h.args[k], slot_of));
    h.bound.push_back(std::move(b));
  }
  int32_t next = static_cast<int32_t>(slot_of.size());
  for (size_t k = 0; k < h.mutated.size(); ++k) {
    NamedArgument& na = h.args[h.passed.size() + k];
    if (h.mutated[k].view) na.arg = TensorRef{nullptr};  // resolved through its slot
    h.bound.push_back(BoundArgument{&na, {h.mutated[k].view ? next++ : -1}});
  }
  const size_t total = output_count(n);
  if (total < bases) return make_error("the node has fewer outputs than bases");
  for (size_t i = 0; i < total - bases; ++i) h.op_outputs.push_back(next++);
  h.local_slots = static_cast<size_t>(next);
  return Status::Ok();
}

}  // namespace

bool is_auto_functionalized(const Node& n) {
  return ops::same_op(n.op_target(), ops::higher_order::auto_functionalized_v2);
}

std::string wrapped_op(const Node& n) {
  if (!is_auto_functionalized(n) || n.inputs().empty()) return "";
  const auto* op = n.inputs()[0].arg.get_if<OperatorArg>();
  return op ? op->name : "";
}

Result<std::shared_ptr<DelegateHandle>> plan_auto_functionalized(const Node& n, const KernelRegistry& kernels) {
  const std::string op = wrapped_op(n);
  const KernelInfo* k = op.empty() ? nullptr : kernels.find(op);
  if (!k) return make_error("no kernel for the wrapped op " + (op.empty() ? std::string("(none named)") : op));
  auto h = std::make_shared<AutoFunctionalizedHandle>();
  h->fn = k->fn;
  LATHE_RETURN_IF_ERROR(read_arguments(n, *h));
  return std::shared_ptr<DelegateHandle>(std::move(h));
}

}  // namespace lathe
