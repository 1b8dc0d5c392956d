"""The work folder of one `make bench-peers` run, one sub-folder a model:

    <work>/<model>/input_<i>.npy     the inputs every peer gets
    <work>/<model>/ref_<i>.npy       PyTorch eager's outputs for them
    <work>/<model>/exported.pt2      what each peer's prepare step wrote
    <work>/<model>/lathe.pt2         (exported.pt2 after `lathe transform`)
    <work>/<model>/executorch.pte
    <work>/<model>/model.onnx
    <work>/<model>/<peer>.err        why a peer has no program for the model
                                     (its exact error), instead
"""

import glob
import os

import numpy as np


def model_dir(work, name):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    return d


def _numbered(folder, stem):
    return sorted(glob.glob(os.path.join(folder, stem + "_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))


def save_arrays(folder, stem, arrays):
    for i, a in enumerate(arrays):
        np.save(os.path.join(folder, "%s_%d.npy" % (stem, i)), np.ascontiguousarray(a))


def load_arrays(folder, stem):
    return [np.load(p) for p in _numbered(folder, stem)]


def input_paths(folder):
    return _numbered(folder, "input")


def error_path(folder, peer):
    return os.path.join(folder, peer + ".err")


def write_error(folder, peer, reason):
    with open(error_path(folder, peer), "w") as f:
        f.write(reason.strip() + "\n")


def read_error(folder, peer):
    try:
        with open(error_path(folder, peer)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def reason(exc):
    """An exception as one line: its type and the first line of its message."""
    lines = [l for l in str(exc).strip().splitlines() if l.strip()]
    first = lines[0] if lines else ""
    return "%s: %s" % (type(exc).__name__, first[:400])
