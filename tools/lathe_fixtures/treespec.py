"""Pytree spec strings in the format of torch 2.x ``treespec_dumps``
(protocol 1), written from torch 1.13's ``TreeSpec``.

    json.dumps([1, {"type": <serialized type name> | null,
                    "context": <json string of the context> | null,
                    "children_spec": [...]}])

A leaf is ``{"type": null, "context": null, "children_spec": []}``.
Tuples/lists have context ``null`` (dumped as the string ``"null"``); a dict's
context is its key list (dumped as e.g. ``"[\\"a\\", \\"b\\"]"``).
"""

import json
from collections import OrderedDict

import torch.utils._pytree as pytree

TREESPEC_PROTOCOL = 1

_TYPE_NAMES = {
    tuple: "builtins.tuple",
    list: "builtins.list",
    dict: "builtins.dict",
    OrderedDict: "collections.OrderedDict",
}


def _is_leaf(spec) -> bool:
    return isinstance(spec, pytree.LeafSpec)


def _to_json(spec):
    if _is_leaf(spec):
        return OrderedDict([("type", None), ("context", None), ("children_spec", [])])
    if spec.type not in _TYPE_NAMES:
        raise NotImplementedError("cannot serialize pytree node type %r" % (spec.type,))
    return OrderedDict(
        [
            ("type", _TYPE_NAMES[spec.type]),
            ("context", json.dumps(spec.context)),
            ("children_spec", [_to_json(c) for c in spec.children_specs]),
        ]
    )


def treespec_dumps(spec) -> str:
    return json.dumps([TREESPEC_PROTOCOL, _to_json(spec)])
