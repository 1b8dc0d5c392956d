"""Export the fixtures of tools/torch_fixtures/dynamic_models.py into
fixtures/dynamic/: <name>.pt2 (torch.export + run_decompositions, written
with torch.export.save), <name>.ref/model/call_<k>/{input,output}_<i>.npy
(eager outputs, calls back to back on one module) and manifest.json.

    /work/main/.venv/bin/python tools/export_dynamic_fixtures.py
"""
import json
import os
import sys
import tempfile
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.export import Dim  # noqa: E402

from torch_fixtures.dynamic_models import DYNAMIC_FIXTURES  # noqa: E402


def dynamic_shapes(fx, args):
    dims = {}
    specs = []
    for i, _ in enumerate(args):
        spec = {}
        for d, (name, lo, hi) in fx.dynamic.get(i, {}).items():
            dims.setdefault(name, Dim(name, min=lo, max=hi))
            spec[d] = dims[name]
        specs.append(spec or None)
    return tuple(specs)


def target_name(t):
    """A target as Lathe names ops: "aten.add.Tensor", "higher_order.cond", "_operator.add", "torch.sym_max"."""
    if isinstance(t, torch._ops.OpOverload):
        return str(t)
    if isinstance(t, torch._ops.HigherOrderOperator):
        return "higher_order." + t.name()
    return "%s.%s" % (t.__module__, t.__name__)


def leaves(r):
    return [t.detach().clone() for t in torch.utils._pytree.tree_leaves(r)]


def build(fx, out):
    torch.manual_seed(fx.seed)
    module = fx.build().eval()
    calls = fx.calls(torch.Generator().manual_seed(fx.seed + 1))
    ep = torch.export.export(module, calls[0], dynamic_shapes=dynamic_shapes(fx, calls[0])).run_decompositions()
    with torch.no_grad():
        outs = [leaves(module(*[a.clone() for a in args])) for args in calls]
    path = os.path.join(out, fx.name + ".pt2")
    with tempfile.TemporaryDirectory(dir=out) as scratch:  # the archive's root folder is named after the file
        tmp = os.path.join(scratch, fx.name + ".pt2")
        torch.export.save(ep, tmp)
        os.replace(tmp, path)
    loaded = torch.export.load(path).module()
    for k, (args, want) in enumerate(zip(calls, outs)):
        d = os.path.join(out, fx.name + ".ref", "model", "call_%d" % k)
        os.makedirs(d, exist_ok=True)
        for i, a in enumerate(args):
            np.save(os.path.join(d, "input_%d.npy" % i), a.contiguous().numpy())
        for i, t in enumerate(want):
            np.save(os.path.join(d, "output_%d.npy" % i), t.contiguous().numpy())
        got = leaves(loaded(*[a.clone() for a in args]))
        if len(got) != len(want) or not all(torch.allclose(g, w, rtol=1e-4, atol=1e-5) for g, w in zip(got, want)):
            raise AssertionError("%s call %d: the loaded archive differs from eager" % (fx.name, k))
    ops = sorted({target_name(n.target) for n in ep.graph.nodes if n.op == "call_function"})
    return OrderedDict([
        ("description", fx.description), ("runnable", True), ("torch_version", torch.__version__),
        ("ops", ops), ("range_constraints", {str(k): [int(v.lower), int(v.upper)] for k, v in ep.range_constraints.items()
                                            if v.upper != float("inf") and str(v.upper) != "int_oo"}),
        ("call_shapes", [[list(a.shape) for a in args] for args in calls]),
    ])


def main():
    out = os.path.join(os.path.dirname(HERE), "fixtures", "dynamic")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    manifest = OrderedDict((fx.name, build(fx, out)) for fx in DYNAMIC_FIXTURES)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print("wrote %d fixture(s) to %s" % (len(manifest), out))


if __name__ == "__main__":
    main()
