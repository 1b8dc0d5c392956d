"""The report of `make bench-peers`: one latency table per thread count,
the issue's targets at 1 thread, GFLOP/s of the large linear against the
machine's limit, and every n/a or disagreement with its exact reason.

A result is a dict: {"median", "p90" (ms), "ok", "check", "note"} or
{"error": reason}. Markdown tables, so docs/benchmarks.md takes them verbatim.
"""

PEER_TITLES = [
    ("lathe", "Lathe portable"),
    ("lathe_xnnpack", "Lathe XNNPACK"),
    ("eager", "PyTorch eager"),
    ("executorch", "ExecuTorch+XNNPACK"),
    ("onnxruntime", "ONNX Runtime"),
]
LATHE = ["lathe", "lathe_xnnpack"]
OTHERS = ["eager", "executorch", "onnxruntime"]
SHORT = {"lathe": "portable", "lathe_xnnpack": "xnnpack", "eager": "eager", "executorch": "ET", "onnxruntime": "ORT"}
BATCH_ONE_EXCEPT = ("_b8", "_b64")  # the eager target is for batch 1


def _timed(r):
    return r is not None and "error" not in r and r.get("ok")


def _fmt(ms):
    return "%.3f" % ms if ms < 10 else "%.2f" % ms if ms < 100 else "%.1f" % ms


def cell(r, mark=""):
    if r is None:
        return "—"
    if "error" in r:
        return "n/a" + mark
    if not r.get("ok"):
        return "wrong" + mark
    return "%s / %s" % (_fmt(r["median"]), _fmt(r["p90"]))


def best(results, threads, name, peers):
    """(peer, median) of the fastest agreeing peer among ``peers``, or None."""
    timed = [(results[(threads, name, p)]["median"], p) for p in peers if _timed(results.get((threads, name, p)))]
    if not timed:
        return None
    m, p = min(timed)
    return p, m


def _rate_cells(results, threads, name, amount, limit):
    """Per peer: amount (flops or bytes) per median call, in units of 1e9 per
    second, and its fraction of `limit` when known."""
    cells = []
    for peer, _ in PEER_TITLES:
        r = results.get((threads, name, peer))
        if not _timed(r):
            cells.append("n/a")
            continue
        rate = amount / (r["median"] * 1e-3) / 1e9
        cells.append("%.1f (%.0f%%)" % (rate, 100 * rate / limit) if limit else "%.1f" % rate)
    return cells


def report(results, models, threads_list, repeat, limit, load_before, load_after, bandwidth=None):
    notes = []  # (model, peer, reason) in order of appearance, deduplicated
    out = []

    def mark(name, peer, r):
        if r is None or _timed(r):
            return ""
        why = r["error"] if "error" in r else "outputs disagree with PyTorch's: " + r.get("check", "")
        key = (name, peer, why)
        if key not in notes:
            notes.append(key)
        return "[%d]" % (notes.index(key) + 1)

    for threads in threads_list:
        out.append("### %d thread%s: median / p90 ms of %d calls after warm-up" % (threads, "s" if threads > 1 else "", repeat))
        out.append("")
        out.append("| model | " + " | ".join(t for _, t in PEER_TITLES) + " | Lathe best / best peer |")
        out.append("|---" * (len(PEER_TITLES) + 2) + "|")
        for m in models:
            name = m["name"]
            cells = []
            for peer, _ in PEER_TITLES:
                r = results.get((threads, name, peer))
                cells.append(cell(r, mark(name, peer, r)))
            lb, ob = best(results, threads, name, LATHE), best(results, threads, name, OTHERS)
            ratio = "%.2fx (%s vs %s)" % (lb[1] / ob[1], SHORT[lb[0]], SHORT[ob[0]]) if lb and ob else "n/a"
            out.append("| %s | %s | %s |" % (name, " | ".join(cells), ratio))
        out.append("")

    if 1 in threads_list:
        out.append("### Targets at 1 thread: Lathe's best median / the peer's median")
        out.append("")
        out.append("| model | Lathe best | vs ExecuTorch (<= 1.0) | vs ONNX Runtime (<= 1.0) | vs eager (<= 0.8, batch 1) |")
        out.append("|---|---|---|---|---|")
        held = missed = 0
        for m in [m for m in models if not m.get("floor")]:
            name = m["name"]
            lb = best(results, 1, name, LATHE)
            row = [name, "%s %s ms" % (SHORT[lb[0]], _fmt(lb[1])) if lb else "n/a"]
            for peer, goal in (("executorch", 1.0), ("onnxruntime", 1.0), ("eager", 0.8)):
                r = results.get((1, name, peer))
                if peer == "eager" and name.endswith(BATCH_ONE_EXCEPT):
                    row.append("(batch > 1: %.2fx)" % (lb[1] / r["median"]) if lb and _timed(r) else "—")
                    continue
                if not lb or not _timed(r):
                    row.append("n/a")
                    continue
                x = lb[1] / r["median"]
                ok = x <= goal
                held, missed = held + ok, missed + (not ok)
                row.append("%.2fx %s" % (x, "holds" if ok else "MISSES"))
            out.append("| " + " | ".join(row) + " |")
        out.append("")
        out.append("%d target(s) hold, %d miss (n/a and batch > 1 eager rows not counted; call_floor is no model)." % (
            held, missed))
        out.append("")

    gemms = [m for m in models if m.get("flops")]
    if gemms:
        out.append("### Large linear: GFLOP/s (2 x M x N x K / median), and the fraction of %s" % (
            "the measured peak, %.1f GFLOP/s per core x threads" % limit if limit else "peak (unknown)"))
        out.append("")
        out.append("| model | threads | " + " | ".join(t for _, t in PEER_TITLES) + " | Lathe best / best library |")
        out.append("|---" * (len(PEER_TITLES) + 3) + "|")
        for m in gemms:
            for threads in threads_list:
                cells = _rate_cells(results, threads, m["name"], m["flops"], limit * threads if limit else None)
                lb, ob = best(results, threads, m["name"], LATHE), best(results, threads, m["name"], OTHERS)
                ratio = "%.0f%%" % (100 * ob[1] / lb[1]) if lb and ob else "n/a"
                out.append("| %s | %d | %s | %s |" % (m["name"], threads, " | ".join(cells), ratio))
        out.append("")

    streamed = [m for m in models if m.get("weight_bytes")]
    if streamed:
        out.append("### Batch-1 linear: weight GB/s read (weight bytes / median), and the fraction of %s" % (
            "the measured streaming read, %.1f GB/s per CPU second" % bandwidth if bandwidth else
            "streaming read (unknown)"))
        out.append("")
        out.append("| model | threads | " + " | ".join(t for _, t in PEER_TITLES) + " |")
        out.append("|---" * (len(PEER_TITLES) + 2) + "|")
        for m in streamed:
            for threads in threads_list:
                cells = _rate_cells(results, threads, m["name"], m["weight_bytes"], bandwidth)
                out.append("| %s | %d | %s |" % (m["name"], threads, " | ".join(cells)))
        out.append("")

    delegation = []
    for m in models:
        words = []
        for peer in ("lathe_xnnpack", "executorch"):
            r = results.get((threads_list[0], m["name"], peer))
            if r and r.get("note"):
                words.append("%s %s" % ("Lathe XNNPACK" if peer == "lathe_xnnpack" else "ExecuTorch", r["note"]))
        if words:
            delegation.append("- %s: %s" % (m["name"], "; ".join(words)))
    if delegation:
        out.append("Delegation:")
        out.extend(delegation)
        out.append("")

    if notes:
        out.append("Not timed (n/a: cannot install or run; wrong: outputs disagree with PyTorch eager's):")
        for i, (name, peer, why) in enumerate(notes, 1):
            out.append("- [%d] %s, %s: %s" % (i, name, dict(PEER_TITLES)[peer], why))
        out.append("")
    out.append("Load average before: %s, after: %s (a shared machine: other jobs run during the measurement)." % (
        load_before, load_after))
    out.append("Models:")
    out.extend("- %s: %s" % (m["name"], m["about"]) for m in models)
    return "\n".join(out)
