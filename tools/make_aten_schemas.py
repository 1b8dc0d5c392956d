#!/usr/bin/env python3
"""Write src/lathe/ir/aten_schemas.inc: the argument names and kinds of every
ATen overload, from the torch in .venv, so that C++ code can turn a
positional call (``aten.mul.Tensor(x, y)``) into the schema's named
arguments, as PyTorch's deserializer needs them.

    .venv/bin/python tools/make_aten_schemas.py [--check]

One row per overload:

    LATHE_ATEN_SCHEMA("aten.add.Tensor", "self,other,*alpha", 1, 0)

the argument names in schema order (``*`` marks a keyword-only one), the
number of returns, and 1 if a return is a list (``Tensor[]``). Left out, as
no exported program calls them: out= overloads (named ``out`` or ``*_out``,
or with a keyword-only argument written through) and backward ops. In-place
ops (``add_``, ``index_put_``) stay: a pass may write them. ``--check``
exits non-zero when the file differs from what this torch gives
(tests/torch/core_aten_test.py runs it).

The table covers every PyTorch release Lathe is verified against (2.13.0 in
.venv, 2.14.1 in .venv-torch214): run it once with each torch. A run keeps
the other releases' rows as the file records them and replaces this
torch's; a release not in the file yet is added (``--drop 2.13.0`` removes
one). A row that not every release declares, or that one declares
otherwise, says so after it:

    LATHE_ATEN_SCHEMA("aten.qr.default", "self,some", 2, 0)  // only 2.13.0
    LATHE_ATEN_SCHEMA("aten.f.default", "self,*scale,*new", 1, 0)  // 2.13.0: "self,*scale", 1, 0

The row itself is the newest release's. ``--check`` compares what this
torch gives, merged the same way, with the file: a changed argument name or
kind, a new or removed overload, or a torch the table does not cover fails.
"""
import argparse
import os
import re
import sys

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "lathe", "ir", "aten_schemas.inc")


def is_out_variant(overload, schema):
    if overload == "out" or overload.endswith("_out"):
        return True
    return any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def aten_op_names():
    # dir(torch.ops.aten) lists only the packets loaded so far (about half of
    # them after `import torch`); the JIT's registry holds every aten schema.
    names = {s.name.split("::", 1)[1] for s in torch._C._jit_get_all_schemas() if s.name.startswith("aten::")}
    return sorted(names | set(dir(torch.ops.aten)))


def schema_rows():
    rows = {}
    for name in aten_op_names():
        try:
            packet = getattr(torch.ops.aten, name)
        except Exception:  # noqa: BLE001 (a few attributes are not op packets)
            continue
        if not hasattr(packet, "overloads") or "backward" in name:
            continue
        for overload in packet.overloads():
            schema = getattr(packet, overload)._schema
            if is_out_variant(overload, schema):
                continue
            args = ",".join(("*" if a.kwarg_only else "") + a.name for a in schema.arguments)
            returns_list = any(isinstance(r.type, torch.ListType) for r in schema.returns)
            rows["aten.%s.%s" % (name, overload)] = (args, len(schema.returns), int(returns_list))
    return sorted(rows.items())


def base_version(version):
    """"2.14.1+cu130" -> "2.14.1": a CUDA and a CPU build declare the same schemas."""
    return version.split("+", 1)[0]


def version_key(version):
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.a-z]+", version) if p)


ROW = re.compile(r'^LATHE_ATEN_SCHEMA\("([^"]+)", "([^"]*)", (\d+), (\d+)\)(?:  // (.*))?$')
NOTE = re.compile(r'^([0-9][^:]*): "([^"]*)", (\d+), (\d+)$')


def read_table(path):
    """{release: {op: (args, returns, returns_list)}} as the file records them."""
    if not os.path.exists(path):
        return {}
    views, releases = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r'^LATHE_ATEN_SCHEMAS_TORCH_VERSION\("([^"]*)"\)$', line)
            if m:
                releases = [base_version(r) for r in m.group(1).split()]
                views = {r: {} for r in releases}
                continue
            m = ROW.match(line)
            if not m:
                continue
            op, row = m.group(1), (m.group(2), int(m.group(3)), int(m.group(4)))
            holders, own = list(releases), {}
            for note in (m.group(5) or "").split("; ") if m.group(5) else []:
                if note.startswith("only "):
                    holders = note[len("only "):].split()
                    continue
                n = NOTE.match(note)
                if not n:
                    raise SystemExit("%s: cannot read the note %r of %s" % (path, note, op))
                own[n.group(1)] = (n.group(2), int(n.group(3)), int(n.group(4)))
            for r in holders:
                if r in views:
                    views[r][op] = own.get(r, row)
    return views


def merge(views):
    """[(op, row, note)]: each op once, the newest release's row, notes for the rest."""
    releases = sorted(views, key=version_key)
    out = []
    for op in sorted(set().union(*[set(v) for v in views.values()])):
        holders = [r for r in releases if op in views[r]]
        row = views[holders[-1]][op]
        notes = [] if holders == releases else ["only " + " ".join(holders)]
        notes += ['%s: "%s", %d, %d' % ((r,) + views[r][op]) for r in holders if views[r][op] != row]
        out.append((op, row, "; ".join(notes)))
    return releases, out


def render(releases, rows):
    lines = ["// Generated by tools/make_aten_schemas.py from torch %s: every ATen overload's" % " and ".join(releases),
             "// argument names and kinds (out= and backward ops left out), the newest release's where they",
             "// differ; a note after a row names the releases that declare it, when not all, and what one",
             "// declares otherwise. Do not edit by hand.",
             "// clang-format off",
             'LATHE_ATEN_SCHEMAS_TORCH_VERSION("%s")' % " ".join(releases)]
    for op, (args, n, lst), note in rows:
        lines.append('LATHE_ATEN_SCHEMA("%s", "%s", %d, %d)' % (op, args, n, lst) + ("  // " + note if note else ""))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--drop", action="append", default=[], metavar="RELEASE", help="leave this release's rows out")
    args = ap.parse_args()
    this = base_version(torch.__version__)
    views = read_table(OUT)
    for r in args.drop:
        views.pop(r, None)
    views[this] = dict(schema_rows())
    releases, rows = merge(views)
    text = render(releases, rows)
    if args.check:
        with open(OUT) as f:
            if f.read() != text:
                print("%s is out of date for torch %s (it holds %s): run tools/make_aten_schemas.py with this torch" % (
                    OUT, torch.__version__, " and ".join(sorted(read_table(OUT), key=version_key)) or "no release"))
                return 1
        return 0
    with open(OUT, "w") as f:
        f.write(text)
    print("%s: %d overloads of torch %s, %d bytes" % (os.path.normpath(OUT), len(rows), " and ".join(releases),
                                                    len(text.encode())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
