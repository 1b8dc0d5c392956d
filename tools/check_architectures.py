#!/usr/bin/env python3
"""Run a Lathe binary over the architecture fixtures and print a status table.

    tools/check_architectures.py [--lathe build/lathe] [--dir fixtures/architectures] [--only a,b] [--json OUT]

For each ``<name>.pt2`` listed in ``<dir>/manifest.json``:

* inspect: ``lathe inspect X.pt2``
* portable: ``lathe run X.pt2 --check`` (the reference calls in ``<name>.ref``)
* xnnpack: ``lathe run X.pt2 --backend xnnpack --check``
* lower: ``lathe lower X.pt2 -o tmp.pt2 --backend xnnpack --explain`` (its summary
  line), then ``lathe run tmp.pt2 --check --reference <name>.ref``

A result is ``pass``, ``FAIL`` (exit 1 with a message), ``CRASH <signal>`` or
``TIMEOUT``, with the first error line. Needs no PyTorch.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, timeout):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "TIMEOUT", "detail": "over %ds" % timeout, "out": "", "err": ""}
    if r.returncode < 0:
        status = "CRASH " + signal.Signals(-r.returncode).name
    elif r.returncode == 0:
        status = "pass"
    else:
        status = "FAIL"
    lines = [l for l in (r.stderr + "\n" + r.stdout).splitlines() if l.strip()]
    detail = ""
    if status != "pass":
        errs = [l for l in lines if l.startswith("lathe ") or "error" in l.lower() or "FAIL" in l]
        detail = (errs or lines[-1:] or [""])[0]
    else:
        m = [l for l in r.stdout.splitlines() if l.startswith("check passed")]
        detail = m[0] if m else ""
        errs = [float(x) for x in re.findall(r"rel ([0-9.e+-]+)", r.stdout)]
        if errs:
            detail += "; max rel %.2g" % max(errs)
    return {"status": status, "detail": detail.strip(), "out": r.stdout, "err": r.stderr}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe", default=os.path.join(ROOT, "build", "lathe"))
    ap.add_argument("--dir", default=os.path.join(ROOT, "fixtures", "architectures"))
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json", default="", help="also write every result (with full stdout/stderr) here")
    args = ap.parse_args(argv)
    with open(os.path.join(args.dir, "manifest.json")) as f:
        names = list(json.load(f))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    results = {}
    tmp = tempfile.mkdtemp(prefix="lathe-arch-")
    for n in names:
        pt2 = os.path.join(args.dir, n + ".pt2")
        ref = os.path.join(args.dir, n + ".ref")
        lowered = os.path.join(tmp, n + ".xnn.pt2")
        r = {}
        r["inspect"] = run([args.lathe, "inspect", pt2], args.timeout)
        r["portable"] = run([args.lathe, "run", pt2, "--check"], args.timeout)
        r["xnnpack"] = run([args.lathe, "run", pt2, "--backend", "xnnpack", "--check"], args.timeout)
        low = run([args.lathe, "lower", pt2, "-o", lowered, "--backend", "xnnpack", "--explain"], args.timeout)
        if low["status"] == "pass":
            summary = [l for l in low["out"].splitlines() if l.startswith("method ")]
            low["detail"] = summary[-1] if summary else ""
        r["lower"] = low
        if low["status"] == "pass" and os.path.exists(lowered):
            r["lowered_run"] = run([args.lathe, "run", lowered, "--check", "--reference", ref], args.timeout)
        else:
            r["lowered_run"] = {"status": "-", "detail": "", "out": "", "err": ""}
        results[n] = r
        print("%-26s %s" % (n, "  ".join("%s=%s" % (k, v["status"]) for k, v in r.items())), file=sys.stderr)
    cols = ["inspect", "portable", "xnnpack", "lower", "lowered_run"]
    print("| model | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for n, r in results.items():
        cells = []
        for c in cols:
            v = r[c]
            cell = v["status"] + (": " + v["detail"] if v["detail"] else "")
            cells.append(cell.replace("|", "\\|"))
        print("| %s | %s |" % (n, " | ".join(cells)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
