#!/usr/bin/env python3
"""Export Lathe's fixtures with real ``torch.export`` and write them with
PyTorch's own serializer.

    .venv/bin/python tools/export_fixtures.py --out fixtures [--only a,b] [--check]

Every fixture of ``torch_fixtures/models.py`` is built under its own seed,
exported with ``torch.export.export`` (dynamic dims as ``Dim``), optionally
``run_decompositions()``-ed, and written with ``torch.export.save`` (one
program) or ``package_pt2`` (several programs in one archive). Beside each
archive, ``<name>.ref/<method>/call_<k>/`` holds the eager module's inputs
and outputs for each reference call (calls run back to back on one module,
so mutated buffers carry over). Each archive is loaded back with
``torch.export.load`` and its ``.module()`` must reproduce those outputs.

Runs in the project's virtual environment (``make venv``), which pins the
PyTorch release this writes with; see fixtures/README.md.
"""

import argparse
import copy
import hashlib
import json
import operator
import os
import shutil
import sys
import tempfile
import zipfile
from collections import Counter, OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.export import Dim  # noqa: E402
from torch.export.pt2_archive._package import package_pt2  # noqa: E402

from torch_fixtures.models import FIXTURES, FIXTURES_BY_NAME, Fixture  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5

# Every archive generation the fixtures hold (fixtures/README.md).
GENERATIONS = OrderedDict(
    [
        ("2.13", OrderedDict([("file", "<name>.pt2"), ("schema_version", "8.20"), ("written_by", "PyTorch 2.13.0 "
                              "torch.export.save / package_pt2 (tools/export_fixtures.py)")])),
        ("2.9", OrderedDict([("file", "../../shared/external/pt2/linear_torch2.9.pt2"), ("schema_version", "8.12"),
                             ("written_by", "PyTorch 2.9.0a0 (ExecuTorch's test data)")])),
        ("2.8", OrderedDict([("file", "pt2-2.8/<name>.pt2"), ("schema_version", "8.1"),
                             ("written_by", "synthesized on torch 1.13 (tools/make_fixtures.py)")])),
        ("legacy", OrderedDict([("file", "legacy-2.4/<name>.pt2"), ("schema_version", "8.1"),
                                ("written_by", "synthesized on torch 1.13 (tools/make_fixtures.py)")])),
        ("2.2", OrderedDict([("file", "../../shared/external/pt2/hades_pid_exported_program.pt2"),
                             ("schema_version", "2"), ("written_by", "PyTorch 2.2-era torch.export.save")])),
    ]
)


def method_module(module, attr):
    """A shallow copy of ``module`` whose forward is ``attr``: parameters and
    buffers are the same objects, so their names stay the module's own."""
    if attr == "forward":
        return module
    view = copy.copy(module)
    view.forward = getattr(module, attr)
    return view


def dynamic_shapes_of(method, args):
    if not method.dynamic:
        return None
    dims = {}
    specs = []
    for i, _ in enumerate(args):
        spec = {}
        for d, (name, lo, hi) in method.dynamic.get(i, {}).items():
            if name not in dims:
                dims[name] = Dim(name, min=lo, max=hi)
            spec[d] = dims[name]
        specs.append(spec or None)
    return tuple(specs)


def export_method(fx: Fixture, module, name, method, args):
    ep = torch.export.export(method_module(module, method.attr), args, dynamic_shapes=dynamic_shapes_of(method, args))
    if fx.decompose:
        # A fixture may carry its own table (ops it keeps whole).
        table = getattr(fx, "decomp_table", None)
        ep = ep.run_decompositions(table) if table is not None else ep.run_decompositions()
    return ep


def eager_calls(module, attr, calls):
    """Each call's outputs as a flat list (calls run in order on ``module``)."""
    outs = []
    fn = getattr(module, attr)
    with torch.no_grad():
        for args in calls:
            r = fn(*[a.clone() for a in args])
            outs.append([t.detach().clone() for t in torch.utils._pytree.tree_leaves(r)])
    return outs


def write_reference(ref_dir, method_name, calls, outs):
    for k, (args, o) in enumerate(zip(calls, outs)):
        d = os.path.join(ref_dir, method_name, "call_%d" % k)
        os.makedirs(d, exist_ok=True)
        for i, a in enumerate(args):
            np.save(os.path.join(d, "input_%d.npy" % i), a.contiguous().numpy())
        for i, t in enumerate(o):
            np.save(os.path.join(d, "output_%d.npy" % i), t.contiguous().numpy())


def close(a, b, rtol=RTOL, atol=ATOL):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        return torch.allclose(a, b, rtol=rtol, atol=atol)
    return torch.equal(a, b)


def check_loaded(path, fx: Fixture, eps, calls_by_method, outs_by_method):
    """torch.export.load of the written archive, run through .module(), must
    give the eager outputs call by call."""
    if len(eps) == 1:
        loaded = {"model": torch.export.load(path)}
    else:
        from torch.export.pt2_archive._package import load_pt2

        loaded = load_pt2(path).exported_programs
    # A fixture may loosen the check (fixtures/quantized: activations
    # quantized at run time, where float noise can move a value across a
    # rounding boundary).
    rtol, atol = getattr(fx, "check_tolerance", (RTOL, ATOL))
    for name in eps:
        # (training-mode programs keep their batch statistics in the graph)
        mod = loaded[name].module()
        for k, (args, want) in enumerate(zip(calls_by_method[name], outs_by_method[name])):
            got = torch.utils._pytree.tree_leaves(mod(*[a.clone() for a in args]))
            if len(got) != len(want) or not all(close(g, w, rtol, atol) for g, w in zip(got, want)):
                raise AssertionError("%s: %s call %d: the loaded archive's outputs differ from eager" % (path, name, k))


def op_histogram(gm):
    """Node targets as the archive names them (getitem is not a node there:
    the serializer folds it into its producer's outputs)."""
    ops = Counter()
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            ops["torch.ops.higher_order." + node.target.name()] += 1
        else:
            ops["torch.ops." + str(node.target)] += 1
    return OrderedDict(sorted(ops.items()))


def spec_names(specs, kind):
    return [s.target for s in specs if s.kind.name == kind]


def value_desc(node_name, t):
    return OrderedDict([("name", node_name), ("dtype", str(t.dtype).replace("torch.", "")), ("shape", list(t.shape))])


def method_manifest(ep, method, calls, outs):
    sig = ep.graph_signature
    user_inputs = [s.arg.name for s in sig.input_specs if s.kind.name == "USER_INPUT"]
    user_outputs = [s.arg.name for s in sig.output_specs if s.kind.name == "USER_OUTPUT"]
    entry = OrderedDict()
    entry["ops"] = op_histogram(ep.graph_module)
    entry["inputs"] = [value_desc(n, a) for n, a in zip(user_inputs, calls[0])]
    entry["outputs"] = [value_desc(n, o) for n, o in zip(user_outputs, outs[0])]
    entry["buffer_mutations"] = [s.target for s in sig.output_specs if s.kind.name == "BUFFER_MUTATION"]
    entry["parameters"] = spec_names(sig.input_specs, "PARAMETER")
    entry["buffers"] = spec_names(sig.input_specs, "BUFFER")
    entry["tensor_constants"] = spec_names(sig.input_specs, "CONSTANT_TENSOR")
    entry["reference_calls"] = len(calls)
    if method.dynamic:
        entry["dynamic"] = OrderedDict(
            (user_inputs[i], OrderedDict((str(d), [lo, hi]) for d, (_, lo, hi) in dims.items()))
            for i, dims in method.dynamic.items()
        )
        entry["call_shapes"] = [[list(a.shape) for a in args] for args in calls]
    return entry


def archive_entry(path, out):
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        model = next(n for n in names if "/models/" in n and n.endswith(".json"))
        j = json.loads(z.read(model))
    v = j["schema_version"]
    return OrderedDict(
        [
            ("file", os.path.relpath(path, out)),
            ("generation", "2.13"),
            ("container", "pt2-raw"),
            ("schema_version", "%d.%d" % (v["major"], v["minor"])),
            ("torch_version", j["torch_version"]),
            ("sha256", sha),
            ("records", [n.split("/", 1)[1] for n in names]),
        ]
    )


def build_fixture(fx: Fixture, out: str):
    torch.manual_seed(fx.seed)
    module = fx.build()
    module.train(fx.train)
    g = torch.Generator().manual_seed(fx.seed + 1)
    calls = OrderedDict((name, m.calls(g)) for name, m in fx.methods.items())
    # Export from a pristine copy (before any call mutates its buffers),
    # then take the eager reference from another.
    pristine = copy.deepcopy(module)
    eps = OrderedDict()
    for name, m in fx.methods.items():
        eps[name] = export_method(fx, copy.deepcopy(pristine), name, m, calls[name][0])
    outs = OrderedDict()
    for name, m in fx.methods.items():
        outs[name] = eager_calls(copy.deepcopy(pristine), m.attr, calls[name])

    path = os.path.join(out, fx.name + ".pt2")
    # PyTorch names the archive's root folder after the file it writes, so
    # write <name>.pt2 in a scratch folder and move it into place.
    with tempfile.TemporaryDirectory(dir=out) as scratch:
        tmp = os.path.join(scratch, fx.name + ".pt2")
        if len(eps) == 1:
            torch.export.save(next(iter(eps.values())), tmp)
        else:
            package_pt2(tmp, exported_programs=dict(eps))
        os.replace(tmp, path)

    ref_dir = os.path.join(out, fx.name + ".ref")
    if os.path.isdir(ref_dir):
        shutil.rmtree(ref_dir)
    for name in fx.methods:
        write_reference(ref_dir, name, calls[name], outs[name])
    check_loaded(path, fx, eps, calls, outs)

    entry = OrderedDict([("description", fx.description), ("runnable", fx.runnable), ("methods", OrderedDict())])
    for name, m in fx.methods.items():
        entry["methods"][name] = method_manifest(eps[name], m, calls[name], outs[name])
    entry["archives"] = [archive_entry(path, out)]
    return entry


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="fixtures")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for fx in FIXTURES:
            print("%-28s %s" % (fx.name, fx.description))
        return 0
    names = [n for n in args.only.split(",") if n] or [f.name for f in FIXTURES]
    unknown = [n for n in names if n not in FIXTURES_BY_NAME]
    if unknown:
        ap.error("unknown fixture(s): %s" % ", ".join(unknown))
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    old = OrderedDict()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f, object_pairs_hook=OrderedDict)
    built = OrderedDict()
    for n in names:
        built[n] = build_fixture(FIXTURES_BY_NAME[n], args.out)
        print("wrote %s/%s.pt2" % (args.out, n))
    manifest = OrderedDict([("generations", GENERATIONS)])
    for fx in FIXTURES:
        if fx.name in built or fx.name in old:
            manifest[fx.name] = built.get(fx.name) or old[fx.name]
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
