#!/usr/bin/env python3
"""Export real quantized models, quantized by torchao and exported by
PyTorch 2.13, as Lathe fixtures (fixtures/quantized/).

    .venv/bin/python tools/export_quantized_fixtures.py [--out fixtures/quantized] [--only a,b] [--list]

Each fixture is the transformer encoder or the decoder LM of
torch_fixtures/models.py with every nn.Linear quantized by torchao's
``quantize_`` (torchao 0.18.0, pinned in tools/requirements.txt), its tensor
subclasses unwrapped into plain parameters (torchao.utils.unwrap_tensor_subclass,
so the archive holds ordinary tensors), exported with ``torch.export.export``
and saved with PyTorch's own serializer. The encoder stays in the export IR,
as its base fixture; the decoder, whose KV cache the export IR updates with
in-place copies, is decomposed as its base fixture is, with torchao's
choose_qparams_affine / quantize_affine / dequantize_affine kept whole
(removed from the decomposition table: decomposed, they are some twenty
aten ops each, which no fusion could recognize as quantization):

  int8wo    Int8WeightOnlyConfig: int8 per-channel weight; the export is
            mm(x, to(t(q), float32)) * scale
  int4g32   IntxWeightOnlyConfig(int4, PerGroup(32)): torchao.dequantize_affine
  int4g128  of 4-bit values stored one per int8, then linear (torchao's
            portable int4 export; its CPU int4pack path needs the mslk package,
            which has no build for this platform)
  dyn8      Int8DynamicActivationInt8WeightConfig: per-token symmetric int8
            activations (torchao.choose_qparams_affine / quantize_affine),
            int8 per-channel weights, aten._int_mm

The dyn8 fixtures are checked against eager within 1e-2 (rtol) + 2e-2
(atol): see fixture(). Group 128 needs K >= 128, so the g128 fixtures use the models at width 128;
the others keep the committed sizes (encoder d 64, decoder d 32). References
are the quantized eager module's outputs (PyTorch's own quantized kernels),
written and checked as tools/export_fixtures.py does (the archive loaded
back with torch.export.load must reproduce them).
"""

import argparse
import json
import logging
import os
import sys
import warnings
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)  # torchao's notes about its CUDA-only extensions

from torchao.quantization import (  # noqa: E402
    Int8DynamicActivationInt8WeightConfig,
    Int8WeightOnlyConfig,
    IntxWeightOnlyConfig,
    quantize_,
)
from torchao.quantization.granularity import PerGroup  # noqa: E402
from torchao.utils import unwrap_tensor_subclass  # noqa: E402

from export_fixtures import build_fixture  # noqa: E402
from torch_fixtures.models import (  # noqa: E402
    FIXTURES_BY_NAME,
    DecoderLM,
    Fixture,
    TransformerEncoder,
)

DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "fixtures", "quantized")

SCHEMES = OrderedDict(
    [
        ("int8wo", ("int8 weight-only, per channel (Int8WeightOnlyConfig)", lambda: Int8WeightOnlyConfig(version=2))),
        ("int4g32", ("int4 weight-only, groups of 32 (IntxWeightOnlyConfig)",
                     lambda: IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(32)))),
        ("int4g128", ("int4 weight-only, groups of 128 (IntxWeightOnlyConfig)",
                      lambda: IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(128)))),
        ("dyn8", ("int8 dynamic per-token activations, int8 per-channel weights "
                  "(Int8DynamicActivationInt8WeightConfig)", lambda: Int8DynamicActivationInt8WeightConfig(version=2))),
    ]
)

# base fixture -> (model at the committed size, model at width 128)
BASES = OrderedDict(
    [
        ("transformer_encoder", (lambda: TransformerEncoder(), lambda: TransformerEncoder(d=128, ff=256))),
        ("decoder_lm", (lambda: DecoderLM(), lambda: DecoderLM(d=128))),
    ]
)


def encoder_calls(width):
    def calls(g):
        return [(torch.randn(b, t, width, generator=g),) for b, t in ((2, 16), (1, 5), (3, 33))]
    return calls


def quantized(build, scheme):
    def make():
        m = build().eval()
        quantize_(m, SCHEMES[scheme][1]())
        unwrap_tensor_subclass(m)
        return m
    return make


def fixture(base_name, scheme):
    base = FIXTURES_BY_NAME[base_name]
    wide = scheme == "int4g128"
    build = BASES[base_name][1 if wide else 0]
    methods = base.methods
    if base_name == "transformer_encoder" and wide:
        m = methods["model"]
        methods = OrderedDict(model=type(m)(m.attr, encoder_calls(128), m.dynamic))
    decompose = base.decompose
    desc = "%s%s; every Linear quantized by torchao: %s; %s" % (
        base_name, " at width 128" if wide else "", SCHEMES[scheme][0],
        "decomposed, torchao ops kept whole" if decompose else "export IR")
    fx = Fixture("%s_%s" % (base_name, scheme), desc, quantized(build, scheme), methods, decompose=decompose)
    if decompose:
        fx.decomp_table = torchao_kept_whole()
    if scheme == "dyn8":
        # The activations are rounded to int8 at run time: a last-bit
        # difference upstream (a decomposed layer norm, another summation
        # order) moves a value across a rounding boundary now and then, and
        # shifts an output by about one quantization step. PyTorch's own
        # decomposed decoder differs from its eager module by up to 4e-3 of
        # the output's scale.
        fx.check_tolerance = (1e-2, 2e-2)
    return fx


def torchao_kept_whole():
    table = torch.export.default_decompositions()
    for op in (torch.ops.torchao.choose_qparams_affine.default, torch.ops.torchao.quantize_affine.default,
               torch.ops.torchao.dequantize_affine.default):
        del table[op]
    return table


def all_fixtures():
    return OrderedDict(((b + "_" + s), (b, s)) for b in BASES for s in SCHEMES)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    table = all_fixtures()
    if args.list:
        for n, (b, s) in table.items():
            print("%-34s %s" % (n, fixture(b, s).description))
        return 0
    names = [n for n in args.only.split(",") if n] or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        ap.error("unknown fixture(s): %s" % ", ".join(unknown))
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    old = OrderedDict()
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f, object_pairs_hook=OrderedDict)
    built = OrderedDict()
    for n in names:
        built[n] = build_fixture(fixture(*table[n]), args.out)
        print("wrote %s/%s.pt2 (%d bytes)" % (args.out, n, os.path.getsize(os.path.join(args.out, n + ".pt2"))))
    manifest = OrderedDict()
    for n in table:
        if n in built or n in old:
            manifest[n] = built.get(n) or old[n]
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
