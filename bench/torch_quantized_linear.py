#!/usr/bin/env python3
"""PyTorch 2.13's own quantized linears on the weights Lathe's bench used.

    .venv/bin/python bench/torch_quantized_linear.py DIR [--repeat R]

DIR is what `lathe_bench_quantized_linear --dump DIR` wrote: per shape MxNxK,
x, the int8 weight and scales, the 4-bit values (int8 in [-8, 7]) and their
group scales, Lathe's outputs and Lathe's CPU medians (times.txt). Times, on
one thread, the median CPU time of R calls after one warm-up (fewer calls
for a kernel slower than two seconds a call):

  aten._weight_int8pack_mm(x, w, scales)                    vs Lathe's int8
  aten._weight_int4pack_mm_for_cpu(x, packed, g, sz)        vs Lathe's int4g32 / int4g128
      (the same 4-bit values: u = q + 8, zero 0, packed by
       aten._convert_weight_to_int4pack_for_cpu before timing)

  torchao 0.18's dynamic int8 linear, op by op as its export runs it
      (choose_qparams_affine, quantize_affine, _int_mm, two multiplies) vs Lathe's dyn8

and checks that PyTorch's and Lathe's outputs agree (max |diff| / max |torch|).
"""

import argparse
import os
import sys
import time

import logging
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
try:
    import torchao  # noqa: F401  (torch.ops.torchao.*)
except ImportError:
    torchao = None


def cpu_median_ms(fn, repeat):
    fn()
    t0 = time.thread_time()
    fn()
    first = time.thread_time() - t0
    n = max(3, min(repeat, int(2.0 / max(first, 1e-6))))
    ts = []
    for _ in range(n):
        t0 = time.thread_time()
        fn()
        ts.append(time.thread_time() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3, n


def dyn8(x, w, s):
    ao = torch.ops.torchao
    k = x.shape[1]
    scale, zp = ao.choose_qparams_affine(x, "SYMMETRIC", [1, k], torch.int8, -128, 127,
                                         float(torch.finfo(torch.float32).eps), torch.float32, torch.int8, True)
    xq = ao.quantize_affine(x, [1, k], scale, zp, torch.int8, -128, 127)
    return (torch.ops.aten._int_mm(xq, w.t()).to(torch.float32) * scale.reshape(-1, 1)) * s


def load(d, shape, what, dtype, dims):
    return torch.from_numpy(np.fromfile(os.path.join(d, "%s_%s.bin" % (shape, what)), dtype=dtype).reshape(dims))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(1)
    lathe_ms = {}
    with open(os.path.join(args.dir, "times.txt")) as f:
        for line in f:
            shape, kernel, ms = line.split()
            lathe_ms[(shape, kernel)] = float(ms)
    shapes = sorted({s for s, _ in lathe_ms}, key=lambda s: [int(v) for v in s.split("x")])
    print("%-16s %-34s %10s %6s %12s %14s %12s" % ("shape MxNxK", "PyTorch 2.13 kernel", "CPU ms", "calls", "lathe CPU ms",
                                                    "lathe speedup", "max rel diff"))
    for shape in shapes:
        m, n, k = (int(v) for v in shape.split("x"))
        x = load(args.dir, shape, "x", np.float32, (m, k))
        q8 = load(args.dir, shape, "q8", np.int8, (n, k))
        s8 = load(args.dir, shape, "s8", np.float32, (n,))
        q4 = load(args.dir, shape, "q4", np.int8, (n, k))
        packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu((q4.to(torch.int32) + 8).contiguous(), 1)
        runs = [("int8", "_weight_int8pack_mm", lambda: torch.ops.aten._weight_int8pack_mm(x, q8, s8))]
        for g in (32, 128):
            s = load(args.dir, shape, "s4g%d" % g, np.float32, (n, k // g))
            sz = torch.stack([s.T.contiguous(), torch.zeros(k // g, n)], dim=2).contiguous()
            runs.append(("int4g%d" % g, "_weight_int4pack_mm_for_cpu g%d" % g,
                         lambda s=sz, g=g: torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, g, s)))
        if torchao is not None:
            runs.append(("dyn8", "torchao dynamic int8 (its ops)", lambda: dyn8(x, q8, s8)))
        for kernel, name, fn in runs:
            ms, calls = cpu_median_ms(fn, args.repeat)
            ours = load(args.dir, shape, "out_" + kernel, np.float32, (m, n))
            ref = fn()
            diff = float((ours - ref).abs().max() / ref.abs().max())
            lathe = lathe_ms.get((shape, kernel))
            print("%-16s %-34s %10.3f %6d %12.3f %13.1fx %12.1e" % (shape, name, ms, calls, lathe, ms / lathe, diff))
    return 0


if __name__ == "__main__":
    sys.exit(main())
