#!/usr/bin/env python3
"""Tiny real archives, one per export-schema construct Lathe must read.

    .venv/bin/python tools/torch_fixtures/constructs.py --out fixtures/constructs [--only a,b] [--aoti]

Each construct is a small module exported with ``torch.export.export`` and
written with ``torch.export.save`` (PyTorch 2.13, schema 8.20). After
writing, the archive is loaded back with ``torch.export.load`` and the
construct is looked for in its JSON, so a fixture never silently stops
containing what it is named after.

``--aoti`` also builds ``aoti_linear_cpu.pt2``: a real
``torch._inductor.aoti_compile_and_package`` package (needs g++, takes a
few minutes), copied record by record with PyTorch's own zip writer, except
that the compiled ``.so`` is cut to its 64-byte ELF header: the real one is
1.5 MB and the fixture is only there for its record layout.

Constructs PyTorch 2.13 cannot write (as_optional_tensor, as_int_lists,
as_float_lists, as_nested_tensors, as_string_to_argument from the default
ops, custom objects without a TorchBind library) are tested with hand-written
JSON in src/lathe/serde/pt2_constructs_test.cpp instead.
"""

import argparse
import json
import os
import sys
import tempfile
import zipfile

import torch
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
from torch.export import Dim


# An op with an ordered side effect. Registered on import: loading
# effects.pt2 (or Lathe's copy of it) with torch.export.load needs it too.
@torch.library.custom_op("lathe_fx::log", mutates_args=())
def _log(x: torch.Tensor) -> None:
    return None


@_log.register_fake
def _(x):
    return None


_register_effectful_op(torch.ops.lathe_fx.log.default, _EffectType.ORDERED)


class Complex(torch.nn.Module):
    """aten.mul.Tensor(x, 1+2j): a complex scalar argument (as_complex)."""

    def forward(self, x):
        return torch.view_as_real(torch.view_as_complex(x) * (1 + 2j))


class Dtypes(torch.nn.Module):
    """Buffers in float8 e4m3fn/e5m2/e4m3fnuz/e5m2fnuz and uint16/32/64."""

    DTYPES = [torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
              torch.uint16, torch.uint32, torch.uint64]

    def __init__(self):
        super().__init__()
        base = torch.tensor([0.5, 1.0, 2.0, 3.0])
        for i, dt in enumerate(self.DTYPES):
            self.register_buffer(f"b{i}", base.to(dt))

    def forward(self, x):
        out = x
        for i in range(len(self.DTYPES)):
            out = out + getattr(self, f"b{i}").to(torch.float32)
        return out


class Symbolic(torch.nn.Module):
    """A dynamic batch: symbolic ints (sym_size), a symbolic float (n / 2,
    sym_float) and a symbolic bool (a guard on n) flow through the graph."""

    def forward(self, x):
        n = x.shape[0]
        y = x * (n / 2)
        torch._check(n > 1)
        return y.reshape(n * 4)


class Unbacked(torch.nn.Module):
    """item(): an unbacked size u0 >= 0 with no upper bound (written as
    "max_val": null; PyTorch maps int_oo to None)."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 0)
        return torch.ones(k) * x.sum()


class Effects(torch.nn.Module):
    """An ordered side effect threads a token: with_effects, token specs."""

    def forward(self, x):
        torch.ops.lathe_fx.log(x)
        return x + 1


class ParamMutation(torch.nn.Module):
    """An in-place update of a frozen parameter: parameter_mutation."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4), requires_grad=False)

    def forward(self, x):
        self.w.add_(1.0)
        return x * self.w


class NoGrad(torch.nn.Module):
    """A no_grad block in training IR: the wrap_with_set_grad_enabled
    higher-order op with an as_graph subgraph."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))

    def forward(self, x):
        with torch.no_grad():
            y = x * 2
        return y * self.w


class SharedStorage(torch.nn.Module):
    """Two buffers viewing one storage at different offsets."""

    def __init__(self):
        super().__init__()
        base = torch.arange(12, dtype=torch.float32)
        self.register_buffer("head", base[:4])
        self.register_buffer("tail", base[6:10])

    def forward(self, x):
        return x + self.head * self.tail


CONSTRUCTS = {
    # name: (module class, example inputs, dynamic shapes, run_decompositions, JSON text that must appear)
    "complex_arg": (Complex, lambda: (torch.randn(3, 2),), None, False, '"as_complex"'),
    "dtypes": (Dtypes, lambda: (torch.randn(4),), None, False, '"dtype": 35'),
    "symbolic": (Symbolic, lambda: (torch.randn(3, 4),), ({0: Dim("batch", min=2, max=64)},), False,
                 '"as_sym_float"'),
    "unbacked": (Unbacked, lambda: (torch.randn(2), torch.tensor(3)), None, False, '"max_val": null'),
    "effects": (Effects, lambda: (torch.randn(2),), None, True, '"torch.ops.higher_order.with_effects"'),
    "parameter_mutation": (ParamMutation, lambda: (torch.randn(4),), None, True, '"parameter_mutation"'),
    "no_grad_subgraph": (NoGrad, lambda: (torch.randn(4),), None, False, '"as_graph"'),
    "shared_storage": (SharedStorage, lambda: (torch.randn(4),), None, False, '"storage_offset": {"as_int": 6}'),
}


def model_json(path):
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("/models/model.json"))
        return z.read(name).decode()


def write_construct(name, out_dir):
    cls, make_inputs, dynamic, decompose, needle = CONSTRUCTS[name]
    torch.manual_seed(0)
    module = cls()
    ep = torch.export.export(module, make_inputs(), dynamic_shapes=dynamic, strict=False)
    if decompose:  # functionalizes: mutations become outputs, effects tokens
        ep = ep.run_decompositions({})
    # Provenance metadata carries Python object ids (graph_id): drop it so
    # the archive is the same on every run.
    for gm in ep.graph_module.modules():
        if isinstance(gm, torch.fx.GraphModule):
            for node in gm.graph.nodes:
                node.meta.pop("from_node", None)
    path = os.path.join(out_dir, name + ".pt2")
    torch.export.save(ep, path)
    loaded = torch.export.load(path)
    text = model_json(path)
    if needle.replace(" ", "") not in text.replace(" ", ""):
        raise SystemExit(f"{name}: {needle} is not in the written JSON")
    print(f"{name}: {os.path.getsize(path)} bytes, {len(loaded.graph.nodes)} nodes")


def write_aoti(out_dir):
    torch.manual_seed(0)
    module = torch.nn.Linear(4, 2)
    ep = torch.export.export(module, (torch.randn(1, 4),))
    with tempfile.TemporaryDirectory() as tmp:
        real = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "aoti_linear_cpu.pt2"))
        path = os.path.join(out_dir, "aoti_linear_cpu.pt2")
        writer = torch._C.PyTorchFileWriter(path)
        with zipfile.ZipFile(real) as z:
            for info in z.infolist():
                record = info.filename.split("/", 1)[1]
                if record in (".data/version", ".data/serialization_id", "byteorder"):
                    continue  # the writer adds its own
                data = z.read(info)
                if record.endswith(".so"):
                    data = data[:64]
                writer.write_record(record, data, len(data))
        writer.write_end_of_file()
    print(f"aoti_linear_cpu: {os.path.getsize(path)} bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--aoti", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    names = [n for n in a.only.split(",") if n] or list(CONSTRUCTS)
    for n in names:
        write_construct(n, a.out)
    if a.aoti:
        write_aoti(a.out)


if __name__ == "__main__":
    sys.exit(main())
