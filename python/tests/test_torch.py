"""lathe against real PyTorch 2.13: for each fixture model,
torch.export.export -> lathe.from_exported_program -> transform ->
to_exported_program().module() reproduces the eager outputs, and so does
Program.run, from numpy and from torch inputs (torch inputs are not copied)."""
import os
import sys

import numpy as np
import pytest
import torch

import lathe

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "tools"))

import export_fixtures as ef  # noqa: E402
from torch_fixtures.models import FIXTURES  # noqa: E402

CASES = [(fx, name) for fx in FIXTURES if fx.runnable and not fx.train for name in fx.methods]
RTOL, ATOL = 1e-4, 1e-5


def build(fx):
    torch.manual_seed(fx.seed)
    module = fx.build().eval()
    g = torch.Generator().manual_seed(fx.seed)
    return module, g


def flat(r):
    return [t for t in torch.utils._pytree.tree_leaves(r)]


@pytest.mark.parametrize("fx,method", CASES, ids=[f"{fx.name}.{m}" for fx, m in CASES])
def test_fixture_round_trip_and_run(fx, method):
    module, g = build(fx)
    m = fx.methods[method]
    args = m.calls(g)[0]
    expected = [t.detach() for t in flat(ef.eager_calls(build(fx)[0], m.attr, [args])[0])]
    ep = ef.export_method(fx, module, method, m, args)
    program = lathe.from_exported_program(ep)
    transformed, why = program.transform()
    assert all(isinstance(e, lathe.Explanation) for e in why)
    # PyTorch loads what Lathe wrote and reproduces the eager numbers.
    back = transformed.to_exported_program()
    got = flat(back.module()(*[a.clone() for a in args]))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, rtol=RTOL, atol=ATOL)
    # Lathe runs it: torch in, torch out; numpy in, numpy out.
    outs = transformed.run(*[a.clone() for a in args])
    assert len(outs) == len(expected)
    for a, b in zip(outs, expected):
        assert isinstance(a, torch.Tensor)
        torch.testing.assert_close(a, b, rtol=RTOL, atol=ATOL)
    fresh = lathe.from_exported_program(ep)
    outs = fresh.run(*[a.clone().numpy() if isinstance(a, torch.Tensor) else a for a in args])
    for a, b in zip(outs, expected):
        assert isinstance(a, np.ndarray)
        np.testing.assert_allclose(a, b.numpy(), rtol=RTOL, atol=ATOL)


class Identityish(torch.nn.Module):
    def forward(self, x):
        return x.view(-1)


def test_torch_input_is_not_copied():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    p = lathe.from_exported_program(torch.export.export(Identityish(), (x,)))
    (y,) = p.run(x)
    assert isinstance(y, torch.Tensor)
    assert y.data_ptr() == x.data_ptr()
    a = x.numpy()
    (z,) = p.run(a)
    assert z.__array_interface__["data"][0] == a.__array_interface__["data"][0]


def test_requires_grad_and_bad_torch_inputs():
    lin = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4)
    p = lathe.from_exported_program(torch.export.export(lin, (x,)))
    (y,) = p.run(x.requires_grad_())
    torch.testing.assert_close(y, lin(x).detach(), rtol=RTOL, atol=ATOL)
    with pytest.raises(lathe.Error, match=r"^model: input 0 'input': expected float32 \[3, 4\], got float64 \[3, 4\]$"):
        p.run(torch.zeros(3, 4, dtype=torch.float64))
    with pytest.raises(lathe.Error, match="^model: input 0 'input': "):
        p.run(torch.zeros(4))


def test_negative_and_conjugate_bits_are_resolved_NEG():
    # z.conj().imag is a view whose values are negated lazily (is_neg()); read
    # through DLPack as stored, it would reach Lathe with the wrong sign.
    z = torch.complex(torch.arange(6.0).reshape(2, 3), torch.arange(1.0, 7.0).reshape(2, 3))
    x = z.conj().imag
    assert x.is_neg()
    p = lathe.load(os.path.join(SOURCE, "fixtures", "simple_linear.pt2"))
    (y,) = p.run(x)
    (expect,) = p.run(x.resolve_neg())
    assert torch.equal(y, expect)
    assert not torch.equal(y, p.run(x.resolve_neg().neg())[0])  # the check could fail: the sign matters


def test_to_exported_program_round_trip():
    lin = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4)
    p = lathe.from_exported_program(torch.export.export(lin, (x,)))
    ep = p.to_exported_program()
    torch.testing.assert_close(ep.module()(x), lin(x), rtol=RTOL, atol=ATOL)


def test_a_python_backend_gets_the_kind_of_arrays_the_caller_passed():
    # Issue 31: execute() receives what run() was given (torch in, torch out;
    # numpy in, numpy out), so a backend prototyped in torch needs no
    # conversions of its own.
    import io

    class TorchLinear(lathe.Backend):
        name = "torch_linear_kinds"
        constant_args = {"aten.linear.default": ["weight", "bias"]}
        seen = []

        def support(self, node):
            return None if node.target == "aten.linear.default" else "only linear"

        def preprocess(self, subgraph):
            (node,) = subgraph.nodes
            buf = io.BytesIO()
            x_position = [v.name for v in subgraph.inputs].index(node.arguments["input"].name)
            np.savez(buf, w=subgraph.constants[node.arguments["weight"].name],
                     b=subgraph.constants[node.arguments["bias"].name], x=np.array(x_position))
            return buf.getvalue()

        def execute(self, payload, inputs):
            p = np.load(io.BytesIO(payload))
            x = inputs[int(p["x"])]
            self.seen.append({type(v).__name__ for v in inputs})
            if isinstance(x, torch.Tensor):
                return [torch.nn.functional.linear(x, torch.from_numpy(p["w"]), torch.from_numpy(p["b"]))]
            return [x @ p["w"].T + p["b"]]

    lathe.register_backend(TorchLinear())
    p = lathe.load(os.path.join(SOURCE, "fixtures", "simple_linear.pt2"))
    lowered, _ = p.lower("torch_linear_kinds")
    x = torch.randn(2, 3)
    (expected,) = p.run(x)
    (got,) = lowered.run(x)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, expected)
    (got_np,) = lowered.run(x.numpy())
    assert isinstance(got_np, np.ndarray)
    np.testing.assert_allclose(got_np, expected.numpy(), rtol=1e-5, atol=1e-6)
    assert TorchLinear.seen == [{"Tensor"}, {"ndarray"}]
