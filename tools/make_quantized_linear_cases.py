#!/usr/bin/env python3
"""Expected values of Lathe's quantized linear kernels, from PyTorch 2.13.

    .venv/bin/python tools/make_quantized_linear_cases.py [--out src/lathe/runtime/testdata/quantized_linear_cases.json]

Cases (src/lathe/runtime/quantized_linear_test.cpp runs every instruction-set
path of Lathe's kernels on each, against these outputs):

  int8pack   aten._weight_int8pack_mm(x, w int8, scales): PyTorch's output.
  int4pack   aten._weight_int4pack_mm_for_cpu(x, packed, g, scales_and_zeros),
             with the weight packed by aten._convert_weight_to_int4pack_for_cpu
             under each ATen CPU capability (ATEN_CPU_CAPABILITY=avx512 / avx2 /
             default, one subprocess each: the packed layout depends on it), and
             PyTorch's output under that capability.
  int4group  Lathe's own op lathe.weight_int4_group_mm (PyTorch has none):
             PyTorch's float32 linear(x, q * scales) on the dequantized weight.
  dyn8       Lathe's own op lathe.dynamic_int8_mm: the ops torchao 0.18's
             Int8DynamicActivationInt8WeightConfig exports, run in PyTorch:
             torchao.choose_qparams_affine (SYMMETRIC, per row), quantize_affine,
             aten._int_mm, then the two multiplies. Rows include an all-zero
             one (the eps clamp) and one whose values land on .5 (rounding).
  affine     torchao.choose_qparams_affine / quantize_affine / dequantize_affine
             on their own, symmetric and asymmetric, per row and per group.

Every case also carries "dequantized": the float64 product with the
dequantized weight, so the test can state how far PyTorch's own kernel is
from it and hold Lathe to the same bound.

Deterministic: fixed seeds, one thread.
"""

import argparse
import json
import os
import subprocess
import sys

import logging
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)  # torchao's notes about its CUDA-only extensions
import torchao  # noqa: E402,F401  (registers torch.ops.torchao.*)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "src", "lathe", "runtime", "testdata", "quantized_linear_cases.json")

INT8_SHAPES = [(1, 37, 64), (3, 70, 200), (9, 130, 96), (17, 16, 8)]  # M, N, K
INT4PACK_SHAPES = [(1, 64, 128, 32), (3, 80, 128, 64), (4, 128, 128, 128), (2, 48, 256, 256)]  # M, N, K, g
DYN8_SHAPES = [(1, 37, 64), (8, 70, 200), (33, 130, 96)]  # M, N, K
EPS = float(torch.finfo(torch.float32).eps)
INT4GROUP_SHAPES = [(1, 21, 64, 32), (5, 40, 128, 128), (10, 33, 96, 8)]


def f32(t):
    return [float(str(np.float32(v))) for v in t.detach().contiguous().reshape(-1).tolist()]


def hexbytes(t):
    return t.detach().contiguous().numpy().astype(np.uint8 if t.dtype == torch.uint8 else np.int8).tobytes().hex()


def int8_cases(g):
    out = []
    for m, n, k in INT8_SHAPES:
        x = torch.randn(m, k, generator=g)
        w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)
        s = torch.rand(n, generator=g) * 0.02 + 0.001
        y = torch.ops.aten._weight_int8pack_mm(x, w, s)
        ref = (x.double() @ w.double().T) * s.double()
        out.append({"op": "int8pack", "m": m, "n": n, "k": k, "x": f32(x), "w": hexbytes(w), "scales": f32(s),
                    "pytorch": f32(y), "dequantized": f32(ref)})
    return out


def int4group_cases(g):
    out = []
    for m, n, k, gs in INT4GROUP_SHAPES:
        x = torch.randn(m, k, generator=g)
        q = torch.randint(-8, 8, (n, k), generator=g, dtype=torch.int8)
        s = torch.rand(n, k // gs, generator=g) * 0.1 + 0.01
        w = q.float() * s.repeat_interleave(gs, dim=1)
        y = torch.nn.functional.linear(x, w)
        ref = x.double() @ (q.double() * s.double().repeat_interleave(gs, dim=1)).T
        out.append({"op": "int4group", "m": m, "n": n, "k": k, "group": gs, "x": f32(x), "w": hexbytes(q),
                    "scales": f32(s), "pytorch": f32(y), "dequantized": f32(ref)})
    return out


# Run in a subprocess per ATen CPU capability: pack the int32 weights and
# multiply, print packed bytes (hex) and the output.
CHILD = r"""
import json, sys, torch
torch.set_num_threads(1)
a = json.load(sys.stdin)
res = []
for c in a:
    w = torch.tensor(c["w_int32"], dtype=torch.int32).reshape(c["n"], c["k"])
    packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(w, 1)
    x = torch.tensor(c["x"], dtype=torch.float32).reshape(c["m"], c["k"])
    sz = torch.tensor(c["sz"], dtype=torch.float32).reshape(c["k"] // c["group"], c["n"], 2)
    y = torch.ops.aten._weight_int4pack_mm_for_cpu(x, packed, c["group"], sz)
    res.append({"packed": packed.numpy().tobytes().hex(), "shape": list(packed.shape), "y": y.reshape(-1).tolist(),
                "capability": torch.backends.cpu.get_cpu_capability()})
json.dump(res, sys.stdout)
"""


def int4pack_cases(g):
    inputs = []
    for m, n, k, gs in INT4PACK_SHAPES:
        x = torch.randn(m, k, generator=g)
        u = torch.randint(0, 16, (n, k), generator=g, dtype=torch.int32)
        scales = torch.rand(k // gs, n, generator=g) * 0.1 + 0.01
        zeros = torch.randn(k // gs, n, generator=g) * 0.05
        sz = torch.stack([scales, zeros], dim=2)
        inputs.append({"m": m, "n": n, "k": k, "group": gs, "x": f32(x), "w_int32": u.reshape(-1).tolist(),
                       "sz": f32(sz)})
    out = [dict(c, op="int4pack", layouts={}) for c in inputs]
    for cap in ("avx512", "avx2", "default"):
        env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
        r = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(inputs), capture_output=True, text=True,
                           env=env, check=True)
        for c, got in zip(out, json.loads(r.stdout)):
            if got["capability"].lower() != cap.lower() and not (cap == "default" and got["capability"] == "DEFAULT"):
                raise SystemExit("asked for capability %s, PyTorch ran %s" % (cap, got["capability"]))
            c["layouts"][cap] = {"packed": got["packed"], "pytorch": f32(torch.tensor(got["y"]))}
    for c in out:
        x = torch.tensor(c["x"], dtype=torch.float64).reshape(c["m"], c["k"])
        u = torch.tensor(c.pop("w_int32"), dtype=torch.float64).reshape(c["n"], c["k"])
        sz = torch.tensor(c["sz"], dtype=torch.float64).reshape(c["k"] // c["group"], c["n"], 2)
        s = sz[:, :, 0].T.repeat_interleave(c["group"], dim=1)
        z = sz[:, :, 1].T.repeat_interleave(c["group"], dim=1)
        c["dequantized"] = f32(x @ ((u - 8) * s + z).T)
    return out


def dyn8_reference(x, w, s):
    """What torchao's dynamic int8 linear export computes, op for op."""
    ao = torch.ops.torchao
    k = x.shape[1]
    scale, zp = ao.choose_qparams_affine(x, "SYMMETRIC", [1, k], torch.int8, -128, 127, EPS, torch.float32,
                                         torch.int8, True)
    xq = ao.quantize_affine(x, [1, k], scale, zp, torch.int8, -128, 127)
    acc = torch.ops.aten._int_mm(xq, w.t())
    return (acc.to(torch.float32) * scale.reshape(-1, 1)) * s


def dyn8_cases(g):
    out = []
    for m, n, k in DYN8_SHAPES:
        x = torch.randn(m, k, generator=g) * 3
        if m >= 8:
            x[1] = 0
            x[2] = torch.arange(k) % 256 - 127.5  # scale 1: x * (1 / scale) lands on .5
        w = torch.randint(-128, 128, (n, k), generator=g, dtype=torch.int8)
        s = torch.rand(n, generator=g) * 0.02 + 0.001
        y = dyn8_reference(x, w, s)
        ref = (x.double() @ w.double().T) * s.double()
        out.append({"op": "dyn8", "m": m, "n": n, "k": k, "eps": EPS, "x": f32(x), "w": hexbytes(w),
                    "scales": f32(s), "pytorch": f32(y), "dequantized": f32(ref)})
    return out


def affine_cases(g):
    ao = torch.ops.torchao
    out = []
    for mapping, shape, block, lo, hi in (("SYMMETRIC", (4, 24), (1, 24), -128, 127),
                                          ("ASYMMETRIC", (3, 32), (1, 8), -128, 127),
                                          ("SYMMETRIC", (2, 3, 16), (1, 1, 16), -8, 7)):
        x = torch.randn(*shape, generator=g) * 2
        x[0, ..., 0] = 0
        scale, zp = ao.choose_qparams_affine(x, mapping, list(block), torch.int8, lo, hi, EPS, torch.float32,
                                             torch.int8 if mapping == "SYMMETRIC" else torch.int32, True)
        q = ao.quantize_affine(x, list(block), scale, zp, torch.int8, lo, hi)
        d = ao.dequantize_affine(q, list(block), scale, zp, torch.int8, lo, hi)
        out.append({"op": "affine", "mapping": mapping, "shape": list(shape), "block": list(block), "quant_min": lo,
                    "quant_max": hi, "eps": EPS, "x": f32(x), "scale": f32(scale),
                    "zero_point": zp.reshape(-1).tolist(), "q": q.reshape(-1).tolist(), "dequantized": f32(d)})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(18)
    cases = int8_cases(g) + int4pack_cases(g) + int4group_cases(g) + dyn8_cases(g) + affine_cases(g)
    with open(args.out, "w") as f:
        json.dump({"generator": "tools/make_quantized_linear_cases.py", "torch": torch.__version__, "cases": cases}, f,
                  separators=(",", ":"))
        f.write("\n")
    print("%s: %d cases" % (os.path.normpath(args.out), len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
