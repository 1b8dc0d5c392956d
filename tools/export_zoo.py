#!/usr/bin/env python3
"""Export the zoo of real architectures (``torch_fixtures/zoo.py``: Hugging
Face ``transformers`` models from small seeded configs) into fixtures/zoo/.

    .venv/bin/python tools/export_zoo.py                 # every model, both forms
    .venv/bin/python tools/export_zoo.py --only bert,llama
    .venv/bin/python tools/export_zoo.py --list

Each model is written twice: ``<name>.pt2`` as ``torch.export.export``
returns it (the export IR, with ``linear``, ``scaled_dot_product_attention``,
``to.device``, ``wrap_with_set_grad_enabled``...) and
``<name>_decomposed.pt2`` after ``run_decompositions()`` (core ATen). The
conventions are tools/export_fixtures.py's (whose exporter this uses): eval
mode, random weights under a per-name seed, ``<name>.ref/model/call_0/``
eager inputs and outputs, the written archive loaded back with
``torch.export.load`` and checked against eager, and ``manifest.json`` in
the format of fixtures/manifest.json.
"""

import argparse
import os
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from export_fixtures import build_fixture, update_manifest  # noqa: E402
from torch_fixtures.models import Fixture, Method  # noqa: E402
from torch_fixtures.zoo import ZOO  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "fixtures", "zoo")


class ZooFixture(Fixture):
    """Both forms of a model come from the same weights and inputs: the seed
    is the model's name, not the fixture's."""

    model_name = ""

    @property
    def seed(self) -> int:
        import zlib

        return zlib.crc32(self.model_name.encode()) & 0x7FFFFFFF


def fixtures_of(name):
    z = ZOO[name]
    calls = lambda g: [z.inputs(g)]  # noqa: E731
    for decomposed in (False, True):
        fx = ZooFixture(name + ("_decomposed" if decomposed else ""),
                     z.description + ("; after run_decompositions()" if decomposed else "; as exported"),
                     z.build, OrderedDict(model=Method("forward", calls)), decompose=decomposed)
        fx.model_name = name
        yield fx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for n, z in ZOO.items():
            print("%-18s %s" % (n, z.description))
        return 0
    names = [n for n in args.only.split(",") if n] or [n for n, z in ZOO.items() if z.committed]
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        ap.error("unknown model(s): %s" % ", ".join(unknown))
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    built = OrderedDict()
    for n in names:
        for fx in fixtures_of(n):
            built[fx.name] = build_fixture(fx, args.out)
            print("wrote %s/%s.pt2 (%d bytes)" % (args.out, fx.name, os.path.getsize(os.path.join(args.out, fx.name + ".pt2"))))
    every = [fx.name for n in ZOO if ZOO[n].committed or n in names for fx in fixtures_of(n)]
    update_manifest(args.out, every, built)
    return 0


if __name__ == "__main__":
    sys.exit(main())
