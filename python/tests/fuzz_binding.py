#!/usr/bin/env python3
"""Fuzzes the Python binding (issue 33, fuzzers): Program.run on the
committed fixtures from several threads at once, with inputs that are right,
laid out oddly, or wrong in every way the binding has to refuse, while other
threads close programs, reset their state, inspect them and walk their
graphs.

  inputs   numpy arrays and torch tensors of every dtype (bool, int8, uint8,
           int16, int32, int64, uint16/32/64, float16, bfloat16, float32,
           float64, complex, longdouble, big-endian, object, strings,
           datetimes); contiguous, Fortran-ordered, sliced with steps,
           reversed (negative strides), broadcast (zero strides), read-only,
           transposed torch views, requires_grad, the negative-bit view
           z.conj().imag, sparse and meta tensors; zero-size, 0-d, extra and
           64 dims, wrong shapes; Python ints past int64, floats, None,
           strings, lists; too few and too many inputs; unknown methods
  threads  runs of one Program from several threads; close() while they run
           (the program is then reloaded); reset_state(), inspect(), graph()

Checks: every failure is lathe.Error; a result is a tuple of arrays, tensors
or numbers whose memory stays readable and unchanged after the program is
closed; an input that only differs in layout (or in being a torch tensor)
gives the outputs a plain contiguous array gives (programs without state);
the interpreter does not die and nothing hangs.

Each batch runs in a child process (a crash kills the child, not the
fuzzer); the parent reports the child's signal or failure, the seed that
reproduces its batch, and the last cases it logged.

  python fuzz_binding.py --seconds 20            # what CTest runs (Python.FuzzBinding)
  python fuzz_binding.py --seconds 600 --seed 7
  python fuzz_binding.py --child --seed 123 --seconds 10   # one batch, in this process
"""
import argparse
import faulthandler
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Small fixtures with reference inputs (fixtures/<name>.ref/<method>/call_0),
# over the constructs the runtime has: plain graphs, buffer mutations, two
# methods, cond, while_loop, data-dependent sizes,
# quantized weights, attention.
FIXTURES = ["simple_linear", "mlp", "tied_embedding", "buffer_mutation", "two_methods", "cond", "computed_weight",
            "batchnorm_train", "tts_duration_predictor", "mlp_int8",
            "dynamic/cond_on_shape", "dynamic/data_dependent_slice", "dynamic/while_loop_tanh", "transformer_block"]
# Programs whose integer input is a loop count: extreme counts are refused
# only after ExecutorOptions::max_loop_iterations (2^24) iterations.
LOOPS = {"dynamic/while_loop_tanh"}

INT_EXTREMES = [0, 1, -1, 2, 255, 2**31 - 1, -2**31, 2**31, 2**32, 2**62, -2**62, 2**63 - 1, -2**63]


class Failure(Exception):
    pass


def reference_inputs(name):
    root = os.path.join(SOURCE, "fixtures", name + ".ref")
    out = {}
    for method in sorted(os.listdir(root)):
        d = os.path.join(root, method, "call_0")
        files = sorted((f for f in os.listdir(d) if f.startswith("input_")), key=lambda f: int(f[6:].split(".")[0]))
        out[method] = [np.load(os.path.join(d, f)) for f in files]
    return out


class Fixture:
    def __init__(self, name, lathe):
        self.name = name
        self.path = os.path.join(SOURCE, "fixtures", name + ".pt2")
        self.inputs = reference_inputs(name)
        self.lock = threading.Lock()
        self.program = lathe.load(self.path)
        # Stateless: two calls on the reference inputs agree, so layouts can be compared.
        self.baseline = {}
        for method, ins in self.inputs.items():
            a = self.program.run(*ins, method=method)
            b = self.program.run(*ins, method=method)
            if all(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True) for x, y in zip(a, b)):
                self.baseline[method] = [np.array(x) for x in a]
        for method in self.inputs:
            self.program.reset_state(method=method)

    def current(self):
        with self.lock:
            return self.program

    def replace(self, lathe):
        with self.lock:
            old, self.program = self.program, lathe.load(self.path)
        return old


class Case:
    """One call: the inputs, what they are, and whether only their layout changed."""

    def __init__(self):
        self.args = []
        self.what = []
        self.same_values = True


class Fuzzer:
    def __init__(self, seed, lathe, torch, log):
        self.lathe = lathe
        self.torch = torch
        self.log = log
        self.log_lock = threading.Lock()
        self.fixtures = [Fixture(n, lathe) for n in FIXTURES]
        self.failures = []
        self.calls = 0
        self.errors = 0
        self.seed = seed
        self.tmp = tempfile.mkdtemp(prefix="fuzz_binding_")

    def note(self, tid, text):
        with self.log_lock:
            self.log.write(f"{tid} {text}\n")
            self.log.flush()

    def fail(self, text):
        self.failures.append(text)
        raise Failure(text)

    # ---- inputs ----------------------------------------------------------

    def numpy_dtypes(self):
        return [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64,
                np.float16, np.float32, np.float64, np.complex64, np.complex128, np.longdouble, ">f4", ">i8",
                object, "U3", "datetime64[s]", "V4"]

    def torch_dtypes(self):
        t = self.torch
        return [t.bool, t.int8, t.uint8, t.int16, t.int32, t.int64, t.float16, t.bfloat16, t.float32, t.float64,
                t.complex64, t.complex128, t.uint16, t.uint32, t.uint64]

    def values_like(self, rng, ref):
        """New values of ref's dtype and shape: ordinary, or extreme for integers."""
        return np.array(self._values_like(rng, ref), dtype=ref.dtype).reshape(ref.shape)

    def _values_like(self, rng, ref):
        if ref.dtype == np.bool_:
            return rng_array(rng, ref.shape) > 0.5
        if np.issubdtype(ref.dtype, np.integer):
            info = np.iinfo(ref.dtype)
            if rng.random() < 0.7:
                hi = max(1, int(ref.max()) + 1) if ref.size else 2
                return np.array(rng_array(rng, ref.shape) * hi, dtype=ref.dtype)
            pool = [v for v in INT_EXTREMES if info.min <= v <= info.max]
            return np.array([rng.choice(pool) for _ in range(ref.size)], dtype=ref.dtype).reshape(ref.shape)
        v = (rng_array(rng, ref.shape) * 2 - 1).astype(ref.dtype)
        if rng.random() < 0.2 and v.size:
            flat = v.reshape(-1)
            for _ in range(rng.randint(1, 3)):
                flat[rng.randrange(flat.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, 65504.0])
        return v

    def layout(self, rng, a, case):
        """a with the same values and dtype, laid out (or wrapped) differently."""
        t = self.torch
        a = np.asarray(a)
        kinds = ["contiguous", "fortran", "strided", "reversed", "broadcast", "readonly", "frombuffer", "memmap"]
        if t is not None:
            kinds += ["torch", "torch_t", "torch_grad", "torch_strided", "torch_conj_imag", "torch_sparse",
                      "torch_meta", "torch_bf16_roundtrip"]
        k = rng.choice(kinds)
        case.what.append(k)
        if k == "contiguous":
            return np.ascontiguousarray(a)
        if k == "fortran":
            return np.asfortranarray(a)
        if k == "strided":
            if a.ndim == 0:
                return a
            big = np.zeros(tuple(s * 2 for s in a.shape), a.dtype)
            sl = tuple(slice(None, None, 2) for _ in a.shape)
            big[sl] = a
            return big[sl]
        if k == "reversed":
            if a.ndim == 0:
                return a
            return np.flip(np.flip(a, 0).copy(), 0)  # a's values, read through a negative stride
        if k == "broadcast":
            if a.ndim == 0 or a.size == 0 or not (a == a.reshape(-1)[0]).all():
                a = np.full(a.shape, a.reshape(-1)[0] if a.size else 0, a.dtype)
                case.same_values = False
            return np.broadcast_to(a.reshape(-1)[:1].reshape((1,) * a.ndim), a.shape)
        if k == "readonly":
            c = np.array(a, copy=True)
            c.flags.writeable = False
            return c
        if k == "frombuffer":
            return np.frombuffer(np.ascontiguousarray(a).tobytes(), dtype=a.dtype).reshape(a.shape)
        if k == "memmap":
            if a.size == 0:
                return a
            path = os.path.join(self.tmp, f"m{threading.get_ident()}_{rng.randrange(1 << 30)}.bin")
            np.ascontiguousarray(a).tofile(path)
            m = np.memmap(path, dtype=a.dtype, mode="r", shape=a.shape)
            os.unlink(path)  # the mapping stays
            return m
        if k == "torch":
            return t.from_numpy(np.ascontiguousarray(a))
        if k == "torch_t":
            if a.ndim < 2:
                return t.from_numpy(np.ascontiguousarray(a))
            return t.from_numpy(np.ascontiguousarray(a.swapaxes(0, -1))).transpose(0, -1)
        if k == "torch_grad":
            x = t.from_numpy(np.ascontiguousarray(a))
            return x.requires_grad_(True) if x.is_floating_point() else x
        if k == "torch_strided":
            if a.ndim == 0:
                return t.from_numpy(np.ascontiguousarray(a))
            big = t.zeros(tuple(s * 3 for s in a.shape), dtype=t.from_numpy(np.ascontiguousarray(a)).dtype)
            sl = tuple(slice(1, None, 3) for _ in a.shape)
            big[sl] = t.from_numpy(np.ascontiguousarray(a))
            return big[sl]
        if k == "torch_conj_imag":
            if a.dtype not in (np.float32, np.float64):
                return t.from_numpy(np.ascontiguousarray(a))
            z = t.complex(t.zeros(a.shape, dtype=t.from_numpy(a.copy()).dtype), t.from_numpy(-a.copy()))
            return z.conj().imag  # a, through the negative bit
        if k == "torch_sparse":
            case.same_values = False
            return t.from_numpy(np.ascontiguousarray(a)).to_sparse()
        if k == "torch_meta":
            case.same_values = False
            return t.empty(a.shape, dtype=t.from_numpy(np.ascontiguousarray(a)).dtype, device="meta")
        if k == "torch_bf16_roundtrip":
            x = t.from_numpy(np.ascontiguousarray(a))
            if x.dtype in (t.float32, t.float64):
                case.same_values = False
                return x.to(t.bfloat16)
            return x
        raise AssertionError(k)

    def wrong(self, rng, a, case, loop):
        """Something that is not a valid input of a's dtype and shape."""
        case.same_values = False
        t = self.torch
        k = rng.choice(["dtype", "dtype", "torch_dtype", "zero_size", "extra_dims", "many_dims", "zero_d",
                        "shape", "int", "float", "bool", "none", "str", "list", "object", "huge_int", "values"])
        case.what.append("wrong:" + k)
        if k == "dtype":
            dt = rng.choice(self.numpy_dtypes())
            try:
                return a.astype(dt)
            except (TypeError, ValueError):
                return np.zeros(a.shape, dt)
        if k == "torch_dtype":
            if t is None:
                return a.astype(np.float64)
            x = t.from_numpy(np.ascontiguousarray(a).astype(np.float64))
            return x.to(rng.choice(self.torch_dtypes()))
        if k == "zero_size":
            shape = list(a.shape) or [1]
            shape[rng.randrange(len(shape))] = 0
            return np.zeros(shape, a.dtype)
        if k == "extra_dims":
            return a.reshape((1,) * rng.randint(1, 4) + a.shape)
        if k == "many_dims":
            n = rng.choice([32, 63, 64])
            return np.zeros((1,) * n, a.dtype)
        if k == "zero_d":
            return np.array(a.reshape(-1)[0] if a.size else 0, a.dtype)
        if k == "shape":
            return np.zeros([rng.randint(0, 9) for _ in range(rng.randint(0, 5))], a.dtype)
        if k == "int":
            return rng.choice(INT_EXTREMES)
        if k == "float":
            return rng.choice([0.0, -1.5, float("nan"), float("inf"), 1e308])
        if k == "bool":
            return rng.choice([True, False])
        if k == "none":
            return None
        if k == "str":
            return "x"
        if k == "list":
            return a.tolist() if a.size < 64 else [1, 2]
        if k == "object":
            return object()
        if k == "huge_int":
            return rng.choice([2**63, -2**63 - 1, 2**100])
        # "values": the right dtype and shape, extreme values (integers: indices, sizes, loop counts)
        v = self.values_like(rng, a)
        if loop and np.issubdtype(a.dtype, np.integer):
            v = np.array(np.clip(v, -2**63, 64), dtype=a.dtype)
        return v

    def make_case(self, rng, fx, method):
        case = Case()
        refs = fx.inputs[method]
        roll = rng.random()
        for a in refs:
            if roll < 0.45:
                case.args.append(self.layout(rng, a, case))
            elif roll < 0.75 and rng.random() < 0.5:
                case.args.append(self.wrong(rng, a, case, fx.name in LOOPS))
            elif roll < 0.9:
                v = self.values_like(rng, a)
                if fx.name in LOOPS and np.issubdtype(a.dtype, np.integer):
                    v = np.array(np.clip(v, -2**63, 64), dtype=a.dtype)
                case.same_values = False
                case.what.append("values")
                case.args.append(self.layout(rng, v, case) if rng.random() < 0.5 else v)
            else:
                case.args.append(self.layout(rng, a, case))
        if rng.random() < 0.05:
            case.same_values = False
            if case.args and rng.random() < 0.5:
                case.args.pop(rng.randrange(len(case.args)))
                case.what.append("one input fewer")
            else:
                case.args.append(np.zeros(2, np.float32))
                case.what.append("one input more")
        return case

    # ---- checks ----------------------------------------------------------

    def check_outputs(self, out, fx, method, case, desc):
        t = self.torch
        if not isinstance(out, tuple):
            self.fail(f"{desc}: run returned {type(out).__name__}, not a tuple")
        copies = []
        for y in out:
            if isinstance(y, np.ndarray):
                copies.append(np.array(y, copy=True))
            elif t is not None and isinstance(y, t.Tensor):
                copies.append(y.detach().clone().numpy() if y.dtype != t.bfloat16 else y.float().numpy())
            elif isinstance(y, (int, float, bool)):
                copies.append(y)
            else:
                self.fail(f"{desc}: output of type {type(y).__name__}")
        base = fx.baseline.get(method)
        if case.same_values and base is not None and all(isinstance(y, np.ndarray) for y in copies):
            if len(copies) != len(base):
                self.fail(f"{desc}: {len(copies)} outputs, {len(base)} from the contiguous inputs")
            for i, (y, b) in enumerate(zip(copies, base)):
                if y.shape != b.shape or not np.allclose(y, b, rtol=1e-5, atol=1e-6, equal_nan=True):
                    self.fail(f"{desc}: output {i} differs from the contiguous inputs' "
                              f"(max abs diff {np.nanmax(np.abs(y.astype(np.float64) - b)) if y.shape == b.shape else 'shape'})")
        return list(zip(out, copies))

    def recheck(self, kept, desc):
        """Outputs kept from earlier calls still read what they read then (their program may be closed)."""
        t = self.torch
        for y, c in kept:
            now = y if not (t is not None and isinstance(y, t.Tensor)) else (
                y.detach().numpy() if y.dtype != t.bfloat16 else y.float().numpy())
            if isinstance(now, np.ndarray) and not np.array_equal(now, c, equal_nan=True):
                self.fail(f"{desc}: an output changed after it was returned (its program closed or ran again)")

    # ---- threads ---------------------------------------------------------

    def worker(self, tid, deadline):
        rng = random.Random(self.seed * 1000 + tid)
        kept = []
        try:
            while time.monotonic() < deadline and not self.failures:
                fx = rng.choice(self.fixtures)
                action = rng.random()
                p = fx.current()
                if action < 0.02:
                    self.note(tid, f"close {fx.name}")
                    fx.replace(self.lathe).close()
                    continue
                if action < 0.04:
                    self.note(tid, f"reset_state/inspect/graph {fx.name}")
                    try:
                        for method in p.methods:
                            p.reset_state(method=method)
                        p.inspect()
                        for method in p.methods:
                            g = p.graph(method)
                            for n in g.nodes:
                                _ = (n.target, n.args, n.kwargs, [v.shape for v in n.outputs])
                    except self.lathe.Error:
                        pass
                    continue
                method = rng.choice(sorted(fx.inputs))
                if rng.random() < 0.02:
                    method = rng.choice(["", "no_such_method", None, "model\x00"])
                case = self.make_case(rng, fx, method if method in fx.inputs else sorted(fx.inputs)[0])
                desc = f"{fx.name}.{method} [{', '.join(case.what) or 'reference'}]"
                self.note(tid, desc)
                self.calls += 1
                try:
                    out = p.run(*case.args, method=method)
                except self.lathe.Error as e:
                    self.errors += 1
                    if not str(e):
                        self.fail(f"{desc}: empty lathe.Error")
                    continue
                except Failure:
                    raise
                except BaseException as e:  # noqa: BLE001 - anything else is the finding
                    self.fail(f"{desc}: {type(e).__name__} instead of lathe.Error: {e}\n{traceback.format_exc()}")
                kept = (kept + self.check_outputs(out, fx, method, case, desc))[-64:]
                if rng.random() < 0.1:
                    self.recheck(kept, desc)
        except Failure:
            pass
        except BaseException as e:  # noqa: BLE001
            self.failures.append(f"thread {tid}: {type(e).__name__}: {e}\n{traceback.format_exc()}")


def rng_array(rng, shape):
    return np.random.default_rng(rng.randrange(1 << 32)).random(shape)


def child(args):
    faulthandler.enable()
    import lathe
    try:
        import torch
    except ImportError:
        torch = None
    with open(args.log, "a") if args.log else open(os.devnull, "w") as log:
        f = Fuzzer(args.seed, lathe, torch, log)
        deadline = time.monotonic() + args.seconds
        threads = [threading.Thread(target=f.worker, args=(i, deadline)) for i in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for fx in f.fixtures:
            fx.current().close()
        if f.failures:
            print(f"fuzz_binding: seed {args.seed}: FAILED", file=sys.stderr)
            for x in f.failures:
                print(x, file=sys.stderr)
            return 1
        print(f"fuzz_binding: seed {args.seed}: {f.calls} calls, {f.errors} lathe.Error, {args.threads} threads")
        return 0


def parent(args):
    start = time.monotonic()
    seed = args.seed if args.seed is not None else int(time.time())
    batches = calls = 0
    status = 0
    log = os.path.join(tempfile.gettempdir(), f"fuzz_binding_{os.getpid()}.log")
    while time.monotonic() - start < args.seconds:
        left = args.seconds - (time.monotonic() - start)
        chunk = max(3.0, min(args.batch_seconds, left))
        open(log, "w").close()
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--seed", str(seed), "--seconds", str(chunk),
               "--threads", str(args.threads), "--log", log]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=chunk + 120)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "hang", e.stdout or "", e.stderr or ""
        batches += 1
        if rc != 0:
            status = 1
            with open(log) as f:
                last = f.readlines()[-12:]
            what = f"killed by signal {-rc}" if isinstance(rc, int) and rc < 0 else \
                   "hung" if rc == "hang" else f"exit status {rc}"
            print(f"fuzz_binding: FINDING: the batch with seed {seed} {what}")
            print(f"  reproduce: {sys.executable} {os.path.abspath(__file__)} --child --seed {seed} "
                  f"--seconds {chunk:.0f} --threads {args.threads}")
            print("  last cases (thread, fixture.method [inputs]):")
            for line in last:
                print("    " + line.rstrip())
            print("  stderr:\n" + "\n".join("    " + x for x in (err if isinstance(err, str) else err.decode()).splitlines()[-60:]))
            if not args.keep_going:
                break
        else:
            for line in out.splitlines():
                if " calls," in line:
                    calls += int(line.split(": ")[2].split()[0])
        seed += 1
    os.path.exists(log) and os.unlink(log)
    print(f"fuzz_binding: {batches} batch(es), {calls} calls, {time.monotonic() - start:.0f} s: "
          f"{'FAILED' if status else 'ok'}")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--batch-seconds", type=float, default=10, help="each child process runs this long")
    ap.add_argument("--keep-going", action="store_true", help="report every failing batch, not just the first")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--log", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        if args.seed is None:
            args.seed = 0
        return child(args)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
