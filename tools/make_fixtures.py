#!/usr/bin/python3
"""Generate Lathe's `.pt2` fixtures and their eager reference numbers.

    /usr/bin/python3 tools/make_fixtures.py --out fixtures [--only name,...]

Needs Debian's python3 with python3-torch (1.13) and torchvision; see
fixtures/README.md for the layout of what is written.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import zipfile
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lathe_fixtures import archive, check, serialize, trace  # noqa: E402
from lathe_fixtures.models import FIXTURES, FIXTURES_BY_NAME, Fixture  # noqa: E402

RTOL = 1e-4
ATOL = 1e-5


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().contiguous().numpy()


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        return torch.allclose(a, b, rtol=RTOL, atol=ATOL)
    return torch.equal(a, b)


def check_against_eager(fx: Fixture, module, tm: trace.TracedMethod, calls):
    """The traced program must reproduce the eager module, call by call,
    with buffer mutations fed back as the next call's state."""
    eager = trace.eager_calls(module, tm.method, calls)
    state = {}
    for k, (args, (e_outs, e_bufs)) in enumerate(zip(calls, eager)):
        muts, outs = tm.run(state, args)
        if len(outs) != len(e_outs):
            raise AssertionError("%s.%s call %d: %d outputs, eager has %d" % (fx.name, tm.method, k, len(outs), len(e_outs)))
        for i, (a, b) in enumerate(zip(outs, e_outs)):
            if not _close(a, b):
                raise AssertionError(
                    "%s.%s call %d output %d differs from eager (max abs diff %s)"
                    % (fx.name, tm.method, k, i, (a.double() - b.double()).abs().max().item() if a.shape == b.shape else "shape")
                )
        for fqn, val in muts.items():
            if not _close(val, e_bufs[fqn]):
                raise AssertionError("%s.%s call %d: buffer %s after mutation differs from eager" % (fx.name, tm.method, k, fqn))
        state.update(muts)
    return eager


def write_reference(out_dir: str, method: str, calls, eager) -> list:
    written = []
    for k, (args, (e_outs, _)) in enumerate(zip(calls, eager)):
        d = os.path.join(out_dir, method, "call_%d" % k)
        os.makedirs(d, exist_ok=True)
        for i, a in enumerate(args):
            p = os.path.join(d, "input_%d.npy" % i)
            np.save(p, _np(a))
            written.append(p)
        for i, o in enumerate(e_outs):
            p = os.path.join(d, "output_%d.npy" % i)
            np.save(p, _np(o))
            written.append(p)
    return written


def _value_desc(tm, node, val):
    return OrderedDict(
        [
            ("name", tm.names[node]),
            ("dtype", str(val.dtype).replace("torch.", "")),
            ("shape", list(val.shape)),
        ]
    )


def build_fixture(fx: Fixture, out: str, profile: serialize.SchemaProfile):
    torch.manual_seed(fx.seed)
    module = fx.build().eval()
    gen = torch.Generator().manual_seed(fx.seed + 1)

    payloads = OrderedDict()
    manifest = OrderedDict([("description", fx.description), ("archive", fx.name + ".pt2"), ("methods", OrderedDict())])
    ref_dir = os.path.join(out, fx.name + ".ref")
    if os.path.isdir(ref_dir):
        shutil.rmtree(ref_dir)
    written = []
    expected = OrderedDict()
    for method, make_args in fx.methods.items():
        calls = [make_args(gen, k) for k in range(fx.calls)]
        tm = trace.trace_method(module, fx.attr_of(method), calls[0], prune_unused_state=fx.prune_unused_state)
        eager = check_against_eager(fx, module, tm, calls)
        program = serialize.serialize_program(tm, profile)
        payloads[method] = archive.MethodPayload(
            program_json=serialize.dumps(program, profile),
            state_dict=tm.state_dict,
            constants=tm.constants,
            sample_inputs=archive.sample_inputs_bytes(calls[0]),
        )
        written += write_reference(ref_dir, method, calls, eager)
        expected[method] = OrderedDict(list(tm.state_dict.items()) + list(tm.constants.items()))
        manifest["methods"][method] = OrderedDict(
            [
                ("ops", tm.op_histogram()),
                ("inputs", [_value_desc(tm, s.node, tm.node_values[s.node]) for s in tm.user_inputs]),
                ("outputs", [_value_desc(tm, s.node, tm.node_values[s.node]) for s in tm.user_outputs]),
                ("buffer_mutations", [s.target for s in tm.mutations]),
                ("parameters", [s.target for s in tm.inputs if s.kind == "parameter"]),
                ("buffers", [s.target for s in tm.inputs if s.kind == "buffer"]),
                ("tensor_constants", [s.target for s in tm.inputs if s.kind == "tensor_constant"]),
                ("reference_calls", len(calls)),
            ]
        )
    path = os.path.join(out, fx.name + ".pt2")
    archive.write_pt2(path, payloads)
    # Read the archive back and execute it from its JSON (independent of
    # the tracer) against the eager reference files just written.
    check.check_archive(path, ref_dir, expected)
    with open(path, "rb") as f:
        manifest["sha256"] = hashlib.sha256(f.read()).hexdigest()
    with zipfile.ZipFile(path) as zf:
        manifest["records"] = [n.split("/", 1)[1] for n in zf.namelist()]
    return path, written, manifest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="fixtures", help="output directory (default: fixtures)")
    ap.add_argument("--only", default="", help="comma-separated fixture names (default: all)")
    ap.add_argument("--format", default="2.9", choices=sorted(serialize.PROFILES), help="archive generation to write")
    ap.add_argument("--list", action="store_true", help="list the fixtures and exit")
    ap.add_argument("--check", action="store_true", help="only re-check existing archives against their .ref files")
    args = ap.parse_args(argv)

    if args.list:
        for fx in FIXTURES:
            print("%-24s %s" % (fx.name, fx.description))
        return 0

    names = [n for n in args.only.split(",") if n] or [f.name for f in FIXTURES]
    unknown = [n for n in names if n not in FIXTURES_BY_NAME]
    if unknown:
        ap.error("unknown fixture(s): %s (known: %s)" % (", ".join(unknown), ", ".join(FIXTURES_BY_NAME)))
    if args.check:
        for name in names:
            path = os.path.join(args.out, name + ".pt2")
            res = check.check_archive(path, os.path.join(args.out, name + ".ref"))
            print("%s ok: %s" % (path, ", ".join("%s x%d" % kv for kv in res.items())))
        return 0
    profile = serialize.PROFILES[args.format]
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = OrderedDict()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f, object_pairs_hook=OrderedDict)
    manifest.pop("format", None)

    for name in names:
        fx = FIXTURES_BY_NAME[name]
        path, written, entry = build_fixture(fx, args.out, profile)
        manifest[name] = entry
        print("%s  (%d bytes, %d reference files)" % (path, os.path.getsize(path), len(written)))
        for method, m in entry["methods"].items():
            print("  %s: %s" % (method, ", ".join("%s=%d" % (k.replace("torch.ops.", ""), v) for k, v in m["ops"].items())))

    ordered = OrderedDict([("format", args.format)])
    for fx in FIXTURES:
        if fx.name in manifest:
            ordered[fx.name] = manifest[fx.name]
    with open(manifest_path, "w") as f:
        json.dump(ordered, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
