#!/usr/bin/env python3
"""Load a .pt2 with PyTorch's own loader and run it on reference inputs.

    .venv/bin/python tools/torch_load_check.py ARCHIVE.pt2 REF_DIR [--rtol 1e-4]

REF_DIR holds <method>/call_<k>/input_<i>.npy and output_<i>.npy (a
fixture's <name>.ref). Each method of the archive is loaded with
torch.export (load_pt2), its .module() run on every reference call in order
(mutated buffers carry over), and every output compared with the reference.
Prints one line per call; exits 1 on a mismatch. This is how Lathe checks
that PyTorch accepts what it writes (`make demo`, tests/torch/).
"""

import argparse
import glob
import os
import sys

import numpy as np
import torch
from torch.export.pt2_archive._package import load_pt2


def npy_series(d, kind):
    paths = sorted(glob.glob(os.path.join(d, kind + "_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))
    return [torch.from_numpy(np.load(p)) for p in paths]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archive")
    ap.add_argument("ref_dir")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args(argv)
    ok = True
    for method, ep in load_pt2(args.archive).exported_programs.items():
        module = ep.module()
        calls = sorted(glob.glob(os.path.join(args.ref_dir, method, "call_*")), key=lambda p: int(p.rsplit("_", 1)[1]))
        for k, d in enumerate(calls):
            got = torch.utils._pytree.tree_leaves(module(*npy_series(d, "input")))
            for i, (g, want) in enumerate(zip(got, npy_series(d, "output"))):
                diff = (g.double() - want.double()).abs().max().item() if g.numel() else 0.0
                good = torch.allclose(g, want, rtol=args.rtol, atol=args.atol)
                ok &= good
                print("torch.export.load: %s call %d output %d: max abs diff %.3g  %s" % (method, k, i, diff, "ok" if good else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
