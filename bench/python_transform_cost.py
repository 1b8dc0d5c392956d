"""A transform from Python against the same transform by the CLI.

    PYTHONPATH=build/python .venv/bin/python bench/python_transform_cost.py build/lathe IN.pt2 WORKDIR

Both sides load IN.pt2, run addmm_mm_to_linear,remove_dead_code and save
the result. The CLI is timed as a whole process, less the cost of starting
one (`lathe --version`); Python is timed in process, after `import lathe`:
lathe.load, Program.transform (which works on a copy, so the loaded Program
stays valid for runners made over it) and Program.save. Median of 5 each.
"""
import os
import statistics
import subprocess
import sys
import time

import lathe

PASSES = "addmm_mm_to_linear,remove_dead_code"
REPEAT = 5


def median_seconds(fn):
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    binary, archive, work = sys.argv[1], sys.argv[2], sys.argv[3]
    # One file name in two folders: the archive's root folder is named after it.
    for side in ("cli", "python"):
        os.makedirs(os.path.join(work, side), exist_ok=True)
    cli_out = os.path.join(work, "cli", "out.pt2")
    py_out = os.path.join(work, "python", "out.pt2")

    def cli():
        subprocess.run([binary, "transform", archive, "-o", cli_out, "--passes", PASSES], check=True,
                       stdout=subprocess.DEVNULL)

    def start():
        subprocess.run([binary, "--version"], check=True, stdout=subprocess.DEVNULL)

    def python():
        program = lathe.load(archive)
        transformed, _ = program.transform(passes=PASSES)
        transformed.save(py_out)

    cli_s, start_s, py_s = median_seconds(cli), median_seconds(start), median_seconds(python)
    if open(cli_out, "rb").read() != open(py_out, "rb").read():
        print("python and the CLI wrote different archives", file=sys.stderr)
        return 1
    size = os.path.getsize(archive) / 1e6
    print(f"{os.path.basename(archive)} ({size:.0f} MB): lathe transform {cli_s * 1e3:.0f} ms "
          f"(process start {start_s * 1e3:.1f} ms), python load+transform+save {py_s * 1e3:.0f} ms "
          f"-> python / (cli - start) = {py_s / (cli_s - start_s):.2f}x (same bytes written)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
