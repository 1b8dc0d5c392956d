"""ExecuTorch with its XNNPACK delegate, the way ExecuTorch's own docs
lower a model: ``torch.export.export`` -> ``to_edge_transform_and_lower``
with ``XnnpackPartitioner`` -> ``to_executorch()`` -> a .pte, loaded and
run by ExecuTorch's runtime Python bindings (``executorch.runtime``, the
portable_lib extension with the XNNPACK backend and the quantized kernels
registered). Only ``Method.execute`` is timed (its binding's tensor
wrapping included: a few microseconds a call).

Two settings are not defaults:
* mutable buffers (the decoder's KV cache) are marked with
  ``InitializedMutableBufferPass``: by default ExecuTorch plans them as
  scratch memory that starts at zero, which would silently drop the filled
  cache the exported module holds (the outputs then disagree with PyTorch);
* the runtime's thread pool, which the XNNPACK delegate runs on, is set to
  ``threads`` (``_unsafe_reset_threadpool``; its default is every core).
"""

import os

PTE = "executorch.pte"


def prepare(model, module, inputs, folder):
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    import executorch.kernels.quantized  # noqa: F401  (out variants of quantized_decomposed ops)

    ep = torch.export.export(module, inputs)
    # Every buffer's placeholder (the pass matches placeholder names): the
    # export IR may not list the cache update as a BUFFER_MUTATION yet (it
    # appears once decompositions functionalize it), and the flag only
    # matters for buffers the program ends up mutating.
    buffers = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "BUFFER"]
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
    delegated = sum(1 for n in edge.exported_program().graph_module.graph.nodes
                    if n.op == "call_function" and "executorch_call_delegate" in str(n.target))
    config = ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(buffers)] if buffers else [])
    program = edge.to_executorch(config)
    with open(os.path.join(folder, PTE), "wb") as f:
        f.write(program.buffer)
    with open(os.path.join(folder, "executorch.note"), "w") as f:
        f.write("%d delegate(s)" % delegated)


def run(folder, threads, repeat):
    import torch
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    import executorch.kernels.quantized  # noqa: F401  (registers the quantized kernels with the runtime)

    from peers import artifacts
    from peers.timing import time_calls

    torch.set_num_threads(1)  # torch only wraps tensors here
    portable_lib._unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(os.path.join(folder, PTE)).load_method("forward")
    inputs = [torch.from_numpy(a) for a in artifacts.load_arrays(folder, "input")]
    median, p90, out = time_calls(lambda: method.execute(inputs), repeat)
    note = open(os.path.join(folder, "executorch.note")).read().strip()
    return {"median": median, "p90": p90, "outputs": [t.numpy() for t in out], "note": note}
