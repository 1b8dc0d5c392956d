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

from ._lathe import Error, Explanation, Graph, Node, Program, Rewriter, Value, backends, load, passes

__all__ = ["Error", "Explanation", "Graph", "Node", "Pass", "Program", "Rewriter", "Value", "backends",
           "from_exported_program", "load", "passes"]


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
