#!/usr/bin/env python3
"""PyTorch eager latency of every fixture model, for `make bench`.

    .venv/bin/python tools/bench_eager.py [--fixtures fixtures] [--threads 1] [--repeat 200]

Runs with the project's pinned PyTorch (2.13, oneDNN/MKL inside; `make venv`).
Rebuilds each fixture's nn.Module exactly as tools/export_fixtures.py does
(same seed, same train/eval mode), feeds it the reference inputs of call 0
(fixtures/<name>.ref/<method>/call_0/input_*.npy: the inputs `lathe run`
uses) and times `module.<method>(*inputs)` under torch.no_grad(), one
warm-up call first, like `lathe run --repeat`. Prints one line per method:

    <fixture> <method> <median ms> <p90 ms>

With --archives DIR it times the exported programs in DIR instead
(torch.export.load(X.pt2).module(), the ATen graph PyTorch runs eagerly),
with the inputs of DIR/<name>.ref/model/call_0: how `make bench` measures
the common architectures (fixtures/architectures, or their full sizes).
"""

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from torch_fixtures.models import FIXTURES  # noqa: E402


def load_inputs(ref_dir):
    paths = sorted(glob.glob(os.path.join(ref_dir, "call_0", "input_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))
    return [torch.from_numpy(np.load(p)) for p in paths]


def time_calls(fn, inputs, repeat):
    times = []
    with torch.inference_mode():
        fn(*inputs)  # warm-up
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn(*inputs)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(0.9 * len(times)))]


def bench_archives(folder, repeat, only):
    for path in sorted(glob.glob(os.path.join(folder, "*.pt2"))):
        name = os.path.basename(path)[:-4]
        if only and name not in only:
            continue
        module = torch.export.load(path).module()
        median, p90 = time_calls(module, load_inputs(os.path.join(folder, name + ".ref", "model")), repeat)
        print("%s model %.4f %.4f" % (name, median, p90), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixtures", default=os.path.join(HERE, "..", "fixtures"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--only", default="", help="comma-separated fixture names")
    ap.add_argument("--archives", default="", help="time the exported programs in this folder instead")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    only = {n for n in args.only.split(",") if n}
    if args.archives:
        bench_archives(args.archives, args.repeat, only)
        return 0
    for fx in FIXTURES:
        if only and fx.name not in only:
            continue
        torch.manual_seed(fx.seed)
        module = fx.build().train(fx.train)
        for method, m in fx.methods.items():
            inputs = load_inputs(os.path.join(args.fixtures, fx.name + ".ref", method))
            median, p90 = time_calls(getattr(module, m.attr), inputs, args.repeat)
            print("%s %s %.4f %.4f" % (fx.name, method, median, p90), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
