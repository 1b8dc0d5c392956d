"""One small module per torch.nn layer (and a few torch functions layers are
built from), with an example input: the per-op suite of
tests/torch/nn_layers_test.py, exported by torch.export as a user would.

Each entry: name -> (module factory, input factory). Inputs are small; shapes
follow each layer's documented (N, C, ...) convention.
"""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Fn(nn.Module):
    """A function of the inputs as a module (for torch functions with no layer)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def r(*shape):
    return lambda g: (torch.randn(*shape, generator=g),)


def pos(*shape):
    return lambda g: (torch.rand(*shape, generator=g) + 0.1,)


def ids(vocab, *shape):
    return lambda g: (torch.randint(0, vocab, shape, generator=g),)


def _layers():
    L = OrderedDict()
    x1, x2, x3 = r(2, 4, 9), r(2, 4, 9, 8), r(1, 4, 5, 6, 7)
    # convolutions
    L["conv1d"] = (lambda: nn.Conv1d(4, 6, 3, stride=2, padding=1), x1)
    L["conv1d_same"] = (lambda: nn.Conv1d(4, 6, 4, padding="same", dilation=2), x1)
    L["conv2d"] = (lambda: nn.Conv2d(4, 6, 3, padding=1, groups=2), x2)
    L["conv2d_same"] = (lambda: nn.Conv2d(4, 6, (3, 4), padding="same"), x2)
    L["conv2d_valid"] = (lambda: nn.Conv2d(4, 6, 3, padding="valid"), x2)
    L["conv2d_reflect"] = (lambda: nn.Conv2d(4, 6, 3, padding=1, padding_mode="reflect"), x2)
    L["conv2d_circular"] = (lambda: nn.Conv2d(4, 6, 3, padding=1, padding_mode="circular"), x2)
    L["conv3d"] = (lambda: nn.Conv3d(4, 3, 3, padding=1), x3)
    L["conv3d_same"] = (lambda: nn.Conv3d(4, 3, 2, padding="same"), x3)
    L["conv_transpose1d"] = (lambda: nn.ConvTranspose1d(4, 3, 3, stride=2, padding=1, output_padding=1), x1)
    L["conv_transpose2d"] = (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2), x2)
    L["conv_transpose3d"] = (lambda: nn.ConvTranspose3d(4, 2, 2, stride=2), x3)
    # pooling
    L["max_pool1d"] = (lambda: nn.MaxPool1d(3, stride=2), x1)
    L["max_pool2d"] = (lambda: nn.MaxPool2d(3, stride=2, padding=1), x2)
    L["max_pool2d_ceil"] = (lambda: nn.MaxPool2d(2, ceil_mode=True), x2)
    L["max_pool3d"] = (lambda: nn.MaxPool3d(2), x3)
    L["avg_pool1d"] = (lambda: nn.AvgPool1d(3, stride=2, padding=1), x1)
    L["avg_pool2d"] = (lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), x2)
    L["avg_pool3d"] = (lambda: nn.AvgPool3d(2, stride=1), x3)
    L["adaptive_avg_pool1d"] = (lambda: nn.AdaptiveAvgPool1d(4), x1)
    L["adaptive_avg_pool2d"] = (lambda: nn.AdaptiveAvgPool2d((3, 5)), x2)
    L["adaptive_avg_pool3d"] = (lambda: nn.AdaptiveAvgPool3d(2), x3)
    L["adaptive_max_pool1d"] = (lambda: nn.AdaptiveMaxPool1d(4), x1)
    L["adaptive_max_pool2d"] = (lambda: nn.AdaptiveMaxPool2d(3), x2)
    L["lp_pool2d"] = (lambda: nn.LPPool2d(2, 2), x2)
    # padding
    L["zero_pad2d"] = (lambda: nn.ZeroPad2d((1, 2, 0, 1)), x2)
    L["constant_pad1d"] = (lambda: nn.ConstantPad1d(2, 0.5), x1)
    L["reflection_pad1d"] = (lambda: nn.ReflectionPad1d(2), x1)
    L["reflection_pad2d"] = (lambda: nn.ReflectionPad2d((1, 2, 2, 1)), x2)
    L["reflection_pad3d"] = (lambda: nn.ReflectionPad3d(1), x3)
    L["replication_pad1d"] = (lambda: nn.ReplicationPad1d(3), x1)
    L["replication_pad2d"] = (lambda: nn.ReplicationPad2d((1, 0, 2, 1)), x2)
    L["replication_pad3d"] = (lambda: nn.ReplicationPad3d(1), x3)
    L["circular_pad2d"] = (lambda: nn.CircularPad2d(1), x2)
    # normalization
    L["batch_norm1d"] = (lambda: nn.BatchNorm1d(4).eval(), x1)
    L["batch_norm2d"] = (lambda: nn.BatchNorm2d(4).eval(), x2)
    L["batch_norm3d"] = (lambda: nn.BatchNorm3d(4).eval(), x3)
    L["instance_norm1d"] = (lambda: nn.InstanceNorm1d(4, affine=True), x1)
    L["instance_norm2d"] = (lambda: nn.InstanceNorm2d(4), x2)
    L["group_norm"] = (lambda: nn.GroupNorm(2, 4), x2)
    L["layer_norm"] = (lambda: nn.LayerNorm([9, 8]), x2)
    L["rms_norm"] = (lambda: nn.RMSNorm(8), x2)
    L["local_response_norm"] = (lambda: nn.LocalResponseNorm(3), x2)
    # activations
    for name, mk in [("relu", nn.ReLU), ("relu6", nn.ReLU6), ("leaky_relu", lambda: nn.LeakyReLU(0.1)), ("elu", nn.ELU),
                     ("selu", nn.SELU), ("celu", nn.CELU), ("gelu", nn.GELU), ("gelu_tanh", lambda: nn.GELU("tanh")),
                     ("silu", nn.SiLU), ("mish", nn.Mish), ("sigmoid", nn.Sigmoid), ("tanh", nn.Tanh),
                     ("hardtanh", nn.Hardtanh), ("hardswish", nn.Hardswish), ("hardsigmoid", nn.Hardsigmoid),
                     ("hardshrink", nn.Hardshrink), ("softshrink", nn.Softshrink), ("tanhshrink", nn.Tanhshrink),
                     ("softplus", nn.Softplus), ("softsign", nn.Softsign), ("logsigmoid", nn.LogSigmoid),
                     ("prelu", lambda: nn.PReLU(4)), ("threshold", lambda: nn.Threshold(0.1, 20.0)),
                     ("glu", nn.GLU), ("softmax", lambda: nn.Softmax(dim=1)), ("log_softmax", lambda: nn.LogSoftmax(dim=1)),
                     ("softmin", lambda: nn.Softmin(dim=1)), ("softmax2d", nn.Softmax2d)]:
        L[name] = (mk, x2)
    # linear, embedding, attention, recurrent
    L["linear"] = (lambda: nn.Linear(8, 5), x2)
    L["bilinear"] = (lambda: nn.Bilinear(8, 6, 5), lambda g: (torch.randn(3, 8, generator=g), torch.randn(3, 6, generator=g)))
    L["embedding"] = (lambda: nn.Embedding(20, 6, padding_idx=0), ids(20, 2, 7))
    L["embedding_bag"] = (lambda: nn.EmbeddingBag(20, 6, mode="mean"), ids(20, 3, 4))
    L["multihead_attention"] = (lambda: Fn_mha(), r(2, 5, 8))
    L["transformer_encoder_layer"] = (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).eval(), r(2, 5, 8))
    L["transformer_decoder_layer"] = (lambda: Fn_decoder(), r(2, 5, 8))
    L["lstm"] = (lambda: Fn_rnn(nn.LSTM(8, 6, num_layers=2, batch_first=True)), r(2, 5, 8))
    L["gru"] = (lambda: Fn_rnn(nn.GRU(8, 6, batch_first=True, bidirectional=True)), r(2, 5, 8))
    L["rnn"] = (lambda: Fn_rnn(nn.RNN(8, 6, batch_first=True)), r(2, 5, 8))
    # shape and misc layers
    L["upsample_nearest"] = (lambda: nn.Upsample(scale_factor=2, mode="nearest"), x2)
    L["upsample_bilinear"] = (lambda: nn.Upsample(size=(5, 11), mode="bilinear", align_corners=False), x2)
    L["upsample_bilinear_ac"] = (lambda: nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=True), x2)
    L["upsample_bicubic"] = (lambda: nn.Upsample(scale_factor=2, mode="bicubic"), x2)
    L["upsample_linear"] = (lambda: nn.Upsample(scale_factor=2, mode="linear"), x1)
    L["upsample_trilinear"] = (lambda: nn.Upsample(scale_factor=2, mode="trilinear"), x3)
    L["pixel_shuffle"] = (lambda: nn.PixelShuffle(2), r(1, 8, 3, 4))
    L["pixel_unshuffle"] = (lambda: nn.PixelUnshuffle(2), r(1, 2, 4, 6))
    L["channel_shuffle"] = (lambda: nn.ChannelShuffle(2), x2)
    L["flatten"] = (lambda: nn.Flatten(), x2)
    L["unflatten"] = (lambda: nn.Unflatten(1, (2, 2)), x2)
    L["fold"] = (lambda: nn.Fold((4, 5), 2), r(1, 12, 12))
    L["unfold"] = (lambda: nn.Unfold(2, padding=1), x2)
    L["cosine_similarity"] = (lambda: nn.CosineSimilarity(dim=1), lambda g: (torch.randn(3, 8, generator=g), torch.randn(3, 8, generator=g)))
    L["pairwise_distance"] = (lambda: nn.PairwiseDistance(), lambda g: (torch.randn(3, 8, generator=g), torch.randn(3, 8, generator=g)))
    L["dropout_eval"] = (lambda: nn.Dropout(0.3).eval(), x2)
    L["identity"] = (lambda: nn.Identity(), x2)
    # torch functions common in model code
    L["cumsum"] = (lambda: Fn(lambda x: torch.cumsum(x, 1)), x2)
    L["cumprod"] = (lambda: Fn(lambda x: torch.cumprod(x, -1)), x2)
    L["sort_topk"] = (lambda: Fn(lambda x: (torch.sort(x, -1)[0], torch.topk(x, 3, 1)[1])), x2)
    L["flip_roll"] = (lambda: Fn(lambda x: torch.flip(x, [1, 3]) + torch.roll(x, 2, 2)), x2)
    L["repeat"] = (lambda: Fn(lambda x: x.repeat(1, 2, 1, 3)), x2)
    L["repeat_interleave"] = (lambda: Fn(lambda x: x.repeat_interleave(2, dim=1)), x2)
    L["tril_triu"] = (lambda: Fn(lambda x: torch.tril(x) - torch.triu(x, 1)), x2)
    L["where_masked_fill"] = (lambda: Fn(lambda x: torch.where(x > 0, x, 0.5).masked_fill(x < -1, -3.0)), x2)
    L["trig"] = (lambda: Fn(lambda x: torch.tan(x) + torch.atan(x) + torch.sinh(x) + torch.asinh(x)), x2)
    L["inverse_trig"] = (lambda: Fn(lambda x: torch.asin(x) + torch.acos(x) + torch.atanh(x * 0.9)), lambda g: (torch.rand(2, 5, generator=g) * 1.8 - 0.9,))
    L["log10_exp2"] = (lambda: Fn(lambda x: torch.log10(x) + torch.exp2(x)), pos(2, 5))
    L["isnan_nan_to_num"] = (lambda: Fn(lambda x: torch.nan_to_num(torch.log(x - 0.5)) + torch.isnan(x).float()), pos(2, 5))
    L["prod"] = (lambda: Fn(lambda x: torch.prod(x, 1)), x2)
    L["norm"] = (lambda: Fn(lambda x: torch.linalg.vector_norm(x, dim=-1) + x.norm(p=1, dim=-1)), x2)
    L["std_var"] = (lambda: Fn(lambda x: torch.std(x, 1) + torch.var(x, 1, keepdim=True).squeeze(1)), x2)
    L["logsumexp"] = (lambda: Fn(lambda x: torch.logsumexp(x, 1)), x2)
    L["einsum"] = (lambda: Fn(lambda a, b: torch.einsum("bij,bjk->bik", a, b)), lambda g: (torch.randn(2, 3, 4, generator=g), torch.randn(2, 4, 5, generator=g)))
    L["outer_cross"] = (lambda: Fn(lambda a, b: torch.outer(a[0], b[0]).sum() + torch.linalg.cross(a, b)), lambda g: (torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)))
    L["scatter_gather"] = (lambda: Fn(lambda x, i: torch.zeros(3, 5).scatter_add(1, i, x).gather(1, i)), lambda g: (torch.randn(3, 4, generator=g), torch.randint(0, 5, (3, 4), generator=g)))
    L["argmax_argmin"] = (lambda: Fn(lambda x: torch.argmax(x, 1) + torch.argmin(x, 1)), x2)
    L["clamp_lerp"] = (lambda: Fn(lambda a, b: torch.lerp(a, b, 0.3).clamp(-0.5, 0.5) + torch.addcmul(a, a, b, value=0.5)), lambda g: (torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)))
    L["bitwise_logical"] = (lambda: Fn(lambda x: ((x > 0) & (x < 1) | (x < -1)) ^ (x > 0.5)), x2)
    L["grid_sample"] = (lambda: Fn(lambda x, grid: F.grid_sample(x, grid, align_corners=False)), lambda g: (torch.randn(1, 2, 5, 6, generator=g), torch.rand(1, 3, 4, 2, generator=g) * 2 - 1))
    L["interpolate_nearest_exact"] = (lambda: Fn(lambda x: F.interpolate(x, scale_factor=1.5, mode="nearest-exact")), x2)
    L["one_hot"] = (lambda: Fn(lambda i: F.one_hot(i, 6)), ids(6, 2, 5))
    L["cdist"] = (lambda: Fn(lambda a, b: torch.cdist(a, b)), lambda g: (torch.randn(2, 4, 3, generator=g), torch.randn(2, 5, 3, generator=g)))
    L["masked_select_nonzero"] = (lambda: Fn(lambda x: torch.nonzero(x > 0)), x2)
    L["scan"] = (lambda: Fn_scan(), lambda g: (torch.randn(2, 3, generator=g), torch.randn(4, 2, 3, generator=g)))
    L["map"] = (lambda: Fn(lambda xs, y: _cf_map(lambda x, y: x.sin() + y, xs, y)), lambda g: (torch.randn(4, 3, generator=g), torch.randn(3, generator=g)))
    L["diagonal_trace"] = (lambda: Fn(lambda x: torch.diagonal(x, 0, -2, -1) * 2), r(2, 4, 4))
    return L


def _cf_map(f, xs, *args):
    from functorch.experimental.control_flow import map as cf_map

    return cf_map(f, xs, *args)


class Fn_scan(nn.Module):
    """torch's scan (higher_order.scan): a tanh RNN cell over the leading dim."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 3) * 0.5)

    def forward(self, init, xs):
        from torch._higher_order_ops.scan import scan

        def combine(c, x):
            n = torch.tanh(c @ self.w + x)
            return n, n * 2

        return scan(combine, init, xs)


class Fn_mha(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class Fn_decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).eval()

    def forward(self, x):
        return self.layer(x, x * 0.5)


class Fn_rnn(nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


LAYERS = _layers()
