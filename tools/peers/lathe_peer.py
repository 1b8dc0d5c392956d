"""Lathe: the module exported with torch.export (PyTorch 2.13), saved as
.pt2, rewritten by ``lathe transform`` with the deployment passes
(TRANSFORM: parameter addmm/mm -> linear, int8/int4 weight-only linears
fused into one kernel, dead code removed; Lathe's ahead-of-time step, as
to_edge is ExecuTorch's and graph optimization ONNX Runtime's), then run by
``lathe run`` on the portable kernels or lowered in memory to XNNPACK
(``--backend xnnpack``: prepacked at load, only calls timed).

``lathe run --repeat N`` runs the method once untimed (warm-up), then N
timed calls, and prints their median and p90; ``--out`` writes the outputs
of the untimed first call, which are checked against PyTorch's.
"""

import os
import re
import subprocess

from peers import artifacts

EXPORTED = "exported.pt2"
ARCHIVE = "lathe.pt2"
TRANSFORM = "addmm_mm_to_linear,fuse_weight_only_quantized_linear,remove_dead_code"
BACKENDS = {"lathe": None, "lathe_xnnpack": "xnnpack"}
LATENCY = re.compile(r"^latency over \d+ runs .*median ([0-9.]+) ms, p90 ([0-9.]+) ms", re.M)
DELEGATES = re.compile(r"^lowered to xnnpack: (\d+) delegate.*holding (\d+) node", re.M)


def prepare(model, module, inputs, folder):
    import torch

    ep = torch.export.export(module, inputs)
    if model.decompose:
        ep = ep.run_decompositions()
    torch.export.save(ep, os.path.join(folder, EXPORTED))


def transform(lathe, folder):
    """exported.pt2 -> lathe.pt2 through ``lathe transform``; raises
    RuntimeError with lathe's message if it fails."""
    cmd = [lathe, "transform", os.path.join(folder, EXPORTED), "-o", os.path.join(folder, ARCHIVE), "--passes", TRANSFORM]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        last = [l for l in p.stdout.splitlines() if l.strip()]
        raise RuntimeError("lathe transform exit %d: %s" % (p.returncode, last[-1] if last else "no output"))


def run(lathe, folder, backend, threads, repeat):
    """{"median", "p90", "outputs", "note"}, or raises RuntimeError with
    lathe's own message."""
    inputs = artifacts.input_paths(folder)
    out_dir = os.path.join(folder, "out_" + (backend or "portable"))
    cmd = [lathe, "run", os.path.join(folder, ARCHIVE), "--inputs", *inputs, "--out", out_dir,
           "--repeat", str(repeat), "--threads", str(threads)]
    if backend:
        cmd += ["--backend", backend]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = LATENCY.search(p.stdout)
    if p.returncode != 0 or not m:
        last = [l for l in p.stdout.splitlines() if l.strip()]
        raise RuntimeError("lathe run exit %d: %s" % (p.returncode, last[-1] if last else "no output"))
    outputs = artifacts.load_arrays(out_dir, "output")
    d = DELEGATES.search(p.stdout)
    note = "%s delegate(s), %s node(s)" % d.groups() if d else ("0 delegates" if backend else "")
    return {"median": float(m.group(1)), "p90": float(m.group(2)), "outputs": outputs, "note": note}
