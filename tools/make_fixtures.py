#!/usr/bin/python3
"""Synthesize the older `.pt2` generations that PyTorch 2.13 can no longer write.

    /usr/bin/python3 tools/make_fixtures.py [--out fixtures] [--only name,...] [--format 2.8|legacy]
    /usr/bin/python3 tools/make_fixtures.py --check [--out fixtures]

Every archive Lathe claims for PyTorch 2.9 and newer comes from real PyTorch
(``make fixtures``: tools/export_fixtures.py). This tool keeps the two
older layouts, which PyTorch 2.13 cannot write, as the earlier releases wrote
them, from Debian's torch 1.13 (which has no ``torch.export``):
  2.8     OUT/pt2-2.8/<name>.pt2      PT2 archive, torch.save weights/constants per method
  legacy  OUT/legacy-2.4/<name>.pt2   flat zip of PyTorch 2.4-2.7 (one program only)
Both use exactly the export schema 8.1 field set. Each archive gets its own
eager references beside it (OUT/pt2-2.8/<name>.ref/, ...). One trace feeds
every generation; it is also serialized as a 2.9-layout twin in a scratch
folder, only to check the older archives against it, never installed.

Needs Debian's python3 with python3-torch (1.13) and torchvision; see
fixtures/README.md for the layout of what is written.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from collections import OrderedDict
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lathe_fixtures import archive, check, quant, serialize, trace  # noqa: E402
from lathe_fixtures.models import FIXTURES as BASE_FIXTURES, FIXTURES_BY_NAME as BASE_BY_NAME, Fixture  # noqa: E402

# The float fixtures, then the committed weight-only quantized variants.
FIXTURES = list(BASE_FIXTURES) + [quant.quantized_fixture(BASE_BY_NAME[b], s) for b, s in quant.COMMITTED]
FIXTURES_BY_NAME = {f.name: f for f in FIXTURES}

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


def _archive_entry(path: str, out: str, profile: serialize.SchemaProfile) -> "OrderedDict":
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    # PT2 archives: names relative to the top folder; legacy: as stored
    records = names if profile.container == "legacy-zip" else [n.split("/", 1)[1] for n in names]
    return OrderedDict(
        [
            ("file", os.path.relpath(path, out)),
            ("generation", profile.name),
            ("container", profile.container),
            ("schema_version", profile.schema_version_str),
            ("torch_version", profile.torch_version),
            ("sha256", sha),
            ("records", records),
        ]
    )


def write_archive(path: str, payloads, profile: serialize.SchemaProfile) -> None:
    if profile.container == "pt2-raw":
        archive.write_pt2(path, payloads)
    elif profile.container == "pt2-pickle":
        archive.write_pt2_pickled(path, payloads)
    elif profile.container == "legacy-zip":
        archive.write_legacy_zip(path, payloads, profile.schema_version_str)
    else:
        raise ValueError("unknown container %s" % profile.container)


def build_fixture(fx: Fixture, out: str, profiles: "List[serialize.SchemaProfile]"):
    """Trace ``fx`` once, write its reference outputs and one archive per
    profile, and check each archive read back. Returns
    (paths, reference files, manifest entry)."""
    for profile in profiles:
        if not profile.multi_method and len(fx.methods) != 1:
            raise archive.LegacyFormatError(
                "%s: the %s format holds exactly one program (PyTorch 2.4-2.7 torch.export.save), "
                "this fixture has %d (%s)" % (fx.name, profile.name, len(fx.methods), ", ".join(fx.methods))
            )
    torch.manual_seed(fx.seed)
    module = fx.build().eval()
    gen = torch.Generator().manual_seed(fx.seed + 1)

    payloads = OrderedDict((p.name, OrderedDict()) for p in profiles)
    manifest = OrderedDict([("description", fx.description), ("methods", OrderedDict())])
    ref_dir = os.path.join(out, fx.name + ".ref")
    if os.path.isdir(ref_dir):
        shutil.rmtree(ref_dir)
    written = []
    expected = OrderedDict()
    for method, make_args in fx.methods.items():
        calls = [make_args(gen, k) for k in range(fx.calls)]
        tm = trace.trace_method(module, fx.attr_of(method), calls[0], prune_unused_state=fx.prune_unused_state)
        eager = check_against_eager(fx, module, tm, calls)
        for profile in profiles:
            program = serialize.serialize_program(tm, profile)
            payloads[profile.name][method] = archive.MethodPayload(
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
    paths = []
    archives = []
    for profile in profiles:
        path = os.path.join(out, profile.archive_name(fx.name))
        write_archive(path, payloads[profile.name], profile)
        # Read the archive back and execute it from its JSON (independent of
        # the tracer) against the eager reference files just written.
        check.check_archive(path, ref_dir, expected)
        paths.append(path)
        archives.append(_archive_entry(path, out, profile))
    # Older generations against their 2.9 twin (same tensors, JSON = the
    # twin's reduced to the 8.1 field set), where the twin exists.
    twin = os.path.join(out, serialize.PROFILES["2.9"].archive_name(fx.name))
    if os.path.exists(twin):
        for path, profile in zip(paths, profiles):
            if profile.name != "2.9":
                check.compare_with_twin(path, twin)
    manifest["archives"] = archives
    return paths, written, manifest


def _merge_archives(out: str, old: list, new: list) -> list:
    """Archive entries of one fixture, one per generation, in generation
    order; ``new`` replaces ``old`` of the same generation; old entries whose
    file is gone are dropped."""
    by_gen = OrderedDict((a["generation"], a) for a in old if os.path.exists(os.path.join(out, a["file"])))
    for a in new:
        by_gen[a["generation"]] = a
    return [by_gen[g] for g in serialize.PROFILES if g in by_gen]


def _upgrade_entry(entry: "OrderedDict") -> "OrderedDict":
    """Manifest entries written before generations existed name one 2.9
    archive with top-level archive/sha256/records."""
    if "archive" in entry and "archives" not in entry:
        entry = OrderedDict(entry)
        entry["archives"] = [
            OrderedDict(
                [
                    ("file", entry.pop("archive")),
                    ("generation", "2.9"),
                    ("container", "pt2-raw"),
                    ("schema_version", serialize.PROFILES["2.9"].schema_version_str),
                    ("torch_version", serialize.PROFILES["2.9"].torch_version),
                    ("sha256", entry.pop("sha256")),
                    ("records", entry.pop("records")),
                ]
            )
        ]
    return entry


def _parse_formats(ap, text: str) -> "List[serialize.SchemaProfile]":
    names = [f.strip() for f in text.split(",") if f.strip()]
    if names == ["all"]:
        names = list(serialize.PROFILES)
    bad = [n for n in names if n not in serialize.PROFILES]
    if bad or not names:
        ap.error("unknown --format %s (known: %s, or all)" % (", ".join(bad) or "''", ", ".join(serialize.PROFILES)))
    return [serialize.PROFILES[n] for n in dict.fromkeys(names)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="fixtures", help="where OUT/pt2-2.8/ and OUT/legacy-2.4/ are (default: fixtures)")
    ap.add_argument("--only", default="", help="comma-separated fixture names (default: all)")
    ap.add_argument(
        "--format",
        default=None,
        help="archive generation(s) to write: 2.8, legacy or both, comma-separated (default: both)",
    )
    ap.add_argument(
        "--quantize-weights",
        default=None,
        metavar="SCHEME",
        help="write the weight-only quantized variant <name>_<SCHEME> of each --only fixture: %s "
        "(int4g<G> for another group size)" % "|".join(quant.SCHEMES),
    )
    ap.add_argument("--list", action="store_true", help="list the fixtures and exit")
    ap.add_argument("--check", action="store_true", help="only re-check existing archives against their .ref files")
    args = ap.parse_args(argv)

    if args.list:
        for fx in FIXTURES:
            print("%-24s %s" % (fx.name, fx.description))
        return 0

    explicit = [n for n in args.only.split(",") if n]
    if args.quantize_weights:
        if not explicit:
            ap.error("--quantize-weights needs --only (the fixtures whose Linear weights to quantize)")
        try:
            quant.parse_scheme(args.quantize_weights)
        except ValueError as e:
            ap.error(str(e))
        for n in explicit:
            if n in BASE_BY_NAME:
                fx = quant.quantized_fixture(BASE_BY_NAME[n], args.quantize_weights)
                FIXTURES_BY_NAME.setdefault(fx.name, fx)
                if fx.name not in [f.name for f in FIXTURES]:
                    FIXTURES.append(fx)
        explicit = [n + "_" + args.quantize_weights if n in BASE_BY_NAME else n for n in explicit]
    names = explicit or [f.name for f in FIXTURES]
    unknown = [n for n in names if n not in FIXTURES_BY_NAME]
    if unknown:
        ap.error("unknown fixture(s): %s (known: %s)" % (", ".join(unknown), ", ".join(FIXTURES_BY_NAME)))
    if args.check:
        return check_installed(args.out, names)
    profiles = _parse_formats(ap, args.format or "2.8,legacy")
    if any(p.name == "2.9" for p in profiles):
        ap.error("PyTorch 2.9 and newer archives come from real PyTorch: make fixtures (tools/export_fixtures.py)")
    install_dir, args.out = args.out, tempfile.mkdtemp(prefix="lathe-synthesized-")
    profiles = [serialize.PROFILES["2.9"]] + profiles  # the twin, in the scratch folder only
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    # Single-program generations: refuse a multi-method fixture named with
    # --only; skip it (with a note) when running over all fixtures.
    plan = []
    for name in names:
        fx = FIXTURES_BY_NAME[name]
        ok = [p for p in profiles if p.multi_method or len(fx.methods) == 1]
        for p in profiles:
            if p not in ok:
                msg = "%s: the %s format holds exactly one program (PyTorch 2.4-2.7 torch.export.save); this fixture has %d (%s)" % (
                    name, p.name, len(fx.methods), ", ".join(fx.methods))
                if explicit:
                    print("error: " + msg, file=sys.stderr)
                    return 2
                print("skipped " + msg, file=sys.stderr)
        if ok:
            plan.append((fx, ok))

    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = OrderedDict()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f, object_pairs_hook=OrderedDict)
    manifest.pop("format", None)
    manifest.pop("generations", None)

    for fx, fx_profiles in plan:
        paths, written, entry = build_fixture(fx, args.out, fx_profiles)
        old = _upgrade_entry(manifest.get(fx.name, OrderedDict()))
        entry["archives"] = _merge_archives(args.out, old.get("archives", []), entry["archives"])
        # Generations kept from an earlier run must still match the new 2.9 twin.
        rebuilt = {p.name for p in fx_profiles}
        twin = os.path.join(args.out, serialize.PROFILES["2.9"].archive_name(fx.name))
        for a in entry["archives"]:
            if a["generation"] not in rebuilt and a["generation"] != "2.9" and os.path.exists(twin):
                try:
                    check.compare_with_twin(os.path.join(args.out, a["file"]), twin)
                except check.CheckError as e:
                    print("warning: %s is stale (%s); regenerate it with --only %s --format %s"
                          % (a["file"], e, fx.name, a["generation"]), file=sys.stderr)
        manifest[fx.name] = entry
        for path in paths:
            print("%s  (%d bytes)" % (path, os.path.getsize(path)))
        print("  %d reference files" % len(written))
        for method, m in entry["methods"].items():
            print("  %s: %s" % (method, ", ".join("%s=%d" % (k.replace("torch.ops.", ""), v) for k, v in m["ops"].items())))

    ordered = OrderedDict()
    ordered["generations"] = OrderedDict(
        (p.name, OrderedDict([("file", p.archive_name("<name>")), ("container", p.container), ("schema_version", p.schema_version_str), ("description", p.description)]))
        for p in serialize.PROFILES.values()
    )
    for fx in FIXTURES:
        if fx.name in manifest:
            ordered[fx.name] = _upgrade_entry(manifest[fx.name])
    with open(manifest_path, "w") as f:
        json.dump(ordered, f, indent=1)
        f.write("\n")
    install(args.out, install_dir, plan)
    shutil.rmtree(args.out)
    return 0


def install(scratch: str, out: str, plan) -> None:
    """Copies each older-generation archive from the scratch folder to
    OUT/<generation dir>/<name>.pt2, with the trace's references beside it."""
    for fx, fx_profiles in plan:
        for p in fx_profiles:
            if p.name == "2.9":
                continue
            dest = os.path.join(out, p.archive_name(fx.name))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(scratch, p.archive_name(fx.name)), dest)
            ref = os.path.join(os.path.dirname(dest), fx.name + ".ref")
            shutil.rmtree(ref, ignore_errors=True)
            shutil.copytree(os.path.join(scratch, fx.name + ".ref"), ref)
            print("installed %s" % dest)


def check_installed(out: str, names) -> int:
    """Re-checks every installed older-generation archive against its own
    references (read back and executed from its JSON)."""
    n_checked = 0
    for name in names:
        for profile in serialize.PROFILES.values():
            if profile.name == "2.9":
                continue
            path = os.path.join(out, profile.archive_name(name))
            if not os.path.exists(path):
                continue
            gen = check.generation_of(path)
            if gen != profile.name:
                print("%s: is a %s archive, its name says %s" % (path, gen, profile.name), file=sys.stderr)
                return 1
            res = check.check_archive(path, os.path.join(os.path.dirname(path), name + ".ref"))
            print("%s ok (%s): %s" % (path, gen, ", ".join("%s x%d" % kv for kv in res.items())))
            n_checked += 1
    if not n_checked:
        print("no archives found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
