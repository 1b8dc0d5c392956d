#!/usr/bin/env python3
"""A seeded hostile-input probe over the classes of issue 33 ("Hostile input,
round 3"): it crafts inputs for every class the issue's findings 1-24 name,
runs each through the `lathe` command line and/or the Python binding (every
run in a child process, with a timeout), and counts what happened.

    .venv/bin/python tools/hostile_probe.py                       # everything, seed 1
    .venv/bin/python tools/hostile_probe.py --scale 0.02 --seed 3 # a smoke run (about 70 inputs)
    .venv/bin/python tools/hostile_probe.py --classes int_kernels,npy_headers --json out.json
    .venv/bin/python tools/hostile_probe.py --list                # the classes and their sizes

Needs: the `lathe` binary (--lathe, default build/lathe), the Python binding
built into build/python (--pythonpath), and a Python with torch and numpy
(the one running this script: the .venv), which exports the small programs
the integer, loop, cond, pool and index classes start from and computes the
expected values (PyTorch eager, or Python's exact integers where PyTorch's
own kernel traps). Headless Chromium (tests/view/cdp.py) checks a sample of
the `lathe view` pages when it is installed.

Each run is classified as
  crash      killed by a signal, or the Python interpreter died
  hang       still running at its timeout (--timeout, per class where noted)
  wrong      a value that differs from PyTorch's (or from exact arithmetic);
             an input the issue says must be refused that was accepted; a
             valid input refused; a Python failure that is not lathe.Error;
             a file left behind or memory past the documented caps
  injection  raw ESC, BEL, other C0/C1 controls or bidi overrides/isolates in
             stdout/stderr or an exception message; markup, a handler or an
             extra script in a `lathe view` page (statically, and in Chromium)
  unclear    an error that is empty, names neither the file, the record nor
             the node it is about, or misreports the value (a wrapped index)
  ok         none of these
A run can have several of these at once (they are counted in each column).

Output: a table per class (inputs: distinct crafted files/argument sets;
runs: the runs of them through the CLI and the binding), the findings with a
reproducer each, and with --json the same as JSON. Crafted files stay in
--workdir (default: a new folder under /tmp) for reproducing findings.
The same --seed and --scale give the same inputs.
"""
import argparse
import hashlib
import io
import json
import os
import random
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "fixtures")

I64_MIN, I64_MAX = -2**63, 2**63 - 1

# ------------------------------------------------------------------ classes

# key, the issue's finding numbers, what is crafted, base number of runs (--scale 1).
CLASSES = [
    ("int_kernels", "1", "integer //, %, fmod, div trunc/floor (Tensor and Scalar, 5 dtypes) at INT_MIN/-1, 0, extremes", 500),
    ("int_symbolic", "1", "symbolic _operator.floordiv/mod on unbacked ints at INT64_MIN/-1, 0, extremes", 160),
    ("symint_overflow", "12", "symbolic add/sub/mul/pow/neg overflow (mul by 2^62, 3**64) and sizes made from them", 170),
    ("archive_in_use", "2", "archives truncated / overwritten / rewritten while run --repeat, convert, lower or Python load/run use them", 50),
    ("close_during_run", "3", "Program.close() (and with-exit, double close) from one thread while others run, save, walk graphs", 40),
    ("while_loop", "4", "while_loop with huge/negative trip counts, a body that never advances, a non-boolean condition", 36),
    ("ctrl_c", "5", "SIGINT to Python during Program.run (main thread or worker), SIGINT/SIGTERM to the CLI", 24),
    ("broadcast_work", "6", "expand of [1, 8] to big broadcast views, then sum/amax/mean/mul: work limit vs value", 110),
    ("expand_overflow", "11", "expand to sizes whose element count overflows int64 ([2^62, 2^62, 8], ...)", 90),
    ("json_many_keys", "7", "objects with 10k-1M keys (and long arrays) under unknown keys anywhere in the JSON", 40),
    ("symbolic_sizes", "8, 23", "malformed symbolic input sizes, symbols without ranges, empty/odd ranges; run with sizes in and out of range", 210),
    ("neg_conj", "9", "torch tensors with the negative or conjugate bit (z.conj().imag, _neg_view, conj) through the binding", 60),
    ("narrow_slice", "10", "narrow/slice/select with 2^63-1, INT64_MIN and other extreme starts, lengths, steps, dims", 220),
    ("json_duplicate_keys", "13", "a repeated member in any JSON object (target, signature, metadata, weights config, ranges), also spelt with \\u escapes", 220),
    ("subgraph_outputs", "14", "cond branches / while_loop bodies whose outputs disagree with the node's declared outputs; a body that doubles its carry", 70),
    ("pool_lowering", "15", "max_pool2d/avg_pool2d with kernel > input, odd stride/padding/dilation: portable, --backend xnnpack, lower + run", 140),
    ("view_injection", "16", "markup, handlers and script breakouts in op names, node/value/parameter names, stack traces, module paths", 170),
    ("terminal_escapes", "17", "ESC/OSC/BEL/C1/bidi in names through inspect (--graph, --json), run errors, lower/transform --explain, convert, view, Python errors", 300),
    ("lower_lying_metadata", "18", "tensor metadata that lies about sizes/dtypes, then lower + run and run --backend xnnpack", 70),
    ("json_record_bomb", "19", "a small archive whose graph record inflates to 0.1-3.5 GB of JSON whitespace (declared truthfully or not)", 10),
    ("binding_errors", "20", "wrong and extreme arguments to the binding: run(2**100), odd buffers and dtypes, bad methods/paths/passes", 140),
    ("nul_in_names", "21", "NUL in paths, method names, pass/backend names and names inside the archive", 40),
    ("index_errors", "22", "index_select/gather/embedding/index/select/scatter with out-of-range indices (-9 on 8, +-2^63, ...)", 170),
    ("run_vs_verify", "23", "placeholders that lie (negative, other shape/rank/dtype than the weight), empty ranges: run vs inspect/convert/transform", 120),
    ("lenient_json", "24", "trailing data, nesting around the 1024 limit, non-JSON numbers/strings/syntax in the graph record", 200),
    ("npy_headers", "24", ".npy headers numpy refuses or reads differently: (0x2,3), (2.0,3), fortran_order 'yes', duplicate keys, lying lengths", 280),
]
CLASS_KEYS = [c[0] for c in CLASSES]

STATUSES = ["crash", "hang", "wrong", "injection", "unclear"]

# ------------------------------------------------------------------ cases


class Case:
    """One run: a CLI command line (or a chain of them), a Python snippet run
    by a binding worker, or a custom procedure (races, signals)."""

    def __init__(self, cls, desc, key=None):
        self.cls = cls
        self.desc = desc
        self.key = key or desc      # what identifies the crafted input (inputs are counted by it)
        self.id = None
        self.steps = None           # [argv, ...] for the CLI; the last executed is judged
        self.code = None            # Python source for a binding worker
        self.torch = False          # the snippet needs torch
        self.proc = None            # fn(case, probe) -> Result
        self.expect = "either"      # "value" | "refuse" | "either" | "nocrash"
        self.ref = None             # expected outputs (list of arrays), checked whenever a run succeeds
        self.rtol, self.atol = 1e-4, 1e-5
        self.out_dir = None         # CLI: --out folder of the last step
        self.mention = []           # an error must contain one of these
        self.must_contain = []      # an error must contain one of these (else unclear: misreported)
        self.unclear_if = []        # an error containing one of these is unclear (blames the wrong thing)
        self.type_error_ok = False  # a TypeError is an acceptable Python failure (argument of a wrong type)
        self.timeout = None
        self.files = []             # the crafted files
        self.extra = None           # fn(case, result) -> [(status, note)]
        self.check_injection = True
        self.bidi_ok_in_json = False
        self.slow = None            # seconds past which a finished run still counts as a hang


class Result:
    def __init__(self):
        self.flags = {}             # status -> note
        self.rc = None
        self.signal = None
        self.timed_out = False
        self.stdout = b""
        self.stderr = b""
        self.error = None           # the message judged as the error
        self.elapsed = 0.0
        self.maxrss_kb = 0
        self.py = None              # a binding worker's report

    def flag(self, status, note):
        if status not in self.flags:
            self.flags[status] = note


# Raw bytes that must not reach a terminal from a file's names.
C0 = set(range(0x00, 0x20)) - {0x09, 0x0A}
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f",
        "\u061c"]
BIDI_BYTES = [b.encode() for b in BIDI]
C1_BYTES = [bytes([0xC2, b]) for b in range(0x80, 0xA0)]


def raw_controls(data, bidi=True):
    """What raw control bytes `data` (bytes) holds, as a short description, or ''."""
    found = []
    for b in sorted(set(data) & C0):
        found.append(f"\\x{b:02x}")
    for seq in C1_BYTES:
        if seq in data:
            found.append(f"U+{seq[1]:04X}")
    if bidi:
        for ch, seq in zip(BIDI, BIDI_BYTES):
            if seq in data:
                found.append(f"U+{ord(ch):04X}")
    return " ".join(found)


# ------------------------------------------------------------------ archives


def read_records(path):
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def write_records(path, recs, deflate=()):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in recs:
            zi = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED if any(name.endswith(d) for d in deflate) else zipfile.ZIP_STORED
            z.writestr(zi, data)


def find_record(recs, suffix):
    for name, _ in recs:
        if name.endswith(suffix):
            return name
    raise KeyError(suffix)


def edit_archive(src, dst, edits, drop=()):
    """Copy src to dst with {record suffix: fn(bytes) -> bytes} applied."""
    recs = []
    for name, data in read_records(src):
        if any(name.endswith(d) for d in drop):
            continue
        for suffix, fn in edits.items():
            if name.endswith(suffix):
                data = fn(data)
        recs.append((name, data))
    write_records(dst, recs)
    return dst


def edit_model(src, dst, fn, record="models/model.json"):
    """fn(parsed JSON) changes it in place, or returns bytes/str/JSON to write instead."""
    def f(data):
        d = json.loads(data)
        r = fn(d)
        if r is None:
            r = d
        if isinstance(r, bytes):
            return r
        if isinstance(r, str):
            return r.encode("utf-8", "surrogatepass")
        return dumps(r).encode("utf-8", "surrogatepass")
    return edit_archive(src, dst, {record: f})


def model_json(path, record="models/model.json"):
    recs = read_records(path)
    return json.loads(dict(recs)[find_record(recs, record)])


class Pairs:
    """A JSON object written member by member: repeated names allowed."""

    def __init__(self, pairs):
        self.pairs = pairs


class Raw:
    """JSON text written as it is."""

    def __init__(self, text):
        self.text = text


class EscKey(str):
    """A member name written with every letter as a \\u escape."""


def dumps(v):
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ",".join(dumps_key(k) + ":" + dumps(x) for k, x in v.pairs) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(dumps_key(k) + ":" + dumps(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(dumps(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def dumps_key(k):
    if isinstance(k, EscKey):
        return '"' + "".join(f"\\u{ord(c):04x}" for c in k) + '"'
    return json.dumps(k, ensure_ascii=False)


def graph_of(d):
    return d["graph_module"]["graph"]


def nodes_of(d):
    return graph_of(d)["nodes"]


def walk_objects(v, path=()):
    """Every JSON object in v with its path."""
    if isinstance(v, dict):
        yield path, v
        for k, x in v.items():
            yield from walk_objects(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from walk_objects(x, path + (i,))


def rename_value(d, old, new):
    """Rename a graph value everywhere it is named (definitions, uses, tensor_values, specs)."""
    def fix(v):
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if k in ("name", "as_name") and x == old:
                    out[k] = new
                elif k in ("tensor_values", "sym_int_values", "sym_bool_values", "sym_float_values",
                           "custom_obj_values") and isinstance(x, dict):
                    out[k] = {(new if kk == old else kk): fix(xx) for kk, xx in x.items()}
                else:
                    out[k] = fix(x)
            return out
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return fix(d)


def set_int_arg(node, name, value):
    for a in node["inputs"]:
        if a["name"] == name:
            arg = a["arg"]
            if "as_int" in arg:
                arg["as_int"] = value
            elif "as_ints" in arg:
                arg["as_ints"] = value
            elif "as_scalar" in arg:
                arg["as_scalar"] = value
            else:
                key = next(iter(arg))
                arg.clear()
                arg["as_int" if isinstance(value, int) else "as_ints"] = value
            return
    raise KeyError(name)


def find_node(d, target_part):
    for n in nodes_of(d):
        if target_part in n["target"]:
            return n
    raise KeyError(target_part)


def save_npy(path, arr):
    np.save(path, arr, allow_pickle=False)
    return path


# ------------------------------------------------------------------ integer semantics


def wrap(v, bits, signed=True):
    m = 1 << bits
    v &= m - 1
    if signed and v >= m >> 1:
        v -= m
    return v


def tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_op(op, a, b):
    """PyTorch's integer semantics before wrapping (None: division by zero)."""
    if b == 0:
        return None
    if op in ("floor_divide", "div_floor"):
        return a // b
    if op == "remainder":
        return a % b
    if op == "fmod":
        return a - b * tdiv(a, b)
    if op == "div_trunc":
        return tdiv(a, b)
    raise KeyError(op)


INT_DTYPES = {"int64": (64, True), "int32": (32, True), "int16": (16, True), "int8": (8, True), "uint8": (8, False)}


def edges(bits, signed):
    if not signed:
        hi = 2**bits - 1
        return [0, 1, 2, 3, 7, hi // 2, hi // 2 + 1, hi - 1, hi]
    lo, hi = -2**(bits - 1), 2**(bits - 1) - 1
    e = {lo, lo + 1, -3, -2, -1, 0, 1, 2, 3, hi - 1, hi, lo // 2, hi // 2 + 1}
    if bits == 64:
        e |= {-2**32, -2**31 - 1, -2**31, 2**31 - 1, 2**31, 2**32, -2**62, 2**62}
    return sorted(e)


# ------------------------------------------------------------------ the binding worker


def worker_main():
    """Runs snippets from stdin (one JSON job a line) and reports each on fd
    HP_RESULT_FD; stdout/stderr of each job go to its capture file."""
    import gc
    import lathe
    res = os.fdopen(int(os.environ["HP_RESULT_FD"]), "w", buffering=1)
    torch = None
    for line in sys.stdin:
        job = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        fd = os.open(job["capture"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        if job.get("torch") and torch is None:
            import torch  # noqa: F811
        ns = {"lathe": lathe, "np": np, "os": os, "torch": torch, "threading": threading, "time": time,
              "json": json, "sys": sys}
        r = {"id": job["id"]}
        t0 = time.time()
        try:
            exec(compile(job["code"], job["id"], "exec"), ns)
            r["status"] = "ok"
            out = ns.get("out")
            r["summary"] = summarize(out)
            if job.get("ref") is not None:
                r["mismatch"] = compare(out, [np.load(p) for p in job["ref"]], job["rtol"], job["atol"])
            elif ns.get("ref_inline") is not None:  # expected values the snippet computed itself
                r["mismatch"] = compare(out, [as_array(v) for v in ns["ref_inline"]], job["rtol"], job["atol"])
        except BaseException as e:  # noqa: B902 - everything is reported
            r["status"] = "error"
            r["exc_type"] = type(e).__module__ + "." + type(e).__name__
            r["lathe_error"] = isinstance(e, lathe.Error)
            r["type_error"] = isinstance(e, TypeError)
            r["msg"] = str(e)
            r["tb"] = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-3:])
        r["elapsed"] = time.time() - t0
        sys.stdout.flush()
        sys.stderr.flush()
        ns.clear()
        gc.collect()
        res.write(json.dumps(r) + "\n")


def as_array(v):
    if hasattr(v, "detach"):  # a torch tensor
        v = v.detach()
        if v.is_conj():
            v = v.resolve_conj()
        if v.is_neg():
            v = v.resolve_neg()
        return v.numpy()
    return np.asarray(v)


def summarize(out):
    if out is None:
        return None
    try:
        return [f"{a.dtype}{list(a.shape)}" for a in map(as_array, out)]
    except Exception:  # noqa: BLE001
        return repr(out)[:200]


def compare(out, ref, rtol, atol):
    """'' when the outputs match ref, else what differs."""
    try:
        outs = [as_array(v) for v in out]
    except Exception as e:  # noqa: BLE001
        return f"outputs are not arrays: {e}"
    if len(outs) != len(ref):
        return f"{len(outs)} outputs, expected {len(ref)}"
    for i, (a, b) in enumerate(zip(outs, ref)):
        if a.shape != b.shape:
            return f"output {i}: shape {list(a.shape)}, expected {list(b.shape)}"
        if a.dtype != b.dtype and not (a.dtype.kind == b.dtype.kind and a.dtype.itemsize == b.dtype.itemsize):
            return f"output {i}: dtype {a.dtype}, expected {b.dtype}"
        if a.dtype.kind in "fc":
            if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                bad = np.argwhere(~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True))[0]
                return f"output {i}: at {list(bad)}: {a[tuple(bad)]!r}, expected {b[tuple(bad)]!r}"
        elif not np.array_equal(a, b):
            bad = np.argwhere(a != b)[0] if a.ndim else ()
            return f"output {i}: at {list(bad)}: {a[tuple(bad)]!r}, expected {b[tuple(bad)]!r}"
    return ""


# ------------------------------------------------------------------ the probe


class Probe:
    def __init__(self, args):
        self.args = args
        self.lathe = os.path.abspath(args.lathe)
        self.work = args.workdir
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.path.abspath(args.pythonpath) + (
            os.pathsep + self.env["PYTHONPATH"] if self.env.get("PYTHONPATH") else "")
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.env["PYTHONUNBUFFERED"] = "1"
        self._torch = None
        self.programs = {}
        self.cases = []
        self.lock = threading.Lock()
        self.progress = 0

    @property
    def torch(self):
        if self._torch is None:
            import torch
            torch.set_num_threads(1)
            self._torch = torch
        return self._torch

    def path(self, *parts):
        p = os.path.join(self.work, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    # --- case constructors ---------------------------------------------------

    def add(self, case):
        n = sum(1 for c in self.cases if c.cls == case.cls)
        case.id = f"{case.cls}/{n:04d}"
        self.cases.append(case)
        return case

    def cli(self, cls, desc, argv, expect="either", ref=None, out=False, key=None, steps=None, **kw):
        c = Case(cls, desc, key)
        c.steps = steps if steps else [list(argv)]
        c.expect = expect
        c.ref = ref
        if out or ref is not None:
            c.out_dir = self.path(cls, "out", hashlib.sha1(repr(c.steps).encode()).hexdigest()[:12])
            c.steps[-1] = c.steps[-1] + ["--out", c.out_dir]
        for k, v in kw.items():
            setattr(c, k, v)
        return self.add(c)

    def py(self, cls, desc, code, expect="either", ref=None, key=None, **kw):
        c = Case(cls, desc, key)
        c.code = code
        c.expect = expect
        c.ref = ref
        for k, v in kw.items():
            setattr(c, k, v)
        return self.add(c)

    def custom(self, cls, desc, fn, key=None, **kw):
        c = Case(cls, desc, key)
        c.proc = fn
        for k, v in kw.items():
            setattr(c, k, v)
        return self.add(c)

    # --- running -------------------------------------------------------------

    def timeout_of(self, case):
        return case.timeout or self.args.timeout

    def run_argv(self, argv, timeout, on_start=None, env=None):
        """Run one command; (rc, signal, timed_out, stdout, stderr, elapsed, maxrss_kb).
        on_start(popen) is called once it runs (to schedule signals, file changes)."""
        t0 = time.time()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             cwd=self.work, env=env or self.env, start_new_session=True)
        so, se = [], []
        t_out = threading.Thread(target=lambda: so.append(p.stdout.read()), daemon=True)
        t_err = threading.Thread(target=lambda: se.append(p.stderr.read()), daemon=True)
        t_out.start()
        t_err.start()
        if on_start:
            on_start(p)
        timed_out = False
        deadline = t0 + timeout
        while True:  # wait4, not communicate(): the child's peak RSS comes with it
            pid, status, rusage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                pid, status, rusage = os.wait4(p.pid, 0)
                break
            time.sleep(0.005 if time.time() - t0 < 1 else 0.05)
        p.returncode = rc = os.waitstatus_to_exitcode(status)
        try:  # a grandchild that kept the pipes open
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        t_out.join(5)
        t_err.join(5)
        elapsed = time.time() - t0
        sig = -rc if rc < 0 and not timed_out else None
        return rc, sig, timed_out, so[0] if so else b"", se[0] if se else b"", elapsed, rusage.ru_maxrss

    def pyproc(self, code, timeout, on_start=None):
        """A Python snippet in its own interpreter (the binding on its path)."""
        return self.run_argv([sys.executable, "-c", code], timeout, on_start)

    def run_cli(self, case):
        r = Result()
        t = self.timeout_of(case)
        for i, argv in enumerate(case.steps):
            rc, sig, to, out, err, el, rss = self.run_argv(argv, t)
            r.stdout += out
            r.stderr += err
            r.elapsed += el
            r.maxrss_kb = max(r.maxrss_kb, rss)
            r.rc, r.signal, r.timed_out = rc, sig, to
            r.step = i
            if rc != 0 or sig or to:
                break
        return r

    def run_py_batch(self, cases):
        """Runs binding cases in one worker process, restarting it after a crash or hang."""
        results = {}
        todo = list(cases)
        while todo:
            rfd, wfd = os.pipe()
            env = dict(self.env)
            env["HP_RESULT_FD"] = str(wfd)
            w = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(wfd,),
                                 cwd=self.work, env=env, start_new_session=True)
            os.close(wfd)
            reader = os.fdopen(rfd, "r")
            buf = ""
            while todo:
                case = todo[0]
                cap = self.path(case.cls, "capture", case.id.split("/")[1] + ".txt")
                job = {"id": case.id, "code": case.code, "torch": case.torch, "capture": cap,
                       "ref": self.ref_files(case), "rtol": case.rtol, "atol": case.atol}
                r = Result()
                t0 = time.time()
                try:
                    w.stdin.write((json.dumps(job) + "\n").encode())
                    w.stdin.flush()
                except BrokenPipeError:
                    pass
                line = None
                # First job in a fresh worker also pays for the imports.
                deadline = t0 + self.timeout_of(case) + (10 if case.torch else 3)
                while line is None:
                    left = deadline - time.time()
                    if left <= 0:
                        break
                    ready, _, _ = select.select([reader], [], [], min(left, 1.0))
                    if ready:
                        chunk = os.read(rfd, 1 << 16).decode()
                        if not chunk:
                            break  # the worker died
                        buf += chunk
                        if "\n" in buf:
                            line, buf = buf.split("\n", 1)
                r.elapsed = time.time() - t0
                try:
                    with open(cap, "rb") as f:
                        r.stderr = f.read()
                except OSError:
                    pass
                todo.pop(0)
                if line is not None:
                    r.py = json.loads(line)
                    r.rc = 0 if r.py["status"] == "ok" else 1
                    results[case.id] = r
                    continue
                # dead or hung: this case is to blame; start a new worker for the rest
                if w.poll() is None:
                    r.timed_out = True
                    try:
                        os.killpg(w.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                rc = w.wait()
                if not r.timed_out:
                    r.rc = rc
                    r.signal = -rc if rc < 0 else None
                    r.died = True
                results[case.id] = r
                break
            try:
                w.stdin.close()
            except BrokenPipeError:
                pass
            try:
                w.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait()
            reader.close()
        return results

    def ref_files_plain(self, cls, i, arrays):
        files = []
        for k, a in enumerate(arrays):
            p = self.path(cls, "ref", f"{i:04d}_{k}.npy")
            np.save(p, np.asarray(a))
            files.append(p)
        return files

    def ref_files(self, case):
        if case.ref is None:
            return None
        if getattr(case, "_ref_files", None) is None:
            files = []
            for i, a in enumerate(case.ref):
                p = self.path(case.cls, "ref", case.id.split("/")[1] + f"_{i}.npy")
                np.save(p, np.asarray(a))
                files.append(p)
            case._ref_files = files
        return case._ref_files

    # --- judging -------------------------------------------------------------

    def judge(self, case, r):
        """Sets r.flags from what the run did and what the case expected."""
        if r.signal:
            r.flag("crash", f"killed by signal {r.signal} ({signal_name(r.signal)})")
        elif getattr(r, "died", False):
            r.flag("crash", f"the Python worker died (exit {r.rc})")
        if r.timed_out:
            r.flag("hang", f"still running after {self.timeout_of(case):g} s")
        if case.check_injection:
            text = r.stderr
            if r.py and r.py.get("msg"):
                text += r.py["msg"].encode("utf-8", "surrogatepass")
            # JSON output escapes controls as JSON does; bidi characters are text there.
            found = " ".join(x for x in (raw_controls(text), raw_controls(r.stdout, bidi=not case.bidi_ok_in_json)) if x)
            if found:
                r.flag("injection", f"raw {found} in the output")
        if r.signal or r.timed_out or getattr(r, "died", False):
            return
        if case.slow and r.elapsed > case.slow:
            r.flag("hang", f"took {r.elapsed:.1f} s, more than the {case.slow:g} s this input should need")
        if r.py is not None:
            ok = r.py["status"] == "ok"
            err = r.py.get("msg", "")
            if not ok and not r.py.get("lathe_error"):
                if not (case.type_error_ok and r.py.get("type_error")):
                    r.flag("wrong", f"raised {r.py['exc_type']}, not lathe.Error: {err[:200]}")
            mismatch = r.py.get("mismatch")
        elif case.steps is not None:
            ok = r.rc == 0
            err = r.stderr.decode("utf-8", "replace").strip()
            mismatch = self.cli_mismatch(case) if ok and case.ref is not None else ""
        else:
            return  # custom procedures judge themselves
        r.error = err if not ok else None
        if ok:
            if case.expect == "refuse":
                r.flag("wrong", "accepted; the issue says this must be refused")
            elif mismatch:
                r.flag("wrong", f"wrong value: {mismatch}")
        else:
            if case.expect == "value":
                r.flag("wrong", f"a valid input was refused: {err[:300]}")
            if not err.strip():
                r.flag("unclear", "empty error message")
            elif case.mention and not any(m in err for m in case.mention):
                r.flag("unclear", f"the error names none of {case.mention[:4]}: {err[:200]}")
            if case.must_contain and not any(m in err for m in case.must_contain):
                r.flag("unclear", f"the error does not show {case.must_contain[:4]}: {err[:200]}")
            for u in case.unclear_if:
                if u in err:
                    r.flag("unclear", f"the error blames {u!r}: {err[:200]}")

    def cli_mismatch(self, case):
        outs = []
        for i in range(len(case.ref)):
            p = os.path.join(case.out_dir, f"output_{i}.npy")
            if not os.path.exists(p):
                return f"no {os.path.basename(p)} written"
            outs.append(np.load(p))
        if os.path.exists(os.path.join(case.out_dir, f"output_{len(case.ref)}.npy")):
            return f"more than {len(case.ref)} outputs"
        return compare(outs, [np.asarray(a) for a in case.ref], case.rtol, case.atol)

    def run_unit(self, unit):
        try:
            if isinstance(unit, list):
                results = self.run_py_batch(unit)
                out = []
                for c in unit:
                    r = results[c.id]
                    self.judge(c, r)
                    if c.extra:
                        for s, n in c.extra(c, r) or []:
                            r.flag(s, n)
                    out.append((c, r))
            else:
                c = unit
                if c.proc:
                    r = c.proc(c, self)
                    self.judge(c, r)
                else:
                    r = self.run_cli(c)
                    self.judge(c, r)
                if c.extra:
                    for s, n in c.extra(c, r) or []:
                        r.flag(s, n)
                out = [(c, r)]
        except Exception as e:  # noqa: BLE001 - a probe bug must not lose the run
            out = []
            for c in (unit if isinstance(unit, list) else [unit]):
                r = Result()
                r.flag("probe_error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
                out.append((c, r))
        with self.lock:
            self.progress += len(out)
            if not self.args.quiet and sys.stderr.isatty():
                sys.stderr.write(f"\r{self.progress}/{len(self.cases)} runs")
                sys.stderr.flush()
        return out


def signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return str(n)


# ------------------------------------------------------------------ programs exported with torch


class Fn:
    """A torch.nn.Module around a function (torch.export takes modules)."""

    @staticmethod
    def make(torch, f):
        class M(torch.nn.Module):
            def forward(self, *a):
                return f(*a)
        return M()


def export(P, name, f, args, dynamic_shapes=None, module=None):
    """fixtures-like program NAME exported from f(*args); cached per run."""
    if name in P.programs:
        return P.programs[name]
    torch = P.torch
    path = P.path("programs", name + ".pt2")
    if not os.path.exists(path):
        m = module if module is not None else Fn.make(torch, f)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = torch.export.export(m, tuple(args), dynamic_shapes=dynamic_shapes)
            torch.export.save(ep, path)
    P.programs[name] = path
    return path


def fixture(name):
    return os.path.join(FIX, name + ".pt2")


def fixture_inputs(name, method="model", call=0):
    d = os.path.join(FIX, name + ".ref", method, f"call_{call}")
    ins = sorted((f for f in os.listdir(d) if f.startswith("input_")), key=lambda f: int(f[6:].split(".")[0]))
    outs = sorted((f for f in os.listdir(d) if f.startswith("output_")), key=lambda f: int(f[7:].split(".")[0]))
    return [os.path.join(d, f) for f in ins], [np.load(os.path.join(d, f)) for f in outs]


def run_argv(P, archive, inputs, *extra):
    return [P.lathe, "run", archive, "--inputs", *inputs, *extra] if inputs else [P.lathe, "run", archive, *extra]


def py_run(archive, inputs, method=None, load=True):
    """A snippet: load ARCHIVE, run it on the .npy INPUTS, out = the outputs."""
    m = f", method={method!r}" if method else ""
    return (f"p = lathe.load({archive!r})\n"
            f"out = p.run(*[np.load(f) for f in {list(inputs)!r}]{m})\n")


def choose_runner(rng, py_share):
    return "py" if rng.random() < py_share else "cli"


def add_run(P, cls, desc, archive, inputs, expect, ref=None, runner="cli", key=None, **kw):
    """One run of ARCHIVE on INPUTS through the CLI or the binding."""
    key = key or (archive + "|" + "|".join(inputs))
    if runner == "py":
        return P.py(cls, desc + " [py]", py_run(archive, inputs), expect, ref=ref, key=key, **kw)
    return P.cli(cls, desc + " [cli]", run_argv(P, archive, inputs), expect, ref=ref, out=True, key=key, **kw)


# ------------------------------------------------------------------ 1. integer kernels

INT_TENSOR_OPS = ["floor_divide", "remainder", "fmod", "div_trunc", "div_floor"]


def torch_int_op(torch, op):
    return {"floor_divide": torch.floor_divide, "remainder": torch.remainder, "fmod": torch.fmod,
            "div_trunc": lambda x, y: torch.div(x, y, rounding_mode="trunc"),
            "div_floor": lambda x, y: torch.div(x, y, rounding_mode="floor")}[op]


def gen_int_kernels(P, rng, n):
    torch = P.torch
    cls = "int_kernels"
    for i in range(n):
        op = rng.choice(INT_TENSOR_OPS)
        scalar = rng.random() < 0.3
        dtype = rng.choice(["int64", "int32"] if scalar else list(INT_DTYPES))
        bits, signed = INT_DTYPES[dtype]
        e = edges(bits, signed)
        lo = -2**(bits - 1) if signed else 0
        hi = 2**(bits - 1) - 1 if signed else 2**bits - 1

        def val(pool):
            return rng.choice(pool) if rng.random() < 0.8 else rng.randint(lo, hi)
        nz = [v for v in e if v != 0]
        x = [val(e) for _ in range(6)]
        if signed and rng.random() < 0.5:
            x[0] = lo  # the trap: INT_MIN with -1
        f = torch_int_op(torch, op)
        tdt = getattr(torch, dtype)
        if scalar:
            c = -1 if rng.random() < 0.4 else (0 if rng.random() < 0.1 else val(nz))
            if not signed and c < 0:
                c = 1
            prog = export(P, f"int_{op}_scalar_{dtype}", lambda a, f=f: (f(a, 3),),
                          [torch.zeros(6, dtype=tdt) + 7])
            arch = P.path(cls, f"{i:04d}.pt2")

            def setc(d, c=c):
                node = nodes_of(d)[0]
                set_int_arg(node, "other", c)
            edit_model(prog, arch, setc)
            ys = [c] * 6
            xin = [save_npy(P.path(cls, f"{i:04d}_x.npy"), np.array(x, dtype=dtype))]
            desc = f"{op}({dtype} {x}, scalar {c})"
        else:
            y = [val(nz) for _ in range(6)]
            if signed and rng.random() < 0.5:
                y[0] = -1
            if rng.random() < 0.12:
                y[rng.randrange(6)] = 0
            arch = export(P, f"int_{op}_{dtype}", lambda a, b, f=f: (f(a, b),),
                          [torch.zeros(6, dtype=tdt) + 7, torch.ones(6, dtype=tdt)])
            ys = y
            xin = [save_npy(P.path(cls, f"{i:04d}_x.npy"), np.array(x, dtype=dtype)),
                   save_npy(P.path(cls, f"{i:04d}_y.npy"), np.array(y, dtype=dtype))]
            desc = f"{op}({dtype} {x}, {y})"
        res = [int_op(op, a, b) for a, b in zip(x, ys)]
        name = op.split("_")[0] if op.startswith("div") else op
        if any(v is None for v in res):
            expect, ref = "refuse", None
        else:
            expect, ref = "value", [np.array([wrap(v, bits, signed) for v in res], dtype=dtype)]
        add_run(P, cls, desc, arch, xin, expect, ref, runner=choose_runner(rng, 0.3),
                mention=[name, "div", "ZeroDivision"])


# ------------------------------------------------------------------ 2./3. symbolic integers

SYM_BIN = {"add": lambda u, v: u + v, "sub": lambda u, v: u - v, "mul": lambda u, v: u * v,
           "floordiv": lambda u, v: u // v, "mod": lambda u, v: u % v}


def sym_program(P, op):
    torch = P.torch
    f = SYM_BIN[op]
    return export(P, f"sym_{op}", lambda a, b: (torch.zeros(2, dtype=torch.int64) + f(a.item(), b.item()),),
                  [torch.tensor(7), torch.tensor(3)])


def exact(op, u, v):
    if op in ("floordiv", "mod") and v == 0:
        return None
    return SYM_BIN[op](u, v)


def sym_case(P, cls, rng, i, prog, inputs_vals, result, desc, mention):
    ins = [save_npy(P.path(cls, f"{i:04d}_{k}.npy"), np.array(v, dtype=np.int64)) for k, v in enumerate(inputs_vals)]
    if result is None or not (I64_MIN <= result <= I64_MAX):
        expect, ref = "refuse", None
    else:
        expect, ref = "value", [np.array([result, result], dtype=np.int64)]
    add_run(P, cls, desc, prog, ins, expect, ref, runner=choose_runner(rng, 0.35), mention=mention)


def gen_int_symbolic(P, rng, n):
    cls = "int_symbolic"
    e = edges(64, True)
    for i in range(n):
        op = rng.choice(["floordiv", "mod"])
        u = I64_MIN if rng.random() < 0.35 else (rng.choice(e) if rng.random() < 0.8 else rng.randint(I64_MIN, I64_MAX))
        v = -1 if rng.random() < 0.35 else (0 if rng.random() < 0.1 else rng.choice([x for x in e if x]))
        sym_case(P, cls, rng, i, sym_program(P, op), [u, v], exact(op, u, v), f"_operator.{op}({u}, {v})",
                 [op, "_operator"])


def gen_symint_overflow(P, rng, n):
    torch = P.torch
    cls = "symint_overflow"
    e = edges(64, True) + [3, -3, 2**31 + 1, 3037000499, 3037000500, -3037000500, 2**21, 2**42]
    pows = [2, 3, 31, 32, 33, 40, 62, 63, 64, 65]
    ones_k = [4, 2**31, 2**62]
    for i in range(n):
        kind = rng.choices(["bin", "pow", "neg", "mulconst", "ones"], [5, 3, 1, 1, 2])[0]
        if kind == "bin":
            op = rng.choice(["add", "sub", "mul"])
            u, v = rng.choice(e), rng.choice(e)
            sym_case(P, cls, rng, i, sym_program(P, op), [u, v], exact(op, u, v), f"_operator.{op}({u}, {v})",
                     [op, "_operator"])
        elif kind == "pow":
            k = rng.choice(pows)
            prog = export(P, f"sym_pow_{k}", lambda a, k=k: (torch.zeros(2, dtype=torch.int64) + a.item() ** k,),
                          [torch.tensor(1)])
            u = rng.choice([0, 1, -1, 2, -2, 3, -3, 7, 2**31, 3037000500, I64_MIN, I64_MAX])
            sym_case(P, cls, rng, i, prog, [u], u ** k, f"_operator.pow({u}, {k})", ["pow", "_operator"])
        elif kind == "neg":
            prog = export(P, "sym_neg", lambda a: (torch.zeros(2, dtype=torch.int64) + (-a.item()),), [torch.tensor(1)])
            u = rng.choice([I64_MIN, I64_MIN + 1, -1, 0, I64_MAX])
            sym_case(P, cls, rng, i, prog, [u], -u, f"_operator.neg({u})", ["neg", "_operator"])
        elif kind == "mulconst":
            prog = export(P, "sym_mul_2p62", lambda a: (torch.zeros(2, dtype=torch.int64) + a.item() * 2**62,),
                          [torch.tensor(1)])
            u = rng.choice([0, 1, -1, -2, 2, 3, 4, I64_MIN, I64_MAX])
            sym_case(P, cls, rng, i, prog, [u], u * 2**62, f"_operator.mul({u}, 2**62)", ["mul", "_operator"])
        else:
            k = rng.choice(ones_k)

            def f(a, k=k):
                n_ = a.item() * k
                torch._check(n_ >= 0)
                return (torch.ones(n_).sum(),)
            prog = export(P, f"sym_ones_{k}", f, [torch.tensor(1)])
            u = rng.choice([0, 1, 2, 3, 4, 5, 2**10, 2**20, 2**31, 2**33, 2**62, I64_MAX, -1])
            while 2**26 < u * k <= 2**34:  # allowed, but gigabytes and seconds: not what this class is about
                u = rng.choice([0, 1, 2, 3, 2**33, 2**62, I64_MAX, -1])
            numel = u * k
            ins = [save_npy(P.path(cls, f"{i:04d}_0.npy"), np.array(u, dtype=np.int64))]
            if numel < 0 or numel > 2**34:
                expect, ref = "refuse", None  # negative, past int64, or past the per-node work limit
            elif numel <= 2**20:
                expect, ref = "value", [np.array(float(numel), dtype=np.float32)]
            else:
                expect, ref = "either", [np.array(float(numel), dtype=np.float32)]
            add_run(P, cls, f"ones({u} * {k}).sum()", prog, ins, expect, ref, runner=choose_runner(rng, 0.35),
                    mention=["mul", "ones", "_assert", "u0", "size"])


# ------------------------------------------------------------------ helpers for races and signals


def result_of(t):
    r = Result()
    r.rc, r.signal, r.timed_out, r.stdout, r.stderr, r.elapsed, r.maxrss_kb = t
    return r


def py_report(r):
    """The JSON a snippet printed after 'HP_RESULT ', or None."""
    for line in reversed(r.stdout.decode("utf-8", "replace").splitlines()):
        if line.startswith("HP_RESULT "):
            return json.loads(line[len("HP_RESULT "):])
    return None


PY_PRELUDE = """import json, os, sys, threading, time
import numpy as np
import lathe
def report(**kw):
    sys.stdout.write('HP_RESULT ' + json.dumps(kw) + '\\n'); sys.stdout.flush()
def describe(e):
    return {'type': type(e).__name__, 'lathe': isinstance(e, lathe.Error), 'msg': str(e)[:500]}
"""


def mutate(path, how, other=None):
    """Change an archive in use the ways users do."""
    size = os.path.getsize(path)
    if how == "truncate0":
        os.truncate(path, 0)
    elif how == "truncate_half":
        os.truncate(path, size // 2)
    elif how == "truncate_tail":
        os.truncate(path, max(0, size - 100))
    elif how == "cp_other":  # `cp other.pt2 in.pt2`: the same inode, new bytes
        shutil.copyfile(other, path)
    elif how == "flip_middle":  # the same size, bytes rewritten in place
        with open(path, "r+b") as f:
            f.seek(size // 4)
            data = f.read(size // 2)
            f.seek(size // 4)
            f.write(bytes(b ^ 0xFF for b in data))
    elif how == "append":
        with open(path, "ab") as f:
            f.write(b"\0" * 4096)
    elif how == "rename_over":  # the safe way: a new file renamed over the path
        tmp = path + ".new"
        shutil.copyfile(other, tmp)
        os.replace(tmp, path)
    else:
        raise KeyError(how)


def copy_dated(src, dst):
    """A copy dated an hour back, so that a change made now shows in its mtime."""
    shutil.copyfile(src, dst)
    past = time.time() - 3600
    os.utime(dst, (past, past))
    return dst


# ------------------------------------------------------------------ 4. archives changed while in use

MUTATIONS = ["truncate0", "truncate_half", "truncate_tail", "cp_other", "flip_middle", "append", "rename_over"]


def big_programs(P):
    """Two 12 MB MLPs with the same layout and different weights, an input and their outputs."""
    if "big_a" in P.programs:
        return P.programs["big_a"], P.programs["big_b"], P.programs["big_x"], P.programs["big_refs"]
    torch = P.torch
    refs = {}
    x = torch.linspace(-1, 1, 1024).reshape(1, 1024)
    for tag, seed in (("a", 1), ("b", 2)):
        torch.manual_seed(seed)
        m = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                torch.nn.ReLU(), torch.nn.Linear(1024, 1024)).eval()
        export(P, "big_" + tag, None, [x], module=m)
        with torch.no_grad():
            refs[tag] = m(x).numpy()
    P.programs["big_x"] = save_npy(P.path("programs", "big_x.npy"), x.numpy())
    P.programs["big_refs"] = refs
    return P.programs["big_a"], P.programs["big_b"], P.programs["big_x"], refs


def gen_archive_in_use(P, rng, n):
    cls = "archive_in_use"
    a, b, x, refs = big_programs(P)
    small = fixture("convnet")
    ops = ["run_repeat", "convert", "transform", "py_load_during", "py_run_during", "py_after_load", "py_save_after"]
    for i in range(n):
        op = ops[i % len(ops)] if i < len(ops) * 2 else rng.choice(ops)
        how = rng.choice(MUTATIONS)
        other = b if rng.random() < 0.7 else small
        # run --repeat 2000 takes about a second; convert/transform of 12 MB some 30 ms
        delay = round(rng.uniform(0.0, 0.03 if op in ("convert", "transform") else 0.6), 3)
        desc = f"{op}, {how}{' with ' + os.path.basename(other) if how in ('cp_other', 'rename_over') else ''}" \
               f"{' after %g s' % delay if op in ('run_repeat', 'convert', 'transform', 'py_load_during', 'py_run_during') else ''}"
        P.custom(cls, desc, lambda c, P, op=op, how=how, other=other, delay=delay, i=i:
                 in_use_case(P, c, i, op, how, other, delay, a, x, refs), key=desc + str(i), timeout=60)


def in_use_case(P, case, i, op, how, other, delay, a, x, refs):
    try:
        return in_use_run(P, case, i, op, how, other, delay, a, x, refs)
    finally:  # 12 MB copies: the reproducer says how to make one again
        shutil.rmtree(P.path(case.cls, f"{i:04d}", "x")[:-2], ignore_errors=True)


def in_use_run(P, case, i, op, how, other, delay, a, x, refs):
    d = P.path(case.cls, f"{i:04d}", "x")[:-2]
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = copy_dated(a, os.path.join(d, "in.pt2"))
    out = os.path.join(d, "out.pt2")
    outdir = os.path.join(d, "outs")
    okrefs = [refs["a"]] + ([refs["b"]] if other.endswith("big_b.pt2") and how in ("cp_other", "rename_over") else [])
    case.repro = (f"cp {a} {path}; then {op} on it while `{how}` ({'other=' + other}) after {delay} s "
                  f"(tools/hostile_probe.py in_use_case)")
    mutated_at = []

    ready = os.path.join(d, "ready")
    swapped = how in ("cp_other", "rename_over") and not other.endswith("big_b.pt2")

    def named(msg):  # an error after the swap to a different program may be about its inputs
        return "in.pt2" in msg or swapped

    def later(p):
        def go():
            t_end = time.time() + 10
            while op.startswith("py") and not os.path.exists(ready) and time.time() < t_end:
                time.sleep(0.005)
            time.sleep(delay)
            mutated_at.append(time.time())
            try:
                mutate(path, how, other)
            except OSError:
                pass
        threading.Thread(target=go, daemon=True).start()

    notes = []
    if op in ("run_repeat", "convert", "transform"):
        argv = {"run_repeat": [P.lathe, "run", path, "--inputs", x, "--repeat", "2000", "--out", outdir],
                "convert": [P.lathe, "convert", path, "-o", out],
                "transform": [P.lathe, "transform", path, "-o", out]}[op]
        case.repro = shlex.join(argv) + f"   # while: {how} {path} after {delay} s"
        r = result_of(P.run_argv(argv, P.timeout_of(case), on_start=later))
        time.sleep(max(0.0, delay - r.elapsed) + 0.05)
        err = r.stderr.decode("utf-8", "replace").strip()
        left = [f for f in os.listdir(d) if ".tmp-" in f]
        if left:
            r.flag("wrong", f"left {left} behind")
        if r.rc == 0 and not r.signal:
            if op == "run_repeat":
                got = np.load(os.path.join(outdir, "output_0.npy"))
            else:
                rr = P.run_argv([P.lathe, "run", out, "--inputs", x, "--out", outdir], 60)
                if rr[0] != 0:
                    r.flag("wrong", f"wrote {out}, which does not run: {rr[4].decode()[:200]}")
                    return r
                got = np.load(os.path.join(outdir, "output_0.npy"))
            if not any(got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-5) for ref in okrefs):
                r.flag("wrong", "exit 0 with outputs that are neither the original's nor the new file's")
        elif r.rc and not r.signal and not r.timed_out:
            r.error = err
            if os.path.exists(out):
                r.flag("wrong", f"failed but wrote {out}")
            if not named(err):
                r.flag("unclear", f"the error does not name the archive: {err[:200]}")
        return r
    # Python
    if op == "py_load_during":
        body = (f"open({ready!r}, 'w').close()\ntry:\n    p = lathe.load({path!r})\n    (y,) = p.run(np.load({x!r}))\n"
                f"    report(ok=True, y=np.asarray(y).tolist())\nexcept BaseException as e:\n    report(ok=False, **describe(e))\n")
        r = result_of(P.pyproc(PY_PRELUDE + body, P.timeout_of(case), on_start=later))
    elif op == "py_run_during":  # runs in a loop while the file changes under it
        body = (f"p = lathe.load({path!r}); xs = np.load({x!r}); t0 = time.time(); ys = []\n"
                f"open({ready!r}, 'w').close()\n"
                f"try:\n    while time.time() - t0 < {delay + 0.3}:\n        ys.append(np.asarray(p.run(xs)[0]).tolist())\n"
                f"    report(ok=True, y=ys[-1])\nexcept BaseException as e:\n    report(ok=False, **describe(e))\n")
        r = result_of(P.pyproc(PY_PRELUDE + body, P.timeout_of(case), on_start=later))
    else:  # py_after_load / py_save_after: loaded, used once, then the file changes in place
        call = (f"(y,) = p.run(xs)\n    report(ok=True, y=np.asarray(y).tolist())" if op == "py_after_load" else
                f"p.save({out!r})\n    report(ok=True, y=None)")
        body = (f"import shutil\np = lathe.load({path!r}); xs = np.load({x!r}); p.run(xs)\n"
                f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
                f"from hostile_probe import mutate\nmutate({path!r}, {how!r}, {other!r})\n"
                f"try:\n    {call}\nexcept BaseException as e:\n    report(ok=False, **describe(e))\n")
        r = result_of(P.pyproc(PY_PRELUDE + body, P.timeout_of(case)))
        mutated_at.append(0)
    case.repro = f"{sys.executable} -c {shlex.quote(PY_PRELUDE + body)}   # PYTHONPATH={P.args.pythonpath}"
    rep = py_report(r)
    if r.signal or r.timed_out:
        return r
    if rep is None:
        r.flag("crash" if r.rc else "wrong", f"the interpreter ended without a report (exit {r.rc})")
        return r
    if rep["ok"]:
        if op == "py_after_load" and how != "rename_over":
            r.flag("wrong", f"ran after `{how}` changed the archive in place (the docs: every later call fails)")
        elif op == "py_save_after" and how != "rename_over":
            r.flag("wrong", f"saved after `{how}` changed the archive in place")
        elif rep.get("y") is not None:
            got = np.array(rep["y"], dtype=np.float32)
            if not any(got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-5) for ref in okrefs):
                r.flag("wrong", "returned outputs that are neither the original's nor the new file's")
    else:
        r.error = rep["msg"]
        if not rep["lathe"]:
            r.flag("wrong", f"raised {rep['type']}, not lathe.Error: {rep['msg'][:200]}")
        if not named(rep["msg"]):
            r.flag("unclear", f"the error does not name the archive: {rep['msg'][:200]}")
        if op == "py_after_load" and how == "rename_over":
            r.flag("wrong", f"a file renamed over the path disturbed the loaded program: {rep['msg'][:200]}")
    if op == "py_save_after" and not rep["ok"] and (os.path.exists(out) or [f for f in os.listdir(d) if ".tmp-" in f]):
        r.flag("wrong", "the failed save left a file behind")
    return r


# ------------------------------------------------------------------ 5. close() during run


def gen_close_during_run(P, rng, n):
    cls = "close_during_run"
    ins, outs = fixture_inputs("transformer_block")
    arch = fixture("transformer_block")
    for i in range(n):
        threads = rng.choice([1, 2, 4])
        delay = round(rng.uniform(0.0, 0.03), 4)
        action = rng.choice(["close", "close", "close_twice", "with_exit", "close_while_graph", "close_while_save",
                             "close_while_transform", "close_then_run"])
        desc = f"{action} after {delay} s with {threads} thread(s) running"
        code = PY_PRELUDE + f"""
xs = np.load({ins[0]!r}); ref = np.load({P.ref_files_plain(cls, i, outs)[0]!r})
bad = []; good = []; errs = []
p = lathe.load({arch!r})
stop = False
def runner():
    for _ in range(200):
        try:
            (y,) = p.run(xs)
            y = np.asarray(y)
            good.append(bool(np.allclose(y, ref, rtol=1e-4, atol=1e-5)))
        except lathe.Error as e:
            errs.append(str(e)[:200]); return
        except BaseException as e:
            bad.append(repr(e)[:200]); return
def walker():
    try:
        for _ in range(50):
            g = p.graph()
            for nd in g.nodes:
                nd.name, nd.target, [o.shape for o in nd.outputs]
    except lathe.Error as e: errs.append(str(e)[:200])
    except BaseException as e: bad.append(repr(e)[:200])
def saver():
    try:
        for k in range(5): p.save({P.path(cls, f'{i:04d}_save.pt2')!r})
    except lathe.Error as e: errs.append(str(e)[:200])
    except BaseException as e: bad.append(repr(e)[:200])
def transformer():
    try:
        for k in range(3): p.transform()
    except lathe.Error as e: errs.append(str(e)[:200])
    except BaseException as e: bad.append(repr(e)[:200])
ts = [threading.Thread(target=runner) for _ in range({threads})]
action = {action!r}
if action == "close_while_graph": ts.append(threading.Thread(target=walker))
if action == "close_while_save": ts.append(threading.Thread(target=saver))
if action == "close_while_transform": ts.append(threading.Thread(target=transformer))
if action == "with_exit":
    with p:
        for t in ts: t.start()
        time.sleep({delay})
else:
    for t in ts: t.start()
    time.sleep({delay})
    if action == "close_twice":
        c2 = threading.Thread(target=p.close); c2.start(); p.close(); c2.join()
    elif action == "close_then_run":
        p.close()
    else:
        p.close()
for t in ts: t.join(30)
after = None
try:
    p.run(xs); after = "ran after close"
except lathe.Error as e: after = None
except BaseException as e: bad.append("after close: " + repr(e)[:200])
report(bad=bad, wrong=good.count(False), runs=len(good), errs=errs[:3], after=after)
"""
        P.custom(cls, desc, lambda c, P, code=code: close_case(P, c, code), key=desc + str(i), timeout=60)


def close_case(P, case, code):
    case.repro = f"PYTHONPATH={P.args.pythonpath} {sys.executable} -c {shlex.quote(code)}"
    r = result_of(P.pyproc(code, P.timeout_of(case)))
    if r.signal or r.timed_out:
        return r
    rep = py_report(r)
    if rep is None:
        r.flag("crash", f"the interpreter ended without a report (exit {r.rc}): {r.stderr.decode()[-300:]}")
        return r
    if rep["bad"]:
        r.flag("wrong", f"failures that are not lathe.Error: {rep['bad'][:3]}")
    if rep["wrong"]:
        r.flag("wrong", f"{rep['wrong']} of {rep['runs']} runs returned wrong values")
    if rep["after"]:
        r.flag("wrong", "run() after close() did not raise lathe.Error")
    for e in rep["errs"]:
        if not e.strip():
            r.flag("unclear", "empty lathe.Error")
    return r


# ------------------------------------------------------------------ 6. while_loop


def subgraph(d, name):
    for _, o in walk_objects(d):
        if "as_graph" in o and isinstance(o["as_graph"], dict) and o["as_graph"].get("name") == name:
            return o["as_graph"]["graph"]
    raise KeyError(name)


def loop_program(P):
    torch = P.torch
    from torch._higher_order_ops.while_loop import while_loop

    class L(torch.nn.Module):
        def forward(self, n, x):
            return while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x + 1),
                              (torch.zeros((), dtype=torch.int64), x))
    return export(P, "loop_counter", None, [torch.tensor(5), torch.zeros(3)], module=L())


def loop_ref(n, x):
    k = max(0, n)
    return [np.array(k, dtype=np.int64), (x + k).astype(np.float32)]


def gen_while_loop(P, rng, n):
    torch = P.torch
    cls = "while_loop"
    prog = loop_program(P)
    tanh = fixture("dynamic/while_loop_tanh")
    tanh_mod = None
    x3 = save_npy(P.path(cls, "x3.npy"), np.linspace(-1, 1, 3, dtype=np.float32))
    lt = P.args.loop_timeout
    mention = ["while_loop"]
    # Edited programs: a body that never advances, one that counts down, a condition that is not a boolean.
    variants = {}

    def body_step(v):
        def f(d):
            body = subgraph(d, "while_loop_body_graph_0")
            set_int_arg(body["nodes"][0], "other", v)
        return f

    def cond_out(name):
        def f(d):
            g = subgraph(d, "while_loop_cond_graph_0")
            g["outputs"] = [{"as_tensor": {"name": name}}]
        return f
    for tag, fn in (("step0", body_step(0)), ("step_minus1", body_step(-1)), ("step_2p62", body_step(2**62)),
                    ("cond_float", cond_out("arg1_1")), ("cond_int", cond_out("arg0_1"))):
        variants[tag] = edit_model(prog, P.path(cls, f"loop_{tag}.pt2"), fn)
    # The runs that must reach the iteration limit take minutes here: a few, only in bigger runs.
    limit_cases = [("cli", prog, 2**62, "n = 2^62"), ("py", prog, I64_MAX, "n = 2^63-1"),
                   ("cli", variants["step0"], 5, "a body that adds 0 (never advances)"),
                   ("py", variants["step_minus1"], 5, "a body that counts down"),
                   ("cli", variants["step_2p62"], I64_MAX, "a body that adds 2^62 (wraps)")]
    k_limit = 0 if n < 20 else max(1, min(len(limit_cases), n // 12))
    i = 0
    for runner, arch, nv, what in limit_cases[:k_limit]:
        ins = [save_npy(P.path(cls, f"{i:04d}_n.npy"), np.array(nv, dtype=np.int64)), x3]
        add_run(P, cls, f"loop_counter: {what}", arch, ins, "refuse", runner=runner, mention=mention, timeout=lt)
        i += 1
    for tag in ("cond_float", "cond_int"):
        ins = [save_npy(P.path(cls, f"{i:04d}_n.npy"), np.array(3, dtype=np.int64)), x3]
        add_run(P, cls, f"loop_counter: condition returns {'a float vector' if tag == 'cond_float' else 'an int64'}",
                variants[tag], ins, "refuse", runner=choose_runner(rng, 0.4), mention=mention + ["cond"])
        i += 1
    while i < n:
        if rng.random() < 0.6:
            nv = rng.choice([0, 1, 2, 7, 100, 1000, 30000, -1, -7, I64_MIN, I64_MIN + 1, -2**31])
            ins = [save_npy(P.path(cls, f"{i:04d}_n.npy"), np.array(nv, dtype=np.int64)), x3]
            add_run(P, cls, f"loop_counter: n = {nv}", prog, ins, "value", loop_ref(nv, np.load(x3)),
                    runner=choose_runner(rng, 0.4), mention=mention)
        else:
            if tanh_mod is None:
                tanh_mod = torch.export.load(tanh).module()
            rows = rng.choice([1, 3, 16])
            nv = rng.choice([0, 1, 5, 50, 500, -3, I64_MIN])
            x = np.random.RandomState(i).uniform(-1, 1, (rows, 4)).astype(np.float32)
            with torch.no_grad():
                ref = [np.asarray(t) for t in tanh_mod(torch.from_numpy(x), torch.tensor(nv))]
            ins = [save_npy(P.path(cls, f"{i:04d}_x.npy"), x), save_npy(P.path(cls, f"{i:04d}_n.npy"), np.array(nv))]
            add_run(P, cls, f"while_loop_tanh: x [{rows}, 4], n = {nv}", tanh, ins, "value", ref,
                    runner=choose_runner(rng, 0.4), mention=mention)
        i += 1


# ------------------------------------------------------------------ 7. Ctrl-C


def gen_ctrl_c(P, rng, n):
    cls = "ctrl_c"
    prog = loop_program(P)
    big_n = save_npy(P.path(cls, "n_2p40.npy"), np.array(2**40, dtype=np.int64))
    x3 = save_npy(P.path(cls, "x3.npy"), np.zeros(3, dtype=np.float32))
    kinds = ["py_main", "py_thread", "py_main_twice", "py_threads_4", "cli_sigint", "cli_sigterm"]
    for i in range(n):
        kind = kinds[i % len(kinds)]
        delay = round(rng.uniform(0.1, 1.5), 2)
        P.custom(cls, f"{kind}, signal after {delay} s in Program.run / lathe run of a 2^40-iteration loop",
                 lambda c, P, kind=kind, delay=delay, i=i: ctrl_c_case(P, c, i, kind, delay, prog, big_n, x3),
                 key=f"{kind}{i}", timeout=20)


def ctrl_c_case(P, case, i, kind, delay, prog, big_n, x3):
    grace = 3.0
    ready = P.path(case.cls, f"{i:04d}_ready")
    if os.path.exists(ready):
        os.remove(ready)
    sent = []
    sig = signal.SIGTERM if kind == "cli_sigterm" else signal.SIGINT

    def later(p):
        def go():
            t_end = time.time() + 15
            while kind.startswith("py") and not os.path.exists(ready) and time.time() < t_end:
                time.sleep(0.005)
            time.sleep(delay + (0.3 if kind.startswith("py") else 0))
            for k in range(2 if kind == "py_main_twice" else 1):
                sent.append(time.time())
                try:
                    os.kill(p.pid, sig)
                except ProcessLookupError:
                    pass
                time.sleep(0.2)
        threading.Thread(target=go, daemon=True).start()

    if kind.startswith("cli"):
        argv = [P.lathe, "run", prog, "--inputs", big_n, x3]
        case.repro = shlex.join(argv) + f"   # then kill -{sig.name} after {delay} s"
        r = result_of(P.run_argv(argv, P.timeout_of(case), on_start=later))
        if r.signal == sig:
            r.signal = None  # dying of the signal sent is what it should do
    else:
        threads = {"py_thread": 1, "py_threads_4": 4}.get(kind, 0)
        code = PY_PRELUDE + f"""
p = lathe.load({prog!r}); n = np.load({big_n!r}); x = np.load({x3!r})
res = []
def go():
    try: p.run(n, x); res.append('finished')
    except lathe.Error as e: res.append('lathe.Error: ' + str(e)[:200])
    except BaseException as e: res.append(type(e).__name__)
open({ready!r}, 'w').close()
t0 = time.time()
try:
    if {threads}:
        ts = [threading.Thread(target=go, daemon=True) for _ in range({threads})]
        for t in ts: t.start()
        for t in ts: t.join()
    else:
        p.run(n, x)
    report(kbi=False, res=res, t=time.time())
except KeyboardInterrupt:
    report(kbi=True, t=time.time())
    os._exit(0)
"""
        case.repro = f"PYTHONPATH={P.args.pythonpath} {sys.executable} -c {shlex.quote(code)}   # Ctrl-C after {delay} s"
        r = result_of(P.pyproc(code, P.timeout_of(case), on_start=later))
        rep = py_report(r)
        if not (r.signal or r.timed_out):
            if rep is None:
                if r.signal == signal.SIGINT or r.rc == -signal.SIGINT:
                    pass
                else:
                    r.flag("wrong", f"no report and exit {r.rc}: {r.stderr.decode()[-300:]}")
            elif not rep["kbi"]:
                r.flag("wrong", f"Ctrl-C did not raise KeyboardInterrupt: {rep.get('res')}")
    if r.timed_out:
        r.flags.pop("hang", None)
        r.flag("hang", f"still running {P.timeout_of(case) - delay:.0f} s after {sig.name}")
    if sent and not r.timed_out:
        # elapsed since the (first) signal: the run ended at start + elapsed
        started = time.time() - r.elapsed
        after = started + r.elapsed - sent[0]
        if after > grace + (0.5 if kind == "py_threads_4" else 0):
            r.flag("hang", f"ended {after:.1f} s after {sig.name} (more than {grace:g} s)")
    elif not sent and not r.timed_out:
        r.flag("wrong", f"ended before the signal was sent (exit {r.rc}): {r.stderr.decode()[-200:]}")
    return r


# ------------------------------------------------------------------ 8./9. broadcast work and expand overflow

EXPAND_REDUCERS = {"sum": lambda t: t.sum(), "amax": lambda t: t.amax(), "mean": lambda t: t.mean(),
                   "mul_sum": lambda t: (t * 2).sum(), "sum_dim": lambda t: t.sum(0)}


def expand_program(P, red):
    torch = P.torch
    f = EXPAND_REDUCERS[red]
    return export(P, f"expand_{red}", lambda x: (f(x.expand(4, 4, 8)),), [torch.ones(1, 8)])


def expand_case(P, cls, rng, i, red, sizes, expect, ref=None, extra=(), rtol=1e-4):
    torch = P.torch
    prog = expand_program(P, red)
    arch = P.path(cls, f"{i:04d}.pt2")

    def f(d):
        set_int_arg(find_node(d, "expand"), "size", list(sizes))
    edit_model(prog, arch, f)
    x = np.linspace(-1, 2, 8, dtype=np.float32).reshape(1, 8)
    ins = [save_npy(P.path(cls, f"{i:04d}_x.npy"), x)]
    runner = "cli" if extra else choose_runner(rng, 0.3)
    desc = f"x[1, 8].expand({list(sizes)}).{red}{' ' + ' '.join(extra) if extra else ''}"
    mention = ["expand", red.split("_")[0], "mul", "sum", "amax", "mean"]
    if runner == "cli":
        c = P.cli(cls, desc + " [cli]", run_argv(P, arch, ins, *extra), expect, ref=ref, out=True, key=desc,
                  mention=mention)
    else:
        c = add_run(P, cls, desc, arch, ins, expect, ref, runner="py", key=desc, mention=mention)
    c.rtol = rtol
    c.slow = 10
    return c


def expand_ref(P, red, sizes):
    torch = P.torch
    x = torch.from_numpy(np.linspace(-1, 2, 8, dtype=np.float32).reshape(1, 8))
    with torch.no_grad():
        return [EXPAND_REDUCERS[red](x.expand(*sizes)).numpy()]


def gen_broadcast_work(P, rng, n):
    cls = "broadcast_work"
    small = [1, 2, 3, 5, 16, 100]
    for i in range(n):
        kind = rng.choices(["small", "medium", "over", "flag"], [3, 2, 4, 1])[0]
        red = rng.choice(list(EXPAND_REDUCERS) if kind == "small" else ["sum", "amax", "mean", "mul_sum"])
        if kind == "small":
            sizes = [rng.choice(small), rng.choice(small), 8]
            expand_case(P, cls, rng, i, red, sizes, "value", expand_ref(P, red, sizes))
        elif kind == "medium":  # up to 2^27 elements: seconds at most
            a = rng.choice([512, 1024, 2048, 4096])
            sizes = [a, rng.choice([64, 512, 1024, 2048, 4096]), 8]
            expand_case(P, cls, rng, i, red, sizes, "value", expand_ref(P, red, sizes), rtol=2e-3)
        elif kind == "over":  # past the 2^34 per-node limit: refused, quickly
            sizes = rng.choice([[2**20, 2**20, 8], [2**16, 2**16, 8], [2**30, 16, 8], [2**24, 2**12, 8],
                                [2**17, 2**17, 8], [2**28, 2**28, 8], [2**31, 2**3, 8], [3 * 2**20, 2**14, 8]])
            expand_case(P, cls, rng, i, red, sizes, "refuse")
        else:  # a lower limit from the command line
            sizes = [1024, 1024, 8]
            lim = rng.choice([1, 1000, 2**20, 2**23 - 1])
            expand_case(P, cls, rng, i, red, sizes, "refuse", extra=("--max-elements-per-node", str(lim)))


def gen_expand_overflow(P, rng, n):
    cls = "expand_overflow"
    pool = [[2**62, 2**62, 8], [2**31, 2**33, 8], [I64_MAX, 2, 8], [2**32, 2**32, 8], [3, 2**62, 8],
            [2**62, 4, 8], [2**61, 4, 8], [2**60, 1, 8], [2**59, 2, 8], [2**60, 7, 8], [-1, 2**62, 8],
            [2**63 - 1, 1, 8], [2**40, 2**40, 8], [2**21, 2**21, 2**21], [5, -2, 8], [-2**63, 1, 8],
            [2**62, -1, 8], [1, 1, I64_MAX]]
    zero = [[0, 2**62, 8], [2**62, 0, 8], [0, I64_MAX, 8], [I64_MAX, 0, 8]]
    for i in range(n):
        red = rng.choice(["sum", "amax", "mean", "mul_sum"])
        if rng.random() < 0.15:
            sizes = rng.choice(zero)
            # no elements: sum 0 / mean nan; amax of nothing is an error in PyTorch
            expect = "refuse" if red == "amax" else "either"
            ref = None if red == "amax" else [np.array(np.nan if red == "mean" else 0.0, dtype=np.float32)]
            expand_case(P, cls, rng, i, red, sizes, expect, ref)
        else:
            expand_case(P, cls, rng, i, red, rng.choice(pool), "refuse")


# ------------------------------------------------------------------ 10. JSON objects with many keys


def many_keys_text(kind, n):
    if kind == "object":
        return "{" + ",".join(f'"k{i}":{i}' for i in range(n)) + "}"
    if kind == "long_names":
        pad = "x" * 90
        return "{" + ",".join(f'"{pad}{i}":0' for i in range(n)) + "}"
    if kind == "object_values":
        return "{" + ",".join(f'"k{i}":{{"a":[1,2],"b":"c"}}' for i in range(n)) + "}"
    if kind == "array":
        return "[" + ",".join("0" for _ in range(n)) + "]"
    if kind == "same_prefix":
        return "{" + ",".join(f'"{"k" * 40}{i:08d}":1' for i in range(n)) + "}"
    raise KeyError(kind)


def gen_json_many_keys(P, rng, n):
    cls = "json_many_keys"
    base = fixture("simple_linear")
    ins, outs = fixture_inputs("simple_linear")
    places = ["node_metadata", "top", "graph", "tensor_value", "signature", "weights_config", "range_constraints"]
    kinds = ["object", "object", "long_names", "object_values", "array", "same_prefix"]
    files = []
    nfiles = max(1, n // 3)
    for j in range(nfiles):
        size = rng.choices([10_000, 100_000, 300_000, 1_000_000], [3, 3, 2, 2])[0]
        kind = rng.choice(kinds)
        if kind in ("long_names", "object_values", "same_prefix"):
            size = min(size, 300_000)
        place = rng.choice(places)
        blob = Raw(many_keys_text(kind, size))
        arch = P.path(cls, f"{j:04d}.pt2")

        def f(d, place=place, blob=blob):
            if place == "node_metadata":
                nodes_of(d)[0].setdefault("metadata", {})["hp_blob"] = blob
            elif place == "top":
                d["hp_blob"] = blob
            elif place == "graph":
                graph_of(d)["hp_blob"] = blob
            elif place == "tensor_value":
                next(iter(graph_of(d)["tensor_values"].values()))["hp_blob"] = blob
            elif place == "signature":
                d["graph_module"]["signature"]["hp_blob"] = blob
            elif place == "range_constraints":
                d.setdefault("range_constraints", {})
                d["hp_blob_ranges"] = blob
            return dumps(d)
        if place == "weights_config":
            def g(data, blob=blob):
                d = json.loads(data)
                d["hp_blob"] = blob
                return dumps(d).encode()
            edit_archive(base, arch, {"data/weights/model_weights_config.json": g})
        else:
            edit_model(base, arch, f)
        files.append((arch, f"{size} keys ({kind}) under an unknown key in {place}"))
    cmds = ["inspect", "run", "convert", "view", "py"]
    for i in range(n):
        arch, what = files[i % len(files)]
        cmd = cmds[(i // len(files)) % len(cmds)] if i < len(files) * len(cmds) else rng.choice(cmds)
        desc = f"{what}: {cmd}"
        kw = dict(key=arch, mention=[os.path.basename(arch)], slow=5)
        if cmd == "inspect":
            P.cli(cls, desc, [P.lathe, "inspect", arch], "either", **kw)
        elif cmd == "run":
            P.cli(cls, desc, run_argv(P, arch, ins), "either", ref=outs, **kw)
        elif cmd == "convert":
            P.cli(cls, desc, [P.lathe, "convert", arch, "-o", P.path(cls, "out", f"{i:04d}.pt2")], "either", **kw)
        elif cmd == "view":
            P.cli(cls, desc, [P.lathe, "view", arch, "-o", P.path(cls, "out", f"{i:04d}.html")], "either", **kw)
        else:
            P.py(cls, desc, py_run(arch, ins), "either", ref=outs, **kw)


# ------------------------------------------------------------------ 11. symbolic input sizes and ranges

SYM = "Symbol('s77', positive=True, integer=True)"
BAD_EXPRS = ["s77//0", f"FloorDiv({SYM}, Integer(0))", f"Mod({SYM}, Integer(0))",
             "Symbol('s78', positive=True, integer=True)", "s99", f"{SYM}**{SYM}**{SYM}**{SYM}**{SYM}",
             f"Pow({SYM}, Pow({SYM}, Pow({SYM}, {SYM})))", "", " ", "1/0", f"{SYM} + ", f"{SYM})", f"({SYM}",
             "(" * 5000 + SYM + ")" * 5000, "__import__('os').system('true')", "lambda: 0", "Symbol(", "Symbol()",
             "Symbol('')", "Integer(-5)", "Integer(9223372036854775808)", f"Mul(Integer(9223372036854775807), {SYM})",
             f"{SYM} if True else 0", "nan", "oo", "-oo", "zoo", "Symbol('s77\\x1b[31m', integer=True)",
             "Symbol('u0', integer=True)", "Float(1.5)", "Rational(1, 2)", f"{SYM} / 2", f"Add({SYM}, Integer(-100))",
             f"Max({SYM}, Symbol('s5', integer=True))", "\u0000", f"{SYM}\u0000garbage", f"Mul({SYM}, Integer(0)) / 0"]
ODD_EXPRS = ["s77", "Symbol('s77', integer=True, positive=True)", "Symbol('s77', integer=True)",
             f"Mul(Integer(1), {SYM})", f"Add({SYM}, Integer(0))", "Integer(3)", f"Max({SYM}, Integer(2))",
             "Symbol('s77', positive=False, integer=True)", f"Pow({SYM}, Integer(1))"]
RANGE_BAD = {"no_range": None, "min_above_max": {"min_val": 64, "max_val": 2},
             "min_string": {"min_val": "2", "max_val": 64},
             "min_float": {"min_val": 2.5, "max_val": 64},
             "min_above_max_by_one": {"min_val": 9, "max_val": 8}, "both_negative": {"min_val": -10, "max_val": -2},
             "min_list": {"min_val": [2], "max_val": 64}}
RANGE_ODD = {"unbounded": {"min_val": None, "max_val": None}, "min_zero": {"min_val": 0, "max_val": 64},
             "min_negative": {"min_val": -5, "max_val": 64}, "max_int64": {"min_val": 2, "max_val": I64_MAX},
             "extra_symbol": "extra", "max_huge": {"min_val": 2, "max_val": 2**64}, "empty_object": {}, "max_string_inf": {"min_val": 2, "max_val": "inf"}}
RANGE_GOOD = {"unchanged": {"min_val": 2, "max_val": 64}, "narrow": {"min_val": 4, "max_val": 8}}


def gen_symbolic_sizes(P, rng, n):
    cls = "symbolic_sizes"
    base = fixture("constructs/symbolic")
    made = {}

    def archive(kind, what):
        if (kind, what) in made:
            return made[(kind, what)]
        arch = P.path(cls, f"{len(made):04d}.pt2")

        def f(d):
            tv = graph_of(d)["tensor_values"]
            if kind == "expr":
                tv["x"]["sizes"][0]["as_expr"]["expr_str"] = what
            elif kind == "expr_truncated":
                tv["x"]["sizes"][0]["as_expr"]["expr_str"] = SYM[:what]
            elif kind == "expr_mid":  # the declared size of an intermediate value or the output
                tv[rng.choice(["mul", "reshape"])]["sizes"][0]["as_expr"]["expr_str"] = what
            elif kind == "negative_int":
                tv["x"]["sizes"][1] = {"as_int": what}
            elif kind == "range":
                spec = {**RANGE_BAD, **RANGE_ODD, **RANGE_GOOD}[what]
                if spec is None:
                    del d["range_constraints"]["s77"]
                elif spec == "extra":
                    d["range_constraints"]["s5"] = {"min_val": 1, "max_val": 3}
                else:
                    d["range_constraints"]["s77"] = spec
        edit_model(base, arch, f)
        made[(kind, what)] = arch
        return arch
    for i in range(n):
        kind = rng.choices(["expr", "expr_truncated", "odd", "expr_mid", "negative_int", "range_bad", "range_odd",
                            "range_good"], [6, 3, 2, 1, 1, 3, 2, 3])[0]
        rows = rng.choice([0, 1, 2, 3, 8, 9, 64, 65, 1000])
        lo, hi = 2, 64  # what the program declares, where it still declares it
        if kind == "expr":
            e = rng.choice(BAD_EXPRS)
            arch, expect, what = archive("expr", e), "refuse", f"x size {e[:80]!r}"
        elif kind == "expr_truncated":
            k = rng.randrange(len(SYM))
            arch, expect, what = archive("expr_truncated", k), "refuse", f"x size {SYM[:k]!r} (truncated)"
        elif kind == "odd":
            e = rng.choice(ODD_EXPRS)
            arch, expect, what = archive("expr", e), "either", f"x size {e!r}"
            if e == "Integer(3)":
                lo, hi = 3, 3
        elif kind == "expr_mid":
            e = rng.choice(BAD_EXPRS[:12])
            arch, expect, what = archive("expr_mid", e), "either", f"an intermediate's size {e[:60]!r}"
        elif kind == "negative_int":
            v = rng.choice([-1, -4, I64_MIN])
            arch, expect, what = archive("negative_int", v), "refuse", f"x dim 1 declared {v}"
        else:
            table_ = {"range_bad": RANGE_BAD, "range_odd": RANGE_ODD, "range_good": RANGE_GOOD}[kind]
            name = rng.choice(list(table_))
            arch, what = archive("range", name), f"range of s77: {name} {table_[name]}"
            expect = {"range_bad": "refuse", "range_odd": "either", "range_good": "value"}[kind]
            lo, hi = {"unbounded": (0, I64_MAX), "min_zero": (0, 64), "min_negative": (0, 64),
                      "max_int64": (2, I64_MAX), "narrow": (4, 8), "empty_object": (0, I64_MAX),
                      "max_string_inf": (2, I64_MAX), "max_huge": (2, I64_MAX)}.get(name, (2, 64))
        if expect != "refuse" and not (lo <= rows <= hi):
            expect = "refuse"  # out of the range the program declares
        x = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        ref = [(x * np.float32(rows / 2)).reshape(-1)]
        ins = [save_npy(P.path(cls, f"{i:04d}_x.npy"), x)]
        add_run(P, cls, f"{what}; run with x [{rows}, 4]", arch, ins, expect,
                ref if expect != "refuse" else None, runner=choose_runner(rng, 0.35),
                mention=[os.path.basename(arch), "s77", "x", "size"])


# ------------------------------------------------------------------ 12. negative and conjugate bits


NEG_VARIANTS = {
    "z.conj().imag": "t = z.conj().imag",
    "_neg_view(a)": "t = torch._neg_view(a)",
    "_neg_view(_neg_view(a))": "t = torch._neg_view(torch._neg_view(a))",
    "z2.conj().imag.t()": "t = torch.complex(a.t().contiguous(), b.t().contiguous()).conj().imag.t()",
    "z.conj().real": "t = z.conj().real",
    "_neg_view(a).t().t()": "t = torch._neg_view(a).t().t()",
    "_neg_view(a)[:, :] (a view of a view)": "t = torch._neg_view(a)[:, :]",
    "z.conj().imag.clone() (resolved)": "t = z.conj().imag.clone()",
    "_neg_view(a) requires_grad": "t = torch._neg_view(a.clone().requires_grad_())",
    "_neg_view of a Fortran-ordered view": "t = torch._neg_view(a.t().contiguous().t())",
    "z.conj() into a float program": "t = z.conj()",
    "_neg_view(int64)": "t = torch._neg_view(torch.arange(32).reshape(4, 8))",
}


def gen_neg_conj(P, rng, n):
    cls = "neg_conj"
    torch = P.torch
    aff = export(P, "affine_4x8", lambda x: (x * 2 + 1,), [torch.ones(4, 8)])
    cplx = export(P, "complex_4x8", lambda z: (z * 2,), [torch.complex(torch.ones(4, 8), torch.ones(4, 8))])
    keys = list(NEG_VARIANTS)
    for i in range(n):
        if rng.random() < 0.15:
            v = rng.choice(["z.conj()", "z.conj().conj()", "torch._neg_view(z)"])
            code = (f"torch.manual_seed({i}); a = torch.randn(4, 8); b = torch.randn(4, 8); z = torch.complex(a, b)\n"
                    f"t = {v}\nref_inline = [(t.resolve_conj().resolve_neg() * 2)]\n"
                    f"p = lathe.load({cplx!r})\nout = p.run(t)\n")
            P.py(cls, f"complex program on {v}", code, "either", torch=True, key=f"cplx {v} {i}")
            continue
        k = keys[i % len(keys)] if i < len(keys) else rng.choice(keys)
        code = (f"torch.manual_seed({i}); a = torch.randn(4, 8); b = torch.randn(4, 8); z = torch.complex(a, b)\n"
                f"{NEG_VARIANTS[k]}\n"
                f"ref_inline = [(t.detach().resolve_conj().resolve_neg().to(torch.float32) * 2 + 1)] if not t.is_complex() else None\n"
                f"p = lathe.load({aff!r})\nout = p.run(t)\n")
        P.py(cls, f"x * 2 + 1 on {k}", code, "either", torch=True, key=f"{k} {i}",
             mention=["input", "dtype", "neg", "conj"])


# ------------------------------------------------------------------ 13. narrow / slice / select bounds

BOUNDS = [0, 1, 2, 3, 7, 8, 9, -1, -2, -8, -9, 2**31, 2**32, 2**62, I64_MAX, I64_MIN, I64_MIN + 1, I64_MAX - 1,
          -2**62, -2**31]


def bounds_ref(x, op, a):
    """PyTorch's narrow/slice/select in exact integers (PyTorch's own slice
    overflows for steps near 2^63: [4, 0] where Python slicing gives [4, 1]).
    None: PyTorch refuses."""
    if not -x.ndim <= a["dim"] < x.ndim:
        return None
    dim = a["dim"] % x.ndim
    size = x.shape[dim]
    if op == "narrow":
        start, length = a["start"], a["length"]
        if not -size <= start <= size or length < 0:
            return None
        start = start + size if start < 0 else start
        if start + length > size:
            return None
        return [np.take(x, range(start, start + length), axis=dim)]
    if op == "select":
        i = a["index"]
        if not -size <= i < size:
            return None
        return [np.take(x, i + size if i < 0 else i, axis=dim)]
    if a["step"] <= 0:
        return None
    idx = [slice(None)] * x.ndim
    idx[dim] = slice(a["start"], a["end"], a["step"])
    return [x[tuple(idx)].copy()]


def gen_narrow_slice(P, rng, n):
    cls = "narrow_slice"
    torch = P.torch
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    progs = {"narrow": export(P, "narrow", lambda t: (torch.narrow(t, 1, 1, 2),), [x]),
             "slice": export(P, "slice", lambda t: (t[:, 1:5:2],), [x]),
             "select": export(P, "select", lambda t: (t.select(1, 3),), [x])}
    xin = save_npy(P.path(cls, "x.npy"), x.numpy())
    dims = [0, 1, -1, -2, 2, -3, I64_MAX, I64_MIN]

    def b():
        return rng.choice(BOUNDS) if rng.random() < 0.85 else rng.randint(-20, 20)
    for i in range(n):
        op = rng.choices(["narrow", "slice", "select"], [4, 4, 2])[0]
        dim = rng.choice([0, 1, 1, -1]) if rng.random() < 0.85 else rng.choice(dims)
        if op == "narrow":
            args = {"dim": dim, "start": b(), "length": b()}
            if rng.random() < 0.3:
                args["length"] = I64_MAX
        elif op == "slice":
            args = {"dim": dim, "start": b(), "end": b(), "step": rng.choice([1, 1, 1, 2, 3, 8, 9, 0, -1, 2**62, I64_MAX])}
        else:
            args = {"dim": dim, "index": b()}
        ref = bounds_ref(x.numpy(), op, args)
        expect = "refuse" if ref is None else "value"
        arch = P.path(cls, f"{i:04d}.pt2")

        def f(d, op=op, args=args):
            node = find_node(d, op)
            for k, v in args.items():
                set_int_arg(node, k, v)
        edit_model(progs[op], arch, f)
        desc = f"{op}(x[4, 8], {', '.join(f'{k}={v}' for k, v in args.items())})"
        add_run(P, cls, desc, arch, [xin], expect, ref, runner=choose_runner(rng, 0.3), mention=[op])


# ------------------------------------------------------------------ 14. duplicate JSON keys


def alt_value(key, v):
    """A plausible different value for a repeated member."""
    if key == "target":
        return "torch.ops.aten.neg.default"
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 1
    if isinstance(v, float):
        return v * 2
    if isinstance(v, str):
        return v + "_other"
    if isinstance(v, list):
        return v[:-1] if v else [0]
    if isinstance(v, dict):
        return {}
    return 0


def with_duplicate(root, path, key, mode, esc, first):
    """root with the object at path holding member key twice."""
    def rebuild(v, p):
        if not p:
            pairs = []
            for k, x in v.items():
                if k == key:
                    extra = (EscKey(k) if esc else k, x if mode == "same" else alt_value(k, x))
                    pairs += [extra, (k, x)] if first else [(k, x), extra]
                else:
                    pairs.append((k, x))
            return Pairs(pairs)
        head = p[0]
        if isinstance(v, dict):
            return {k: (rebuild(x, p[1:]) if k == head else x) for k, x in v.items()}
        return [rebuild(x, p[1:]) if i == head else x for i, x in enumerate(v)]
    return rebuild(root, list(path))


DUP_BASES = ["simple_linear", "mlp", "cond", "constructs/symbolic", "two_methods"]


def gen_json_duplicate_keys(P, rng, n):
    cls = "json_duplicate_keys"
    favoured = {"target", "name", "parameter_name", "as_tensor", "user_input", "input_specs", "output_specs",
                "path_name", "min_val", "max_val", "stack_trace", "nn_module_stack", "dtype", "sizes", "as_int",
                "signature", "graph", "tensor_values", "nodes", "inputs", "outputs", "s77", "config", "tensor_meta"}
    for i in range(n):
        base_name = rng.choice(DUP_BASES)
        base = fixture(base_name)
        recs = read_records(base)
        jsons = [nm for nm, data in recs if nm.endswith(".json") and data[:1] == b"{"]
        rec = rng.choice(jsons) if rng.random() < 0.3 else find_record(recs, "models/" + (
            "encode.json" if base_name == "two_methods" else "model.json"))
        d = json.loads(dict(recs)[rec])
        objs = [(p, o) for p, o in walk_objects(d) if o]
        weighted = [(p, o) for p, o in objs if set(o) & favoured]
        path, obj = rng.choice(weighted if weighted and rng.random() < 0.8 else objs)
        keys = list(obj)
        fk = [k for k in keys if k in favoured]
        key = rng.choice(fk if fk and rng.random() < 0.7 else keys)
        mode = rng.choice(["same", "other", "other"])
        esc = rng.random() < 0.2
        first = rng.random() < 0.5
        text = dumps(with_duplicate(d, path, key, mode, esc, first))
        arch = P.path(cls, f"{i:04d}.pt2")
        rel = rec.split("/", 1)[1]
        edit_archive(base, arch, {rel: lambda _, t=text: t.encode()})
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        spelt = ", spelt with \\u escapes" if esc else ""
        desc = (f"{base_name} {rel}: {where}.{key} twice ({mode} value{spelt}, "
                f"{'repeat first' if first else 'repeat last'})")
        cmd = rng.choices(["inspect", "run", "convert", "view", "py"], [4, 2, 1, 1, 2])[0]
        kw = dict(key=arch, mention=[os.path.basename(arch)])
        if cmd == "run" and os.path.isdir(os.path.join(FIX, base_name + ".ref")) and base_name != "two_methods":
            ins, _ = fixture_inputs(base_name)
            P.cli(cls, desc + " [run]", run_argv(P, arch, ins), "refuse", **kw)
        elif cmd == "py":
            P.py(cls, desc + " [py load]", f"p = lathe.load({arch!r})\nout = None\n", "refuse", **kw)
        elif cmd == "convert":
            P.cli(cls, desc + " [convert]", [P.lathe, "convert", arch, "-o", P.path(cls, "out", f"{i:04d}.pt2")],
                  "refuse", **kw)
        elif cmd == "view":
            P.cli(cls, desc + " [view]", [P.lathe, "view", arch, "-o", P.path(cls, "out", f"{i:04d}.html")],
                  "refuse", **kw)
        else:
            P.cli(cls, desc + " [inspect]", [P.lathe, "inspect", arch], "refuse", **kw)


# ------------------------------------------------------------------ 15. subgraph outputs vs declared


def gen_subgraph_outputs(P, rng, n):
    torch = P.torch
    cls = "subgraph_outputs"
    cond = fixture("cond")
    tanh = fixture("dynamic/while_loop_tanh")
    loop = loop_program(P)
    cond_mod = torch.export.load(cond).module()
    tanh_mod = torch.export.load(tanh).module()

    def branch_out(graph_name, names):
        def f(d):
            subgraph(d, graph_name)["outputs"] = [{"as_tensor": {"name": nm}} for nm in names]
        return f

    def declared(dtype=None, sizes=None):
        def f(d):
            tv = graph_of(d)["tensor_values"]["getitem"]
            if dtype is not None:
                tv["dtype"] = dtype
            if sizes is not None:
                tv["sizes"] = sizes
        return f

    def body_node(target, inputs):
        def f(d):
            body = subgraph(d, "while_loop_body_graph_0")
            node = body["nodes"][1]
            node["target"] = target
            node["inputs"] = inputs
        return f
    s77 = {"as_expr": {"expr_str": "Symbol('s77', positive=True, integer=True)", "hint": {"as_int": 3}}}
    # name: (base, edit, shape the edited branch returns (None: same as declared), which branch, kind)
    cond_edits = {
        "true branch returns p_pos_weight [8, 8]": (branch_out("true_graph_0", ["p_pos_weight"]), (8, 8), True),
        "true branch returns p_pos_bias [8]": (branch_out("true_graph_0", ["p_pos_bias"]), (8,), True),
        "false branch returns p_neg_weight [8, 8]": (branch_out("false_graph_0", ["p_neg_weight"]), (8, 8), False),
        "true branch returns two values": (branch_out("true_graph_0", ["relu", "relu"]), "count", True),
        "false branch returns nothing": (branch_out("false_graph_0", []), "count", False),
        "true branch returns x (same type)": (branch_out("true_graph_0", ["x"]), "same", True),
        "the node declares [s77, 4]": (declared(sizes=[s77, {"as_int": 4}]), "declared", None),
        "the node declares int64": (declared(dtype=5), "declared", None),
        "the node declares rank 3": (declared(sizes=[s77, {"as_int": 8}, {"as_int": 1}]), "declared", None),
    }
    loop_edits = {
        "body returns permute [4, 4] for the [s77, 4] carry": (branch_out("while_loop_body_graph_0", ["add_3", "permute"]), (4, 4)),
        "body returns the counter twice (int64 for a float carry)": (branch_out("while_loop_body_graph_0", ["add_3", "add_3"]), "dtype"),
        "body returns one value for two carries": (branch_out("while_loop_body_graph_0", ["add_3"]), "count"),
        "body returns the carries swapped": (branch_out("while_loop_body_graph_0", ["tanh", "add_3"]), "dtype"),
    }
    counter_edits = {
        "body doubles its carry (repeat [2])": body_node("torch.ops.aten.repeat.default", [
            {"name": "self", "arg": {"as_tensor": {"name": "arg1_1"}}, "kind": 1},
            {"name": "repeats", "arg": {"as_ints": [2]}, "kind": 1}]),
        "body doubles its carry (cat [x, x])": body_node("torch.ops.aten.cat.default", [
            {"name": "tensors", "arg": {"as_tensors": [{"name": "arg1_1"}, {"name": "arg1_1"}]}, "kind": 1},
            {"name": "dim", "arg": {"as_int": 0}, "kind": 1}]),
        "body keeps its carry (repeat [1])": body_node("torch.ops.aten.repeat.default", [
            {"name": "self", "arg": {"as_tensor": {"name": "arg1_1"}}, "kind": 1},
            {"name": "repeats", "arg": {"as_ints": [1]}, "kind": 1}]),
    }
    made = {}

    def arch_for(base, name, fn):
        if name not in made:
            made[name] = edit_model(base, P.path(cls, f"{len(made):04d}.pt2"), fn)
        return made[name]
    for i in range(n):
        which = rng.choices(["cond", "loop", "counter"], [5, 3, 2])[0]
        runner = choose_runner(rng, 0.35)
        if which == "cond":
            name = rng.choice(list(cond_edits))
            fn, shape, branch = cond_edits[name]
            arch = arch_for(cond, name, fn)
            rows = rng.choice([1, 4, 8, 16])
            positive = branch if branch is not None and rng.random() < 0.7 else rng.random() < 0.5
            x = np.random.RandomState(i).uniform(0.1, 1, (rows, 8)).astype(np.float32) * (1 if positive else -1)
            with torch.no_grad():
                y = cond_mod(torch.from_numpy(x))
            ref = [np.asarray(y[0] if isinstance(y, (tuple, list)) else y)]
            runs_edited = branch is None or branch == positive
            if shape == "declared":
                expect, r = "refuse", None
            elif not runs_edited:
                expect, r = "either", ref  # the edited branch does not run on this input
            elif shape == "same":
                expect, r = "either", None
            elif shape == "count" or shape != (rows, 8):
                expect, r = "refuse", None
            else:
                expect, r = "either", None
            ins = [save_npy(P.path(cls, f"{i:04d}_x.npy"), x)]
            add_run(P, cls, f"cond: {name}; x [{rows}, 8] {'> 0' if positive else '< 0'}", arch, ins, expect, r,
                    runner=runner, mention=["cond", "getitem", os.path.basename(arch)])
        elif which == "loop":
            name = rng.choice(list(loop_edits))
            fn, what = loop_edits[name]
            arch = arch_for(tanh, name, fn)
            rows = rng.choice([1, 3, 4, 8])
            nv = rng.choice([0, 1, 3])
            x = np.random.RandomState(i).uniform(-1, 1, (rows, 4)).astype(np.float32)
            with torch.no_grad():
                ref = [np.asarray(t) for t in tanh_mod(torch.from_numpy(x), torch.tensor(nv))]
            if nv == 0:
                expect, r = "either", ref
            elif what == (4, 4) and rows == 4:
                expect, r = "either", None
            else:
                expect, r = "refuse", None
            ins = [save_npy(P.path(cls, f"{i:04d}_x.npy"), x), save_npy(P.path(cls, f"{i:04d}_n.npy"), np.array(nv))]
            add_run(P, cls, f"while_loop_tanh: {name}; x [{rows}, 4], n = {nv}", arch, ins, expect, r,
                    runner=runner, mention=["while_loop", os.path.basename(arch)])
        else:
            name = rng.choice(list(counter_edits))
            arch = arch_for(loop, name, counter_edits[name])
            nv = rng.choice([0, 1, 2, 5, 60])
            x = np.linspace(-1, 1, 3, dtype=np.float32)
            if nv == 0 or "keeps" in name:
                expect, r = ("either", loop_ref(nv, x)) if nv == 0 else ("either", [np.array(max(0, nv)), x])
            else:
                expect, r = "refuse", None
            ins = [save_npy(P.path(cls, f"{i:04d}_n.npy"), np.array(nv, dtype=np.int64)),
                   save_npy(P.path(cls, f"{i:04d}_x.npy"), x)]
            add_run(P, cls, f"loop_counter: {name}; n = {nv}", arch, ins, expect, r, runner=runner,
                    mention=["while_loop", os.path.basename(arch)])


# ------------------------------------------------------------------ 16. pools, portable and lowered


def pool_program(P, op, h, w):
    torch = P.torch
    if op == "max":
        f = lambda x: (torch.nn.functional.max_pool2d(x, 1),)  # noqa: E731
    else:
        f = lambda x: (torch.nn.functional.avg_pool2d(x, 1),)  # noqa: E731
    return export(P, f"{op}pool_{h}x{w}", f, [torch.ones(1, 2, h, w)])


def pool_args(op, k, s, p, dil, ceil, cip=True):
    def a(name, arg):
        return {"name": name, "arg": arg, "kind": 1}
    args = [a("kernel_size", {"as_ints": k}), a("stride", {"as_ints": s}), a("padding", {"as_ints": p})]
    if op == "max":
        args += [a("dilation", {"as_ints": dil}), a("ceil_mode", {"as_bool": ceil})]
    else:
        args += [a("ceil_mode", {"as_bool": ceil}), a("count_include_pad", {"as_bool": cip})]
    return args


def gen_pool_lowering(P, rng, n):
    torch = P.torch
    cls = "pool_lowering"
    sizes = [(1, 1), (2, 3), (5, 5), (8, 8), (3, 9)]
    ks = [1, 2, 3, 4, 5, 8, 9, 12, 100, 2**31, 0, -1]
    for i in range(n):
        op = rng.choice(["max", "max", "avg"])
        h, w = rng.choice(sizes)
        big = rng.random() < 0.5  # a kernel larger than the input
        if big:
            kh = rng.randint(h + 1, h + 4)
            kw = rng.randint(w + 1, w + 4) if rng.random() < 0.7 else rng.randint(1, w)
        else:
            kh, kw = rng.choice(ks), rng.choice(ks)
        s = rng.choice([[], [1, 1], [2, 2], [3, 1], [0, 1], [-1, 1], [2**31, 1]]) if rng.random() < 0.6 else [kh, kw]
        pad = rng.choice([[0, 0], [0, 0], [1, 1], [2, 1], [3, 3], [1, 0]])
        dil = rng.choice([[1, 1], [1, 1], [2, 2], [3, 1], [0, 1]])
        ceil = rng.random() < 0.3
        x = torch.from_numpy(np.random.RandomState(i).uniform(-1, 1, (1, 2, h, w)).astype(np.float32))
        try:
            if op == "max":
                y = torch.ops.aten.max_pool2d.default(x, [kh, kw], s, pad, dil, ceil)
            else:
                y = torch.ops.aten.avg_pool2d.default(x, [kh, kw], s, pad, ceil, True)
            ref, expect = [y.numpy().copy()], "value"
            if y.numel() > 10**6:
                continue
        except (RuntimeError, ValueError, OverflowError):
            ref, expect = None, "refuse"
        arch = P.path(cls, f"{i:04d}.pt2")

        def f(d, op=op):
            node = find_node(d, "pool")
            node["inputs"] = node["inputs"][:1] + pool_args(op, [kh, kw], s, pad, dil, ceil)
        edit_model(pool_program(P, op, h, w), arch, f)
        xin = save_npy(P.path(cls, f"{i:04d}_x.npy"), x.numpy())
        desc = (f"{op}_pool2d(x[1, 2, {h}, {w}], kernel [{kh}, {kw}], stride {s}, padding {pad}"
                f"{', dilation %s' % dil if op == 'max' else ''}, ceil_mode {ceil})")
        how = rng.choices(["portable", "backend", "lower", "py_lower"], [2, 3, 3, 1])[0]
        mention = ["pool", os.path.basename(arch)]
        if how == "portable":
            add_run(P, cls, desc + " portable", arch, [xin], expect, ref, runner=choose_runner(rng, 0.3), mention=mention)
        elif how == "backend":
            P.cli(cls, desc + " run --backend xnnpack", run_argv(P, arch, [xin], "--backend", "xnnpack"), expect,
                  ref=ref, out=True, key=arch, mention=mention)
        elif how == "lower":
            low = P.path(cls, "out", f"{i:04d}_xnnpack.pt2")
            steps = [[P.lathe, "lower", arch, "-o", low], run_argv(P, low, [xin])]
            P.cli(cls, desc + " lower, then run", None, expect, ref=ref, out=True, key=arch, steps=steps,
                  mention=mention + [os.path.basename(low)], extra=blames_payload)
        else:
            code = (f"p = lathe.load({arch!r})\nq, why = p.lower('xnnpack')\n"
                    f"out = q.run(np.load({xin!r}))\n")
            P.py(cls, desc + " Program.lower + run", code, expect, ref=ref, key=arch, mention=mention,
                 extra=blames_payload)


# ------------------------------------------------------------------ 17./18. names: markup and terminal controls


def rename_method(src, dst, new):
    """The method 'model' renamed: models/<new>.json and its weights/constants configs."""
    recs = []
    for name, data in read_records(src):
        top, rel = name.split("/", 1)
        for old, fresh in (("models/model.json", f"models/{new}.json"),
                           ("data/weights/model_weights_config.json", f"data/weights/{new}_weights_config.json"),
                           ("data/constants/model_constants_config.json", f"data/constants/{new}_constants_config.json"),
                           ("data/sample_inputs/model.pt", f"data/sample_inputs/{new}.pt")):
            if rel == old:
                rel = fresh
        recs.append((top + "/" + rel, data))
    write_records(dst, recs)
    return dst


def inject(P, field, pay, dst):
    """simple_linear (mlp for module paths, symbolic/sym_zeros for symbols and asserts) with PAY in FIELD.
    Returns (archive, inputs for run, a node/value name the errors may mention)."""
    sl = fixture("simple_linear")
    sl_in, _ = fixture_inputs("simple_linear")
    if field == "method_name":
        return rename_method(sl, dst, pay), sl_in, pay
    if field == "file_name":
        path = os.path.join(os.path.dirname(dst), "f" + pay.replace("/", "_") + ".pt2")
        shutil.copyfile(sl, path)
        return path, sl_in, path
    if field == "weights_fqn":
        def wc(data):
            d = json.loads(data)
            d["config"] = {(pay if k == "linear.weight" else k): v for k, v in d["config"].items()}
            return dumps(d).encode()

        def mj(data):
            d = json.loads(data)
            for spec in d["graph_module"]["signature"]["input_specs"]:
                if "parameter" in spec and spec["parameter"]["parameter_name"] == "linear.weight":
                    spec["parameter"]["parameter_name"] = pay
            return dumps(d).encode()
        return edit_archive(sl, dst, {"models/model.json": mj, "data/weights/model_weights_config.json": wc}), sl_in, pay
    if field == "weights_path":
        def wp(data):
            d = json.loads(data)
            d["config"]["linear.weight"]["path_name"] = pay
            return dumps(d).encode()
        return edit_archive(sl, dst, {"data/weights/model_weights_config.json": wp}), sl_in, pay
    if field == "assert_msg":
        torch = P.torch

        def f(a):
            n_ = a.item() * 4
            torch._check(n_ >= 0)
            return (torch.ones(n_).sum(),)
        prog = export(P, "sym_ones_4", f, [torch.tensor(1)])

        def g(d):
            for nd in nodes_of(d):
                for a in nd["inputs"]:
                    if "as_string" in a["arg"]:
                        a["arg"]["as_string"] = pay
        u = save_npy(P.path("programs", "minus_one.npy"), np.array(-1, dtype=np.int64))
        return edit_model(prog, dst, g), [u], "_assert"
    if field == "symbol":
        sym = fixture("constructs/symbolic")

        def s(d):
            t = dumps(d).replace("s77", pay.replace("\\", "\\\\").replace('"', '\\"'))
            return t
        x = save_npy(P.path("programs", "x_3x4.npy"), np.ones((3, 4), np.float32))
        return edit_model(sym, dst, s), [x], "s77"
    if field == "module_path":
        mlp = fixture("mlp")
        ins, _ = fixture_inputs("mlp")

        def mp(d):
            for nd in nodes_of(d):
                if "nn_module_stack" in nd.get("metadata", {}):
                    nd["metadata"]["nn_module_stack"] = "L__self__,,M;evil," + pay + ",T" + pay
        return edit_model(mlp, dst, mp), ins, "evil"

    def f(d):
        node = nodes_of(d)[0]
        if field == "op_target":
            node["target"] = node["target"].replace(".default", pay + ".default")
        elif field == "op_target_whole":
            node["target"] = pay
        elif field == "node_name":
            node["name"] = pay
        elif field == "value_name":
            return rename_value(d, "permute", pay)
        elif field == "input_name":
            return rename_value(d, "arg", pay)
        elif field == "undefined_ref":
            nodes_of(d)[1]["inputs"][2]["arg"]["as_tensor"]["name"] = pay
        elif field == "stack_trace":
            node["metadata"]["stack_trace"] = pay
        elif field == "torch_fn":
            node["metadata"]["torch_fn"] = pay + ";builtin." + pay
        elif field == "meta_key":
            node["metadata"][pay] = pay
        elif field == "string_arg":
            node["inputs"].append({"name": "hp_extra", "arg": {"as_string": pay}, "kind": 2})
        else:
            raise KeyError(field)
    return edit_model(sl, dst, f), sl_in, pay


VIEW_PAYLOADS = [
    '"><img src="data:," onerror="window.__pwned=1">', "'><img src=x onerror=window.__pwned=1>",
    "<img src=x onerror=window.__pwned=1>", "</script><script>window.__pwned=1</script>",
    "<svg onload=window.__pwned=1>", '" onmouseover="window.__pwned=1" x="', "' onfocus='window.__pwned=1' autofocus='",
    "${window.__pwned=1}", "`+(window.__pwned=1)+`", '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    "<style>body{background:url(https://evil.invalid/x)}</style>", "<!--<script>window.__pwned=1</script>-->",
    '<a href="javascript:window.__pwned=1">x</a>', '<base href="https://evil.invalid/">',
    '<meta http-equiv="refresh" content="0;url=https://evil.invalid/">', "&lt;img src=x onerror=window.__pwned=1&gt;",
    "<svg><animate onbegin=window.__pwned=1 attributeName=x dur=1s>", "\u2028\u2029<img src=x onerror=window.__pwned=1>",
    "<script>window.__pwned=1</script>", "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=1>",
    "<details open ontoggle=window.__pwned=1>", '<object data="javascript:window.__pwned=1">',
    "</title><img src=x onerror=window.__pwned=1>", "</textarea><img src=x onerror=window.__pwned=1>", "<!--", "<script",
    "\\u003cimg src=x onerror=window.__pwned=1\\u003e", "]]><img src=x onerror=window.__pwned=1>",
]
VIEW_FIELDS = ["op_target", "op_target_whole", "node_name", "value_name", "input_name", "stack_trace", "module_path",
               "torch_fn", "meta_key", "weights_fqn", "method_name", "file_name", "assert_msg", "string_arg"]
VIEW_MARKERS = ["onerror=", "onload=", "onmouseover=", "onfocus=", "ontoggle=", "onbegin=", "<img", "<svg", "<iframe",
                "<base", "http-equiv=\"refresh\"", "<object", "<details", "javascript:", "<math", "<style>body", "<a href"]


def page_parts(html):
    """(the JSON data block, the rest of the page)."""
    m = re.search(r'<script id="lathe-model" type="application/json">', html)
    if not m:
        return "", html
    end = html.lower().find("</script", m.end())
    return html[m.end():end], html[:m.end()] + html[end:]


def static_view_problems(html, baseline):
    out = []
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    if not csp:
        out.append("no Content-Security-Policy")
    else:
        pol = csp.group(1)
        for bad in ("unsafe-inline", "unsafe-eval", "script-src *", "data:", "http:", "https:"):
            if bad in pol and bad not in baseline.get("csp", ""):
                out.append(f"the policy allows {bad}")
    low = html.lower()
    for tag in ("<script", "</script"):
        if low.count(tag) != baseline["counts"][tag]:
            out.append(f"{low.count(tag)} '{tag}' in the page, {baseline['counts'][tag]} in a clean one")
    data, rest = page_parts(html)
    for bad in ("</script", "<script", "<!--"):
        if bad in data.lower():
            out.append(f"raw {bad!r} inside the page's JSON data block")
    rl = rest.lower()
    for m in VIEW_MARKERS:
        if rl.count(m.lower()) > baseline["markers"].get(m, 0):
            out.append(f"injected {m!r} outside the data block")
    return out


def view_baseline(P):
    if "view_baseline" in P.programs:
        return P.programs["view_baseline"]
    out = P.path("view_injection", "clean.html")
    subprocess.run([P.lathe, "view", fixture("simple_linear"), "-o", out], capture_output=True)
    html = open(out, encoding="utf-8", errors="replace").read()
    low = html.lower()
    _, rest = page_parts(html)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    b = {"counts": {t: low.count(t) for t in ("<script", "</script")},
         "markers": {m: rest.lower().count(m.lower()) for m in VIEW_MARKERS}, "csp": csp.group(1) if csp else "",
         "html": out}
    P.programs["view_baseline"] = b
    return b


def gen_view_injection(P, rng, n):
    cls = "view_injection"
    base = view_baseline(P)
    for i in range(n):
        field = VIEW_FIELDS[i % len(VIEW_FIELDS)] if i < len(VIEW_FIELDS) else rng.choice(VIEW_FIELDS)
        pay = rng.choice(VIEW_PAYLOADS)
        if field in ("method_name", "file_name") and "/" in pay:
            pay = pay.replace("/", "")
        d = P.path(cls, f"{i:04d}", "x")[:-2]
        os.makedirs(d, exist_ok=True)
        arch, _, _ = inject(P, field, pay, os.path.join(d, "in.pt2"))
        html = os.path.join(d, "view.html")
        diff = rng.random() < 0.3
        argv = [P.lathe, "view", arch, *([arch] if diff else []), "-o", html]

        def extra(c, r, html=html):
            if r.rc != 0 or not os.path.exists(html):
                return []
            page = open(html, encoding="utf-8", errors="replace").read()
            c.page = html
            return [("injection", p) for p in static_view_problems(page, base)]
        P.cli(cls, f"{field} = {pay!r}{' (diff page)' if diff else ''}", argv, "either", key=arch, extra=extra,
              mention=[os.path.basename(arch), "in.pt2", "f"])


TERM_PAYLOADS = ["\x1b[31mRED\x1b[0m", "\x1b]0;pwned\x07", "\x1b]8;;https://evil.invalid/\x1b\\link\x1b]8;;\x1b\\",
                 "\x07", "\x1b[2J\x1b[H", "\x1b[?1049h", "\r\x1b[Kfake", "\x08\x08\x08", "a\u202eexe.txt", "\u2066x\u2069",
                 "\u2067y", "\u2068z", "\u202ax", "\u202by", "\u202cz", "\u202dw", "a\u200fb", "a\u200eb", "c\u061cd",
                 "\u009b31m", "\u0085next", "\x1bc", "\x1b[6n", "\x0b\x0c", "\x1bP+q\x1b\\", "\x1b[20h"]
TERM_FIELDS = ["node_name", "op_target", "op_target_whole", "value_name", "input_name", "undefined_ref", "weights_fqn",
               "weights_path", "method_name", "stack_trace", "module_path", "assert_msg", "symbol", "string_arg",
               "file_name", "meta_key"]
TERM_CMDS = ["inspect", "inspect --graph", "inspect --json", "run", "lower --explain", "transform --explain", "convert",
             "view", "py"]


def gen_terminal_escapes(P, rng, n):
    cls = "terminal_escapes"
    made = {}
    for i in range(n):
        field = rng.choice(TERM_FIELDS)
        pay = rng.choice(TERM_PAYLOADS)
        if (field, pay) not in made:
            d = P.path(cls, f"a{len(made):04d}", "x")[:-2]
            os.makedirs(d, exist_ok=True)
            made[(field, pay)] = inject(P, field, pay, os.path.join(d, "in.pt2"))
        arch, ins, _ = made[(field, pay)]
        cmd = TERM_CMDS[i % len(TERM_CMDS)] if i < 3 * len(TERM_CMDS) else rng.choice(TERM_CMDS)
        out = P.path(cls, "out", f"{i:04d}")
        argv = {"inspect": [P.lathe, "inspect", arch], "inspect --graph": [P.lathe, "inspect", "--graph", arch],
                "inspect --json": [P.lathe, "inspect", "--json", arch], "run": run_argv(P, arch, ins),
                "lower --explain": [P.lathe, "lower", arch, "--explain", "-o", out + ".pt2"],
                "transform --explain": [P.lathe, "transform", arch, "--explain", "-o", out + ".pt2"],
                "convert": [P.lathe, "convert", arch, "-o", out + ".pt2"],
                "view": [P.lathe, "view", arch, "-o", out + ".html"]}.get(cmd)
        desc = f"{field} = {pay!r}: {cmd}"
        if argv is None:
            P.py(cls, desc, py_run(arch, ins), "either", key=arch)
        else:
            P.cli(cls, desc, argv, "either", key=arch, bidi_ok_in_json=(cmd == "inspect --json"))


# ------------------------------------------------------------------ 19. lower with lying metadata


def blames_payload(case, r):
    """A lowering error that blames the delegate payload, not the input's declared metadata."""
    err = r.error or ""
    if "malformed payload" in err and "declare" not in err:
        return [("unclear", f"the error blames the payload, not the input's metadata: {err[:200]}")]
    return []


def gen_lower_lying_metadata(P, rng, n):
    torch = P.torch
    cls = "lower_lying_metadata"
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)).eval()
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU()).eval()
    xl = torch.linspace(-1, 1, 32).reshape(2, 16)
    xc = torch.linspace(-1, 1, 3 * 8 * 8).reshape(1, 3, 8, 8)
    progs = {"linear": (export(P, "lying_linear", None, [xl], module=lin), xl, lin),
             "conv": (export(P, "lying_conv", None, [xc], module=conv), xc, conv)}
    for i in range(n):
        which = rng.choice(list(progs))
        prog, x, mod = progs[which]
        d = model_json(prog)
        tv = graph_of(d)["tensor_values"]
        name = rng.choice(sorted(tv))
        meta = tv[name]
        lie = rng.choice(["sizes", "sizes", "dtype", "strides", "rank"])
        sizes = [s.get("as_int") for s in meta["sizes"]]
        if lie == "sizes" and sizes:
            k = rng.randrange(len(sizes))
            new = list(sizes)
            new[k] = rng.choice([v for v in (1, 2, 3, 5, 7, 16, 64) if v != sizes[k]])
            what = f"{name} declared {new} (is {sizes})"

            def f(dd, name=name, new=new):
                graph_of(dd)["tensor_values"][name]["sizes"] = [{"as_int": v} for v in new]
        elif lie == "rank" and sizes:
            new = sizes + [1] if rng.random() < 0.5 else sizes[:-1]
            what = f"{name} declared rank {len(new)} {new} (is {sizes})"

            def f(dd, name=name, new=new):
                m = graph_of(dd)["tensor_values"][name]
                m["sizes"] = [{"as_int": v} for v in new]
                m["strides"] = [{"as_int": 1} for _ in new]
        elif lie == "dtype":
            dt = rng.choice([5, 6, 4, 11])  # float16, float32->?, int64, bool
            what = f"{name} declared dtype {dt} (is {meta['dtype']})"

            def f(dd, name=name, dt=dt):
                graph_of(dd)["tensor_values"][name]["dtype"] = dt
        else:
            what = f"{name} declared strides reversed"

            def f(dd, name=name):
                m = graph_of(dd)["tensor_values"][name]
                m["strides"] = list(reversed(m["strides"]))
        arch = P.path(cls, f"{i:04d}.pt2")
        edit_model(prog, arch, f)
        with torch.no_grad():
            ref = [mod(x).numpy()]
        xin = save_npy(P.path(cls, f"{i:04d}_x.npy"), x.numpy())
        low = P.path(cls, "out", f"{i:04d}_xnnpack.pt2")
        mention = [os.path.basename(arch), name, os.path.basename(low), "node '"]
        how = rng.choice(["lower", "lower", "backend", "py"])
        desc = f"{which}: {what}"
        if how == "lower":
            steps = [[P.lathe, "lower", arch, "-o", low], run_argv(P, low, [xin])]
            P.cli(cls, desc + ": lower, then run", None, "either", ref=ref, steps=steps, key=arch, mention=mention,
                  extra=blames_payload)
        elif how == "backend":
            P.cli(cls, desc + ": run --backend xnnpack", run_argv(P, arch, [xin], "--backend", "xnnpack"), "either",
                  ref=ref, out=True, key=arch, mention=mention, extra=blames_payload)
        else:
            P.py(cls, desc + ": Program.lower + run",
                 f"p = lathe.load({arch!r})\nq, why = p.lower('xnnpack')\nout = q.run(np.load({xin!r}))\n", "either",
                 ref=ref, key=arch, mention=mention, extra=blames_payload)


# ------------------------------------------------------------------ 20. deflated whitespace in a JSON record


def forge_zip(entries):
    """entries: (name, method, stored bytes, crc, uncompressed size). A plain zip."""
    out = bytearray()
    central = bytearray()
    for name, method, data, crc, usize in entries:
        nb = name.encode()
        off = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), usize, len(nb), 0)
        out += nb + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, len(data), usize,
                               len(nb), 0, 0, 0, 0, 0, off) + nb
    cd = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), cd, 0)
    return bytes(out)


def deflated_padding(prefix, pad, suffix):
    """Raw DEFLATE of prefix + pad spaces + suffix, its CRC-32 and size, built from one
    compressed MiB of spaces repeated (the dictionary is reset between them)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = b" " * (1 << 20)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    assert block == again
    k = pad >> 20
    tail = c.compress(suffix) + c.flush()
    crc = zlib.crc32(prefix)
    for _ in range(k):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(suffix, crc)
    return head + block * k + tail, crc & 0xFFFFFFFF, len(prefix) + (k << 20) + len(suffix)


def gen_json_record_bomb(P, rng, n):
    cls = "json_record_bomb"
    sl = fixture("simple_linear")
    ins, outs = fixture_inputs("simple_linear")
    recs = read_records(sl)
    MiB = 1 << 20
    plans = [(100 * MiB, "model", True), (1024 * MiB, "model", True), (3584 * MiB, "model", True),
             (600 * MiB, "model", True), (1024 * MiB, "model", False), (1024 * MiB, "weights", True),
             (300 * MiB, "both", True), (520 * MiB, "model", True), (2048 * MiB, "weights", False),
             (3584 * MiB, "model", False)]
    for i in range(n):
        pad, which, truthful = plans[i % len(plans)]
        entries = []
        for name, data in recs:
            is_model = name.endswith("models/model.json")
            is_wc = name.endswith("model_weights_config.json")
            if (is_model and which in ("model", "both")) or (is_wc and which in ("weights", "both")):
                text = compact_json(data)
                stored, crc, usize = deflated_padding(text[:1], pad, text[1:])
                entries.append((name, 8, stored, crc, usize if truthful else len(text)))
            else:
                entries.append((name, 0, data, zlib.crc32(data) & 0xFFFFFFFF, len(data)))
        arch = P.path(cls, f"{i:04d}.pt2")
        with open(arch, "wb") as f:
            f.write(forge_zip(entries))
        total = pad * (2 if which == "both" else 1)
        over = pad > 512 * MiB or not truthful
        desc = (f"{which} record(s) inflating to {pad >> 20} MiB of whitespace "
                f"({'declared' if truthful else 'declared as the small original size'}), "
                f"{os.path.getsize(arch) >> 10} KiB file")
        cmd = ["inspect", "run", "py"][i // len(plans) % 3] if i >= len(plans) else "inspect"

        def extra(c, r, total=total):
            if r.maxrss_kb > (1536 << 10):
                return [("wrong", f"peak RSS {r.maxrss_kb >> 10} MiB for {total >> 20} MiB of inflated whitespace")]
            return []
        kw = dict(key=arch, mention=["model.json", "weights_config", "record", os.path.basename(arch)], timeout=90,
                  extra=extra, slow=30)
        expect = "refuse" if over else "either"
        if cmd == "inspect":
            P.cli(cls, desc + ": inspect", [P.lathe, "inspect", arch], expect, **kw)
        elif cmd == "run":
            P.cli(cls, desc + ": run", run_argv(P, arch, ins), expect, ref=outs, **kw)
        else:
            P.py(cls, desc + ": Python load", py_run(arch, ins), expect, ref=outs, **kw)


def compact_json(data):
    return json.dumps(json.loads(data), separators=(",", ":")).encode()


# ------------------------------------------------------------------ 21. binding errors


def binding_snippets(sl, x_in, ref, tmp):
    """(description, code, expect, type_error_ok, needs torch). `x` is the right input."""
    S = f"p = lathe.load({sl!r})\nx = np.load({x_in!r})\n"
    R = f"ref_inline = [np.load({ref!r})]\n"
    out = []

    def add(desc, body, expect="refuse", type_ok=False, torch=False, value=False):
        out.append((desc, S + (R if value else "") + body, expect, type_ok, torch))
    for v in ["2**100", "-2**100", "2**63", "-2**63 - 1", "float('nan')", "1.5", "True", "None", "'x'", "b'abc'",
              "object()", "[[1, 2, 3], [4, 5, 6]]", "(1, 2)", "{}", "1j", "np.int64(5)", "np.float32(1)", "np.array(2**62)",
              "memoryview(b'abcdef')", "bytearray(24)", "range(6)", "Ellipsis", "np.ma.masked_array(x)"]:
        add(f"run({v})", f"out = p.run({v})\n", "refuse" if "masked" not in v else "either")
    for dt in ["np.float64", "np.float16", "object", "np.int32", "np.int64", "np.bool_", "np.uint8", "np.complex64",
               "np.longdouble", "'>f4'", "'S4'", "'U3'", "'datetime64[s]'", "'timedelta64[s]'", "[('a', '<f4')]", "'V4'"]:
        value = dt == "'>f4'"
        add(f"run(x.astype({dt}))", f"out = p.run(x.astype({dt}))\n", "either" if value else "refuse", value=value)
    for shape in ["(3, 2)", "(2, 3, 1)", "(1, 2, 3)", "(6,)", "()", "(0, 3)", "(2, 0)", "(1,) * 32", "(1,) * 64"]:
        add(f"run(array of shape {shape})", f"out = p.run(np.zeros({shape}, np.float32))\n")
    for desc, expr in [("x[:, ::-1] (negative strides)", "x[:, ::-1]"), ("x.T.T", "x.T.T"),
                       ("np.asfortranarray(x)", "np.asfortranarray(x)"), ("broadcast_to (zero strides)", "np.broadcast_to(x[:1], (2, 3))"),
                       ("read-only", "(lambda a: (a.setflags(write=False), a)[1])(x.copy())"),
                       ("misaligned buffer", "np.frombuffer(bytearray(25), np.float32, 6, 1).reshape(2, 3)"),
                       ("every other element", "np.repeat(x, 2, axis=1)[:, ::2]"),
                       ("as_strided overlapping", "np.lib.stride_tricks.as_strided(x, (2, 3), (0, 4))"),
                       ("np.matrix", "np.matrix(x)"), ("a subclass of ndarray", "x.view(type('Sub', (np.ndarray,), {}))")]:
        # the same values as a plain contiguous array, or refused
        body = (f"a = {expr}\nref_inline = list(p.run(np.ascontiguousarray(np.asarray(a), dtype=np.float32)))\n"
                f"out = p.run(a)\n")
        add(f"run({desc})", body, "either")
    add("run(x, x) (too many)", "out = p.run(x, x)\n")
    add("run() (too few)", "out = p.run()\n")
    add("run(x, method=123)", "out = p.run(x, method=123)\n", type_ok=True)
    add("run(x, method='')", "out = p.run(x, method='')\n")
    add("run(x, method='nope')", "out = p.run(x, method='nope')\n")
    add("run(x, method='model' * 10000)", "out = p.run(x, method='model' * 10000)\n")
    add("run(x, method='\\udcff')", "out = p.run(x, method='\\udcff')\n")
    add("load(123)", "lathe.load(123)\n", type_ok=True)
    add("load(None)", "lathe.load(None)\n", type_ok=True)
    add("load(b'')", "lathe.load(b'')\n")
    add("load(empty end record)", "lathe.load(b'PK\\x05\\x06' + bytes(18))\n")
    add("load(bytes of 1 MB zeros)", "lathe.load(bytes(1 << 20))\n")
    add("load(a non-contiguous memoryview)", f"lathe.load(memoryview(open({sl!r}, 'rb').read() * 2)[::2])\n")
    add("load(a 2-d memoryview)", f"b = open({sl!r}, 'rb').read(); lathe.load(memoryview(b[:len(b)//2*2]).cast('B', (2, len(b)//2)))\n",
        "either")
    add("load(np.uint16 array of the file)", f"b = open({sl!r}, 'rb').read(); lathe.load(np.frombuffer(b[:len(b)//2*2], np.uint16))\n",
        "either", type_ok=True)
    add("load('/nonexistent')", "lathe.load('/nonexistent/x.pt2')\n")
    add("load('/')", "lathe.load('/')\n")
    add("load('/dev/null')", "lathe.load('/dev/null')\n")
    add("load('/dev/zero')", "lathe.load('/dev/zero')\n")
    add("load(a FIFO)", f"import os\nfifo = {os.path.join(tmp, 'fifo')!r}\n"
        "os.path.exists(fifo) or os.mkfifo(fifo)\nlathe.load(fifo)\n")
    add("load(a path of 100000 characters)", "lathe.load('a' * 100000)\n")
    add("load(pathlib.Path)", f"import pathlib\nout = lathe.load(pathlib.Path({sl!r})).run(x)\n", "either", value=True)
    add("load(os.fsencode(path))", f"out = lathe.load(os.fsencode({sl!r})).run(x)\n", "either")
    add("save(123)", "p.save(123)\n", type_ok=True)
    add("save('/nonexistent/dir/x.pt2')", "p.save('/nonexistent/dir/x.pt2')\n")
    add("save('/dev/null')", "p.save('/dev/null')\n")
    add("save(a directory)", f"p.save({tmp!r})\n")
    add("save(format='9.9')", f"p.save({os.path.join(tmp, 'o.pt2')!r}, format='9.9')\n")
    add("save(format=None)", f"p.save({os.path.join(tmp, 'o.pt2')!r}, format=None)\n", type_ok=True)
    add("to_bytes(format='')", "p.to_bytes(format='')\n")
    add("transform(passes=5)", "p.transform(passes=5)\n", type_ok=True)
    add("transform(passes=['nope'])", "p.transform(passes=['nope'])\n")
    add("transform(passes='nope')", "p.transform(passes='nope')\n")
    add("transform(passes=[None])", "p.transform(passes=[None])\n", type_ok=True)
    add("transform(method='nope')", "p.transform(method='nope')\n")
    add("transform(keep=[5])", "p.transform(keep=[5])\n", type_ok=True)
    add("a Pass whose run raises ValueError", "class B(lathe.Pass):\n    name = 'boom'\n    def run(self, rw): raise ValueError('x')\n"
        "p.transform([B()])\n")
    add("a Pass whose run returns a string", "class B(lathe.Pass):\n    name = 'str'\n    def run(self, rw): return 'yes'\n"
        "p.transform([B()])\n", "either")
    add("a Pass without a name", "class B(lathe.Pass):\n    def run(self, rw): return False\np.transform([B()])\n")
    add("a Pass that erases a node the graph needs", "class B(lathe.Pass):\n    name = 'eraser'\n"
        "    def run(self, rw):\n        rw.erase(rw.graph.nodes[0]); return True\np.transform([B()])\n")
    add("a Pass that creates a call to an unknown op", "class B(lathe.Pass):\n    name = 'unknown'\n"
        "    def run(self, rw):\n        rw.create_call('aten.nope.default', [rw.graph.inputs[-1]]); return True\np.transform([B()])\n")
    add("a Pass that keeps a Rewriter and uses it later", "keep = []\nclass B(lathe.Pass):\n    name = 'keeper'\n"
        "    def run(self, rw):\n        keep.append(rw); return False\np.transform([B()])\nkeep[0].erase(keep[0].graph.nodes[0])\n")
    add("lower('nope')", "p.lower('nope')\n")
    add("lower(123)", "p.lower(123)\n", type_ok=True)
    add("lower('xnnpack', method='nope')", "p.lower('xnnpack', method='nope')\n")
    add("graph('nope')", "p.graph('nope')\n")
    add("graph(5)", "p.graph(5)\n", type_ok=True)
    add("reset_state('nope')", "p.reset_state('nope')\n")
    add("register_backend(5)", "lathe.register_backend(5)\n", type_ok=True)
    add("register_backend(a Backend named '')", "class B(lathe.Backend):\n    name = ''\n"
        "    def support(self, n): return None\n    def preprocess(self, s): return b''\nlathe.register_backend(B())\n")
    add("register_backend(a second 'xnnpack')", "class B(lathe.Backend):\n    name = 'xnnpack'\n"
        "    def support(self, n): return None\n    def preprocess(self, s): return b''\nlathe.register_backend(B())\n")
    add("a Backend whose preprocess returns a str", "class B(lathe.Backend):\n    name = 'hp_str'\n"
        "    def support(self, n): return None\n    def preprocess(self, s): return 'text'\nlathe.register_backend(B())\n"
        "q, why = p.lower('hp_str')\nout = q.run(x)\n")
    add("a Backend whose support raises", "class B(lathe.Backend):\n    name = 'hp_raise'\n"
        "    def support(self, n): raise KeyError('no')\n    def preprocess(self, s): return b''\nlathe.register_backend(B())\n"
        "p.lower('hp_raise')\n", "either")
    add("Program() constructed directly", "lathe.Program()\n", "either", type_ok=True)
    add("Graph node kept after close()", "g = p.graph(); nd = g.nodes[0]; p.close()\nnd.target, nd.outputs[0].shape\n", "either")
    add("inspect() after close()", "p.close(); p.inspect()\n")
    add("run after close()", "p.close(); out = p.run(x)\n")
    for t in ["torch.zeros(2, 3).to_sparse()", "torch.zeros(2, 3, device='meta')", "torch.zeros(2, 3, dtype=torch.bfloat16)",
              "torch.zeros(2, 3, dtype=torch.uint16)", "torch.quantize_per_tensor(torch.zeros(2, 3), 0.1, 0, torch.qint8)",
              "torch.nested.nested_tensor([torch.zeros(3), torch.zeros(3)])", "torch.zeros(2, 3, dtype=torch.float8_e4m3fn)",
              "torch.zeros(2, 3).to_mkldnn()"]:
        add(f"run({t})", f"out = p.run({t})\n", torch=True)
    for t in ["torch.from_numpy(x).requires_grad_()", "torch.nn.Parameter(torch.from_numpy(x))",
              "torch.from_numpy(x).t().contiguous().t()", "torch.from_numpy(x.copy()).expand(2, 3)"]:
        add(f"run({t})", f"out = p.run({t})\n", "either", torch=True, value=True)
    return out


def gen_binding_errors(P, rng, n):
    cls = "binding_errors"
    sl = fixture("simple_linear")
    ins, outs = fixture_inputs("simple_linear")
    ref = P.ref_files_plain(cls, 9999, outs)[0]
    tmp = P.path(cls, "tmp", "x")[:-2]
    snippets = binding_snippets(sl, ins[0], ref, tmp)
    fifo = os.path.join(tmp, "fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    for i in range(n):
        if i == len(snippets):  # the command line's counterpart of load(a FIFO)
            P.cli(cls, "lathe inspect FIFO", [P.lathe, "inspect", fifo], "refuse", key="cli fifo", mention=["fifo"])
            continue
        desc, code, expect, type_ok, torch = snippets[i] if i < len(snippets) else rng.choice(snippets)
        P.py(cls, desc, code, expect, torch=torch, type_error_ok=type_ok, key=desc)


# ------------------------------------------------------------------ 22. NUL in names


def gen_nul_in_names(P, rng, n):
    cls = "nul_in_names"
    sl = fixture("simple_linear")
    ins, outs = fixture_inputs("simple_linear")
    tmp = P.path(cls, "tmp", "x")[:-2]
    S = f"p = lathe.load({sl!r})\nx = np.load({ins[0]!r})\n"
    snippets = [
        ("load(path + '\\0x')", f"lathe.load({sl!r} + '\\0x')\n"),
        ("load(Path(path + '\\0'))", f"import pathlib\nlathe.load(pathlib.Path({sl!r} + '\\0'))\n"),
        ("load('\\0')", "lathe.load('\\0')\n"),
        ("load(path.encode() + b'\\0x') (bytes are archive data)", f"lathe.load({sl!r}.encode() + b'\\0x')\n"),
        ("save(out + '\\0x')", S + f"out_path = {os.path.join(tmp, 'o1.pt2')!r}\ntry:\n    p.save(out_path + '\\0x')\n"
         "finally:\n    assert not os.path.exists(out_path), 'wrote the truncated path'\n"),
        ("save(Path(out + '\\0'))", S + f"import pathlib\nout_path = {os.path.join(tmp, 'o2.pt2')!r}\ntry:\n"
         "    p.save(pathlib.Path(out_path + '\\0'))\nfinally:\n    assert not os.path.exists(out_path), 'wrote the truncated path'\n"),
        ("save(out, format='2.9\\0')", S + f"p.save({os.path.join(tmp, 'o3.pt2')!r}, format='2.9\\0')\n"),
        ("to_bytes(format='2.9\\0x')", S + "p.to_bytes(format='2.9\\0x')\n"),
        ("run(method='model\\0')", S + "out = p.run(x, method='model\\0')\n"),
        ("run(method='\\0')", S + "out = p.run(x, method='\\0')\n"),
        ("graph('model\\0x')", S + "p.graph('model\\0x')\n"),
        ("transform(method='model\\0')", S + "p.transform(method='model\\0')\n"),
        ("transform(passes=['default\\0x'])", S + "p.transform(passes=['default\\0x'])\n"),
        ("transform(passes='default\\0')", S + "p.transform(passes='default\\0')\n"),
        ("lower('xnnpack\\0')", S + "p.lower('xnnpack\\0')\n"),
        ("lower('xnnpack', method='model\\0')", S + "p.lower('xnnpack', method='model\\0')\n"),
        ("reset_state('model\\0')", S + "p.reset_state('model\\0')\n"),
        ("register_backend(name 'hp\\0b')", "class B(lathe.Backend):\n    name = 'hp\\0b'\n"
         "    def support(self, n): return None\n    def preprocess(self, s): return b''\nlathe.register_backend(B())\n"),
        ("a Pass named 'p\\0q'", S + "class B(lathe.Pass):\n    name = 'p\\0q'\n    def run(self, rw): return False\n"
         "p.transform([B()])\n"),
    ]
    # Names inside the archive holding NUL (JSON \u0000): shown, escaped, or refused; never cut short.
    archives = []
    for field in ("node_name", "value_name", "input_name", "op_target", "weights_fqn", "stack_trace"):
        arch, a_ins, _ = inject(P, field, "a\u0000b", P.path(cls, f"{field}.pt2"))
        archives.append((field, arch, a_ins))
    for i in range(n):
        if i < len(snippets) or rng.random() < 0.5:
            desc, code = snippets[i % len(snippets)]
            P.py(cls, desc, code, "refuse", key=desc)
        else:
            field, arch, a_ins = rng.choice(archives)
            cmd = rng.choice(["inspect", "inspect --graph", "run", "py", "view"])
            desc = f"{field} holding NUL (\\u0000): {cmd}"
            if cmd == "py":
                P.py(cls, desc, py_run(arch, a_ins), "either", key=desc)
            elif cmd == "run":
                P.cli(cls, desc, run_argv(P, arch, a_ins), "either", key=desc)
            elif cmd == "view":
                P.cli(cls, desc, [P.lathe, "view", arch, "-o", P.path(cls, "out", f"{i:04d}.html")], "either", key=desc)
            else:
                P.cli(cls, desc, [P.lathe, *cmd.split(), arch], "either", key=desc)


# ------------------------------------------------------------------ 23. index errors

INDEX_BAD = {8: [-9, 8, 9, -10, 16, 2**31, -2**31 - 1, 2**32, -2**32, 2**62, I64_MAX, I64_MIN, I64_MIN + 1, -2**62],
             4: [-5, 4, 5, -8, 2**31, -2**31, 2**62, I64_MAX, I64_MIN, I64_MIN + 1]}


def gen_index_errors(P, rng, n):
    torch = P.torch
    cls = "index_errors"
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    w = torch.arange(32, dtype=torch.float32).reshape(8, 4)
    ops = {
        "index_select": (lambda t, i: (torch.index_select(t, 1, i),), lambda i: torch.index_select(x, 1, i), 8, (4,), x),
        "gather": (lambda t, i: (torch.gather(t, 1, i),), lambda i: torch.gather(x, 1, i), 8, (4, 3), x),
        "embedding": (lambda t, i: (torch.nn.functional.embedding(i, t),), lambda i: torch.nn.functional.embedding(i, w),
                      8, (5,), w),
        "index": (lambda t, i: (t[i],), lambda i: x[i], 4, (5,), x),
        "scatter": (lambda t, i: (torch.scatter(t, 1, i, torch.ones(4, 3)),),
                    lambda i: torch.scatter(x, 1, i, torch.ones(4, 3)), 8, (4, 3), x),
        "index_add": (lambda t, i: (torch.index_add(t, 1, i, torch.ones(4, 4)),),
                      lambda i: torch.index_add(x, 1, i, torch.ones(4, 4)), 8, (4,), x),
        "select": (None, None, 8, None, x),
    }
    progs = {}
    sel = export(P, "select_int", lambda t: (t.select(1, 3),), [x])
    for name, (f, _, size, shape, data) in ops.items():
        if f is not None:
            progs[name] = export(P, f"idx_{name}", f, [data, torch.zeros(shape, dtype=torch.int64)])
    xin = save_npy(P.path(cls, "x.npy"), x.numpy())
    win = save_npy(P.path(cls, "w.npy"), w.numpy())
    for i in range(n):
        name = rng.choice(list(ops))
        f, eager, size, shape, data = ops[name]
        bad = [v for v in INDEX_BAD[size]]
        if name == "select":
            v = rng.choice(bad + [0, 7, -1, -8])
            arch = P.path(cls, f"{i:04d}.pt2")
            edit_model(sel, arch, lambda d, v=v: set_int_arg(find_node(d, "select"), "index", v))
            try:
                ref, expect = [x.select(1, v).numpy().copy()], "value"
            except (IndexError, RuntimeError):
                ref, expect = None, "refuse"
            add_run(P, cls, f"select(x[4, 8], 1, {v})", arch, [xin], expect, ref, runner=choose_runner(rng, 0.3),
                    mention=["select"], must_contain=[str(v)] if expect == "refuse" else [])
            continue
        dtype = np.int64 if rng.random() < 0.85 else np.int32
        numel = int(np.prod(shape))
        idx = np.array([rng.randrange(size) for _ in range(numel)], dtype=np.int64)
        nbad = rng.choice([0, 1, 1, 1, 2])
        picks = []
        for _ in range(nbad):
            v = rng.choice(bad)
            if dtype == np.int32 and not -2**31 <= v < 2**31:
                v = -9 if size == 8 else -5
            k = rng.randrange(numel)
            idx[k] = v
            picks.append(v)
        if rng.random() < 0.2 and name in ("index",):
            idx[rng.randrange(numel)] = -1  # a valid negative index
        idx = idx.reshape(shape).astype(dtype)
        try:
            ref, expect = [eager(torch.from_numpy(idx)).numpy().copy()], "value"
        except (IndexError, RuntimeError):
            ref, expect = None, "refuse"
        arch = progs[name]
        if dtype == np.int32:
            arch = P.path(cls, f"{i:04d}_i32.pt2")
            edit_model(progs[name], arch, lambda d: graph_of(d)["tensor_values"]["i"].__setitem__("dtype", 3)
                       if "i" in graph_of(d)["tensor_values"] else int32_index(d))
        ins = [save_npy(P.path(cls, f"{i:04d}_data.npy"), data.numpy()),
               save_npy(P.path(cls, f"{i:04d}_idx.npy"), idx)]
        shown = [str(v) for v in picks if v not in range(-size, size) or name != "index"]
        add_run(P, cls, f"{name}(size {size}, indices {idx.reshape(-1).tolist()} {np.dtype(dtype).name})", arch, ins,
                expect, ref, runner=choose_runner(rng, 0.3), mention=[name, "index", "embedding", "gather", "scatter"],
                must_contain=shown if expect == "refuse" else [])


def int32_index(d):
    """The index placeholder (the second user input) declared int32."""
    specs = d["graph_module"]["signature"]["input_specs"]
    names = [s["user_input"]["arg"]["as_tensor"]["name"] for s in specs if "user_input" in s]
    graph_of(d)["tensor_values"][names[1]]["dtype"] = 4


# ------------------------------------------------------------------ 24. run vs verify


def gen_run_vs_verify(P, rng, n):
    cls = "run_vs_verify"
    sl = fixture("simple_linear")
    ins, outs = fixture_inputs("simple_linear")
    sym = fixture("constructs/symbolic")
    sym_x = save_npy(P.path(cls, "sym_x.npy"), np.ones((3, 4), np.float32))

    def ph(sizes=None, dtype=None, strides=None, name="p_linear_weight"):
        def f(d):
            m = graph_of(d)["tensor_values"][name]
            if sizes is not None:
                m["sizes"] = [{"as_int": v} for v in sizes]
                m["strides"] = [{"as_int": 1} for _ in sizes] if strides is None else m["strides"]
            if dtype is not None:
                m["dtype"] = dtype
            if strides is not None:
                m["strides"] = [{"as_int": v} for v in strides]
        return f

    def wc(sizes=None, dtype=None):
        def f(data):
            d = json.loads(data)
            m = d["config"]["linear.weight"]["tensor_meta"]
            if sizes is not None:
                m["sizes"] = [{"as_int": v} for v in sizes]
            if dtype is not None:
                m["dtype"] = dtype
            return dumps(d).encode()
        return f
    edits = {  # name: (base, model.json edit, weights config edit, expect)
        "weight placeholder [-3, 3]": (sl, ph([-3, 3]), None, "refuse"),
        "weight placeholder [3, -3]": (sl, ph([3, -3]), None, "refuse"),
        "weight placeholder [3, 4] for a [3, 3] weight": (sl, ph([3, 4]), None, "refuse"),
        "weight placeholder [9] for a [3, 3] weight": (sl, ph([9]), None, "refuse"),
        "weight placeholder [3, 3, 1]": (sl, ph([3, 3, 1]), None, "refuse"),
        "weight placeholder [1, 3]": (sl, ph([1, 3]), None, "refuse"),
        "weight placeholder int64": (sl, ph(dtype=5), None, "refuse"),
        "weight placeholder float16": (sl, ph(dtype=6), None, "refuse"),
        "bias placeholder [4]": (sl, ph([4], name="p_linear_bias"), None, "refuse"),
        "bias placeholder [-1]": (sl, ph([-1], name="p_linear_bias"), None, "refuse"),
        "weight placeholder [2^62, 3]": (sl, ph([2**62, 3]), None, "refuse"),
        "weight placeholder strides [1, 3]": (sl, ph(strides=[1, 3]), None, "either"),
        "weights config [3, 4] (36-byte record)": (sl, None, wc([3, 4]), "refuse"),
        "weights config [-3, 3]": (sl, None, wc([-3, 3]), "refuse"),
        "weights config float16": (sl, None, wc(dtype=6), "refuse"),
        "weights config and placeholder both [1, 9]": (sl, ph([1, 9]), wc([1, 9]), "refuse"),
        "user input placeholder [-2, 3]": (sl, ph([-2, 3], name="arg"), None, "refuse"),
        "user input placeholder [2, -3]": (sl, ph([2, -3], name="arg"), None, "refuse"),
        "output declared [-2, 3]": (sl, ph([-2, 3], name="addmm"), None, "either"),
        "range_constraints s77 [64, 1]": (sym, lambda d: d["range_constraints"].__setitem__("s77", {"min_val": 64, "max_val": 1}), None, "refuse"),
        "range_constraints s77 [3, 2]": (sym, lambda d: d["range_constraints"].__setitem__("s77", {"min_val": 3, "max_val": 2}), None, "refuse"),
        "range_constraints s77 [-64, -1] (no size fits)": (sym, lambda d: d["range_constraints"].__setitem__("s77", {"min_val": -64, "max_val": -1}), None, "either"),
    }
    made = {}
    for i in range(n):
        name = rng.choice(list(edits))
        base, mfn, wfn, expect = edits[name]
        if name not in made:
            arch = P.path(cls, f"{len(made):04d}.pt2")
            e = {}
            if mfn is not None:
                def mj(data, mfn=mfn):
                    d = json.loads(data)
                    r = mfn(d)
                    return dumps(d if r is None else r).encode()
                e["models/model.json"] = mj
            if wfn is not None:
                e["data/weights/model_weights_config.json"] = wfn
            made[name] = edit_archive(base, arch, e)
        arch = made[name]
        a_ins, ref = ([sym_x], None) if base == sym else (ins, outs)
        cmd = rng.choices(["run", "py", "inspect", "convert", "transform", "view"], [4, 2, 1, 1, 1, 1])[0]
        desc = f"{name}: {cmd}"
        kw = dict(key=arch, mention=[os.path.basename(arch), "input 'x'", "s77", "node '"])
        if cmd == "run":
            P.cli(cls, desc, run_argv(P, arch, a_ins), expect, ref=ref, **kw)
        elif cmd == "py":
            P.py(cls, desc, py_run(arch, a_ins), expect, ref=ref, **kw)
        elif cmd in ("convert", "transform"):
            P.cli(cls, desc, [P.lathe, cmd, arch, "-o", P.path(cls, "out", f"{i:04d}.pt2")], expect, **kw)
        elif cmd == "view":
            P.cli(cls, desc, [P.lathe, "view", arch, "-o", P.path(cls, "out", f"{i:04d}.html")], expect, **kw)
        else:
            P.cli(cls, desc, [P.lathe, "inspect", arch], expect, **kw)


# ------------------------------------------------------------------ 25. lenient JSON


def gen_lenient_json(P, rng, n):
    cls = "lenient_json"
    sl = fixture("simple_linear")
    ins, outs = fixture_inputs("simple_linear")
    text = compact_json(dict(read_records(sl))[find_record(read_records(sl), "models/model.json")]).decode()
    trailing = {" ": "value", "\n": "value", "\t\r\n ": "value", "x": "refuse", "{}": "refuse", "[]": "refuse", "0": "refuse",
                "null": "refuse", "\x00": "refuse", "\x00" * 64: "refuse", ",": "refuse", "]": "refuse", "}": "refuse",
                "\ufeff": "refuse", "/* c */": "refuse", "// c": "refuse", '{"a":1}': "refuse", text: "refuse",
                "\n\x1a": "refuse"}
    leading = {"\ufeff": "either", " \n\t": "value", "\x00": "refuse", "// c\n": "refuse", "x": "refuse"}
    values = {  # placed under an unknown key: (JSON text, expect)
        "-0": "value", "1E+2": "value", "1e-5": "value", "0.5": "value", '""': "value", "[]": "value", "{}": "value",
        "123456789012345678901234567890": "either", "1e999": "either", "-1e999": "either", '"\\ud800"': "either",
        '"\\udc00\\ud800"': "either", "NaN": "refuse", "Infinity": "refuse", "-Infinity": "refuse", "01": "refuse",
        "1.": "refuse", ".5": "refuse", "+1": "refuse", "0x10": "refuse", "1e": "refuse", "-": "refuse", "--1": "refuse",
        "1.e5": "refuse", '"\x01"': "refuse", '"\x1f"': "refuse", '"\\x41"': "refuse", '"\\u12"': "refuse",
        "'x'": "refuse", '"unterminated': "refuse", "[1,]": "refuse", '{"a":1,}': "refuse", "[1 2]": "refuse",
        "{a:1}": "refuse", '{"a" 1}': "refuse", "True": "refuse", "None": "refuse", "nul": "refuse", "tru": "refuse",
        "[": "refuse", '{"":1}': "value", '"\\/"': "value", '"\\u0000"': "either", "\x0c1": "refuse", "1\x0b": "refuse",
        '"\\U00000041"': "refuse", "0.0e": "refuse", "2.": "refuse", "[,1]": "refuse",
    }
    invalid_utf8 = {b'"\xff"': "either", b'"\xc0\xaf"': "either", b'"\xed\xa0\x80"': "either", b'"\xf4\x90\x80\x80"': "either",
                    b'"\xe2\x82"': "either"}
    known = {  # a known field with an odd value: (path fn, value text, expect)
        "as_int 3.0 for a size": ('"sizes":[{"as_int":2},{"as_int":3}]', '"sizes":[{"as_int":2},{"as_int":3.0}]', "either"),
        "as_int 3e0 for a size": ('"sizes":[{"as_int":2},{"as_int":3}]', '"sizes":[{"as_int":2},{"as_int":3e0}]', "either"),
        "as_int \"3\" for a size": ('"sizes":[{"as_int":2},{"as_int":3}]', '"sizes":[{"as_int":2},{"as_int":"3"}]', "refuse"),
        "as_int 2^64 for a size": ('"sizes":[{"as_int":2},{"as_int":3}]', '"sizes":[{"as_int":2},{"as_int":18446744073709551619}]', "refuse"),
        "as_int -0 for an offset": ('"storage_offset":{"as_int":0}', '"storage_offset":{"as_int":-0}', "either"),
        "dtype 7.0": ('"dtype":7', '"dtype":7.0', "either"),
        "dtype 7.5": ('"dtype":7', '"dtype":7.5', "refuse"),
        "dtype true": ('"dtype":7', '"dtype":true', "refuse"),
        "kind 1e0": ('"kind":1', '"kind":1e0', "either"),
    }
    places = [((), "hp"), (("graph_module",), "hp"), (("graph_module", "graph", "nodes", 0, "metadata"), "hp"),
              (("graph_module", "graph", "tensor_values", "arg"), "hp"), (("graph_module", "signature"), "hp")]
    made = {}

    def archive(key, data):
        if key not in made:
            made[key] = edit_archive(sl, P.path(cls, f"{len(made):04d}.pt2"), {"models/model.json": lambda _: data})
        return made[key]

    def put(path, key, raw):
        d = json.loads(text)
        o = d
        for p in path:
            o = o[p]
        o[key] = Raw("@@HP@@")
        t = dumps(d).encode()
        return t.replace(b'"@@HP@@"', raw).replace(b"@@HP@@", raw)
    for i in range(n):
        kind = rng.choices(["trailing", "leading", "value", "utf8", "known", "nesting"], [3, 1, 4, 1, 1, 3])[0]
        if kind == "trailing":
            t = rng.choice(list(trailing))
            expect = trailing[t]
            data, what = (text + t).encode("utf-8"), f"trailing {t[:20]!r}{'...' if len(t) > 20 else ''}"
        elif kind == "leading":
            t = rng.choice(list(leading))
            expect = leading[t]
            data, what = (t + text).encode("utf-8"), f"leading {t!r}"
        elif kind == "value":
            v = rng.choice(list(values))
            expect = values[v]
            path, key = rng.choice(places)
            data, what = put(path, key, v.encode("utf-8", "surrogatepass")), f"{v!r} under an unknown key at ${'.'.join(map(str, path))}"
        elif kind == "utf8":
            v = rng.choice(list(invalid_utf8))
            expect = invalid_utf8[v]
            path, key = rng.choice(places)
            data, what = put(path, key, v), f"invalid UTF-8 {v!r} under an unknown key"
        elif kind == "known":
            name = rng.choice(list(known))
            old, new, expect = known[name]
            if old not in text:
                continue
            data, what = text.replace(old, new, 1).encode(), name
        else:
            path, key = rng.choice(places)
            # The root object is level 1; the object at path is level len(path) + 1; the value adds its own.
            base = len(path) + 1
            total = rng.choice([1000, 1020, 1022, 1023, 1024, 1024, 1025, 1025, 1026, 1030, 2000, 100000])
            levels = total - base
            style = rng.choice(["arrays", "objects", "mixed"])
            if style == "arrays":
                raw = "[" * levels + "]" * levels
            elif style == "objects":
                raw = '{"a":' * levels + "1" + "}" * levels
            else:
                raw = "".join("[" if k % 2 else '{"a":' for k in range(levels)) + "1" + "".join(
                    "]" if k % 2 else "}" for k in reversed(range(levels)))
            data = put(path, key, raw.encode())
            expect = "value" if total <= 1024 else "refuse"
            what = f"{total} levels of nesting ({style}) under an unknown key at ${'.'.join(map(str, path))}"
        arch = archive(what, data)
        cmd = rng.choices(["inspect", "run", "py"], [3, 1, 1])[0]
        kw = dict(key=arch, mention=[os.path.basename(arch), "model.json"])
        if cmd == "inspect":
            P.cli(cls, what + ": inspect", [P.lathe, "inspect", arch], expect, **kw)
        elif cmd == "run":
            P.cli(cls, what + ": run", run_argv(P, arch, ins), expect, ref=outs, **kw)
        else:
            P.py(cls, what + ": Python load + run", py_run(arch, ins), expect, ref=outs, **kw)


# ------------------------------------------------------------------ 26. .npy headers

NPY_SHAPES = ["(2, 3)", "(2,3)", "( 2 , 3 )", "(2, 3,)", "(0x2, 3)", "(2.0, 3)", "(2, 3.0)", "(+2, 3)", "(-2, 3)",
              "(2, -3)", "(02, 3)", "(True, 3)", "[2, 3]", "(6,)", "(3, 2)", "(1, 2, 3)", "(2, 3, 1)", "()", "(2**1, 3)",
              "(9223372036854775807, 3)", "(9223372036854775808, 3)", "(4611686018427387904, 4)", "(1e0, 3)",
              "(None, 3)", "('2', 3)", "(2 3)", "(2, 3", "2, 3", "(2,, 3)", "(0b10, 3)", "(2_0, 3)", "(2j, 3)",
              "(3037000500, 3037000500)", "(2, 3) ", "(\t2,\n3)"]
NPY_FORTRAN = ["False", "True", "'yes'", "1", "0", "None", "'False'", "false", "FALSE", "0.0", "[]"]
NPY_DESCR = ["'<f4'", "'|f4'", "'=f4'", "'>f4'", "'f4'", "'<f8'", "'<i4'", "'<f2'", "'|u1'", "'float32'", "'<c8'", "'|O'",
             "'<U3'", "''", "'x'", "[('a', '<f4')]", "'<f4 '", "\"<f4\"", "'<F4'", "'<f4'+''", "b'<f4'", "'f'", "'<f'",
             "'d'", "'<V4'"]


def npy_bytes(header, data, version=(1, 0), hlen_delta=0, magic=b"\x93NUMPY", pad=True, terminator="\n"):
    h = header
    if pad:
        total = len(magic) + 2 + (2 if version[0] == 1 else 4) + len(h.encode("utf-8")) + len(terminator)
        h = h + " " * ((64 - total % 64) % 64)
    h = (h + terminator).encode("utf-8")
    n = len(h) + hlen_delta
    ln = struct.pack("<H", n & 0xFFFF) if version[0] == 1 else struct.pack("<I", n & 0xFFFFFFFF)
    return magic + bytes(version) + ln + h + data


def gen_npy_headers(P, rng, n):
    torch = P.torch
    cls = "npy_headers"
    sl = fixture("simple_linear")
    mod = torch.export.load(sl).module()
    x = np.load(fixture_inputs("simple_linear")[0][0])
    data = x.astype("<f4").tobytes()
    for i in range(n):
        shape, fortran, descr = "(2, 3)", "False", "'<f4'"
        r = rng.random()
        kind = rng.choices(["shape", "fortran", "descr", "dict", "framing", "data", "combo"], [4, 2, 3, 3, 2, 1, 2])[0]
        extra_pairs, version, hlen_delta, magic, pad, term, body = [], (1, 0), 0, b"\x93NUMPY", True, "\n", data
        if kind in ("shape", "combo"):
            shape = rng.choice(NPY_SHAPES)
        if kind in ("fortran", "combo"):
            fortran = rng.choice(NPY_FORTRAN)
        if kind in ("descr", "combo"):
            descr = rng.choice(NPY_DESCR)
        pairs = [("'descr'", descr), ("'fortran_order'", fortran), ("'shape'", shape)]
        what = []
        if kind == "dict":
            op = rng.choice(["dup_descr", "dup_shape", "dup_fortran", "extra_key", "missing_key", "order", "double_quotes",
                             "trailing_comma", "no_braces", "expression", "comment", "set", "nested_dict", "bytes_keys"])
            what.append(op)
            if op == "dup_descr":
                other = rng.choice(["'>f4'", "'<i4'", "'<f8'"])
                pairs = pairs + [("'descr'", other)] if rng.random() < 0.5 else [("'descr'", other)] + pairs
            elif op == "dup_shape":
                pairs = pairs + [("'shape'", rng.choice(["(3, 2)", "(6,)", "(2, 3)"]))]
            elif op == "dup_fortran":
                pairs = pairs + [("'fortran_order'", "True")]
            elif op == "extra_key":
                pairs = pairs + [("'extra'", "1")]
            elif op == "missing_key":
                pairs.pop(rng.randrange(3))
            elif op == "order":
                rng.shuffle(pairs)
            elif op == "double_quotes":
                pairs = [(k.replace("'", '"'), v) for k, v in pairs]
            elif op == "bytes_keys":
                pairs = [("b" + k, v) for k, v in pairs]
        header = "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + ", }"
        if kind == "dict":
            op = what[-1]
            if op == "trailing_comma":
                header = header[:-3] + ",,}"
            elif op == "no_braces":
                header = header[1:-1]
            elif op == "expression":
                header = header.replace("'<f4'", "'<f' + '4'")
            elif op == "comment":
                header = header[:-1] + "# c\n}"
            elif op == "set":
                header = "{'descr', 'fortran_order', 'shape'}"
            elif op == "nested_dict":
                header = "{'a': " + header + "}"
        if kind == "framing":
            op = rng.choice(["hlen_plus", "hlen_minus", "v2", "v3", "v9", "v0", "magic", "no_pad", "no_newline",
                             "nul_pad", "hlen_huge"])
            what.append(op)
            if op == "hlen_plus":
                hlen_delta = rng.choice([1, 4, 16])
            elif op == "hlen_minus":
                hlen_delta = -rng.choice([1, 2, 16])
            elif op == "hlen_huge":
                hlen_delta = 60000
            elif op == "v2":
                version = (2, 0)
            elif op == "v3":
                version = (3, 0)
            elif op == "v9":
                version = (9, 9)
            elif op == "v0":
                version = (0, 1)
            elif op == "magic":
                magic = b"\x93NUMPZ"
            elif op == "no_pad":
                pad = False
            elif op == "no_newline":
                term = ""
            elif op == "nul_pad":
                term = "\x00"
        if kind == "data":
            op = rng.choice(["short1", "short4", "long1", "long8", "empty", "double"])
            what.append(op)
            body = {"short1": data[:-1], "short4": data[:-4], "long1": data + b"\0", "long8": data + b"\0" * 8,
                    "empty": b"", "double": data * 2}[op]
        blob = npy_bytes(header, body, version, hlen_delta, magic, pad, term)
        path = P.path(cls, f"{i:04d}.npy")
        with open(path, "wb") as f:
            f.write(blob)
        try:
            arr = np.load(io.BytesIO(blob), allow_pickle=False)
            numpy_reads = True
        except Exception:  # noqa: BLE001 - numpy refuses
            numpy_reads = False
        if not numpy_reads:
            expect, ref, note = "refuse", None, "numpy refuses"
        elif arr.dtype.kind == "f" and arr.dtype.itemsize == 4 and arr.shape == (2, 3):
            with torch.no_grad():
                ref = [mod(torch.from_numpy(arr.astype(np.float32)))]
            ref = [np.asarray(ref[0][0] if isinstance(ref[0], (tuple, list)) else ref[0])]
            expect, note = "either", f"numpy reads {arr.dtype.str}{list(arr.shape)}"
        else:
            expect, ref, note = "refuse", None, f"numpy reads {arr.dtype.str}{list(arr.shape)}, not the program's float32 [2, 3]"
        hdr = header if len(header) < 120 else header[:117] + "..."
        desc = f"header {hdr!r}{' ' + ' '.join(what) if what else ''}; {note}"
        P.cli(cls, desc, run_argv(P, sl, [path]), expect, ref=ref, key=path, mention=[os.path.basename(path), "input"])


# ------------------------------------------------------------------ Chromium


def browser_check(P, results, log):
    """Opens a sample of the view pages in headless Chromium: no injected element,
    handler or script; nothing ran."""
    pages = [(c, r) for c, r in results if c.cls == "view_injection" and getattr(c, "page", None)]
    if not pages or P.args.browser_pages <= 0:
        return
    sys.path.insert(0, os.path.join(ROOT, "tests", "view"))
    try:
        from cdp import Chromium
    except ImportError as e:
        log(f"browser check skipped: {e}")
        return
    step = max(1, len(pages) // P.args.browser_pages)
    sample = pages[::step][:P.args.browser_pages]
    base = P.programs["view_baseline"]["html"]
    t0 = time.time()
    try:
        with Chromium(width=1200, height=800) as ch:
            def counts(url):
                ch.open(url)
                ch.evaluate("window.latheView && latheView.expandAll && latheView.expandAll()")
                nboxes = ch.evaluate("document.querySelectorAll('.box[data-kind=op]').length") or 0
                for k in range(min(nboxes, 20)):
                    ch.evaluate(f"document.querySelectorAll('.box[data-kind=op]')[{k}].click()")
                ch.evaluate("new Promise(r => setTimeout(r, 150))")
                return ch.evaluate("""({
                  els: document.querySelectorAll('img,svg,iframe,base,object,details,math,style,meta[http-equiv=refresh],a[href^="javascript"]').length,
                  handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name)),
                  scripts: document.scripts.length,
                  pwned: typeof window.__pwned !== 'undefined'})""")
            clean = counts("file://" + base)
            for c, r in sample:
                try:
                    got = counts("file://" + os.path.abspath(c.page))
                except Exception as e:  # noqa: BLE001
                    r.flag("injection" if "__pwned" in str(e) else "unclear", f"Chromium: the page did not open: {e}")
                    continue
                probs = []
                if got["pwned"]:
                    probs.append("the injected script ran")
                if got["els"] > clean["els"]:
                    probs.append(f"{got['els'] - clean['els']} injected element(s)")
                if got["handlers"]:
                    probs.append(f"event handler attributes {got['handlers'][:3]}")
                if got["scripts"] != clean["scripts"]:
                    probs.append(f"{got['scripts']} scripts, {clean['scripts']} in a clean page")
                for p in probs:
                    r.flag("injection", "Chromium: " + p)
                c.desc += " +chromium"
    except Exception as e:  # noqa: BLE001 - no browser: say so, keep the static checks
        log(f"browser check skipped: {type(e).__name__}: {e}")
        return
    log(f"opened {len(sample)} view pages in Chromium in {time.time() - t0:.0f} s")


GENERATORS = {k: globals()["gen_" + k] for k in CLASS_KEYS}


# ------------------------------------------------------------------ main


def reproducer(P, case):
    if case.steps is not None:
        return " && ".join(shlex.join(s) for s in case.steps) + f"    # in {P.work}"
    if case.code is not None:
        path = P.path("repro", case.id.replace("/", "_") + ".py")
        with open(path, "w") as f:
            f.write(f"# {case.id}: {case.desc}\n# PYTHONPATH={os.path.abspath(P.args.pythonpath)} "
                    f"{sys.executable} {path}\nimport lathe, numpy as np, os, sys, threading, time, json\n")
            if case.torch:
                f.write("import torch\n")
            f.write(case.code)
            if case.ref is not None:
                f.write(f"\nprint(out)\nprint('expected:', [np.load(p) for p in {P.ref_files(case)!r}])\n")
        return f"PYTHONPATH={os.path.abspath(P.args.pythonpath)} {sys.executable} {path}"
    return getattr(case, "repro", case.desc)


def table(rows, cols):
    widths = [max(len(str(r[i])) for r in rows + [cols]) for i in range(len(cols))]
    numeric = [i > 0 and all(re.fullmatch(r"[\d.,\s-]*", str(r[i])) for r in rows) for i in range(len(cols))]
    line = lambda r: "  ".join(str(v).rjust(w) if numeric[i] else str(v).ljust(w)  # noqa: E731
                               for i, (v, w) in enumerate(zip(r, widths))).rstrip()
    out = [line(cols), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def git_describe():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "src", "python"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" (with uncommitted changes under src/ or python/)" if dirty else "")
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every class's number of runs (1: about 3,000)")
    ap.add_argument("--classes", default="", help="comma-separated class keys (default: all; see --list)")
    ap.add_argument("--count", action="append", default=[], metavar="CLASS=N", help="runs for one class, overriding --scale")
    ap.add_argument("--json", help="write the counts and findings here")
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build", "lathe"))
    ap.add_argument("--pythonpath", default=os.path.join(ROOT, "build", "python"), help="where `import lathe` finds the binding")
    ap.add_argument("--workdir", help="crafted inputs and outputs go here (default: a new folder under /tmp)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per run (a run still going is a hang)")
    ap.add_argument("--loop-timeout", type=float, default=150.0,
                    help="seconds for the runs that must reach the while_loop iteration limit (2^24 iterations)")
    ap.add_argument("--browser-pages", type=int, default=40, help="view pages also opened in headless Chromium (0: none)")
    ap.add_argument("--fail-on", default="crash,hang,wrong,injection,unclear",
                    help="the problems that make the exit status 1 (comma-separated; '' for none)")
    ap.add_argument("--list", action="store_true", help="list the classes and exit")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--all-runs", action="store_true", help="--json: every run, not just the findings")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main()
    if args.list:
        print(table([[k, it, n, d] for k, it, d, n in CLASSES], ["class", "issue 33", "runs", "what"]))
        return 0
    chosen = [c for c in args.classes.split(",") if c] or CLASS_KEYS
    for c in chosen:
        if c not in CLASS_KEYS:
            sys.exit(f"unknown class {c!r}; --list shows them")
    counts = {k: max(1, round(n * args.scale)) for k, _, _, n in CLASSES}
    for kv in args.count:
        k, v = kv.split("=")
        counts[k] = int(v)
    if not os.path.exists(args.lathe):
        sys.exit(f"no lathe binary at {args.lathe} (--lathe)")
    args.workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="lathe-hostile-probe-"))
    os.makedirs(args.workdir, exist_ok=True)
    P = Probe(args)
    t0 = time.time()
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    log(f"hostile_probe: seed {args.seed}, scale {args.scale:g}, workdir {args.workdir}")
    for k in chosen:
        rng = random.Random(f"{args.seed}/{k}")
        before = len(P.cases)
        GENERATORS[k](P, rng, counts[k])
        log(f"  {k}: {len(P.cases) - before} runs crafted")
    log(f"crafted {len(P.cases)} runs in {time.time() - t0:.1f} s; running with {args.jobs} jobs")
    # Units: CLI/custom cases one by one; binding cases in batches per class.
    units = []
    batches = {}
    for c in P.cases:
        if c.code is not None:
            batches.setdefault(c.cls, []).append(c)
        else:
            units.append(c)
    for cls, cs in batches.items():
        for j in range(0, len(cs), 25):
            units.append(cs[j:j + 25])
    order = random.Random(args.seed)
    order.shuffle(units)
    # The slowest first, so that they overlap with the rest.
    units.sort(key=lambda u: -(max(c.timeout or 0 for c in u) if isinstance(u, list) else (u.timeout or 0)))
    t1 = time.time()
    results = []
    with ThreadPoolExecutor(args.jobs) as ex:
        for out in ex.map(P.run_unit, units):
            results += out
    if not args.quiet and sys.stderr.isatty():
        sys.stderr.write("\n")
    run_s = time.time() - t1
    browser_check(P, results, log)
    # ---- report
    per = {k: {"inputs": set(), "runs": 0, **{s: 0 for s in STATUSES}, "ok": 0, "probe_error": 0} for k in chosen}
    findings = []
    every = []
    for c, r in sorted(results, key=lambda cr: cr[0].id):
        if args.all_runs:
            every.append({"id": c.id, "input": c.desc, "expect": c.expect, "problems": r.flags, "rc": r.rc,
                          "error": (r.error or "")[:300], "elapsed_s": round(r.elapsed, 3),
                          "stdout": r.stdout.decode("utf-8", "replace")[:300],
                          "py": {k: v for k, v in (r.py or {}).items() if k != "tb"} or None})
        row = per[c.cls]
        row["inputs"].add(c.key)
        row["runs"] += 1
        row["slowest_s"] = round(max(row.get("slowest_s", 0), r.elapsed), 2)
        for s in r.flags:
            row[s] = row.get(s, 0) + 1
        if not r.flags:
            row["ok"] += 1
        else:
            findings.append({"id": c.id, "class": c.cls, "input": c.desc, "problems": r.flags,
                             "error": (r.error or "")[:400], "elapsed_s": round(r.elapsed, 2),
                             "reproducer": reproducer(P, c)})
    rows = []
    tot = {"inputs": 0, "runs": 0, **{s: 0 for s in STATUSES}, "ok": 0, "probe_error": 0}
    items = {k: it for k, it, _, _ in CLASSES}
    for k in chosen:
        row = per[k]
        row["inputs"] = len(row["inputs"])
        for s in tot:
            tot[s] += row[s]
        rows.append([k, items[k], row["inputs"], row["runs"], *[row[s] for s in STATUSES], row["ok"],
                     f"{row.get('slowest_s', 0):.1f}"] + ([row["probe_error"]] if tot["probe_error"] else []))
    cols = ["class", "issue 33", "inputs", "runs", *STATUSES, "ok", "slowest s"] + (
        ["probe_error"] if tot["probe_error"] else [])
    rows.append(["total", "", tot["inputs"], tot["runs"], *[tot[s] for s in STATUSES], tot["ok"], ""]
                + ([tot["probe_error"]] if tot["probe_error"] else []))
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(args.lathe)))
    head = (f"hostile_probe: seed {args.seed}, scale {args.scale:g}, {time.strftime('%Y-%m-%d %H:%M')}; "
            f"tree {git_describe()}, lathe built {built}; {run_s:.0f} s of runs on {args.jobs} jobs")
    print(head)
    print(table(rows, cols))
    if findings:
        print(f"\n{len(findings)} findings (crafted files and reproducers in {args.workdir}):")
        for f in findings:
            probs = "; ".join(f"{s}: {n}" for s, n in f["problems"].items())
            print(f"- {f['id']}  {f['input'][:160]}\n    {probs[:600]}\n    repro: {f['reproducer'][:600]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "scale": args.scale, "lathe": git_describe(), "lathe_built": built,
                       "date": time.strftime("%Y-%m-%d"),
                       "run_seconds": round(run_s, 1), "jobs": args.jobs, "workdir": args.workdir,
                       "classes": {k: {"issue_items": items[k], **per[k]} for k in chosen}, "total": tot,
                       "findings": findings, **({"runs": every} if args.all_runs else {})}, f, indent=1)
    fail_on = {x for x in args.fail_on.split(",") if x} | {"probe_error"}
    return 1 if any(set(f["problems"]) & fail_on for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
