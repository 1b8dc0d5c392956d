"""Read a written `.pt2` back WITHOUT the tracer and check it.

The generation is detected from the records (``generation_of``): PyTorch 2.9
(PT2 archive, raw payloads + configs), 2.8 (PT2 archive, one torch.save dict
per method) or legacy (2.4-2.7 flat zip).

* zip layout: one top folder, STORED entries, data 64-byte aligned (PT2);
  no top folder, STORED, exactly the legacy record set (legacy);
* every program's JSON parses, satisfies the loader invariants, and every
  struct has the expected field set; 2.8/legacy JSON is additionally walked
  against the export schema 8.1 dataclasses (``SCHEMA_81``, transcribed from
  PyTorch 2.4's schema.py): any key outside them is an error, as it is for
  the ``cls(**data)`` of loaders up to 2.8;
* weights/constants are rebuilt from the raw payloads via their configs
  (path_name, sizes, strides, storage_offset) (2.9), or read with
  ``torch.load(io.BytesIO(record))`` as the 2.4-2.8 loaders do (2.8/legacy),
  and must equal the traced module's tensors; ``compare_with_twin`` checks an
  older archive against its 2.9 twin (tensors, sample inputs, and the JSON
  modulo the 8.1 field set);
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
from typing import Dict, List, Tuple

import numpy as np
import torch

from .serialize import LAYOUT, MEMORY_FORMAT, SCALAR_TYPE

DTYPE_OF = {v: k for k, v in SCALAR_TYPE.items()}
LAYOUT_OF = {v: k for k, v in LAYOUT.items()}
MEMFMT_OF = {v: k for k, v in MEMORY_FORMAT.items()}

GENERATIONS = ("2.9", "2.8", "legacy")

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


# -- export schema 8.1 (PyTorch 2.4 torch/_export/serde/schema.py, SCHEMA_VERSION
# (8, 1)), the field set loaders up to 2.8 accept. struct: [(field, type,
# required)] in definition order ("required" = no default in the dataclass);
# union: {member: type}; enum: allowed values.
def _st(*fields):
    return ("struct", [(f[0], f[1], len(f) < 3) for f in fields])


_OPT = False  # marks a field with a default
SCHEMA_81 = {
    "ScalarType": ("enum", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 28}),
    "Layout": ("enum", {0, 1, 2, 3, 4, 5, 6, 7}),
    "MemoryFormat": ("enum", {0, 1, 2, 3, 4}),
    "Device": _st(("type", "str"), ("index", "Optional[int]", _OPT)),
    "SymExprHint": ("union", {"as_int": "int", "as_float": "float", "as_bool": "bool"}),
    "SymExpr": _st(("expr_str", "str"), ("hint", "Optional[SymExprHint]", _OPT)),
    "SymInt": ("union", {"as_expr": "SymExpr", "as_int": "int"}),
    "SymBool": ("union", {"as_expr": "SymExpr", "as_bool": "bool"}),
    "TensorMeta": _st(
        ("dtype", "ScalarType"), ("sizes", "List[SymInt]"), ("requires_grad", "bool"), ("device", "Device"),
        ("strides", "List[SymInt]"), ("storage_offset", "SymInt"), ("layout", "Layout"),
    ),
    "SymIntArgument": ("union", {"as_name": "str", "as_int": "int"}),
    "SymBoolArgument": ("union", {"as_name": "str", "as_bool": "bool"}),
    "TensorArgument": _st(("name", "str")),
    "TokenArgument": _st(("name", "str")),
    "OptionalTensorArgument": ("union", {"as_tensor": "TensorArgument", "as_none": "Tuple[()]"}),
    "GraphArgument": _st(("name", "str"), ("graph", "Graph")),
    "CustomObjArgument": _st(("name", "str"), ("class_fqn", "str")),
    "Argument": (
        "union",
        {
            "as_none": "Tuple[()]", "as_tensor": "TensorArgument", "as_tensors": "List[TensorArgument]",
            "as_int": "int", "as_ints": "List[int]", "as_float": "float", "as_floats": "List[float]",
            "as_string": "str", "as_strings": "List[str]", "as_sym_int": "SymIntArgument",
            "as_sym_ints": "List[SymIntArgument]", "as_scalar_type": "ScalarType",
            "as_memory_format": "MemoryFormat", "as_layout": "Layout", "as_device": "Device",
            "as_bool": "bool", "as_bools": "List[bool]", "as_sym_bool": "SymBoolArgument",
            "as_sym_bools": "List[SymBoolArgument]", "as_graph": "GraphArgument",
            "as_optional_tensors": "List[OptionalTensorArgument]", "as_custom_obj": "CustomObjArgument",
            "as_operator": "str",
        },
    ),
    "NamedArgument": _st(("name", "str"), ("arg", "Argument")),
    "Node": _st(("target", "str"), ("inputs", "List[NamedArgument]"), ("outputs", "List[Argument]"), ("metadata", "Dict[str, str]")),
    "Graph": _st(
        ("inputs", "List[Argument]"), ("outputs", "List[Argument]"), ("nodes", "List[Node]"),
        ("tensor_values", "Dict[str, TensorMeta]"), ("sym_int_values", "Dict[str, SymInt]"),
        ("sym_bool_values", "Dict[str, SymBool]"), ("is_single_tensor_return", "bool", _OPT),
        ("custom_obj_values", "Dict[str, CustomObjArgument]", _OPT),
    ),
    "UserInputSpec": _st(("arg", "Argument")),
    "ConstantValue": ("union", {"as_none": "Tuple[()]", "as_int": "int", "as_float": "float", "as_string": "str", "as_bool": "bool"}),
    "ConstantInputSpec": _st(("name", "str"), ("value", "ConstantValue")),
    "InputToParameterSpec": _st(("arg", "TensorArgument"), ("parameter_name", "str")),
    "InputToBufferSpec": _st(("arg", "TensorArgument"), ("buffer_name", "str"), ("persistent", "bool")),
    "InputToTensorConstantSpec": _st(("arg", "TensorArgument"), ("tensor_constant_name", "str")),
    "InputToCustomObjSpec": _st(("arg", "CustomObjArgument"), ("custom_obj_name", "str")),
    "InputTokenSpec": _st(("arg", "TokenArgument")),
    "InputSpec": (
        "union",
        {
            "user_input": "UserInputSpec", "parameter": "InputToParameterSpec", "buffer": "InputToBufferSpec",
            "tensor_constant": "InputToTensorConstantSpec", "custom_obj": "InputToCustomObjSpec",
            "token": "InputTokenSpec", "constant_input": "ConstantInputSpec",
        },
    ),
    "UserOutputSpec": _st(("arg", "Argument")),
    "LossOutputSpec": _st(("arg", "TensorArgument")),
    "BufferMutationSpec": _st(("arg", "TensorArgument"), ("buffer_name", "str")),
    "GradientToParameterSpec": _st(("arg", "TensorArgument"), ("parameter_name", "str")),
    "GradientToUserInputSpec": _st(("arg", "TensorArgument"), ("user_input_name", "str")),
    "UserInputMutationSpec": _st(("arg", "TensorArgument"), ("user_input_name", "str")),
    "OutputTokenSpec": _st(("arg", "TokenArgument")),
    "OutputSpec": (
        "union",
        {
            "user_output": "UserOutputSpec", "loss_output": "LossOutputSpec", "buffer_mutation": "BufferMutationSpec",
            "gradient_to_parameter": "GradientToParameterSpec", "gradient_to_user_input": "GradientToUserInputSpec",
            "user_input_mutation": "UserInputMutationSpec", "token": "OutputTokenSpec",
        },
    ),
    "GraphSignature": _st(("input_specs", "List[InputSpec]"), ("output_specs", "List[OutputSpec]")),
    # Optional[int] but no default: the key must be present (value may be null)
    "RangeConstraint": _st(("min_val", "Optional[int]"), ("max_val", "Optional[int]")),
    "ModuleCallSignature": _st(
        ("inputs", "List[Argument]"), ("outputs", "List[Argument]"), ("in_spec", "str"), ("out_spec", "str"),
        ("forward_arg_names", "Optional[List[str]]", _OPT),
    ),
    "ModuleCallEntry": _st(("fqn", "str"), ("signature", "Optional[ModuleCallSignature]", _OPT)),
    "GraphModule": _st(
        ("graph", "Graph"), ("signature", "GraphSignature"), ("module_call_graph", "List[ModuleCallEntry]"),
        ("metadata", "Dict[str, str]", _OPT),
    ),
    "SchemaVersion": _st(("major", "int"), ("minor", "int")),
    "ExportedProgram": _st(
        ("graph_module", "GraphModule"), ("opset_version", "Dict[str, int]"),
        ("range_constraints", "Dict[str, RangeConstraint]"), ("schema_version", "SchemaVersion"),
        ("verifiers", "List[str]", _OPT), ("torch_version", "str", _OPT),
    ),
}
# struct field lists of schema 8.1, the shape of FIELDS above
FIELDS_81 = {k: [f for f, _, _ in v[1]] for k, v in SCHEMA_81.items() if v[0] == "struct"}
FIELDS_81["PayloadMeta"] = FIELDS["PayloadMeta"]


def _split_args(s: str) -> List[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def check_schema_81(value, typ: str = "ExportedProgram", where: str = "$") -> int:
    """Walk JSON ``value`` as schema 8.1 type ``typ``; raise CheckError on any
    key outside the 8.1 dataclass field lists / union members, a missing
    required field, or a value of the wrong JSON type. Returns the number
    of struct/union objects visited."""
    if typ.startswith("Optional["):
        return 0 if value is None else check_schema_81(value, typ[len("Optional[") : -1], where)
    if typ.startswith("List["):
        if not isinstance(value, list):
            raise CheckError("%s: expected a list (%s), got %r" % (where, typ, type(value).__name__))
        return sum(check_schema_81(v, typ[5:-1], "%s[%d]" % (where, i)) for i, v in enumerate(value))
    if typ.startswith("Dict["):
        k_t, v_t = _split_args(typ[5:-1])
        if not isinstance(value, dict):
            raise CheckError("%s: expected an object (%s)" % (where, typ))
        return sum(check_schema_81(v, v_t, "%s[%s]" % (where, json.dumps(k))) for k, v in value.items())
    if typ == "Tuple[()]":
        if value != []:
            raise CheckError("%s: schema 8.1 encodes Tuple[()] (as_none) as [], got %s" % (where, json.dumps(value)))
        return 0
    if typ == "str":
        if not isinstance(value, str):
            raise CheckError("%s: expected a string, got %s" % (where, json.dumps(value)[:60]))
        return 0
    if typ == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise CheckError("%s: expected an int, got %s" % (where, json.dumps(value)[:60]))
        return 0
    if typ == "float":
        if isinstance(value, bool) or not (isinstance(value, (int, float)) or value in ("Infinity", "-Infinity", "NaN")):
            raise CheckError("%s: expected a float, got %s" % (where, json.dumps(value)[:60]))
        return 0
    if typ == "bool":
        if not isinstance(value, bool):
            raise CheckError("%s: expected a bool, got %s" % (where, json.dumps(value)[:60]))
        return 0
    kind, body = SCHEMA_81[typ]
    if kind == "enum":
        if isinstance(value, bool) or value not in body:
            raise CheckError("%s: %s is not a %s value of schema 8.1" % (where, json.dumps(value), typ))
        return 0
    if not isinstance(value, dict):
        raise CheckError("%s: expected a %s object, got %s" % (where, typ, json.dumps(value)[:60]))
    if kind == "union":
        if len(value) != 1:
            raise CheckError("%s: union %s must have exactly one key, has %s" % (where, typ, list(value)))
        ((k, v),) = value.items()
        if k not in body:
            raise CheckError("%s: %s has no member %r in schema 8.1 (members: %s)" % (where, typ, k, ", ".join(body)))
        return 1 + check_schema_81(v, body[k], "%s.%s" % (where, k))
    fields = {f: (t, req) for f, t, req in body}
    unknown = [k for k in value if k not in fields]
    if unknown:
        raise CheckError(
            "%s: %s key(s) %s are not in the schema 8.1 field set %s (a 2.4-2.8 loader rejects them)"
            % (where, typ, unknown, [f for f, _, _ in body])
        )
    missing = [f for f, (t, req) in fields.items() if req and f not in value]
    if missing:
        raise CheckError("%s: %s lacks required field(s) %s" % (where, typ, missing))
    return 1 + sum(check_schema_81(value[f], fields[f][0], "%s.%s" % (where, f)) for f in value)


def _expect_fields(obj, kind, where, fields=None):
    want = (fields or FIELDS)[kind]
    if list(obj.keys()) != want:
        raise CheckError("%s: %s fields %s, expected %s" % (where, kind, list(obj.keys()), want))


def _float(x):
    if isinstance(x, str):
        return {"Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan")}[x]
    return float(x)


def _zip_data_offset(raw: bytes, info: zipfile.ZipInfo) -> int:
    # local header: 30 bytes + name + extra, then data
    hdr = raw[info.header_offset : info.header_offset + 30]
    if hdr[:4] != b"PK\x03\x04":
        raise CheckError("%s: bad local header" % info.filename)
    n_len, x_len = struct.unpack("<HH", hdr[26:30])
    return info.header_offset + 30 + n_len + x_len


def _label(path: str) -> str:
    """<dir>/<file> for messages: the directory tells the generations apart."""
    return os.path.join(os.path.basename(os.path.dirname(os.path.abspath(path))), os.path.basename(path))


def generation_of(path: str) -> str:
    """Which generation of the format ``path`` is, from its records."""
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    if "serialized_exported_program.json" in names:
        return "legacy"
    top = names[0].split("/")[0]
    rel = [n[len(top) + 1 :] for n in names if n.startswith(top + "/")]
    if any(r.startswith("data/weights/") and r.endswith("_weights_config.json") for r in rel):
        return "2.9"
    if any(r.startswith("data/weights/") and r.endswith(".pt") for r in rel):
        return "2.8"
    raise CheckError("%s: neither a 2.9/2.8 PT2 archive nor a legacy flat zip (records %s)" % (path, names[:8]))


class Archive:
    """A PT2 archive (PyTorch 2.8 and 2.9)."""

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
            data_off = _zip_data_offset(self.raw, info)
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
        # one flat tensor per file, as PyTorch's _build_file_map: fqns that
        # share a file share a storage (tied weights, views) after loading
        files: Dict[str, torch.Tensor] = {}
        for fqn, meta in cfg["config"].items():
            _expect_fields(meta, "PayloadMeta", fqn)
            _expect_fields(meta["tensor_meta"], "TensorMeta", fqn)
            if meta["use_pickle"]:
                raise CheckError("%s uses pickle" % fqn)
            tm = meta["tensor_meta"]
            dtype = DTYPE_OF[tm["dtype"]]
            flat = files.get(meta["path_name"])
            if flat is None:
                buf = bytearray(self.read(directory + meta["path_name"]))
                flat = torch.frombuffer(buf, dtype=dtype) if buf else torch.empty(0, dtype=dtype)
                files[meta["path_name"]] = flat
            elif flat.dtype != dtype:
                raise CheckError("%s: %s read as %s and %s" % (config_name, meta["path_name"], flat.dtype, dtype))
            sizes = [s["as_int"] for s in tm["sizes"]]
            strides = [s["as_int"] for s in tm["strides"]]
            t = torch.as_strided(flat, sizes, strides, tm["storage_offset"]["as_int"])
            if meta["is_param"]:
                t = torch.nn.Parameter(t, requires_grad=tm["requires_grad"])
            out[fqn] = t
        return out


LEGACY_RECORDS = [
    "serialized_exported_program.json",
    "serialized_state_dict.pt",
    "serialized_constants.pt",
    "serialized_example_inputs.pt",
    "version",
]


class LegacyZip:
    """The flat zip of PyTorch 2.4-2.7 ``torch.export.save``."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as f:
            self.raw = f.read()
        self.zf = zipfile.ZipFile(io.BytesIO(self.raw))
        names = self.zf.namelist()
        if names[: len(LEGACY_RECORDS)] != LEGACY_RECORDS:
            raise CheckError("%s: legacy records %s, expected %s first" % (path, names, LEGACY_RECORDS))
        for n in names[len(LEGACY_RECORDS) :]:
            if not n.startswith("extra_files/"):
                raise CheckError("%s: unexpected record %s in a legacy zip" % (path, n))
        for info in self.zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                raise CheckError("%s is compressed" % info.filename)
            if info.flag_bits & 0x08:
                raise CheckError("%s: zipfile.writestr writes no data descriptor" % info.filename)
            _zip_data_offset(self.raw, info)
        self.records = names
        version = self.zf.read("version").decode("utf-8")
        parts = version.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts) or version != version.strip():
            raise CheckError("%s: version record %r is not '<major>.<minor>' (no newline)" % (path, version))
        # 2.4-2.7 load(): len(version) == len(SCHEMA_VERSION), major must match
        if parts[0] != "8":
            raise CheckError("%s: schema major %s in version record" % (path, parts[0]))
        self.version = version

    def read(self, rel: str) -> bytes:
        return self.zf.read(rel)

    def methods(self) -> List[str]:
        return ["model"]


def _torch_load(data: bytes, what: str):
    """``torch.load(io.BytesIO(record))``, as 2.4-2.8's
    ``deserialize_torch_artifact`` does."""
    if not data:
        raise CheckError("%s: empty record" % what)
    try:
        return torch.load(io.BytesIO(data))
    except Exception as e:  # noqa: BLE001 - report which record failed
        raise CheckError("%s: torch.load failed: %s" % (what, e))


def _pickled_state(data: bytes, what: str, want_type) -> "OrderedDict[str, torch.Tensor]":
    obj = _torch_load(data, what)
    if type(obj) is not want_type:
        raise CheckError("%s: unpickled a %s, expected %s" % (what, type(obj).__name__, want_type.__name__))
    for k, v in obj.items():
        if not isinstance(k, str) or not isinstance(v, torch.Tensor):
            raise CheckError("%s: entry %r is %s, not a tensor by fqn" % (what, k, type(v).__name__))
    return OrderedDict(obj.items())


class MethodData:
    """One program of an archive, with its state read back the way that
    generation's loader reads it."""

    def __init__(self, name, program, state, constants, sample_inputs):
        self.name = name
        self.program = program  # parsed JSON
        self.state = state
        self.constants = constants
        self.sample_inputs = sample_inputs  # (args, kwargs)


def load_methods(path: str) -> "Tuple[str, OrderedDict[str, MethodData]]":
    """(generation, {method: MethodData}), with the container checks of
    that generation."""
    gen = generation_of(path)
    out: "OrderedDict[str, MethodData]" = OrderedDict()
    base = _label(path)
    if gen == "legacy":
        ar = LegacyZip(path)
        prog = json.loads(ar.read("serialized_exported_program.json"))
        sv = prog.get("schema_version", {})
        if "%s.%s" % (sv.get("major"), sv.get("minor")) != ar.version:
            raise CheckError("%s: version record %s but JSON schema_version %s" % (path, ar.version, sv))
        state = _pickled_state(ar.read("serialized_state_dict.pt"), base + ":serialized_state_dict.pt", OrderedDict)
        consts = _pickled_state(ar.read("serialized_constants.pt"), base + ":serialized_constants.pt", dict)
        sample = _torch_load(ar.read("serialized_example_inputs.pt"), base + ":serialized_example_inputs.pt")
        out["model"] = MethodData("model", prog, state, consts, sample)
        return gen, out
    ar = Archive(path)
    for rec in ("archive_format", "archive_version", "byteorder", ".data/version"):
        if rec not in ar.records:
            raise CheckError("%s: missing record %s" % (path, rec))
    if ar.read("archive_format") != b"pt2":
        raise CheckError("archive_format is not pt2")
    if ar.read("archive_version") != b"0":
        raise CheckError("archive_version is not 0")
    for m in ar.methods():
        where = "%s:%s" % (base, m)
        prog = json.loads(ar.read("models/%s.json" % m))
        if gen == "2.9":
            state = ar.payloads("data/weights/", "%s_weights_config.json" % m)
            consts = ar.payloads("data/constants/", "%s_constants_config.json" % m)
        else:
            for r in ar.records:
                if r.endswith("_config.json"):
                    raise CheckError("%s: 2.8 archive has a payload config %s" % (path, r))
            state = _pickled_state(ar.read("data/weights/%s.pt" % m), where + " data/weights/%s.pt" % m, OrderedDict)
            consts = _pickled_state(ar.read("data/constants/%s.pt" % m), where + " data/constants/%s.pt" % m, dict)
        sample = _torch_load(ar.read("data/sample_inputs/%s.pt" % m), where + " sample inputs")
        out[m] = MethodData(m, prog, state, consts, sample)
    # every pickle record of the archive loads
    for r in ar.records:
        if r.endswith(".pt"):
            _torch_load(ar.read(r), "%s:%s" % (base, r))
    return gen, out


def check_state_placement(md: MethodData, where: str) -> None:
    """Loader invariants: parameters in the state dict as nn.Parameter,
    persistent buffers in the state dict (not parameters), non-persistent
    buffers and tensor constants in the constants."""
    for spec in md.program["graph_module"]["signature"]["input_specs"]:
        ((kind, body),) = spec.items()
        if kind == "parameter":
            t = md.state.get(body["parameter_name"])
            if not isinstance(t, torch.nn.Parameter):
                raise CheckError("%s: parameter %s is not an nn.Parameter in the state dict" % (where, body["parameter_name"]))
        elif kind == "buffer":
            src = md.state if body["persistent"] else md.constants
            t = src.get(body["buffer_name"])
            if t is None or isinstance(t, torch.nn.Parameter):
                raise CheckError("%s: buffer %s (persistent=%s) missing or a Parameter" % (where, body["buffer_name"], body["persistent"]))
        elif kind == "tensor_constant":
            if body["tensor_constant_name"] not in md.constants:
                raise CheckError("%s: tensor constant %s not in the constants" % (where, body["tensor_constant_name"]))


class JsonProgram:
    """Executes an ExportedProgram JSON with torch ops."""

    def __init__(self, prog: dict, where: str, field_set: str = "8.8"):
        """``field_set`` "8.1" (2.8 / legacy archives): the JSON is walked
        against the schema 8.1 dataclasses and node arguments carry no
        ``kind`` (positional vs keyword comes from the op schema, as the
        2.4-2.8 deserializer does it)."""
        fields = FIELDS_81 if field_set == "8.1" else FIELDS
        if field_set == "8.1":
            check_schema_81(prog, "ExportedProgram", where)
        _expect_fields(prog, "ExportedProgram", where, fields)
        if prog["schema_version"]["major"] != 8:
            raise CheckError("%s: schema major %s" % (where, prog["schema_version"]["major"]))
        gm = prog["graph_module"]
        _expect_fields(gm, "GraphModule", where, fields)
        g = gm["graph"]
        _expect_fields(g, "Graph", where, fields)
        for n in g["nodes"]:
            _expect_fields(n, "Node", where, fields)
        for name, tmeta in g["tensor_values"].items():
            _expect_fields(tmeta, "TensorMeta", "%s tensor_values[%s]" % (where, name), fields)
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
            if v not in (True, []):
                raise CheckError("%s: as_none is %s (true or [] expected)" % (self.where, json.dumps(v)))
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
                if all("kind" in na for na in n["inputs"]):
                    for na in n["inputs"]:
                        val = self._arg(na["arg"], env)
                        if na["kind"] == 2:
                            kwargs[na["name"]] = val
                        else:
                            if kwargs:
                                raise CheckError("%s: positional argument after keyword in %s" % (self.where, n.get("name") or n["target"]))
                            args.append(val)
                else:
                    # no NamedArgument.kind (schema 8.1): 2.4-2.8's
                    # deserialize_inputs -- an argument without a default
                    # that is not kwarg-only is positional (schema order),
                    # everything else is passed by name
                    given = {na["name"]: self._arg(na["arg"], env) for na in n["inputs"]}
                    known = {sa.name for sa in op._schema.arguments}
                    if set(given) - known:
                        raise CheckError("%s: %s has no argument(s) %s" % (self.where, n["target"], sorted(set(given) - known)))
                    for sa in op._schema.arguments:
                        if not sa.has_default_value() and not sa.kwarg_only:
                            if sa.name not in given:
                                raise CheckError("%s: %s lacks required argument %s" % (self.where, n["target"], sa.name))
                            args.append(given[sa.name])
                        elif sa.name in given:
                            kwargs[sa.name] = given[sa.name]
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


def _same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and a.stride() == b.stride()
        and isinstance(a, torch.nn.Parameter) == isinstance(b, torch.nn.Parameter)
        and a.requires_grad == b.requires_grad
        and torch.equal(a.detach(), b.detach())
    )


def _sharing(d: "OrderedDict[str, torch.Tensor]"):
    """Which fqns share a storage, and at which storage offset."""
    groups: Dict[int, List[str]] = {}
    for k, t in d.items():
        groups.setdefault(t.storage().data_ptr(), []).append(k)
    return sorted((tuple(v), tuple(d[x].storage_offset() for x in v)) for v in groups.values())


def project_to_81(prog):
    """A schema-8.8 program JSON (as the 2.9 writer emits it) reduced to the
    8.1 field set: what its 2.8 / legacy twin must hold, apart from
    schema_version and torch_version."""
    drop = {
        "NamedArgument": {"kind"},
        "Node": {"is_hop_single_tensor_return", "name"},
        "Graph": {"sym_float_values"},
        "GraphModule": {"treespec_namedtuple_fields"},
        "ExportedProgram": {"guards_code"},
    }

    def walk(x, ctx=None):
        if isinstance(x, dict):
            keys = set(x)
            kind = None
            if {"graph_module", "opset_version"} <= keys:
                kind = "ExportedProgram"
            elif {"graph", "signature", "module_call_graph"} <= keys:
                kind = "GraphModule"
            elif {"nodes", "tensor_values"} <= keys:
                kind = "Graph"
            elif {"target", "inputs", "outputs"} <= keys:
                kind = "Node"
            elif ctx == "NamedArgument":
                kind = "NamedArgument"
            out = OrderedDict()
            for k, v in x.items():
                if kind and k in drop.get(kind, ()):
                    continue
                if k == "as_none" and v is True:
                    out[k] = []
                    continue
                out[k] = walk(v, "NamedArgument" if (kind == "Node" and k == "inputs") else None)
            return out
        if isinstance(x, list):
            return [walk(v, ctx) for v in x]
        return x

    return walk(prog)


def compare_with_twin(path: str, twin_path: str) -> None:
    """An older-generation archive must hold the same programs as its 2.9
    twin: state dict / constants with equal tensors (values, dtype, shape,
    strides, Parameter-ness, storage sharing), equal sample inputs, and the
    twin's JSON reduced to the 8.1 field set."""
    _, old = load_methods(path)
    _, new = load_methods(twin_path)
    if list(old) != list(new):
        raise CheckError("%s: methods %s, 2.9 twin has %s" % (path, list(old), list(new)))
    for m in old:
        where = "%s:%s vs %s" % (_label(path), m, _label(twin_path))
        a, b = old[m], new[m]
        for label, da, db in (("state dict", a.state, b.state), ("constants", a.constants, b.constants)):
            if list(da) != list(db):
                raise CheckError("%s: %s keys %s vs %s" % (where, label, list(da), list(db)))
            for k in da:
                if not _same_tensor(da[k], db[k]):
                    raise CheckError("%s: %s entry %s differs from the 2.9 twin" % (where, label, k))
            if _sharing(da) != _sharing(db):
                raise CheckError("%s: %s storage sharing %s vs %s" % (where, label, _sharing(da), _sharing(db)))
        (aa, ak), (ba, bk) = a.sample_inputs, b.sample_inputs
        if len(aa) != len(ba) or ak != bk or not all(torch.equal(x, y) for x, y in zip(aa, ba)):
            raise CheckError("%s: sample inputs differ" % where)
        pa = OrderedDict(a.program)
        pb = project_to_81(b.program)
        for k in ("schema_version", "torch_version"):
            pa.pop(k, None)
            pb.pop(k, None)
        if json.dumps(pa) != json.dumps(pb):
            raise CheckError("%s: program JSON is not the 2.9 twin's reduced to schema 8.1" % where)


def check_archive(path: str, ref_dir: str, expected_state=None) -> Dict[str, int]:
    """Read back any generation, execute every program from its JSON on the
    reference inputs, and match the reference outputs.
    Returns {method: number of reference calls checked}."""
    gen, methods = load_methods(path)
    field_set = "8.8" if gen == "2.9" else "8.1"
    checked = {}
    for m, md in methods.items():
        where = "%s:%s" % (_label(path), m)
        prog = JsonProgram(md.program, where, field_set)
        if field_set == "8.1" and md.program["schema_version"] != {"major": 8, "minor": 1}:
            raise CheckError("%s: schema_version %s, expected 8.1" % (where, md.program["schema_version"]))
        check_state_placement(md, where)
        state, consts = md.state, OrderedDict(md.constants)
        if expected_state is not None:
            for fqn, t in list(expected_state.get(m, {}).items()):
                src = state if fqn in state else consts
                if fqn not in src or not torch.equal(src[fqn].detach(), t.detach()):
                    raise CheckError("%s: payload %s does not round-trip" % (where, fqn))
                if src[fqn].dtype != t.dtype or isinstance(src[fqn], torch.nn.Parameter) != isinstance(t, torch.nn.Parameter):
                    raise CheckError("%s: payload %s dtype / Parameter-ness differs" % (where, fqn))
            if set(state) | set(consts) != set(expected_state.get(m, {})):
                raise CheckError("%s: state %s, expected %s" % (where, sorted(set(state) | set(consts)), sorted(expected_state.get(m, {}))))
        args, kwargs = md.sample_inputs
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
