#!/usr/bin/env python3
"""Export the common-architecture fixtures of
``torch_fixtures/architectures.py`` (ResNet-18, MobileNetV2/V3, EfficientNet-B0,
ShuffleNetV2, DenseNet-121, RegNetY-400MF, ConvNeXt-T, MnasNet, GoogLeNet,
Swin-T, a Transformer encoder, a FastSpeech 2 variance adaptor).

    .venv/bin/python tools/export_architectures.py                     # fixtures/architectures/ (small)
    .venv/bin/python tools/export_architectures.py --only resnet18,swin_t
    .venv/bin/python tools/export_architectures.py --full --out /tmp/arch-full   # real sizes, not committed

Same conventions as tools/export_fixtures.py (whose exporter this uses):
eval mode, batch 1, float32, random weights under a per-name seed,
``torch.export.export`` without ``run_decompositions()`` (the export IR, as
the ``convnet`` fixture), ``torch.export.save``, ``<name>.ref/model/call_0/``
eager inputs and outputs, the archive loaded back with ``torch.export.load``
and checked against eager, and a ``manifest.json`` in the output folder with
one entry per fixture in the format of ``fixtures/manifest.json``.

Batch-norm running statistics are calibrated before export (a few train-mode
batches of random inputs with a cumulative average), and the affine
parameters are randomised, so the normalisation is neither the identity nor
numerically degenerate; dropout is the identity in eval.
"""

import argparse
import os
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from export_fixtures import build_fixture, update_manifest  # noqa: E402
from torch_fixtures.architectures import ARCHITECTURES  # noqa: E402
from torch_fixtures.models import Fixture, Method, randn_calls  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "fixtures", "architectures")


def calibrate(module: nn.Module, shape, seed: int) -> nn.Module:
    """Give every batch norm realistic statistics: random affine parameters,
    then running mean / variance averaged over 4 train-mode batches of random
    inputs (momentum None = cumulative average). Returns it in eval mode."""
    bns = [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns:
        g = torch.Generator().manual_seed(seed)
        saved = []
        for bn in bns:
            with torch.no_grad():
                bn.weight.copy_(torch.rand(bn.num_features, generator=g) + 0.5)
                bn.bias.copy_(torch.randn(bn.num_features, generator=g) * 0.1)
            bn.reset_running_stats()
            saved.append(bn.momentum)
            bn.momentum = None
        module.train()
        with torch.no_grad():
            for _ in range(4):
                module(torch.randn(max(2, shape[0]), *shape[1:], generator=g))
        for bn, m in zip(bns, saved):
            bn.momentum = m
    return module.eval()


def fixture_of(name: str, full: bool) -> Fixture:
    arch = ARCHITECTURES[name]
    shape = arch.full_input if full else arch.small_input
    fx = Fixture(name, "%s; input %s%s" % (arch.description, "x".join(map(str, shape)), " (full size)" if full else ""),
                 None, OrderedDict(model=Method("forward", randn_calls(shape))))
    seed = fx.seed
    fx.build = lambda: calibrate(arch.build(full), shape, seed + 2)
    return fx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="output folder (default fixtures/architectures; required with --full)")
    ap.add_argument("--only", default="", help="comma-separated names (default: all)")
    ap.add_argument("--full", action="store_true", help="the real-size configurations (224x224, 1000 classes)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for n, a in ARCHITECTURES.items():
            print("%-26s %s" % (n, a.description))
        return 0
    if args.full and not args.out:
        ap.error("--full needs --out DIR (the full-size archives are not committed)")
    out = args.out or DEFAULT_OUT
    names = [n for n in args.only.split(",") if n] or list(ARCHITECTURES)
    unknown = [n for n in names if n not in ARCHITECTURES]
    if unknown:
        ap.error("unknown architecture(s): %s" % ", ".join(unknown))
    torch.set_num_threads(max(1, min(8, os.cpu_count() or 1)))
    os.makedirs(out, exist_ok=True)
    built = OrderedDict()
    for n in names:
        fx = fixture_of(n, args.full)
        built[n] = build_fixture(fx, out)
        params = sum(len(v) for v in [built[n]["methods"]["model"]["parameters"]])
        print("wrote %s/%s.pt2 (%d bytes, %d parameter tensors)" % (out, n, os.path.getsize(
            os.path.join(out, n + ".pt2")), params))
    update_manifest(out, list(ARCHITECTURES), built)
    return 0


if __name__ == "__main__":
    sys.exit(main())
