"""A graph pass of your own, run by Lathe beside its built-in passes.

    python examples/user_pass.py fixtures/computed_weight.pt2 out.pt2

The pass rewrites addmm(b, x, permute(w)) into linear(x, w, b) - the rewrite
behind the two bugs Lathe exists for - the way Lathe's own passes do it:
only through the Rewriter (so the output spec follows the new node), and
only when the weight is a compile-time constant (so a backend that prepacks
linear weights never meets one computed at run time). Every candidate it
refuses is explained.
"""
import sys

import numpy as np

import lathe


class AddmmToLinear(lathe.Pass):
    name = "my_addmm_to_linear"
    description = "addmm(b, x, permute(w, [1, 0])) -> linear(x, w, b) for constant w"

    def run(self, rw: lathe.Rewriter) -> bool:
        changed = False
        for node in rw.graph.nodes:
            if node.target != "aten.addmm.default":
                continue
            bias, x, mat2 = node.args[:3]
            transpose = mat2.producer
            if transpose is None or transpose.target != "aten.permute.default" or transpose.args[1] != [1, 0]:
                rw.explain(node, False, "mat2 is not a transposed weight")
                continue
            weight = transpose.args[0]
            constant, why = rw.is_constant(weight)
            if not constant:
                rw.explain(node, False, f"weight '{weight.name}' {why}")
                continue
            y = rw.replace_node(node, "aten.linear.default", [x, weight, bias])
            rw.explain(y.producer, True, f"into linear of {why}")
            changed = True
        return changed


def main(source, out):
    program = lathe.load(source)
    transformed, why = program.transform([AddmmToLinear(), "remove_dead_code"])
    for e in why:
        print(f"{e.pass_name}: {e.message}")
    print("ops after:", [n.target for n in transformed.graph().nodes])
    x = np.random.default_rng(0).standard_normal(program.graph().inputs[-1].shape).astype(np.float32)
    same = np.allclose(program.run(x)[0], transformed.run(x)[0], rtol=1e-5, atol=1e-6)
    print("outputs match the original:", same)
    transformed.save(out)
    print("wrote", out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
