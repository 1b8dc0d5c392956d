"""The timed loop and the output check every Python peer shares.

Each peer warms up (WARMUP calls, untimed: first-call allocation, lazy
prepacking, thread-pool start), then times ``repeat`` calls one by one with
``time.perf_counter`` and reports the median and the 90th percentile in
milliseconds, as ``lathe run --repeat`` does on its side.
"""

import time

import numpy as np

WARMUP = 5
# A peer's output agrees with PyTorch's when every element is within
# RTOL x max|reference| + ATOL of it (the rule of `lathe run --check`).
RTOL = 1e-4
ATOL = 1e-6


def time_calls(call, repeat, warmup=WARMUP):
    """``call()`` runs the model once and returns its outputs; returns
    (median ms, p90 ms, the outputs of the last call)."""
    out = None
    for _ in range(warmup):
        out = call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - t0) * 1e3)
    return percentiles(times) + (out,)


def percentiles(times):
    times = sorted(times)
    return times[len(times) // 2], times[min(len(times) - 1, int(0.9 * len(times)))]


def compare(got, want):
    """(ok, words): ``got`` and ``want`` are lists of numpy arrays; the
    words say what differs, for the report."""
    if len(got) < len(want):
        return False, "%d output(s), PyTorch gives %d" % (len(got), len(want))
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        if tuple(g.shape) != tuple(w.shape):
            return False, "output %d has shape %s, PyTorch's %s" % (i, list(g.shape), list(w.shape))
        if w.size == 0:
            continue
        if not np.issubdtype(w.dtype, np.floating):
            if not np.array_equal(g, w):
                return False, "output %d (%s) differs" % (i, w.dtype)
            continue
        err = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64))))
        scale = float(np.max(np.abs(w)))
        if not err <= RTOL * scale + ATOL:
            return False, "output %d: max |diff| %.3g, allowed %.3g (max |ref| %.3g)" % (i, err, RTOL * scale + ATOL, scale)
        worst = max(worst, err / scale if scale else err)
    return True, "max |diff| / max |ref| %.2g" % worst
