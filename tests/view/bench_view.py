"""`make bench`: `lathe view` of a large program in headless Chromium.

    bench_view.py LATHE PROGRAM.pt2 WORKDIR

Prints the HTML size, the time `lathe view` takes to write it, and, in
Chromium, the time to first paint (first-contentful-paint: the page has no
static text, so nothing paints before the script has drawn the graph), the
time until the first frame after drawing, then how long opening one module
group and then all of them take, and the frames of panning the fully open
graph (median and slowest of 40 jumps).
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Chromium  # noqa: E402


def main():
    lathe, program, work = sys.argv[1:4]
    page = os.path.join(work, "view.html")
    t0 = time.monotonic()
    subprocess.run([lathe, "view", program, "-o", page], check=True, stdout=subprocess.DEVNULL)
    written = time.monotonic() - t0
    size = os.path.getsize(page)
    with Chromium(width=1400, height=900, timeout=300) as c:
        c.open("file://" + page, timeout=300)
        # The paint entry is reported once the frame is presented, a little
        # after the page's own first requestAnimationFrame.
        c.wait_for("performance.getEntriesByType('paint').some(e => e.name === 'first-contentful-paint')", 30)
        paint = c.evaluate("""(() => {
          const p = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
          const d = performance.getEntriesByName('lathe-drawn')[0];
          return {fcp: p ? p.startTime : null, drawn: d ? d.startTime : null,
                  nodes: document.getElementById('stats').dataset.nodes, rows: latheView.visibleRows()};
        })()""")
        frames = c.evaluate("""(async () => {
          const frame = () => new Promise(r => requestAnimationFrame(() => r()));
          const g = document.querySelector('.box.grp:not([data-group="(inputs)"])');
          let t = performance.now();
          g.click();
          await frame();
          const open = performance.now() - t;
          t = performance.now();
          latheView.expandAll();
          await frame();
          const all = performance.now() - t;
          const s = document.getElementById('scroller');
          const times = [];
          for (let k = 0; k < 40; k++) {
            t = performance.now();
            s.scrollTop += s.clientHeight * 50;
            await frame();
            times.push(performance.now() - t);
          }
          times.sort((a, b) => a - b);
          const worst = times[times.length - 1], median = times[20];
          return {open, all, median, worst, rows: latheView.visibleRows()};
        })()""")
    nodes = int(paint["nodes"])
    print(f"view: {nodes:,}-node program: HTML {size / 1048576:.1f} MiB, written by `lathe view` in {written:.2f} s")
    print(f"view: first paint {paint['fcp']:.0f} ms (first-contentful-paint), first frame drawn {paint['drawn']:.0f} ms, "
          f"{paint['rows']:,} rows visible with module groups collapsed")
    print(f"view: opening a module group {frames['open']:.0f} ms; opening all {frames['all']:.0f} ms "
          f"({frames['rows']:,} rows); panning that, 40 jumps of 50 screens: frame median "
          f"{frames['median']:.0f} ms, slowest {frames['worst']:.0f} ms")


if __name__ == "__main__":
    main()
