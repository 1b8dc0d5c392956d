#!/usr/bin/env python3
"""Generate the portable kernels' test cases from PyTorch.

    .venv/bin/python tools/make_kernel_cases.py [--out src/lathe/runtime/testdata/kernel_cases.json]

Each case is one ATen op call: its arguments (tensors with their values and
memory layout, literals) and the outputs PyTorch computes for it. The C++
test (src/lathe/runtime/kernels_test.cpp) builds a one-node graph per case,
runs it on the portable runtime with inputs in the same layout and compares.

Ops that torch 1.13 lacks (the 2.x batch-norm spellings, SDPA) get their
expected values from the 1.13 op they are defined by, or from the math
formula in float64; the case says so in "reference".

Deterministic: fixed seed, one thread, no timestamps.
"""

import argparse
import json
import math
import os
import sys
from collections import OrderedDict

import numpy as np
import torch

aten = torch.ops.aten
CASES = []


class Layout:
    """A tensor argument passed in a non-contiguous layout (same values)."""

    def __init__(self, t, layout):
        self.layout = layout
        if layout == "transposed":  # dims stored in reverse order
            dims = list(reversed(range(t.dim())))
            self.t = t.permute(dims).contiguous().permute(dims)
        elif layout == "strided":  # every other element of a wider last dim, at offset 1
            wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2 + 1, dtype=t.dtype)
            wide[..., 1::2] = t
            self.t = wide[..., 1::2]
        else:
            raise ValueError(layout)


def R(*shape, dtype=torch.float32, lo=None, hi=None):
    if dtype.is_floating_point:
        x = torch.randn(*shape, dtype=torch.float32)
        if lo is not None:
            x = torch.rand(*shape) * (hi - lo) + lo
        return x.to(dtype)
    if dtype == torch.bool:
        return torch.rand(*shape) > 0.5
    return torch.randint(lo if lo is not None else -5, hi if hi is not None else 6, shape, dtype=dtype)


def num(v, dtype):
    if dtype == torch.bool:
        return bool(v)
    if dtype.is_floating_point:
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if dtype == torch.float32:
            # Shortest decimal that reads back as the same float32.
            return float(str(np.float32(v)))
        return v
    return int(v)


def tensor_json(t, layout="contiguous"):
    flat = t.detach().contiguous().reshape(-1).tolist()
    return OrderedDict(
        [
            ("dtype", str(t.dtype).replace("torch.", "")),
            ("shape", list(t.shape)),
            ("layout", layout),
            ("data", [num(v, t.dtype) for v in flat]),
        ]
    )


def arg_json(v):
    if isinstance(v, Layout):
        return {"tensor": tensor_json(v.t, v.layout)}
    if isinstance(v, torch.Tensor):
        return {"tensor": tensor_json(v)}
    if v is None:
        return {"none": True}
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        return {"float": num(v, torch.float32)}
    if isinstance(v, str):
        return {"string": v}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).replace("torch.", "")}
    if isinstance(v, (list, tuple)):
        if all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            return {"ints": list(v)}
        if any(x is None for x in v):
            return {"optional_tensors": [None if x is None else arg_json(x)["tensor"] for x in v]}
        return {"tensors": [arg_json(x)["tensor"] for x in v]}
    raise TypeError(type(v))


def plain(v):
    if isinstance(v, Layout):
        return v.t
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def case(name, op, args, fn=None, rtol=1e-6, atol=1e-7, reference=None):
    """op: "aten.add.Tensor"; args: [(schema name, value)]; fn: computes the
    expected outputs from the plain values (default: the op itself)."""
    values = OrderedDict((k, plain(v)) for k, v in args)
    if fn is None:
        _, base, overload = op.split(".")
        fn = lambda **kw: getattr(getattr(aten, base), overload)._op(**kw)  # noqa: E731 (_op: "self" as a keyword)
    res = fn(**values)
    if isinstance(res, torch.Tensor):
        form, outs = "single", [res]
    elif isinstance(res, list):
        form, outs = "list", list(res)
    else:
        form, outs = "tuple", list(res)
    CASES.append(
        OrderedDict(
            [
                ("name", name),
                ("op", op),
                ("args", [OrderedDict([("name", k)] + list(arg_json(v).items())) for k, v in args]),
                ("output_form", form),
                ("outputs", [tensor_json(o) for o in outs]),
                ("rtol", rtol),
                ("atol", atol),
                ("reference", reference or "torch %s" % torch.__version__),
            ]
        )
    )


def binary_cases():
    f = torch.float32
    case("add_same_shape", "aten.add.Tensor", [("self", R(2, 3)), ("other", R(2, 3))])
    case("add_broadcast", "aten.add.Tensor", [("self", R(2, 1, 3)), ("other", R(4, 1))])
    case("add_alpha", "aten.add.Tensor", [("self", R(3, 4)), ("other", R(4)), ("alpha", 2.5)])
    case("add_noncontig", "aten.add.Tensor", [("self", Layout(R(3, 4), "transposed")), ("other", Layout(R(3, 4), "strided"))])
    case("add_empty", "aten.add.Tensor", [("self", R(0, 3)), ("other", R(3))])
    case("add_int64", "aten.add.Tensor", [("self", R(5, dtype=torch.int64)), ("other", R(5, dtype=torch.int64))])
    case("add_int_plus_0d_float", "aten.add.Tensor", [("self", R(4, dtype=torch.int64)), ("other", torch.tensor(0.5))])
    case("add_float_plus_int_literal", "aten.add.Tensor", [("self", R(2, 2)), ("other", 3)])
    case("add_bool", "aten.add.Tensor", [("self", R(6, dtype=torch.bool)), ("other", R(6, dtype=torch.bool))])
    case("add_scalar_int_tensor_float", "aten.add.Scalar", [("self", R(3, dtype=torch.int64)), ("other", 1.5)])
    case("add_0d_both", "aten.add.Tensor", [("self", torch.tensor(2.0)), ("other", torch.tensor(3, dtype=torch.int64))])
    case("sub_alpha_broadcast", "aten.sub.Tensor", [("self", R(2, 3)), ("other", R(1, 3)), ("alpha", 0.5)])
    case("rsub_scalar", "aten.rsub.Scalar", [("self", R(2, 3)), ("other", 1.0)])
    case("mul_broadcast", "aten.mul.Tensor", [("self", R(2, 3, 1)), ("other", Layout(R(3, 4), "transposed"))])
    case("mul_float_literal_on_int", "aten.mul.Tensor", [("self", R(4, dtype=torch.int64)), ("other", 0.5)])
    case("mul_scalar", "aten.mul.Scalar", [("self", R(3)), ("other", 2)])
    case("mul_int64_0d_into_float", "aten.mul.Tensor", [("self", R(3, 4)), ("other", torch.tensor(3, dtype=torch.int64))])
    case("div_float", "aten.div.Tensor", [("self", R(2, 3)), ("other", R(3, lo=0.5, hi=2.0))])
    case("div_int_true", "aten.div.Tensor", [("self", R(6, dtype=torch.int64)), ("other", torch.tensor([1, 2, 3, -4, 5, -6]))])
    case("div_trunc_float", "aten.div.Tensor_mode", [("self", torch.tensor([-7.5, 7.5, -3.0, 2.5])), ("other", torch.tensor([2.0, -2.0, 2.0, 0.5])), ("rounding_mode", "trunc")])
    case("div_floor_float", "aten.div.Tensor_mode", [("self", torch.tensor([-7.5, 7.5, -3.0, 2.5])), ("other", torch.tensor([2.0, -2.0, 2.0, 0.5])), ("rounding_mode", "floor")])
    case("div_floor_int", "aten.div.Tensor_mode", [("self", torch.tensor([-7, 7, -3, 9])), ("other", torch.tensor([2, -2, 2, 3])), ("rounding_mode", "floor")])
    case("div_trunc_int", "aten.div.Tensor_mode", [("self", torch.tensor([-7, 7, -3, 9])), ("other", torch.tensor([2, -2, 2, 3])), ("rounding_mode", "trunc")])
    case("div_scalar", "aten.div.Scalar", [("self", R(2, 2)), ("other", 4.0)])
    case("pow_square", "aten.pow.Tensor_Scalar", [("self", R(5)), ("exponent", 2)])
    case("pow_half", "aten.pow.Tensor_Scalar", [("self", R(5, lo=0.1, hi=3.0)), ("exponent", 0.5)])
    case("pow_tensor", "aten.pow.Tensor_Tensor", [("self", R(2, 3, lo=0.5, hi=2.0)), ("exponent", R(3))])
    case("pow_int", "aten.pow.Tensor_Scalar", [("self", torch.tensor([-3, -1, 0, 2, 5])), ("exponent", 3)])
    case("pow_scalar_base", "aten.pow.Scalar", [("self", 2.0), ("exponent", R(4))])
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        a = torch.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
        case("%s_tensor_broadcast" % op, "aten.%s.Tensor" % op, [("self", a), ("other", torch.tensor([2.0, 2.0, 1.0]))])
        case("%s_scalar" % op, "aten.%s.Scalar" % op, [("self", torch.tensor([1, 2, 3])), ("other", 2)])
    nan = float("nan")
    case("maximum_nan", "aten.maximum.default", [("self", torch.tensor([1.0, nan, 3.0, -1.0])), ("other", torch.tensor([2.0, 0.0, nan, -2.0]))])
    case("minimum_broadcast", "aten.minimum.default", [("self", R(2, 3)), ("other", R(3))])
    case("remainder_neg", "aten.remainder.Tensor", [("self", torch.tensor([-7.0, 7.0, -3.5, 5.0])), ("other", torch.tensor([3.0, -3.0, 2.0, 2.5]))])
    case("remainder_int", "aten.remainder.Scalar", [("self", torch.tensor([-7, 7, -3, 5])), ("other", 3)])
    case("fmod", "aten.fmod.Tensor", [("self", torch.tensor([-7.0, 7.0, -3.5, 5.0])), ("other", torch.tensor([3.0, -3.0, 2.0, 2.5]))])
    # Integer overflow wraps in PyTorch's kernels (INT_MIN // -1 is INT_MIN; C++ traps on it).
    # div(rounding_mode='trunc') of INT_MIN by -1 crashes PyTorch 2.13 itself (SIGFPE), so it
    # has no case here; Lathe wraps it (src/lathe/core/int_arith_test.cpp).
    for dt, lo, hi in [(torch.int64, -2**63, 2**63 - 1), (torch.int32, -2**31, 2**31 - 1)]:
        n = str(dt).split(".")[1]
        a = torch.tensor([lo, hi, -7, 7, lo], dtype=dt)
        b = torch.tensor([-1, -1, 2, -2, 3], dtype=dt)
        case("floor_divide_%s_min_by_minus_one" % n, "aten.floor_divide.default", [("self", a), ("other", b)])
        case("remainder_%s_min_by_minus_one" % n, "aten.remainder.Tensor", [("self", a), ("other", b)])
        case("fmod_%s_min_by_minus_one" % n, "aten.fmod.Tensor", [("self", a), ("other", b)])
        case("div_floor_%s_min_by_minus_one" % n, "aten.div.Tensor_mode", [("self", a), ("other", b), ("rounding_mode", "floor")])
        case("add_%s_wraps" % n, "aten.add.Tensor", [("self", torch.tensor([hi, lo], dtype=dt)), ("other", torch.tensor([1, -1], dtype=dt))])
        case("sub_alpha_%s_wraps" % n, "aten.sub.Tensor", [("self", torch.tensor([lo, 0], dtype=dt)), ("other", torch.tensor([1, hi], dtype=dt)), ("alpha", 3)])
        case("mul_%s_wraps" % n, "aten.mul.Tensor", [("self", torch.tensor([hi, lo, 3037000500], dtype=torch.int64).to(dt)), ("other", torch.tensor([2, -1, 3037000500], dtype=torch.int64).to(dt))])
    case("pow_int64_wraps", "aten.pow.Tensor_Scalar", [("self", torch.tensor([3, -3, 7])), ("exponent", 41)])
    case("where_broadcast", "aten.where.self", [("condition", R(2, 1, dtype=torch.bool)), ("self", R(2, 3)), ("other", R(3))])
    case("where_promote", "aten.where.self", [("condition", R(4, dtype=torch.bool)), ("self", R(4, dtype=torch.int64)), ("other", R(4))])
    mask = torch.ones(4, 4, dtype=torch.bool).triu(1)
    case("masked_fill_neg_inf", "aten.masked_fill.Scalar", [("self", R(2, 4, 4)), ("mask", mask), ("value", float("-inf"))])
    case("masked_fill_tensor_value", "aten.masked_fill.Tensor", [("self", R(3, 2)), ("mask", R(3, 1, dtype=torch.bool)), ("value", torch.tensor(7.0))])
    case("logical_and", "aten.logical_and.default", [("self", torch.tensor([0.0, 1.0, 2.0, 0.0])), ("other", torch.tensor([1, 0, 3, 0]))])
    case("logical_or", "aten.logical_or.default", [("self", R(5, dtype=torch.bool)), ("other", R(5, dtype=torch.bool))])
    case("logical_xor", "aten.logical_xor.default", [("self", R(5, dtype=torch.bool)), ("other", R(5, dtype=torch.bool))])
    case("bitwise_and_int", "aten.bitwise_and.Tensor", [("self", torch.tensor([12, 10, 7])), ("other", torch.tensor([10, 6, 1]))])
    case("bitwise_or_bool", "aten.bitwise_or.Tensor", [("self", R(4, dtype=torch.bool)), ("other", R(4, dtype=torch.bool))])


def unary_cases():
    for op in ["neg", "exp", "abs", "relu", "sigmoid", "tanh", "silu", "hardswish", "hardsigmoid", "erf", "sin", "cos", "sign"]:
        case(op, "aten.%s.default" % op, [("self", R(3, 5) * 3)])
    case("relu_noncontig", "aten.relu.default", [("self", Layout(R(4, 3), "transposed"))])
    case("tanh_strided", "aten.tanh.default", [("self", Layout(R(2, 5), "strided"))])
    case("sigmoid_empty", "aten.sigmoid.default", [("self", R(0, 4))])
    case("hardswish_edges", "aten.hardswish.default", [("self", torch.tensor([-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0]))])
    case("hardsigmoid_edges", "aten.hardsigmoid.default", [("self", torch.tensor([-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0]))])
    for op in ["log", "sqrt", "rsqrt", "reciprocal"]:
        case(op, "aten.%s.default" % op, [("self", R(2, 4, lo=0.1, hi=5.0))])
    case("exp_of_int", "aten.exp.default", [("self", torch.tensor([0, 1, 2, -1]))])
    case("neg_int", "aten.neg.default", [("self", R(4, dtype=torch.int64))])
    case("abs_int", "aten.abs.default", [("self", R(4, dtype=torch.int32))])
    case("leaky_relu", "aten.leaky_relu.default", [("self", R(6)), ("negative_slope", 0.2)])
    case("leaky_relu_default", "aten.leaky_relu.default", [("self", R(6))])
    case("gelu_exact", "aten.gelu.default", [("self", R(3, 4) * 3)])
    case("gelu_tanh", "aten.gelu.default", [("self", R(3, 4) * 3), ("approximate", "tanh")])
    case("hardtanh", "aten.hardtanh.default", [("self", R(8)), ("min_val", -0.5), ("max_val", 0.5)])
    case("clamp_both", "aten.clamp.default", [("self", R(3, 3)), ("min", -0.3), ("max", 0.4)])
    case("clamp_min_only", "aten.clamp.default", [("self", R(6)), ("min", 0.0)])
    case("clamp_int", "aten.clamp.default", [("self", R(6, dtype=torch.int64)), ("min", -2), ("max", 3)])
    case("clamp_nan", "aten.clamp.default", [("self", torch.tensor([float("nan"), 5.0, -5.0])), ("min", -1.0), ("max", 1.0)])
    case("clamp_min_op", "aten.clamp_min.default", [("self", R(5)), ("min", 0.1)])
    case("clamp_tensor", "aten.clamp.Tensor", [("self", R(2, 3)), ("min", R(3) - 0.5), ("max", R(2, 1) + 0.5)])
    case("floor", "aten.floor.default", [("self", torch.tensor([-1.5, -0.5, 0.5, 1.5, 2.0]))])
    case("ceil", "aten.ceil.default", [("self", torch.tensor([-1.5, -0.5, 0.5, 1.5, 2.0]))])
    case("round_half_even", "aten.round.default", [("self", torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6]))])
    case("trunc", "aten.trunc.default", [("self", torch.tensor([-1.7, -0.5, 0.5, 1.7]))])
    case("logical_not", "aten.logical_not.default", [("self", torch.tensor([0.0, 1.0, -2.0]))])
    case("bitwise_not_bool", "aten.bitwise_not.default", [("self", R(5, dtype=torch.bool))])


def matmul_cases():
    mm_tol = dict(rtol=1e-5, atol=1e-6)
    case("mm", "aten.mm.default", [("self", R(3, 4)), ("mat2", R(4, 5))], **mm_tol)
    case("mm_blocks", "aten.mm.default", [("self", R(9, 37)), ("mat2", R(37, 35))], **mm_tol)
    case("mm_transposed_b", "aten.mm.default", [("self", R(5, 33)), ("mat2", Layout(R(33, 20), "transposed"))], **mm_tol)
    case("mm_transposed_a", "aten.mm.default", [("self", Layout(R(6, 7), "transposed")), ("mat2", R(7, 18))], **mm_tol)
    case("mm_strided", "aten.mm.default", [("self", Layout(R(4, 6), "strided")), ("mat2", Layout(R(6, 3), "strided"))], **mm_tol)
    case("mm_gemv_row", "aten.mm.default", [("self", R(1, 64)), ("mat2", Layout(R(64, 10), "transposed"))], **mm_tol)
    case("mm_k0", "aten.mm.default", [("self", R(2, 0)), ("mat2", R(0, 3))], **mm_tol)
    case("mm_m0", "aten.mm.default", [("self", R(0, 4)), ("mat2", R(4, 3))], **mm_tol)
    case("mm_int64", "aten.mm.default", [("self", R(2, 3, dtype=torch.int64)), ("mat2", R(3, 4, dtype=torch.int64))], **mm_tol)
    case("mm_float64", "aten.mm.default", [("self", R(3, 4, dtype=torch.float64)), ("mat2", R(4, 2, dtype=torch.float64))], **mm_tol)
    case("addmm", "aten.addmm.default", [("self", R(5)), ("mat1", R(3, 4)), ("mat2", Layout(R(4, 5), "transposed"))], **mm_tol)
    case("addmm_beta_alpha", "aten.addmm.default", [("self", R(3, 1)), ("mat1", R(3, 4)), ("mat2", R(4, 5)), ("beta", 0.5), ("alpha", 2.0)], **mm_tol)
    case("bmm", "aten.bmm.default", [("self", R(2, 3, 4)), ("mat2", R(2, 4, 5))], **mm_tol)
    case("bmm_noncontig", "aten.bmm.default", [("self", Layout(R(3, 4, 2), "transposed")), ("mat2", R(3, 2, 17))], **mm_tol)
    case("baddbmm", "aten.baddbmm.default", [("self", R(3, 5)), ("batch1", R(2, 3, 4)), ("batch2", R(2, 4, 5)), ("alpha", 0.5)], **mm_tol)
    case("matmul_1d_1d", "aten.matmul.default", [("self", R(6)), ("other", R(6))], **mm_tol)
    case("matmul_2d_1d", "aten.matmul.default", [("self", R(3, 6)), ("other", R(6))], **mm_tol)
    case("matmul_1d_2d", "aten.matmul.default", [("self", R(6)), ("other", R(6, 4))], **mm_tol)
    case("matmul_batch_broadcast", "aten.matmul.default", [("self", R(2, 1, 3, 4)), ("other", R(5, 4, 2))], **mm_tol)
    case("matmul_3d_2d", "aten.matmul.default", [("self", R(2, 3, 4)), ("other", R(4, 5))], **mm_tol)
    case("linear", "aten.linear.default", [("input", R(2, 3, 8)), ("weight", R(5, 8)), ("bias", R(5))], **mm_tol)
    case("linear_no_bias", "aten.linear.default", [("input", Layout(R(4, 8), "transposed")), ("weight", R(3, 8))], **mm_tol)


def view_cases():
    x = R(2, 3, 4)
    case("view", "aten.view.default", [("self", x), ("size", [6, 4])])
    case("view_infer", "aten.view.default", [("self", x), ("size", [-1, 2])])
    case("view_of_transposed_compatible", "aten.view.default", [("self", Layout(R(4, 6), "transposed")), ("size", [4, 6])])
    case("unsafe_view", "aten._unsafe_view.default", [("self", x), ("size", [4, 6])])
    case("reshape_noncontig_copy", "aten.reshape.default", [("self", Layout(R(3, 4), "transposed")), ("shape", [12])])
    case("reshape_contig", "aten.reshape.default", [("self", x), ("shape", [2, -1])])
    case("reshape_alias", "aten._reshape_alias.default", [("self", x), ("size", [3, 8]), ("stride", [8, 1])])
    case("view_copy", "aten.view_copy.default", [("self", x), ("size", [24])])
    for suffix, cp in [("", ""), ("_copy", "_copy")]:
        case("t" + suffix, "aten.t%s.default" % cp, [("self", R(3, 5))])
        case("permute" + suffix, "aten.permute%s.default" % cp, [("self", x), ("dims", [2, 0, 1])])
        case("transpose" + suffix, "aten.transpose%s.int" % cp, [("self", x), ("dim0", -1), ("dim1", 0)])
        case("expand" + suffix, "aten.expand%s.default" % cp, [("self", R(3, 1)), ("size", [2, 3, -1, 4][:3] if False else [2, 3, 4])])
        case("squeeze_dim" + suffix, "aten.squeeze%s.dim" % cp, [("self", R(2, 1, 3)), ("dim", 1)])
        case("unsqueeze" + suffix, "aten.unsqueeze%s.default" % cp, [("self", R(2, 3)), ("dim", -1)])
        case("slice" + suffix, "aten.slice%s.Tensor" % cp, [("self", R(5, 4)), ("dim", 0), ("start", 1), ("end", 100), ("step", 2)])
        case("select" + suffix, "aten.select%s.int" % cp, [("self", x), ("dim", 1), ("index", -1)])
        case("split" + suffix, "aten.split%s.Tensor" % cp, [("self", R(7, 2)), ("split_size", 3)])
        case("split_with_sizes" + suffix, "aten.split_with_sizes%s.default" % cp, [("self", R(2, 6)), ("split_sizes", [1, 2, 3]), ("dim", 1)])
        case("alias" + suffix, "aten.alias%s.default" % cp, [("self", R(2, 2))])
        case("unbind" + suffix, "aten.unbind%s.int" % cp, [("self", R(3, 2)), ("dim", 1)])
    case("expand_new_dims_and_keep", "aten.expand.default", [("self", R(3, 1)), ("size", [2, -1, 4])])
    case("squeeze_all", "aten.squeeze.default", [("self", R(1, 3, 1, 2))])
    case("squeeze_dims", "aten.squeeze.dims", [("self", R(1, 3, 1, 2)), ("dim", [0, 1])], fn=lambda self, dim: self.squeeze(0), reference="torch 1.13 squeeze(0) (squeeze.dims is 2.x)")
    case("slice_negative", "aten.slice.Tensor", [("self", R(6)), ("dim", 0), ("start", -4), ("end", -1)])
    case("slice_of_noncontig", "aten.slice.Tensor", [("self", Layout(R(4, 6), "transposed")), ("dim", 1), ("start", 2), ("end", 5)])
    case("detach", "aten.detach.default", [("self", R(3))])
    case("flatten", "aten.flatten.using_ints", [("self", x), ("start_dim", 1)])
    case("flatten_noncontig", "aten.flatten.using_ints", [("self", Layout(x, "transposed"))])
    case("unflatten", "aten.unflatten.int", [("self", R(2, 12)), ("dim", 1), ("sizes", [3, -1])])
    case("narrow", "aten.narrow.default", [("self", R(4, 5)), ("dim", 1), ("start", 1), ("length", 3)])
    case("as_strided", "aten.as_strided.default", [("self", R(12)), ("size", [3, 3]), ("stride", [3, 1]), ("storage_offset", 2)])


def copy_cases():
    case("clone_noncontig", "aten.clone.default", [("self", Layout(R(3, 4), "transposed"))])
    case("contiguous", "aten.contiguous.default", [("self", Layout(R(3, 4), "strided"))], fn=lambda self: self.contiguous())
    case("to_copy_float_to_int", "aten._to_copy.default", [("self", torch.tensor([-1.7, -0.2, 0.0, 2.9])), ("dtype", torch.int64)])
    case("to_copy_int_to_float", "aten._to_copy.default", [("self", R(4, dtype=torch.int64)), ("dtype", torch.float32)])
    case("to_copy_float_to_bool", "aten._to_copy.default", [("self", torch.tensor([0.0, -0.0, 0.5, float("nan")])), ("dtype", torch.bool)])
    case("to_copy_to_double", "aten._to_copy.default", [("self", R(3)), ("dtype", torch.float64)])
    case("to_dtype", "aten.to.dtype", [("self", R(3)), ("dtype", torch.int32)])
    case("copy_broadcast_cast", "aten.copy.default", [("self", R(2, 3)), ("src", R(3, dtype=torch.int64))])
    case("cat_dim1", "aten.cat.default", [("tensors", [R(2, 3), R(2, 1), Layout(R(2, 4), "transposed")]), ("dim", 1)])
    case("cat_skip_empty_1d", "aten.cat.default", [("tensors", [R(2, 3), torch.empty(0), R(1, 3)])])
    case("cat_promote", "aten.cat.default", [("tensors", [R(2, dtype=torch.int64), R(3)]), ("dim", -1)])
    case("stack", "aten.stack.default", [("tensors", [R(2, 3), R(2, 3), R(2, 3)]), ("dim", 1)])
    case("dropout_eval", "aten.dropout.default", [("input", R(4)), ("p", 0.5), ("train", False)])
    case("native_dropout_eval", "aten.native_dropout.default", [("input", R(4)), ("p", 0.5), ("train", False)])


def index_cases():
    w = R(10, 4)
    case("embedding", "aten.embedding.default", [("weight", w), ("indices", torch.tensor([[0, 9, 3], [3, 3, 1]]))])
    case("embedding_noncontig_weight", "aten.embedding.default", [("weight", Layout(w, "transposed")), ("indices", torch.tensor([2, 7]))])
    case("index_select", "aten.index_select.default", [("self", R(3, 5)), ("dim", 1), ("index", torch.tensor([4, 0, 0, 2]))])
    case("index_select_int32", "aten.index_select.default", [("self", R(4, 2)), ("dim", 0), ("index", torch.tensor([3, 1], dtype=torch.int32))])
    case("gather", "aten.gather.default", [("self", R(3, 4)), ("dim", 1), ("index", torch.tensor([[0, 3], [1, 1], [2, 0]]))])
    case("gather_dim0", "aten.gather.default", [("self", R(3, 4)), ("dim", 0), ("index", torch.tensor([[2, 1, 0, 0]]))])
    x = R(4, 5, 6)
    i = torch.tensor([3, 0, -1])
    case("index_single", "aten.index.Tensor", [("self", x), ("indices", [i])])
    case("index_middle", "aten.index.Tensor", [("self", x), ("indices", [None, torch.tensor([[4, 0], [1, 1]])])])
    case("index_adjacent_pair", "aten.index.Tensor", [("self", x), ("indices", [None, torch.tensor([0, 4]), torch.tensor([5, 1])])])
    case("index_split_pair", "aten.index.Tensor", [("self", x), ("indices", [torch.tensor([0, 3]), None, torch.tensor([1, 2])])])
    case("index_bool_mask", "aten.index.Tensor", [("self", R(3, 4)), ("indices", [torch.tensor([True, False, True])])])
    case("index_put_accumulate", "aten.index_put.default", [("self", R(5, 2)), ("indices", [torch.tensor([0, 2, 0])]), ("values", R(3, 2)), ("accumulate", True)])
    case("index_put_broadcast", "aten.index_put.default", [("self", R(4, 3)), ("indices", [torch.tensor([1, 3])]), ("values", torch.tensor(9.0))])
    case("slice_scatter", "aten.slice_scatter.default", [("self", R(5, 3)), ("src", R(2, 3)), ("dim", 0), ("start", 1), ("end", 5), ("step", 2)])
    case("select_scatter", "aten.select_scatter.default", [("self", R(3, 4)), ("src", R(3)), ("dim", 1), ("index", 2)])


def reduce_cases():
    x = R(2, 3, 4)
    case("sum_dim", "aten.sum.dim_IntList", [("self", x), ("dim", [1])])
    case("sum_dims_keepdim", "aten.sum.dim_IntList", [("self", x), ("dim", [0, -1]), ("keepdim", True)])
    case("sum_all", "aten.sum.default", [("self", x)])
    case("sum_int_to_int64", "aten.sum.dim_IntList", [("self", R(3, 4, dtype=torch.int32)), ("dim", [1])])
    case("sum_noncontig", "aten.sum.dim_IntList", [("self", Layout(x, "transposed")), ("dim", [2])])
    case("sum_empty_dim", "aten.sum.dim_IntList", [("self", R(3, 0)), ("dim", [1])])
    case("mean_hw_keepdim", "aten.mean.dim", [("self", R(1, 3, 5, 5)), ("dim", [2, 3]), ("keepdim", True)])
    case("mean_dim0", "aten.mean.dim", [("self", R(3, 4)), ("dim", [0])])
    case("mean_all", "aten.mean.default", [("self", R(3, 4))])
    case("amax", "aten.amax.default", [("self", x), ("dim", [1, 2])])
    case("amax_nan", "aten.amax.default", [("self", torch.tensor([[1.0, float("nan")], [2.0, 3.0]])), ("dim", [1])])
    case("amin_keepdim", "aten.amin.default", [("self", x), ("dim", [0]), ("keepdim", True)])
    case("max_dim_ties", "aten.max.dim", [("self", torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])), ("dim", 1)])
    case("min_dim_keepdim", "aten.min.dim", [("self", R(3, 4)), ("dim", 0), ("keepdim", True)])
    case("argmax_all", "aten.argmax.default", [("self", R(3, 4))])
    case("argmax_dim_keepdim", "aten.argmax.default", [("self", R(3, 4)), ("dim", 1), ("keepdim", True)])
    case("var_unbiased", "aten.var.correction", [("self", x), ("dim", [1]), ("correction", 1)])
    case("var_biased_keepdim", "aten.var.correction", [("self", x), ("dim", [2]), ("correction", 0), ("keepdim", True)])
    case("var_mean", "aten.var_mean.correction", [("self", x), ("dim", [0, 2]), ("correction", 1)])
    case("any_dim", "aten.any.dim", [("self", torch.tensor([[0, 0], [0, 3]])), ("dim", 1)])
    case("all_dim", "aten.all.dim", [("self", torch.tensor([[True, True], [False, True]])), ("dim", 0)])


def softmax_cases():
    case("softmax_last", "aten._softmax.default", [("self", R(2, 3, 5) * 3), ("dim", -1), ("half_to_float", False)])
    case("softmax_dim0", "aten._softmax.default", [("self", R(4, 3)), ("dim", 0), ("half_to_float", False)])
    m = R(3, 4)
    m[0, 2] = float("-inf")
    m[1, :] = torch.tensor([float("-inf"), 0.0, float("-inf"), 1.0])
    case("softmax_with_neg_inf", "aten._softmax.default", [("self", m), ("dim", 1), ("half_to_float", False)])
    case("softmax_noncontig", "aten._softmax.default", [("self", Layout(R(4, 5), "transposed")), ("dim", 1), ("half_to_float", False)])
    case("log_softmax", "aten._log_softmax.default", [("self", R(2, 6) * 4), ("dim", 1), ("half_to_float", False)])
    case("softmax_int", "aten.softmax.int", [("self", R(2, 5)), ("dim", -1)])
    case("log_softmax_int", "aten.log_softmax.int", [("self", R(2, 5)), ("dim", 0)])


def norm_cases():
    tol = dict(rtol=1e-5, atol=1e-6)
    case("native_layer_norm", "aten.native_layer_norm.default", [("input", R(2, 3, 8) * 2 + 1), ("normalized_shape", [8]), ("weight", R(8)), ("bias", R(8)), ("eps", 1e-5)], **tol)
    case("native_layer_norm_2d_shape", "aten.native_layer_norm.default", [("input", R(2, 3, 4)), ("normalized_shape", [3, 4]), ("weight", None), ("bias", None), ("eps", 1e-3)], **tol)
    case("layer_norm", "aten.layer_norm.default", [("input", Layout(R(4, 6), "transposed")), ("normalized_shape", [6]), ("weight", R(6)), ("bias", R(6))], **tol)
    x = R(2, 3, 4, 5)
    w, b, rm, rv = R(3), R(3), R(3), R(3, lo=0.5, hi=2.0)
    case("native_batch_norm_eval", "aten.native_batch_norm.default", [("input", x), ("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv), ("training", False), ("momentum", 0.1), ("eps", 1e-5)], **tol)
    case("native_batch_norm_train", "aten.native_batch_norm.default",
         [("input", x), ("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv), ("training", True), ("momentum", 0.1), ("eps", 1e-5)],
         fn=lambda input, weight, bias, running_mean, running_var, training, momentum, eps: aten.native_batch_norm.default(input, weight, bias, running_mean.clone(), running_var.clone(), training, momentum, eps), **tol)
    case("batch_norm_1d_input", "aten.native_batch_norm.default", [("input", R(4, 3)), ("weight", None), ("bias", None), ("running_mean", rm), ("running_var", rv), ("training", False), ("momentum", 0.1), ("eps", 1e-5)], **tol)

    def no_training(input, weight, bias, running_mean, running_var, momentum, eps):
        return aten.native_batch_norm.default(input, weight, bias, running_mean, running_var, False, momentum, eps)

    case("legit_no_training", "aten._native_batch_norm_legit_no_training.default", [("input", x), ("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv), ("momentum", 0.1), ("eps", 1e-5)], fn=no_training, reference="torch 1.13 native_batch_norm(training=False)", **tol)

    def legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
        return aten.native_batch_norm.default(input, weight, bias, running_mean.clone(), running_var.clone(), training, momentum, eps)

    case("legit_train", "aten._native_batch_norm_legit.default", [("input", x), ("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv), ("training", True), ("momentum", 0.1), ("eps", 1e-5)], fn=legit, reference="torch 1.13 native_batch_norm(training=True)", **tol)

    def functional(input, weight, bias, running_mean, running_var, training, momentum, eps):
        m, v = running_mean.clone(), running_var.clone()
        out, mean, rstd = aten.native_batch_norm.default(input, weight, bias, m, v, training, momentum, eps)
        return out, mean, rstd, m, v  # native_batch_norm updated m, v in place

    case("legit_functional_train", "aten._native_batch_norm_legit_functional.default", [("input", x), ("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv), ("training", True), ("momentum", 0.1), ("eps", 1e-5)], fn=functional, reference="torch 1.13 native_batch_norm(training=True), running stats updated in place", **tol)
    case("batch_norm", "aten.batch_norm.default", [("input", x), ("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv), ("training", False), ("momentum", 0.1), ("eps", 1e-5), ("cudnn_enabled", False)], **tol)
    case("native_group_norm", "aten.native_group_norm.default", [("input", R(2, 6, 3, 2)), ("weight", R(6)), ("bias", R(6)), ("N", 2), ("C", 6), ("HxW", 6), ("group", 3), ("eps", 1e-5)], **tol)


def conv_cases():
    tol = dict(rtol=1e-5, atol=1e-6)

    def conv(name, x, w, b, stride, padding, dilation, groups, transposed=False, output_padding=(0, 0)):
        case(name, "aten.convolution.default", [("input", x), ("weight", w), ("bias", b), ("stride", list(stride)), ("padding", list(padding)), ("dilation", list(dilation)), ("transposed", transposed), ("output_padding", list(output_padding)), ("groups", groups)], **tol)

    conv("conv_basic", R(1, 3, 7, 6), R(4, 3, 3, 3), R(4), [1, 1], [0, 0], [1, 1], 1)
    conv("conv_stride_pad", R(2, 3, 9, 9), R(5, 3, 3, 3), R(5), [2, 2], [1, 1], [1, 1], 1)
    conv("conv_dilation_rect", R(1, 2, 10, 8), R(3, 2, 3, 2), None, [1, 2], [2, 1], [2, 3], 1)
    conv("conv_groups", R(1, 4, 6, 6), R(6, 2, 3, 3), R(6), [1, 1], [1, 1], [1, 1], 2)
    conv("conv_depthwise", R(1, 8, 9, 9), R(8, 1, 3, 3), R(8), [2, 2], [1, 1], [1, 1], 8)
    conv("conv_depthwise_5x5", R(2, 3, 8, 8), R(3, 1, 5, 5), None, [1, 1], [2, 2], [1, 1], 3)
    conv("conv_depthwise_multiplier", R(1, 2, 5, 5), R(6, 1, 3, 3), R(6), [1, 1], [0, 0], [1, 1], 2)
    conv("conv_pointwise", R(1, 16, 4, 5), R(8, 16, 1, 1), R(8), [1, 1], [0, 0], [1, 1], 1)
    conv("conv_noncontig_input", Layout(R(1, 3, 5, 5), "transposed"), R(2, 3, 3, 3), R(2), [1, 1], [1, 1], [1, 1], 1)
    conv("conv1d", R(2, 3, 10), R(4, 3, 3), R(4), [2], [1], [1], 1, output_padding=[0])
    conv("conv_transposed", R(1, 2, 4, 4), R(2, 3, 3, 3), R(3), [2, 2], [1, 1], [1, 1], 1, True, [1, 1])
    case("conv2d", "aten.conv2d.default", [("input", R(1, 3, 6, 6)), ("weight", R(2, 3, 3, 3)), ("bias", R(2)), ("stride", [1, 1]), ("padding", [1, 1])], **tol)
    case("conv2d_unbatched", "aten.conv2d.default", [("input", R(3, 6, 6)), ("weight", R(2, 3, 3, 3))], **tol)


def pool_cases():
    x = R(1, 2, 7, 7)
    case("max_pool2d", "aten.max_pool2d.default", [("self", x), ("kernel_size", [3, 3]), ("stride", [2, 2]), ("padding", [1, 1])])
    case("max_pool2d_ceil", "aten.max_pool2d.default", [("self", x), ("kernel_size", [2, 2]), ("stride", [2, 2]), ("ceil_mode", True)])
    case("max_pool2d_dilation", "aten.max_pool2d.default", [("self", R(2, 9, 9)), ("kernel_size", [3, 3]), ("stride", [1, 1]), ("dilation", [2, 2])])
    case("max_pool2d_with_indices", "aten.max_pool2d_with_indices.default", [("self", x), ("kernel_size", [3, 3]), ("stride", [2, 2]), ("padding", [1, 1])])
    case("avg_pool2d", "aten.avg_pool2d.default", [("self", x), ("kernel_size", [3, 3]), ("stride", [2, 2]), ("padding", [1, 1])])
    case("avg_pool2d_exclude_pad_ceil", "aten.avg_pool2d.default", [("self", x), ("kernel_size", [3, 3]), ("stride", [2, 2]), ("padding", [1, 1]), ("ceil_mode", True), ("count_include_pad", False)])
    case("avg_pool2d_divisor", "aten.avg_pool2d.default", [("self", x), ("kernel_size", [2, 2]), ("divisor_override", 3)])
    case("adaptive_avg_pool2d", "aten.adaptive_avg_pool2d.default", [("self", x), ("output_size", [3, 2])])
    case("adaptive_avg_pool2d_1x1", "aten._adaptive_avg_pool2d.default", [("self", R(2, 3, 4, 5)), ("output_size", [1, 1])])


def sdpa_reference(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    q, k, v = query.double(), key.double(), value.double()
    s = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    att = q @ k.transpose(-2, -1) * s
    if is_causal:
        L, S = att.shape[-2:]
        att = att.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if attn_mask is not None:
        att = att.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else att + attn_mask.double()
    return (torch.softmax(att, -1) @ v).float()


def attention_cases():
    tol = dict(rtol=1e-5, atol=1e-6, reference="float64 math formula (SDPA is torch 2.x)")
    q, k, v = R(2, 3, 4, 8), R(2, 3, 5, 8), R(2, 3, 5, 6)
    case("sdpa", "aten.scaled_dot_product_attention.default", [("query", q), ("key", k), ("value", v)], fn=sdpa_reference, **tol)
    q2, k2, v2 = R(1, 2, 5, 4), R(1, 2, 5, 4), R(1, 2, 5, 4)
    case("sdpa_causal", "aten.scaled_dot_product_attention.default", [("query", q2), ("key", k2), ("value", v2), ("attn_mask", None), ("dropout_p", 0.0), ("is_causal", True)], fn=sdpa_reference, **tol)
    mask = R(4, 5, dtype=torch.bool)
    mask[:, 0] = True
    case("sdpa_bool_mask", "aten.scaled_dot_product_attention.default", [("query", q), ("key", k), ("value", v), ("attn_mask", mask)], fn=sdpa_reference, **tol)
    case("sdpa_float_mask_scale", "aten.scaled_dot_product_attention.default", [("query", q), ("key", k), ("value", v), ("attn_mask", R(3, 1, 5)), ("dropout_p", 0.0), ("is_causal", False), ("scale", 0.3)], fn=sdpa_reference, **tol)


def factory_cases():
    case("full_float", "aten.full.default", [("size", [2, 3]), ("fill_value", 1.5)])
    case("full_int", "aten.full.default", [("size", [4]), ("fill_value", 7)])
    case("full_dtype", "aten.full.default", [("size", [2]), ("fill_value", 2), ("dtype", torch.float32)])
    case("zeros", "aten.zeros.default", [("size", [3, 2])])
    case("ones_int32", "aten.ones.default", [("size", [2, 2]), ("dtype", torch.int32)])
    case("zeros_like", "aten.zeros_like.default", [("self", R(2, 3, dtype=torch.int64))])
    case("ones_like_dtype", "aten.ones_like.default", [("self", R(3)), ("dtype", torch.bool)])
    case("full_like", "aten.full_like.default", [("self", R(2, 2)), ("fill_value", -3.25)])
    case("new_zeros", "aten.new_zeros.default", [("self", R(2, dtype=torch.int32)), ("size", [3, 1])])
    case("new_full", "aten.new_full.default", [("self", R(2)), ("size", [2, 2]), ("fill_value", 4)])
    case("arange_end", "aten.arange.default", [("end", 5)])
    case("arange_start_step", "aten.arange.start_step", [("start", 1), ("end", 10), ("step", 3)])
    case("arange_negative_step", "aten.arange.start_step", [("start", 5), ("end", -4), ("step", -2)])
    case("arange_float", "aten.arange.start_step", [("start", 0.0), ("end", 1.0), ("step", 0.25)])
    case("arange_start", "aten.arange.start", [("start", -3), ("end", 3)])
    case("scalar_tensor", "aten.scalar_tensor.default", [("s", 2.5)])
    case("fill_scalar", "aten.fill.Scalar", [("self", R(2, 3)), ("value", 0.5)])
    case("tril", "aten.tril.default", [("self", R(2, 3, 4))])
    case("triu_diag", "aten.triu.default", [("self", R(4, 4)), ("diagonal", 1)])


def more_cases():
    """Remaining overloads and spellings, so every registered kernel has a case."""
    case("sub_scalar", "aten.sub.Scalar", [("self", R(3)), ("other", 2), ("alpha", 3)])
    case("rsub_tensor", "aten.rsub.Tensor", [("self", R(2, 3)), ("other", R(3)), ("alpha", 2.0)])
    case("div_scalar_mode", "aten.div.Scalar_mode", [("self", torch.tensor([-7, 7, 5])), ("other", 2), ("rounding_mode", "floor")])
    case("floor_divide", "aten.floor_divide.default", [("self", torch.tensor([-7.0, 7.0, -3.5])), ("other", torch.tensor([2.0, -2.0, 2.0]))])
    case("floor_divide_scalar_int", "aten.floor_divide.Scalar", [("self", torch.tensor([-7, 7, 5])), ("other", 2)])
    case("fmod_scalar", "aten.fmod.Scalar", [("self", torch.tensor([-7.0, 7.0, 5.5])), ("other", 2.0)])
    case("bitwise_and_scalar", "aten.bitwise_and.Scalar", [("self", torch.tensor([12, 10, 7])), ("other", 6)])
    case("bitwise_or_scalar", "aten.bitwise_or.Scalar", [("self", torch.tensor([12, 10, 7])), ("other", 1)])
    case("bitwise_xor_scalar", "aten.bitwise_xor.Scalar", [("self", torch.tensor([12, 10, 7])), ("other", 5)])
    case("bitwise_xor_tensor", "aten.bitwise_xor.Tensor", [("self", R(5, dtype=torch.bool)), ("other", R(5, dtype=torch.bool))])
    case("where_scalar_other", "aten.where.ScalarOther", [("condition", R(2, 3, dtype=torch.bool)), ("self", R(2, 3)), ("other", 0.5)])
    case("where_scalar_self", "aten.where.ScalarSelf", [("condition", R(4, dtype=torch.bool)), ("self", -1.0), ("other", R(4))])
    case("where_scalar", "aten.where.Scalar", [("condition", R(4, dtype=torch.bool)), ("self", 1.0), ("other", 0.0)])
    case("clamp_max_op", "aten.clamp_max.default", [("self", R(5)), ("max", 0.1)])
    for op in ["expm1", "log1p", "mish"]:
        case(op, "aten.%s.default" % op, [("self", R(2, 4, lo=-0.9, hi=3.0))])
    case("log2", "aten.log2.default", [("self", R(2, 4, lo=0.1, hi=5.0))])
    case("elu", "aten.elu.default", [("self", R(6) * 2), ("alpha", 0.7)])
    case("softplus", "aten.softplus.default", [("self", R(6) * 10), ("beta", 2.0), ("threshold", 5.0)])
    case("argmin_dim", "aten.argmin.default", [("self", R(3, 4)), ("dim", 0)])
    case("max_all", "aten.max.default", [("self", R(3, 4))])
    case("min_all", "aten.min.default", [("self", R(3, 4))])
    case("any_all", "aten.any.default", [("self", torch.tensor([0.0, 0.0, 2.0]))])
    case("all_all", "aten.all.default", [("self", torch.tensor([1, 1, 0]))])
    case("any_dims", "aten.any.dims", [("self", torch.tensor([[[0, 1], [0, 0]], [[0, 0], [0, 0]]])), ("dim", [1, 2])],
         fn=lambda self, dim: self.flatten(1).any(1), reference="torch 1.13 any over flattened dims (any.dims is 2.x)")
    case("all_dims", "aten.all.dims", [("self", torch.tensor([[[1, 1], [1, 1]], [[1, 0], [1, 1]]])), ("dim", [1, 2])],
         fn=lambda self, dim: self.flatten(1).all(1), reference="torch 1.13 all over flattened dims (all.dims is 2.x)")
    case("var_dim", "aten.var.dim", [("self", R(3, 4)), ("dim", [1]), ("unbiased", False)])
    case("var_mean_dim", "aten.var_mean.dim", [("self", R(3, 4)), ("dim", [0]), ("unbiased", True), ("keepdim", True)])
    case("chunk_uneven", "aten.chunk.default", [("self", R(7, 2)), ("chunks", 3)])
    case("conv1d_frontend", "aten.conv1d.default", [("input", R(1, 2, 9)), ("weight", R(3, 2, 4)), ("bias", R(3)), ("stride", [2]), ("padding", [1])], rtol=1e-5, atol=1e-6)
    case("reshape_alias_copy", "aten._reshape_alias_copy.default", [("self", R(2, 6)), ("size", [3, 4]), ("stride", [4, 1])])
    case("as_strided_copy", "aten.as_strided_copy.default", [("self", R(10)), ("size", [2, 3]), ("stride", [1, 2])])
    case("detach_copy", "aten.detach_copy.default", [("self", R(3))])
    case("narrow_copy", "aten.narrow_copy.default", [("self", R(4, 5)), ("dim", 0), ("start", 1), ("length", 2)])
    case("squeeze_copy_all", "aten.squeeze_copy.default", [("self", R(1, 3, 1))])
    case("squeeze_copy_dims", "aten.squeeze_copy.dims", [("self", R(1, 3, 1)), ("dim", [0, 2])],
         fn=lambda self, dim: self.squeeze(), reference="torch 1.13 squeeze() (squeeze_copy.dims is 2.x)")
    case("lift_fresh_copy", "aten.lift_fresh_copy.default", [("self", R(2, 2))])
    case("to_dtype_layout", "aten.to.dtype_layout", [("self", R(3)), ("dtype", torch.float64)])
    case("fill_tensor", "aten.fill.Tensor", [("self", R(2, 2)), ("value", torch.tensor(1.25))])
    x = R(2, 3)
    case("legit_no_stats", "aten._native_batch_norm_legit.no_stats",
         [("input", R(4, 3, 2)), ("weight", R(3)), ("bias", R(3)), ("training", True), ("momentum", 0.1), ("eps", 1e-5)],
         fn=lambda input, weight, bias, training, momentum, eps: aten.native_batch_norm.default(input, weight, bias, None, None, True, momentum, eps),
         reference="torch 1.13 native_batch_norm(training=True) without running stats", rtol=1e-5, atol=1e-6)

    def flash(query, key, value, dropout_p=0.0, is_causal=False):
        out = sdpa_reference(query, key, value, None, dropout_p, is_causal)
        s = 1.0 / math.sqrt(query.shape[-1])
        att = query.double() @ key.double().transpose(-2, -1) * s
        if is_causal:
            L, S = att.shape[-2:]
            att = att.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
        return out, torch.logsumexp(att, -1).float()

    case("flash_attention_cpu", "aten._scaled_dot_product_flash_attention_for_cpu.default",
         [("query", R(1, 2, 4, 8)), ("key", R(1, 2, 4, 8)), ("value", R(1, 2, 4, 8)), ("dropout_p", 0.0), ("is_causal", True)],
         fn=flash, rtol=1e-5, atol=1e-6, reference="float64 math formula (flash attention for CPU is torch 2.x)")


def pad_cases():
    # Appended last: the earlier cases keep their random draws.
    case("constant_pad_2d", "aten.constant_pad_nd.default", [("self", R(1, 2, 3, 4)), ("pad", [1, 2, 0, 3])])
    case("constant_pad_value_crop", "aten.constant_pad_nd.default",
         [("self", Layout(R(3, 5), "transposed")), ("pad", [-1, 2, 1, -2]), ("value", 1.5)])
    case("constant_pad_int", "aten.constant_pad_nd.default", [("self", R(2, 3, dtype=torch.int64)), ("pad", [2, 0]), ("value", -7)])
    case("roll_two_dims", "aten.roll.default", [("self", R(1, 4, 5, 3)), ("shifts", [-2, 3]), ("dims", [1, 2])])
    case("roll_flat", "aten.roll.default", [("self", Layout(R(3, 4), "strided")), ("shifts", [5])])
    case("roll_negative_dim_big_shift", "aten.roll.default", [("self", R(2, 3)), ("shifts", [7]), ("dims", [-1])])
    case("pad_constant_value", "aten.pad.default", [("self", R(1, 3, 2, 2)), ("pad", [1, 1, 2, 0]), ("mode", "constant"), ("value", -1.0)],
         fn=lambda self, pad, mode, value: torch.nn.functional.pad(self, pad, mode, value))
    case("relu_inplace", "aten.relu_.default", [("self", Layout(R(3, 4), "transposed"))], fn=lambda self: torch.relu(self))
    case("fill_tensor_strided", "aten.fill_.Tensor", [("self", Layout(R(3, 4), "strided")), ("value", torch.tensor(2.5))],
         fn=lambda self, value: torch.full_like(self, 2.5))
    case("fill_scalar_int", "aten.fill_.Scalar", [("self", R(5, dtype=torch.int64)), ("value", 3)],
         fn=lambda self, value: torch.full_like(self, 3))


def ordering_cases():
    """cumsum/cumprod/diff, sort/argsort/topk/flip/nonzero, repeat/repeat_interleave."""
    case("cumsum", "aten.cumsum.default", [("self", R(3, 4)), ("dim", 1)], rtol=1e-5, atol=1e-6)
    case("cumsum_neg_dim_strided", "aten.cumsum.default", [("self", Layout(R(2, 5), "strided")), ("dim", -2)], rtol=1e-5, atol=1e-6)
    case("cumsum_bool_to_int64", "aten.cumsum.default", [("self", R(2, 6, dtype=torch.bool)), ("dim", 1)])
    case("cumsum_int32_dtype", "aten.cumsum.default", [("self", R(7, dtype=torch.int32)), ("dim", 0), ("dtype", torch.int32)])
    case("cumsum_float64_transposed", "aten.cumsum.default", [("self", Layout(R(3, 3, dtype=torch.float64), "transposed")), ("dim", 0)])
    case("cumsum_empty", "aten.cumsum.default", [("self", R(0, 3)), ("dim", 0)])
    case("cumsum_0d", "aten.cumsum.default", [("self", torch.tensor(2.5)), ("dim", 0)])
    case("cumprod", "aten.cumprod.default", [("self", R(2, 5, lo=0.5, hi=1.5)), ("dim", -1)], rtol=1e-5, atol=1e-6)
    case("cumprod_int", "aten.cumprod.default", [("self", R(6, dtype=torch.int64, lo=-3, hi=4)), ("dim", 0)])
    case("diff", "aten.diff.default", [("self", R(3, 5))])
    case("diff_n2_dim0", "aten.diff.default", [("self", R(5, 3)), ("n", 2), ("dim", 0)])
    case("diff_prepend_append", "aten.diff.default", [("self", R(2, 4)), ("n", 1), ("dim", 1), ("prepend", R(2, 1)), ("append", R(2, 2))])
    case("diff_bool", "aten.diff.default", [("self", R(7, dtype=torch.bool))])
    case("diff_int_n_past_length", "aten.diff.default", [("self", R(3, dtype=torch.int64)), ("n", 4)])
    nan = float("nan")
    distinct = torch.randperm(24).float().reshape(4, 6) - 10
    case("sort", "aten.sort.default", [("self", distinct)])
    case("sort_descending_dim0", "aten.sort.default", [("self", Layout(distinct, "transposed")), ("dim", 0), ("descending", True)])
    case("sort_nan", "aten.sort.default", [("self", torch.tensor([3.0, nan, -1.0, 2.0, nan, 0.5]))])
    case("sort_nan_descending", "aten.sort.default", [("self", torch.tensor([3.0, nan, -1.0, 2.0])), ("descending", True)])
    case("sort_stable_ties", "aten.sort.stable", [("self", torch.tensor([2, 1, 2, 0, 1, 2])), ("stable", True)])
    case("sort_stable_ties_descending", "aten.sort.stable", [("self", torch.tensor([2, 1, 2, 0, 1, 2])), ("stable", True), ("descending", True)])
    case("sort_int_empty", "aten.sort.default", [("self", R(0, 3, dtype=torch.int64))])
    case("argsort", "aten.argsort.default", [("self", distinct), ("dim", 1)])
    case("argsort_stable", "aten.argsort.stable", [("self", torch.tensor([1.0, 0.0, 1.0, 0.0])), ("stable", True), ("descending", True)])
    case("topk", "aten.topk.default", [("self", distinct), ("k", 3)])
    case("topk_smallest_dim0", "aten.topk.default", [("self", Layout(distinct, "strided")), ("k", 2), ("dim", 0), ("largest", False)])
    case("topk_nan_largest", "aten.topk.default", [("self", torch.tensor([1.0, nan, 3.0, -2.0])), ("k", 2)])
    case("topk_int_k0", "aten.topk.default", [("self", R(3, 4, dtype=torch.int64)), ("k", 0)])
    case("flip", "aten.flip.default", [("self", R(2, 3, 4)), ("dims", [0, 2])])
    case("flip_neg_transposed", "aten.flip.default", [("self", Layout(R(3, 4), "transposed")), ("dims", [-1])])
    case("flip_int_strided", "aten.flip.default", [("self", Layout(R(2, 5, dtype=torch.int64), "strided")), ("dims", [0, 1])])
    case("flip_empty", "aten.flip.default", [("self", R(0, 3)), ("dims", [1])])
    case("nonzero", "aten.nonzero.default", [("self", torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]]))])
    case("nonzero_bool_3d", "aten.nonzero.default", [("self", R(2, 3, 2, dtype=torch.bool))])
    case("nonzero_none", "aten.nonzero.default", [("self", torch.zeros(4, dtype=torch.int64))])
    case("nonzero_transposed", "aten.nonzero.default", [("self", Layout(R(3, 4, dtype=torch.int64, lo=0, hi=2), "transposed"))])
    case("repeat", "aten.repeat.default", [("self", R(2, 3)), ("repeats", [2, 1, 3])])
    case("repeat_transposed", "aten.repeat.default", [("self", Layout(R(2, 3), "transposed")), ("repeats", [3, 2])])
    case("repeat_int_zero", "aten.repeat.default", [("self", R(3, dtype=torch.int64)), ("repeats", [0, 2])])
    case("repeat_0d", "aten.repeat.default", [("self", torch.tensor(1.5)), ("repeats", [2, 2])])
    case("repeat_interleave_self_int", "aten.repeat_interleave.self_int", [("self", R(2, 3)), ("repeats", 2), ("dim", 1)])
    case("repeat_interleave_self_int_flat", "aten.repeat_interleave.self_int", [("self", Layout(R(2, 3), "transposed")), ("repeats", 3)])
    case("repeat_interleave_gqa", "aten.repeat_interleave.self_int", [("self", R(1, 2, 3, 4)), ("repeats", 2), ("dim", 1)])
    case("repeat_interleave_self_tensor", "aten.repeat_interleave.self_Tensor", [("self", R(3, 2)), ("repeats", torch.tensor([1, 0, 2])), ("dim", 0)])
    case("repeat_interleave_index", "aten.repeat_interleave.Tensor", [("repeats", torch.tensor([2, 0, 3, 1]))])


def scatter_cases():
    # scatter*, index_put/index_copy/index_add, masked_scatter, embedding_bag
    # Duplicate indices only where the result does not depend on their order:
    # integer sums/products, amax/amin, or float64 values exact in binary.
    def perm_rows(rows, n, k):  # index rows with distinct entries (scatter without reduction)
        return torch.stack([torch.randperm(n)[:k] for _ in range(rows)])

    def exact(*shape):  # float64 quarters: every sum and mean in these cases is exact
        return torch.randint(-8, 9, shape).double() / 4

    L = torch.int64
    i32 = torch.int32
    x = R(3, 5)
    case("scatter_src_dim1", "aten.scatter.src", [("self", x), ("dim", 1), ("index", perm_rows(3, 5, 4)), ("src", Layout(R(3, 4), "transposed"))])
    case("scatter_src_neg_dim_small_index", "aten.scatter.src",
         [("self", Layout(R(4, 3), "strided")), ("dim", -2), ("index", perm_rows(3, 4, 2).t().contiguous()), ("src", R(3, 3))])
    case("scatter_src_int32_index_int", "aten.scatter.src",
         [("self", R(2, 6, dtype=L)), ("dim", 1), ("index", perm_rows(2, 6, 3).to(i32)), ("src", R(2, 5, dtype=L))])
    case("scatter_src_bool_3d", "aten.scatter.src",
         [("self", R(2, 3, 4, dtype=torch.bool)), ("dim", 2), ("index", perm_rows(6, 4, 2).reshape(2, 3, 2)), ("src", R(2, 3, 2, dtype=torch.bool))])
    case("scatter_src_empty_index", "aten.scatter.src", [("self", R(3, 2)), ("dim", 0), ("index", torch.zeros(0, 2, dtype=L)), ("src", R(1, 2))])
    case("scatter_src_zero_size_self", "aten.scatter.src", [("self", R(0, 3)), ("dim", 1), ("index", torch.zeros(0, 3, dtype=L)), ("src", R(0, 3))])
    case("scatter_value", "aten.scatter.value", [("self", R(4, 3)), ("dim", 0), ("index", perm_rows(3, 4, 2).t().contiguous()), ("value", -1.5)])
    case("scatter_value_int", "aten.scatter.value", [("self", R(4, dtype=L)), ("dim", 0), ("index", torch.tensor([3, 0])), ("value", 7)])
    dup = torch.tensor([[0, 2, 0, 2], [1, 1, 1, 0]])
    case("scatter_reduce_add_int_dups", "aten.scatter.reduce",
         [("self", R(2, 3, dtype=L)), ("dim", 1), ("index", dup), ("src", R(2, 4, dtype=L)), ("reduce", "add")])
    case("scatter_reduce_multiply_int_dups", "aten.scatter.reduce",
         [("self", R(2, 3, dtype=L)), ("dim", 1), ("index", dup), ("src", R(2, 4, dtype=L)), ("reduce", "multiply")])
    case("scatter_reduce_multiply_float", "aten.scatter.reduce",
         [("self", R(3, 5)), ("dim", 1), ("index", perm_rows(3, 5, 3)), ("src", R(3, 3)), ("reduce", "multiply")])
    case("scatter_value_reduce_multiply", "aten.scatter.value_reduce",
         [("self", R(2, 3, dtype=L)), ("dim", 1), ("index", dup), ("value", 3), ("reduce", "multiply")])
    case("scatter_value_reduce_add_float", "aten.scatter.value_reduce",
         [("self", exact(2, 3)), ("dim", -1), ("index", dup), ("value", 0.5), ("reduce", "add")])
    case("scatter_add_float_exact_dups", "aten.scatter_add.default",
         [("self", exact(3, 4)), ("dim", 0), ("index", torch.tensor([[0, 1, 2, 0], [0, 1, 0, 0], [2, 2, 2, 2]])), ("src", Layout(exact(3, 4), "transposed"))])
    case("scatter_add_float32", "aten.scatter_add.default", [("self", R(4, 3)), ("dim", 1), ("index", perm_rows(4, 3, 2)), ("src", R(4, 2))])
    case("scatter_add_int8_dups", "aten.scatter_add.default",
         [("self", R(5, dtype=torch.int8)), ("dim", 0), ("index", torch.tensor([4, 4, 0, 4, 1])), ("src", R(5, dtype=torch.int8))])
    case("scatter_add_0d", "aten.scatter_add.default", [("self", torch.tensor(1.25)), ("dim", 0), ("index", torch.tensor(0)), ("src", torch.tensor(-0.5))])
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for inc in [True, False]:
            tag = "self" if inc else "noself"
            case("scatter_reduce_%s_%s_f64" % (red, tag), "aten.scatter_reduce.two",
                 [("self", exact(3, 4)), ("dim", 1), ("index", torch.tensor([[0, 0, 3, 1, 0], [2, 2, 2, 2, 2], [1, 3, 1, 3, 1]])),
                  ("src", exact(3, 5)), ("reduce", red), ("include_self", inc)])
            case("scatter_reduce_%s_%s_int" % (red, tag), "aten.scatter_reduce.two",
                 [("self", R(6, dtype=L)), ("dim", 0), ("index", torch.tensor([5, 0, 5, 2, 5, 0, 1])), ("src", R(7, dtype=L, lo=-9, hi=10)),
                  ("reduce", red), ("include_self", inc)])
    case("scatter_reduce_amax_float32_nan", "aten.scatter_reduce.two",
         [("self", torch.tensor([1.0, float("nan"), 3.0, -2.0])), ("dim", 0), ("index", torch.tensor([0, 0, 2, 3, 3])),
          ("src", torch.tensor([5.0, float("nan"), 2.0, -1.0, -3.0])), ("reduce", "amax")])
    case("scatter_reduce_amin_float32_dim0", "aten.scatter_reduce.two",
         [("self", Layout(R(3, 4), "strided")), ("dim", 0), ("index", torch.tensor([[2, 0, 0, 1], [2, 2, 0, 1]])), ("src", R(2, 4)),
          ("reduce", "amin"), ("include_self", False)])
    case("scatter_reduce_mean_int_default_include_self", "aten.scatter_reduce.two",
         [("self", torch.tensor([1, 2, 3])), ("dim", 0), ("index", torch.tensor([0, 0, 2])), ("src", torch.tensor([4, 6, -6])), ("reduce", "mean")])

    h = torch.float16
    case("scatter_add_f16", "aten.scatter_add.default", [("self", R(3, 4, dtype=h)), ("dim", 1), ("index", perm_rows(3, 4, 3)), ("src", R(3, 3, dtype=h))])
    case("scatter_reduce_amax_f16_dups", "aten.scatter_reduce.two",
         [("self", R(2, 3, dtype=h)), ("dim", 1), ("index", dup), ("src", R(2, 4, dtype=h)), ("reduce", "amax"), ("include_self", False)])
    case("scatter_src_uint8_dim0_transposed_index", "aten.scatter.src",
         [("self", R(4, 3, 2, dtype=torch.uint8, lo=0, hi=200)), ("dim", 0),
          ("index", Layout(perm_rows(6, 4, 2).t().reshape(2, 3, 2).contiguous(), "transposed")), ("src", R(2, 3, 2, dtype=torch.uint8, lo=0, hi=200))])
    case("scatter_reduce_prod_int8_dups", "aten.scatter_reduce.two",
         [("self", R(4, dtype=torch.int8)), ("dim", 0), ("index", torch.tensor([1, 1, 1, 3, 3])), ("src", R(5, dtype=torch.int8)), ("reduce", "prod")])
    # index_copy / index_add / index_fill
    case("index_copy_dim1", "aten.index_copy.default",
         [("self", Layout(R(3, 5), "transposed")), ("dim", 1), ("index", torch.tensor([4, 0, 2])), ("source", R(3, 3))])
    case("index_copy_neg_dim_3d", "aten.index_copy.default",
         [("self", R(2, 3, 4, dtype=L)), ("dim", -1), ("index", torch.tensor([3, 1])), ("source", Layout(R(2, 3, 2, dtype=L), "strided"))])
    case("index_copy_0d_index", "aten.index_copy.default", [("self", R(4, 2)), ("dim", 0), ("index", torch.tensor(2)), ("source", R(1, 2))])
    case("index_copy_empty", "aten.index_copy.default", [("self", R(3, 2)), ("dim", 0), ("index", torch.zeros(0, dtype=L)), ("source", R(0, 2))])
    case("index_add_alpha", "aten.index_add.default",
         [("self", R(4, 3)), ("dim", 0), ("index", torch.tensor([3, 0])), ("source", Layout(R(2, 3), "transposed")), ("alpha", 2.5)], rtol=1e-5)
    case("index_add_default_alpha_int32_index", "aten.index_add.default",
         [("self", R(2, 5)), ("dim", 1), ("index", torch.tensor([4, 1, 2], dtype=i32)), ("source", R(2, 3))])
    case("index_add_int_dups", "aten.index_add.default",
         [("self", R(3, 4, dtype=L)), ("dim", -1), ("index", torch.tensor([1, 1, 3, 1])), ("source", R(3, 4, dtype=L)), ("alpha", -2)])
    case("index_add_f64_exact_dups", "aten.index_add.default",
         [("self", exact(5, 2)), ("dim", 0), ("index", torch.tensor([4, 0, 4, 4])), ("source", exact(4, 2))])
    case("index_fill_scalar_neg_index", "aten.index_fill.int_Scalar",
         [("self", R(4, 3)), ("dim", 0), ("index", torch.tensor([-1, 1])), ("value", 2.25)])
    case("index_fill_scalar_int_dim1", "aten.index_fill.int_Scalar",
         [("self", Layout(R(2, 5, dtype=L), "strided")), ("dim", 1), ("index", torch.tensor([0, 4, -2])), ("value", -3)])
    case("index_fill_tensor", "aten.index_fill.int_Tensor",
         [("self", R(3, 2, 2)), ("dim", -1), ("index", torch.tensor([1])), ("value", torch.tensor(-0.5))])
    case("index_fill_tensor_bool", "aten.index_fill.int_Tensor",
         [("self", R(3, 4, dtype=torch.bool)), ("dim", 0), ("index", torch.tensor([2, 0])), ("value", torch.tensor(True))])

    case("index_add_f16", "aten.index_add.default", [("self", R(3, 2, dtype=h)), ("dim", 0), ("index", torch.tensor([2, 0])), ("source", R(2, 2, dtype=h))])
    case("index_copy_bool", "aten.index_copy.default",
         [("self", R(3, 4, dtype=torch.bool)), ("dim", 1), ("index", torch.tensor([1, 3])), ("source", R(3, 2, dtype=torch.bool))])
    # masked_scatter: source is read in its row-major order, mask positions row-major
    case("masked_scatter", "aten.masked_scatter.default",
         [("self", R(3, 4)), ("mask", R(3, 4, dtype=torch.bool)), ("source", Layout(R(4, 3), "transposed"))])
    case("masked_scatter_mask_broadcast", "aten.masked_scatter.default",
         [("self", Layout(R(2, 5), "strided")), ("mask", torch.tensor([True, False, True, True, False])), ("source", R(7))])
    case("masked_scatter_self_broadcast", "aten.masked_scatter.default",
         [("self", R(4, dtype=L)), ("mask", R(3, 4, dtype=torch.bool)), ("source", R(2, 6, dtype=L))])
    case("masked_scatter_none_true", "aten.masked_scatter.default",
         [("self", R(2, 2)), ("mask", torch.zeros(2, 2, dtype=torch.bool)), ("source", R(0))])

    case("masked_scatter_bool", "aten.masked_scatter.default",
         [("self", R(2, 3, dtype=torch.bool)), ("mask", R(2, 3, dtype=torch.bool)), ("source", R(6, dtype=torch.bool))])
    # diagonal (a view)
    case("diagonal_default", "aten.diagonal.default", [("self", R(3, 4))])
    case("diagonal_offset", "aten.diagonal.default", [("self", Layout(R(4, 3), "transposed")), ("offset", 1)])
    case("diagonal_neg_offset_dims", "aten.diagonal.default", [("self", R(2, 3, 4)), ("offset", -1), ("dim1", 2), ("dim2", 0)])
    case("diagonal_neg_dims_strided", "aten.diagonal.default", [("self", Layout(R(3, 2, 5), "strided")), ("dim1", -1), ("dim2", -3)])
    case("diagonal_empty", "aten.diagonal.default", [("self", R(2, 3)), ("offset", 5)])

    # _embedding_bag: all four outputs as PyTorch's CPU kernel fills them
    w = R(10, 3)
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 2, 2, 5])
    eb = "aten._embedding_bag.default"
    case("embedding_bag_sum", eb, [("weight", w), ("indices", idx), ("offsets", off)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_mean", eb, [("weight", w), ("indices", idx), ("offsets", off), ("mode", 1)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_max", eb, [("weight", w), ("indices", idx), ("offsets", off), ("mode", 2)])
    case("embedding_bag_sum_include_last_offset", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 0), ("include_last_offset", True)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_max_include_last_offset", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 2), ("include_last_offset", True)])
    case("embedding_bag_per_sample_weights", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 0), ("per_sample_weights", R(8))], rtol=1e-5, atol=1e-6)
    case("embedding_bag_sum_f64_transposed", eb,
         [("weight", Layout(R(6, 4, dtype=torch.float64), "transposed")), ("indices", torch.tensor([5, 0, 0, 3])), ("offsets", torch.tensor([0, 1]))])
    case("embedding_bag_sum_transposed_float32", eb,
         [("weight", Layout(w, "transposed")), ("indices", idx), ("offsets", off)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_mean_padding_idx", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 1), ("padding_idx", 2)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_max_padding_idx", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 2), ("padding_idx", 2)])
    case("embedding_bag_sum_padding_idx", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 0), ("padding_idx", 4)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_mean_int32", eb,
         [("weight", w), ("indices", idx.to(i32)), ("offsets", off.to(i32)), ("mode", 1)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_max_mixed_index_dtypes", eb,
         [("weight", w), ("indices", idx.to(i32)), ("offsets", off), ("mode", 2)])
    # PyTorch's fast path (float32 weight, no padding_idx) ends the last bag at
    # the last offset with include_last_offset; mean still divides by the count to the end.
    case("embedding_bag_mean_include_last_offset", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 1), ("include_last_offset", True)], rtol=1e-5, atol=1e-6)
    case("embedding_bag_sum_include_last_offset_f64", eb,
         [("weight", w.double()), ("indices", idx), ("offsets", off), ("mode", 0), ("include_last_offset", True)])
    case("embedding_bag_mean_no_indices", eb, [("weight", w), ("indices", torch.zeros(0, dtype=L)), ("offsets", torch.tensor([0, 0])), ("mode", 1)])
    case("embedding_bag_max_no_indices", eb, [("weight", w), ("indices", torch.zeros(0, dtype=L)), ("offsets", torch.tensor([0])), ("mode", 2)])
    case("embedding_bag_sum_include_last_offset_padding", eb,
         [("weight", w), ("indices", idx), ("offsets", off), ("mode", 0), ("include_last_offset", True), ("padding_idx", 3)], rtol=1e-5, atol=1e-6)

    # In-place forms: expected = the functional op on a clone. The case runs
    # twice on the same (now written) inputs, so each case is idempotent:
    # no duplicate indices, and accumulation only on bool (an OR).
    def ip(fn):
        return lambda self, **kw: fn(self.clone(), **kw)

    case("index_put_inplace_none_and_broadcast", "aten.index_put_.default",
         [("self", Layout(R(3, 4, 5), "transposed")), ("indices", [None, torch.tensor([3, 0]), torch.tensor([[1], [4]])]), ("values", R(2))],
         fn=ip(lambda self, indices, values: aten.index_put_(self, indices, values)))
    case("index_put_inplace_kv_cache", "aten.index_put_.default",
         [("self", R(1, 2, 6, 3)), ("indices", [None, None, torch.tensor([4, 1])]), ("values", R(1, 2, 2, 3))],
         fn=ip(lambda self, indices, values: aten.index_put_(self, indices, values)))
    case("index_put_inplace_accumulate_bool", "aten.index_put_.default",
         [("self", R(6, dtype=torch.bool)), ("indices", [torch.tensor([1, 1, -2, 0])]), ("values", R(4, dtype=torch.bool)), ("accumulate", True)],
         fn=ip(lambda self, indices, values, accumulate: aten.index_put_(self, indices, values, accumulate)))
    case("index_put_inplace_bool_mask", "aten.index_put_.default",
         [("self", R(3, 4, dtype=L)), ("indices", [torch.tensor([True, False, True])]), ("values", torch.tensor(5))],
         fn=ip(lambda self, indices, values: aten.index_put_(self, indices, values)))
    case("index_copy_inplace_kv_cache", "aten.index_copy_.default",
         [("self", Layout(R(1, 6, 2, 3), "strided")), ("dim", 1), ("index", torch.tensor([2, 3])), ("source", R(1, 2, 2, 3))],
         fn=ip(lambda self, dim, index, source: self.index_copy_(dim, index, source)))
    case("scatter_inplace_src", "aten.scatter_.src",
         [("self", Layout(R(3, 5), "transposed")), ("dim", 1), ("index", perm_rows(3, 5, 2)), ("src", R(3, 2))],
         fn=ip(lambda self, dim, index, src: self.scatter_(dim, index, src)))
    case("scatter_inplace_value", "aten.scatter_.value",
         [("self", R(4, 2, dtype=L)), ("dim", 0), ("index", perm_rows(2, 4, 3).t().contiguous()), ("value", -4)],
         fn=ip(lambda self, dim, index, value: self.scatter_(dim, index, value)))
    case("scatter_add_inplace_bool", "aten.scatter_add_.default",
         [("self", R(2, 4, dtype=torch.bool)), ("dim", 1), ("index", torch.tensor([[0, 0, 3], [2, 1, 2]])), ("src", R(2, 3, dtype=torch.bool))],
         fn=ip(lambda self, dim, index, src: self.scatter_add_(dim, index, src)))
    case("index_add_inplace_bool", "aten.index_add_.default",
         [("self", R(4, 3, dtype=torch.bool)), ("dim", 0), ("index", torch.tensor([3, 3, 1])), ("source", R(3, 3, dtype=torch.bool))],
         fn=ip(lambda self, dim, index, source: self.index_add_(dim, index, source)))
    case("masked_scatter_inplace", "aten.masked_scatter_.default",
         [("self", Layout(R(3, 4), "strided")), ("mask", R(4, dtype=torch.bool)), ("source", R(3, 5))],
         fn=ip(lambda self, mask, source: self.masked_scatter_(mask, source)))
    case("masked_fill_inplace_scalar", "aten.masked_fill_.Scalar",
         [("self", Layout(R(3, 4), "transposed")), ("mask", R(3, 1, dtype=torch.bool)), ("value", -2.0)],
         fn=ip(lambda self, mask, value: self.masked_fill_(mask, value)))
    case("masked_fill_inplace_tensor_int", "aten.masked_fill_.Tensor",
         [("self", R(2, 3, dtype=L)), ("mask", R(2, 3, dtype=torch.bool)), ("value", torch.tensor(9))],
         fn=ip(lambda self, mask, value: self.masked_fill_(mask, value)))
    case("scatter_reduce_inplace_amax_noself", "aten.scatter_reduce_.two",
         [("self", Layout(R(3, 4), "transposed")), ("dim", 1), ("index", torch.tensor([[0, 0, 3], [2, 1, 2], [3, 3, 3]])), ("src", R(3, 3)),
          ("reduce", "amax"), ("include_self", False)],
         fn=ip(lambda self, dim, index, src, reduce, include_self: self.scatter_reduce_(dim, index, src, reduce, include_self=include_self)))
    case("index_fill_inplace_scalar", "aten.index_fill_.int_Scalar",
         [("self", Layout(R(3, 4), "strided")), ("dim", -1), ("index", torch.tensor([3, -4])), ("value", 0.75)],
         fn=ip(lambda self, dim, index, value: self.index_fill_(dim, index, value)))
    case("index_fill_inplace_tensor", "aten.index_fill_.int_Tensor",
         [("self", R(4, 2, dtype=L)), ("dim", 0), ("index", torch.tensor(2)), ("value", torch.tensor(-6))],
         fn=ip(lambda self, dim, index, value: self.index_fill_(dim, index, value)))


def spatial_cases():
    # upsample, reflection/replication pads, grid_sampler, 3-D conv/pool, transposed conv, cdist
    d = torch.float64
    tol = dict(rtol=1e-5, atol=1e-6)
    # Reflection / replication pads (pairs from the last dim backwards; negative crops).
    case("reflection_pad1d", "aten.reflection_pad1d.default", [("self", R(2, 3, 5)), ("padding", [2, 4])])
    case("reflection_pad1d_unbatched_neg", "aten.reflection_pad1d.default", [("self", Layout(R(3, 6), "transposed")), ("padding", [-1, 3])])
    case("reflection_pad2d", "aten.reflection_pad2d.default", [("self", R(1, 2, 4, 5)), ("padding", [1, 2, 3, 0])])
    case("reflection_pad2d_f64_strided", "aten.reflection_pad2d.default", [("self", Layout(R(2, 3, 4, dtype=d), "strided")), ("padding", [3, 3, 1, 2])])
    case("reflection_pad3d", "aten.reflection_pad3d.default", [("self", R(1, 2, 3, 3, 4)), ("padding", [1, 2, 0, 2, 2, 1])])
    case("reflection_pad2d_int", "aten.reflection_pad2d.default", [("self", R(1, 3, 3, dtype=torch.int64)), ("padding", [2, 2, 1, 1])])
    case("reflection_pad1d_empty_batch", "aten.reflection_pad1d.default", [("self", R(0, 2, 4)), ("padding", [1, 1])])
    case("replication_pad1d", "aten.replication_pad1d.default", [("self", R(2, 3, 4)), ("padding", [3, 1])])
    case("replication_pad2d", "aten.replication_pad2d.default", [("self", Layout(R(1, 2, 3, 4), "transposed")), ("padding", [5, 1, -1, 4])])
    case("replication_pad3d_f64", "aten.replication_pad3d.default", [("self", R(2, 2, 3, 2, dtype=d)), ("padding", [1, 0, 2, 1, 0, 3])])
    # Upsampling. .vec with output_size (scale_factors None); .default with and without scales.
    x4 = R(1, 2, 3, 4)
    case("upsample_nearest1d_vec", "aten.upsample_nearest1d.vec", [("input", R(2, 3, 5)), ("output_size", [12]), ("scale_factors", None)])
    case("upsample_nearest1d_scale", "aten.upsample_nearest1d.default", [("self", R(1, 2, 4)), ("output_size", [10]), ("scales", 2.5)])
    case("upsample_nearest2d_vec_down", "aten.upsample_nearest2d.vec", [("input", Layout(R(1, 2, 7, 5), "transposed")), ("output_size", [3, 4]), ("scale_factors", None)])
    case("upsample_nearest2d_double", "aten.upsample_nearest2d.default", [("self", x4), ("output_size", [6, 8])])
    case("upsample_nearest2d_scales", "aten.upsample_nearest2d.default", [("self", R(1, 1, 3, 3, dtype=d)), ("output_size", [5, 7]), ("scales_h", 1.7), ("scales_w", 2.4)])
    case("upsample_nearest3d", "aten.upsample_nearest3d.default", [("self", R(1, 2, 2, 3, 2)), ("output_size", [3, 5, 4])])
    case("upsample_nearest3d_vec", "aten.upsample_nearest3d.vec", [("input", R(1, 1, 2, 2, 3)), ("output_size", [4, 3, 5]), ("scale_factors", None)])
    case("upsample_nearest_exact2d", "aten._upsample_nearest_exact2d.default", [("self", x4), ("output_size", [5, 7])])
    case("upsample_nearest_exact2d_vec", "aten._upsample_nearest_exact2d.vec", [("input", R(2, 1, 5, 3)), ("output_size", [3, 6]), ("scale_factors", None)])
    case("upsample_nearest2d_uint8", "aten.upsample_nearest2d.default", [("self", R(1, 2, 2, 3, dtype=torch.uint8, lo=0, hi=200)), ("output_size", [5, 4])])
    for ac in [False, True]:
        s = "_align" if ac else ""
        case("upsample_bilinear2d_vec" + s, "aten.upsample_bilinear2d.vec", [("input", x4), ("output_size", [7, 5]), ("align_corners", ac), ("scale_factors", None)], **tol)
        case("upsample_bilinear2d_scales" + s, "aten.upsample_bilinear2d.default", [("self", Layout(R(1, 2, 3, 4), "strided")), ("output_size", [5, 9]), ("align_corners", ac), ("scales_h", 1.8), ("scales_w", 2.3)], **tol)
        case("upsample_linear1d" + s, "aten.upsample_linear1d.vec", [("input", R(2, 2, 5, dtype=d)), ("output_size", [11]), ("align_corners", ac), ("scale_factors", None)])
        case("upsample_bicubic2d" + s, "aten.upsample_bicubic2d.vec", [("input", R(1, 2, 4, 3)), ("output_size", [6, 7]), ("align_corners", ac), ("scale_factors", None)], **tol)
    case("upsample_bilinear2d_down_f64", "aten.upsample_bilinear2d.default", [("self", R(2, 1, 6, 5, dtype=d)), ("output_size", [4, 2]), ("align_corners", False)])
    case("upsample_bilinear2d_to_1", "aten.upsample_bilinear2d.default", [("self", R(1, 1, 3, 4)), ("output_size", [1, 1]), ("align_corners", True)], **tol)
    case("upsample_bicubic2d_down", "aten.upsample_bicubic2d.vec", [("input", R(1, 1, 7, 6, dtype=d)), ("output_size", [3, 4]), ("align_corners", False), ("scale_factors", None)])
    case("upsample_nearest_exact1d", "aten._upsample_nearest_exact1d.default", [("self", R(2, 2, 5)), ("output_size", [8]), ("scales", 1.6)])
    case("upsample_nearest_exact1d_vec", "aten._upsample_nearest_exact1d.vec", [("input", R(1, 2, 7)), ("output_size", [3]), ("scale_factors", None)])
    case("upsample_nearest_exact3d", "aten._upsample_nearest_exact3d.default", [("self", R(1, 1, 2, 3, 3)), ("output_size", [3, 5, 2])])
    case("upsample_nearest_exact3d_vec", "aten._upsample_nearest_exact3d.vec", [("input", R(1, 2, 3, 2, 2)), ("output_size", [2, 4, 3]), ("scale_factors", None)])
    case("upsample_linear1d_scale", "aten.upsample_linear1d.default", [("self", R(1, 3, 4)), ("output_size", [9]), ("align_corners", False), ("scales", 2.2)], **tol)
    for ac in [False, True]:
        s = "_align" if ac else ""
        case("upsample_trilinear3d_vec" + s, "aten.upsample_trilinear3d.vec", [("input", R(1, 2, 2, 3, 3)), ("output_size", [3, 5, 4]), ("align_corners", ac), ("scale_factors", None)], **tol)
    case("upsample_trilinear3d_scales_f64", "aten.upsample_trilinear3d.default", [("self", Layout(R(1, 1, 3, 2, 4, dtype=d), "transposed")), ("output_size", [4, 5, 6]), ("align_corners", False), ("scales_d", 1.5), ("scales_h", 2.6), ("scales_w", 1.4)])
    case("upsample_bicubic2d_scales", "aten.upsample_bicubic2d.default", [("self", R(1, 2, 3, 4)), ("output_size", [7, 9]), ("align_corners", False), ("scales_h", 2.4), ("scales_w", 2.3)], **tol)
    case("upsample_bicubic2d_default_align_f64", "aten.upsample_bicubic2d.default", [("self", Layout(R(2, 1, 4, 4, dtype=d), "strided")), ("output_size", [5, 3]), ("align_corners", True)])
    # grid_sampler_2d: interpolation 0/1/2 x padding 0/1/2 x align_corners; grid reaches outside [-1, 1].
    gx = R(2, 3, 4, 5)
    for interp in range(3):
        for pad in range(3):
            for ac in [False, True]:
                g = R(2, 3, 4, 2, lo=-1.3, hi=1.3)
                case("grid_sampler_2d_i%d_p%d%s" % (interp, pad, "_align" if ac else ""), "aten.grid_sampler_2d.default",
                     [("input", gx), ("grid", g), ("interpolation_mode", interp), ("padding_mode", pad), ("align_corners", ac)], **tol)
    case("grid_sampler_2d_f64_strided", "aten.grid_sampler_2d.default",
         [("input", Layout(R(1, 2, 3, 4, dtype=d), "transposed")), ("grid", Layout(R(1, 2, 3, 2, dtype=d, lo=-1.0, hi=1.0), "strided")), ("interpolation_mode", 0), ("padding_mode", 2), ("align_corners", False)])
    gnan = R(1, 2, 3, 2, lo=-1.5, hi=1.5)
    gnan[0, 0, 1, 0] = float("nan")
    gnan[0, 1, 2, 1] = float("nan")
    gnan[0, 1, 0, 0] = 1e30
    for interp, pad in [(0, 0), (0, 1), (1, 0), (1, 2), (2, 1), (2, 2)]:
        case("grid_sampler_2d_nan_i%d_p%d" % (interp, pad), "aten.grid_sampler_2d.default",
             [("input", R(1, 2, 3, 4)), ("grid", gnan), ("interpolation_mode", interp), ("padding_mode", pad), ("align_corners", False)], **tol)
    # Distances.
    for p in [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")]:
        case("cdist_p%s" % str(p).replace(".", "_"), "aten._cdist_forward.default", [("x1", R(2, 4, 3)), ("x2", R(2, 5, 3)), ("p", p), ("compute_mode", None)], **tol)
    case("cdist_broadcast_f64", "aten._cdist_forward.default", [("x1", R(2, 1, 3, 4, dtype=d)), ("x2", Layout(R(3, 2, 4, dtype=d), "transposed")), ("p", 2.0), ("compute_mode", 2)])
    case("cdist_mm_mode", "aten._cdist_forward.default", [("x1", R(3, 4)), ("x2", R(30, 4)), ("p", 2.0), ("compute_mode", 0)], rtol=1e-4, atol=1e-5)
    case("cdist_mm_forced", "aten._cdist_forward.default", [("x1", R(3, 4, dtype=d)), ("x2", R(2, 4, dtype=d)), ("p", 2.0), ("compute_mode", 1)], rtol=1e-9, atol=1e-10)
    case("cdist_empty", "aten._cdist_forward.default", [("x1", R(0, 3)), ("x2", R(2, 3)), ("p", 2.0), ("compute_mode", None)])
    case("pdist", "aten._pdist_forward.default", [("self", R(5, 3))], **tol)
    case("pdist_p1_f64", "aten._pdist_forward.default", [("self", R(4, 3, dtype=d)), ("p", 1.0)])
    case("pdist_pinf", "aten._pdist_forward.default", [("self", R(3, 4)), ("p", float("inf"))], **tol)
    # Convolutions: 3-D, transposed (1-D/2-D/3-D), string padding.
    def convg(name, x, w, b, stride, padding, dilation, groups, transposed, output_padding, **kw):
        case(name, "aten.convolution.default", [("input", x), ("weight", w), ("bias", b), ("stride", stride), ("padding", padding), ("dilation", dilation), ("transposed", transposed), ("output_padding", output_padding), ("groups", groups)], **(kw or tol))
    convg("convolution_3d", R(2, 4, 4, 5, 4), R(6, 2, 2, 3, 2), R(6), [1, 2, 1], [1, 0, 1], [2, 1, 1], 2, False, [0, 0, 0])
    convg("convolution_3d_f64_strided", Layout(R(1, 2, 3, 4, 5, dtype=d), "strided"), R(3, 2, 3, 3, 3, dtype=d), None, [2, 1, 2], [1, 1, 1], [1, 1, 1], 1, False, [0, 0, 0], rtol=1e-10, atol=1e-12)
    convg("convolution_transposed_1d_groups", R(2, 4, 5), R(4, 3, 3), R(6), [3], [1], [2], 2, True, [1])
    convg("convolution_transposed_2d_dilation", Layout(R(1, 3, 4, 3), "transposed"), R(3, 2, 2, 3), None, [2, 1], [0, 2], [2, 3], 1, True, [1, 0])
    convg("convolution_transposed_3d", R(1, 2, 3, 2, 3), R(2, 2, 3, 2, 2), R(4), [2, 1, 2], [1, 0, 1], [1, 1, 2], 2, True, [1, 0, 1])
    convg("convolution_transposed_f64", R(2, 2, 3, 3, dtype=d), R(2, 3, 3, 3, dtype=d), R(3, dtype=d), [2, 2], [1, 1], [1, 1], 1, True, [1, 1], rtol=1e-10, atol=1e-12)
    convg("convolution_empty_batch", R(0, 2, 5), R(3, 2, 2), None, [1], [0], [1], 1, False, [0])
    case("conv3d", "aten.conv3d.default", [("input", R(1, 3, 4, 4, 4)), ("weight", R(2, 3, 3, 3, 3)), ("bias", R(2)), ("stride", [1, 1, 1]), ("padding", [1, 1, 1])], **tol)
    case("conv3d_unbatched_groups", "aten.conv3d.default", [("input", R(4, 3, 4, 3)), ("weight", R(2, 2, 2, 2, 2)), ("bias", None), ("stride", [1, 2, 1]), ("padding", [0, 1, 0]), ("dilation", [1, 1, 2]), ("groups", 2)], **tol)
    case("conv1d_unbatched", "aten.conv1d.default", [("input", R(2, 7)), ("weight", R(3, 2, 3)), ("bias", R(3)), ("stride", [2])], **tol)
    case("conv_transpose1d", "aten.conv_transpose1d.default", [("input", R(2, 3, 5)), ("weight", R(3, 2, 4)), ("bias", R(2)), ("stride", [2]), ("padding", [1]), ("output_padding", [1])], **tol)
    case("conv_transpose1d_unbatched", "aten.conv_transpose1d.default", [("input", R(4, 3)), ("weight", R(4, 1, 3)), ("stride", [1]), ("padding", [0]), ("output_padding", [0]), ("groups", 2), ("dilation", [2])], **tol)
    case("conv_transpose2d", "aten.conv_transpose2d.input", [("input", R(1, 4, 3, 4)), ("weight", R(4, 3, 3, 2)), ("bias", R(6)), ("stride", [2, 3]), ("padding", [1, 0]), ("output_padding", [1, 2]), ("groups", 2), ("dilation", [1, 1])], **tol)
    case("conv_transpose2d_defaults", "aten.conv_transpose2d.input", [("input", Layout(R(2, 2, 3, 3), "transposed")), ("weight", R(2, 3, 2, 2))], **tol)
    case("conv_transpose3d", "aten.conv_transpose3d.input", [("input", R(1, 2, 2, 3, 2)), ("weight", R(2, 2, 2, 2, 3)), ("bias", R(2)), ("stride", [2, 1, 2]), ("padding", [0, 1, 1]), ("output_padding", [1, 0, 0]), ("groups", 1), ("dilation", [1, 2, 1])], **tol)
    case("conv_transpose3d_unbatched_f64", "aten.conv_transpose3d.input", [("input", R(2, 2, 2, 2, dtype=d)), ("weight", R(2, 1, 2, 2, 2, dtype=d))], rtol=1e-10, atol=1e-12)
    case("conv_transpose2d_blocked", "aten.conv_transpose2d.input", [("input", R(1, 16, 4, 4)), ("weight", R(16, 4, 3, 3)), ("bias", R(4)), ("stride", [2, 2]), ("padding", [1, 1]), ("output_padding", [1, 1])], rtol=1e-4, atol=1e-5)
    case("conv3d_blocked", "aten.conv3d.default", [("input", R(1, 4, 3, 4, 3)), ("weight", R(8, 4, 3, 3, 3)), ("bias", R(8)), ("stride", [1, 1, 1]), ("padding", [1, 1, 1])], rtol=1e-4, atol=1e-5)
    case("conv1d_same_odd_total", "aten.conv1d.padding", [("input", R(2, 3, 7)), ("weight", R(2, 3, 4)), ("bias", R(2)), ("stride", [1]), ("padding", "same")], **tol)
    case("conv1d_same_dilation", "aten.conv1d.padding", [("input", R(1, 2, 6)), ("weight", R(3, 2, 3)), ("bias", None), ("stride", [1]), ("padding", "same"), ("dilation", [2])], **tol)
    case("conv1d_valid", "aten.conv1d.padding", [("input", R(1, 2, 6)), ("weight", R(3, 2, 3)), ("bias", None), ("stride", [2]), ("padding", "valid")], **tol)
    case("conv2d_same_asym", "aten.conv2d.padding", [("input", Layout(R(1, 4, 5, 6), "transposed")), ("weight", R(4, 2, 2, 3)), ("bias", R(4)), ("stride", [1, 1]), ("padding", "same"), ("dilation", [1, 1]), ("groups", 2)], **tol)
    case("conv2d_same_unbatched", "aten.conv2d.padding", [("input", R(2, 4, 4)), ("weight", R(3, 2, 4, 4)), ("bias", None), ("stride", [1]), ("padding", "same"), ("dilation", [1, 2])], **tol)
    case("conv2d_valid_default", "aten.conv2d.padding", [("input", R(1, 2, 5, 5)), ("weight", R(2, 2, 3, 3))], **tol)
    case("conv3d_same", "aten.conv3d.padding", [("input", R(1, 2, 3, 4, 4)), ("weight", R(2, 2, 2, 3, 2)), ("bias", R(2)), ("stride", [1, 1, 1]), ("padding", "same")], **tol)
    # 3-D pooling, adaptive max pool, col2im.
    x5 = R(1, 2, 5, 6, 5)
    case("max_pool3d_with_indices", "aten.max_pool3d_with_indices.default", [("self", x5), ("kernel_size", [3, 3, 2]), ("stride", [2, 2, 1]), ("padding", [1, 1, 0])])
    case("max_pool3d_dilation_ceil", "aten.max_pool3d_with_indices.default", [("self", Layout(R(2, 5, 5, 6), "transposed")), ("kernel_size", [2]), ("stride", [2, 1, 2]), ("padding", [1, 0, 1]), ("dilation", [1, 2, 2]), ("ceil_mode", True)])
    case("max_pool3d_f64_default_stride", "aten.max_pool3d_with_indices.default", [("self", R(1, 1, 4, 4, 4, dtype=d)), ("kernel_size", [2, 2, 2])])
    case("avg_pool3d", "aten.avg_pool3d.default", [("self", x5), ("kernel_size", [3, 3, 3]), ("stride", [2, 2, 2]), ("padding", [1, 1, 1])], **tol)
    case("avg_pool3d_exclude_pad_ceil", "aten.avg_pool3d.default", [("self", R(2, 4, 5, 5)), ("kernel_size", [2, 3, 3]), ("stride", [2, 2, 2]), ("padding", [1, 1, 0]), ("ceil_mode", True), ("count_include_pad", False)], **tol)
    case("avg_pool3d_divisor_f64", "aten.avg_pool3d.default", [("self", Layout(R(1, 2, 4, 4, 4, dtype=d), "strided")), ("kernel_size", [2]), ("divisor_override", 3)])
    case("adaptive_avg_pool3d", "aten.adaptive_avg_pool3d.default", [("self", x5), ("output_size", [3, 4, 2])], **tol)
    case("adaptive_avg_pool3d_underscore", "aten._adaptive_avg_pool3d.default", [("self", R(3, 4, 5, 3, dtype=d)), ("output_size", [1, 1, 1])])
    case("adaptive_avg_pool3d_up", "aten.adaptive_avg_pool3d.default", [("self", R(1, 2, 2, 3, 2)), ("output_size", [3, 4, 3])], **tol)
    case("adaptive_max_pool2d", "aten.adaptive_max_pool2d.default", [("self", R(2, 3, 7, 5)), ("output_size", [3, 2])])
    case("adaptive_max_pool2d_unbatched_up", "aten.adaptive_max_pool2d.default", [("self", Layout(R(2, 3, 4, dtype=d), "transposed")), ("output_size", [5, 6])])
    case("col2im", "aten.col2im.default", [("self", R(1, 12, 4)), ("output_size", [4, 5]), ("kernel_size", [2, 2]), ("dilation", [1, 1]), ("padding", [0, 0]), ("stride", [2, 2])], **tol)
    case("col2im_overlap_pad_dilation", "aten.col2im.default", [("self", Layout(R(2, 8, 15), "transposed")), ("output_size", [5, 4]), ("kernel_size", [2, 2]), ("dilation", [2, 1]), ("padding", [1, 0]), ("stride", [1, 1])], **tol)
    case("col2im_unbatched_f64", "aten.col2im.default", [("self", R(6, 9, dtype=d)), ("output_size", [3, 3]), ("kernel_size", [1, 3]), ("dilation", [1, 1]), ("padding", [0, 1]), ("stride", [1, 1])])
    # aten.pad's index modes (F.pad spelling).
    fpad = lambda self, pad, mode: torch.nn.functional.pad(self, pad, mode)  # noqa: E731
    case("pad_reflect_mode", "aten.pad.default", [("self", R(1, 2, 3, 4)), ("pad", [2, 1, 0, 2]), ("mode", "reflect")], fn=fpad)
    case("pad_replicate_mode", "aten.pad.default", [("self", Layout(R(2, 3, 4), "transposed")), ("pad", [3, 0]), ("mode", "replicate")], fn=fpad)
    case("pad_circular_mode", "aten.pad.default", [("self", R(1, 1, 2, 3, 3)), ("pad", [-1, 3, 2, 0, 1, 2]), ("mode", "circular")], fn=fpad)


def elementwise_cases():
    """Trigonometric/hyperbolic, isnan/isinf, bitwise and min/max spellings, prelu, prod, norms, fake quantization."""
    nan, inf = float("nan"), float("inf")
    i64, f64 = torch.int64, torch.float64
    trig = dict(rtol=1e-5, atol=1e-6)
    # Unary float ops on their domains, then edges (nan, +-inf, 0, the domain ends).
    domains = {"tan": (-1.4, 1.4), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atan": (-6.0, 6.0), "sinh": (-4.0, 4.0),
               "cosh": (-4.0, 4.0), "asinh": (-8.0, 8.0), "acosh": (1.0, 10.0), "atanh": (-0.99, 0.99), "log10": (0.01, 100.0),
               "exp2": (-6.0, 6.0), "erfinv": (-0.999, 0.999)}
    edges = {"tan": [0.0, nan, -0.0], "asin": [-1.0, 1.0, 0.0, 1.5, nan], "acos": [-1.0, 1.0, 0.0, -1.5, nan],
             "atan": [inf, -inf, 0.0, nan], "sinh": [inf, -inf, 0.0, nan], "cosh": [inf, -inf, 0.0, nan],
             "asinh": [inf, -inf, 0.0, nan], "acosh": [1.0, inf, 0.5, nan], "atanh": [-1.0, 1.0, 0.0, 2.0, nan],
             "log10": [0.0, inf, -1.0, 1.0, nan], "exp2": [-inf, inf, 0.0, 130.0, -160.0, nan],
             "erfinv": [-1.0, 1.0, 0.0, 1.5, nan, 0.5, -0.9999]}
    for op, (lo, hi) in domains.items():
        name = "aten.%s.default" % op
        case("ew_%s" % op, name, [("self", R(3, 5, lo=lo, hi=hi))], **trig)
        case("ew_%s_edges" % op, name, [("self", torch.tensor(edges[op]))], **trig)
        case("ew_%s_f64" % op, name, [("self", R(2, 3, lo=lo, hi=hi, dtype=f64))], rtol=1e-12, atol=1e-14)
    case("ew_tan_int", "aten.tan.default", [("self", torch.tensor([0, 1, -1, 3]))], **trig)
    case("ew_acosh_int", "aten.acosh.default", [("self", torch.tensor([1, 2, 30], dtype=torch.int32))], **trig)
    case("ew_log10_int", "aten.log10.default", [("self", torch.tensor([1, 10, 1000, 0]))], **trig)
    case("ew_exp2_int", "aten.exp2.default", [("self", torch.tensor([0, 3, -2, 10]))], **trig)
    case("ew_sinh_bool", "aten.sinh.default", [("self", torch.tensor([True, False]))], **trig)
    case("ew_atan_transposed", "aten.atan.default", [("self", Layout(R(3, 4) * 3, "transposed"))], **trig)
    case("ew_cosh_strided", "aten.cosh.default", [("self", Layout(R(2, 5), "strided"))], **trig)
    case("ew_asin_empty", "aten.asin.default", [("self", R(0, 3, lo=-0.5, hi=0.5))])
    # isnan / isinf / isfinite: bool out; integers and bool are finite.
    special = torch.tensor([nan, inf, -inf, 0.0, -1.5, 3e38])
    for op in ["isnan", "isinf", "isfinite"]:
        name = "aten.%s.default" % op
        case("ew_%s" % op, name, [("self", special)])
        case("ew_%s_f64" % op, name, [("self", special.to(f64))])
        case("ew_%s_int" % op, name, [("self", R(5, dtype=i64))])
        case("ew_%s_bool" % op, name, [("self", R(4, dtype=torch.bool))])
        case("ew_%s_transposed" % op, name, [("self", Layout(torch.tensor([[nan, 1.0, inf], [2.0, -inf, 0.0]]), "transposed"))])
    case("ew_relu6", "aten.relu6.default", [("self", torch.tensor([-2.0, 0.0, 3.0, 6.0, 7.5, nan, inf, -inf]))])
    case("ew_relu6_random", "aten.relu6.default", [("self", Layout(R(3, 4) * 5, "transposed"))])
    case("ew_relu6_int", "aten.relu6.default", [("self", torch.tensor([-3, 2, 9, 6]))])
    case("ew_relu6_f64", "aten.relu6.default", [("self", R(5, dtype=f64) * 5)])

    # Binary: atan2, hypot, copysign (float results), bitwise spellings, min/max.other.
    case("ew_atan2", "aten.atan2.default", [("self", R(2, 3)), ("other", R(3))], **trig)
    case("ew_atan2_edges", "aten.atan2.default", [("self", torch.tensor([0.0, -0.0, 0.0, 1.0, -1.0, inf, -inf, nan, inf])),
                                                  ("other", torch.tensor([0.0, 0.0, -0.0, 0.0, -inf, inf, 1.0, 1.0, -inf]))], **trig)
    case("ew_atan2_int", "aten.atan2.default", [("self", torch.tensor([1, -2, 0])), ("other", torch.tensor([3, 1, -1]))], **trig)
    case("ew_atan2_f64_transposed", "aten.atan2.default", [("self", Layout(R(3, 4, dtype=f64), "transposed")), ("other", R(3, 4, dtype=f64))], rtol=1e-12, atol=1e-14)
    case("ew_hypot", "aten.hypot.default", [("self", R(2, 1, 3)), ("other", Layout(R(4, 3), "strided"))], **trig)
    case("ew_hypot_edges", "aten.hypot.default", [("self", torch.tensor([3.0, inf, nan, 0.0, 1e30])), ("other", torch.tensor([4.0, nan, inf, -0.0, 1e30]))], **trig)
    case("ew_copysign", "aten.copysign.Tensor", [("self", R(2, 3)), ("other", torch.tensor([1.0, -0.0, -2.0]))])
    case("ew_copysign_int", "aten.copysign.Tensor", [("self", torch.tensor([1, -2, 3])), ("other", torch.tensor([-1, 1, -1]))])
    case("ew_copysign_scalar", "aten.copysign.Scalar", [("self", R(4)), ("other", -1.0)])
    a, b = torch.tensor([12, 10, 7, -3]), torch.tensor([10, 6, 1, 5])
    ba, bb = R(5, dtype=torch.bool), R(5, dtype=torch.bool)
    case("ew_bitwise_xor_int", "aten.bitwise_xor.Tensor", [("self", a), ("other", b)])
    case("ew_bitwise_xor_bool", "aten.bitwise_xor.Tensor", [("self", ba), ("other", bb)])
    case("ew_bitwise_xor_scalar", "aten.bitwise_xor.Scalar", [("self", a), ("other", 6)])
    case("ew_bitwise_and_scalar", "aten.bitwise_and.Scalar", [("self", a.to(torch.int32)), ("other", 3)])
    case("ew_bitwise_or_scalar", "aten.bitwise_or.Scalar", [("self", torch.tensor([1, 2, 4], dtype=torch.uint8)), ("other", 8)])
    case("ew_bitwise_and_broadcast", "aten.bitwise_and.Tensor", [("self", R(2, 1, dtype=i64)), ("other", R(3, dtype=i64))])
    for op in ["and", "or", "xor"]:
        case("ew___%s___tensor" % op, "aten.__%s__.Tensor" % op, [("self", a), ("other", b)])
        case("ew___%s___bool" % op, "aten.__%s__.Tensor" % op, [("self", ba), ("other", bb)])
        case("ew___%s___scalar" % op, "aten.__%s__.Scalar" % op, [("self", Layout(R(2, 3, dtype=i64), "transposed")), ("other", 5)])
    case("ew_max_other_nan", "aten.max.other", [("self", torch.tensor([1.0, nan, 3.0, -1.0])), ("other", torch.tensor([2.0, 0.0, nan, -2.0]))])
    case("ew_min_other_broadcast", "aten.min.other", [("self", R(2, 3)), ("other", R(3))])
    case("ew_max_other_int", "aten.max.other", [("self", R(4, dtype=i64)), ("other", R(4, dtype=i64))])
    case("ew_min_other_bool", "aten.min.other", [("self", ba), ("other", bb)])
    # prelu: one weight per channel (dim 1) or a single one.
    case("ew_prelu_channels", "aten.prelu.default", [("self", R(2, 3, 4)), ("weight", R(3))])
    case("ew_prelu_single", "aten.prelu.default", [("self", R(2, 5)), ("weight", torch.tensor([0.25]))])
    case("ew_prelu_4d_transposed", "aten.prelu.default", [("self", Layout(R(2, 3, 2, 2), "transposed")), ("weight", R(3))])
    case("ew_prelu_1d", "aten.prelu.default", [("self", torch.tensor([-1.0, 2.0, nan, -inf])), ("weight", torch.tensor([0.5]))])
    case("ew_prelu_kernel", "aten._prelu_kernel.default", [("self", R(2, 3, 4)), ("weight", R(3, 1))])

    # Reductions.
    case("ew_prod_all", "aten.prod.default", [("self", R(2, 3, lo=0.5, hi=1.5))], rtol=1e-5)
    case("ew_prod_int", "aten.prod.default", [("self", torch.tensor([[2, -3], [4, 1]], dtype=torch.int32))])
    case("ew_prod_bool", "aten.prod.default", [("self", torch.tensor([True, True, False]))])
    case("ew_prod_dtype", "aten.prod.default", [("self", R(4, dtype=i64)), ("dtype", f64)])
    case("ew_prod_empty", "aten.prod.default", [("self", R(0, 3))])
    case("ew_prod_dim", "aten.prod.dim_int", [("self", R(2, 3, 4, lo=0.5, hi=1.5)), ("dim", 1)], rtol=1e-5)
    case("ew_prod_dim_keepdim_neg", "aten.prod.dim_int", [("self", Layout(R(3, 4, lo=-2.0, hi=2.0), "transposed")), ("dim", -1), ("keepdim", True)], rtol=1e-5)
    case("ew_prod_dim_int_dtype", "aten.prod.dim_int", [("self", R(3, 2, dtype=torch.int32)), ("dim", 0), ("dtype", torch.int32)])
    case("ew_prod_dim_zero_size", "aten.prod.dim_int", [("self", R(3, 0)), ("dim", 1)])
    case("ew_prod_dim_nan_inf", "aten.prod.dim_int", [("self", torch.tensor([[nan, 1.0], [inf, 0.0], [inf, -2.0]])), ("dim", 1)])
    x = R(2, 3, 4)
    norm_tol = dict(rtol=1e-5, atol=1e-6)
    vn = "aten.linalg_vector_norm.default"
    case("ew_vector_norm_default", vn, [("self", x)], **norm_tol)
    case("ew_vector_norm_ord1_dim", vn, [("self", x), ("ord", 1), ("dim", [1])], **norm_tol)
    case("ew_vector_norm_inf", vn, [("self", x), ("ord", inf), ("dim", [0, 2])], **norm_tol)
    case("ew_vector_norm_neg_inf_keepdim", vn, [("self", x), ("ord", -inf), ("dim", [2]), ("keepdim", True)], **norm_tol)
    case("ew_vector_norm_zero", vn, [("self", torch.tensor([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])), ("ord", 0), ("dim", [1])], **norm_tol)
    case("ew_vector_norm_p3", vn, [("self", Layout(R(3, 4), "transposed")), ("ord", 3.0), ("dim", [-1])], **norm_tol)
    case("ew_vector_norm_p_half", vn, [("self", R(3, 4)), ("ord", 0.5), ("dim", [0]), ("keepdim", True)], **norm_tol)
    case("ew_vector_norm_dtype", vn, [("self", R(5)), ("ord", 2), ("dtype", f64)], rtol=1e-12, atol=1e-14)
    case("ew_vector_norm_f64", vn, [("self", R(4, 3, dtype=f64)), ("dim", [1])], rtol=1e-12, atol=1e-14)
    case("ew_vector_norm_empty", vn, [("self", R(0, 3)), ("dim", [0])])
    case("ew_vector_norm_nan", vn, [("self", torch.tensor([[1.0, nan], [3.0, 4.0]])), ("dim", [1])])
    case("ew_vector_norm_zero_nan", vn, [("self", torch.tensor([[nan, 0.0, 1.0], [0.0, 0.0, 0.0]])), ("ord", 0), ("dim", [1])])
    case("ew_vector_norm_negative_p", vn, [("self", torch.tensor([[0.5, 2.0, 4.0], [0.0, 1.0, 3.0]])), ("ord", -2.0), ("dim", [1])], **norm_tol)
    case("ew_vector_norm_inf_nan", vn, [("self", torch.tensor([[nan, 5.0], [-7.0, 2.0]])), ("ord", inf), ("dim", [1])])
    case("ew_norm_scalaropt_dim", "aten.norm.ScalarOpt_dim", [("self", x), ("p", 2), ("dim", [1, 2])], **norm_tol)
    case("ew_norm_scalaropt_dim_p1_keepdim", "aten.norm.ScalarOpt_dim", [("self", x), ("p", 1.0), ("dim", [0]), ("keepdim", True)], **norm_tol)
    case("ew_norm_scalaropt_dim_none", "aten.norm.ScalarOpt_dim", [("self", R(3, 4)), ("p", None), ("dim", [1])], **norm_tol)
    lse = "aten.logsumexp.default"
    case("ew_logsumexp", lse, [("self", R(3, 5) * 4), ("dim", [1])], **norm_tol)
    case("ew_logsumexp_keepdim_multi", lse, [("self", Layout(x, "transposed")), ("dim", [0, 2]), ("keepdim", True)], **norm_tol)
    case("ew_logsumexp_inf", lse, [("self", torch.tensor([[-inf, -inf], [inf, 1.0], [-inf, 2.0], [nan, 1.0]])), ("dim", [1])], **norm_tol)
    case("ew_logsumexp_int", lse, [("self", torch.tensor([[1, 2, 3], [0, 0, 0]])), ("dim", [1])], **norm_tol)
    case("ew_std_dim", "aten.std.correction", [("self", x), ("dim", [1]), ("correction", 1)], **norm_tol)
    case("ew_std_biased_keepdim", "aten.std.correction", [("self", x), ("dim", [2]), ("correction", 0), ("keepdim", True)], **norm_tol)
    case("ew_std_all", "aten.std.correction", [("self", R(4, 5))], **norm_tol)
    case("ew_std_dim_unbiased", "aten.std.dim", [("self", x), ("dim", [0, 2]), ("unbiased", True)], **norm_tol)
    case("ew_std_dim_biased_keepdim", "aten.std.dim", [("self", Layout(x, "transposed")), ("dim", [1]), ("unbiased", False), ("keepdim", True)], **norm_tol)

    # Norms.
    case("ew_group_norm", "aten.group_norm.default", [("input", R(2, 6, 3, 2) * 2 + 1), ("num_groups", 3), ("weight", R(6)), ("bias", R(6)), ("eps", 1e-5)], **norm_tol)
    case("ew_group_norm_defaults", "aten.group_norm.default", [("input", Layout(R(2, 4, 5), "transposed")), ("num_groups", 2)], **norm_tol)
    case("ew_instance_norm_input_stats", "aten.instance_norm.default",
         [("input", R(2, 3, 4, 4) * 3 - 1), ("weight", R(3)), ("bias", R(3)), ("running_mean", None), ("running_var", None),
          ("use_input_stats", True), ("momentum", 0.1), ("eps", 1e-5), ("cudnn_enabled", False)], **norm_tol)
    case("ew_instance_norm_no_affine", "aten.instance_norm.default",
         [("input", R(1, 2, 7)), ("weight", None), ("bias", None), ("running_mean", None), ("running_var", None),
          ("use_input_stats", True), ("momentum", 0.1), ("eps", 1e-3), ("cudnn_enabled", False)], **norm_tol)
    case("ew_instance_norm_running", "aten.instance_norm.default",
         [("input", R(2, 3, 5)), ("weight", R(3)), ("bias", R(3)), ("running_mean", R(3)), ("running_var", R(3, lo=0.5, hi=2.0)),
          ("use_input_stats", False), ("momentum", 0.1), ("eps", 1e-5), ("cudnn_enabled", False)], **norm_tol)
    case("ew_weight_norm_dim0", "aten._weight_norm.default", [("v", R(4, 3)), ("g", R(4, 1)), ("dim", 0)], **norm_tol)
    case("ew_weight_norm_dim1", "aten._weight_norm.default", [("v", Layout(R(2, 3, 4), "transposed")), ("g", R(1, 3, 1)), ("dim", 1)], **norm_tol)
    case("ew_weight_norm_whole", "aten._weight_norm.default", [("v", R(3, 4)), ("g", R(1, 1)), ("dim", -1)], **norm_tol)
    case("ew_weight_norm_default_dim", "aten._weight_norm.default", [("v", R(5, 2)), ("g", R(5, 1))], **norm_tol)
    case("ew_weight_norm_interface", "aten._weight_norm_interface.default", [("v", R(4, 3, 2)), ("g", R(4, 1, 1)), ("dim", 0)], **norm_tol)
    case("ew_weight_norm_interface_last", "aten._weight_norm_interface.default", [("v", R(2, 3, 4)), ("g", R(1, 1, 4)), ("dim", 2)], **norm_tol)
    sm = R(3, 4)
    sm[1, :] = -inf
    sm[2, 1] = -inf
    case("ew_safe_softmax", "aten._safe_softmax.default", [("self", sm), ("dim", 1)])
    case("ew_safe_softmax_dim0", "aten._safe_softmax.default", [("self", Layout(sm, "transposed")), ("dim", 0)])
    case("ew_safe_softmax_dtype", "aten._safe_softmax.default", [("self", R(2, 5)), ("dim", -1), ("dtype", f64)], rtol=1e-6, atol=1e-7)

    # Fake quantization (rounding half to even: x / 0.5 lands on .5 exactly).
    halves = torch.tensor([0.25, 0.75, 1.25, -0.25, -0.75, 100.0, -100.0, 0.0])
    fq = "aten.fake_quantize_per_tensor_affine.default"
    case("ew_fake_quant_tensor_halves", fq, [("self", halves), ("scale", 0.5), ("zero_point", 3), ("quant_min", 0), ("quant_max", 255)])
    case("ew_fake_quant_tensor_random", fq, [("self", Layout(R(4, 5) * 3, "transposed")), ("scale", 0.037), ("zero_point", -4), ("quant_min", -128), ("quant_max", 127)])
    case("ew_fake_quant_tensor_qparams", "aten.fake_quantize_per_tensor_affine.tensor_qparams",
         [("self", R(3, 4) * 2), ("scale", torch.tensor([0.02])), ("zero_point", torch.tensor([5], dtype=torch.int32)), ("quant_min", 0), ("quant_max", 63)])
    case("ew_fake_quant_tensor_cachemask", "aten.fake_quantize_per_tensor_affine_cachemask.default",
         [("self", halves), ("scale", 0.5), ("zero_point", 0), ("quant_min", -4), ("quant_max", 3)])
    fqc = "aten.fake_quantize_per_channel_affine.default"
    sc = R(3, lo=0.01, hi=0.1)
    zp = torch.tensor([0, 3, -2], dtype=torch.int32)
    case("ew_fake_quant_channel", fqc, [("self", R(2, 3, 4)), ("scale", sc), ("zero_point", zp), ("axis", 1), ("quant_min", -128), ("quant_max", 127)])
    case("ew_fake_quant_channel_axis0_strided", fqc, [("self", Layout(R(3, 5) * 4, "strided")), ("scale", sc), ("zero_point", zp), ("axis", 0), ("quant_min", -8), ("quant_max", 7)])
    case("ew_fake_quant_channel_float_zp", fqc, [("self", R(2, 3)), ("scale", sc), ("zero_point", torch.tensor([0.0, 1.5, -2.0])), ("axis", 1), ("quant_min", 0), ("quant_max", 15)])
    case("ew_fake_quant_channel_cachemask", "aten.fake_quantize_per_channel_affine_cachemask.default",
         [("self", R(2, 3, 2) * 3), ("scale", sc), ("zero_point", zp), ("axis", 1), ("quant_min", -8), ("quant_max", 7)])


def composite_cases():
    """recurrent (lstm/gru/rnn), einsum, bilinear, cross, outer, cosine/pairwise distance, rms_norm, cdist"""
    f64 = torch.float64
    tol = dict(rtol=1e-5, atol=1e-5)

    def rnn(name, mod, x, states, *, layout=None, unbatched=False, dtype=torch.float32, **kw):
        m = getattr(torch.nn, mod)(**kw).to(dtype)
        params = [p.detach().clone() for p in m._flat_weights]
        if layout is not None:  # one weight in a non-contiguous layout
            params[1] = Layout(params[1], layout)
        op = {"LSTM": "aten.lstm.input", "GRU": "aten.gru.input", "RNN": "aten.rnn_%s.input" % kw.get("nonlinearity", "tanh")}[mod]
        hx = states if mod == "LSTM" else states[0]
        args = [("input", x), ("hx", hx), ("params", params), ("has_biases", kw.get("bias", True)),
                ("num_layers", kw.get("num_layers", 1)), ("dropout", 0.0), ("train", False),
                ("bidirectional", kw.get("bidirectional", False)), ("batch_first", kw.get("batch_first", False))]
        fn = None
        if unbatched:  # aten's op wants 3-D: nn's unbatched form (batch of 1, removed again)
            def fn(input, hx, params, **rest):
                base = getattr(aten, op.split(".")[1]).input
                h = [t.unsqueeze(1) for t in hx] if isinstance(hx, list) else hx.unsqueeze(1)
                return tuple(t.squeeze(1) for t in base(input.unsqueeze(1), h, params, **rest))
        case(name, op, args, fn=fn, **(tol if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)))

    rnn("lstm_basic", "LSTM", R(5, 2, 3), [R(1, 2, 4), R(1, 2, 4)], input_size=3, hidden_size=4)
    rnn("lstm_2layer_bidir_batch_first", "LSTM", Layout(R(2, 5, 3), "strided"), [R(4, 2, 4), Layout(R(4, 2, 4), "transposed")],
        layout="transposed", input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True)
    rnn("lstm_no_bias_f64", "LSTM", R(4, 3, 2, dtype=f64), [R(1, 3, 5, dtype=f64), R(1, 3, 5, dtype=f64)], dtype=f64,
        input_size=2, hidden_size=5, bias=False)
    rnn("lstm_unbatched", "LSTM", R(4, 3), [R(2, 4), R(2, 4)], unbatched=True, input_size=3, hidden_size=4, bidirectional=True)
    rnn("lstm_empty_batch", "LSTM", R(3, 0, 3), [R(1, 0, 4), R(1, 0, 4)], input_size=3, hidden_size=4)
    rnn("lstm_wide_hidden", "LSTM", R(3, 4, 8), [R(1, 4, 16), R(1, 4, 16)], input_size=8, hidden_size=16)
    rnn("gru_basic", "GRU", R(5, 2, 3), [R(1, 2, 4)], input_size=3, hidden_size=4)
    rnn("gru_2layer_bidir", "GRU", R(4, 3, 3), [R(4, 3, 4)], layout="strided", input_size=3, hidden_size=4, num_layers=2,
        bidirectional=True)
    rnn("gru_batch_first_no_bias_f64", "GRU", R(2, 4, 3, dtype=f64), [R(1, 2, 4, dtype=f64)], dtype=f64, input_size=3,
        hidden_size=4, bias=False, batch_first=True)
    rnn("gru_unbatched", "GRU", R(5, 3), [R(1, 4)], unbatched=True, input_size=3, hidden_size=4)
    rnn("rnn_tanh_basic", "RNN", R(5, 2, 3), [R(1, 2, 4)], input_size=3, hidden_size=4)
    rnn("rnn_tanh_2layer_bidir", "RNN", R(3, 2, 3), [R(4, 2, 4)], input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    rnn("rnn_relu_2layer", "RNN", R(4, 2, 3), [R(2, 2, 5)], input_size=3, hidden_size=5, num_layers=2, nonlinearity="relu")
    rnn("rnn_relu_batch_first_no_bias", "RNN", R(2, 4, 3), [R(1, 2, 4)], input_size=3, hidden_size=4, bias=False,
        batch_first=True, nonlinearity="relu")

    def cell(name, mod, x, states, *, layout=None, dtype=torch.float32, unbatched=False, drop_b_hh=False, **kw):
        m = getattr(torch.nn, mod)(**kw).to(dtype)
        w = [m.weight_ih.detach().clone(), m.weight_hh.detach().clone()]
        if layout is not None:
            w[0] = Layout(w[0], layout)
        b = [m.bias_ih.detach().clone(), None if drop_b_hh else m.bias_hh.detach().clone()] if kw.get("bias", True) else [None, None]
        op = {"LSTMCell": "aten.lstm_cell.default", "GRUCell": "aten.gru_cell.default",
              "RNNCell": "aten.rnn_%s_cell.default" % kw.get("nonlinearity", "tanh")}[mod]
        args = [("input", x), ("hx", states if mod == "LSTMCell" else states[0]), ("w_ih", w[0]), ("w_hh", w[1])]
        args += [(n, v) for n, v in [("b_ih", b[0]), ("b_hh", b[1])] if v is not None]
        fn = None
        if unbatched:  # aten's op wants 2-D: nn's unbatched form (batch of 1, removed again)
            def fn(input, hx, **rest):
                base = getattr(aten, op.split(".")[1]).default
                h = [t.unsqueeze(0) for t in hx] if isinstance(hx, list) else hx.unsqueeze(0)
                res = base(input.unsqueeze(0), h, **rest)
                return tuple(t.squeeze(0) for t in res) if isinstance(res, tuple) else res.squeeze(0)
        case(name, op, args, fn=fn, **(tol if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)))

    cell("lstm_cell", "LSTMCell", R(3, 4), [R(3, 5), R(3, 5)], layout="transposed", input_size=4, hidden_size=5)
    cell("lstm_cell_unbatched_no_bias", "LSTMCell", R(4), [R(5), R(5)], unbatched=True, input_size=4, hidden_size=5, bias=False)
    cell("gru_cell", "GRUCell", R(2, 3), [R(2, 4)], input_size=3, hidden_size=4)
    cell("gru_cell_one_bias_f64", "GRUCell", R(2, 3, dtype=f64), [R(2, 4, dtype=f64)], dtype=f64, drop_b_hh=True,
         input_size=3, hidden_size=4)
    cell("rnn_tanh_cell", "RNNCell", R(2, 3), [Layout(R(2, 4), "strided")], input_size=3, hidden_size=4)
    cell("rnn_relu_cell_empty_batch", "RNNCell", R(0, 3), [R(0, 4)], input_size=3, hidden_size=4, nonlinearity="relu")
    cell("rnn_relu_cell", "RNNCell", R(3, 3), [R(3, 6)], input_size=3, hidden_size=6, nonlinearity="relu")

    def es(name, eq, ops, **kw):
        case(name, "aten.einsum.default", [("equation", eq), ("tensors", ops)], **(kw or tol))

    es("einsum_matmul", "ij,jk->ik", [R(3, 4), R(4, 5)])
    es("einsum_bmm_transposed", "bij,bjk->bik", [Layout(R(2, 3, 4), "transposed"), Layout(R(2, 4, 5), "strided")])
    es("einsum_implicit", "ij,jk", [R(3, 4), R(4, 2)])
    es("einsum_implicit_upper_first", "ba,Ab", [R(2, 3), R(4, 2)])
    es("einsum_trace", "ii->", [R(4, 4)])
    es("einsum_trace_implicit", "ii", [R(3, 3)])
    es("einsum_diagonal", "ii->i", [Layout(R(4, 4), "transposed")])
    es("einsum_diagonal_batch", "bii,bj->bij", [R(2, 3, 3), R(2, 4)])
    es("einsum_ellipsis_broadcast", "...ij,...jk->...ik", [R(2, 1, 3, 4), R(5, 4, 2)])
    es("einsum_ellipsis_summed", "...ij->ij", [R(2, 3, 4)])
    es("einsum_ellipsis_middle", "i...,...->...i", [R(2, 3, 1), R(4)])
    es("einsum_sum_out", "ijk->j", [R(2, 3, 4)])
    es("einsum_permute", "ijk->kij", [Layout(R(2, 3, 4), "strided")])
    es("einsum_three", "ij,jk,kl->il", [R(2, 3), R(3, 4), R(4, 5)])
    es("einsum_outer", "i,j->ij", [R(3), R(4)])
    es("einsum_broadcast_one", "ij,j->ij", [R(2, 1), R(3)])
    es("einsum_dot", "i,i->", [R(6), R(6)])
    es("einsum_attention_f64", "bhqd,bhkd->bhqk", [R(1, 2, 5, 4, dtype=f64), R(1, 2, 6, 4, dtype=f64)], rtol=1e-10, atol=1e-12)
    es("einsum_attention_large", "bhqd,bhkd->bhqk", [R(1, 2, 17, 8), R(1, 2, 19, 8)])
    es("einsum_empty_contracted", "ij,jk->ik", [R(3, 0), R(0, 4)])
    es("einsum_empty_rows", "ij,jk->ik", [R(0, 3), R(3, 4)])
    es("einsum_empty_cols", "bij,bjk->bik", [R(2, 3, 4), R(2, 4, 0)])
    es("einsum_int64", "ij,j->i", [R(3, 4, dtype=torch.int64), R(4, dtype=torch.int64)])
    es("einsum_spaces", "b i j , b j -> b i", [R(2, 3, 4), R(2, 4)])
    es("einsum_hadamard", "ab,ab->ab", [R(3, 4), Layout(R(3, 4), "transposed")])
    es("einsum_three_elementwise", "a,a,a->a", [R(5), R(5), R(5)])
    es("einsum_diagonal_summed", "iij->j", [R(3, 3, 4)])
    es("einsum_chain_batch", "abc,cd,de->abe", [R(2, 3, 4), R(4, 5), R(5, 2)])
    es("einsum_ellipsis_dot", "...a,...a->...", [R(2, 3, 4), R(3, 4)])
    es("einsum_summed_each_side", "ij,kl->jk", [R(2, 3), R(4, 5)])

    case("trilinear", "aten._trilinear.default", [("i1", R(2, 3)), ("i2", R(2, 4)), ("i3", R(2, 3, 4)), ("expand1", [2]),
         ("expand2", [1]), ("expand3", []), ("sumdim", [1, 2]), ("unroll_dim", 1)], **tol)
    case("trilinear_bilinear_form", "aten._trilinear.default", [("i1", R(4, 3)), ("i2", R(5, 3, 2)), ("i3", R(4, 2)),
         ("expand1", [1, 3]), ("expand2", [0]), ("expand3", [1, 2]), ("sumdim", [2, 3])], **tol)
    case("bilinear", "aten.bilinear.default", [("input1", R(4, 3)), ("input2", R(4, 5)), ("weight", R(2, 3, 5)), ("bias", R(2))], **tol)
    case("bilinear_3d_no_bias", "aten.bilinear.default", [("input1", Layout(R(2, 3, 3), "transposed")), ("input2", R(2, 3, 4)),
         ("weight", Layout(R(5, 3, 4), "strided"))], **tol)
    case("bilinear_f64", "aten.bilinear.default", [("input1", R(3, 2, dtype=f64)), ("input2", R(3, 4, dtype=f64)),
         ("weight", R(3, 2, 4, dtype=f64)), ("bias", R(3, dtype=f64))], rtol=1e-10, atol=1e-12)
    case("outer", "aten.outer.default", [("self", R(3)), ("vec2", Layout(R(4), "strided"))])
    case("outer_int_float", "aten.outer.default", [("self", R(3, dtype=torch.int64)), ("vec2", R(2))])
    case("outer_empty", "aten.outer.default", [("self", R(0)), ("vec2", R(2))])
    case("linalg_cross", "aten.linalg_cross.default", [("self", R(4, 3)), ("other", Layout(R(4, 3), "transposed"))], **tol)
    case("linalg_cross_dim0_broadcast", "aten.linalg_cross.default", [("self", R(3, 2)), ("other", R(3, 1)), ("dim", 0)], **tol)
    case("linalg_cross_int", "aten.linalg_cross.default", [("self", R(2, 3, dtype=torch.int64)), ("other", R(2, 3, dtype=torch.int64))])
    case("cosine_similarity", "aten.cosine_similarity.default", [("x1", R(4, 5)), ("x2", R(4, 5))], **tol)
    case("cosine_similarity_broadcast_dim", "aten.cosine_similarity.default",
         [("x1", R(2, 1, 5)), ("x2", Layout(R(3, 5), "strided")), ("dim", -1), ("eps", 1e-6)], **tol)
    tiny = torch.tensor([[1e-9, 0.0, 0.0], [3e-9, 1e-9, 0.0], [1.0, 2.0, 3.0]])
    case("cosine_similarity_eps", "aten.cosine_similarity.default", [("x1", tiny), ("x2", tiny.flip(0))], **tol)
    case("cosine_similarity_f64", "aten.cosine_similarity.default", [("x1", R(3, 4, dtype=f64)), ("x2", R(3, 4, dtype=f64)),
         ("dim", 0)], rtol=1e-10, atol=1e-12)
    case("pairwise_distance", "aten.pairwise_distance.default", [("x1", R(4, 5)), ("x2", R(4, 5))], **tol)
    case("pairwise_distance_p1_keepdim", "aten.pairwise_distance.default", [("x1", R(2, 3, 4)), ("x2", R(4)), ("p", 1.0),
         ("keepdim", True)], **tol)
    case("pairwise_distance_inf", "aten.pairwise_distance.default", [("x1", Layout(R(3, 4), "transposed")), ("x2", R(3, 4)),
         ("p", float("inf")), ("eps", 0.0)], **tol)
    case("pairwise_distance_p3_f64", "aten.pairwise_distance.default", [("x1", R(3, 4, dtype=f64)), ("x2", R(3, 4, dtype=f64)),
         ("p", 3.0)], rtol=1e-10, atol=1e-12)
    case("cdist_default", "aten.cdist.default", [("x1", R(3, 4)), ("x2", R(5, 4))], **tol)
    case("cdist_default_batched_p1", "aten.cdist.default", [("x1", R(2, 3, 4)), ("x2", Layout(R(1, 5, 4), "transposed")), ("p", 1.0)], **tol)
    case("cdist_default_p0", "aten.cdist.default", [("x1", torch.tensor([[1.0, 0.0, 2.0], [1.0, 1.0, 1.0]])),
         ("x2", torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 2.0]])), ("p", 0.0)])
    case("cdist_default_inf", "aten.cdist.default", [("x1", R(3, 4)), ("x2", R(2, 4)), ("p", float("inf"))], **tol)
    case("cdist_default_p3_f64", "aten.cdist.default", [("x1", R(2, 3, dtype=f64)), ("x2", R(4, 3, dtype=f64)), ("p", 3.0)],
         rtol=1e-10, atol=1e-12)
    case("cdist_default_mm_mode", "aten.cdist.default", [("x1", R(30, 4)), ("x2", R(27, 4)), ("compute_mode", None)], rtol=1e-4, atol=1e-4)
    case("cdist_default_empty", "aten.cdist.default", [("x1", R(0, 4)), ("x2", R(3, 4))])
    case("rms_norm", "aten.rms_norm.default", [("input", R(2, 3, 4)), ("normalized_shape", [4]), ("weight", R(4)),
         ("eps", 1e-5)], **tol)
    case("rms_norm_default_eps", "aten.rms_norm.default", [("input", Layout(R(2, 3, 4), "transposed")),
         ("normalized_shape", [3, 4])], **tol)
    case("rms_norm_f64", "aten.rms_norm.default", [("input", R(3, 5, dtype=f64)), ("normalized_shape", [5]),
         ("weight", R(5, dtype=f64))], rtol=1e-10, atol=1e-12)
    case("rms_norm_zero_row", "aten.rms_norm.default", [("input", torch.zeros(2, 3)), ("normalized_shape", [3])])
    case("rms_norm_empty", "aten.rms_norm.default", [("input", R(2, 0, 4)), ("normalized_shape", [4])])
    case("cosine_similarity_empty", "aten.cosine_similarity.default", [("x1", R(0, 3)), ("x2", R(0, 3))])
    case("pairwise_distance_empty", "aten.pairwise_distance.default", [("x1", R(0, 3)), ("x2", R(0, 3))])
    case("linalg_cross_empty", "aten.linalg_cross.default", [("self", R(0, 3)), ("other", R(0, 3))])
    case("bilinear_empty_batch", "aten.bilinear.default", [("input1", R(0, 3)), ("input2", R(0, 2)), ("weight", R(4, 3, 2)),
         ("bias", R(4))])


def pointwise_cases():
    """Activations without a core-ATen form, addcmul/addcdiv/lerp, pixel/channel shuffle, one_hot, im2col."""
    edges = torch.tensor([-2.0, -0.5, -0.25, 0.0, 0.3, 0.5, 1.7, float("nan")])
    case("hardshrink", "aten.hardshrink.default", [("self", edges)])
    case("hardshrink_lambd", "aten.hardshrink.default", [("self", Layout(R(3, 4), "transposed")), ("lambd", 0.8)])
    case("softshrink", "aten.softshrink.default", [("self", edges), ("lambd", 0.25)])
    case("celu", "aten.celu.default", [("self", R(3, 4) * 2), ("alpha", 0.7)])
    case("celu_float64", "aten.celu.default", [("self", R(5, dtype=torch.float64))])
    eb_w, eb_i, eb_o = R(10, 3), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 3, 5])
    case("embedding_bag_padding_idx_mean", "aten.embedding_bag.padding_idx",
         [("weight", eb_w), ("indices", eb_i), ("offsets", eb_o), ("scale_grad_by_freq", False), ("mode", 1), ("sparse", False),
          ("per_sample_weights", None), ("include_last_offset", False), ("padding_idx", 4)])
    case("embedding_bag_default_sum", "aten.embedding_bag.default",
         [("weight", eb_w), ("indices", eb_i), ("offsets", eb_o), ("mode", 0)])
    case("max_pool1d", "aten.max_pool1d.default", [("self", R(2, 3, 9)), ("kernel_size", [3]), ("stride", [2]), ("padding", [1])])
    case("max_pool1d_dilated_unbatched", "aten.max_pool1d.default", [("self", Layout(R(3, 10), "transposed")), ("kernel_size", [2]), ("dilation", [2]), ("ceil_mode", True)])
    case("avg_pool1d", "aten.avg_pool1d.default", [("self", R(2, 3, 9)), ("kernel_size", [3]), ("stride", [2]), ("padding", [1]), ("count_include_pad", False)])
    case("adaptive_avg_pool1d", "aten.adaptive_avg_pool1d.default", [("self", R(2, 3, 10)), ("output_size", [4])])
    case("adaptive_max_pool1d", "aten.adaptive_max_pool1d.default", [("self", Layout(R(2, 3, 7), "strided")), ("output_size", [3])])
    case("grid_sampler_composite", "aten.grid_sampler.default",
         [("input", R(1, 2, 4, 5)), ("grid", R(1, 3, 2, 2, lo=-1.0, hi=1.0)), ("interpolation_mode", 0), ("padding_mode", 1), ("align_corners", True)])
    case("max_pool3d_no_indices", "aten.max_pool3d.default", [("self", R(1, 2, 4, 5, 4)), ("kernel_size", [2, 2, 2]), ("stride", [2, 1, 2])])
    case("elu_scaled", "aten.elu.default", [("self", R(2, 4) * 2), ("alpha", 1.6732632423543772), ("scale", 1.0507009873554805), ("input_scale", 1.0)])
    case("elu_input_scale", "aten.elu.default", [("self", R(6) * 2), ("alpha", 0.5), ("scale", 2.0), ("input_scale", 0.5)])
    case("selu", "aten.selu.default", [("self", Layout(R(2, 5) * 2, "strided"))])
    case("log_sigmoid", "aten.log_sigmoid.default", [("self", torch.tensor([-100.0, -3.0, 0.0, 2.0, 50.0]))],
         fn=lambda self: torch.nn.functional.logsigmoid(self))
    case("threshold", "aten.threshold.default", [("self", R(3, 4)), ("threshold", 0.1), ("value", 20.0)])
    case("threshold_int", "aten.threshold.default", [("self", R(6, dtype=torch.int64)), ("threshold", 1), ("value", -9)])
    inf = float("inf")
    case("nan_to_num", "aten.nan_to_num.default", [("self", torch.tensor([float("nan"), inf, -inf, 1.5]))])
    case("nan_to_num_values", "aten.nan_to_num.default",
         [("self", torch.tensor([float("nan"), inf, -inf, -2.0], dtype=torch.float64)), ("nan", 0.5), ("posinf", 9.0), ("neginf", -9.0)])
    case("nan_to_num_int", "aten.nan_to_num.default", [("self", R(4, dtype=torch.int32))])
    case("glu", "aten.glu.default", [("self", R(2, 6))])
    case("glu_dim1", "aten.glu.default", [("self", Layout(R(4, 3, 2), "transposed")), ("dim", 0)])
    case("addcmul", "aten.addcmul.default", [("self", R(3, 1)), ("tensor1", R(3, 4)), ("tensor2", R(4)), ("value", 0.5)])
    case("addcmul_int", "aten.addcmul.default", [("self", R(4, dtype=torch.int64)), ("tensor1", R(4, dtype=torch.int64)), ("tensor2", R(4, dtype=torch.int64)), ("value", 2)])
    case("addcdiv", "aten.addcdiv.default", [("self", R(2, 3)), ("tensor1", Layout(R(2, 3), "strided")), ("tensor2", R(3, lo=0.5, hi=2.0)), ("value", -1.5)])
    case("lerp_scalar", "aten.lerp.Scalar", [("self", R(2, 3)), ("end", R(3)), ("weight", 0.3)])
    case("lerp_scalar_high", "aten.lerp.Scalar", [("self", R(4)), ("end", R(4)), ("weight", 0.9)])
    case("lerp_tensor", "aten.lerp.Tensor", [("self", R(2, 3)), ("end", R(2, 3)), ("weight", R(2, 1, lo=0.0, hi=1.0))])
    case("pixel_shuffle", "aten.pixel_shuffle.default", [("self", R(1, 8, 2, 3)), ("upscale_factor", 2)])
    case("pixel_shuffle_unbatched", "aten.pixel_shuffle.default", [("self", Layout(R(9, 2, 2), "transposed")), ("upscale_factor", 3)])
    case("pixel_unshuffle", "aten.pixel_unshuffle.default", [("self", R(2, 2, 4, 6)), ("downscale_factor", 2)])
    case("channel_shuffle", "aten.channel_shuffle.default", [("self", R(2, 6, 2, 2)), ("groups", 3)])
    case("native_channel_shuffle", "aten.native_channel_shuffle.default", [("self", R(1, 4, 3)), ("groups", 2)])
    case("one_hot", "aten.one_hot.default", [("self", torch.tensor([[0, 3], [2, 1]])), ("num_classes", 5)])
    case("one_hot_inferred", "aten.one_hot.default", [("self", torch.tensor([1, 0, 4]))])
    case("im2col", "aten.im2col.default", [("self", R(1, 2, 4, 5)), ("kernel_size", [2, 3]), ("dilation", [1, 1]), ("padding", [1, 0]), ("stride", [1, 2])])
    case("im2col_unbatched_dilated", "aten.im2col.default", [("self", Layout(R(2, 5, 5), "transposed")), ("kernel_size", [2, 2]), ("dilation", [2, 1]), ("padding", [0, 1]), ("stride", [1, 1])])


def export_ir_cases():
    """Spellings torch.export leaves in its default (not decomposed) output."""
    x = R(2, 3)
    case("to_device_dtype", "aten.to.device", [("self", x), ("dtype", torch.float64)],
         fn=lambda self, dtype: self.to("cpu", dtype))
    case("to_device_same", "aten.to.device", [("self", Layout(R(3, 2), "transposed")), ("dtype", torch.float32)],
         fn=lambda self, dtype: self.to("cpu", dtype))
    case("to_other_int", "aten.to.other", [("self", R(4) * 4), ("other", R(2, dtype=torch.int32))])
    case("type_as_float_to_half", "aten.type_as.default", [("self", R(2, 2)), ("other", R(1, dtype=torch.float16))])
    case("type_as_int_to_float", "aten.type_as.default", [("self", R(5, dtype=torch.int64)), ("other", R(1))])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "src", "lathe", "runtime", "testdata", "kernel_cases.json"))
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for gen in [binary_cases, unary_cases, matmul_cases, view_cases, copy_cases, index_cases, reduce_cases,
                softmax_cases, norm_cases, conv_cases, pool_cases, attention_cases, factory_cases, more_cases, pad_cases,
                ordering_cases, scatter_cases, spatial_cases, elementwise_cases, export_ir_cases,
                composite_cases, pointwise_cases]:
        gen()
    names = [c["name"] for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit("duplicate case names: %s" % sorted(dup))
    with open(args.out, "w") as f:
        json.dump({"generator": "tools/make_kernel_cases.py", "torch": torch.__version__, "cases": CASES}, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("%s: %d cases" % (os.path.normpath(args.out), len(CASES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
