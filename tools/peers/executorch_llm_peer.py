"""ExecuTorch with its XNNPACK delegate on tools/bench_llm_decode.py's
decode step, lowered the way ExecuTorch's own Llama export
(``examples/models/llama/export_llama``, XNNPACK with extended ops) lowers
a model: torchao source-transform quantization of every ``nn.Linear`` ->
strict ``torch.export.export`` -> ``to_edge_transform_and_lower`` with
``XnnpackDynamicallyQuantizedPartitioner`` first and ``XnnpackPartitioner``
second -> ``to_executorch()`` -> a .pte, loaded and run by ExecuTorch's
runtime Python bindings. Only ``Method.execute`` is timed (its binding's
tensor wrapping included: a few microseconds a call): one untimed call,
then ``repeat`` calls of the same step, median and p90 as
bench_llm_decode computes them.

The schemes, quantized from the same fp32 weights the bench's other
peers start from (``prepare`` quantizes ``model`` in place):
  fp32     no quantization;
  int4g32  ExecuTorch's "8da4w" at group size 32: torchao
           Int8DynamicActivationIntxWeightConfig(int4, PerGroup(32)), int4
           weights in groups of 32 and int8 per-token asymmetric
           activations quantized at run time. XNNPACK keeps the group
           scales in bf16 (the delegate converts them), so its logits
           differ from eager's on the same torchao weights by a few 1e-2
           of their scale;
  int8wo   ExecuTorch's "8da8w": the same config with int8 weights per
           output channel (PerAxis(0)). Not weight-only: ExecuTorch lowers
           quantized linears to XNNPACK only with dynamically quantized
           activations (an IntxWeightOnlyConfig linear is claimed by
           XnnpackPartitioner, but stored as fp32 and computed wrongly).
Weights are chosen as export_llama chooses them by default (its
``use_hqq``): ``intx_choose_qparams_algorithm="hqq_scale_only"``,
symmetric scales refined by half-quadratic iterations. The embedding table
stays fp32 (the bench quantizes linears only, and decode reads one row).

Settings that are not defaults, besides the quantization:
* strict export (TorchDynamo) under no_grad with the math SDPA, as
  ExecuTorch's LLM builder exports: non-strict export of transformers'
  static-cache module lifts the cache tensors the layers write as
  constants aliasing the registered buffers, which the decomposition
  before lowering rejects. Strict export copies every weight while it
  traces (Dynamo's real-value cache): about one more model in memory;
* the two partitioners, in export_llama's order: the dynamically quantized
  linears are claimed first, then everything else XNNPACK can run;
* mutable buffers (the KV cache) are marked with
  ``InitializedMutableBufferPass`` (see executorch_peer: otherwise they
  start as zeroed scratch memory);
* the runtime's thread pool, which the XNNPACK delegate runs on, is set to
  ``threads`` (``_unsafe_reset_threadpool``; its default is every core).

ExecuTorch's Llama flow also swaps in its own model, a custom SDPA op that
updates the cache in place, and 4-bit embeddings; none of that applies to
transformers' module, whose attention is left as exported: the RMSNorm
means, the cache writes (index_put), the mask and the embedding run on
ExecuTorch's portable kernels between some 14 delegate calls a layer
(``prepare`` reports what is inside and outside the delegates).
"""

import collections
import os
import statistics
import time

from peers.executorch_peer import PTE

GROUP = 32
LINEAR = {
    "int4g32": ("8da4w g%d: int8 dynamic per-token activations, int4 weights in groups of %d (hqq scale-only)"
                % (GROUP, GROUP)),
    "int8wo": "8da8w: int8 dynamic per-token activations, int8 weights per output channel (hqq scale-only)",
}


def quantize(model, scheme):
    """Quantizes every nn.Linear of ``model`` in place as ExecuTorch's
    export_llama does for the scheme; returns the one-line description."""
    if scheme == "fp32":
        return "fp32: no quantization"
    if scheme not in LINEAR:
        raise ValueError("unknown scheme %r" % scheme)
    import torch
    from torchao.quantization import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.quantization.granularity import PerAxis, PerGroup

    int4 = scheme == "int4g32"
    config = Int8DynamicActivationIntxWeightConfig(
        weight_dtype=torch.int4 if int4 else torch.int8,
        weight_granularity=PerGroup(GROUP) if int4 else PerAxis(0),
        intx_choose_qparams_algorithm="hqq_scale_only")

    def linear(m, fqn):
        return isinstance(m, torch.nn.Linear) and (not int4 or m.in_features % GROUP == 0)

    with torch.no_grad():
        quantize_(model, config, filter_fn=linear)
    return LINEAR[scheme]


def prepare(model, step, call, scheme, folder):
    """Quantizes ``model`` (in place: ``step`` wraps it) for ``scheme``,
    exports ``step`` at ``call``, lowers it to XNNPACK and writes the .pte
    and the call's inputs into ``folder``. Returns what was done:
    quantization (one line), delegates (delegate calls), inside and outside
    (op -> count, in the delegates and left to ExecuTorch's portable
    kernels), seconds (per stage)."""
    import gc

    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import (
        XnnpackDynamicallyQuantizedPartitioner,
        XnnpackPartitioner,
    )
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    import executorch.kernels.quantized  # noqa: F401  (out variants of quantized_decomposed ops)

    from peers import artifacts

    seconds = {}
    t0 = time.time()
    what = quantize(model, scheme)
    seconds["quantize"] = time.time() - t0
    # strict, no grad, math SDPA: see the module's docstring
    t0 = time.time()
    with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH]), torch.no_grad():
        ep = torch.export.export(step, tuple(call), strict=True)
    buffers = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "BUFFER"]
    seconds["export"] = time.time() - t0
    t0 = time.time()
    edge = to_edge_transform_and_lower(
        ep, partitioner=[XnnpackDynamicallyQuantizedPartitioner(), XnnpackPartitioner()])
    del ep
    gc.collect()
    seconds["lower"] = time.time() - t0
    gm = edge.exported_program().graph_module
    delegates = sum(1 for n in gm.graph.nodes if n.op == "call_function" and _op(n) == "executorch_call_delegate")
    outside = _ops(gm)
    inside = collections.Counter()
    for _, sub in gm.named_children():
        if hasattr(sub, "original_module"):  # a LoweredBackendModule
            inside.update(_ops(sub.original_module.graph_module))
    del gm
    t0 = time.time()
    config = ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(buffers)] if buffers else [])
    program = edge.to_executorch(config)
    del edge
    gc.collect()
    with open(os.path.join(folder, PTE), "wb") as f:
        program.write_to_file(f)  # not program.buffer: that is one more copy of the weights
    del program
    gc.collect()
    seconds["to_executorch"] = time.time() - t0
    artifacts.save_arrays(folder, "input", [a.numpy() for a in call])
    return {"quantization": what, "delegates": delegates, "inside": dict(sorted(inside.items())),
            "outside": dict(sorted(outside.items())), "seconds": seconds}


def _op(node):
    return getattr(node.target, "__name__", str(node.target))


def _ops(gm):
    return collections.Counter(_op(n) for n in gm.graph.nodes if n.op == "call_function"
                               and _op(n) not in ("getitem", "executorch_call_delegate"))


def decode_times(folder, threads, repeat):
    """Times the .pte ``prepare`` wrote on its saved call: one untimed call,
    then ``repeat`` timed ones. Returns median and p90 in ms and the first
    output of the last call (the logits, float32)."""
    import numpy as np
    import torch
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    import executorch.kernels.quantized  # noqa: F401  (registers the quantized kernels with the runtime)

    from peers import artifacts

    torch.set_num_threads(1)  # torch only wraps tensors here
    portable_lib._unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(os.path.join(folder, PTE)).load_method("forward")
    inputs = [torch.from_numpy(a) for a in artifacts.load_arrays(folder, "input")]
    out = method.execute(inputs)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = method.execute(inputs)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return {"median": statistics.median(times), "p90": times[int(0.9 * (len(times) - 1))],
            "logits": np.asarray(out[0].numpy(), dtype=np.float32)}
