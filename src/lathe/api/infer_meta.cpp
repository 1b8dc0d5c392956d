#include "lathe/api/infer_meta.h"

#include <unordered_map>

#include "lathe/ir/exported_program.h"
#include "lathe/ir/op_catalogue.h"
#include "lathe/ir/rewriter.h"
#include "lathe/runtime/executor.h"

namespace lathe {

namespace {

// A zero-filled tensor with `v`'s dtype and concrete sizes.
Result<Tensor> zeros_like_meta(const Value* v) {
  if (!v->meta()) return make_error("operand '" + v->name() + "' has no metadata");
  auto sizes = v->meta()->concrete_sizes();
  if (!sizes) return make_error("operand '" + v->name() + "' has symbolic sizes");
  return Tensor::try_empty(v->meta()->dtype, *sizes);  // zero-filled
}

// Each tensor operand of `inputs` becomes a lifted constant of `scratch`;
// the returned arguments read those instead.
Result<std::vector<NamedArgument>> lift_operands(Rewriter& rw, const std::vector<NamedArgument>& inputs) {
  std::unordered_map<Value*, Value*> lifted;
  Status failed = Status::Ok();
  std::vector<NamedArgument> out = inputs;
  for (NamedArgument& na : out) {
    na.arg.map_values([&](Value* v) -> Value* {
      if (!failed.ok()) return v;
      auto it = lifted.find(v);
      if (it != lifted.end()) return it->second;
      if (v->kind() != ValueKind::Tensor) {
        failed = make_error("operand '" + v->name() + "' is not a tensor (a symbolic value)");
        return v;
      }
      auto t = zeros_like_meta(v);
      if (!t.ok()) {
        failed = t.error();
        return v;
      }
      auto c = rw.add_constant("c_" + std::to_string(lifted.size()), std::move(t).value());
      if (!c.ok()) {
        failed = c.error();
        return v;
      }
      lifted[v] = *c;
      return *c;
    });
  }
  LATHE_RETURN_IF_ERROR(failed);
  return out;
}

}  // namespace

Result<std::vector<TensorMeta>> infer_call_meta(std::string_view target, const std::vector<NamedArgument>& inputs,
                                                size_t outputs) {
  const std::string op(ops::strip_torch_ops(target));
  auto fail = [&](const Error& e) { return e.context("cannot infer the metadata of " + op + "; pass it (like=)"); };
  ExportedProgram scratch;
  Rewriter rw(scratch);
  auto args = lift_operands(rw, inputs);
  if (!args.ok()) return fail(args.error());
  // The placeholder metadata is never read: the executor sizes each kernel's
  // output from the kernel itself when memory planning is off.
  std::vector<NewOutput> outs(outputs, NewOutput{ValueKind::Tensor, "out", TensorMeta{}});
  auto node = rw.create_node(ops::full_target(op), std::move(args).value(), std::move(outs));
  if (!node.ok()) return fail(node.error());
  for (Value* v : (*node)->defined_values()) {
    Status s = rw.add_output(v, OutputSpec{OutputKind::UserOutput, ""});
    if (!s.ok()) return fail(s.error());
  }
  ExecutorOptions options;
  options.plan_memory = false;
  auto ex = Executor::create(scratch, options);
  if (!ex.ok()) return fail(ex.error());
  auto values = (*ex)->run(std::vector<EValue>{});
  if (!values.ok()) return fail(values.error());
  std::vector<TensorMeta> metas;
  for (const EValue& e : *values) {
    if (!e.is_tensor()) return fail(Error("an output is " + e.describe() + ", not a tensor"));
    TensorMeta m;
    m.dtype = e.tensor().dtype;
    for (int64_t s : e.tensor().sizes) m.sizes.emplace_back(s);
    for (int64_t s : Tensor::contiguous_strides(e.tensor().sizes)) m.strides.emplace_back(s);
    m.storage_offset = SymDim(int64_t{0});
    metas.push_back(std::move(m));
  }
  return metas;
}

}  // namespace lathe
