"""The models exported with real ``torch.export`` (PyTorch 2.13).

The models shared with the synthesized older generations live in
``lathe_fixtures/models.py`` and are imported from there, so both paths
build the same modules from the same seeds. The models here are the ones
only a real exporter can produce: dynamic shapes, higher-order ops
(``torch.cond``), ``auto_functionalized`` custom ops, in-place KV caches,
training-mode batch norm.
"""

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

from lathe_fixtures import models as shared
from lathe_fixtures import quant


@dataclass
class Method:
    """One exported program of a fixture.

    ``calls(g)`` returns the positional arguments of each reference call, in
    order; the first call's arguments are the export example. Calls run back
    to back on one module, so mutated buffers carry over. ``dynamic`` maps an
    input position to {dim: (name, min, max)}; the calls of a dynamic method
    use three different sizes inside the range."""

    attr: str  # module attribute traced ("forward", "encode", ...)
    calls: Callable[[torch.Generator], List[Tuple]]
    dynamic: Dict[int, Dict[int, Tuple[str, int, Optional[int]]]] = field(default_factory=dict)


@dataclass
class Fixture:
    name: str
    description: str
    build: Callable[[], nn.Module]
    methods: "OrderedDict[str, Method]"
    # run_decompositions() after export: the core-ATen form (addmm with a
    # permuted weight) that the linear rewrite is meant for.
    decompose: bool = False
    train: bool = False
    # Lathe reads, transforms and writes it but has no kernel for it.
    runnable: bool = True

    @property
    def seed(self) -> int:
        import zlib

        return zlib.crc32(self.name.encode()) & 0x7FFFFFFF


def randn_calls(*shapes):
    """One call per shape: a single float input of that shape."""

    def make(g: torch.Generator):
        return [(torch.randn(*s, generator=g),) for s in shapes]

    return make


# -- MobileNetV2-style convnet ---------------------------------------------------
class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.block = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.Hardswish(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.Hardswish(),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        )

    def forward(self, x):
        y = self.block(x)
        return x + y if self.use_res else y


class ConvNet(nn.Module):
    """MobileNetV2 layout at reduced width: stem conv, inverted residuals
    (1x1 expand, 3x3 depthwise, 1x1 project, eval batch norm, hardswish),
    global average pool, linear classifier."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        cfg = [(16, 16, 1, 1), (16, 24, 2, 4), (24, 24, 1, 4), (24, 32, 2, 4), (32, 32, 1, 4), (32, 64, 2, 4)]
        self.blocks = nn.Sequential(*[InvertedResidual(*c) for c in cfg])
        self.head = nn.Sequential(nn.Conv2d(64, 128, 1, bias=False), nn.BatchNorm2d(128), nn.Hardswish())
        self.classifier = nn.Linear(128, num_classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.classifier(x.mean((2, 3)))


def build_convnet():
    m = ConvNet()
    # Non-trivial running statistics, so folding batch norm is checked.
    g = torch.Generator().manual_seed(7)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
    return m


# -- transformer encoder with SDPA, dynamic batch and sequence ----------------------
class EncoderLayer(nn.Module):
    def __init__(self, d=64, heads=4, ff=128):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)

    def forward(self, x):
        B, T, C = x.shape
        H = self.heads
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, H, C // H).permute(2, 0, 3, 1, 4).unbind(0)
        y = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TransformerEncoder(nn.Module):
    def __init__(self, layers=2, d=64, ff=128):
        super().__init__()
        self.layers = nn.ModuleList([EncoderLayer(d=d, ff=ff) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


# -- decoder LM with a KV cache in buffers, prefill + decode ------------------------
class DecoderLM(nn.Module):
    """Two-layer decoder. ``prefill(tokens[1, T])`` writes the first T cache
    rows and returns logits for every position; ``decode(token[1, 1],
    input_pos[1])`` writes one cache row in place (index_copy_) and attends
    over the rows written so far."""

    def __init__(self, vocab=64, d=32, heads=2, layers=2, max_seq=48):
        super().__init__()
        self.heads, self.max_seq, self.n_layers = heads, max_seq, layers
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_seq, d)
        self.ln = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.qkv = nn.ModuleList([nn.Linear(d, 3 * d) for _ in range(layers)])
        self.out = nn.ModuleList([nn.Linear(d, d) for _ in range(layers)])
        self.head = nn.Linear(d, vocab, bias=False)
        hd = d // heads
        self.register_buffer("k_cache", torch.zeros(layers, 1, heads, max_seq, hd))
        self.register_buffer("v_cache", torch.zeros(layers, 1, heads, max_seq, hd))

    def _qkv(self, i, x):
        B, T, C = x.shape
        q, k, v = self.qkv[i](self.ln[i](x)).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        return q, k, v

    def prefill(self, tokens):
        T = tokens.shape[1]
        x = self.embed(tokens) + self.pos(torch.arange(T))
        for i in range(self.n_layers):
            q, k, v = self._qkv(i, x)
            self.k_cache[i, :, :, :T] = k
            self.v_cache[i, :, :, :T] = v
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.out[i](y.transpose(1, 2).reshape(1, T, -1))
        return self.head(x)

    def decode(self, token, input_pos):
        x = self.embed(token) + self.pos(input_pos).unsqueeze(0)
        mask = (torch.arange(self.max_seq) <= input_pos).view(1, 1, 1, self.max_seq)
        for i in range(self.n_layers):
            q, k, v = self._qkv(i, x)
            self.k_cache[i].index_copy_(2, input_pos, k)
            self.v_cache[i].index_copy_(2, input_pos, v)
            y = F.scaled_dot_product_attention(q, self.k_cache[i], self.v_cache[i], attn_mask=mask)
            x = x + self.out[i](y.transpose(1, 2).reshape(1, 1, -1))
        return self.head(x)


def _prefill_calls(g):
    return [(torch.randint(0, 64, (1, t), generator=g),) for t in (6, 3, 17)]


def _decode_calls(g):
    return [(torch.randint(0, 64, (1, 1), generator=g), torch.tensor([p])) for p in (0, 1, 2)]


# -- torch.cond -------------------------------------------------------------------
class CondModel(nn.Module):
    """Branches on the sign of the input's sum; each branch has its own
    parameters (lifted into the top-level signature) and its own ops."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Linear(8, 8)
        self.neg = nn.Linear(8, 8)

    def forward(self, x):
        def true_fn(x):
            return torch.relu(self.pos(x))

        def false_fn(x):
            return torch.sigmoid(self.neg(x)) * 2.0

        return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


def _cond_calls(g):
    # positive sum, negative sum, and a third batch size
    a = torch.rand(4, 8, generator=g) + 0.1
    b = -(torch.rand(2, 8, generator=g) + 0.1)
    c = torch.randn(7, 8, generator=g)
    return [(a,), (b,), (c,)]


# -- a custom op that mutates its input ---------------------------------------------
@torch.library.custom_op("lathe_fixtures::scaled_accumulate_", mutates_args=("acc",))
def scaled_accumulate_(acc: torch.Tensor, x: torch.Tensor, scale: float) -> None:
    acc.add_(x * scale)


@scaled_accumulate_.register_fake
def _(acc, x, scale):
    return None


class CustomOpMutation(nn.Module):
    """Calls ``lathe_fixtures::scaled_accumulate_`` on a buffer; export
    functionalizes it as ``auto_functionalized_v2`` and a buffer mutation."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("acc", torch.zeros(2, 4))

    def forward(self, x):
        y = self.proj(x)
        scaled_accumulate_(self.acc, y, 0.5)
        return y + self.acc


# -- training-mode batch norm -------------------------------------------------------
class TrainBatchNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def _quantized(base_build, scheme):
    return lambda: quant.quantize_linears(base_build(), scheme)


def _single(calls, dynamic=None):
    return OrderedDict(model=Method("forward", calls, dynamic or {}))


FIXTURES: List[Fixture] = [
    Fixture("simple_linear", "linear-rewrite.md s1: Linear(3,3) on a [2,3] input, returns a 1-tuple",
            shared.SimpleLinear, _single(randn_calls((2, 3))), decompose=True),
    Fixture("mlp", "3-layer MLP 64->128->128->10 with ReLU; batch is a Dim (1..64)",
            shared.MLP, _single(randn_calls((2, 64), (1, 64), (37, 64)), {0: {0: ("batch", 1, 64)}}), decompose=True),
    Fixture("convnet", "MobileNetV2-style convnet (inverted residuals, depthwise conv, eval batch norm, hardswish) "
            "on 1x3x64x64", build_convnet, _single(randn_calls((1, 3, 64, 64)))),
    Fixture("transformer_block", "pre-norm encoder block from Linear/LayerNorm/softmax (causal mask buffer, "
            "tensor constant, split, gelu tanh), seq 8", shared.TransformerBlock,
            _single(randn_calls((1, 8, 64))), decompose=True),
    Fixture("transformer_encoder", "2-layer encoder with scaled_dot_product_attention, layer norm and GELU; "
            "batch (1..16) and sequence (2..128) are Dims", TransformerEncoder,
            _single(randn_calls((2, 16, 64), (1, 5, 64), (3, 33, 64)),
                    {0: {0: ("batch", 1, 16), 1: ("seq", 2, 128)}})),
    Fixture("buffer_mutation", "Linear + int64 call counter + running mean, both buffers updated in place each call",
            shared.RunningStats, _single(randn_calls((3, 4), (3, 4), (3, 4))), decompose=True),
    Fixture("tts_duration_predictor", "linear-rewrite.md s2: 2 parameter matmuls + 1 mm with a runtime "
            "permute(squeeze(...)) operand", shared.DurationPredictor, _single(randn_calls((1, 64, 32))),
            decompose=True),
    Fixture("two_methods", "autoencoder with methods encode and decode (no forward), two programs in one archive "
            "(package_pt2)", shared.AutoEncoder,
            OrderedDict(encode=Method("encode", randn_calls((2, 16))), decode=Method("decode", randn_calls((2, 4)))),
            decompose=True),
    Fixture("tied_embedding", "int64 tokens; embedding tied to the output head; a buffer aliasing another buffer's "
            "storage", shared.TiedEmbedding,
            _single(lambda g: [(torch.randint(0, 32, (1, 6), generator=g, dtype=torch.int64),)]), decompose=True),
    Fixture("computed_weight", "Linear whose weight is computed from parameters only (w = p1 @ p2.T)",
            shared.ComputedWeight, _single(randn_calls((2, 6))), decompose=True),
    Fixture("decoder_lm", "2-layer decoder LM, KV cache in buffers updated in place; methods prefill "
            "(tokens [1, T], T a Dim 2..32) and decode (one token at input_pos)", DecoderLM,
            OrderedDict(prefill=Method("prefill", _prefill_calls, {0: {1: ("seq", 2, 32)}}),
                        decode=Method("decode", _decode_calls)), decompose=True),
    Fixture("cond", "torch.cond on the sign of the input's sum, a Linear in each branch; batch is a Dim",
            CondModel, _single(_cond_calls, {0: {0: ("batch", 1, 32)}})),
    Fixture("custom_op_mutation", "custom op lathe_fixtures::scaled_accumulate_ mutating a buffer "
            "(auto_functionalized_v2)", CustomOpMutation, _single(randn_calls((2, 4), (2, 4))), decompose=True, runnable=False),
    Fixture("batchnorm_train", "Conv2d + BatchNorm2d in training mode: running stats and the batch counter are "
            "buffer mutations", TrainBatchNorm, _single(randn_calls((2, 3, 8, 8), (2, 3, 8, 8))), decompose=True, train=True),
    Fixture("mlp_int8", "mlp with every Linear weight-only quantized, int8 per channel (dequantize_per_channel)",
            _quantized(shared.MLP, "int8"), _single(randn_calls((1, 64))), decompose=True),
    Fixture("mlp_int4g32", "mlp with every Linear weight-only quantized, 4-bit groups of 32 "
            "(dequantize_per_channel_group)", _quantized(shared.MLP, "int4g32"), _single(randn_calls((1, 64))),
            decompose=True),
    Fixture("transformer_block_int8", "transformer_block with every Linear weight-only quantized, int8 per channel",
            _quantized(shared.TransformerBlock, "int8"), _single(randn_calls((1, 8, 64))), decompose=True),
    Fixture("transformer_block_int4g32", "transformer_block with every Linear weight-only quantized, 4-bit groups "
            "of 32", _quantized(shared.TransformerBlock, "int4g32"), _single(randn_calls((1, 8, 64))),
            decompose=True),
]

FIXTURES_BY_NAME: Dict[str, Fixture] = {f.name: f for f in FIXTURES}
