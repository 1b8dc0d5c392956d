"""Program.run from Python vs the same run through the C++ executor.

    PYTHONPATH=build/python .venv/bin/python bench/python_run_overhead.py build/lathe [fixture ...]

For each fixture (default: mlp), the median of N calls of Program.run on the
call_0 reference inputs (numpy in, numpy out), against `lathe run --repeat N`
(Executor::run timed in C++) on the same inputs, one thread each.
"""
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import lathe

N = int(os.environ.get("LATHE_BENCH_REPEAT", "2000"))


def inputs(name):
    d = os.path.join("fixtures", name + ".ref", "model", "call_0")
    files = sorted((f for f in os.listdir(d) if f.startswith("input_")), key=lambda f: int(f[6:-4]))
    return [np.load(os.path.join(d, f)) for f in files]


def python_median_us(name):
    p = lathe.load(os.path.join("fixtures", name + ".pt2"))
    xs = inputs(name)
    for _ in range(50):
        p.run(*xs)
    times = []
    for _ in range(N):
        t0 = time.perf_counter()
        p.run(*xs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def cpp_median_us(binary, name):
    out = subprocess.run([binary, "run", os.path.join("fixtures", name + ".pt2"), "--repeat", str(N), "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("latency"))
    return float(line.split("median ")[1].split(" ms")[0]) * 1e3


def main():
    binary = sys.argv[1]
    names = sys.argv[2:] or ["mlp"]
    print(f"{'fixture':<24} {'C++ us':>9} {'Python us':>10} {'overhead us':>12}")
    for name in names:
        c = cpp_median_us(binary, name)
        p = python_median_us(name)
        print(f"{name:<24} {c:>9.2f} {p:>10.2f} {p - c:>12.2f}")
    print(f"(median of {N} calls each; Program.run: numpy in, numpy out; C++: lathe run --repeat)")


if __name__ == "__main__":
    main()
