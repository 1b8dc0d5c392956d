"""Lathe from Python: load, transform, lower, run and save torch.export programs.

    import lathe
    program = lathe.from_exported_program(torch.export.export(model, (x,)))
    program, why = program.transform()          # the default pipeline
    for e in why: print(e)                      # "model: mm 'mm' kept: ..."
    (y,) = program.run(x)                       # numpy in -> numpy out, torch in -> torch out
    program.save("model.pt2")

torch is imported only by from_exported_program and Program.to_exported_program.
"""
from __future__ import annotations

import io as _io

from ._lathe import (Error, Explanation, Graph, LoweringDecision, Node, Partition, Program, Rewriter, Subgraph, Value,
                     __version__, backends, load, num_threads, passes, register_backend, set_threads,
                     verified_torch_versions)

__all__ = ["Backend", "Error", "Explanation", "Graph", "LoweringDecision", "Node", "Partition", "Pass", "Program", "Rewriter",
           "Subgraph", "Value", "backends", "from_exported_program", "load", "num_threads", "passes", "register_backend",
           "set_threads",
           "verified_torch_versions"]


class Pass:
    """A graph pass of your own, run by Program.transform beside the built-in ones.

    Subclass it, give it a ``name``, and write ``run(self, rw)``: look at the
    method through ``rw.graph``, change it only through ``rw`` (the same
    Rewriter Lathe's own passes use: every call either succeeds completely or
    changes nothing), and return whether anything changed::

        class MulByOneToClone(lathe.Pass):
            name = "mul_by_one_to_clone"

            def run(self, rw):
                changed = False
                for node in rw.graph.nodes:
                    if node.target == "aten.mul.Tensor" and node.args[1] == 1:
                        rw.replace_node(node, "aten.clone.default", [node.args[0]])
                        changed = True
                return changed

        program, why = program.transform([MulByOneToClone(), "default"])

    The method is verified after the pass runs; a pass that leaves it invalid,
    or raises, fails the transform with lathe.Error naming the pass, and the
    program you called transform on is never changed.
    """

    name: str = ""
    description: str = ""

    def run(self, rw: Rewriter) -> bool:
        raise NotImplementedError("a lathe.Pass implements run(self, rw)")


class Backend:
    """A backend of your own: Lathe partitions for it, you turn each claimed
    group into bytes, and (optionally) run them.

    Subclass it and ``lathe.register_backend(MyBackend())``; then
    ``program.lower("my_backend")`` claims what ``support`` accepts, hands
    each group of claimed nodes to ``preprocess`` and stores the bytes it
    returns in the lowered program, and ``program.run`` calls ``execute``::

        class NumpyLinear(lathe.Backend):
            name = "numpy_linear"
            constant_args = {"aten.linear.default": ["weight", "bias"]}  # prepacked: must be constants

            def support(self, node):
                return None if node.target == "aten.linear.default" else "only linear"

            def preprocess(self, subgraph):          # subgraph.constants: name -> numpy array
                ...                                  # your own format
                return payload_bytes

            def execute(self, payload, inputs):      # numpy arrays in, a list of arrays out
                ...

    ``support(node)`` returns None to claim a node or a string saying why not;
    Lathe never claims a node whose ``constant_args`` operand is not a
    compile-time constant (a weight computed at run time, a mutated buffer,
    a user input), and says so in the lowering's explanation. ``keep`` lists
    ops the decompose step must leave whole for you.
    """

    name: str = ""
    keep: list = []
    constant_args: dict = {}

    def support(self, node: Node):
        raise NotImplementedError("a lathe.Backend implements support(self, node)")

    def preprocess(self, subgraph: Subgraph) -> bytes:
        raise NotImplementedError("a lathe.Backend implements preprocess(self, subgraph)")


def from_exported_program(ep) -> Program:
    """A torch.export.ExportedProgram as a Lathe Program (through an in-memory .pt2)."""
    import torch

    buffer = _io.BytesIO()
    torch.export.save(ep, buffer)
    return load(buffer.getbuffer())


def _to_exported_program(self: Program):
    """This program as a torch.export.ExportedProgram (through an in-memory .pt2)."""
    import torch

    return torch.export.load(_io.BytesIO(self.to_bytes()))


Program.to_exported_program = _to_exported_program
