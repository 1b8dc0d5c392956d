"""Passes written in Python (lathe.Pass, lathe.Rewriter) and the read-only
graph view (Program.graph): every Rewriter call, the refusals, immutability,
explanations, and the original bug - addmm -> linear written by a user -
checked by PyTorch loading the result."""
import io
import os

import numpy as np
import pytest
import torch

import lathe

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def fixture(name):
    return lathe.load(os.path.join(SOURCE, "fixtures", name + ".pt2"))


def eager(ep, x):
    """PyTorch's own run of a torch.export program on one numpy input."""
    out = ep.module()(torch.from_numpy(x))
    return (out[0] if isinstance(out, (tuple, list)) else out).detach().numpy()


# ---- the graph view ---------------------------------------------------------------------------


def test_graph_view_of_simple_linear():
    g = fixture("simple_linear").graph()
    assert [n.target for n in g.nodes] == ["aten.permute.default", "aten.addmm.default"]
    assert [v.name for v in g.inputs] == ["p_linear_weight", "p_linear_bias", "arg"]
    permute, addmm = g.nodes
    w, b, x = g.inputs
    assert permute.args == [w, [1, 0]]
    assert addmm.args == [b, x, permute.outputs[0]]
    assert addmm.arguments == {"self": b, "mat1": x, "mat2": permute.outputs[0]}
    assert addmm.kwargs == {}
    (y,) = addmm.outputs
    assert (y.dtype, y.shape, y.kind) == ("float32", [2, 3], "tensor")
    assert y.producer == addmm and w.producer is None
    assert permute.outputs[0].users == [addmm]
    assert g.outputs == [y]
    assert g.signature["inputs"] == [("parameter", "p_linear_weight", "linear.weight"),
                                     ("parameter", "p_linear_bias", "linear.bias"), ("user_input", "arg", "")]
    assert g.signature["outputs"] == [("user_output", y, "")]
    assert "stack_trace" in addmm.meta or "nn_module_stack" in addmm.meta
    assert len(g) == 2


def test_two_lookups_are_equal_and_hash_alike():
    p = fixture("simple_linear")
    a, b = p.graph(), p.graph()
    assert a.nodes[1] == b.nodes[1] and hash(a.nodes[1]) == hash(b.nodes[1])
    assert a.nodes[0] != a.nodes[1]
    assert {a.inputs[2], b.inputs[2]} == {a.inputs[2]}
    assert a.nodes[1].outputs[0] != a.nodes[1]  # a value is not its producer


def test_symbolic_sizes_are_expressions():
    g = lathe.load(os.path.join(SOURCE, "fixtures", "dynamic", "cond_on_shape.pt2")).graph()
    (x,) = g.inputs
    assert x.shape == ["s77", 4]
    size = g.nodes[0]
    assert size.target == "aten.sym_size.int" and size.args == [x, 0]
    assert size.outputs[0].kind == "sym_int" and size.outputs[0].shape is None


def test_views_refuse_to_read_after_close_NEG():
    p = fixture("simple_linear")
    g = p.graph()
    node = g.nodes[0]
    p.close()
    for read in (lambda: g.nodes, lambda: node.target, lambda: node.outputs):
        with pytest.raises(lathe.Error, match="the program is closed"):
            read()


# ---- passes -----------------------------------------------------------------------------------


class AddmmToLinear(lathe.Pass):
    """addmm(b, x, permute(w, [1, 0])) -> linear(x, w, b), refusing a weight
    that is not a compile-time constant (the seed's unsound rewrite)."""

    name = "user_addmm_to_linear"
    description = "addmm of a transposed constant weight -> linear"

    def run(self, rw):
        changed = False
        for node in rw.graph.nodes:
            if node.target != "aten.addmm.default":
                continue
            bias, x, wt = node.args[:3]
            if wt.producer is None or wt.producer.target != "aten.permute.default" or wt.producer.args[1] != [1, 0]:
                rw.explain(node, False, "mat2 is not a transposed weight")
                continue
            w = wt.producer.args[0]
            constant, why = rw.is_constant(w)
            if not constant:
                rw.explain(node, False, f"weight '{w.name}' {why}")
                continue
            assert rw.constness(w) == "parameter"
            y = rw.replace_node(node, "aten.linear.default", [x, w, bias])
            rw.explain(y.producer, True, f"into linear of {rw.constness(w)} '{w.name}'")
            changed = True
        return changed


def test_user_pass_rewrites_and_pytorch_loads_the_result():
    p = fixture("simple_linear")
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    (before,) = p.run(x)
    q, why = p.transform([AddmmToLinear(), "remove_dead_code"])
    g = q.graph()
    assert [n.target for n in g.nodes] == ["aten.linear.default"]
    assert g.signature["outputs"] == [("user_output", g.nodes[0].outputs[0], "")]  # the spec moved with the output
    assert [e.pass_name for e in why] == ["user_addmm_to_linear"]
    assert why[0].rewritten and "into linear of parameter 'p_linear_weight'" in why[0].message
    (after,) = q.run(x)
    np.testing.assert_allclose(after, before, rtol=1e-6)
    ep = torch.export.load(io.BytesIO(q.to_bytes()))
    np.testing.assert_allclose(eager(ep, x), before, rtol=1e-5, atol=1e-6)
    # The program transform was called on is unchanged.
    assert [n.target for n in p.graph().nodes] == ["aten.permute.default", "aten.addmm.default"]


def test_user_pass_refuses_a_computed_weight_and_says_why():
    p = fixture("computed_weight")
    q, why = p.transform([AddmmToLinear()])
    assert "aten.addmm.default" in [n.target for n in q.graph().nodes]
    (kept,) = [e for e in why if not e.rewritten]
    assert kept.pass_name == "user_addmm_to_linear" and kept.node == "addmm"
    assert "weight 'mm' is computed at run time by 'mm'" in kept.message, kept.message


def test_names_and_passes_mix_in_one_ordered_list():
    order = []

    class Note(lathe.Pass):
        def __init__(self, name):
            self.name = name

        def run(self, rw):
            order.append((self.name, [n.target for n in rw.graph.nodes]))
            return False

    p = fixture("simple_linear")
    q, _ = p.transform([Note("first"), "addmm_mm_to_linear", Note("second")])
    # addmm_mm_to_linear ran between them (the transpose it no longer reads is left for remove_dead_code)
    assert order == [("first", ["aten.permute.default", "aten.addmm.default"]),
                     ("second", ["aten.permute.default", "aten.linear.default"])]


class DoubleOutput(lathe.Pass):
    """y -> y * 2 before the output: create_call (inferred metadata), replace_all_uses."""

    name = "double_output"

    def run(self, rw):
        (y,) = rw.graph.outputs
        doubled = rw.create_call("aten.mul.Tensor", [y, 2.0])
        assert (doubled.dtype, doubled.shape) == (y.dtype, y.shape)
        rw.replace_all_uses(y, doubled)  # the graph output moves; `doubled` itself keeps reading y
        assert doubled.producer.args[0] == y and y.users == [doubled.producer]
        assert rw.graph.outputs == [doubled]
        return True


def test_create_call_infers_metadata_and_replace_all_uses_moves_the_output():
    p = fixture("simple_linear")
    x = np.ones((2, 3), np.float32)
    (before,) = p.run(x)
    q, _ = p.transform([DoubleOutput()])
    (after,) = q.run(x)
    np.testing.assert_allclose(after, 2 * before, rtol=1e-6)
    mul = q.graph().nodes[-1]
    assert mul.target == "aten.mul.Tensor" and mul.arguments.keys() == {"self", "other"}
    ep = torch.export.load(io.BytesIO(q.to_bytes()))
    np.testing.assert_allclose(eager(ep, x), 2 * before, rtol=1e-5)


def test_create_call_with_like_and_keyword_arguments():
    class AddOne(lathe.Pass):
        name = "add_one"

        def run(self, rw):
            (y,) = rw.graph.outputs
            z = rw.create_call("aten.add.Tensor", [y], {"other": 1.0, "alpha": 2}, like=y)
            assert z.producer.kwargs == {"alpha": 2} and z.producer.args == [y, 1.0]
            rw.replace_all_uses(y, z)
            return True

    p = fixture("simple_linear")
    x = np.ones((2, 3), np.float32)
    (before,) = p.run(x)
    (after,) = p.transform([AddOne()])[0].run(x)
    np.testing.assert_allclose(after, before + 2.0, rtol=1e-6)


def test_erase_and_views_of_erased_nodes_NEG():
    seen = {}

    class EraseDead(lathe.Pass):
        name = "erase_dead"

        def run(self, rw):
            (permute, addmm) = rw.graph.nodes
            dead = rw.create_call("aten.neg.default", [rw.graph.inputs[2]], before=addmm)
            node = dead.producer
            rw.erase(node)
            with pytest.raises(lathe.Error, match="erased"):
                node.target
            with pytest.raises(lathe.Error, match="erased"):
                dead.users
            seen["count"] = len(rw.graph.nodes)
            seen["rw"] = rw
            return True

    fixture("simple_linear").transform([EraseDead()])
    assert seen["count"] == 2
    with pytest.raises(lathe.Error, match="pass 'erase_dead' has finished"):
        seen["rw"].graph  # a Rewriter kept past its pass refuses


@pytest.mark.parametrize("bad, message", [
    ("erase_used", "pass 'bad' failed on method 'model': raised Error: .*permute"),
    ("before_its_operand", "pass 'bad' failed on method 'model': raised Error: "),
    ("returns_none", "run\\(\\) returned None"),
    ("raises", "raised ValueError: no"),
    ("unknown_argument", "aten.mul.Tensor has no argument 'bogus'"),
])
def test_a_pass_that_breaks_an_invariant_is_refused_and_the_program_untouched_NEG(bad, message):
    class Bad(lathe.Pass):
        name = "bad"

        def run(self, rw):
            permute, addmm = rw.graph.nodes
            if bad == "erase_used":
                rw.erase(permute)
            elif bad == "before_its_operand":  # a node placed before the value it reads is defined
                rw.create_call("aten.neg.default", [addmm.outputs[0]], before=permute)
            elif bad == "raises":
                raise ValueError("no")
            elif bad == "unknown_argument":
                rw.create_call("aten.mul.Tensor", [addmm.outputs[0]], {"bogus": 1})
            else:
                return None
            return True

    p = fixture("simple_linear")
    with pytest.raises(lathe.Error, match=message):
        p.transform([Bad()])
    assert [n.target for n in p.graph().nodes] == ["aten.permute.default", "aten.addmm.default"]
    x = np.ones((2, 3), np.float32)
    assert p.run(x)[0].shape == (2, 3)


@pytest.mark.parametrize("name", ["a\x00b", "\x1b]0;title\x07", "pass\u202eevil", "two\nlines"])
def test_pass_names_must_be_printable_NEG(name):
    # Names are printed in explanations and errors: a NUL would end one
    # early, an escape would drive the terminal (issue 33).
    class Odd(lathe.Pass):
        def run(self, rw):
            return False

    Odd.name = name
    with pytest.raises(lathe.Error, match="pass names must be printable"):
        fixture("simple_linear").transform([Odd()])


def test_verify_runs_the_differential_check_after_user_passes_NEG():
    class Negate(lathe.Pass):
        name = "negate_output"

        def run(self, rw):
            (y,) = rw.graph.outputs
            rw.replace_all_uses(y, rw.create_call("aten.neg.default", [y]))
            return True

    p = fixture("simple_linear")
    p.transform([Negate()])  # not checked: runs
    with pytest.raises(lathe.Error, match="after pass 'negate_output' on method 'model': outputs changed"):
        p.transform([Negate()], verify=True)


def test_a_pass_without_a_name_is_refused_NEG():
    class Nameless(lathe.Pass):
        def run(self, rw):
            return False

    with pytest.raises(lathe.Error, match="non-empty string attribute 'name'"):
        fixture("simple_linear").transform([Nameless()])
    with pytest.raises(lathe.Error, match="unknown pass 'fold_everything'"):
        fixture("simple_linear").transform(["fold_everything"])


def test_the_example_pass_runs_as_the_readme_shows(tmp_path):
    import subprocess
    import sys

    example = os.path.join(SOURCE, "examples", "user_pass.py")
    out = tmp_path / "out.pt2"
    r = subprocess.run([sys.executable, example, os.path.join(SOURCE, "fixtures", "simple_linear.pt2"), str(out)],
                       capture_output=True, text=True, check=True)
    assert "my_addmm_to_linear: linear 'linear' rewritten: into linear of parameter 'linear.weight'" in r.stdout, r.stdout
    assert "ops after: ['aten.linear.default']" in r.stdout and "outputs match the original: True" in r.stdout
    assert torch.export.load(str(out)) is not None
    r = subprocess.run([sys.executable, example, os.path.join(SOURCE, "fixtures", "computed_weight.pt2"), str(out)],
                       capture_output=True, text=True, check=True)
    assert "my_addmm_to_linear: addmm 'addmm' kept: weight 'mm' is computed at run time by 'mm'" in r.stdout, r.stdout


# ---- the spellings of x @ W^T (bmm_to_linear, issue 32) -----------------------------------------


class _Einsum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 4))

    def forward(self, x):
        return torch.einsum("bsh,oh->bso", x, self.w)


class _ExpandedWeight(torch.nn.Module):
    """bmm over an expanded transposed weight (the 3-D linear decomposition)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(6, 4))

    def forward(self, x):
        return torch.bmm(x, self.w.t().expand(x.shape[0], 4, 6))


class _RuntimeMatrix(torch.nn.Module):
    """The same spelling against a matrix the caller passes: must stay a bmm."""

    def forward(self, x, w):
        return torch.bmm(x, w.t().expand(x.shape[0], 4, 6))


@pytest.mark.parametrize("module", [_Einsum, _ExpandedWeight])
@pytest.mark.parametrize("dynamic", [False, True])
def test_matmul_spellings_against_a_weight_become_linears(module, dynamic):
    torch.manual_seed(0)
    m = module().eval()
    x = torch.randn(3, 5, 4)
    shapes = {"x": {0: torch.export.Dim("b", min=1, max=16)}} if dynamic else None
    ep = torch.export.export(m, (x,), dynamic_shapes=shapes).run_decompositions()
    assert "aten.bmm.default" in [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    q, why = lathe.from_exported_program(ep).transform("default")
    targets = [n.target for n in q.graph().nodes]
    assert "aten.bmm.default" not in targets and "aten.linear.default" in targets, targets
    (rewrite,) = [e for e in why if e.pass_name == "bmm_to_linear"]
    assert rewrite.rewritten and "mat2 is weight 'p_w', parameter 'w'" in rewrite.message, rewrite.message
    for batch in ([3, 1, 16] if dynamic else [3]):
        xb = torch.randn(batch, 5, 4)
        (got,) = q.run(xb)
        torch.testing.assert_close(got, m(xb), rtol=1e-5, atol=1e-5)
    # PyTorch loads and runs what Lathe wrote.
    back = torch.export.load(io.BytesIO(q.to_bytes()))
    torch.testing.assert_close(back.module()(x), m(x), rtol=1e-5, atol=1e-5)
    if not dynamic:
        lowered, decisions = q.lower("xnnpack")
        (linear,) = [d for d in decisions if d.op == "aten.linear.default"]
        assert linear.claimed, str(linear)
        (got,) = lowered.run(x)
        torch.testing.assert_close(got, m(x), rtol=1e-4, atol=1e-4)


def test_a_runtime_matrix_stays_a_bmm_NEG():
    x, w = torch.randn(3, 5, 4), torch.randn(6, 4)
    ep = torch.export.export(_RuntimeMatrix(), (x, w)).run_decompositions()
    q, why = lathe.from_exported_program(ep).transform("default")
    assert "aten.bmm.default" in [n.target for n in q.graph().nodes]
    (kept,) = [e for e in why if e.pass_name == "bmm_to_linear"]
    assert not kept.rewritten and "rests on 'w', which is user input" in kept.message, kept.message
    (got,) = q.run(x, w)
    torch.testing.assert_close(got, _RuntimeMatrix()(x, w))
