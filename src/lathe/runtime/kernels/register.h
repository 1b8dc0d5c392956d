// One registration function per kernel family file; portable_kernels()
// calls them all. Explicit calls, not static initialisers, so nothing
// depends on the linker keeping unreferenced objects of a static library.
#pragma once

#include "lathe/runtime/kernel_registry.h"

namespace lathe::kernels {

void register_binary_kernels(KernelRegistry& r);     // binary.cpp
void register_unary_kernels(KernelRegistry& r);      // unary.cpp
void register_matmul_kernels(KernelRegistry& r);     // matmul.cpp
void register_view_kernels(KernelRegistry& r);       // view.cpp
void register_copy_kernels(KernelRegistry& r);       // copy.cpp
void register_index_kernels(KernelRegistry& r);      // index.cpp
void register_reduce_kernels(KernelRegistry& r);     // reduce.cpp
void register_softmax_kernels(KernelRegistry& r);    // softmax.cpp
void register_norm_kernels(KernelRegistry& r);       // norm.cpp
void register_conv_kernels(KernelRegistry& r);       // conv.cpp
void register_pool_kernels(KernelRegistry& r);       // pool.cpp
void register_attention_kernels(KernelRegistry& r);  // attention.cpp
void register_factory_kernels(KernelRegistry& r);    // factory.cpp
void register_sym_kernels(KernelRegistry& r);        // sym.cpp
void register_quantized_kernels(KernelRegistry& r);  // quantized.cpp
void register_quantized_linear_kernels(KernelRegistry& r);  // quantized_linear.cpp
void register_dynamic_int8_kernels(KernelRegistry& r);      // dynamic_int8.cpp
void register_affine_quant_kernels(KernelRegistry& r);      // affine_quant.cpp
void register_pad_kernels(KernelRegistry& r);        // pad.cpp
void register_inplace_kernels(KernelRegistry& r);    // inplace.cpp
void register_scan_kernels(KernelRegistry& r);       // scan.cpp
void register_sort_kernels(KernelRegistry& r);       // sort.cpp
void register_repeat_kernels(KernelRegistry& r);     // repeat.cpp
void register_scatter_kernels(KernelRegistry& r);    // scatter.cpp
void register_upsample_kernels(KernelRegistry& r);   // upsample.cpp
void register_distance_kernels(KernelRegistry& r);   // distance.cpp
void register_random_kernels(KernelRegistry& r);     // random.cpp
void register_pointwise_kernels(KernelRegistry& r);  // pointwise.cpp
void register_rearrange_kernels(KernelRegistry& r);  // rearrange.cpp
void register_recurrent_kernels(KernelRegistry& r);  // recurrent.cpp
void register_contraction_kernels(KernelRegistry& r);  // contraction.cpp

// Registers `fn` under "aten.<name>.<overload>" for each overload given.
void register_overloads(KernelRegistry& r, const char* name, std::initializer_list<const char*> overloads,
                        KernelFn fn, OutputAlias alias = OutputAlias::None);

}  // namespace lathe::kernels
