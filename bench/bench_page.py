"""How fast the problem page loads on loopback, side by side with a static-file baseline.

Two servers run as separate processes: a real ``judge serve`` (sandbox, engine, database), and Python's
``http.server`` serving a static copy of the same page (its HTML, the same bundle files, the API's JSON
saved as files). The page's scripts run the same way against both, so the baseline pays for the bytes and
the browser's work but for none of the app. Measured, interleaved so machine noise hits both alike:

  http      the page's critical path over HTTP with a cold cache, on one kept-alive connection as a
            browser does: the HTML, every asset it names (gzip accepted), then the problem JSON
  cold      Chromium (Debian's) in a fresh context: navigation start to the page being usable (statement,
            an editor to type in and Run from, the Run panel: the page's ``judge:ready`` mark), to the
            first contentful paint, to CodeMirror having taken over the server-rendered textarea
            (``judge:editor``), and to the load event
  warm      the same after a reload in that context: the hashed assets come from the cache unasked

  floor     a blank static page (one paragraph, no script) in a fresh context: the browser's own cost of
            any navigation on this machine right now

and prints p50/p95 per variant, the ratio to the baseline, and the target: problem page usable in
under 300 ms (cold, p95). The browser's share (parsing the editor bundle, laying out the page) grows with
the machine's load (the floor shows how much); the ratio to the baseline is what the app adds.

    .venv/bin/python bench/bench_page.py [--repeats 20] [--slug global-norm-clipping]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, sync_playwright  # noqa: E402

from tests.webtools import JudgeServer, launch_browser  # noqa: E402

TARGET_MS = 300.0
READY = "() => performance.getEntriesByName('judge:ready')[0]?.startTime ?? null"
EDITOR = "() => performance.getEntriesByName('judge:editor')[0]?.startTime ?? null"
PAINT = "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"


def fetch(conn: http.client.HTTPConnection, path: str) -> bytes:
    conn.request("GET", path, headers={"Accept-Encoding": "gzip"})
    response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status}")
    return body


def critical_path_ms(base: str, page: str, api: str) -> float:
    """HTML, then its assets (and the font the stylesheet names), then the problem JSON; one connection."""
    parts = urlsplit(base)
    start = time.perf_counter()
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    html = fetch(conn, page).decode()
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        fetch(conn, asset)
    fetch(conn, api)
    conn.close()
    return (time.perf_counter() - start) * 1000


LOAD = "() => performance.getEntriesByType('navigation')[0].loadEventEnd"


def browser_ms(browser: Browser, url: str) -> list[tuple[float, float, float, float]]:
    """[(ready, paint, editor, load) cold, (...) warm]: milliseconds from navigation start."""
    context = browser.new_context()
    page = context.new_page()
    results: list[tuple[float, float, float, float]] = []
    for _ in range(2):
        if results:
            page.reload()
        else:
            page.goto(url)
        page.wait_for_selector("body[data-ready=true][data-editor=codemirror]", timeout=30_000)
        page.wait_for_load_state("load")
        marks = (READY, PAINT, EDITOR, LOAD)
        ready, paint, editor, load = (float(page.evaluate(mark)) for mark in marks)
        results.append((ready, paint, editor, load))
    context.close()
    return results


def blank_ms(browser: Browser, url: str) -> float:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_load_state("load")
    value = float(page.evaluate(LOAD))
    context.close()
    return value


def static_copy(server: JudgeServer, slug: str, folder: Path) -> None:
    """The page as files: its HTML at problems/SLUG/index.html, the bundle, the API's JSON; and a blank
    page at blank.html."""
    (folder / "blank.html").parent.mkdir(parents=True, exist_ok=True)
    (folder / "blank.html").write_text("<!doctype html><title>blank</title><p>blank</p>\n")
    dist = ROOT / "judge" / "web" / "static" / "dist"
    shutil.copytree(dist, folder / "static", dirs_exist_ok=True)
    conn = http.client.HTTPConnection(urlsplit(server.url).hostname, urlsplit(server.url).port, timeout=30)
    conn.request("GET", f"/problems/{slug}")
    html = conn.getresponse().read()
    (folder / "problems" / slug).mkdir(parents=True)
    (folder / "problems" / slug / "index.html").write_bytes(html)
    (folder / "api" / "problems" / slug).mkdir(parents=True)
    (folder / "api" / "problems" / slug / "index.html").write_text(
        json.dumps(server.get_json(f"/api/problems/{slug}"))
    )
    conn.close()


def summary(name: str, values: list[float], baseline: list[float] | None) -> str:
    p50 = statistics.median(values)
    p95 = sorted(values)[max(0, round(0.95 * len(values)) - 1)]
    line = f"{name:<24} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms"
    if baseline:
        line += f"   x{p50 / statistics.median(baseline):5.2f} of the static baseline (p50)"
    return line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--slug", default="global-norm-clipping")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-page-") as tmp:
        folder = Path(tmp)
        server = JudgeServer.start(
            folder / "data",
            folder / "serve.log",
            anonymous_rate_limit="100000/minute",
            problems_dir=str(ROOT / "problems"),  # a learner's page, not the test suite's fixtures
        )
        static = None
        try:
            static_copy(server, args.slug, folder / "site")
            static = subprocess.Popen(
                [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1", "-d", str(folder / "site")],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            assert static.stdout is not None
            banner = static.stdout.readline()
            port = int(re.search(r"port (\d+)", banner).group(1))  # type: ignore[union-attr]
            baseline_url = f"http://127.0.0.1:{port}"
            page = f"/problems/{args.slug}"
            api = f"/api/problems/{args.slug}"
            static_page, static_api = f"{page}/", f"{api}/"

            names = ("http", "cold", "cold-paint", "cold-editor", "cold-load")
            names += ("warm", "warm-paint", "warm-editor", "warm-load")
            timings: dict[str, list[float]] = {f"{n}{side}": [] for n in names for side in ("", "-base")}
            timings["floor"] = []
            with sync_playwright() as driver:
                browser = launch_browser(driver)
                for _ in range(2):  # warm-up: caches on both sides, the browser's first start
                    critical_path_ms(server.url, page, api)
                    browser_ms(browser, server.url + page)
                for _ in range(args.repeats):
                    for side, base, html, json_path in (
                        ("", server.url, page, api),
                        ("-base", baseline_url, static_page, static_api),
                    ):
                        timings[f"http{side}"].append(critical_path_ms(base, html, json_path))
                        cold_marks, warm_marks = browser_ms(browser, base + html)
                        for when, marks in (("cold", cold_marks), ("warm", warm_marks)):
                            suffixes = ("", "-paint", "-editor", "-load")
                            for suffix, value in zip(suffixes, marks, strict=True):
                                timings[f"{when}{suffix}{side}"].append(value)
                    timings["floor"].append(blank_ms(browser, f"{baseline_url}/blank.html"))
                browser.close()
        finally:
            if static is not None:
                static.terminate()
                static.wait()
            server.stop()

    print(f"problem page {args.slug}, {args.repeats} interleaved repeats, loopback")
    rows = (
        ("http critical path", "http"),
        ("browser cold: ready", "cold"),
        ("browser cold: 1st paint", "cold-paint"),
        ("browser cold: editor", "cold-editor"),
        ("browser cold: load", "cold-load"),
        ("browser warm: ready", "warm"),
        ("browser warm: 1st paint", "warm-paint"),
        ("browser warm: editor", "warm-editor"),
        ("browser warm: load", "warm-load"),
    )
    for label, key in rows:
        print(summary(label, timings[key], timings[f"{key}-base"]))
        print(summary("  static baseline", timings[f"{key}-base"], None))
    print(summary("blank page: load (floor)", timings["floor"], None))
    p95 = sorted(timings["cold"])[max(0, round(0.95 * len(timings["cold"])) - 1)]
    verdict = "met" if p95 < TARGET_MS else "MISSED"
    print(f"target: usable in under {TARGET_MS:.0f} ms with a cold cache (p95 {p95:.1f} ms): {verdict}")
    load = os.getloadavg()[0]
    print(f"load average during the run: {load:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
