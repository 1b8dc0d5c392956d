#!/usr/bin/env python3
"""Reference numbers for the real PyTorch 2.2 archive in ../shared/external/pt2/.

PyTorch can no longer load that archive (schema 2), so this evaluates the
archive's own graph node by node with the project's PyTorch (2.13, .venv) ATen ops, on its own state dict (a torch.save zip), for two
consecutive calls with the state carried, exactly as the exported module
would run in training mode:

    fixtures/external/hades_pid.ref/model/call_<k>/input_0.npy
                                                  /output_<i>.npy       user outputs
                                                  /buffer_<fqn>.npy     buffers after the call

Usage: .venv/bin/python tools/make_external_reference.py [--archive PATH] [--out DIR]
"""
import argparse
import io
import json
import os
import zipfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ARCHIVE = os.path.join(HERE, "..", "..", "shared", "external", "pt2", "hades_pid_exported_program.pt2")


def union_value(arg):
    """Schema-2 unions list every member, all but one null."""
    live = [(k, v) for k, v in arg.items() if v is not None]
    if not live:
        return "as_none", None
    if len(live) != 1:
        raise ValueError(f"ambiguous union {arg}")
    return live[0]


def decode(arg, env):
    kind, v = union_value(arg)
    if kind == "as_none":
        return None
    if kind == "as_tensor":
        return env[v["name"]]
    if kind == "as_tensors":
        return [env[t["name"]] for t in v]
    if kind in ("as_int", "as_float", "as_bool", "as_ints", "as_floats", "as_bools", "as_string"):
        return v
    raise NotImplementedError(f"argument kind {kind}")


def batch_norm_functional(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """aten._native_batch_norm_legit_functional (not in torch 1.13): the
    in-place native_batch_norm on copies, returning the updated statistics."""
    rm, rv = running_mean.clone(), running_var.clone()
    out, save_mean, save_rstd = torch.ops.aten.native_batch_norm(input, weight, bias, rm, rv, training, momentum, eps)
    return out, save_mean, save_rstd, rm, rv


def run_node(node, env):
    target = node["target"]
    args = [decode(a["arg"], env) for a in node["inputs"]]
    if target == "torch.ops.aten._native_batch_norm_legit_functional.default":
        result = batch_norm_functional(*args)
    else:
        *_, op, overload = target.split(".")
        result = getattr(getattr(torch.ops.aten, op), overload)(*args)
    outs = node["outputs"]
    if len(outs) == 1 and union_value(outs[0])[0] == "as_tensor":
        env[union_value(outs[0])[1]["name"]] = result
        return
    names = []
    for o in outs:
        kind, v = union_value(o)
        names.extend(t["name"] for t in (v if kind == "as_tensors" else [v]))
    for name, value in zip(names, result):
        env[name] = value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--archive", default=DEFAULT_ARCHIVE)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "fixtures", "external", "hades_pid.ref", "model"))
    ap.add_argument("--calls", type=int, default=2)
    o = ap.parse_args()

    z = zipfile.ZipFile(o.archive)
    program = json.loads(z.read("serialized_exported_program.json"))
    state = torch.load(io.BytesIO(z.read("serialized_state_dict.json")))
    graph = program["graph_module"]["graph"]
    sig = program["graph_module"]["signature"]
    inputs_to_state, buffer_names, mutations = {}, set(), {}  # placeholder -> fqn; output name -> buffer fqn
    for spec in sig["input_specs"]:
        if spec.get("parameter"):
            inputs_to_state[spec["parameter"]["arg"]["name"]] = spec["parameter"]["parameter_name"]
        elif spec.get("buffer"):
            inputs_to_state[spec["buffer"]["arg"]["name"]] = spec["buffer"]["buffer_name"]
            buffer_names.add(spec["buffer"]["buffer_name"])
    for spec in sig["output_specs"]:
        if spec.get("buffer_mutation"):
            mutations[spec["buffer_mutation"]["arg"]["name"]] = spec["buffer_mutation"]["buffer_name"]
    placeholders = [union_value(i)[1]["name"] for i in graph["inputs"]]
    user_inputs = [p for p in placeholders if p not in inputs_to_state]
    outputs = [union_value(x)[1]["name"] for x in graph["outputs"]]
    user_outputs = [x for x in outputs if x not in mutations]

    buffers = {fqn: state[fqn].clone() for fqn in sorted(buffer_names)}
    g = torch.Generator().manual_seed(20221)
    for k in range(o.calls):
        x = torch.randn(2, 10, generator=g)
        env = {}
        for p in placeholders:
            fqn = inputs_to_state.get(p)
            env[p] = x if p in user_inputs else (buffers[fqn] if fqn in buffers else state[fqn])
        with torch.no_grad():
            for node in graph["nodes"]:
                run_node(node, env)
        for name, fqn in mutations.items():
            buffers[fqn] = env[name]
        d = os.path.join(o.out, f"call_{k}")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, "input_0.npy"), x.numpy())
        for i, name in enumerate(user_outputs):
            np.save(os.path.join(d, f"output_{i}.npy"), env[name].contiguous().numpy())
        for fqn, t in buffers.items():
            np.save(os.path.join(d, f"buffer_{fqn}.npy"), t.contiguous().numpy())
        print(f"call {k}: outputs {[tuple(env[n].shape) for n in user_outputs]}, "
              f"{len(buffers)} buffers -> {d}")


if __name__ == "__main__":
    main()
