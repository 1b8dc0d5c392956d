"""Real PyTorch is the reference: Lathe against torch.export on every fixture.

Run by CTest (one test per class) with the project's virtual environment,
torch 2.13.0, and again with torch 2.14.1 (`make test-torch-next`, CTest
label torch-next):

    LATHE_BINARY=build/lathe LATHE_SOURCE_DIR=. .venv/bin/python tests/torch/interop_test.py [Class]

LATHE_FIXTURES_DIR names another folder of fixtures laid out as fixtures/ is
(NAME.pt2, NAME.ref/, manifest.json): the torch-next run exports them anew
with the torch it runs (tools/export_fixtures.py --out DIR) and checks those
as well as the committed 2.13 exports. The construct archives and the
external 2.9 archive are always the committed ones.

Each check is made for every fixture in fixtures/manifest.json:

* Signature: what Lathe reads (inputs and outputs: kind, target, name, order,
  buffer persistence) equals ``ep.graph_signature`` as PyTorch loads it.
* Convert: ``lathe convert`` output loads with PyTorch's own loader, keeps
  the signature and the declared schema version, names its root folder after
  the file and carries a 40-digit serialization id; ``.module()`` of the copy
  reproduces the eager reference outputs, call by call.
* Transform: ``lathe transform --passes default`` output loads in PyTorch and
  reproduces the references; the matmul whose weight is computed at run time
  stays an ``mm``.
* Run: ``lathe run --check`` matches at every reference call (three sizes
  inside each dynamic range), and a size outside a range is refused naming
  the input, the dimension and the range.
* Lower: the XNNPACK-lowered archive still runs in Lathe and matches.
* External: the real PyTorch 2.9 archive converts back to something this
  PyTorch loads and runs to the same numbers.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile

import numpy as np
import torch

SRC = os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
LATHE = os.environ.get("LATHE_BINARY", os.path.join(SRC, "build", "lathe"))
FIXTURES_DIR = os.environ.get("LATHE_FIXTURES_DIR") or os.path.join(SRC, "fixtures")
CONSTRUCTS_DIR = os.path.join(SRC, "fixtures", "constructs")
sys.path.insert(0, os.path.join(SRC, "tools"))

import torch_fixtures.constructs  # noqa: E402,F401  (registers the effectful op of constructs/effects.pt2)
import torch_fixtures.models  # noqa: E402,F401  (registers the fixtures' custom op with PyTorch)
import torch.ao.quantization.fx._decomposed  # noqa: E402,F401  (quantized_decomposed ops)
from torch.export.pt2_archive._package import load_pt2  # noqa: E402

with open(os.path.join(FIXTURES_DIR, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
FIXTURES = sorted(n for n in MANIFEST if os.path.exists(os.path.join(FIXTURES_DIR, n + ".pt2")))
RTOL, ATOL = 1e-4, 1e-5

INPUT_KINDS = {"USER_INPUT": "user_input", "PARAMETER": "parameter", "BUFFER": "buffer",
               "CONSTANT_TENSOR": "constant", "CUSTOM_OBJ": "custom_obj", "TOKEN": "token"}


def lathe(*args):
    return subprocess.run([LATHE, *args], capture_output=True, text=True)


def fixture_path(name):
    return os.path.join(FIXTURES_DIR, name + ".pt2")


def programs(path):
    """{method: ExportedProgram} as PyTorch loads the archive."""
    return load_pt2(path).exported_programs


def reference_calls(name, method):
    return reference_calls_in(os.path.join(FIXTURES_DIR, name + ".ref"), method)


def reference_calls_in(ref_dir, method):
    """[(inputs, outputs)] of each reference call under REF_DIR/METHOD/call_<k>/."""
    calls = []
    for d in sorted(glob.glob(os.path.join(ref_dir, method, "call_*")),
                    key=lambda p: int(p.rsplit("_", 1)[1])):
        load = lambda kind: [torch.from_numpy(np.load(p)) for p in sorted(  # noqa: E731
            glob.glob(os.path.join(d, kind + "_*.npy")), key=lambda p: int(p.rsplit("_", 1)[1][:-4]))]
        calls.append((load("input"), load("output")))
    return calls


def signature_rows(ep):
    sig = ep.graph_signature
    ins = []
    for s in sig.input_specs:
        row = {"name": s.arg.name, "kind": INPUT_KINDS[s.kind.name], "target": s.target}
        if s.kind.name == "BUFFER":
            row["persistent"] = bool(s.persistent)
        ins.append(row)
    outs = [{"name": s.arg.name, "kind": s.kind.name.lower(), "target": s.target} for s in sig.output_specs]
    return ins, outs


def op_counts(ep):
    counts = {}
    for n in ep.graph.nodes:
        if n.op == "call_function":
            counts[str(n.target)] = counts.get(str(n.target), 0) + 1
    return counts


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

    def assert_module_matches(self, ep, name, method):
        """``ep.module()`` run on the reference calls in order (state carried,
        as eager did) gives the eager outputs."""
        mod = ep.module()
        calls = reference_calls(name, method)
        self.assertGreater(len(calls), 0)
        for k, (inputs, want) in enumerate(calls):
            got = torch.utils._pytree.tree_leaves(mod(*[t.clone() for t in inputs]))
            self.assertEqual(len(got), len(want), "%s.%s call %d" % (name, method, k))
            for i, (g, w) in enumerate(zip(got, want)):
                ok = torch.allclose(g, w, rtol=RTOL, atol=ATOL) if w.dtype.is_floating_point else torch.equal(g, w)
                self.assertTrue(ok, "%s.%s call %d output %d: max diff %s" % (
                    name, method, k, i, (g.double() - w.double()).abs().max().item()))


class Signature(Case):
    def test_lathe_reads_the_signature_pytorch_reads(self):
        for name in FIXTURES:
            with self.subTest(name):
                doc = json.loads(self.lathe_ok("inspect", "--json", fixture_path(name)).stdout)
                eps = programs(fixture_path(name))
                self.assertEqual(sorted(doc["methods"]), sorted(eps))
                for method, ep in eps.items():
                    ins, outs = signature_rows(ep)
                    self.assertEqual(doc["methods"][method]["inputs"], ins, method)
                    self.assertEqual(doc["methods"][method]["outputs"], outs, method)

    def test_lathe_reads_the_ops_pytorch_exported(self):
        for name in FIXTURES:
            with self.subTest(name):
                doc = json.loads(self.lathe_ok("inspect", "--json", fixture_path(name)).stdout)
                for method, m in MANIFEST[name]["methods"].items():
                    want = {k[len("torch.ops."):]: v for k, v in m["ops"].items()}
                    self.assertEqual(doc["methods"][method]["ops"], want, method)


class Convert(Case):
    def test_pytorch_loads_what_lathe_writes(self):
        for name in FIXTURES:
            with self.subTest(name):
                out = os.path.join(self.dir, name + "_copy.pt2")
                self.lathe_ok("convert", fixture_path(name), "-o", out)
                with zipfile.ZipFile(out) as z:
                    roots = {n.split("/", 1)[0] for n in z.namelist()}
                    self.assertEqual(roots, {name + "_copy"})
                    sid = z.read(name + "_copy/.data/serialization_id").decode()
                    self.assertRegex(sid, r"^[0-9]{40}$")
                    versions = {json.loads(z.read(n))["schema_version"]["minor"]
                                for n in z.namelist() if "/models/" in n}
                original, copy = programs(fixture_path(name)), programs(out)
                self.assertEqual(sorted(original), sorted(copy))
                self.assertEqual(versions, {MANIFEST_MINOR(name)})
                for method in original:
                    self.assertEqual(signature_rows(copy[method]), signature_rows(original[method]), method)
                    self.assert_module_matches(copy[method], name, method)


def MANIFEST_MINOR(name):
    return int(MANIFEST[name]["archives"][0]["schema_version"].split(".")[1])


class Transform(Case):
    # Matmuls whose weight is computed at run time: the guarded rewrite keeps them.
    RUNTIME_WEIGHT_MM = {"tts_duration_predictor": 1}

    def test_transformed_archives_load_in_pytorch_and_match(self):
        for name in FIXTURES:
            with self.subTest(name):
                out = os.path.join(self.dir, name + ".pt2")
                self.lathe_ok("transform", fixture_path(name), "-o", out, "--passes", "default")
                for method, ep in programs(out).items():
                    counts = op_counts(ep)
                    self.assertEqual(counts.get("aten.addmm.default", 0), 0, method)
                    self.assertEqual(counts.get("aten.mm.default", 0), self.RUNTIME_WEIGHT_MM.get(name, 0), method)
                    self.assert_module_matches(ep, name, method)


class Run(Case):
    def test_lathe_matches_pytorch_at_every_reference_call(self):
        for name in FIXTURES:
            if not MANIFEST[name].get("runnable", True):
                continue
            for method, m in MANIFEST[name]["methods"].items():
                with self.subTest(name + "." + method):
                    r = self.lathe_ok("run", fixture_path(name), "--method", method, "--check")
                    self.assertIn("check passed (%d call(s)" % m["reference_calls"], r.stdout)

    def test_dynamic_fixtures_have_three_sizes(self):
        dynamic = [(n, m) for n in FIXTURES for m in MANIFEST[n]["methods"].values() if "dynamic" in m]
        self.assertGreaterEqual(len(dynamic), 4)
        for name, m in dynamic:
            with self.subTest(name):
                self.assertEqual(len({json.dumps(s) for s in m["call_shapes"]}), 3)

    def test_a_size_outside_its_range_is_refused(self):
        for name in FIXTURES:
            for method, m in MANIFEST[name]["methods"].items():
                for input_name, dims in m.get("dynamic", {}).items():
                    position = [i["name"] for i in m["inputs"]].index(input_name)
                    for dim, (lo, hi) in dims.items():
                        with self.subTest("%s.%s %s dim %s" % (name, method, input_name, dim)):
                            self.assert_refused(name, method, position, int(dim), hi + 1 if hi else lo - 1, lo, hi)

    def assert_refused(self, name, method, position, dim, size, lo, hi):
        inputs, _ = reference_calls(name, method)[0]
        paths = []
        for i, t in enumerate(inputs):
            if i == position:
                shape = list(t.shape)
                shape[dim] = size
                t = torch.zeros(shape, dtype=t.dtype)
            paths.append(os.path.join(self.dir, "in_%d.npy" % i))
            np.save(paths[-1], t.numpy())
        r = lathe("run", fixture_path(name), "--method", method, "--inputs", *paths)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("Segmentation", r.stderr)
        self.assertRegex(r.stderr, r"dim %d\b.*\b%d\b" % (dim, size))
        self.assertIn(str(lo), r.stderr)


class Lower(Case):
    def test_lowered_archives_still_run_in_lathe(self):
        if os.environ.get("LATHE_WITH_XNNPACK", "1") != "1":
            # Built without XNNPACK: the backend says so and writes nothing.
            out = os.path.join(self.dir, "mlp.pt2")
            r = lathe("lower", fixture_path("mlp"), "-o", out, "--backend", "xnnpack")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("built without the XNNPACK backend (LATHE_WITH_XNNPACK=OFF", r.stderr)
            self.assertFalse(os.path.exists(out))
            return
        for name in FIXTURES:
            if not MANIFEST[name].get("runnable", True):
                continue
            with self.subTest(name):
                out = os.path.join(self.dir, name + ".pt2")
                self.lathe_ok("lower", fixture_path(name), "-o", out, "--backend", "xnnpack")
                for method in MANIFEST[name]["methods"]:
                    r = self.lathe_ok("run", out, "--method", method, "--check", "--rtol", "1e-4",
                                      "--reference", os.path.join(FIXTURES_DIR, name + ".ref"))
                    self.assertIn("check passed", r.stdout)


class Constructs(Case):
    """fixtures/constructs/: one tiny real archive per schema construct
    (symbolic and unbacked sizes, tokens, float8 and wide unsigned dtypes,
    complex scalars, parameter mutation, subgraphs, shared storages)."""

    def test_pytorch_loads_lathes_copy_of_every_construct(self):
        paths = sorted(glob.glob(os.path.join(CONSTRUCTS_DIR, "*.pt2")))
        self.assertGreaterEqual(len(paths), 8)
        for src in paths:
            name = os.path.basename(src)[:-4]
            if name.startswith("aoti_"):
                continue  # compiled code, refused by Lathe (AotiPackage test)
            with self.subTest(name):
                out = os.path.join(self.dir, name + ".pt2")
                self.lathe_ok("convert", src, "-o", out)
                original, copy = programs(src), programs(out)
                for method, ep in original.items():
                    self.assertEqual(signature_rows(copy[method]), signature_rows(ep), method)
                    args, kwargs = ep.example_inputs
                    want = torch.utils._pytree.tree_leaves(ep.module()(*args, **kwargs))
                    got = torch.utils._pytree.tree_leaves(copy[method].module()(*args, **kwargs))
                    self.assertEqual(len(got), len(want))
                    for g, w in zip(got, want):
                        self.assertTrue(torch.equal(g, w), "%s.%s" % (name, method))


class External(Case):
    def test_the_real_pytorch_2_9_archive_converts_back_to_its_schema(self):
        src = os.path.join(SRC, "..", "shared", "external", "pt2", "linear_torch2.9.pt2")
        out = os.path.join(self.dir, "linear.pt2")
        self.lathe_ok("convert", src, "-o", out)
        with zipfile.ZipFile(out) as z:
            model = json.loads(z.read("linear/models/model.json"))
        self.assertEqual(model["schema_version"], {"major": 8, "minor": 12})
        original, copy = programs(src)["model"], programs(out)["model"]
        x = torch.randn(3, generator=torch.Generator().manual_seed(0))  # the archive's input is f32[3]
        torch.testing.assert_close(copy.module()(x), original.module()(x), rtol=0, atol=0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
