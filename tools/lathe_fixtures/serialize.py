"""Traced FX graph -> ExportedProgram JSON in PyTorch's export schema
(torch/_export/serde/schema.py, major 8).

Encoding rules (what ``torch.export.save`` writes):

* a struct is an object with every field, in dataclass definition order;
  unset optionals are ``null`` (see ``SchemaProfile.omit_none_optionals`` for
  the variant that drops them, as newer ``_dataclass_to_dict`` does);
* a union is a single-key object, e.g. ``{"as_tensor": {"name": "x"}}``;
* enums are integers; ``as_none`` is ``true`` (``[]``, i.e. ``Tuple[()]``, in
  the schema 8.1 field set);
* non-finite floats are the strings ``"Infinity"``, ``"-Infinity"``, ``"NaN"``.

Everything is built from ``OrderedDict``s so the key order is the schema's.
"""

import json
import math
import os
import operator
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch
import torch.fx as fx

from .trace import TracedMethod, op_name
from .treespec import treespec_dumps

O = OrderedDict

# -- enums (serde numbering, not c10's) ---------------------------------------
SCALAR_TYPE = {
    torch.uint8: 1,
    torch.int8: 2,
    torch.int16: 3,
    torch.int32: 4,
    torch.int64: 5,
    torch.float16: 6,
    torch.float32: 7,
    torch.float64: 8,
    torch.complex32: 9,
    torch.complex64: 10,
    torch.complex128: 11,
    torch.bool: 12,
    torch.bfloat16: 13,
}
LAYOUT = {torch.strided: 7}
for _name, _val in (("sparse_coo", 1), ("sparse_csr", 2), ("sparse_csc", 3), ("sparse_bsr", 4), ("sparse_bsc", 5), ("_mkldnn", 6)):
    if hasattr(torch, _name):
        LAYOUT[getattr(torch, _name)] = _val
MEMORY_FORMAT = {
    torch.contiguous_format: 1,
    torch.channels_last: 2,
    torch.channels_last_3d: 3,
    torch.preserve_format: 4,
}
ARG_POSITIONAL = 1
ARG_KEYWORD = 2


# Argument union members of export schema 8.1 (PyTorch 2.4's
# torch/_export/serde/schema.py, SCHEMA_VERSION (8, 1)). Later minors added
# as_sym_float(s), as_optional_tensor, as_complex, as_nested_tensors,
# as_int_lists, as_string_to_argument, as_float_lists; a loader up to 2.8
# (which rejects unknown keys) cannot read them, so an 8.1 profile refuses them.
ARGUMENT_KINDS_81 = frozenset(
    [
        "as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float",
        "as_floats", "as_string", "as_strings", "as_sym_int", "as_sym_ints",
        "as_scalar_type", "as_memory_format", "as_layout", "as_device", "as_bool",
        "as_bools", "as_sym_bool", "as_sym_bools", "as_graph",
        "as_optional_tensors", "as_custom_obj", "as_operator",
    ]
)


@dataclass
class SchemaProfile:
    """Which generation of the ``.pt2`` format to emit.

    ``field_set`` picks the JSON struct fields:

    * ``"8.8"``: what the tool writes for PyTorch 2.9 (whose loader ignores
      unknown keys): ``NamedArgument.kind``, ``Node.is_hop_single_tensor_return``
      / ``name``, ``Graph.sym_float_values``,
      ``GraphModule.treespec_namedtuple_fields``, ``ExportedProgram.guards_code``,
      ``as_none: true``;
    * ``"8.1"``: exactly the dataclass fields of PyTorch 2.4's schema.py
      (SCHEMA_VERSION (8, 1)), none of the above, ``as_none: []``. Loaders up
      to 2.8 build each struct with ``cls(**data)`` and so reject any key
      they do not know; every field added after 8.1 has a default, so 8.1
      JSON loads in 2.4 through 2.9.

    ``container`` picks the archive (see archive.py): ``pt2-raw`` (2.9: raw
    storage payloads + ``*_config.json``), ``pt2-pickle`` (2.8: one
    ``torch.save`` dict per method), ``legacy-zip`` (2.4-2.7: flat zip).
    """

    name: str = "2.9"
    schema_major: int = 8
    schema_minor: int = 8
    torch_version: str = "2.9.0"
    opset_version: Dict[str, int] = field(default_factory=lambda: O([("aten", 10)]))
    # Node.name exists in the 2.9 field set; set to False to emit null.
    node_names: bool = True
    omit_none_optionals: bool = False
    field_set: str = "8.8"
    container: str = "pt2-raw"
    # where the archive goes, relative to the output directory:
    # <subdir>/<fixture>.pt2; the subdirectory is the format name Lathe's
    # reader reports (pt2-2.8, legacy-2.4), the 2.9 archive sits at the top
    subdir: str = ""
    # the legacy flat zip holds exactly one program
    multi_method: bool = True
    description: str = "PyTorch 2.9 PT2 archive, raw weight payloads"

    @property
    def fields_81(self) -> bool:
        return self.field_set == "8.1"

    @property
    def none_value(self):
        return [] if self.fields_81 else True

    @property
    def schema_version_str(self) -> str:
        return "%d.%d" % (self.schema_major, self.schema_minor)

    def archive_name(self, fixture: str) -> str:
        return os.path.join(self.subdir, fixture + ".pt2") if self.subdir else fixture + ".pt2"


PROFILES = O(
    [
        ("2.9", SchemaProfile()),
        (
            "2.8",
            SchemaProfile(
                name="2.8",
                schema_minor=1,
                torch_version="2.8.0",
                node_names=False,
                field_set="8.1",
                container="pt2-pickle",
                subdir="pt2-2.8",
                description="PyTorch 2.8 PT2 archive, torch.save weights/constants per method, schema 8.1 JSON",
            ),
        ),
        (
            "legacy",
            SchemaProfile(
                name="legacy",
                schema_minor=1,
                torch_version="2.4.0",
                node_names=False,
                field_set="8.1",
                container="legacy-zip",
                subdir="legacy-2.4",
                multi_method=False,
                description="PyTorch 2.4-2.7 flat zip (torch.export.save via zipfile), schema 8.1 JSON",
            ),
        ),
    ]
)


class SerializeError(RuntimeError):
    pass


def tensor_meta(t: torch.Tensor, storage_offset: Optional[int] = None) -> "OrderedDict":
    """TensorMeta of ``t``. ``storage_offset`` overrides the tensor's own
    (graph values use 0, as PyTorch's serialize_tensor_meta does; weight
    payloads keep the real offset so views into a shared file rebuild)."""
    if t.dtype not in SCALAR_TYPE:
        raise SerializeError("unsupported dtype %s" % t.dtype)
    if t.layout not in LAYOUT:
        raise SerializeError("unsupported layout %s" % t.layout)
    return O(
        [
            ("dtype", SCALAR_TYPE[t.dtype]),
            ("sizes", [O([("as_int", int(s))]) for s in t.shape]),
            ("requires_grad", bool(t.requires_grad)),
            ("device", O([("type", t.device.type), ("index", t.device.index)])),
            ("strides", [O([("as_int", int(s))]) for s in t.stride()]),
            ("storage_offset", O([("as_int", int(t.storage_offset() if storage_offset is None else storage_offset))])),
            ("layout", LAYOUT[t.layout]),
        ]
    )


def _tensor_arg(name: str) -> "OrderedDict":
    return O([("name", name)])


def _as(key: str, value) -> "OrderedDict":
    return O([(key, value)])


class GraphSerializer:
    def __init__(self, tm: TracedMethod, profile: SchemaProfile):
        self.tm = tm
        self.profile = profile
        self.tensor_values: "OrderedDict[str, Any]" = O()
        # getitem node -> name of the producer output it reads
        self.alias: Dict[fx.Node, str] = {}

    # -- values ----------------------------------------------------------------
    def name_of(self, n: fx.Node) -> str:
        if n in self.alias:
            return self.alias[n]
        return self.tm.names[n]

    def _record(self, name: str, val) -> None:
        if not isinstance(val, torch.Tensor):
            raise SerializeError("value %s is not a tensor (%r)" % (name, type(val)))
        if name in self.tensor_values:
            raise SerializeError("value %s defined twice" % name)
        self.tensor_values[name] = tensor_meta(val, storage_offset=0)

    # -- arguments -------------------------------------------------------------
    def _arg(self, key: str, value) -> "OrderedDict":
        """One Argument (or OptionalTensorArgument) union value, refused if
        the profile's schema has no such member."""
        if self.profile.fields_81 and key not in ARGUMENT_KINDS_81:
            raise SerializeError(
                "argument kind %s does not exist in export schema 8.1 (PyTorch 2.4); "
                "the %s format cannot carry it (loaders up to 2.8 reject unknown keys)" % (key, self.profile.name)
            )
        return _as(key, value)

    def _none(self) -> "OrderedDict":
        return self._arg("as_none", self.profile.none_value)

    def argument(self, a, arg_type=None) -> "OrderedDict":
        if isinstance(a, fx.Node):
            return self._arg("as_tensor", _tensor_arg(self.name_of(a)))
        if type(a) is bool:
            return self._arg("as_bool", a)
        if type(a) is int:
            return self._arg("as_int", a)
        if type(a) is float:
            return self._arg("as_float", a)
        if type(a) is str:
            return self._arg("as_string", a)
        if a is None:
            return self._none()
        if isinstance(a, torch.dtype):
            return self._arg("as_scalar_type", SCALAR_TYPE[a])
        if isinstance(a, torch.memory_format):
            return self._arg("as_memory_format", MEMORY_FORMAT[a])
        if isinstance(a, torch.layout):
            return self._arg("as_layout", LAYOUT[a])
        if isinstance(a, torch.device):
            return self._arg("as_device", O([("type", a.type), ("index", a.index)]))
        if isinstance(a, (list, tuple)):
            return self._list_argument(list(a), arg_type)
        raise SerializeError("unsupported argument %r (schema type %s)" % (a, arg_type))

    def _list_argument(self, a: List[Any], arg_type) -> "OrderedDict":
        if not a:
            t = arg_type
            if isinstance(t, torch.OptionalType):
                t = t.getElementType()
            if not isinstance(t, torch.ListType):
                raise SerializeError("empty list for non-list schema type %s" % arg_type)
            el = t.getElementType()
            if isinstance(el, torch.OptionalType):
                el = el.getElementType()
            for typ, key in (
                (torch.BoolType, "as_bools"),
                (torch.IntType, "as_ints"),
                (torch.FloatType, "as_floats"),
                (torch.StringType, "as_strings"),
                (torch.TensorType, "as_tensors"),
            ):
                if isinstance(el, typ):
                    return self._arg(key, [])
            raise SerializeError("empty list of %s" % el)
        if all(type(x) is bool for x in a):
            return self._arg("as_bools", a)
        if all(type(x) is int for x in a):
            return self._arg("as_ints", a)
        if all(type(x) is float for x in a):
            return self._arg("as_floats", a)
        if all(type(x) is str for x in a):
            return self._arg("as_strings", a)
        if all(isinstance(x, fx.Node) for x in a):
            return self._arg("as_tensors", [_tensor_arg(self.name_of(x)) for x in a])
        if all(isinstance(x, fx.Node) or x is None for x in a):
            # OptionalTensorArgument: same as_none encoding as Argument
            return self._arg(
                "as_optional_tensors",
                [self._none() if x is None else _as("as_tensor", _tensor_arg(self.name_of(x))) for x in a],
            )
        raise SerializeError("unsupported list argument %r" % (a,))

    def named_inputs(self, n: fx.Node) -> List["OrderedDict"]:
        schema = n.target._schema
        out = []
        for i, sa in enumerate(schema.arguments):
            if sa.name in n.kwargs:
                value, kind = n.kwargs[sa.name], ARG_KEYWORD
            elif not sa.kwarg_only and i < len(n.args):
                value, kind = n.args[i], ARG_POSITIONAL
            else:
                continue  # left at its default -> omitted
            na = O([("name", sa.name), ("arg", self.argument(value, sa.type))])
            if not self.profile.fields_81:
                # NamedArgument.kind is newer than 8.1; a 2.4-2.8 loader
                # derives positional/keyword from the op schema instead.
                na["kind"] = kind
            out.append(na)
        extra = set(n.kwargs) - {sa.name for sa in schema.arguments}
        if extra or len(n.args) > len(schema.arguments):
            raise SerializeError("arguments of %s do not match its schema" % n.format_node())
        return out

    # -- outputs ---------------------------------------------------------------
    def _getitem_users(self, n: fx.Node) -> Dict[int, fx.Node]:
        users: Dict[int, fx.Node] = {}
        for u in n.users:
            if u.op != "call_function" or u.target is not operator.getitem:
                raise SerializeError("multi-output node %s used by non-getitem %s" % (n.name, u.name))
            idx = u.args[1]
            if idx in users:
                # duplicate getitem: both read the same value
                self.alias[u] = self.tm.names[users[idx]]
            else:
                users[idx] = u
        return users

    def node_outputs(self, n: fx.Node) -> List["OrderedDict"]:
        returns = n.target._schema.returns
        val = self.tm.node_values[n]
        name = self.tm.names[n]
        if len(returns) == 0:
            return []

        def is_tensor_list(t):
            return isinstance(t, torch.ListType) and isinstance(t.getElementType(), torch.TensorType)

        if len(returns) == 1 and is_tensor_list(returns[0].type):
            users = self._getitem_users(n)
            args = []
            for i, v in enumerate(val):
                nm = self.tm.names[users[i]] if i in users else "%s_unused_%d" % (name, i)
                self._record(nm, v)
                args.append(_tensor_arg(nm))
            return [self._arg("as_tensors", args)]
        if len(returns) == 1:
            if val is None:
                return [self._none()]
            self._record(name, val)
            return [self._arg("as_tensor", _tensor_arg(name))]

        users = self._getitem_users(n)
        outs = []
        for i, (v, ret) in enumerate(zip(val, returns)):
            if v is None:
                outs.append(self._none())
            elif isinstance(v, torch.Tensor):
                nm = self.tm.names[users[i]] if i in users else "%s_unused_%d" % (name, i)
                self._record(nm, v)
                outs.append(self._arg("as_tensor", _tensor_arg(nm)))
            else:
                raise SerializeError("unhandled output %r of %s" % (type(v), n.format_node()))
        return outs

    # -- graph -----------------------------------------------------------------
    def graph(self) -> "OrderedDict":
        tm = self.tm
        inputs = []
        nodes = []
        graph_outputs = []
        for n in tm.gm.graph.nodes:
            if n.op == "placeholder":
                val = tm.node_values[n]
                self._record(tm.names[n], val)
                inputs.append(self._arg("as_tensor", _tensor_arg(tm.names[n])))
            elif n.op == "call_function":
                if n.target is operator.getitem:
                    continue  # folded into the producer's outputs
                if not isinstance(n.target, torch._ops.OpOverload):
                    raise SerializeError("cannot serialize target %r" % (n.target,))
                node_inputs = self.named_inputs(n)
                node_outputs = self.node_outputs(n)
                node = O(
                    [
                        ("target", op_name(n.target)),
                        ("inputs", node_inputs),
                        ("outputs", node_outputs),
                        ("metadata", O()),
                    ]
                )
                if not self.profile.fields_81:
                    node["is_hop_single_tensor_return"] = None
                    node["name"] = tm.names[n] if self.profile.node_names else None
                nodes.append(node)
            elif n.op == "output":
                graph_outputs = [self.argument(a) for a in n.args[0]]
            else:
                raise SerializeError("unexpected node %s" % n.format_node())
        graph = O(
            [
                ("inputs", inputs),
                ("outputs", graph_outputs),
                ("nodes", nodes),
                ("tensor_values", self.tensor_values),
                ("sym_int_values", O()),
                ("sym_bool_values", O()),
                ("is_single_tensor_return", False),
                ("custom_obj_values", O()),
            ]
        )
        if not self.profile.fields_81:
            graph["sym_float_values"] = O()
        return graph

    def signature(self) -> "OrderedDict":
        tm = self.tm
        input_specs = []
        for s in tm.inputs:
            arg = _tensor_arg(s.name)
            if s.kind == "user_input":
                spec = _as("user_input", O([("arg", self._arg("as_tensor", arg))]))
            elif s.kind == "parameter":
                spec = _as("parameter", O([("arg", arg), ("parameter_name", s.target)]))
            elif s.kind == "buffer":
                spec = _as("buffer", O([("arg", arg), ("buffer_name", s.target), ("persistent", bool(s.persistent))]))
            elif s.kind == "tensor_constant":
                spec = _as("tensor_constant", O([("arg", arg), ("tensor_constant_name", s.target)]))
            else:
                raise SerializeError(s.kind)
            input_specs.append(spec)
        output_specs = []
        for s in tm.outputs:
            nm = self.name_of(s.node)
            if s.kind == "buffer_mutation":
                output_specs.append(_as("buffer_mutation", O([("arg", _tensor_arg(nm)), ("buffer_name", s.target)])))
            else:
                output_specs.append(_as("user_output", O([("arg", self._arg("as_tensor", _tensor_arg(nm)))])))
        return O([("input_specs", input_specs), ("output_specs", output_specs)])

    def module_call_graph(self) -> List["OrderedDict"]:
        tm = self.tm
        sig = O(
            [
                ("inputs", [self._arg("as_tensor", _tensor_arg(s.name)) for s in tm.user_inputs]),
                ("outputs", [self._arg("as_tensor", _tensor_arg(self.name_of(s.node))) for s in tm.user_outputs]),
                ("in_spec", treespec_dumps(tm.in_spec)),
                ("out_spec", treespec_dumps(tm.out_spec)),
                ("forward_arg_names", list(tm.forward_arg_names)),
            ]
        )
        return [O([("fqn", ""), ("signature", sig)])]


def serialize_program(tm: TracedMethod, profile: SchemaProfile) -> "OrderedDict":
    gs = GraphSerializer(tm, profile)
    graph = gs.graph()
    graph_module = O(
        [
            ("graph", graph),
            ("signature", gs.signature()),
            ("module_call_graph", gs.module_call_graph()),
            ("metadata", O()),
        ]
    )
    if not profile.fields_81:
        graph_module["treespec_namedtuple_fields"] = O()
    program = O(
        [
            ("graph_module", graph_module),
            ("opset_version", O(profile.opset_version)),
            ("range_constraints", O()),
            ("schema_version", O([("major", profile.schema_major), ("minor", profile.schema_minor)])),
            ("verifiers", []),
            ("torch_version", profile.torch_version),
        ]
    )
    if not profile.fields_81:
        program["guards_code"] = []
    check_program(program)
    return program


# Optional fields (default None) per struct, used only when a profile asks to
# drop them the way newer PyTorch's _dataclass_to_dict does.
_NONE_DEFAULT_FIELDS = {"index", "kind", "is_hop_single_tensor_return", "name", "hint", "signature", "forward_arg_names"}


def _encode(obj, omit_none: bool):
    if isinstance(obj, float):
        if math.isnan(obj):
            return "NaN"
        if math.isinf(obj):
            return "Infinity" if obj > 0 else "-Infinity"
        return obj
    if isinstance(obj, dict):
        return O(
            (k, _encode(v, omit_none))
            for k, v in obj.items()
            if not (omit_none and v is None and k in _NONE_DEFAULT_FIELDS)
        )
    if isinstance(obj, (list, tuple)):
        return [_encode(x, omit_none) for x in obj]
    return obj


def dumps(obj, profile: Optional[SchemaProfile] = None) -> bytes:
    """JSON bytes the way torch.export writes them (``json.dumps`` defaults,
    UTF-8)."""
    omit = bool(profile and profile.omit_none_optionals)
    return json.dumps(_encode(obj, omit), allow_nan=False).encode("utf-8")


def check_program(p) -> None:
    """Loader invariants (pt2-format.md "Signature"), asserted on write."""
    gm = p["graph_module"]
    g = gm["graph"]
    specs_in = gm["signature"]["input_specs"]
    specs_out = gm["signature"]["output_specs"]
    if len(g["inputs"]) != len(specs_in):
        raise SerializeError("graph inputs / input_specs length mismatch")
    for a, s in zip(g["inputs"], specs_in):
        (kind, body), = s.items()
        spec_name = body["arg"]["as_tensor"]["name"] if kind == "user_input" else body["arg"]["name"]
        if a["as_tensor"]["name"] != spec_name:
            raise SerializeError("input %s does not match spec %s" % (a, s))
    if len(g["outputs"]) != len(specs_out):
        raise SerializeError("graph outputs / output_specs length mismatch")
    for a, s in zip(g["outputs"], specs_out):
        (kind, body), = s.items()
        spec_name = body["arg"]["as_tensor"]["name"] if kind == "user_output" else body["arg"]["name"]
        if a["as_tensor"]["name"] != spec_name:
            raise SerializeError("output %s does not match spec %s" % (a, s))
    tv = g["tensor_values"]

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("as_tensor",) and isinstance(v, dict) and "name" in v:
                    if v["name"] not in tv:
                        raise SerializeError("tensor %s has no tensor_values entry" % v["name"])
                elif k == "as_tensors":
                    for t in v:
                        if t["name"] not in tv:
                            raise SerializeError("tensor %s has no tensor_values entry" % t["name"])
                else:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(g["inputs"])
    walk(g["outputs"])
    walk(g["nodes"])
