"""The fixture models. Each fixture is built under its own fixed seed, so
regeneration is deterministic."""

import math
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Fixture:
    name: str
    description: str
    build: Callable[[], nn.Module]
    # program name (models/<name>.json) -> function(generator, call index)
    # -> positional args
    methods: "OrderedDict[str, Callable[[torch.Generator, int], Tuple]]"
    calls: int = 1  # reference calls per method (state carried between them)
    prune_unused_state: bool = False

    @staticmethod
    def attr_of(program: str) -> str:
        """Module attribute a program is traced from: single-method archives
        name their program ``model`` (as torch.export.save does) and trace
        ``forward``."""
        return "forward" if program == "model" else program

    @property
    def seed(self) -> int:
        return zlib.crc32(self.name.encode()) & 0x7FFFFFFF


def _randn(*shape):
    def make(g: torch.Generator, k: int):
        return (torch.randn(*shape, generator=g),)

    return make


# 1. linear-rewrite.md section 1 ------------------------------------------------
class SimpleLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, arg):
        return (self.linear(arg),)


# 2. MLP ---------------------------------------------------------------------------
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


# 3. convnet -------------------------------------------------------------------------
def build_convnet() -> nn.Module:
    import torchvision

    # Random init, reduced width and 10 classes keep the weights ~1.6 MB.
    return torchvision.models.mobilenet_v3_small(weights=None, width_mult=0.5, num_classes=10)


# 4. transformer block -------------------------------------------------------------
class TransformerBlock(nn.Module):
    """Pre-norm encoder block written from Linear/LayerNorm/softmax, so the
    trace is plain ATen (no fused MHA fast path). Exercises a multi-output
    op with unused outputs (native_layer_norm), a list-returning op (split),
    a non-persistent bool buffer (causal mask), a lifted tensor constant
    (attention scale), a kwarg-only string argument (gelu approximate) and a
    -inf scalar."""

    def __init__(self, d_model=64, n_heads=4, d_ff=128, max_seq=8):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        mask = torch.ones(max_seq, max_seq, dtype=torch.bool).triu(1)
        self.register_buffer("causal_mask", mask, persistent=False)
        # A plain tensor attribute: torch.export lifts it as a tensor constant.
        self.attn_scale = torch.tensor(1.0 / math.sqrt(d_model // n_heads))

    def forward(self, x):
        B, T, C = x.shape
        H = self.n_heads
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q = q.view(B, T, H, C // H).transpose(1, 2)
        k = k.view(B, T, H, C // H).transpose(1, 2)
        v = v.view(B, T, H, C // H).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) * self.attn_scale
        att = att.masked_fill(self.causal_mask[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return x


# 5. buffer mutation ---------------------------------------------------------------
class RunningStats(nn.Module):
    """Two buffers updated in place on every call: an int64 call counter and
    an exponential running mean of the input rows. The output depends on
    both, so every call gives a different answer for the same input."""

    def __init__(self, d=4):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("running_mean", torch.zeros(d))

    def forward(self, x):
        self.count.add_(1)
        self.running_mean.mul_(0.9).add_(x.mean(0), alpha=0.1)
        return self.proj(x - self.running_mean) * self.count


# 6. TTS duration predictor (linear-rewrite.md section 2) --------------------------
class DurationPredictor(nn.Module):
    """Two parameter Linears (-> addmm with t(weight)) and one mm whose
    second operand is permute(squeeze(...)) of an activation: a 64x64 matrix
    computed per call, which a linear rewrite must leave alone."""

    def __init__(self, d_in=32, frames=64):
        super().__init__()
        self.encoder = nn.Linear(d_in, frames)
        self.duration = nn.Linear(frames, 1)

    def forward(self, x):  # x: [1, 64, 32]
        h = torch.relu(self.encoder(x.squeeze(0)))  # [64, 64]
        g = torch.tanh(h).unsqueeze(0)  # [1, 64, 64]
        attn = torch.mm(h, g.squeeze(0).permute(1, 0))  # runtime "weight"
        return self.duration(attn)  # [64, 1]


# 7. two methods -------------------------------------------------------------------
class AutoEncoder(nn.Module):
    """No ``forward``: two methods, ``encode`` and ``decode``."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Linear(16, 8)
        self.enc2 = nn.Linear(8, 4)
        self.dec1 = nn.Linear(4, 8)
        self.dec2 = nn.Linear(8, 16)

    def encode(self, x):
        return self.enc2(torch.relu(self.enc1(x)))

    def decode(self, z):
        return torch.sigmoid(self.dec2(torch.relu(self.dec1(z))))


# 8. tied weights and aliased buffers ------------------------------------------------
class TiedEmbedding(nn.Module):
    """int64 token input; output head tied to the embedding (one parameter,
    two state_dict names, one weight file); a persistent buffer that is a
    view into another buffer's storage (shared file, storage_offset 64)."""

    def __init__(self, vocab=32, d=16, max_len=10, seq=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.embed.weight
        table = torch.randn(max_len, d)
        self.register_buffer("pos_table", table)
        self.register_buffer("pos_tail", table[max_len - seq :])

    def forward(self, tokens):  # [1, 6] int64
        T = tokens.shape[1]
        h = self.embed(tokens) + 0.5 * self.pos_table[:T] + self.pos_tail
        return self.head(h)


# 9. a weight computed from parameters only (constant propagation) ----------------
class ComputedWeight(nn.Module):
    """A Linear whose weight is computed from two parameters, w = p1 @ p2.T:
    traced as mm(p1, t(p2)) feeding t + addmm. Nothing in it depends on the
    input, so constant_propagation folds w into a lifted constant and
    addmm_mm_to_linear can then rewrite the addmm."""

    def __init__(self, d_in=6, d_out=8, rank=4):
        super().__init__()
        self.p1 = nn.Parameter(torch.randn(d_out, rank))
        self.p2 = nn.Parameter(torch.randn(d_in, rank))
        self.bias = nn.Parameter(torch.randn(d_out))

    def forward(self, x):  # x: [2, 6]
        w = self.p1 @ self.p2.T  # [8, 6], from parameters only
        return F.linear(x, w, self.bias)  # [2, 8]


def _tokens(g: torch.Generator, k: int):
    return (torch.randint(0, 32, (1, 6), generator=g, dtype=torch.int64),)


FIXTURES: List[Fixture] = [
    Fixture(
        "simple_linear",
        "linear-rewrite.md s1: Linear(3,3) on a [2,3] input, returns a 1-tuple",
        SimpleLinear,
        OrderedDict(model=_randn(2, 3)),
    ),
    Fixture(
        "mlp",
        "3-layer MLP 64->128->128->10 with ReLU, batch 1",
        MLP,
        OrderedDict(model=_randn(1, 64)),
    ),
    Fixture(
        "convnet",
        "torchvision mobilenet_v3_small (width 0.5, 10 classes, random init, eval) on 1x3x64x64",
        build_convnet,
        OrderedDict(model=_randn(1, 3, 64, 64)),
    ),
    Fixture(
        "transformer_block",
        "pre-norm encoder block (d_model 64, 4 heads, ff 128) from Linear/LayerNorm/softmax, seq 8",
        TransformerBlock,
        OrderedDict(model=_randn(1, 8, 64)),
    ),
    Fixture(
        "buffer_mutation",
        "Linear + int64 call counter + running mean, both buffers updated in place each call",
        RunningStats,
        OrderedDict(model=_randn(3, 4)),
        calls=3,
    ),
    Fixture(
        "tts_duration_predictor",
        "linear-rewrite.md s2: 2 parameter addmm + 1 mm with a runtime permute(squeeze(...)) operand",
        DurationPredictor,
        OrderedDict(model=_randn(1, 64, 32)),
    ),
    Fixture(
        "two_methods",
        "autoencoder with methods encode and decode (no forward); each method its own program and weights",
        AutoEncoder,
        OrderedDict(encode=_randn(2, 16), decode=_randn(2, 4)),
        prune_unused_state=True,
    ),
    Fixture(
        "tied_embedding",
        "int64 tokens; embedding tied to the output head; a buffer aliasing another buffer's storage",
        TiedEmbedding,
        OrderedDict(model=_tokens),
    ),
    Fixture(
        "computed_weight",
        "Linear whose weight is computed from parameters only (w = p1 @ p2.T): constant propagation folds it",
        ComputedWeight,
        OrderedDict(model=_randn(2, 6)),
    ),
]

FIXTURES_BY_NAME: Dict[str, Fixture] = {f.name: f for f in FIXTURES}
