"""The models `make bench-peers` measures (issue 17's zoo).

Every entry is one of Lathe's fixture models rebuilt exactly as
tools/export_fixtures.py builds it (same class, same per-name seed, same
eval/train mode), at the shape the benchmark asks for, plus a plain
4096x4096 ``nn.Linear`` generated here. ``check`` names the committed
fixture reference call (fixtures/<name>.ref/<method>/call_0) the rebuilt
module must reproduce, which proves it is the fixture's model and not a
look-alike.

Every peer runs the same module at the same static shape: Lathe gets it
through ``torch.export`` (+ ``run_decompositions()`` where the fixture uses
that form), ExecuTorch through the same export, ONNX Runtime through
``torch.onnx.export``, PyTorch eagerly.
"""

import copy
import zlib
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import torch
import torch.nn as nn

from torch_fixtures.models import FIXTURES_BY_NAME, build_convnet


@dataclass
class Model:
    name: str  # row label, also the folder name under the work directory
    about: str
    build: Callable[[], nn.Module]  # eval module whose forward is the measured call
    inputs: Callable[[], Tuple[torch.Tensor, ...]]
    decompose: bool = False  # run_decompositions() before writing the .pt2 (as the fixture)
    flops: int = 0  # multiply-adds x 2 per call, where the model is one GEMM
    weight_bytes: int = 0  # bytes a call must read, where that bounds it (a batch-1 linear reads its weight once)
    check: Optional[Tuple[str, str]] = None  # (fixture, method) whose call_0 the module must reproduce
    floor: bool = False  # measures a runtime's per-call overhead, not a model (no target applies)


def _seed(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def _frozen(m: nn.Module) -> nn.Module:
    """Inference: no parameter requires grad (an exporter would otherwise
    refuse the decoder's in-place cache update on a leaf that does)."""
    for p in m.parameters():
        p.requires_grad_(False)
    return m


def _fixture_module(fixture: str) -> nn.Module:
    fx = FIXTURES_BY_NAME[fixture]
    torch.manual_seed(fx.seed)
    return _frozen(fx.build().train(fx.train))


def _randn(name: str, *shape):
    def make():
        g = torch.Generator().manual_seed(_seed(name))
        return (torch.randn(*shape, generator=g),)

    return make


class _Method(nn.Module):
    """``module.<attr>`` as ``forward`` (the exporters and runtimes all
    take a module's forward); parameters and buffers are shared."""

    def __init__(self, module: nn.Module, attr: str):
        super().__init__()
        self.inner = module
        self.attr = attr

    def forward(self, *args):
        return getattr(self.inner, self.attr)(*args)


DECODE_PREFIX = 16  # tokens in the KV cache before the measured decode step


def _decoder_decode_step() -> nn.Module:
    """decoder_lm with its KV cache filled by a prefill of DECODE_PREFIX
    tokens; the measured call decodes token DECODE_PREFIX + 1. The cache is
    a buffer, so every exporter captures the filled state as the initial
    value, and repeating the call rewrites the same cache row (idempotent)."""
    m = _fixture_module("decoder_lm").eval()
    g = torch.Generator().manual_seed(_seed("decoder_lm.prefill"))
    with torch.no_grad():
        m.prefill(torch.randint(0, 64, (1, DECODE_PREFIX), generator=g))
    return _Method(m, "decode").eval()


def _decode_inputs():
    return (torch.tensor([[7]], dtype=torch.int64), torch.tensor([DECODE_PREFIX], dtype=torch.int64))


def _linear4096() -> nn.Module:
    torch.manual_seed(_seed("linear4096"))
    return _frozen(nn.Linear(4096, 4096).eval())


class _AddOne(nn.Module):
    def forward(self, x):
        return x + 1.0


def zoo() -> List[Model]:
    return [
        Model("mlp", "fixtures/mlp: 64->128->128->10 MLP, batch 1", lambda: _fixture_module("mlp").eval(),
              _randn("mlp", 1, 64), decompose=True, check=("mlp", "model")),
        Model("transformer_encoder_b1", "fixtures/transformer_encoder (2 layers, d 64, SDPA), batch 1 x seq 128",
              lambda: _fixture_module("transformer_encoder").eval(), _randn("enc1", 1, 128, 64),
              check=("transformer_encoder", "model")),
        Model("transformer_encoder_b8", "fixtures/transformer_encoder, batch 8 x seq 128",
              lambda: _fixture_module("transformer_encoder").eval(), _randn("enc8", 8, 128, 64)),
        Model("convnet_224", "fixtures/convnet (MobileNetV2-style) at 1x3x224x224 (the fixture is 64x64)",
              lambda: _fixture_module("convnet").eval(), _randn("convnet", 1, 3, 224, 224),
              check=("convnet", "model")),
        Model("tts_duration_predictor", "fixtures/tts_duration_predictor, 1x64x32",
              lambda: _fixture_module("tts_duration_predictor").eval(), _randn("tts", 1, 64, 32),
              decompose=True, check=("tts_duration_predictor", "model")),
        Model("decoder_lm_decode", "fixtures/decoder_lm decode step: one token after %d cached" % DECODE_PREFIX,
              _decoder_decode_step, _decode_inputs, decompose=True),
        Model("linear4096_b1", "nn.Linear(4096, 4096) with bias, batch 1", _linear4096, _randn("lin1", 1, 4096),
              flops=2 * 1 * 4096 * 4096, weight_bytes=4 * 4096 * 4096),
        Model("linear4096_b64", "nn.Linear(4096, 4096) with bias, batch 64", _linear4096, _randn("lin64", 64, 4096),
              flops=2 * 64 * 4096 * 4096),
        Model("mlp_int8", "fixtures/mlp_int8: the mlp, weights int8 per channel (dequantize_per_channel), batch 1",
              lambda: _fixture_module("mlp_int8").eval(), _randn("mlp_int8", 1, 64), decompose=True,
              check=("mlp_int8", "model")),
        Model("call_floor", "x + 1 on 8 floats: what one call costs each runtime (its Python binding included, "
              "for ExecuTorch and ONNX Runtime), not a model", _AddOne, _randn("floor", 1, 8), floor=True),
    ]


def zoo_by_name():
    return {m.name: m for m in zoo()}


def clone_inputs(inputs):
    return tuple(copy.deepcopy(t) for t in inputs)
