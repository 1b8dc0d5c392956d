"""Headless Chromium over the DevTools protocol, standard library only.

Chromium is started with --remote-debugging-pipe: it reads commands from
fd 3 and writes replies and events to fd 4, each message one JSON text
ended by a NUL byte. One page target is attached in flat mode; every event
it sends is kept (requests the page makes, console and log entries).

    with Chromium(width=1400, height=900) as c:
        c.open("file:///tmp/view.html")
        c.evaluate("document.title")
        png = c.screenshot()
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import zlib


class ChromiumMissing(RuntimeError):
    pass


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise ChromiumMissing(
        "no Chromium on PATH: the Debian package `chromium` is needed "
        "(scripts/setup-deps.sh installs it; `make test` runs that first)")


class Chromium:
    def __init__(self, width=1400, height=900, timeout=60.0):
        self.timeout = timeout
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="lathe-chromium-")
        cmd_read, self._cmd_write = os.pipe()   # we write, Chromium reads fd 3
        self._res_read, res_write = os.pipe()   # Chromium writes fd 4, we read

        def fds():
            # Through fresh copies first: a pipe end may itself be fd 3 or 4
            # (dup2 onto itself would keep its close-on-exec flag).
            a, b = os.dup(cmd_read), os.dup(res_write)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "--hide-scrollbars",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
                "--mute-audio", "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_read)
        os.close(res_write)
        self._buf = b""
        self._next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.page(domain + ".enable")
        self.page("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.call("Browser.close", {}, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._cmd_write, self._res_read):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- protocol
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._res_read, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium exited (status {self.proc.poll()})")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=None):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_write, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def page(self, method, params=None, timeout=None):
        return self.call(method, params, self.session, timeout)

    def wait_event(self, method, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = len(self.events)
        while True:
            for e in self.events[seen:]:
                if e["method"] == method:
                    return e
            seen = len(self.events)
            reply = self._read_message(deadline)
            if "method" in reply:
                self.events.append(reply)

    # -- page helpers
    def open(self, url, ready="window.latheView && window.latheView.ready", timeout=None):
        self.events.clear()
        self.page("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", timeout)
        if ready:
            self.wait_for(ready, timeout)

    def evaluate(self, expression):
        r = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while not self.evaluate(f"!!({expression})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {expression}")
            time.sleep(0.05)

    def requests(self):
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def problems(self):
        """Console errors and log entries of level error (a CSP violation is one)."""
        out = []
        for e in self.events:
            if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error":
                out.append(e["params"]["entry"]["text"])
            if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append(str(e["params"]["args"]))
            if e["method"] == "Runtime.exceptionThrown":
                out.append(str(e["params"]["exceptionDetails"]))
        return out

    def screenshot(self):
        return base64.b64decode(self.page("Page.captureScreenshot", {"format": "png"})["data"])


def png_pixels(png):
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(png):
        n = int.from_bytes(png[pos:pos + 4], "big")
        kind = png[pos + 4:pos + 8]
        data = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height = int.from_bytes(data[0:4], "big"), int.from_bytes(data[4:8], "big")
            depth, color, interlace = data[8], data[9], data[12]
            assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG"
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows
