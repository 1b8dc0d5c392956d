#include "lathe/runtime/kernel_registry.h"

#include "lathe/ir/op_catalogue.h"
#include "lathe/runtime/control_flow.h"
#include "lathe/runtime/kernels/register.h"

namespace lathe {

void KernelRegistry::set(std::string op, KernelInfo info) {
  kernels_[std::string(ops::strip_torch_ops(op))] = info;
}

const KernelInfo* KernelRegistry::find(std::string_view target) const {
  auto it = kernels_.find(ops::strip_torch_ops(target));
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto& [name, info] : kernels_) out.push_back(name);
  return out;
}

const KernelRegistry& portable_kernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    kernels::register_binary_kernels(r);
    kernels::register_unary_kernels(r);
    kernels::register_matmul_kernels(r);
    kernels::register_view_kernels(r);
    kernels::register_copy_kernels(r);
    kernels::register_pad_kernels(r);
    kernels::register_inplace_kernels(r);
    kernels::register_index_kernels(r);
    kernels::register_reduce_kernels(r);
    kernels::register_softmax_kernels(r);
    kernels::register_norm_kernels(r);
    kernels::register_conv_kernels(r);
    kernels::register_pool_kernels(r);
    kernels::register_attention_kernels(r);
    kernels::register_factory_kernels(r);
    kernels::register_sym_kernels(r);
    kernels::register_quantized_kernels(r);
    kernels::register_quantized_linear_kernels(r);
    kernels::register_dynamic_int8_kernels(r);
    kernels::register_affine_quant_kernels(r);
    kernels::register_scan_kernels(r);
    kernels::register_sort_kernels(r);
    kernels::register_repeat_kernels(r);
    kernels::register_scatter_kernels(r);
    kernels::register_upsample_kernels(r);
    kernels::register_distance_kernels(r);
    kernels::register_random_kernels(r);
    kernels::register_pointwise_kernels(r);
    kernels::register_rearrange_kernels(r);
    kernels::register_recurrent_kernels(r);
    kernels::register_contraction_kernels(r);
    register_control_flow_entries(r);
    return r;
  }();
  return registry;
}

}  // namespace lathe

namespace lathe::kernels {

void register_overloads(KernelRegistry& r, const char* name, std::initializer_list<const char*> overloads, KernelFn fn,
                        OutputAlias alias) {
  for (const char* o : overloads) r.set(std::string("aten.") + name + "." + o, KernelInfo{fn, alias});
}

}  // namespace lathe::kernels
