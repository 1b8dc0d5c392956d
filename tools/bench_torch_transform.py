#!/usr/bin/env python3
"""What `lathe transform` does, done with PyTorch 2.13, for `make bench`.

    bench_torch_transform.py IN.pt2 OUT.pt2

torch.export.load(IN), then the addmm -> linear rewrite with torch.fx on the
loaded program's graph (addmm(b, x, t(w)) with w a parameter placeholder and
alpha/beta at their default becomes linear(x, w, b); eliminate_dead_code()
drops the transposes), then torch.export.save(OUT). Each step is timed on
its own; the rewrite alone is what scripts/bench.sh compares with Lathe's
whole process on the same archive. The result is checked: every addmm was
rewritten and no transpose is left.

Prints a summary and one machine-readable line:
    RATE torch <load s> <rewrite s> <save s> <total s> <nodes>
"""
import argparse
import sys
import time

import torch

from bench_fx_rewrite import linear_candidates
from torch.export.graph_signature import TensorArgument


def rewrite(ep):
    """The rewrite on the program's own graph, in place; returns how many."""
    linear = torch.ops.aten.linear.default
    gm = ep.graph_module
    g = gm.graph
    params = set(ep.graph_signature.inputs_to_parameters)
    renamed = {}
    count = 0
    for node, x, w, bias in linear_candidates(g, params):
        with g.inserting_before(node):
            # Explicit unique names, as tools/bench_fx_rewrite.py gives them.
            new = g.create_node("call_function", linear, (x, w, bias), name=f"linear_{count}")
        new.meta = dict(node.meta)  # the serializer needs the output's 'val'
        node.replace_all_uses_with(new)
        renamed[node.name] = new.name
        g.erase_node(node)
        count += 1
    g.eliminate_dead_code()
    gm.recompile()
    # The signature names outputs; one that was an addmm is now a linear.
    for spec in ep.graph_signature.output_specs:
        if isinstance(spec.arg, TensorArgument) and spec.arg.name in renamed:
            spec.arg = TensorArgument(name=renamed[spec.arg.name])
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()
    torch.set_num_threads(1)

    t0 = time.perf_counter()
    ep = torch.export.load(args.input)
    load_s = time.perf_counter() - t0
    nodes = sum(1 for n in ep.graph.nodes if n.op == "call_function")

    t0 = time.perf_counter()
    rewritten = rewrite(ep)
    rewrite_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    torch.export.save(ep, args.output)
    save_s = time.perf_counter() - t0

    ops = {}
    for n in ep.graph.nodes:
        if n.op == "call_function":
            ops[str(n.target)] = ops.get(str(n.target), 0) + 1
    if rewritten == 0 or "aten.addmm.default" in ops or "aten.t.default" in ops:
        print(f"torch: wrong result: rewrote {rewritten}; ops after: {ops}", file=sys.stderr)
        return 1
    total = load_s + rewrite_s + save_s
    print(f"torch {torch.__version__}: {nodes:,} nodes: torch.export.load {load_s:.2f} s, "
          f"fx rewrite {rewrite_s:.2f} s ({rewritten:,} addmm -> linear), torch.export.save {save_s:.2f} s, "
          f"total {total:.2f} s")
    print(f"RATE torch {load_s:.4f} {rewrite_s:.4f} {save_s:.4f} {total:.4f} {nodes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
