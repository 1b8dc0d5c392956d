"""ONNX Runtime, CPU execution provider: the module exported with
``torch.onnx.export(..., dynamo=True)`` (PyTorch 2.13's exporter, through
onnxscript), run with every graph optimization
(``GraphOptimizationLevel.ORT_ENABLE_ALL``), ``intra_op_num_threads`` =
threads, ``inter_op_num_threads`` = 1, sequential execution. Only
``InferenceSession.run`` on numpy inputs is timed.

A module that mutates a buffer (the decoder's KV cache) exports as a
functional graph: the cache row is written into a copy inside the call and
not kept between calls, so each call computes the same step, as in the
other runtimes.
"""

import os

ONNX = "model.onnx"


def prepare(model, module, inputs, folder):
    import torch

    torch.onnx.export(module, inputs, os.path.join(folder, ONNX), dynamo=True, verbose=False)


def run(folder, threads, repeat):
    import onnxruntime as ort

    from peers import artifacts
    from peers.timing import time_calls

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(os.path.join(folder, ONNX), so, providers=["CPUExecutionProvider"])
    arrays = artifacts.load_arrays(folder, "input")
    feeds = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
    median, p90, out = time_calls(lambda: session.run(None, feeds), repeat)
    return {"median": median, "p90": p90, "outputs": out, "note": ""}
