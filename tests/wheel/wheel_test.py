#!/usr/bin/env python3
"""The wheel of `make wheel`, installed and run as a user would (issue 34).

A fresh virtual environment (python -m venv) gets the wheel from dist/, plus
the pinned torch and numpy of tools/requirements.txt (--no-deps; the README's
five lines are PyTorch code), and then:

  Contents    the wheel holds the stripped extension (its debug information is
              split off into the build folder) and the bundled libraries in
              lathe.libs/, no libvulkan; it is at most 25 MiB; its metadata
              carries CMakeLists.txt's version.
  Links       ldd of the installed extension resolves XNNPACK, pthreadpool,
              cpuinfo, simdjson and libdeflate inside the wheel, and nothing
              names libvulkan.
  RunsAlone   in a private mount namespace (unshare) where the Debian files of
              those libraries and of libvulkan.so.1 are replaced by /dev/null
              and the repository (build trees, .venv, sources) by an empty
              folder, from a scratch directory, with LD_LIBRARY_PATH and
              PYTHONPATH unset: the README's Python five-liner runs as shown on
              the model it describes and matches PyTorch, torch.export.load
              reads what it saved, lower("xnnpack") runs on the bundled
              XNNPACK, lower("vulkan") fails saying no Vulkan loader was found,
              and no library of the system's copies of those is mapped.
  Vulkan      the same with the system's libvulkan.so.1 in reach: the backend
              finds it with dlopen and runs on the device it offers (skipped,
              saying why, when the machine has no Vulkan driver).

Without unshare (not root, or no mount namespaces) RunsAlone and Vulkan run
without hiding anything and say so; the check that no system copy is mapped
still holds them.

Run after `make wheel` (`make wheel-test` does both):
    .venv/bin/python tests/wheel/wheel_test.py [-v] [--wheel dist/lathe-....whl]
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

SRC = os.path.abspath(os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
MAX_WHEEL_BYTES = 25 * 2**20
# The Debian libraries the extension needs, by soname; each must come from the wheel.
BUNDLED = ["libXNNPACK.so.0", "libpthreadpool.so.0", "libcpuinfo.so.0", "libsimdjson.so.14", "libdeflate.so.0"]
VULKAN_LOADER = "libvulkan.so.1"
# torch and its pinned closure, from tools/requirements.txt (the README's five lines use torch).
TORCH_CLOSURE = ["torch", "numpy", "filelock", "fsspec", "Jinja2", "MarkupSafe", "mpmath", "networkx", "sympy",
                 "typing_extensions"]

WHEEL = None
ENV = {}  # set up once: tmp, venv python, site-packages, timings


def log(msg):
    print(f"wheel_test: {msg}", file=sys.stderr, flush=True)


def project_version():
    with open(os.path.join(SRC, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(lathe VERSION ([0-9.]+)", f.read()).group(1)


def read_pins(path, pins):
    """name -> "name==version" of a requirements file and the files it includes (-r)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line.startswith("-r "):
                read_pins(os.path.join(os.path.dirname(path), line[3:].strip()), pins)
            m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line)
            if m:
                pins[m.group(1).lower()] = line
    return pins


def pinned(names):
    pins = read_pins(os.path.join(SRC, "tools", "requirements.txt"), {})
    return [pins[n.lower()] for n in names]


def readme_quickstart():
    """The README's Python block that calls lathe.from_exported_program."""
    blocks, cur = [], None
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("```"):
                if cur is None:
                    cur = (line[3:].strip(), [])
                else:
                    blocks.append(cur)
                    cur = None
            elif cur is not None:
                cur[1].append(line)
    found = [b for info, b in blocks if info == "python" and any("lathe.from_exported_program" in l for l in b)]
    assert len(found) == 1, "the README's Python quickstart block"
    return "\n".join(found[0])


def system_library(soname):
    """The real file the dynamic linker would load for soname, or None."""
    out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2 and parts[0].split()[0] == soname and "x86-64" in parts[0]:
            return os.path.realpath(parts[1])
    return None


CHILD = r'''
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "fixtures"))
import torch
import lathe
from lathe_fixtures.models import DurationPredictor

res = {"version": lathe.__version__, "lathe_file": lathe.__file__, "cwd": os.getcwd(),
       "ld_library_path": os.environ.get("LD_LIBRARY_PATH"), "source_visible": os.path.isdir(sys.argv[1]) and bool(os.listdir(sys.argv[1]))}
torch.manual_seed(0)
model = DurationPredictor().eval()
x = torch.randn(1, 64, 32)
scope = {"model": model, "x": x}
with open(os.path.join(here, "readme_quickstart.py")) as f:
    exec(compile(f.read(), "README.md (Python quickstart)", "exec"), scope)
expect = model(x)
res["why"] = [str(w) for w in scope["why"]]
res["run_matches"] = bool(torch.allclose(scope["y"], expect, rtol=1e-5, atol=1e-6))
res["saved"] = os.path.exists("model.pt2")
again = torch.export.load("model.pt2").module()(x)
res["torch_reload_matches"] = bool(torch.allclose(again, expect, rtol=1e-5, atol=1e-6))

lowered, _ = lathe.load("model.pt2").lower("xnnpack")
(y,) = lowered.run(x)
res["xnnpack_matches"] = bool(torch.allclose(y, expect, rtol=1e-4, atol=1e-5))
try:
    lowered, _ = lathe.load("model.pt2").lower("vulkan")
    (y,) = lowered.run(x)
    res["vulkan"] = "ran"
    res["vulkan_matches"] = bool(torch.allclose(y, expect, rtol=1e-4, atol=1e-5))
except lathe.Error as e:
    res["vulkan"] = str(e)
with open("/proc/self/maps") as f:
    res["maps"] = sorted({l.split()[-1] for l in f if len(l.split()) >= 6 and ".so" in l.split()[-1]})
print("RESULT " + json.dumps(res))
'''


def pip(*args):
    """The fresh venv's pip, quiet unless it fails (this machine's index warnings dropped)."""
    r = subprocess.run([ENV["python"], "-m", "pip", "--disable-pip-version-check"] + list(args),
                       capture_output=True, text=True)
    out = "\n".join(l for l in (r.stdout + r.stderr).splitlines() if not l.startswith("WARNING: Location"))
    return r.returncode, out


def setUpModule():
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="lathe-wheel-test-")
    ENV["tmp"] = tmp
    try:
        set_up(tmp, start)
    except BaseException:
        tearDownModule()
        raise


def set_up(tmp, start):
    venv = os.path.join(tmp, "venv")
    # The base interpreter, not this venv's: the new environment sees nothing of .venv.
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", venv], check=True)
    ENV["python"] = os.path.join(venv, "bin", "python")
    t = time.time()
    rc, out = pip("install", "--quiet", "--no-deps", WHEEL, *pinned(TORCH_CLOSURE))
    assert rc == 0, out
    ENV["install_s"] = time.time() - t
    # The wheel's own requirements (numpy) are met by what was installed
    # (torch's setuptools requirement, unused here, is not lathe's concern).
    _, out = pip("check")
    assert not [l for l in out.splitlines() if l.lower().startswith("lathe ")], out
    ENV["site"] = subprocess.run([ENV["python"], "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
    ext = glob.glob(os.path.join(ENV["site"], "lathe", "_lathe*.so"))
    assert len(ext) == 1, ext
    ENV["ext"] = ext[0]
    # What the child needs from the repository, copied out before it is hidden.
    shutil.copytree(os.path.join(SRC, "tools", "lathe_fixtures"), os.path.join(tmp, "fixtures", "lathe_fixtures"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(tmp, "readme_quickstart.py"), "w") as f:
        f.write(readme_quickstart())
    with open(os.path.join(tmp, "child.py"), "w") as f:
        f.write(CHILD)
    ENV["unshare"] = shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True).returncode == 0
    log(f"fresh venv with the wheel and torch in {time.time() - start:.0f} s (pip install {ENV['install_s']:.0f} s)")


def tearDownModule():
    if "tmp" in ENV:
        shutil.rmtree(ENV["tmp"], ignore_errors=True)


def run_child(hide):
    """child.py in the fresh venv: cwd a scratch folder, a bare environment,
    and (with unshare) the files in `hide` and the repository out of reach."""
    work = tempfile.mkdtemp(dir=ENV["tmp"], prefix="run-")
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    child = [ENV["python"], os.path.join(ENV["tmp"], "child.py"), SRC]
    hidden = []
    if ENV["unshare"]:
        lines = ["set -e"]
        for path in hide:
            lines.append(f"mount --bind /dev/null '{path}'")
            hidden.append(path)
        lines.append(f"mount -t tmpfs -o size=1m lathe-hidden '{SRC}'")
        lines.append('exec "$@"')
        cmd = ["unshare", "--mount", "--propagation", "private", "bash", "-c", "\n".join(lines), "hide"] + child
    else:
        cmd = child
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"exit {r.returncode}\n{out}"
    m = re.search(r"^RESULT (.*)$", r.stdout, re.M)
    assert m, out
    return json.loads(m.group(1)), hidden


class Wheel(unittest.TestCase):
    def test_contents(self):
        size = os.path.getsize(WHEEL)
        log(f"{os.path.basename(WHEEL)}: {size / 2**20:.1f} MiB")
        self.assertLessEqual(size, MAX_WHEEL_BYTES, f"the wheel is {size / 2**20:.1f} MiB")
        version = project_version()
        self.assertTrue(os.path.basename(WHEEL).startswith(f"lathe-{version}-"), WHEEL)
        with zipfile.ZipFile(WHEEL) as z:
            names = z.namelist()
            meta = z.read(f"lathe-{version}.dist-info/METADATA").decode()
        self.assertEqual(len([n for n in names if re.match(r"lathe/_lathe.*\.so$", n)]), 1, names)
        self.assertFalse([n for n in names if n.endswith(".debug")], "debug information belongs beside the build")
        libs = [os.path.basename(n) for n in names if n.startswith("lathe.libs/")]
        for soname in BUNDLED:
            stem = soname.split(".so")[0]
            self.assertTrue([l for l in libs if l.startswith(stem + "-")], f"{soname} is not bundled: {libs}")
        self.assertFalse([n for n in names if "vulkan" in os.path.basename(n).lower()], names)
        self.assertIn(f"Version: {version}", meta)
        for field in ("Summary: ", "Requires-Python: ", "Classifier: ", "Requires-Dist: numpy"):
            self.assertIn(field, meta)
        # The extension is stripped, and says where its debug file is.
        sections = subprocess.run(["readelf", "-S", "-W", ENV["ext"]], capture_output=True, text=True).stdout
        self.assertNotIn(".debug_info", sections)
        self.assertNotIn(".symtab", sections)
        self.assertIn(".gnu_debuglink", sections)

    def test_links(self):
        out = subprocess.run(["ldd", ENV["ext"]], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        libs_dir = os.path.join(ENV["site"], "lathe.libs")
        for soname in BUNDLED:
            stem = soname.split(".so")[0]
            lines = [l for l in out.stdout.splitlines() if l.strip().startswith(stem)]
            self.assertEqual(len(lines), 1, f"{soname}:\n{out.stdout}")
            path = os.path.normpath(lines[0].split(" => ")[1].split(" (")[0])
            self.assertEqual(os.path.dirname(path), libs_dir, f"{soname} does not come from the wheel:\n{out.stdout}")
        self.assertNotIn("vulkan", out.stdout)

    def check_common(self, res):
        self.assertEqual(res["version"], project_version())
        self.assertTrue(res["lathe_file"].startswith(ENV["site"]), res["lathe_file"])
        self.assertIsNone(res["ld_library_path"])
        self.assertTrue(res["saved"])
        self.assertTrue(res["run_matches"])
        self.assertTrue(res["torch_reload_matches"])
        self.assertTrue(res["xnnpack_matches"])
        shown = re.findall(r'#\s+"(.+)"\s*$', readme_quickstart(), re.M)
        self.assertTrue(shown)
        for line in shown:
            self.assertIn(line, res["why"])
        # Nothing of the system's copies is mapped: every one comes from the wheel.
        for soname in BUNDLED:
            stem = soname.split(".so")[0]
            mapped = [p for p in res["maps"] if os.path.basename(p).startswith(stem)]
            self.assertTrue(mapped, f"{soname} is not loaded at all: {res['maps']}")
            for p in mapped:
                self.assertTrue(p.startswith(os.path.join(ENV["site"], "lathe.libs")), p)

    def test_runs_alone(self):
        hide = [p for p in (system_library(s) for s in BUNDLED + [VULKAN_LOADER]) if p]
        res, hidden = run_child(hide)
        if not ENV["unshare"]:
            log("RunsAlone: no mount namespace here (unshare failed): nothing hidden, only the mapped files checked")
        else:
            log(f"RunsAlone: hidden {', '.join(hidden)} and {SRC}")
            self.assertFalse(res["source_visible"])
        self.check_common(res)
        if ENV["unshare"] and system_library(VULKAN_LOADER):
            self.assertIn("vulkan: no Vulkan loader (libvulkan.so.1) found: install the Vulkan loader and your GPU's "
                          "Vulkan driver", res["vulkan"])
        self.assertFalse([p for p in res["maps"] if "libvulkan" in p], res["maps"])

    def test_vulkan(self):
        hide = [p for p in (system_library(s) for s in BUNDLED) if p]
        res, _ = run_child(hide)
        self.check_common(res)
        if res["vulkan"] != "ran":
            if "no Vulkan loader" in res["vulkan"] or "no Vulkan device" in res["vulkan"]:
                self.skipTest(res["vulkan"])
            self.fail(res["vulkan"])
        self.assertTrue(res["vulkan_matches"])
        self.assertTrue([p for p in res["maps"] if os.path.basename(p).startswith("libvulkan.so")], res["maps"])


def main():
    global WHEEL
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", help="default: the one dist/lathe-<version>-*.whl")
    args, rest = ap.parse_known_args()
    WHEEL = args.wheel or next(iter(sorted(glob.glob(os.path.join(SRC, "dist", f"lathe-{project_version()}-*.whl")))),
                               None)
    if not WHEEL or not os.path.exists(WHEEL):
        sys.exit(f"wheel_test: no wheel (dist/lathe-{project_version()}-*.whl): run `make wheel` first")
    WHEEL = os.path.abspath(WHEEL)
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    r = prog.result
    failed = len(r.failures) + len(r.errors)
    print(f"{r.testsRun - failed - len(r.skipped)} passed, {failed} failed, {len(r.skipped)} skipped")
    sys.exit(0 if r.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
