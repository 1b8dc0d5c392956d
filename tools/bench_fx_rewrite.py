#!/usr/bin/python3
"""The addmm -> linear rewrite done with torch.fx, for `make bench`.

Builds an fx.Graph of the same shape as bench/lathe_bench_rewrite.cpp: one
weight and one bias placeholder per layer, one input, then per layer
    t = aten.t.default(w_i)
    h = aten.addmm.default(b_i, h, t)
and times only the rewrite: match addmm(b, x, t(w)) with w a parameter
placeholder and alpha/beta at their default, insert linear(x, w, b),
replace_all_uses_with, erase the addmm, then eliminate_dead_code() (drops
the transposes).

torch 1.13's fx picks a fresh node name by counting up from the base name
until it finds a free one, which is quadratic in the number of nodes sharing
a base name. To measure fx's rewrite machinery rather than that, every node
(including each new linear) is given an explicit unique name, which fx takes
in O(1). `--default-names` measures fx as a pass author would usually call
it (call_function without a name).

Run with /usr/bin/python3 (Debian's, which has torch). Prints a summary and
one machine-readable line:  RATE fx <nodes per second>
"""
import argparse
import sys
import time

import torch
import torch.fx as fx


def build(layers):
    g = fx.Graph()
    aten = torch.ops.aten
    weights = [g.placeholder(f"p_layers_{i}_weight") for i in range(layers)]
    biases = [g.placeholder(f"p_layers_{i}_bias") for i in range(layers)]
    params = {n.name for n in weights} | {n.name for n in biases}
    h = g.placeholder("x")
    for i in range(layers):
        t = g.create_node("call_function", aten.t.default, (weights[i],), name=f"t_{i}")
        h = g.create_node("call_function", aten.addmm.default, (biases[i], h, t), name=f"addmm_{i}")
    g.output(h)
    return g, params


def linear_candidates(g, params):
    """(addmm node, x, w, bias) for each addmm(bias, x, t(w)) with alpha and
    beta at their default and w a parameter placeholder (the constness
    guard); shared with tools/bench_torch_transform.py."""
    aten = torch.ops.aten
    addmm, t_op = aten.addmm.default, aten.t.default
    for node in list(g.nodes):
        if node.op != "call_function" or node.target is not addmm:
            continue
        if node.kwargs.get("alpha", 1) != 1 or node.kwargs.get("beta", 1) != 1:
            continue
        bias, x, mat2 = node.args
        if not isinstance(mat2, fx.Node) or mat2.op != "call_function" or mat2.target is not t_op:
            continue
        w = mat2.args[0]
        if w.op != "placeholder" or w.name not in params:
            continue
        yield node, x, w, bias


def rewrite(g, params, default_names):
    linear = torch.ops.aten.linear.default
    count = 0
    for node, x, w, bias in linear_candidates(g, params):
        with g.inserting_before(node):
            if default_names:
                new = g.call_function(linear, (x, w, bias))
            else:
                new = g.create_node("call_function", linear, (x, w, bias), name=f"linear_{count}")
        node.replace_all_uses_with(new)
        g.erase_node(node)
        count += 1
    g.eliminate_dead_code()
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=50000, help="t + addmm pairs (nodes = 2 x layers)")
    ap.add_argument("--default-names", action="store_true", help="let fx name the new linears itself")
    args = ap.parse_args()
    torch.set_num_threads(1)

    t0 = time.perf_counter()
    g, params = build(args.layers)
    built = time.perf_counter() - t0
    nodes = 2 * args.layers  # call_function nodes, as Lathe counts nodes (no placeholders/output)

    t0, c0 = time.perf_counter(), time.process_time()
    rewritten = rewrite(g, params, args.default_names)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0

    ops = {}
    for n in g.nodes:
        if n.op == "call_function":
            key = n.target.__name__ if hasattr(n.target, "__name__") else str(n.target)
            ops[key] = ops.get(key, 0) + 1
    if rewritten != args.layers or len(ops) != 1:
        print(f"fx: wrong result: rewrote {rewritten} of {args.layers}; ops after: {ops}", file=sys.stderr)
        return 1
    rate, cpu_rate = nodes / seconds, nodes / cpu
    naming = "fx default naming" if args.default_names else "explicit unique node names"
    print(f"fx (torch {torch.__version__}): {nodes:,} nodes ({args.layers:,} x t + addmm), built in {built:.1f} s")
    print(f"fx: rewrite + eliminate_dead_code {seconds:.2f} s wall -> {rate:,.0f} nodes/s "
          f"(CPU {cpu:.2f} s -> {cpu_rate:,.0f} nodes/s; {naming}); after: {ops}")
    print(f"RATE fx {rate:.0f} {cpu_rate:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
