#include "lathe/harness/differential.h"

#include <algorithm>
#include <cstdio>

#include "lathe/core/splitmix64.h"
#include "lathe/runtime/executor.h"
#include "lathe/runtime/kernels/util.h"

namespace lathe {

namespace {

using Rng = SplitMix64;

// The exclusive upper bound for an integer input: rows of the embedding or
// the indexed dim it feeds, when that is known from metadata.
int64_t index_bound(const Value* v) {
  int64_t bound = 0;
  for (const Use& u : v->uses()) {
    if (!u.user) continue;
    const std::string op = u.user->op_name();
    auto dim_size = [&](const char* tensor_arg, int64_t dim) -> int64_t {
      const Argument* a = u.user->input(tensor_arg);
      const Value* t = a ? a->tensor() : nullptr;
      if (!t || !t->meta()) return 0;
      auto s = t->meta()->concrete_sizes();
      if (!s || s->empty()) return 0;
      if (dim < 0) dim += static_cast<int64_t>(s->size());
      return dim >= 0 && dim < static_cast<int64_t>(s->size()) ? (*s)[dim] : 0;
    };
    int64_t b = 0;
    if (op.rfind("aten.embedding.", 0) == 0) {
      b = dim_size("weight", 0);
    } else if (op.rfind("aten.index_select.", 0) == 0 || op.rfind("aten.gather.", 0) == 0) {
      const Argument* d = u.user->input("dim");
      const int64_t* dim = d ? d->get_if<int64_t>() : nullptr;
      b = dim ? dim_size("self", *dim) : 0;
    }
    if (b > 0) bound = bound == 0 ? b : std::min(bound, b);
  }
  return bound == 0 ? 2 : bound;
}

}  // namespace

Result<std::vector<Tensor>> random_inputs(const ExportedProgram& program, uint64_t seed) {
  Rng rng{seed * 0x2545f4914f6cdd1dull + 1};
  std::vector<Tensor> out;
  const Graph& g = program.graph();
  for (size_t i = 0; i < program.input_specs.size() && i < g.inputs().size(); ++i) {
    if (program.input_specs[i].kind != InputKind::UserInput) continue;
    const Value* v = g.inputs()[i].tensor();
    if (!v || !v->meta()) return make_error("user input " + std::to_string(out.size()) + " is not a tensor with metadata");
    const TensorMeta& m = *v->meta();
    std::vector<int64_t> sizes;
    for (const SymDim& d : m.sizes) {
      if (d.is_concrete()) {
        sizes.push_back(d.value());
      } else if (d.expr().hint && std::holds_alternative<int64_t>(*d.expr().hint)) {
        sizes.push_back(std::get<int64_t>(*d.expr().hint));
      } else {
        return make_error("input '" + v->name() + "' has symbolic dim '" + d.expr().expr + "' without a hint; pass inputs");
      }
    }
    // The sizes come from the file: a program declaring an input of
    // [2^40, 3] is refused here, not by std::bad_alloc.
    auto made = Tensor::try_empty(m.dtype, sizes, kMaxRandomInputBytes);
    if (!made.ok()) return made.error().context("cannot make a random input '" + v->name() + "'");
    Tensor t = std::move(made).value();
    const int64_t bound = index_bound(v);
    Status s = kernels::dispatch_storage(m.dtype, "random_inputs", [&](auto tag) -> Status {
      using T = decltype(tag);
      T* p = kernels::mdata<T>(t);
      for (int64_t k = 0; k < t.numel(); ++k) {
        if constexpr (std::is_same_v<T, bool>) {
          p[k] = (rng.next() & 1) != 0;
        } else if constexpr (std::is_integral_v<T>) {
          p[k] = static_cast<T>(rng.next() % static_cast<uint64_t>(bound));
        } else {
          p[k] = T(static_cast<float>(rng.uniform() * 2.0 - 1.0));
        }
      }
      return Status::Ok();
    });
    LATHE_RETURN_IF_ERROR(s);
    out.push_back(std::move(t));
  }
  return out;
}

std::string DifferentialReport::summary() const {
  std::string s;
  for (const Entry& e : entries) s += e.what + ": " + e.diff.describe() + (e.diff.ok ? "" : "  <-- beyond tolerance") + "\n";
  return s;
}

Result<DifferentialReport> differential_run(const ExportedProgram& before, const ExportedProgram& after,
                                            const DifferentialOptions& options) {
  ExecutorOptions ob, oa;
  ob.kernels = options.before_kernels;
  oa.kernels = options.after_kernels;
  ob.delegates = options.before_delegates;
  oa.delegates = options.after_delegates;
  auto eb = Executor::create(before, ob);
  if (!eb.ok()) return eb.error().context("before");
  auto ea = Executor::create(after, oa);
  if (!ea.ok()) return ea.error().context("after");
  Executor& xb = **eb;
  Executor& xa = **ea;
  if (xb.user_inputs().size() != xa.user_inputs().size() || xb.user_outputs().size() != xa.user_outputs().size()) {
    return make_error("the programs' signatures differ (" + std::to_string(xb.user_inputs().size()) + " -> " +
                      std::to_string(xa.user_inputs().size()) + " user inputs, " + std::to_string(xb.user_outputs().size()) +
                      " -> " + std::to_string(xa.user_outputs().size()) + " user outputs)");
  }
  std::vector<std::vector<Tensor>> calls = options.inputs;
  if (calls.empty()) {
    for (int k = 0; k < std::max(1, options.calls); ++k) {
      LATHE_ASSIGN_OR_RETURN(auto in, random_inputs(before, options.seed + static_cast<uint64_t>(k)));
      calls.push_back(std::move(in));
    }
  }
  const std::vector<std::string> before_bufs = xb.mutated_buffers();
  DifferentialReport report;
  for (size_t k = 0; k < calls.size(); ++k) {
    const std::string call = "call " + std::to_string(k);
    auto rb = xb.run(calls[k]);
    if (!rb.ok()) return rb.error().context(call + " before");
    auto ra = xa.run(calls[k]);
    if (!ra.ok()) return ra.error().context(call + " after");
    for (size_t i = 0; i < rb->size(); ++i) {
      DifferentialReport::Entry e;
      e.what = call + " output " + std::to_string(i) + " '" + xb.user_outputs()[i].name + "'";
      e.diff = compare_tensors((*ra)[i], (*rb)[i], options.tolerance);
      report.entries.push_back(std::move(e));
    }
    for (const std::string& name : before_bufs) {
      const Tensor* b = xb.buffer(name);
      const Tensor* a = xa.buffer(name);
      if (!b || !a) continue;
      report.entries.push_back({call + " buffer '" + name + "'", compare_tensors(*a, *b, options.tolerance)});
    }
  }
  for (const auto& e : report.entries) {
    report.ok = report.ok && e.diff.ok;
    report.max_abs = std::max(report.max_abs, e.diff.max_abs);
    report.max_rel = std::max(report.max_rel, e.diff.rel);
  }
  return report;
}

Status differential_check(const ExportedProgram& before, const ExportedProgram& after, const DifferentialOptions& options) {
  LATHE_ASSIGN_OR_RETURN(DifferentialReport r, differential_run(before, after, options));
  if (r.ok) return Status::Ok();
  for (const auto& e : r.entries) {
    if (!e.diff.ok) {
      char tol[96];
      std::snprintf(tol, sizeof tol, " (tolerance rtol %.3g, atol %.3g)", options.tolerance.rtol, options.tolerance.atol);
      return make_error("outputs differ after the rewrite: " + e.what + ": " + e.diff.describe() + tol);
    }
  }
  return make_error("outputs differ");
}

}  // namespace lathe
