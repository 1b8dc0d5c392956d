#!/usr/bin/python3
"""torch.save fixtures for Lathe's pickle reader, and the reference description
of what torch.load makes of a file.

  /usr/bin/python3 tools/make_pickle_fixtures.py generate [--out tests/data/pickles]
      Writes small torch.save files and expected.json, the description of
      each as torch.load reads it. Deterministic: rerunning with the same
      PyTorch rewrites identical files. (Committed output was made with
      PyTorch 1.13.)
  /usr/bin/python3 tools/make_pickle_fixtures.py describe [--weights-only] FILE...
      Prints {FILE: description} for files torch.load reads; Lathe's tests use
      it to check that PyTorch reads what Lathe writes.

A description is JSON both sides can produce exactly: {"int": 3},
{"float": "<big-endian IEEE bits, hex>"}, {"str": ...}, {"bytes": "<hex>"},
{"list": [...]}, {"tuple": [...]} (torch.Size too), {"dict": [[k, v], ...],
"ordered": bool}, {"device": "cuda:1"}, {"dtype": "float16"}, null, {"bool":
...}, and for tensors {"tensor": {dtype, shape, stride, offset,
requires_grad, parameter, storage (index of the distinct storage in
first-use order), storage_nbytes, data (row-major element bytes, hex)}}.
"""
import argparse
import collections
import json
import os
import struct
import sys

import torch


def _storage_id(t):
    if hasattr(t, "untyped_storage"):  # PyTorch >= 2.0
        return t.untyped_storage()._cdata
    return t.storage()._storage._cdata


def _storage_nbytes(t):
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().nbytes()
    return t.storage().nbytes()


def describe(value, storages=None):
    storages = {} if storages is None else storages
    d = lambda v: describe(v, storages)
    if value is None:
        return None
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": struct.pack(">d", value).hex()}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).replace("torch.", "")}
    if isinstance(value, torch.Tensor):
        sid = storages.setdefault(_storage_id(value), len(storages))
        flat = value.detach().contiguous().reshape(-1).view(torch.uint8)
        return {"tensor": {
            "dtype": str(value.dtype).replace("torch.", ""),
            "shape": list(value.shape),
            "stride": list(value.stride()),
            "offset": value.storage_offset(),
            "requires_grad": value.requires_grad,
            "parameter": isinstance(value, torch.nn.Parameter),
            "storage": sid,
            "storage_nbytes": _storage_nbytes(value),
            "data": bytes(flat.numpy().tobytes()).hex(),
        }}
    if isinstance(value, list):
        return {"list": [d(v) for v in value]}
    if isinstance(value, tuple):  # torch.Size included
        return {"tuple": [d(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[d(k), d(v)] for k, v in value.items()],
                "ordered": isinstance(value, collections.OrderedDict)}
    raise TypeError(f"cannot describe {type(value)}")


def fixtures():
    """name -> (object, torch.save kwargs)."""
    g = torch.Generator().manual_seed(1234)
    rand = lambda *s: torch.randn(*s, generator=g)

    sd = collections.OrderedDict()
    sd["linear.weight"] = torch.nn.Parameter(rand(3, 4))
    sd["linear.bias"] = torch.nn.Parameter(rand(3))
    sd["frozen"] = torch.nn.Parameter(rand(2), requires_grad=False)
    sd["bn.num_batches_tracked"] = torch.tensor(7, dtype=torch.int64)  # 0-d int64
    sd["scalar"] = torch.tensor(-2.5)                                    # 0-d float32
    sd["big_ints"] = torch.tensor([-(2**63), 2**63 - 1, 0, -1], dtype=torch.int64)
    sd["mask"] = torch.tensor([True, False, True, True, False])
    sd["half"] = rand(2, 3).to(torch.float16)
    sd["bf16"] = rand(3).to(torch.bfloat16)
    sd["bytes_u8"] = torch.arange(250, 256, dtype=torch.uint8)
    base = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    sd["shared.base"] = base
    sd["shared.row"] = base[1]              # same storage, offset 4
    sd["shared.col"] = base[:, 2]           # same storage, offset 2, stride 4
    sd["transposed"] = rand(2, 3).double().t()  # strides (1, 3)
    sd["empty"] = torch.empty(0, 3)
    sd["grad_buffer"] = rand(2).requires_grad_(True)

    t1, t2, t3 = rand(2, 3), torch.tensor([1, -2, 3, 4]), rand(1)
    example_inputs = ((t1, t2), {"k": t3})

    shared_list = [1, 2]
    tied = rand(2)
    values = (
        None, True, False, 0, 255, 256, 65535, 65536, -1, -(2**31), 2**31, 2**63 - 1, -(2**63),
        1.5, -0.0, float("inf"), "text", "\u00fcn\u00ef\u00a9\u00f8d\u00e9 \u2603 \U0001F600", "",
        b"", b"\x00\xffbytes\x80",
        [1, [2, [3]]], {"a": 1, "b": [2], 3: "int key", (4, "t"): None},
        collections.OrderedDict([("x", 1), ("y", 2.0)]),
        torch.Size([2, 3]), torch.device("cpu"), torch.device("cuda", 1),
        torch.float16, torch.bool, torch.int64, (), (1,),
        (shared_list, shared_list), (tied, tied),
    )
    return {
        "state_dict.pt": (sd, {}),
        "example_inputs.pt": (example_inputs, {}),
        "values.pt": (values, {}),
        # protocol 4: FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL
        "example_inputs_proto4.pt": (example_inputs, {"pickle_protocol": 4}),
        "empty_dict.pt": ({}, {}),
    }


def generate(out):
    os.makedirs(out, exist_ok=True)
    expected = {"torch_version": torch.__version__}
    for name, (obj, kwargs) in fixtures().items():
        path = os.path.join(out, name)
        torch.save(obj, path, **kwargs)
        expected[name] = describe(torch.load(path))
    # One compact line per file keeps the sidecar small and diffs readable.
    with open(os.path.join(out, "expected.json"), "w") as f:
        f.write("{\n" + ",\n".join(
            json.dumps(k) + ": " + json.dumps(v, sort_keys=True, separators=(",", ":"))
            for k, v in sorted(expected.items())) + "\n}\n")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "pickles"))
    d = sub.add_parser("describe")
    d.add_argument("--weights-only", action="store_true")
    d.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.cmd == "generate":
        generate(args.out)
    else:
        result = {f: describe(torch.load(f, weights_only=args.weights_only)) for f in args.files}
        json.dump(result, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
