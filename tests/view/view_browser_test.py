"""`lathe view` pages opened in a real headless Chromium (Debian's `chromium`).

One CTest test per check (CMakeLists.txt registers them like the PyTorch
interop tests): `view_browser_test.py CHECK`. Without Chromium every check
fails, saying so: the browser is part of what is tested, not optional.

  NodeCount   the page says, and draws, as many nodes as `lathe inspect`
  Collapse    module groups start collapsed; a click opens one, another closes it
  Diff        before/after of `lathe transform --explain`: rewritten/removed nodes
              marked, explain records attached (from --explain-file, --passes and
              `lathe transform --view`)
  Delegate    an XNNPACK delegate opens on the ops of its payload
  Network     no request leaves any page; no console or CSP error
  Screenshot  a screenshot of the TTS diff page is a PNG that is not blank
  BadInput    an archive that does not load: inspect's one-line error, no HTML
  Hostile     an archive whose op, module path and stack trace hold markup: shown
              as text, no element or handler injected, no script of its own run;
              the page's policy allows no inline script or style but its own
"""

import json
import os
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Chromium, png_pixels  # noqa: E402

SOURCE = os.environ.get("LATHE_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
LATHE = os.environ.get("LATHE_BINARY", os.path.join(SOURCE, "build", "lathe"))
TTS = os.path.join(SOURCE, "fixtures", "tts_duration_predictor.pt2")


def lathe(*args, check=True):
    r = subprocess.run([LATHE, *args], capture_output=True, text=True, cwd=SOURCE)
    if check and r.returncode != 0:
        raise AssertionError(f"lathe {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def url(path):
    return "file://" + os.path.abspath(path)


def boxes(c, selector):
    return c.evaluate(f"[...document.querySelectorAll({json.dumps(selector)})].map(b => "
                      "({name: b.dataset.name, side: b.dataset.side, cls: b.className, text: b.innerText}))")


def tts_diff(tmp):
    """tts before/after with the records of `lathe transform --explain` attached."""
    after = os.path.join(tmp, "tts_after.pt2")
    explain = os.path.join(tmp, "explain.txt")
    r = lathe("transform", TTS, "-o", after, "--explain")
    with open(explain, "w") as f:
        f.write(r.stdout)
    page = os.path.join(tmp, "diff.html")
    lathe("view", TTS, after, "--explain-file", explain, "-o", page)
    return after, page


def check_node_count(c, tmp):
    for fixture in ("tts_duration_predictor", "transformer_block", "decoder_lm"):
        archive = os.path.join(SOURCE, "fixtures", fixture + ".pt2")
        info = json.loads(lathe("inspect", "--json", archive).stdout)
        method, m = next(iter(info["methods"].items()))
        page = os.path.join(tmp, fixture + ".html")
        lathe("view", archive, "-o", page)
        c.open(url(page))
        stats = c.evaluate("({...document.getElementById('stats').dataset})")
        expect(int(stats["nodes"]) == m["nodes"], f"{fixture}: page says {stats['nodes']} nodes, inspect {m['nodes']}")
        expect(int(stats["inputs"]) == len(m["inputs"]) and int(stats["outputs"]) == len(m["outputs"]),
               f"{fixture}: inputs/outputs {stats} vs inspect")
        # Everything open, the drawn rows hold every node once (the window is
        # tall enough for the small fixture; larger ones are scrolled through).
        c.evaluate("latheView.expandAll()")
        names = c.evaluate("""(async () => {
          const s = document.getElementById('scroller'), seen = new Set();
          for (let y = 0; ; y += s.clientHeight / 2) {
            s.scrollTop = y;
            await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
            for (const b of document.querySelectorAll('.box[data-kind=op]')) seen.add(b.dataset.n);
            if (y > s.scrollHeight) break;
          }
          return [...seen];
        })()""")
        expect(len(names) == m["nodes"], f"{fixture}: {len(names)} op nodes drawn, inspect says {m['nodes']}")
        if fixture == "tts_duration_predictor":
            drawn = c.evaluate("document.querySelectorAll('.box[data-kind=op]').length")
            expect(drawn == 11, f"tts: {drawn} op boxes in the DOM at once, expected all 11")
        print(f"ok NodeCount {fixture}: {m['nodes']} nodes")


def check_collapse(c, tmp):
    page = os.path.join(tmp, "tts.html")
    lathe("view", TTS, "-o", page)
    c.open(url(page))
    group = "document.querySelector('.box.grp[data-group=\"encoder\"]')"
    inside = "document.querySelectorAll('.box[data-name=\"addmm\"]').length"
    expect(c.evaluate(f"{group}.dataset.expanded") == "false", "module group 'encoder' does not start collapsed")
    expect(c.evaluate(inside) == 0, "a collapsed group's node is drawn")
    rows = c.evaluate("latheView.visibleRows()")
    c.evaluate(f"{group}.click()")
    expect(c.evaluate(f"{group}.dataset.expanded") == "true", "clicking 'encoder' did not open it")
    expect(c.evaluate(inside) == 1, "opening 'encoder' does not draw its node 'addmm'")
    expect(c.evaluate("latheView.visibleRows()") == rows + 2, "opening 'encoder' should add its two rows (permute, addmm)")
    c.evaluate(f"{group}.click()")
    expect(c.evaluate(f"{group}.dataset.expanded") == "false", "a second click did not close 'encoder'")
    expect(c.evaluate(inside) == 0, "closing 'encoder' left 'addmm' drawn")
    # Clicking a node shows its details: op, arguments, origin, stack trace.
    c.evaluate(f"{group}.click()")
    c.evaluate("document.querySelector('.box[data-name=\"addmm\"]').click()")
    panel = c.evaluate("document.getElementById('panel').innerText")
    for want in ("aten.addmm.default", "p_encoder_bias", "f32[64, 64]", "stack trace", "models.py", "encoder: "):
        expect(want.lower() in panel.lower(), f"details of 'addmm' lack {want!r}: {panel}")
    print("ok Collapse")


def check_diff_page(c, page, source):
    c.open(url(page))
    stats = c.evaluate("({...document.getElementById('stats').dataset})")
    expect(stats.get("beforeNodes") == "11",
           f"{source}: before node count {stats}")
    expect(stats["nodes"] == "9" and stats["rewritten"] == "2" and stats["removed"] == "2",
           f"{source}: diff stats {stats}")
    after = {b["name"]: b for b in boxes(c, ".box[data-side=a][data-kind=op]")}
    before = {b["name"]: b for b in boxes(c, ".box[data-side=b][data-kind=op]")}
    for name in ("addmm", "addmm_1"):
        expect(name in after, f"{source}: rewritten node {name!r} not drawn (its group should start open)")
        expect("st-rewritten" in after[name]["cls"], f"{source}: {name!r} not marked rewritten: {after[name]['cls']}")
        expect("aten.linear.default" in after[name]["text"], f"{source}: {name!r} is not shown as linear")
        expect("rewritten to linear" in after[name]["text"], f"{source}: {name!r} has no explanation attached")
    expect("st-removed" in before["permute"]["cls"], f"{source}: 'permute' not marked removed")
    expect("kept: weight 'permute_1' is computed at run time by 'squeeze_1'" in after["mm"]["text"],
           f"{source}: 'mm' has no 'kept' explanation: {after['mm']['text']}")
    c.evaluate("document.querySelector('.box[data-side=a][data-name=mm]').click()")
    panel = c.evaluate("document.getElementById('panel').innerText")
    expect("computed at run time by 'squeeze_1'" in panel and "same" in panel,
           f"{source}: the details panel of 'mm' lacks its explanation: {panel}")


def check_diff(c, tmp):
    after, page = tts_diff(tmp)
    check_diff_page(c, page, "--explain-file")
    rerun = os.path.join(tmp, "diff_rerun.html")
    lathe("view", TTS, after, "--passes", "addmm_mm_to_linear,remove_dead_code", "-o", rerun)
    check_diff_page(c, rerun, "--passes")
    direct = os.path.join(tmp, "diff_transform.html")
    lathe("transform", TTS, "-o", os.path.join(tmp, "tts2.pt2"), "--view", direct)
    check_diff_page(c, direct, "transform --view")
    print("ok Diff")


def check_delegate(c, tmp):
    lowered = os.path.join(tmp, "tts.xnn.pt2")
    if os.environ.get("LATHE_WITH_XNNPACK", "1") != "1":
        # Built without XNNPACK there is no delegate to draw; lowering says why.
        r = lathe("lower", TTS, "-o", lowered, "--backend", "xnnpack", check=False)
        expect(r.returncode != 0 and "LATHE_WITH_XNNPACK=OFF" in r.stderr, f"lower without XNNPACK: {r.stderr}")
        print("ok Delegate: this build has no XNNPACK, and lowering says so")
        return
    lathe("lower", TTS, "-o", lowered, "--backend", "xnnpack")
    page = os.path.join(tmp, "lowered.html")
    lathe("view", lowered, "-o", page)
    c.open(url(page))
    c.evaluate("latheView.expandAll()")
    dlg = "document.querySelector('.box.dlg')"
    expect(c.evaluate(f"!!{dlg}"), "no delegate node drawn")
    expect(c.evaluate("document.querySelectorAll('.box.dop').length") == 0, "delegate ops drawn before it is opened")
    c.evaluate(f"{dlg}.querySelector('.badge').click()")
    ops = c.evaluate("[...document.querySelectorAll('.box.dop')].map(b => b.innerText)")
    expect(any("fully_connected" in o for o in ops), f"the opened delegate does not list its ops: {ops}")
    print(f"ok Delegate: {len(ops)} op(s) inside")


def check_network(c, tmp):
    after, diff = tts_diff(tmp)
    single = os.path.join(tmp, "single.html")
    lathe("view", os.path.join(SOURCE, "fixtures", "transformer_block.pt2"), "-o", single)
    for page in (diff, single):
        c.open(url(page))
        c.evaluate("latheView.expandAll()")
        c.evaluate("document.querySelector('.box[data-kind=op]').click()")
        c.evaluate("new Promise(r => setTimeout(r, 300))")
        reqs = [u for u in c.requests() if u != url(page)]
        expect(not reqs, f"{page}: requests left the page: {reqs}")
        expect(not c.problems(), f"{page}: console errors: {c.problems()}")
        html = open(page, encoding="utf-8").read()
        for scheme in ("http://", "https://", "//cdn"):
            expect(scheme not in html.replace("http://www.w3.org/2000/svg", ""), f"{page} mentions {scheme}")
    print("ok Network")


def check_screenshot(c, tmp):
    _, page = tts_diff(tmp)
    c.open(url(page))
    png = c.screenshot()
    out = os.environ.get("LATHE_VIEW_SCREENSHOT")
    if out:
        with open(out, "wb") as f:
            f.write(png)
    width, height, bpp, rows = png_pixels(png)
    expect((width, height) == (c.width, c.height), f"screenshot is {width}x{height}")
    counts = {}
    for row in rows[::3]:
        for i in range(0, len(row), bpp * 3):
            px = row[i:i + 3]
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    background = max(counts.values())
    expect(len(counts) > 50, f"screenshot has {len(counts)} colours: blank")
    expect(total - background > total * 0.05, "screenshot is almost one colour: blank")
    print(f"ok Screenshot: {len(png)} bytes, {len(counts)} colours, {100 * (total - background) / total:.0f}% drawn")


def check_bad_input(tmp):
    cases = [("/nonexistent/model.pt2",), (os.path.join(SOURCE, "tests", "malformed", "zip_truncated.pt2"),),
             (TTS, os.path.join(SOURCE, "tests", "malformed", "json_truncated.pt2"))]
    for files in cases:
        out = os.path.join(tmp, "bad.html")
        r = lathe("view", *files, "-o", out, check=False)
        bad = files[-1]
        inspect = lathe("inspect", bad, check=False)
        expect(r.returncode != 0, f"lathe view {files} succeeded")
        expect(r.stderr.count("\n") == 1, f"not one line: {r.stderr!r}")
        expect(r.stderr == inspect.stderr.replace("lathe inspect:", "lathe view:"),
               f"view says {r.stderr!r}, inspect says {inspect.stderr!r}")
        expect(not os.path.exists(out), f"HTML written for {files}")
    print("ok BadInput")

# Markup that runs its script if the page ever parses it as HTML (it once
# did: the op name went unescaped into a class attribute).
INJECTED = '"><img src="data:," onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def hostile_archive(tmp):
    """simple_linear with INJECTED in an op target, a module path and a stack trace."""
    src = os.path.join(SOURCE, "fixtures", "simple_linear.pt2")
    out = os.path.join(tmp, "hostile.pt2")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("models/model.json"):
                model = json.loads(data)
                node = model["graph_module"]["graph"]["nodes"][0]
                node["target"] = node["target"].replace(".default", INJECTED + ".default")
                node["metadata"]["stack_trace"] = INJECTED
                node["metadata"]["nn_module_stack"] = "L__self__,,M;evil," + INJECTED + ",T" + INJECTED
                data = json.dumps(model).encode()
            zout.writestr(info.filename, data)
    return out


def check_hostile(c, tmp):
    archive = hostile_archive(tmp)
    page = os.path.join(tmp, "hostile.html")
    lathe("view", archive, "-o", page)
    diff = os.path.join(tmp, "hostile_diff.html")
    lathe("view", archive, archive, "-o", diff)
    for p in (page, diff):
        c.open(url(p))
        c.evaluate("latheView.expandAll()")
        for i in range(c.evaluate("document.querySelectorAll('.box[data-kind=op]').length")):
            c.evaluate(f"document.querySelectorAll('.box[data-kind=op]')[{i}].click()")
        c.evaluate("new Promise(r => setTimeout(r, 300))")
        shown = c.evaluate("document.getElementById('canvas').innerText + document.getElementById('panel').innerText")
        expect('<img src="data:,"' in shown, f"{p}: the hostile op is not shown as text: {shown}")
        expect(c.evaluate("document.querySelectorAll('img').length") == 0, f"{p}: an img element was injected")
        expect(c.evaluate("document.scripts.length") == 2, f"{p}: a script element was injected")
        handlers = c.evaluate("[...document.querySelectorAll('*')].flatMap(e => [...e.attributes]"
                              ".filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))")
        expect(not handlers, f"{p}: event handler attributes injected: {handlers}")
        expect(c.evaluate("typeof window.__pwned") == "undefined", f"{p}: the injected script ran")
        expect(not c.problems(), f"{p}: console or CSP errors: {c.problems()}")
        csp = c.evaluate("document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
        expect("unsafe-inline" not in csp and "'sha256-" in csp, f"{p}: the policy allows inline code: {csp}")
    print("ok Hostile")


def main():
    check = sys.argv[1] if len(sys.argv) > 1 else "all"
    checks = ["NodeCount", "Collapse", "Diff", "Delegate", "Network", "Screenshot", "BadInput", "Hostile"]
    if check != "all" and check not in checks:
        sys.exit(f"unknown check {check}; one of {', '.join(checks)}")
    with tempfile.TemporaryDirectory(prefix="lathe-view-test-") as tmp:
        if check in ("BadInput", "all"):
            check_bad_input(tmp)
        browser_checks = [k for k in checks if k != "BadInput" and check in (k, "all")]
        if not browser_checks:
            return
        with Chromium(width=1400, height=1000) as c:
            for k in browser_checks:
                {"NodeCount": check_node_count, "Collapse": check_collapse, "Diff": check_diff,
                 "Delegate": check_delegate, "Network": check_network, "Screenshot": check_screenshot,
                 "Hostile": check_hostile}[k](c, tmp)


if __name__ == "__main__":
    main()
