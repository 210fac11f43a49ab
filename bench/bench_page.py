"""How fast the problem page loads on loopback, side by side with a static-file baseline.

Two servers run as separate processes: a real ``judge serve`` (sandbox, engine, database), and Python's
``http.server`` serving a static copy of the same page (its HTML, the same bundle files, the API's JSON
saved as files), so the baseline pays for the bytes and the browser's work but for none of the app.
Measured, interleaved so machine noise hits both alike:

  http      the page's critical path over HTTP with a cold cache: the HTML, every asset it names (gzip
            accepted, as a browser does), then the problem JSON the page asks for
  cold      Chromium (Debian's) in a fresh context: navigation start to the page being usable (the
            statement, editor and Run panel filled: the page's ``judge:ready`` mark)
  warm      the same after a reload in that context: the hashed assets come from the cache unasked

and prints p50/p95 per variant, the ratio to the baseline, and the target: problem page usable in
under 300 ms (cold, p95).

    .venv/bin/python bench/bench_page.py [--repeats 20] [--slug global-norm-clipping]
"""

from __future__ import annotations

import argparse
import http.client
import json
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


def browser_ms(browser: Browser, url: str, *, ready: bool) -> tuple[float, float]:
    """(cold, warm): navigation start to the ready mark (or the load event for the baseline)."""
    context = browser.new_context()
    page = context.new_page()
    results = []
    for _ in range(2):
        if results:
            page.reload()
        else:
            page.goto(url)
        if ready:
            page.wait_for_selector("body[data-ready=true]", timeout=30_000)
            value = page.evaluate(READY)
        else:
            page.wait_for_load_state("load")
            value = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        results.append(float(value))
    context.close()
    return results[0], results[1]


def static_copy(server: JudgeServer, slug: str, folder: Path) -> None:
    """The page as files: its HTML at problems/SLUG/index.html, the bundle, the API's JSON."""
    dist = ROOT / "judge" / "web" / "static" / "dist"
    shutil.copytree(dist, folder / "static")
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
    line = f"{name:<22} p50 {p50:7.1f} ms   p95 {p95:7.1f} ms"
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
            folder / "data", folder / "serve.log", anonymous_rate_limit="100000/minute"
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

            timings: dict[str, list[float]] = {
                k: [] for k in ("http", "http-base", "cold", "cold-base", "warm", "warm-base")
            }
            with sync_playwright() as driver:
                browser = launch_browser(driver)
                for _ in range(2):  # warm-up: caches on both sides, the browser's first start
                    critical_path_ms(server.url, page, api)
                    browser_ms(browser, server.url + page, ready=True)
                for _ in range(args.repeats):
                    timings["http"].append(critical_path_ms(server.url, page, api))
                    timings["http-base"].append(critical_path_ms(baseline_url, static_page, static_api))
                    cold, warm = browser_ms(browser, server.url + page, ready=True)
                    timings["cold"].append(cold)
                    timings["warm"].append(warm)
                    cold, warm = browser_ms(browser, baseline_url + static_page, ready=False)
                    timings["cold-base"].append(cold)
                    timings["warm-base"].append(warm)
                browser.close()
        finally:
            if static is not None:
                static.terminate()
                static.wait()
            server.stop()

    print(f"problem page {args.slug}, {args.repeats} interleaved repeats, loopback")
    print(summary("http critical path", timings["http"], timings["http-base"]))
    print(summary("  static baseline", timings["http-base"], None))
    print(summary("browser cold: ready", timings["cold"], timings["cold-base"]))
    print(summary("  static: load event", timings["cold-base"], None))
    print(summary("browser warm: ready", timings["warm"], timings["warm-base"]))
    print(summary("  static: load event", timings["warm-base"], None))
    p95 = sorted(timings["cold"])[max(0, round(0.95 * len(timings["cold"])) - 1)]
    verdict = "met" if p95 < TARGET_MS else "MISSED"
    print(f"target: usable in under {TARGET_MS:.0f} ms with a cold cache (p95 {p95:.1f} ms): {verdict}")


if __name__ == "__main__":
    main()
