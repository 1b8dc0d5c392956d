"""PyTorch 2.13 eager (the project's pinned CPU build: oneDNN and MKL
inside): the module itself, called under ``torch.inference_mode()`` with
``torch.set_num_threads(threads)``. Its outputs are the reference every
other peer is checked against (written by tools/bench_peers.py's prepare
step from a separate call)."""


def run(model, folder, threads, repeat):
    import torch

    from peers import artifacts
    from peers.timing import time_calls

    torch.set_num_threads(threads)
    module = model.build()
    inputs = [torch.from_numpy(a) for a in artifacts.load_arrays(folder, "input")]
    with torch.inference_mode():
        median, p90, out = time_calls(lambda: module(*inputs), repeat)
    outs = [t.numpy() for t in torch.utils._pytree.tree_leaves(out)]
    return {"median": median, "p90": p90, "outputs": outs, "note": ""}
