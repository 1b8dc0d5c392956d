"""Core ATen coverage: every forward, functional overload torch 2.13 tags
``torch.Tag.core`` has a portable kernel, except the short list of gaps
src/lathe/runtime/core_aten.cpp gives with a reason each (and the README
shows). And src/lathe/ir/aten_schemas.inc, every overload's argument names
and kinds, is what this torch declares; this torch is one of the releases
`lathe --version` says Lathe is verified against, and the requirements
files pin exactly those. Run with torch 2.13.0 (`make test`) and 2.14.1
(`make test-torch-next`), whose core ATen lists are the same.

    LATHE_BINARY=build/lathe LATHE_SOURCE_DIR=. .venv/bin/python tests/torch/core_aten_test.py
"""
import glob
import json
import os
import re
import subprocess
import sys
import unittest

import torch

SRC = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
LATHE = os.environ.get("LATHE_BINARY", os.path.join(SRC, "build", "lathe"))
sys.path.insert(0, os.path.join(SRC, "tools"))

from make_core_aten_list import core_forward_overloads  # noqa: E402


def lathe_ops(*args):
    r = subprocess.run([LATHE, "ops", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def verified_releases():
    """["2.13.0", "2.14.1"] from `lathe --version`'s "verified with PyTorch 2.13.0 and 2.14.1"."""
    r = subprocess.run([LATHE, "--version"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = re.search(r"^verified with PyTorch (.+)$", r.stdout, re.M)
    assert m, r.stdout
    return re.split(r", | and ", m.group(1))


class CoreAten(unittest.TestCase):
    def test_lathes_list_is_torchs(self):
        want = core_forward_overloads()
        self.assertGreater(len(want), 150)
        with open(os.path.join(SRC, "src", "lathe", "runtime", "core_aten_ops.inc")) as f:
            have = re.findall(r'^"([^"]+)",$', f.read(), re.M)
        self.assertEqual(have, want, "src/lathe/runtime/core_aten_ops.inc: run tools/make_core_aten_list.py")

    def test_lathes_schemas_are_torchs(self):
        # A torch upgrade that changes an argument's name or kind must fail here,
        # not in PyTorch's deserializer reading a node Lathe named.
        r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "make_aten_schemas.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_this_torch_is_a_verified_release(self):
        verified = verified_releases()
        self.assertIn(torch.__version__.split("+")[0], verified, torch.__version__)
        self.assertEqual(verified, ["2.13.0", "2.14.1"])

    def test_the_requirements_files_pin_the_verified_releases(self):
        # 2.13.0 in .venv's set (tools/requirements*.txt), 2.14.1 in requirements-torch214.txt.
        pins = set()
        for req in glob.glob(os.path.join(SRC, "tools", "requirements*.txt")):
            with open(req) as f:
                pins.update(re.findall(r"^torch==([0-9.]+)$", f.read(), re.M))
        self.assertEqual(sorted(pins), verified_releases())

    def test_every_core_op_has_a_kernel_but_the_listed_gaps(self):
        kernels = set(json.loads(lathe_ops("--json")))
        text = lathe_ops()
        without = dict(re.findall(r"^  without: (\S+) \((.*)\)$", text, re.M))
        missing = [op for op in core_forward_overloads() if op not in kernels]
        self.assertEqual(sorted(without), sorted(missing))
        unexplained = [op for op, why in without.items() if why == "no kernel yet"]
        self.assertEqual(unexplained, [], "core ATen ops without a kernel or a listed reason")
        m = re.search(r"core ATen \(torch 2\.13\.0, (\d+) forward overloads\): (\d+) with a portable kernel", text)
        self.assertIsNotNone(m, text[-500:])
        self.assertEqual(int(m.group(1)) - int(m.group(2)), len(missing))

    def test_the_readme_shows_every_gap(self):
        with open(os.path.join(SRC, "README.md")) as f:
            readme = f.read()
        for op in re.findall(r"^  without: (\S+) ", lathe_ops(), re.M):
            self.assertIn(op.split(".")[1], readme, op)


if __name__ == "__main__":
    unittest.main(verbosity=2)
