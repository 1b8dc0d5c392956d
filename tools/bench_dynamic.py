#!/usr/bin/env python3
"""`make bench-dynamic`: a program exported with a Dim, delegated to XNNPACK,
against its static twins (the same module exported at each size), in one
run (issue 32: dynamic-shape programs at most 1.1x their static twins).

    .venv/bin/python tools/bench_dynamic.py [--lathe build/lathe] [--threads 1,2] [--repeat 20]
                                            [--only minilm_dyn_seq,mobilenet_v2_dyn_batch] [--work DIR]

For each model: one export with the Dim (dynamic.pt2) and one per size
(static_<size>.pt2), each through `lathe transform` with the deployment
passes bench_peers uses; then, per size and thread count, `lathe run
--backend xnnpack --repeat N` on both, alternating, outputs checked against
PyTorch eager's at that size. The dynamic program's delegates plan once per
distinct size (backends/replanned_delegate.h): `lathe run` calls once
untimed first, so the figures are the kept plan's, as a server sees after
its first request of a length.
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from peers import artifacts, lathe_peer, machine  # noqa: E402


class Case:
    def __init__(self, name, about, build, inputs_at, sizes, dims, example_size):
        self.name, self.about, self.build = name, about, build
        self.inputs_at, self.sizes, self.dims, self.example_size = inputs_at, sizes, dims, example_size


def cases():
    import torch
    from peers import zoo

    def minilm_dims():
        seq = torch.export.Dim("seq", min=2, max=128)
        return (({1: seq}, {1: seq}, {1: seq}),)  # the wrapper's forward(*args)

    def mobilenet_dims():
        return (({0: torch.export.Dim("batch", min=1, max=8)},),)

    def mobilenet_inputs(batch):
        return zoo._randn("mobilenet_v2_dyn_%d" % batch, batch, 3, 224, 224)()

    return [
        Case("minilm_dyn_seq", "all-MiniLM-L6-v2 (real weights), sequence a Dim in [2, 128]",
             zoo._real_minilm, lambda s: zoo._minilm_inputs(s)(), [16, 64, 128], minilm_dims, 32),
        Case("mobilenet_v2_dyn_batch", "transformers MobileNetV2 (1.0, 224), batch a Dim in [1, 8]",
             zoo._hf_vision("MobileNetV2Model", "MobileNetV2Config"), mobilenet_inputs, [1, 2, 4], mobilenet_dims, 2),
    ]


def export(module, inputs, path, dims=None):
    import torch

    ep = torch.export.export(module, inputs, dynamic_shapes=dims)
    torch.export.save(ep, path)


def transform(lathe, src, dst):
    cmd = [lathe, "transform", src, "-o", dst, "--passes", lathe_peer.TRANSFORM]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def timed(lathe, archive, inputs, out_dir, threads, repeat):
    cmd = [lathe, "run", archive, "--inputs", *inputs, "--out", out_dir, "--repeat", str(repeat),
           "--threads", str(threads), "--backend", "xnnpack"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = lathe_peer.LATENCY.search(p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("lathe run %s: %s" % (archive, p.stdout.strip().splitlines()[-1:]))
    d = lathe_peer.DELEGATES.search(p.stdout)
    return float(m.group(1)), float(m.group(2)), (d.group(1) if d else "?")


def max_diff(out_dir, refs):
    """Largest |output - eager| over the largest |eager| (seeded vision
    weights give outputs far from 1: the scale is what is compared)."""
    import numpy as np

    outs = artifacts.load_arrays(out_dir, "output")
    return max(float(np.max(np.abs(o.astype(np.float64) - r)) / max(float(np.max(np.abs(r))), 1e-300))
               for o, r in zip(outs, refs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lathe", default=os.path.join(HERE, "..", "build", "lathe"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="")
    args = ap.parse_args()
    import torch

    work = args.work or tempfile.mkdtemp(prefix="lathe-bench-dynamic-")
    threads = [int(t) for t in args.threads.split(",")]
    only = set(filter(None, args.only.split(",")))
    print(machine.describe())
    rows = []
    for case in cases():
        if only and case.name not in only:
            continue
        folder = artifacts.model_dir(work, case.name)
        module = case.build()
        dyn = os.path.join(folder, "dynamic.pt2")
        export(module, case.inputs_at(case.example_size), os.path.join(folder, "dynamic_exported.pt2"), case.dims())
        transform(args.lathe, os.path.join(folder, "dynamic_exported.pt2"), dyn)
        for size in case.sizes:
            inputs = case.inputs_at(size)
            sub = artifacts.model_dir(folder, "size_%d" % size)
            artifacts.save_arrays(sub, "input", [t.numpy() for t in inputs])
            with torch.inference_mode():
                ref = module(*inputs)
            refs = [r.double().numpy() for r in (ref if isinstance(ref, (tuple, list)) else [ref])]
            static = os.path.join(sub, "static.pt2")
            export(module, inputs, os.path.join(sub, "static_exported.pt2"))
            transform(args.lathe, os.path.join(sub, "static_exported.pt2"), static)
            paths = artifacts.input_paths(sub)
            for t in threads:
                s_med, s_p90, s_del = timed(args.lathe, static, paths, os.path.join(sub, "out_static"), t, args.repeat)
                d_med, d_p90, d_del = timed(args.lathe, dyn, paths, os.path.join(sub, "out_dynamic"), t, args.repeat)
                rows.append((case.name, size, t, s_med, d_med, d_med / s_med, s_del, d_del,
                             max_diff(os.path.join(sub, "out_static"), refs), max_diff(os.path.join(sub, "out_dynamic"), refs)))
                print("%s size %d, %d thread(s): static %.2f ms, dynamic %.2f ms (%.2fx)" % (case.name, size, t, s_med, d_med, d_med / s_med),
                      flush=True)
    print()
    print("| model | size | threads | static (ms) | dynamic (ms) | dynamic / static | delegates static / dynamic | max diff / max abs eager, static / dynamic |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %d | %.2f | %.2f | %.2fx | %s / %s | %.1e / %.1e |" % r)
    print("\nwork folder: " + work)


if __name__ == "__main__":
    main()
