"""A backend of your own: Lathe partitions the program for it, your code turns
each claimed group into bytes of your own format, and runs them.

    python examples/user_backend.py fixtures/computed_weight.pt2

The backend claims linear layers and addmm (a matmul plus bias) and prepacks
their weights into its payload (an .npz here; your on-device format in real
life), so it declares them in `constant_args`: Lathe then never hands it a
matmul whose weight is computed at run time - the unsound rewrite behind the
original Vulkan prepack abort - and says why in the lowering's explanation.
"""
import io
import sys

import numpy as np

import lathe


class NumpyLinear(lathe.Backend):
    name = "numpy_linear"
    constant_args = {"aten.linear.default": ["weight", "bias"], "aten.addmm.default": ["self", "mat2"]}

    def support(self, node):
        return None if node.target in ("aten.linear.default", "aten.addmm.default") else "only linear and addmm"

    def preprocess(self, subgraph):
        layers = []
        for node in subgraph.nodes:
            args = node.arguments
            if node.target == "aten.addmm.default":  # self + mat1 @ mat2
                weight = subgraph.constants[args["mat2"].name].T
                layers.append((weight, subgraph.constants[args["self"].name]))
                continue
            weight = subgraph.constants[args["weight"].name]
            bias = args.get("bias")
            b = subgraph.constants[bias.name] if bias is not None else np.zeros(weight.shape[0], weight.dtype)
            layers.append((weight, b))
        if len(layers) != 1:
            raise ValueError("this backend runs one linear per delegate")
        out = io.BytesIO()
        np.savez(out, w=layers[0][0], b=layers[0][1])
        return out.getvalue()

    def execute(self, payload, inputs):
        p = np.load(io.BytesIO(payload))
        x = inputs[0]
        return [(x @ p["w"].T + p["b"]).astype(x.dtype)]


def main(source):
    lathe.register_backend(NumpyLinear())
    program = lathe.load(source)
    lowered, why = program.lower("numpy_linear")  # why: one lathe.LoweringDecision per node
    print(*why, sep="\n")
    shape = [d if isinstance(d, int) else 2 for d in program.graph().inputs[-1].shape]  # a symbolic size: 2
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    same = np.allclose(program.run(x)[0], lowered.run(x)[0], rtol=1e-5, atol=1e-6)
    print("outputs match the original:", same)


if __name__ == "__main__":
    main(sys.argv[1])
