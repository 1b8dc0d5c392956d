"""The machine the figures come from: CPU, load, and the physical limit
of one core, FP32 fused multiply-add throughput.

Two figures for the limit:
* nominal: lscpu's frequency x vector lanes (16 FP32 with AVX-512, 8 with
  AVX2) x 2 flops per FMA x FMA units per core. lscpu does not report the
  FMA units; server cores with AVX-512 (Skylake-SP Gold/Platinum and
  later Xeons) have 2, which the measured figure below confirms or refutes;
* measured: tools/peers/fma_peak.c (independent FMA chains in registers),
  built here with the system C compiler, best of several short runs, per
  second of CPU time (on a shared machine the wall-clock rate also counts
  the time other processes held the core; both are printed).

GFLOP/s figures are compared with the measured limit (x threads).
"""

import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def lscpu():
    try:
        text = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {k.strip(): v.strip() for k, v in (l.split(":", 1) for l in text.splitlines() if ":" in l)}


def mhz():
    info = lscpu()
    for key in ("CPU max MHz", "CPU MHz"):
        if key in info:
            return float(info[key]), "lscpu %s" % key
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^cpu MHz\s*:\s*([0-9.]+)", f.read(), re.M)
        if m:
            return float(m.group(1)), "/proc/cpuinfo cpu MHz"
    except OSError:
        pass
    return None, "no frequency reported"


def vector_isa():
    flags = lscpu().get("Flags", "").split()
    if "avx512f" in flags and "fma" in flags:
        return "avx512", 16
    if "avx2" in flags and "fma" in flags:
        return "avx2", 8
    return "sse", 4


def nominal_peak(fma_units=2):
    """(GFLOP/s, how it was computed) for one core."""
    f, source = mhz()
    isa, lanes = vector_isa()
    if f is None:
        return None, source
    g = f * 1e6 * lanes * 2 * fma_units / 1e9
    return g, "%s %.0f MHz x %d FP32 lanes (%s) x 2 flops/FMA x %d FMA units = %.1f GFLOP/s" % (
        source, f, lanes, isa, fma_units, g)


def _build(tmp, name):
    """Builds tools/peers/<name>.c into tmp (cc -O3 -march=native): the
    executable's path, or a sentence starting "cannot" saying why not."""
    exe = os.path.join(tmp, name)
    cc = os.environ.get("CC", "cc")
    p = subprocess.run([cc, "-O3", "-march=native", "-o", exe, os.path.join(HERE, name + ".c")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return "cannot build %s.c with %s: %s" % (name, cc, p.stdout.strip().splitlines()[-1:] or "")
    return exe


def measured_peak(runs=5, seconds=0.2):
    """{isa: (best GFLOP/s per CPU second, best wall GFLOP/s)}, or a string
    saying why there is no measurement."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = _build(tmp, "fma_peak")
        if exe.startswith("cannot"):
            return exe
        best = {}
        for _ in range(runs):
            out = subprocess.run([exe, str(seconds)], stdout=subprocess.PIPE, text=True).stdout
            for line in out.splitlines():
                isa, cpu, wall = line.split()
                c, w = best.get(isa, (0.0, 0.0))
                best[isa] = (max(c, float(cpu)), max(w, float(wall)))
        return best


def measured_bandwidth(mib=512, passes=5):
    """(best GB/s per CPU second, best wall GB/s) of one core streaming a
    buffer far larger than the caches (tools/peers/stream_read.c), or a
    string saying why there is no measurement."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = _build(tmp, "stream_read")
        if exe.startswith("cannot"):
            return exe
        out = subprocess.run([exe, str(mib), str(passes)], stdout=subprocess.PIPE, text=True).stdout.split()
        if len(out) != 2:
            return "stream_read printed %r" % " ".join(out)
        return float(out[0]), float(out[1])


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def describe():
    """Lines for the report, the limit in GFLOP/s and the streaming read
    bandwidth in GB/s per CPU second (each None if unknown)."""
    info = lscpu()
    lines = ["cpu: %s, %s core(s) online (%s)" % (info.get("Model name", "?"), os.cpu_count(),
                                                 info.get("Hypervisor vendor", "bare metal") + " guest"
                                                 if "Hypervisor vendor" in info else "bare metal")]
    nominal, how = nominal_peak()
    lines.append("peak FP32 FMA, one core, nominal: %s" % how)
    measured = measured_peak()
    limit = nominal
    if isinstance(measured, str):
        lines.append("peak FP32 FMA, one core, measured: n/a (%s)" % measured)
    else:
        for isa in ("avx512", "avx2"):
            if isa in measured:
                c, w = measured[isa]
                lines.append("peak FP32 FMA, one core, measured (%s, tools/peers/fma_peak.c): %.1f GFLOP/s per CPU "
                             "second (%.1f GFLOP/s wall under this load)" % (isa, c, w))
        widest = "avx512" if "avx512" in measured else "avx2" if "avx2" in measured else None
        if widest:
            limit = measured[widest][0]
    bandwidth = measured_bandwidth()
    if isinstance(bandwidth, str):
        lines.append("streaming read, one core, measured: n/a (%s)" % bandwidth)
        bandwidth = None
    else:
        lines.append("streaming read, one core, measured (tools/peers/stream_read.c, 512 MiB): %.1f GB/s per CPU "
                     "second (%.1f GB/s wall under this load)" % bandwidth)
        bandwidth = bandwidth[0]
    lines.append("load average (1, 5, 15 min): %s" % load_average())
    return lines, limit, bandwidth


PACKAGES = ["torch", "executorch", "torchao", "onnxruntime", "onnx", "onnxscript"]


def versions():
    """The peers' versions as installed (read from their metadata, nothing
    imported), one line."""
    from importlib import metadata

    found = []
    for p in PACKAGES:
        try:
            found.append("%s %s" % (p, metadata.version(p)))
        except metadata.PackageNotFoundError:
            found.append("%s not installed" % p)
    return ["python packages: " + ", ".join(found)]
