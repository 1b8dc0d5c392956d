"""Read a written `.pt2` back WITHOUT the tracer and check it.

* zip layout: one top folder, STORED entries, data 64-byte aligned;
* every program's JSON parses, satisfies the loader invariants, and every
  struct has the expected field set;
* weights/constants are rebuilt from the raw payloads via their configs
  (path_name, sizes, strides, storage_offset) and must equal the traced
  module's tensors;
* the program is *executed from the JSON* (ops looked up by target name,
  arguments decoded from the export schema) on the reference inputs, with
  buffer mutations fed back between calls, and must reproduce the eager
  reference outputs in ``<name>.ref/``.

This is an oracle for Lathe's C++ reader: the same file, decoded by a second
independent implementation.
"""

import io
import json
import os
import struct
import zipfile
from collections import OrderedDict
from typing import Dict, List

import numpy as np
import torch

from .serialize import LAYOUT, MEMORY_FORMAT, SCALAR_TYPE

DTYPE_OF = {v: k for k, v in SCALAR_TYPE.items()}
LAYOUT_OF = {v: k for k, v in LAYOUT.items()}
MEMFMT_OF = {v: k for k, v in MEMORY_FORMAT.items()}

FIELDS = {
    "ExportedProgram": ["graph_module", "opset_version", "range_constraints", "schema_version", "verifiers", "torch_version", "guards_code"],
    "GraphModule": ["graph", "signature", "module_call_graph", "metadata", "treespec_namedtuple_fields"],
    "Graph": ["inputs", "outputs", "nodes", "tensor_values", "sym_int_values", "sym_bool_values", "is_single_tensor_return", "custom_obj_values", "sym_float_values"],
    "Node": ["target", "inputs", "outputs", "metadata", "is_hop_single_tensor_return", "name"],
    "TensorMeta": ["dtype", "sizes", "requires_grad", "device", "strides", "storage_offset", "layout"],
    "PayloadMeta": ["path_name", "is_param", "use_pickle", "tensor_meta"],
}


class CheckError(AssertionError):
    pass


def _expect_fields(obj, kind, where):
    if list(obj.keys()) != FIELDS[kind]:
        raise CheckError("%s: %s fields %s, expected %s" % (where, kind, list(obj.keys()), FIELDS[kind]))


def _float(x):
    if isinstance(x, str):
        return {"Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan")}[x]
    return float(x)


class Archive:
    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as f:
            self.raw = f.read()
        self.zf = zipfile.ZipFile(io.BytesIO(self.raw))
        names = self.zf.namelist()
        self.top = names[0].split("/")[0]
        for info in self.zf.infolist():
            if not info.filename.startswith(self.top + "/"):
                raise CheckError("%s outside top folder %s" % (info.filename, self.top))
            if info.compress_type != zipfile.ZIP_STORED:
                raise CheckError("%s is compressed" % info.filename)
            # local header: 30 bytes + name + extra, then data
            hdr = self.raw[info.header_offset : info.header_offset + 30]
            n_len, x_len = struct.unpack("<HH", hdr[26:30])
            data_off = info.header_offset + 30 + n_len + x_len
            if data_off % 64 != 0:
                raise CheckError("%s data at offset %d, not 64-aligned" % (info.filename, data_off))
        self.records = [n[len(self.top) + 1 :] for n in names]

    def read(self, rel: str) -> bytes:
        return self.zf.read(self.top + "/" + rel)

    def methods(self) -> List[str]:
        return [r[len("models/") : -len(".json")] for r in self.records if r.startswith("models/") and r.endswith(".json")]

    def payloads(self, directory: str, config_name: str) -> "OrderedDict[str, torch.Tensor]":
        cfg = json.loads(self.read(directory + config_name))
        if list(cfg.keys()) != ["config"]:
            raise CheckError("%s: bad config keys" % config_name)
        out = OrderedDict()
        for fqn, meta in cfg["config"].items():
            _expect_fields(meta, "PayloadMeta", fqn)
            _expect_fields(meta["tensor_meta"], "TensorMeta", fqn)
            if meta["use_pickle"]:
                raise CheckError("%s uses pickle" % fqn)
            tm = meta["tensor_meta"]
            dtype = DTYPE_OF[tm["dtype"]]
            buf = bytearray(self.read(directory + meta["path_name"]))
            flat = torch.frombuffer(buf, dtype=dtype) if buf else torch.empty(0, dtype=dtype)
            sizes = [s["as_int"] for s in tm["sizes"]]
            strides = [s["as_int"] for s in tm["strides"]]
            t = torch.as_strided(flat, sizes, strides, tm["storage_offset"]["as_int"])
            if meta["is_param"]:
                t = torch.nn.Parameter(t, requires_grad=tm["requires_grad"])
            out[fqn] = t
        return out


class JsonProgram:
    """Executes an ExportedProgram JSON with torch ops."""

    def __init__(self, prog: dict, where: str):
        _expect_fields(prog, "ExportedProgram", where)
        if prog["schema_version"]["major"] != 8:
            raise CheckError("%s: schema major %s" % (where, prog["schema_version"]["major"]))
        gm = prog["graph_module"]
        _expect_fields(gm, "GraphModule", where)
        g = gm["graph"]
        _expect_fields(g, "Graph", where)
        for n in g["nodes"]:
            _expect_fields(n, "Node", where)
        for name, tmeta in g["tensor_values"].items():
            _expect_fields(tmeta, "TensorMeta", "%s tensor_values[%s]" % (where, name))
        self.where = where
        self.graph = g
        self.sig = gm["signature"]
        mcg = gm["module_call_graph"]
        if len(mcg) < 1 or mcg[0]["fqn"] != "":
            raise CheckError("%s: module_call_graph[0] must have fqn ''" % where)
        json.loads(mcg[0]["signature"]["in_spec"])
        json.loads(mcg[0]["signature"]["out_spec"])

    def _op(self, target: str):
        parts = target.split(".")
        if parts[:2] != ["torch", "ops"] or len(parts) != 5:
            raise CheckError("%s: odd target %s" % (self.where, target))
        return getattr(getattr(getattr(torch.ops, parts[2]), parts[3]), parts[4])

    def _arg(self, a, env):
        (k, v), = a.items()
        if k == "as_tensor":
            return env[v["name"]]
        if k == "as_tensors":
            return [env[t["name"]] for t in v]
        if k == "as_optional_tensors":
            return [None if "as_none" in t else env[t["as_tensor"]["name"]] for t in v]
        if k == "as_none":
            return None
        if k in ("as_int", "as_ints", "as_bool", "as_bools", "as_string", "as_strings"):
            return v
        if k == "as_float":
            return _float(v)
        if k == "as_floats":
            return [_float(x) for x in v]
        if k == "as_scalar_type":
            return DTYPE_OF[v]
        if k == "as_memory_format":
            return MEMFMT_OF[v]
        if k == "as_layout":
            return LAYOUT_OF[v]
        if k == "as_device":
            return torch.device(v["type"], v["index"]) if v["index"] is not None else torch.device(v["type"])
        raise CheckError("%s: argument kind %s not handled by the checker" % (self.where, k))

    def run(self, state: Dict[str, torch.Tensor], constants: Dict[str, torch.Tensor], user_args):
        env = {}
        user_args = list(user_args)
        for spec, inp in zip(self.sig["input_specs"], self.graph["inputs"]):
            (kind, body), = spec.items()
            name = inp["as_tensor"]["name"]
            if kind == "user_input":
                env[name] = user_args.pop(0)
            elif kind == "parameter":
                env[name] = state[body["parameter_name"]]
            elif kind == "buffer":
                src = state if body["persistent"] else constants
                env[name] = src[body["buffer_name"]]
            elif kind == "tensor_constant":
                env[name] = constants[body["tensor_constant_name"]]
            else:
                raise CheckError("%s: input spec %s" % (self.where, kind))
        with torch.no_grad():
            for n in self.graph["nodes"]:
                op = self._op(n["target"])
                args, kwargs = [], {}
                for na in n["inputs"]:
                    val = self._arg(na["arg"], env)
                    if na["kind"] == 2:
                        kwargs[na["name"]] = val
                    else:
                        if kwargs:
                            raise CheckError("%s: positional argument after keyword in %s" % (self.where, n["name"]))
                        args.append(val)
                res = op(*args, **kwargs)
                outs = n["outputs"]
                if len(outs) == 1:
                    res = [res]
                for o, r in zip(outs, res):
                    (k, v), = o.items()
                    if k == "as_tensor":
                        env[v["name"]] = r
                    elif k == "as_tensors":
                        for t, rr in zip(v, r):
                            env[t["name"]] = rr
                for o in outs:
                    (k, v), = o.items()
                    names = [v["name"]] if k == "as_tensor" else [t["name"] for t in v] if k == "as_tensors" else []
                    for nm in names:
                        self._check_meta(nm, env[nm])
        muts, users = OrderedDict(), []
        for spec, out in zip(self.sig["output_specs"], self.graph["outputs"]):
            (kind, body), = spec.items()
            val = env[out["as_tensor"]["name"]]
            if kind == "buffer_mutation":
                muts[body["buffer_name"]] = val
            elif kind == "user_output":
                users.append(val)
            else:
                raise CheckError("%s: output spec %s" % (self.where, kind))
        return muts, users

    def _check_meta(self, name, t):
        m = self.graph["tensor_values"][name]
        if DTYPE_OF[m["dtype"]] != t.dtype or [s["as_int"] for s in m["sizes"]] != list(t.shape):
            raise CheckError("%s: value %s is %s%s, tensor_values says %s%s" % (
                self.where, name, t.dtype, list(t.shape), DTYPE_OF[m["dtype"]], [s["as_int"] for s in m["sizes"]]))


def _close(a: torch.Tensor, b: torch.Tensor, rtol=1e-4, atol=1e-5) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        return torch.allclose(a, b, rtol=rtol, atol=atol)
    return torch.equal(a, b)


def check_archive(path: str, ref_dir: str, expected_state=None) -> Dict[str, int]:
    """Returns {method: number of reference calls checked}."""
    ar = Archive(path)
    for rec in ("archive_format", "archive_version", "byteorder", ".data/version"):
        if rec not in ar.records:
            raise CheckError("%s: missing record %s" % (path, rec))
    if ar.read("archive_format") != b"pt2":
        raise CheckError("archive_format is not pt2")
    checked = {}
    for m in ar.methods():
        where = "%s:%s" % (os.path.basename(path), m)
        prog = JsonProgram(json.loads(ar.read("models/%s.json" % m)), where)
        state = ar.payloads("data/weights/", "%s_weights_config.json" % m)
        consts = ar.payloads("data/constants/", "%s_constants_config.json" % m)
        if expected_state is not None:
            for fqn, t in list(expected_state.get(m, {}).items()):
                src = state if fqn in state else consts
                if fqn not in src or not torch.equal(src[fqn].detach(), t.detach()):
                    raise CheckError("%s: payload %s does not round-trip" % (where, fqn))
        args, kwargs = torch.load(io.BytesIO(ar.read("data/sample_inputs/%s.pt" % m)))
        if kwargs:
            raise CheckError("%s: unexpected sample kwargs" % where)
        k = 0
        state = OrderedDict((n, t.detach()) for n, t in state.items())
        while True:
            d = os.path.join(ref_dir, m, "call_%d" % k)
            if not os.path.isdir(d):
                break
            n_in = len([f for f in os.listdir(d) if f.startswith("input_")])
            n_out = len([f for f in os.listdir(d) if f.startswith("output_")])
            inputs = [torch.from_numpy(np.load(os.path.join(d, "input_%d.npy" % i))) for i in range(n_in)]
            if k == 0:
                for a, b in zip(args, inputs):
                    if not torch.equal(a, b):
                        raise CheckError("%s: sample input differs from reference input" % where)
            muts, outs = prog.run(state, consts, inputs)
            if len(outs) != n_out:
                raise CheckError("%s call %d: %d outputs, reference has %d" % (where, k, len(outs), n_out))
            for i, o in enumerate(outs):
                ref = torch.from_numpy(np.load(os.path.join(d, "output_%d.npy" % i)))
                if not _close(o, ref):
                    raise CheckError("%s call %d output %d differs from the reference" % (where, k, i))
            for fqn, v in muts.items():
                if fqn in state:
                    state[fqn] = v
                else:
                    consts[fqn] = v
            k += 1
        if k == 0:
            raise CheckError("%s: no reference calls in %s" % (where, ref_dir))
        checked[m] = k
    return checked
