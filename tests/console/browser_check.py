#!/usr/bin/env python3
"""Drives `waymark serve` in headless Chromium over the DevTools protocol (--remote-debugging-pipe,
stdlib only) for the console's acceptance test (Tests/WaymarkIntegrationTests/ConsoleBrowserTests.swift):

  1. signs in with a token and opens the live map; reads every region drawn and its count;
     screenshot map-before.png
  2. writes READY_FILE (the test then publishes batches through the broker and the aggregator)
     and waits until a region's "N inside" count changes in the page (pushed by server-sent events,
     no reload); screenshot map-after.png
  3. opens a report, reads its table, downloads its CSV link with the page's session;
     screenshot report.png
  4. checks every screenshot is a PNG that is not blank (decoded with zlib: pixel variance)

Prints one JSON object with what it saw; exits 1 with a message on any failure.
"""
import argparse
import base64
import json
import os
import struct
import subprocess
import sys
import time
import zlib


class Browser:
    def __init__(self, chromium, profile, width, height):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def wire_fds():
            # Via fresh copies: the pipe ends may already be 3 or 4, and dup2 onto itself would
            # keep the close-on-exec flag.
            read_end, write_end = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--mute-audio",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", f"--window-size={width},{height}",
             "about:blank"],
            # The pipe ends go to fds 3 and 4 in the child; close_fds would close them again.
            close_fds=False, preexec_fn=wire_fds,
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(profile, "..", "chromium.log"), "wb"))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            reply = self.read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
        raise RuntimeError(f"{method}: no answer within {timeout} s")

    def read_message(self, deadline):
        import select
        while b"\0" not in self.buffer:
            left = deadline - time.time()
            if left <= 0:
                raise RuntimeError("the browser stopped answering")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser exited (see chromium.log)")
                self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def open_page(self):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")

    def evaluate(self, expression, await_promise=False):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails'].get('text')} in {expression[:80]}")
        return result["result"].get("value")

    def goto(self, url, path, timeout=30):
        self.send("Page.navigate", {"url": url})
        deadline = time.time() + timeout
        while time.time() < deadline:
            state = self.evaluate("[document.readyState, location.pathname]")
            if state and state[0] == "complete" and state[1] == path:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{url} did not finish loading at {path} within {timeout} s (at {state})")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def png_stats(path):
    """Width, height, distinct colours (of a sample) and luminance standard deviation of an 8-bit RGB(A) PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise RuntimeError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = header[0], header[1], header[2], header[3]
    if depth != 8 or colour not in (2, 6):
        raise RuntimeError(f"{path}: unexpected PNG format depth {depth} colour {colour}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    previous = bytearray(stride)
    total, total_sq, count, colours = 0.0, 0.0, 0, set()
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        previous = line
        if y % 4 == 0:
            for x in range(0, width, 4):
                r, g, bl = line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]
                lum = 0.299 * r + 0.587 * g + 0.114 * bl
                total += lum
                total_sq += lum * lum
                count += 1
                colours.add((r, g, bl))
    mean = total / count
    return {"width": width, "height": height, "colours": len(colours),
            "luminance_sd": max(0.0, total_sq / count - mean * mean) ** 0.5}


COUNTS = """Object.fromEntries(Array.from(document.querySelectorAll('text.region-count[data-region]'))
  .map(t => [t.getAttribute('data-region'), t.textContent]))"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ready-file", required=True)
    ap.add_argument("--wait", type=float, default=90)
    ap.add_argument("--report", required=True, help="the query string of the report to open")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.out, "profile"), exist_ok=True)
    seen = {}
    browser = Browser(args.chromium, os.path.join(args.out, "profile"), 1600, 1000)
    try:
        browser.open_page()
        browser.goto(f"{args.base}/?token={args.token}", "/")
        seen["title"] = browser.evaluate("document.title")
        seen["regions"] = browser.evaluate("Array.from(document.querySelectorAll('circle.region')).map(c => c.getAttribute('data-region'))")
        seen["names"] = browser.evaluate("Array.from(document.querySelectorAll('text.region-label')).map(t => t.textContent)")
        before = browser.evaluate(COUNTS)
        seen["counts_before"] = before
        browser.screenshot(os.path.join(args.out, "map-before.png"))
        with open(args.ready_file, "w") as f:
            f.write("ready\n")

        deadline, changed = time.time() + args.wait, {}
        while time.time() < deadline and not changed:
            now = browser.evaluate(COUNTS)
            changed = {r: [before.get(r), v] for r, v in now.items() if before.get(r) != v}
            time.sleep(0.25)
        seen["counts_changed"] = changed
        seen["live_version"] = browser.evaluate("document.querySelector('[data-live]').getAttribute('data-version')")
        seen["gateway_states"] = browser.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('[data-gateway]')).map(b => [b.getAttribute('data-gateway'), b.textContent]))")
        browser.screenshot(os.path.join(args.out, "map-after.png"))

        rows = """(id) => Array.from(document.querySelectorAll('#' + id + ' tbody tr')).filter(tr => !tr.querySelector('td.empty'))
            .map(tr => Array.from(tr.cells).map(td => td.textContent))"""
        browser.goto(f"{args.base}/devices?q=ibeacon", "/devices")
        seen["devices_rows"] = browser.evaluate(f"({rows})('devices')")
        link = browser.evaluate("(document.querySelector('#devices a') || {}).href || null")
        if link:
            browser.goto(link, browser.evaluate(f"new URL({json.dumps(link)}).pathname"))
            seen["device_state"] = browser.evaluate(f"({rows})('device-state')")
            seen["device_path_rows"] = browser.evaluate(f"({rows})('device-path')")
            seen["device_on_path"] = browser.evaluate("document.querySelectorAll('circle.on-path').length")
            browser.screenshot(os.path.join(args.out, "device.png"))
        browser.goto(f"{args.base}/gateways", "/gateways")
        seen["gateways_rows"] = browser.evaluate(f"({rows})('gateways')")
        seen["gateways_error"] = browser.evaluate("(document.querySelector('main .error') || {}).textContent || null")
        seen["aggregators_rows"] = browser.evaluate(f"({rows})('aggregators')")
        seen["shard_coverage"] = browser.evaluate("(document.getElementById('shard-coverage') || {}).textContent || null")
        browser.screenshot(os.path.join(args.out, "gateways.png"))

        browser.goto(f"{args.base}/reports?{args.report}", "/reports")
        seen["report_title"] = browser.evaluate("(document.getElementById('report-title') || {}).textContent || null")
        seen["report_error"] = browser.evaluate("(document.getElementById('report-error') || {}).textContent || null")
        seen["report_columns"] = browser.evaluate("Array.from(document.querySelectorAll('#report thead th')).map(th => th.textContent)")
        seen["report_chart_bars"] = browser.evaluate("document.querySelectorAll('svg.chart rect.bar').length")
        seen["report_rows"] = browser.evaluate(
            "Array.from(document.querySelectorAll('#report tbody tr')).filter(tr => !tr.querySelector('td.empty')).map(tr => Array.from(tr.cells).map(td => td.textContent))")
        browser.screenshot(os.path.join(args.out, "report.png"))
        download = browser.evaluate("""fetch(document.getElementById('csv-download').href)
            .then(r => r.text().then(body => ({status: r.status, type: r.headers.get('content-type'),
                                               disposition: r.headers.get('content-disposition'), body: body})))""", await_promise=True)
        with open(os.path.join(args.out, "report.csv"), "w") as f:
            f.write(download["body"])
        seen["csv"] = {k: download[k] for k in ("status", "type", "disposition")}
        seen["csv_lines"] = download["body"].splitlines()
        seen["screenshots"] = {name: png_stats(os.path.join(args.out, name))
                               for name in ("map-before.png", "map-after.png", "report.png", "device.png", "gateways.png")}
    except Exception as error:  # reported to the test as JSON with what was seen so far
        seen["error"] = str(error)
    finally:
        browser.close()
    print(json.dumps(seen))
    return 1 if "error" in seen else 0


if __name__ == "__main__":
    sys.exit(main())
