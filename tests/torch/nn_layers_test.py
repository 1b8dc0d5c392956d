"""The per-layer suite: one small module per torch.nn layer (and the torch
functions model code calls most), tools/torch_fixtures/nn_layers.py,
exported here by torch.export 2.13 as exported and after
``run_decompositions()``; ``lathe run --check`` must match eager, and so
must the XNNPACK-lowered copy.

    LATHE_BINARY=build/lathe LATHE_SOURCE_DIR=. .venv/bin/python tests/torch/nn_layers_test.py

``GAPS`` names each program that does not run yet, with the reason; the
test fails when a listed program starts to run (shorten the list) as well
as when an unlisted one fails.
"""
import collections
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
LATHE = os.environ.get("LATHE_BINARY", os.path.join(SRC, "build", "lathe"))
sys.path.insert(0, os.path.join(SRC, "tools"))

import torch  # noqa: E402

from export_fixtures import build_fixture  # noqa: E402
from torch_fixtures.models import Fixture, Method  # noqa: E402
from torch_fixtures.nn_layers import LAYERS  # noqa: E402

# program -> why it does not run yet (kept exact by the test).
GAPS = {}


def export_all(out):
    """Every layer in both forms, with its eager reference, into OUT."""
    for name, (make, inputs) in LAYERS.items():
        for decompose in (False, True):
            program = name + ("_decomposed" if decompose else "")
            fx = Fixture(program, program, make, collections.OrderedDict(model=Method("forward", lambda g, f=inputs: [f(g)])),
                         decompose=decompose)
            build_fixture(fx, out)


def lathe(*args):
    return subprocess.run([LATHE, *args], capture_output=True, text=True)


class NnLayers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        torch.set_num_threads(1)
        export_all(cls.tmp.name)
        cls.programs = [n + s for n in LAYERS for s in ("", "_decomposed")]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, program):
        return os.path.join(self.tmp.name, program + ".pt2")

    def check(self, program, path):
        r = lathe("run", path, "--check", "--rtol", "1e-4", "--atol", "1e-5",
                  "--reference", os.path.join(self.tmp.name, program + ".ref"))
        return None if r.returncode == 0 and "check passed" in r.stdout else (r.stdout + r.stderr).strip().splitlines()[-1]

    def test_every_layer_runs_and_matches_eager(self):
        self.assertGreater(len(self.programs), 200)
        failures = {p: e for p in self.programs for e in [self.check(p, self.path(p))] if e}
        unexpected = {p: e for p, e in failures.items() if p not in GAPS}
        fixed = sorted(p for p in GAPS if p not in failures)
        self.assertEqual(unexpected, {}, "%d program(s) fail:\n%s" % (len(unexpected), "\n".join(
            "  %s: %s" % kv for kv in sorted(unexpected.items()))))
        self.assertEqual(fixed, [], "these run now: drop them from GAPS")

    def test_xnnpack_lowered_layers_run_and_match(self):
        if os.environ.get("LATHE_WITH_XNNPACK", "1") != "1":
            return
        failures = {}
        for p in self.programs:
            if p in GAPS:
                continue
            out = os.path.join(self.tmp.name, p + ".xnnpack.pt2")
            r = lathe("lower", self.path(p), "-o", out, "--backend", "xnnpack")
            e = (r.stdout + r.stderr).strip().splitlines()[-1] if r.returncode else self.check(p, out)
            if e:
                failures[p] = e
        self.assertEqual(failures, {}, "\n".join("  %s: %s" % kv for kv in sorted(failures.items())))


if __name__ == "__main__":
    unittest.main(verbosity=2)
