#!/usr/bin/env python3
"""`make bench-peers`: Lathe against the runtimes people actually choose
between, on the same models, in one run (issue 17).

    .venv/bin/python tools/bench_peers.py [--lathe build/lathe] [--threads 1,2] [--repeat 100]
                                          [--only mlp,convnet_224] [--work DIR]

Peers, for each model of tools/peers/zoo.py and each thread count:

    lathe          `lathe run --repeat N --threads T` (portable kernels)
    lathe_xnnpack  the same with `--backend xnnpack` (lowered in memory)
    eager          PyTorch 2.13 eager, torch.inference_mode()
    executorch     ExecuTorch + XNNPACK delegate, runtime Python bindings
    onnxruntime    ONNX Runtime CPU, every graph optimization

How each peer builds and runs its program is in tools/peers/<peer>_peer.py.
Every peer gets the same inputs (saved once) and its outputs are checked
against PyTorch eager's; a peer that disagrees is flagged and its time not
reported, a peer that cannot be installed or cannot run a model shows n/a,
and the exact reason of both is printed under the table.

Each peer runs in its own process, one after the other (model by model, so
a change of load on a shared machine hits all peers of a row alike), so no
runtime's thread pool spins while another is timed. Work is in three steps:

    --prepare  (one process) builds each model, saves inputs and PyTorch's
               outputs, writes exported.pt2 (lathe.pt2 once `lathe
               transform` ran), executorch.pte and model.onnx;
    --worker   (one process per Python peer, model and thread count) times
               one peer, checks its outputs, prints one JSON line;
    the driver (this process; numpy only, no torch) runs Lathe itself,
               collects the workers' lines and prints the report.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from peers import artifacts, machine, table  # noqa: E402

PEERS = ["lathe", "lathe_xnnpack", "eager", "executorch", "onnxruntime"]
PYTHON_PEERS = ["eager", "executorch", "onnxruntime"]
PREPARED = {"lathe": "lathe", "lathe_xnnpack": "lathe", "executorch": "executorch", "onnxruntime": "onnxruntime"}


# ---- prepare: one process with torch, ExecuTorch's exporter and torch.onnx ------------------------
def prepare(work, only):
    import numpy as np
    import torch

    from peers import executorch_peer, lathe_peer, onnxruntime_peer
    from peers.zoo import zoo

    exporters = {"lathe": lathe_peer, "executorch": executorch_peer, "onnxruntime": onnxruntime_peer}
    models = [m for m in zoo() if not only or m.name in only]
    with open(os.path.join(work, "zoo.json"), "w") as f:  # for the driver, which does not import torch
        json.dump([{"name": m.name, "about": m.about, "flops": m.flops, "floor": m.floor,
                    "weight_bytes": m.weight_bytes} for m in models], f)
    for model in models:
        folder = artifacts.model_dir(work, model.name)
        print("prepare: %s" % model.name, file=sys.stderr, flush=True)
        module = model.build()
        inputs = model.inputs()
        artifacts.save_arrays(folder, "input", [t.numpy() for t in inputs])
        with torch.inference_mode():
            ref = torch.utils._pytree.tree_leaves(model.build()(*inputs))
        artifacts.save_arrays(folder, "ref", [t.numpy() for t in ref])
        if model.check:
            fixture_matches(model, np, torch)
        for peer, exporter in exporters.items():
            try:
                exporter.prepare(model, model.build(), inputs, folder)
            except Exception as e:  # the peer gets n/a with this reason
                artifacts.write_error(folder, peer, "%s export failed: %s" % (peer, artifacts.reason(e)))
                with open(os.path.join(folder, peer + ".log"), "w") as f:
                    traceback.print_exc(file=f)
    return 0


def fixture_matches(model, np, torch):
    """The rebuilt module reproduces the committed fixture's reference call 0."""
    from peers.timing import compare

    fixture, method = model.check
    ref_dir = os.path.join(HERE, "..", "fixtures", fixture + ".ref", method, "call_0")
    if not os.path.isdir(ref_dir):
        return
    inputs = [torch.from_numpy(a) for a in artifacts.load_arrays(ref_dir, "input")]
    with torch.inference_mode():
        got = [t.numpy() for t in torch.utils._pytree.tree_leaves(model.build()(*inputs))]
    ok, words = compare(got, artifacts.load_arrays(ref_dir, "output"))
    if not ok:
        raise SystemExit("%s: the rebuilt module does not reproduce fixtures/%s.ref (%s)" % (model.name, fixture, words))


# ---- worker: one Python peer, one model, one thread count ------------------------------------
def worker(work, peer, name, threads, repeat):
    from peers.timing import compare

    folder = os.path.join(work, name)
    try:
        if peer == "eager":
            from peers import eager_peer
            from peers.zoo import zoo_by_name

            r = eager_peer.run(zoo_by_name()[name], folder, threads, repeat)
        elif peer == "executorch":
            from peers import executorch_peer

            r = executorch_peer.run(folder, threads, repeat)
        else:
            from peers import onnxruntime_peer

            r = onnxruntime_peer.run(folder, threads, repeat)
    except Exception as e:
        print(json.dumps({"error": "%s failed: %s" % (peer, artifacts.reason(e))}))
        return 0
    ok, words = compare(r["outputs"], artifacts.load_arrays(folder, "ref"))
    print(json.dumps({"median": r["median"], "p90": r["p90"], "ok": ok, "check": words, "note": r["note"]}))
    return 0


def run_worker(work, peer, name, threads, repeat):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), PYTHONWARNINGS="ignore")
    cmd = [sys.executable, os.path.abspath(__file__), "--work", work, "--worker", peer, "--model", name,
           "--threads", str(threads), "--repeat", str(repeat)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    last = [l for l in p.stderr.splitlines() if l.strip()]
    return {"error": "%s worker exit %d: %s" % (peer, p.returncode, last[-1] if last else "no output")}


def run_lathe(lathe, work, peer, name, threads, repeat):
    from peers import lathe_peer
    from peers.timing import compare

    folder = os.path.join(work, name)
    try:
        r = lathe_peer.run(lathe, folder, lathe_peer.BACKENDS[peer], threads, repeat)
    except (RuntimeError, OSError) as e:
        return {"error": "%s: %s" % (peer, e)}
    ok, words = compare(r["outputs"], artifacts.load_arrays(folder, "ref"))
    return {"median": r["median"], "p90": r["p90"], "ok": ok, "check": words, "note": r["note"]}


def transform_for_lathe(lathe, work, names):
    from peers import lathe_peer

    for name in names:
        folder = os.path.join(work, name)
        if artifacts.read_error(folder, "lathe"):
            continue
        try:
            lathe_peer.transform(lathe, folder)
        except (RuntimeError, OSError) as e:
            artifacts.write_error(folder, "lathe", "lathe transform failed: %s" % e)


def measure(args, names):
    results = {}  # (threads, model, peer) -> result
    for threads in args.threads:
        for name in names:
            folder = os.path.join(args.work, name)
            for peer in PEERS:
                err = artifacts.read_error(folder, PREPARED[peer]) if peer in PREPARED else None
                if err:
                    r = {"error": err}
                elif peer.startswith("lathe"):
                    r = run_lathe(args.lathe, args.work, peer, name, threads, args.repeat)
                else:
                    r = run_worker(args.work, peer, name, threads, args.repeat)
                results[(threads, name, peer)] = r
                print("  %d thread(s) %-24s %-14s %s" % (threads, name, peer, table.cell(r)), file=sys.stderr, flush=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe", default=os.path.join(HERE, "..", "build", "lathe"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--only", default="", help="comma-separated model names (tools/peers/zoo.py)")
    ap.add_argument("--work", default="", help="keep the prepared programs here (default: a temporary folder)")
    ap.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--model", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    only = [n for n in args.only.split(",") if n]
    if args.worker:
        return worker(args.work, args.worker, args.model, int(args.threads), args.repeat)
    if args.prepare:
        return prepare(args.work, only)

    args.threads = [int(t) for t in args.threads.split(",")]
    args.lathe = os.path.abspath(args.lathe)
    tmp = None
    if not args.work:
        tmp = tempfile.TemporaryDirectory(prefix="bench-peers-")
        args.work = tmp.name
    os.makedirs(args.work, exist_ok=True)

    lines, limit, bandwidth = machine.describe()
    load_before = machine.load_average()
    versions = machine.versions()
    print("== bench-peers: Lathe vs PyTorch eager, ExecuTorch + XNNPACK, ONNX Runtime (same models, same inputs) ==")
    for line in lines + versions:
        print(line)
    sys.stdout.flush()

    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--prepare", "--work", args.work] +
                       (["--only", args.only] if only else []), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print("prepare failed (exit %d):\n%s" % (p.returncode, p.stderr[-3000:]))
        return 1
    with open(os.path.join(args.work, "zoo.json")) as f:
        models = json.load(f)
    transform_for_lathe(args.lathe, args.work, [m["name"] for m in models])
    results = measure(args, [m["name"] for m in models])
    print()
    print(table.report(results, models, args.threads, args.repeat, limit, load_before, machine.load_average(),
                       bandwidth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
