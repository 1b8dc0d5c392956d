#!/usr/bin/env python3
"""The documentation's commands, run (issue 34): what README.md and docs/*.md
show is what Lathe does.

One CTest test per check (`docs_test.py CHECK`):

  Commands  every `$ build/lathe ...` line in a fenced block of README.md and
            docs/*.md is run, in page order, in a scratch directory that sees
            the repository's fixtures/ and build/, and what it prints
            (stdout and stderr in one pipe) is compared with the lines shown under it.
            Timings (`0.027 ms`) and measured error figures (`max abs ...,
            rel ...`) are compared as numbers of any value; a line `...`
            stands for any number of lines; a command whose shown output ends
            in `lathe SUB: ...` must fail, every other one succeed. Any other
            `$ ` command must be in OTHER_COMMANDS, with the test that runs it.
            A command on ../shared/ files that are absent, or on a backend this
            build or machine lacks (which it says), is skipped.
  Python    the README's Python five-liner, run as shown on the model it
            describes (tools/lathe_fixtures DurationPredictor), and its
            commented output line checked against `why`.
  Demo      scripts/demo.sh, the part of `make demo` after the build.
  Links     every relative link in README.md and docs/*.md names a file that
            exists, every #anchor a heading in it; every docs page is linked
            from the README, and the README stays at most 300 lines.

Run by hand from the repository root:
    LATHE_BINARY=build/lathe .venv/bin/python tests/docs/docs_test.py Commands
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.abspath(os.environ.get("LATHE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
LATHE = os.path.abspath(os.environ.get("LATHE_BINARY", os.path.join(SRC, "build", "lathe")))
PAGES = [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))
README_MAX_LINES = 300

# `$ ` commands the pages show that this test does not run, and the test that does.
OTHER_COMMANDS = {
    "python examples/user_pass.py": "Python.Passes (python/tests/test_passes.py)",
    "python examples/user_backend.py": "Python.Backends (python/tests/test_backends.py)",
    "cpp_pass": "Embed.FindPackageExample (examples/cpp_pass)",
    "cpp_backend": "Embed.FindPackageExample (examples/cpp_backend)",
}


def rel(path):
    return os.path.relpath(path, SRC)


def fenced_blocks(path):
    """(info string, first line number, lines) of each fenced block."""
    blocks, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("```"):
                if cur is None:
                    cur = (line[3:].strip(), n + 1, [])
                else:
                    blocks.append(cur)
                    cur = None
            elif cur is not None:
                cur[2].append(line)
    return blocks


def shown_commands(path):
    """(line number, command, expected output lines) of every `$ ` line in a plain block."""
    out = []
    for info, first, lines in fenced_blocks(path):
        if info not in ("", "console"):
            continue
        for i, line in enumerate(lines):
            if not line.startswith("$ "):
                continue
            expected = []
            for follow in lines[i + 1:]:
                if follow.startswith("$ "):
                    break
                expected.append(follow)
            out.append((first + i, line[2:], expected))
    return out


_TIMING = re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)? ms\b")
_ERRORS = re.compile(r"max abs \S+, rel \S+")
_RELDIFF = re.compile(r"\(max relative difference [^)]*\)")


def normalized(line):
    line = _TIMING.sub("<t> ms", line.rstrip())
    line = _ERRORS.sub("max abs <e>, rel <e>", line)
    return _RELDIFF.sub("(max relative difference <e>)", line)


def matches(expected, actual):
    """expected lines (with `...` for any run of lines) against actual lines."""
    exp = [normalized(l) for l in expected]
    act = [normalized(l) for l in actual]
    memo = {}

    def go(i, j):
        if (i, j) in memo:
            return memo[i, j]
        if i == len(exp):
            r = j == len(act)
        elif exp[i] == "...":
            r = any(go(i + 1, k) for k in range(j, len(act) + 1))
        else:
            r = j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)
        memo[i, j] = r
        return r

    return go(0, 0)


def same_json(expected, actual_text):
    try:
        return json.loads("".join(expected)) == json.loads(actual_text)
    except ValueError:
        return False


def write_npy(path, shape):
    """A float32 .npy of zeros (no numpy needed)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
        f.write(b"\0" * (4 * count))


def scratch_tree(tmp):
    """tmp/repo with fixtures/ and build/lathe, tmp/shared -> the checkout's ../shared."""
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "build"))
    os.symlink(os.path.join(SRC, "fixtures"), os.path.join(repo, "fixtures"))
    os.symlink(LATHE, os.path.join(repo, "build", "lathe"))
    shared = os.path.join(SRC, "..", "shared")
    if os.path.isdir(shared):
        os.symlink(os.path.abspath(shared), os.path.join(tmp, "shared"))
    # docs/cli.md: an input one row past mlp's dynamic range [1, 64].
    write_npy(os.path.join(repo, "batch65.npy"), (65, 64))
    return repo


class Commands(unittest.TestCase):
    def test_every_shown_command_prints_what_is_shown(self):
        ran = 0
        for page in PAGES:
            commands = shown_commands(page)
            if not commands:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                repo = scratch_tree(tmp)
                for line, command, expected in commands:
                    where = f"{rel(page)}:{line}: $ {command}"
                    with self.subTest(where):
                        argv = shlex.split(command, comments=True)
                        if argv[0] != "build/lathe":
                            known = [k for k in OTHER_COMMANDS if command.startswith(k)]
                            self.assertTrue(known, f"{where}: no test runs this command; run it here or add it to "
                                                   "OTHER_COMMANDS with the test that runs it")
                            continue
                        missing = [a for a in argv if a.startswith("../shared/")
                                   and not os.path.exists(os.path.join(repo, a))]
                        if missing:
                            self.skipTest(f"{missing[0]} is not on this machine")
                        # One pipe for both, as a terminal shows them (stderr unbuffered,
                        # stdout flushed as it fills or at exit).
                        r = subprocess.run(argv, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           text=True, timeout=300)
                        actual = r.stdout.splitlines()
                        if re.search(r"(xnnpack|vulkan): (this Lathe was built without the|no Vulkan device: the Vulkan "
                                     r"loader found no driver)", r.stdout):
                            # As the backend tests do: a build or machine without it says so.
                            self.skipTest(r.stdout.strip().splitlines()[-1])
                        ran += 1
                        fails = bool(expected) and re.match(r"lathe [a-z]+: ", expected[-1]) is not None
                        self.assertEqual(r.returncode != 0, fails,
                                         f"{where}: exit {r.returncode}\n{r.stdout}")
                        if not (matches(expected, actual) or same_json(expected, r.stdout)):
                            self.fail(f"{where}\n--- shown\n" + "\n".join(expected) +
                                      "\n--- printed\n" + "\n".join(actual))
        self.assertGreater(ran, 10, "the pages show fewer lathe commands than expected: is the parser broken?")


class Python(unittest.TestCase):
    def test_the_readme_five_lines_run_as_shown(self):
        import torch
        sys.path.insert(0, os.path.join(SRC, "tools"))
        from lathe_fixtures.models import DurationPredictor

        blocks = [b for info, _, b in fenced_blocks(os.path.join(SRC, "README.md"))
                  if info == "python" and any("lathe.from_exported_program" in l for l in b)]
        self.assertEqual(len(blocks), 1, "the README's Python quickstart block")
        code = "\n".join(blocks[0])
        shown_why = re.findall(r'#\s+"(.+)"\s*$', code, re.M)
        torch.manual_seed(0)
        model = DurationPredictor().eval()
        x = torch.randn(1, 64, 32)
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                scope = {"model": model, "x": x}
                exec(compile(code, "README.md (Python quickstart)", "exec"), scope)
                self.assertTrue(os.path.exists("model.pt2"))
                loaded = torch.export.load("model.pt2")
                again = loaded.module()(x)
            finally:
                os.chdir(cwd)
        expect = model(x)
        torch.testing.assert_close(scope["y"], expect, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(again, expect, rtol=1e-5, atol=1e-6)
        self.assertTrue(shown_why, "the quickstart's commented output line")
        for line in shown_why:
            self.assertIn(line, [str(w) for w in scope["why"]])


class Demo(unittest.TestCase):
    def test_the_demo_runs(self):
        r = subprocess.run(["bash", "scripts/demo.sh", LATHE], cwd=SRC, capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Done. See README.md", r.stdout)
        self.assertIn("model: mm 'mm' kept: weight 'permute_1' is computed at run time by 'squeeze_1'", r.stdout)


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    found, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and re.match(r"#{1,6} ", line):
                found.add(slug(line.lstrip("#")))
    return found


class Links(unittest.TestCase):
    def test_every_link_resolves(self):
        for page in PAGES:
            text = re.sub(r"```.*?```", "", open(page, encoding="utf-8").read(), flags=re.S)
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                if re.match(r"[a-z]+:", target):
                    continue
                with self.subTest(f"{rel(page)} -> {target}"):
                    path, _, anchor = target.partition("#")
                    full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                    if os.path.relpath(full, SRC).startswith("..") and not os.path.exists(full):
                        self.skipTest(f"{target}: outside the repository and not on this machine")
                    self.assertTrue(os.path.exists(full), f"{rel(page)}: {target} does not exist")
                    if anchor:
                        self.assertIn(anchor, anchors(full), f"{rel(page)}: no heading for #{anchor} in {path or 'itself'}")

    def test_the_readme_is_short_and_links_every_page(self):
        readme = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
        self.assertLessEqual(readme.count("\n"), README_MAX_LINES)
        for page in PAGES[1:]:
            name = "docs/" + os.path.basename(page)
            self.assertIn(f"]({name}", readme, f"README.md does not link {name}")


if __name__ == "__main__":
    check = sys.argv.pop(1) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else None
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(globals()[check]) if check else None
    if suite is None:
        unittest.main(verbosity=2)
    else:
        sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
