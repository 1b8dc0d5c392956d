// Lathe's API for writing your own passes and backends, beside lathe.h.
//
//   #include <lathe/lathe.h>
//   #include <lathe/extend.h>
//
//   class MyPass : public lathe::NamedPass<"my_pass", "what it does"> {
//     lathe::Result<bool> run(lathe::ExportedProgram& program, lathe::PassContext& ctx) override {
//       lathe::Rewriter rw(program);           // the only way to change a graph
//       lathe::Constness constness(program);   // the one constness analysis
//       ...                                    // ctx.rewritten / ctx.kept: explanations
//     }
//   };
//   options.pipeline = {std::make_shared<MyPass>(), "default"};   // lathe::transform
//
//   class MyBackend : public lathe::Backend { ... };               // support, preprocess, init
//   lathe::register_backend(std::make_shared<MyBackend>());
//
// What each header gives (examples/cpp_pass and examples/cpp_backend use
// all of it):
//   ir/rewriter.h          Rewriter: create, replace, erase nodes; outputs and
//                          output specs follow every replacement
//   analysis/constness.h   Constness: parameter, buffer, lifted constant,
//                          user input or computed, with the reason
//   ir/literal_args.h      a node's arguments by schema name (tensor_input,
//                          literal_int, ...)
//   api/infer_meta.h       metadata of a call a pass creates, from the kernels
//   backends/backend.h     Backend, NodeSupport, DelegateSubgraph, and the
//                          runtime half (DelegateHandle::execute, KernelCall)
// None of them brings Lathe's internals (pools, indexes, memory maps) with
// it: a test checks this header's include closure (tests/api/include_closure.sh).
#pragma once

#include "lathe/analysis/constness.h"
#include "lathe/api/infer_meta.h"
#include "lathe/backends/backend.h"
#include "lathe/core/tensor.h"
#include "lathe/ir/literal_args.h"
#include "lathe/ir/rewriter.h"
#include "lathe/lathe.h"

namespace lathe {

// A fresh contiguous (row-major) copy of `t`, for a backend that reads a
// weight's or an input's bytes in order.
Tensor contiguous_copy(const Tensor& t);

// The arguments of a call to `op` as torch.export writes them, for
// Rewriter::create_call: positional ones named by the op's schema (the aten
// schemas of the verified torch releases), keyword ones checked against it,
// all in schema order. An op without a known schema takes keyword arguments
// only. Errors name the op and the argument ("aten.mul.Tensor takes 2
// positional argument(s), 3 given").
Result<std::vector<NamedArgument>> schema_arguments(const std::string& op, std::vector<Argument> positional,
                                                    std::vector<std::pair<std::string, Argument>> keyword);

}  // namespace lathe
