"""Scale-out, side by side in one run: the embedded service against the distributed stack.

Three stacks run at once, each idle while another is measured (rounds interleave them):

  embedded    one ``judge serve`` (SQLite, in-process dispatch, 1 grading slot)
  dist-1      ``judge serve`` + one ``judge worker -c 1`` (Celery on Redis, PostgreSQL)
  dist-2      ``judge serve`` + two ``judge worker -c 1``, each pinned to a core of its own (taskset)

Redis and PostgreSQL are started here from Debian's packages (as the tests do) and removed at the end.
Per stack and round: ``--batch`` submissions POSTed at once, each waited for (``?wait=``): submissions per
second (batch / time to the last result) and latency p50/p95 (POST to result). Then, one submission at a
time on an idle stack: the dispatch delay (stored ``started_at - created_at``: accepted -> a grader claimed
it) and the notice delay (stored ``finished_at`` -> the waiting client saw it); the queue's added latency is
the distributed stacks' dispatch + notice delay minus the embedded one's.

    .venv/bin/python bench/bench_scale.py [--batch 8] [--rounds 2] [--singles 10]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.store import Store  # noqa: E402
from tests import postgres, redis_server  # noqa: E402
from tests.scale_support import NodeProcess  # noqa: E402
from tests.service_support import ServeProcess  # noqa: E402

SOLUTION = ROOT / "problems/global-norm-clipping/solutions/accepted/tree_map_minimum.py"
PROBLEM = "global-norm-clipping"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Stack:
    def __init__(self, name: str, api: ServeProcess, workers: list[NodeProcess], store: Store) -> None:
        self.name = name
        self.api = api
        self.workers = workers
        self.store = store
        self.batches: list[tuple[float, list[float]]] = []  # (submissions/s, latencies)
        self.dispatch: list[float] = []
        self.notice: list[float] = []

    def submit_and_wait(self, client: httpx.Client, code: str) -> tuple[str, float, float]:
        started = time.monotonic()
        sid = client.post("/api/submissions", json={"problem": PROBLEM, "code": code}).json()["id"]
        while True:
            body = client.get(f"/api/submissions/{sid}", params={"wait": 60}).json()
            if body["status"] in ("done", "failed"):
                break
        seen = time.time()
        if body.get("verdict") != "accepted":
            raise SystemExit(f"{self.name}: unexpected result {body}")
        return sid, time.monotonic() - started, seen

    def batch(self, n: int, tag: str) -> None:
        latencies: list[float] = []
        lock = threading.Lock()

        def one(i: int) -> None:
            with httpx.Client(base_url=self.api.url, timeout=120) as client:
                _sid, latency, _seen = self.submit_and_wait(client, f"{SOLUTION.read_text()}\n# {tag} {i}\n")
            with lock:
                latencies.append(latency)

        started = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.batches.append((n / (time.monotonic() - started), latencies))

    def single(self, tag: str) -> None:
        with httpx.Client(base_url=self.api.url, timeout=120) as client:
            sid, _latency, seen = self.submit_and_wait(client, f"{SOLUTION.read_text()}\n# {tag}\n")
        record = self.store.submissions.get(sid)
        assert record is not None and record.started_at and record.finished_at
        self.dispatch.append((record.started_at - record.created_at).total_seconds())
        self.notice.append(seen - _epoch(record.finished_at))


def _epoch(moment: datetime) -> float:
    return moment.timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--singles", type=int, default=10)
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    redis = redis_server.RedisServer()
    pg = postgres.PostgresServer()
    stacks: list[Stack] = []
    processes: list[Any] = []
    try:
        redis.start()
        pg.start()
        quick = {
            "JUDGE_LOG_LEVEL": "warning",
            "JUDGE_RATE_LIMIT": "100000/minute",
            "JUDGE_ANONYMOUS_RATE_LIMIT": "100000/minute",
            "JUDGE_SUBMISSION_CONCURRENCY": "1",
        }
        embedded = ServeProcess(base / "embedded", JUDGE_SANDBOX_SLOT_BASE="700", **quick)
        processes.append(embedded)
        embedded.start()
        stacks.append(
            Stack("embedded", embedded, [], Store(f"sqlite:///{base / 'embedded' / 'judge.sqlite3'}"))
        )
        slot = 710
        for name, count, db in (("dist-1", 1, 1), ("dist-2", 2, 2)):
            url = pg.new_database()
            env = {
                **quick,
                "JUDGE_QUEUE_URL": f"redis://127.0.0.1:{redis.port}/{db}",
                "JUDGE_DATABASE_URL": url,
            }
            api = ServeProcess(base / name, JUDGE_SANDBOX_SLOT_BASE=str(slot), **env)
            processes.append(api)
            api.start()
            workers = []
            for n in range(count):
                slot += 10
                worker = NodeProcess(base / f"{name}-w{n}", JUDGE_SANDBOX_SLOT_BASE=str(slot), **env)
                processes.append(worker)
                worker.start()
                if count > 1 and shutil.which("taskset"):  # one core each (its sandboxes inherit it)
                    os.system(f"taskset -a -p -c {n % (os.cpu_count() or 1)} {worker.proc.pid} >/dev/null")
                workers.append(worker)
            slot += 10
            stacks.append(Stack(name, api, workers, Store(url)))
        for stack in stacks:  # warm every path once
            stack.single("warm-up")
            stack.dispatch.clear()
            stack.notice.clear()
        for r in range(args.rounds):
            order = stacks if r % 2 == 0 else stacks[::-1]
            for stack in order:
                stack.batch(args.batch, f"round {r}")
        for i in range(args.singles):
            for stack in stacks if i % 2 == 0 else stacks[::-1]:
                stack.single(f"single {i}")

        print(
            f"{args.rounds} rounds x {args.batch} concurrent submissions; {args.singles} single submissions"
        )
        print(
            f"{'stack':10} {'subm/s':>8} {'p50 s':>8} {'p95 s':>8} {'dispatch p50 ms':>16} "
            f"{'notice p50 ms':>14}"
        )
        for stack in stacks:
            rates = [rate for rate, _ in stack.batches]
            latencies = [x for _, lat in stack.batches for x in lat]
            print(
                f"{stack.name:10} {statistics.mean(rates):8.2f} {pct(latencies, 0.5):8.2f} "
                f"{pct(latencies, 0.95):8.2f} {1000 * pct(stack.dispatch, 0.5):16.1f} "
                f"{1000 * pct(stack.notice, 0.5):14.1f}"
            )
        local = pct(stacks[0].dispatch, 0.5) + pct(stacks[0].notice, 0.5)
        for stack in stacks[1:]:
            added = pct(stack.dispatch, 0.5) + pct(stack.notice, 0.5) - local
            print(
                f"queue added latency p50 ({stack.name} vs embedded): {1000 * added:.1f} ms (target < 20 ms)"
            )
        one, two = (statistics.mean(r for r, _ in s.batches) for s in stacks[1:])
        print(f"throughput two workers / one worker: {two / one:.2f}x")
    finally:
        for process in reversed(processes):
            with contextlib.suppress(Exception):
                process.stop()
        for stack in stacks:
            stack.store.close()
        redis.stop()
        pg.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
