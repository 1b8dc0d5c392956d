#!/usr/bin/python3
"""Generate the portable kernels' test cases from PyTorch.

    /usr/bin/python3 tools/make_kernel_cases.py [--out src/lathe/runtime/testdata/kernel_cases.json]

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
            return float(repr(np.float32(v)))
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "src", "lathe", "runtime", "testdata", "kernel_cases.json"))
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for gen in [binary_cases, unary_cases, matmul_cases, view_cases, copy_cases, index_cases, reduce_cases,
                softmax_cases, norm_cases, conv_cases, pool_cases, attention_cases, factory_cases, more_cases, pad_cases]:
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
