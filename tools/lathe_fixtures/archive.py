"""The ``.pt2`` containers of three PyTorch generations.

* PyTorch 2.9 (``write_pt2``) and 2.8 (``write_pt2_pickled``): the PT2 archive,
  written with PyTorch's own zip writer (``torch._C.PyTorchFileWriter``: STORED
  entries, 64-byte aligned data);
* PyTorch 2.4-2.7 (``write_legacy_zip``): the flat zip ``torch.export.save``
  wrote with Python's ``zipfile``.

PT2 archive
-----------

torch 1.13's writer prefixes every record with the archive's top folder (the
file's basename without extension) itself, and writes ``.data/version`` on
``write_end_of_file`` (``6\\n`` after ``set_min_version(6)``, as PyTorch 2.9's
``PT2ArchiveWriter`` does). Record names below are therefore relative.

Layout per method ``<m>`` (PyTorch 2.9, ``torch/export/pt2_archive/_package.py``):

    data/weights/weight_<i>                     raw storage bytes
    data/weights/<m>_weights_config.json        {"config": {fqn: PayloadMeta}}
    data/constants/tensor_<i>                   raw storage bytes
    data/constants/<m>_constants_config.json    {"config": {fqn: PayloadMeta}}
    models/<m>.json                             ExportedProgram
    data/sample_inputs/<m>.pt                   torch.save((args, kwargs))

then ``byteorder``, ``archive_format`` = ``pt2``, ``archive_version`` = ``0``.
``path_name`` in a PayloadMeta is the bare file name (``weight_0``); file
indices continue across methods (PyTorch counts the records already written
under the prefix), and tensors that share a storage share one file.

PyTorch 2.8 (``torch/export/pt2_archive/_package.py``, ``_package_exported_programs``
before the raw-payload rewrite) writes per method, in this order:

    models/<m>.json                             ExportedProgram
    data/weights/<m>.pt                         torch.save(ep.state_dict)
    data/constants/<m>.pt                       torch.save(ep.constants)
    data/sample_inputs/<m>.pt                   torch.save((args, kwargs))

then ``archive_format``, ``archive_version`` (Python ``PT2ArchiveWriter.__exit__``)
and, from the C++ writer's ``writeEndOfFile``, ``byteorder``,
``.data/serialization_id``, ``.data/version``. No ``*_config.json``.

Legacy flat zip
---------------
PyTorch 2.4-2.7 ``torch.export.save`` (``zipfile.ZipFile(f, "w")``, default
ZIP_STORED, no top folder, no alignment), records in this order:
``serialized_exported_program.json``, ``serialized_state_dict.pt``,
``serialized_constants.pt``, ``serialized_example_inputs.pt``, ``version``
(``"8.1"``: ``".".join(SCHEMA_VERSION)``, no newline), then
``extra_files/<name>`` (UTF-8) if any. ``writestr`` stamps the current local
time; we use 1980-01-01 00:00:00 so the file is reproducible.
"""

import hashlib
import io
import json
import os
import sys
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import torch

from .serialize import SchemaProfile, tensor_meta

O = OrderedDict

ARCHIVE_FORMAT_PATH = "archive_format"
ARCHIVE_FORMAT_VALUE = "pt2"
ARCHIVE_VERSION_PATH = "archive_version"
ARCHIVE_VERSION_VALUE = "0"
BYTEORDER_PATH = "byteorder"
SERIALIZATION_ID_PATH = ".data/serialization_id"
MODELS_FILENAME_FORMAT = "models/{}.json"
WEIGHTS_DIR = "data/weights/"
CONSTANTS_DIR = "data/constants/"
WEIGHTS_CONFIG_FILENAME_FORMAT = WEIGHTS_DIR + "{}_weights_config.json"
CONSTANTS_CONFIG_FILENAME_FORMAT = CONSTANTS_DIR + "{}_constants_config.json"
SAMPLE_INPUTS_FILENAME_FORMAT = "data/sample_inputs/{}.pt"
WEIGHT_FILENAME_PREFIX = "weight_"
TENSOR_CONSTANT_FILENAME_PREFIX = "tensor_"


@dataclass
class MethodPayload:
    """Everything one ``models/<name>.json`` program needs in the archive."""

    program_json: bytes
    state_dict: "OrderedDict[str, torch.Tensor]"
    constants: "OrderedDict[str, torch.Tensor]"
    sample_inputs: bytes


def storage_bytes(t: torch.Tensor) -> bytes:
    """The raw bytes of ``t``'s whole storage (host byte order, no header)."""
    st = t.storage()
    n = st.size()
    if n == 0:
        return b""
    full = torch.empty(0, dtype=t.dtype).set_(st, 0, (n,), (1,))
    return full.detach().view(torch.uint8).numpy().tobytes()


def _storage_key(t: torch.Tensor):
    return (t.device.type, t.device.index, t.storage().data_ptr())


def torch_save_bytes(obj) -> bytes:
    """``torch.save`` to memory (torch 1.13's zip pickle, top folder
    ``archive/``), as PyTorch's ``serialize_torch_artifact`` does."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def sample_inputs_bytes(args, kwargs=None) -> bytes:
    return torch_save_bytes((tuple(args), dict(kwargs or {})))


def state_dict_bytes(state_dict: "OrderedDict[str, torch.Tensor]") -> bytes:
    """``ep.state_dict`` as 2.4-2.8 pickle it: an OrderedDict (the module's
    ``state_dict(keep_vars=True)`` order) of parameters (``nn.Parameter``,
    rebuilt via ``_rebuild_parameter``) and persistent buffers, by fqn.
    Tensors that share a storage stay shared inside the pickle."""
    for fqn, t in state_dict.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError("state_dict[%s] is %s, not a tensor" % (fqn, type(t)))
    return torch_save_bytes(O(state_dict.items()))


def constants_bytes(constants: "OrderedDict[str, torch.Tensor]") -> bytes:
    """``ep.constants`` as 2.4-2.8 pickle it: a plain dict of lifted tensor
    constants and non-persistent buffers, by fqn."""
    for fqn, t in constants.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError("constants[%s] is %s, not a tensor" % (fqn, type(t)))
    return torch_save_bytes(dict(constants.items()))


class PT2ArchiveWriter:
    def __init__(self, path: str):
        if not path.endswith(".pt2"):
            raise ValueError("PT2 archive paths end in .pt2: %s" % path)
        self.path = path
        self._w = torch._C.PyTorchFileWriter(path)
        self._w.set_min_version(6)
        self.records: List[str] = []
        self._hash = hashlib.sha256()

    def write_bytes(self, name: str, data: bytes) -> None:
        if name in self.records:
            raise ValueError("record %s written twice" % name)
        self._w.write_record(name, data, len(data))
        self.records.append(name)
        self._hash.update(name.encode() + b"\0" + data)

    def write_string(self, name: str, s: str) -> None:
        self.write_bytes(name, s.encode("utf-8"))

    def count_prefix(self, prefix: str) -> int:
        return sum(1 for r in self.records if r.startswith(prefix))

    def close(self, byteorder_first: bool = True) -> None:
        # 2.9 layout: byteorder first. 2.8: the Python writer adds
        # archive_format / archive_version, then the C++ writer byteorder.
        if byteorder_first and BYTEORDER_PATH not in self.records:
            self.write_string(BYTEORDER_PATH, sys.byteorder)
        if ARCHIVE_FORMAT_PATH not in self.records:
            self.write_string(ARCHIVE_FORMAT_PATH, ARCHIVE_FORMAT_VALUE)
        if ARCHIVE_VERSION_PATH not in self.records:
            self.write_string(ARCHIVE_VERSION_PATH, ARCHIVE_VERSION_VALUE)
        if BYTEORDER_PATH not in self.records:
            self.write_string(BYTEORDER_PATH, sys.byteorder)
        # Deterministic stand-in for PyTorch's random serialization id.
        sid = str(int.from_bytes(self._hash.digest()[:8], "little")).zfill(20)
        self.write_string(SERIALIZATION_ID_PATH, sid)
        self._w.write_end_of_file()


def _write_payloads(
    writer: PT2ArchiveWriter,
    items: "OrderedDict[str, torch.Tensor]",
    directory: str,
    prefix: str,
) -> "OrderedDict[str, OrderedDict]":
    config: "OrderedDict[str, OrderedDict]" = O()
    idx = writer.count_prefix(directory + prefix)
    groups: "OrderedDict[tuple, List[str]]" = O()
    for fqn, t in items.items():
        groups.setdefault(_storage_key(t), []).append(fqn)
    for key, fqns in groups.items():
        path_name = "%s%d" % (prefix, idx)
        idx += 1
        writer.write_bytes(directory + path_name, storage_bytes(items[fqns[0]]))
        for fqn in fqns:
            t = items[fqn]
            config[fqn] = O(
                [
                    ("path_name", path_name),
                    ("is_param", isinstance(t, torch.nn.Parameter)),
                    ("use_pickle", False),
                    ("tensor_meta", tensor_meta(t)),
                ]
            )
    # config keys in the order the fqns were given
    return O((fqn, config[fqn]) for fqn in items)


def _config_json(config) -> str:
    from .serialize import _encode

    return json.dumps(_encode(O([("config", config)]), False), allow_nan=False)


def write_pt2(path: str, methods: "OrderedDict[str, MethodPayload]") -> List[str]:
    """Write a PT2 archive with one program per entry of ``methods``.
    Returns the record names (relative to the top folder)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    w = PT2ArchiveWriter(path)
    for name, m in methods.items():
        wc = _write_payloads(w, m.state_dict, WEIGHTS_DIR, WEIGHT_FILENAME_PREFIX)
        w.write_string(WEIGHTS_CONFIG_FILENAME_FORMAT.format(name), _config_json(wc))
        cc = _write_payloads(w, m.constants, CONSTANTS_DIR, TENSOR_CONSTANT_FILENAME_PREFIX)
        w.write_string(CONSTANTS_CONFIG_FILENAME_FORMAT.format(name), _config_json(cc))
        w.write_bytes(MODELS_FILENAME_FORMAT.format(name), m.program_json)
        w.write_bytes(SAMPLE_INPUTS_FILENAME_FORMAT.format(name), m.sample_inputs)
    w.close()
    return list(w.records)


def write_pt2_pickled(path: str, methods: "OrderedDict[str, MethodPayload]") -> List[str]:
    """Write a PT2 archive as PyTorch 2.8 did: per method one ``torch.save``
    dict of weights and one of constants, no payload configs. Returns the
    record names (relative to the top folder)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    w = PT2ArchiveWriter(path)
    for name, m in methods.items():
        w.write_bytes(MODELS_FILENAME_FORMAT.format(name), m.program_json)
        w.write_bytes(WEIGHTS_DIR + name + ".pt", state_dict_bytes(m.state_dict))
        w.write_bytes(CONSTANTS_DIR + name + ".pt", constants_bytes(m.constants))
        w.write_bytes(SAMPLE_INPUTS_FILENAME_FORMAT.format(name), m.sample_inputs)
    w.close(byteorder_first=False)
    return list(w.records)


LEGACY_PROGRAM = "serialized_exported_program.json"
LEGACY_STATE_DICT = "serialized_state_dict.pt"
LEGACY_CONSTANTS = "serialized_constants.pt"
LEGACY_EXAMPLE_INPUTS = "serialized_example_inputs.pt"
LEGACY_VERSION = "version"
LEGACY_EXTRA_DIR = "extra_files/"
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class LegacyFormatError(ValueError):
    pass


def write_legacy_zip(
    path: str,
    methods: "OrderedDict[str, MethodPayload]",
    schema_version: str,
    extra_files: Optional[Dict[str, str]] = None,
) -> List[str]:
    """Write the flat zip of PyTorch 2.4-2.7 ``torch.export.save``. It holds
    exactly one program; more than one is refused."""
    if len(methods) != 1:
        raise LegacyFormatError(
            "the legacy flat-zip .pt2 (PyTorch 2.4-2.7 torch.export.save) holds exactly one program; "
            "got %d (%s) -- use --format 2.8 or 2.9 for multi-method archives" % (len(methods), ", ".join(methods))
        )
    (m,) = methods.values()
    records = [
        (LEGACY_PROGRAM, m.program_json),
        (LEGACY_STATE_DICT, state_dict_bytes(m.state_dict)),
        (LEGACY_CONSTANTS, constants_bytes(m.constants)),
        (LEGACY_EXAMPLE_INPUTS, m.sample_inputs),
        (LEGACY_VERSION, schema_version.encode("utf-8")),
    ]
    for name, content in (extra_files or {}).items():
        records.append((LEGACY_EXTRA_DIR + name, content.encode("utf-8")))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:  # ZIP_STORED, like torch.export.save
        for name, data in records:
            # what ZipFile.writestr(name, data) builds, minus the timestamp
            zi = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
            zi.compress_type = zipfile.ZIP_STORED
            zi.external_attr = 0o600 << 16
            zf.writestr(zi, data)
    return [name for name, _ in records]
