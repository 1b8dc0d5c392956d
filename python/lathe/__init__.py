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

from ._lathe import Error, Explanation, Program, backends, load, passes

__all__ = ["Error", "Explanation", "Program", "backends", "from_exported_program", "load", "passes"]


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
