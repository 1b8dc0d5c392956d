"""Backends written in Python (lathe.Backend, lathe.register_backend): Lathe
partitions for them (never claiming an operand they prepack unless it is a
compile-time constant), preprocess turns each group into the backend's own
bytes, and Program.run executes them through the backend."""
import io
import os

import numpy as np
import pytest

import lathe

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def fixture(name):
    return lathe.load(os.path.join(SOURCE, "fixtures", name + ".pt2"))


class NumpyLinear(lathe.Backend):
    """A converter author's backend: claims linear (and addmm of a transposed
    weight), writes each claimed node's weights to its own format (npz), and
    runs it with numpy."""

    constant_args = {"aten.linear.default": ["weight", "bias"], "aten.addmm.default": ["self", "mat2"]}

    def __init__(self, name):
        self.name = name
        self.preprocessed = []

    def support(self, node):
        if node.target in ("aten.linear.default", "aten.addmm.default"):
            return None
        return "only linear and addmm"

    def preprocess(self, subgraph):
        (node,) = subgraph.nodes  # one node per group in these programs
        self.preprocessed.append(([n.target for n in subgraph.nodes], sorted(subgraph.constants)))
        args = node.arguments
        if node.target == "aten.linear.default":
            w = subgraph.constants[args["weight"].name]
            bias = args.get("bias")  # linear without bias: mm(x, t(w)) rewritten
            b = subgraph.constants[bias.name] if bias is not None else np.zeros(w.shape[0], w.dtype)
        else:
            w = subgraph.constants[args["mat2"].name].T
            b = subgraph.constants[args["self"].name]
        x_position = [v.name for v in subgraph.inputs].index((args.get("input") or args["mat1"]).name)
        out = io.BytesIO()
        np.savez(out, w=w, b=b, x=np.array(x_position))
        return out.getvalue()

    def execute(self, payload, inputs):
        p = np.load(io.BytesIO(payload))
        x = inputs[int(p["x"])]
        return [x @ p["w"].T + p["b"]]


def test_a_python_backend_claims_preprocesses_and_runs():
    backend = NumpyLinear("numpy_linear_run")
    lathe.register_backend(backend)
    assert "numpy_linear_run" in lathe.backends()
    p = fixture("simple_linear")
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    (before,) = p.run(x)
    lowered, why = p.lower("numpy_linear_run")
    assert [str(d) for d in why] == ["model: aten.linear.default 'addmm' claimed (delegate 0): aten.linear.default"], why
    (d,) = why
    assert (d.method, d.node, d.op, d.claimed, d.delegate, d.reason) == (
        "model", "addmm", "aten.linear.default", True, 0, "aten.linear.default")
    assert [n.target for n in lowered.graph().nodes] == ["lathe.delegate.numpy_linear_run"]
    assert backend.preprocessed == [(["aten.linear.default"], ["p_linear_bias", "p_linear_weight"])]
    (after,) = lowered.run(x)
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-6)
    # The lowered program keeps the backend's bytes: written and read back, it runs again.
    again = lathe.load(lowered.to_bytes())
    np.testing.assert_allclose(again.run(x)[0], before, rtol=1e-5, atol=1e-6)


def test_partitions_are_what_lower_hands_the_backend():
    # For a user who serializes the claimed groups in their own format
    # instead of running the lowered program (issue 31).
    backend = NumpyLinear("numpy_linear_parts")
    lathe.register_backend(backend)
    p = fixture("simple_linear")
    (part,) = p.partitions("numpy_linear_parts")
    assert isinstance(part, lathe.Partition)
    assert (part.method, part.delegate, part.nodes) == ("model", 0, ["addmm"])
    assert sorted(part.constants) == ["p_linear_bias", "p_linear_weight"]
    assert set(part.inputs) == {"arg", "p_linear_bias", "p_linear_weight"}
    assert part.outputs == ["addmm"]
    w = np.load(io.BytesIO(part.payload))["w"]
    assert w.shape == (3, 3)
    assert [n.target for n in p.graph().nodes] == ["aten.permute.default", "aten.addmm.default"]  # not lowered
    # The guard holds here too: a runtime weight is never in a partition.
    (mm_part,) = fixture("computed_weight").partitions("numpy_linear_parts")
    assert mm_part.nodes == ["mm"]


def test_a_runtime_weight_is_never_claimed_and_the_reason_is_given_NEG():
    backend = NumpyLinear("numpy_linear_guard")
    lathe.register_backend(backend)
    p = fixture("computed_weight")
    x = np.ones((2, 6), np.float32)
    lowered, why = p.lower("numpy_linear_guard")
    text = "\n".join(map(str, why))
    # The addmm whose weight is computed from parameters (mm -> permute) is refused before
    # support() is asked; the mm of two parameters is a linear of constants, and is claimed.
    assert "aten.addmm.default 'addmm' not claimed: mat2 'permute_1' is computed at run time by 'permute_1'" in text, text
    assert "aten.linear.default 'mm' claimed (delegate 0)" in text, text
    assert backend.preprocessed == [(["aten.linear.default"], ["p_p1", "p_p2"])]
    np.testing.assert_allclose(lowered.run(x)[0], p.run(x)[0], rtol=1e-6)


def test_support_reasons_and_errors_come_back_NEG():
    class Picky(NumpyLinear):
        def support(self, node):
            return "not today"

    lathe.register_backend(Picky("picky"))
    _, why = fixture("simple_linear").lower("picky")
    assert [(d.node, d.claimed, d.delegate, d.reason) for d in why] == [("addmm", False, None, "not today")], why

    class BadBytes(NumpyLinear):
        def preprocess(self, subgraph):
            return "not bytes"

    lathe.register_backend(BadBytes("bad_bytes"))
    with pytest.raises(lathe.Error, match=r"preprocess\(\) returned 'not bytes', not bytes"):
        fixture("simple_linear").lower("bad_bytes")

    class WrongShape(NumpyLinear):
        def execute(self, payload, inputs):
            return [np.zeros((5,), np.float32)]

    lathe.register_backend(WrongShape("wrong_shape"))
    lowered, _ = fixture("simple_linear").lower("wrong_shape")
    with pytest.raises(lathe.Error, match=r"node 'addmm' \(lathe.delegate.wrong_shape\): output 0 'addmm' is float32 \[5\], the graph says float32 \[2, 3\]"):
        lowered.run(np.ones((2, 3), np.float32))


def test_registration_is_checked_NEG():
    with pytest.raises(lathe.Error, match="a backend named 'xnnpack' is already registered"):
        lathe.register_backend(NumpyLinear("xnnpack"))

    class Nameless(lathe.Backend):
        def support(self, node):
            return None

    with pytest.raises(lathe.Error, match="non-empty string attribute 'name'"):
        lathe.register_backend(Nameless())
    lathe.register_backend(NumpyLinear("twice"))
    with pytest.raises(lathe.Error, match="'twice' is already registered"):
        lathe.register_backend(NumpyLinear("twice"))
    # The name becomes the op lathe.delegate.<name>: an identifier only.
    for bad in ["numpy\x00linear", "numpy.linear", "a b", "\x1b[31mred", "lin\u202eear"]:
        with pytest.raises(lathe.Error, match="is not an identifier"):
            lathe.register_backend(NumpyLinear(bad))


def test_the_example_backend_runs_as_the_docs_show():
    import subprocess
    import sys

    example = os.path.join(SOURCE, "examples", "user_backend.py")
    r = subprocess.run([sys.executable, example, os.path.join(SOURCE, "fixtures", "computed_weight.pt2")],
                       capture_output=True, text=True, check=True)
    assert r.stdout.splitlines() == [
        "model: aten.linear.default 'mm' claimed (delegate 0): aten.linear.default",
        "model: aten.permute.default 'permute_1' not claimed: only linear and addmm",
        "model: aten.addmm.default 'addmm' not claimed: mat2 'permute_1' is computed at run time by 'permute_1'",
        "outputs match the original: True",
    ], r.stdout
