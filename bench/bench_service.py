"""The REST service against the engine it wraps, side by side in one run (a second process on loopback).

A real ``judge serve`` runs in its own process with its own data directory; this process drives it over
HTTP and, interleaved with that, calls an ``Engine`` of the same backend and size directly:

  run       Run of the public examples: HTTP ``POST /api/problems/{slug}/run`` vs ``Engine.run``
            (alternating one request of each), p50/p95 and the ratio of the p50s
  submit    at 1, 4 and 16 concurrent clients, each POSTing a submission and waiting for its result
            (``?wait=``): throughput and latency p50/p95, vs the engine grading the same number of
            submissions with as many threads as the service grades at once (its own throughput); two
            rounds per level in opposite orders
  queue     Run latency over HTTP while the submission queue holds work, vs with the service idle: Run
            takes its own capacity and must never wait behind queued submissions

Targets (issue 8): HTTP adds at most 10% to Run p50; Submit throughput at 16 clients at least 90% of the
engine's; no errors but 429s. Bounded: ``-n`` Run samples per variant, ``--per-client`` submissions per
client, and every request has a timeout.

    .venv/bin/python bench/bench_service.py [-n 20] [--per-client 1] [--problem global-norm-clipping]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.core.engine import Engine  # noqa: E402
from judge.core.problems import ProblemSet  # noqa: E402
from judge.core.sandboxes import choose_backend  # noqa: E402
from judge.core.settings import Settings  # noqa: E402

SOLUTIONS = {
    "sgd-momentum": "problems/sgd-momentum/solutions/accepted/two_tree_maps.py",
    "global-norm-clipping": "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py",
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def show(label: str, values: list[float]) -> str:
    return f"{label:<34} p50 {pct(values, 0.5) * 1000:8.1f} ms   p95 {pct(values, 0.95) * 1000:8.1f} ms"


class Server:
    def __init__(self, data_dir: Path, env: dict[str, str]) -> None:
        self.log = data_dir / "serve.log"
        full = {**os.environ, "JUDGE_DATA_DIR": str(data_dir), "JUDGE_LOG_LEVEL": "warning", **env}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "judge", "serve", "--port", "0"],
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
                env=full,
                cwd=ROOT,
                start_new_session=True,
            )
        self.url = ""

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.url and time.monotonic() < deadline:
            for line in self.log.read_text().splitlines():
                if "serving on " in line:
                    self.url = line.split("serving on ", 1)[1].split()[0]
            time.sleep(0.05)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"judge serve exited:\n{self.log.read_text()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"judge serve not ready in {timeout} s:\n{self.log.read_text()}")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: dict[int, int] = {}

    def add(self, status: int) -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def errors(self) -> dict[int, int]:
        return {s: n for s, n in self.statuses.items() if s >= 400 and s != 429}


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def run_phase(client: httpx.Client, engine: Engine, slug: str, code: str, n: int, tally: Tally) -> None:
    problem = ProblemSet(ROOT / "problems").get(slug)

    def over_http() -> None:
        response = client.post(f"/api/problems/{slug}/run", json={"code": code})
        tally.add(response.status_code)
        assert response.status_code == 200 and response.json()["verdict"] == "accepted", response.text

    def direct() -> None:
        assert engine.run(problem, code).accepted

    http_times, engine_times = [], []
    for i in range(n + 2):
        pair = [(http_times, over_http), (engine_times, direct)]
        for times, fn in pair if i % 2 == 0 else reversed(pair):
            took = timed(fn)
            if i >= 2:  # the first two rounds warm caches on both sides
                times.append(took)
        time.sleep(0.3)  # let the pools refill, as between a learner's clicks
    print(show("Run over HTTP", http_times))
    print(show("Run, engine without HTTP", engine_times))
    ratio = statistics.median(http_times) / statistics.median(engine_times)
    verdict = "meets" if ratio <= 1.10 else "MISSES"
    print(f"{'  HTTP / engine (p50)':<34} {ratio:.3f}   ({verdict} the target <= 1.10)")


def submit_http(
    url: str, slug: str, code: str, clients: int, per_client: int, tally: Tally
) -> tuple[float, list[float]]:
    latencies: list[float] = []
    lock = threading.Lock()

    def client_loop(k: int) -> None:
        with httpx.Client(base_url=url, timeout=180) as client:
            for j in range(per_client):
                started = time.perf_counter()
                body = {"problem": slug, "code": f"{code}\n# client {k} submission {j}\n"}
                while True:
                    response = client.post("/api/submissions", json=body)
                    tally.add(response.status_code)
                    if response.status_code != 429:
                        break
                    time.sleep(float(response.headers.get("retry-after", "1")))
                assert response.status_code == 202, response.text
                sid = response.json()["id"]
                while True:
                    got = client.get(f"/api/submissions/{sid}", params={"wait": 60})
                    tally.add(got.status_code)
                    if got.json()["status"] in ("done", "failed"):
                        break
                assert got.json()["verdict"] == "accepted", got.text
                with lock:
                    latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return clients * per_client / (time.perf_counter() - started), latencies


def submit_engine(
    engine: Engine, slug: str, code: str, threads: int, total: int
) -> tuple[float, list[float]]:
    problem = ProblemSet(ROOT / "problems").get(slug)
    latencies: list[float] = []
    lock = threading.Lock()
    counter = iter(range(total))

    def worker() -> None:
        while True:
            with lock:
                job = next(counter, None)
            if job is None:
                return
            source = f"{code}\n# engine submission {job}\n"
            took = timed(lambda: engine.grade(problem, source))  # noqa: B023 (called at once)
            with lock:
                latencies.append(took)

    started = time.perf_counter()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return total / (time.perf_counter() - started), latencies


def queue_phase(client: httpx.Client, slug: str, code: str, n: int, queued: int, tally: Tally) -> None:
    """Run latency with the service idle, then with ``queued`` submissions waiting. Also the time the
    sandbox spent compiling and running (from the result), to tell CPU contention from waiting."""
    sandbox_ms: dict[str, list[float]] = {"idle": [], "busy": []}

    def one_run(phase: str) -> float:
        def call() -> None:
            response = client.post(f"/api/problems/{slug}/run", json={"code": code})
            tally.add(response.status_code)
            assert response.status_code == 200, response.text
            cases = response.json()["cases"]
            sandbox_ms[phase].append(sum((c["compile_ms"] or 0) + (c["run_ms"] or 0) for c in cases))

        took = timed(call)
        time.sleep(0.3)
        return took

    idle = [one_run("idle") for _ in range(n)]
    ids = []
    for j in range(queued):
        response = client.post("/api/submissions", json={"problem": slug, "code": f"{code}\n# queued {j}\n"})
        tally.add(response.status_code)
        if response.status_code == 202:
            ids.append(response.json()["id"])
    depth_seen = []
    busy = []
    for _ in range(n):
        metrics = client.get("/metrics").text
        depth = next(
            (
                float(line.split()[1])
                for line in metrics.splitlines()
                if line.startswith("judge_queue_depth ")
            ),
            0.0,
        )
        depth_seen.append(depth)
        busy.append(one_run("busy"))
    for sid in ids:  # drain, so the process stops with nothing queued
        while client.get(f"/api/submissions/{sid}", params={"wait": 60}).json()["status"] not in (
            "done",
            "failed",
        ):
            pass
    print(show("Run over HTTP, service idle", idle))
    print(show(f"Run over HTTP, {queued} submissions queued", busy))
    idle_sb, busy_sb = statistics.median(sandbox_ms["idle"]), statistics.median(sandbox_ms["busy"])
    print(
        f"{'  queued while measuring':<34} min {min(depth_seen):.0f}, max {max(depth_seen):.0f} submissions; "
        f"busy / idle (p50) {statistics.median(busy) / statistics.median(idle):.2f}"
    )
    print(
        f"{'  compile+run in the sandbox (p50)':<34} idle {idle_sb:.0f} ms, busy {busy_sb:.0f} ms "
        f"(busy / idle {busy_sb / idle_sb:.2f}: the rest of the slowdown is waiting for a worker)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=20, help="Run samples per variant")
    parser.add_argument(
        "--per-client",
        type=int,
        default=1,
        help="submissions per client in each of the two rounds of a level",
    )
    parser.add_argument("--levels", default="1,4,16", help="concurrent clients to measure")
    parser.add_argument("--problem", default="global-norm-clipping", choices=sorted(SOLUTIONS))
    parser.add_argument("--queued", type=int, default=8, help="submissions queued during the queue phase")
    args = parser.parse_args()
    slug = args.problem
    code = (ROOT / SOLUTIONS[slug]).read_text()
    defaults = Settings()
    backend = choose_backend(defaults.sandbox, allow_insecure=defaults.insecure)
    concurrency = defaults.submission_concurrency
    print(
        f"backend {backend.name}; service and engine: {defaults.workers} warm workers, "
        f"{concurrency} submissions graded at once; problem {slug}"
    )
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as scratch:
        server = Server(
            Path(scratch),
            {
                "JUDGE_RATE_LIMIT": "1000000/minute",
                "JUDGE_ANONYMOUS_RATE_LIMIT": "1000000/minute",
                "JUDGE_QUEUE_SIZE": "256",
                "JUDGE_SANDBOX_SLOT_BASE": "100",
            },
        )
        engine = Engine(backend, workers=defaults.workers, slot_base=200)
        try:
            server.wait_ready(240)
            engine.wait_ready(240)
            with httpx.Client(base_url=server.url, timeout=180) as client:
                print("\n== Run (public examples), interleaved")
                run_phase(client, engine, slug, code, args.n, tally)
                print("\n== Submit: throughput and latency (POST, then wait for the result)")
                for clients in (int(c) for c in args.levels.split(",")):
                    # Two rounds in opposite orders (engine then HTTP, HTTP then engine): drift in the
                    # machine's load hits both alike.
                    http_n = engine_n = 0
                    http_s = engine_s = 0.0
                    http_lat: list[float] = []
                    engine_lat: list[float] = []
                    total = clients * args.per_client
                    for order in (("engine", "http"), ("http", "engine")):
                        for variant in order:
                            started = time.perf_counter()
                            if variant == "engine":
                                _, lat = submit_engine(engine, slug, code, min(clients, concurrency), total)
                                engine_s += time.perf_counter() - started
                                engine_n += total
                                engine_lat += lat
                            else:
                                _, lat = submit_http(server.url, slug, code, clients, args.per_client, tally)
                                http_s += time.perf_counter() - started
                                http_n += total
                                http_lat += lat
                    http_rate, engine_rate = http_n / http_s, engine_n / engine_s
                    ratio = http_rate / engine_rate
                    target = ""
                    if clients == 16:
                        target = f"  ({'meets' if ratio >= 0.9 else 'MISSES'} the target >= 0.90)"
                    p50, p95 = pct(http_lat, 0.5), pct(http_lat, 0.95)
                    http_part = f"HTTP {http_rate:5.2f}/s (p50 {p50:5.2f} s, p95 {p95:5.2f} s)"
                    engine_part = f"engine {engine_rate:5.2f}/s (p50 {pct(engine_lat, 0.5):5.2f} s)"
                    print(
                        f"{clients:>2} clients, {http_n:>3}+{engine_n:<3} submissions:  {http_part}   "
                        f"{engine_part}   HTTP/engine {ratio:.3f}{target}"
                    )
                print("\n== Run while submissions are queued")
                queue_phase(client, slug, code, max(5, args.n // 2), args.queued, tally)
        finally:
            engine.close()
            server.stop()
    errors = tally.errors()
    statuses = ", ".join(f"{s}: {n}" for s, n in sorted(tally.statuses.items()))
    print(f"\nHTTP statuses: {statuses}; errors other than 429: {errors or 'none'}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
