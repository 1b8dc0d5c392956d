"""Weight-only quantized variants of the fixture models (--quantize-weights).

torch 1.13 has no ``quantized_decomposed`` ops (PyTorch 2.x registers them in
``torch/ao/quantization/fx/_decomposed.py``). This module defines the ones a
weight-only quantized program uses, with **exactly PyTorch 2.x's schemas**,
so traced graphs carry the same targets and argument names a real export
does, and implements them the way ``_decomposed.py`` does (same operations,
same dtypes at each step):

    dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis,
        int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor
    dequantize_per_channel_group(Tensor input, Tensor scales, Tensor? zero_points,
        int quant_min, int quant_max, ScalarType dtype, int group_size,
        ScalarType output_dtype) -> Tensor

``quantize_linears(module, scheme)`` replaces every ``nn.Linear`` by a
``QuantLinear`` holding the quantized weight as buffers (``weight_int8``,
``weight_scales``, ``weight_zero_points``) and computing
``F.linear(x, dequantize(...), bias)``; traced, that is
``t(dequantize_per_channel(...))`` feeding ``addmm``/``mm``, as an exported
weight-only quantized model looks before any fusion. Scales are symmetric,
computed from the float weights:

* ``int8``: per output channel (axis 0), ``scale = max|w_row| / 127.5``
  (``(quant_max - quant_min) / 2``, PyTorch's symmetric observer), clamped
  to float32 eps; ``q = clamp(round(w / scale), -128, 127)``; zero points
  int64 zeros;
* ``int4g<G>``: per group of G consecutive input features of each row,
  ``scale = max|w_group| / 7.5``; ``q = clamp(round(w / scale), -8, 7)``
  stored one value per int8 byte; scales float32 ``[N, K / G]``; zero points
  int32 zeros ``[N, K / G]`` (torchao's ``group_quantize_tensor_symmetric``).

The eager module computes its outputs with the dequantized float weights,
so the reference ``.npy`` files are PyTorch's outputs for those weights.
"""

import re
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.library import Library, impl

def _pytorch_has_decomposed_ops() -> bool:
    """PyTorch 2.x registers the ops itself (torch.ao.quantization.fx._decomposed)."""
    try:
        import torch.ao.quantization.fx._decomposed  # noqa: F401
    except ImportError:
        return False
    return hasattr(torch.ops.quantized_decomposed, "dequantize_per_channel_group")


if not _pytorch_has_decomposed_ops():
    _LIB = Library("quantized_decomposed", "DEF")

    _LIB.define(
        "dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, "
        "int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"
    )
    _LIB.define(
        "dequantize_per_channel_group(Tensor input, Tensor scales, Tensor? zero_points, int quant_min, "
        "int quant_max, ScalarType dtype, int group_size, ScalarType output_dtype) -> Tensor"
    )


    @impl(_LIB, "dequantize_per_channel", "CompositeExplicitAutograd")
    def dequantize_per_channel(input, scales, zero_points, axis, quant_min, quant_max, dtype, *, out_dtype=None):
        assert input.dtype == dtype, (input.dtype, dtype)
        perm = list(range(input.dim()))
        perm[axis], perm[0] = 0, axis
        x = input.permute(perm)
        shape = [1] * x.dim()
        shape[0] = scales.shape[0]
        s = scales.view(shape)
        res = (x - zero_points.view(shape)) * s if zero_points is not None else x * s
        return res.to(out_dtype or torch.float32).permute(perm)


    @impl(_LIB, "dequantize_per_channel_group", "CompositeExplicitAutograd")
    def dequantize_per_channel_group(w_int8, scales, zero_points, quant_min, quant_max, dtype, group_size, output_dtype):
        assert group_size > 1 and w_int8.dim() == 2
        if group_size > w_int8.shape[-1] and scales.shape[-1] == 1:
            group_size = w_int8.shape[-1]
        assert w_int8.shape[-1] % group_size == 0
        grouped = w_int8.reshape(-1, group_size)
        s = scales.reshape(-1, 1)
        zp = zero_points.reshape(-1, 1) if zero_points is not None else torch.zeros([], dtype=torch.int32)
        return grouped.sub(zp).mul(s).reshape_as(w_int8).to(output_dtype)


SCHEMES = ("int8", "int4g32")
_EPS = torch.finfo(torch.float32).eps


def parse_scheme(scheme: str) -> Tuple[int, Optional[int]]:
    """``int8`` -> (8, None); ``int4g<G>`` -> (4, G)."""
    if scheme == "int8":
        return 8, None
    m = re.fullmatch(r"int4g(\d+)", scheme)
    if m and int(m.group(1)) > 1:
        return 4, int(m.group(1))
    raise ValueError("unknown weight quantization %r (int8, int4g<group size>)" % scheme)


class QuantLinear(nn.Module):
    """A Linear whose weight is stored quantized and dequantized per call."""

    def __init__(self, linear: nn.Linear, scheme: str):
        super().__init__()
        bits, group = parse_scheme(scheme)
        w = linear.weight.detach().float()
        n, k = w.shape
        if bits == 8:
            amax = w.abs().amax(dim=1)
            scales = torch.clamp(amax / ((127 - (-128)) / 2), min=_EPS)
            q = torch.clamp(torch.round(w / scales[:, None]), -128, 127).to(torch.int8)
            zeros = torch.zeros(n, dtype=torch.int64)
        else:
            if k % group:
                raise ValueError("in_features %d is not a multiple of the group size %d" % (k, group))
            g = w.reshape(n, k // group, group)
            amax = g.abs().amax(dim=2)
            scales = torch.clamp(amax / ((7 - (-8)) / 2), min=_EPS)
            q = torch.clamp(torch.round(g / scales[:, :, None]), -8, 7).to(torch.int8).reshape(n, k)
            zeros = torch.zeros(n, k // group, dtype=torch.int32)
        self.bits, self.group = bits, group
        self.register_buffer("weight_int8", q.contiguous())
        self.register_buffer("weight_scales", scales.contiguous())
        self.register_buffer("weight_zero_points", zeros)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone())

    def dequantized_weight(self):
        ops = torch.ops.quantized_decomposed
        if self.bits == 8:
            return ops.dequantize_per_channel(
                self.weight_int8, self.weight_scales, self.weight_zero_points, 0, -128, 127, torch.int8
            )
        return ops.dequantize_per_channel_group(
            self.weight_int8, self.weight_scales, self.weight_zero_points, -8, 7, torch.int8, self.group, torch.float32
        )

    def forward(self, x):
        return F.linear(x, self.dequantized_weight(), self.bias)


def quantize_linears(module: nn.Module, scheme: str) -> nn.Module:
    """Replaces every nn.Linear of ``module`` (in place) by a QuantLinear."""
    parse_scheme(scheme)
    for name, child in list(module.named_children()):
        if isinstance(child, nn.Linear):
            setattr(module, name, QuantLinear(child, scheme))
        else:
            quantize_linears(child, scheme)
    return module


# Committed weight-only quantized fixtures: (base fixture, scheme).
COMMITTED = (("mlp", "int8"), ("transformer_block", "int8"), ("mlp", "int4g32"), ("transformer_block", "int4g32"))


def quantized_fixture(base, scheme: str):
    """The fixture ``<base>_<scheme>``: ``base``'s model with every Linear
    quantized, same methods and inputs (its own seed, from its name)."""
    from .models import Fixture  # models imports nothing from here

    bits, group = parse_scheme(scheme)
    how = "int8 per-channel (dequantize_per_channel)" if bits == 8 else (
        "4-bit groupwise, group %d, int8 storage (dequantize_per_channel_group)" % group)
    return Fixture(
        "%s_%s" % (base.name, scheme),
        "%s; every Linear weight-only quantized, %s, symmetric scales; reference computed with the dequantized weights"
        % (base.description, how),
        lambda: quantize_linears(base.build(), scheme),
        base.methods,
        calls=base.calls,
        prune_unused_state=base.prune_unused_state,
    )
