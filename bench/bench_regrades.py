"""What a problem regrade stores and costs, the scheme of before and gradings side by side, in one run.

    .venv/bin/python bench/bench_regrades.py [--submissions 1000] [--database-url URL]

Both schemes run on the same store code in one process, each on a fresh database (SQLite in a temporary
folder unless ``--database-url`` names an empty PostgreSQL database, used for both one after the other):
``submissions`` graded submissions of one problem (code and result of realistic sizes), then each is
regraded once and the regrade graded. Before gradings a regrade was a new submission naming its original
(``regrade_of``; the repository still writes such rows, so the old scheme's writes are reproduced exactly);
now it is a new grading of the same submission (``judge.store.gradings``: a problem regrade's job,
``advance`` in batches, then the worker's ``finish``). Printed: rows a listing counts, bytes stored per
regraded submission (SQLite: the file after VACUUM), and milliseconds per regrade queued and per regrade
stored, with the ratios new/old.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text

from judge.store import NewSubmission, Store, sqlite_url
from judge.store.gradings import GradingStore, ProblemVersion
from judge.store.regrade_jobs import RegradeJobs

OLD, NEW = ProblemVersion("a" * 64, 1), ProblemVersion("b" * 64, 2)
CODE = "def solve(tree, factor):\n    return jax.tree_util.tree_map(lambda x: x * factor, tree)\n" * 20
BATCH = 200


def _manifest(version: ProblemVersion) -> dict[str, Any]:
    return {"problem": "p", "problem_hash": version.hash, "problem_revision": version.revision}


def _result(verdict: str) -> dict[str, Any]:
    """About 12 KB of JSON, as a graded submission's result with 30 cases."""
    cases = [
        {"name": f"case-{i}", "verdict": verdict, "message": "max abs error 1.2e-07 within 1e-05 " * 8}
        for i in range(30)
    ]
    return {"problem": "p", "verdict": verdict, "passed": 30, "total": 30, "cases": cases}


@dataclass(frozen=True)
class Measured:
    listed: int
    bytes_per_submission: float
    queue_ms: float
    store_ms: float


def _graded(store: Store, n: int) -> list[str]:
    ids = []
    for _ in range(n):
        record = store.submissions.create(
            NewSubmission(problem="p", code=CODE, manifest=_manifest(OLD), key_id="k")
        )
        claim = store.attempts.claim(record.id)
        assert claim is not None
        store.attempts.finish(claim, _result("accepted"), "accepted", _manifest(OLD), ("result", {}))
        ids.append(record.id)
    return ids


def _size(store: Store) -> int:
    if store.dialect == "sqlite":
        with store.engine.connect() as connection:
            connection.exec_driver_sql("VACUUM")
            pages = connection.exec_driver_sql("PRAGMA page_count").scalar()
            size = connection.exec_driver_sql("PRAGMA page_size").scalar()
        return int(pages or 0) * int(size or 0)
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql("VACUUM FULL")  # outside a transaction, as VACUUM must be
        return int(connection.execute(text("SELECT pg_database_size(current_database())")).scalar() or 0)


def _old(store: Store, ids: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    regrades = []
    for sid in ids:
        original = store.submissions.get(sid)
        assert original is not None
        new = NewSubmission(
            problem="p", code=original.code, manifest=_manifest(NEW), key_id="k", regrade_of=sid
        )
        regrades.append(store.submissions.create(new).id)
    queued = time.perf_counter() - started
    started = time.perf_counter()
    for rid in regrades:
        claim = store.attempts.claim(rid)
        assert claim is not None
        store.attempts.finish(claim, _result("wrong_answer"), "wrong_answer", _manifest(NEW), ("result", {}))
    return queued, time.perf_counter() - started


def _new(store: Store, ids: list[str]) -> tuple[float, float]:
    gradings = GradingStore(store)
    jobs = RegradeJobs(store)
    job = jobs.create("p", NEW, force=False, notify=False, batch=len(ids), requested_by=None)
    started = time.perf_counter()
    queued = 0
    while batch := jobs.advance(job.id, BATCH):
        queued += len(batch)
    assert queued == len(ids)
    queue_s = time.perf_counter() - started
    started = time.perf_counter()
    for sid in ids:
        claim = store.attempts.claim(sid)
        pending = gradings.pending(sid)
        assert claim is not None and pending is not None
        result = _result("wrong_answer")
        gradings.finish(claim, pending, result, "wrong_answer", _manifest(NEW), ("result", {}))
    return queue_s, time.perf_counter() - started


def measure(url: str, n: int, new: bool) -> Measured:
    store = Store(url)
    store.migrate()
    try:
        ids = _graded(store, n)
        before = _size(store)
        queue_s, store_s = (_new if new else _old)(store, ids)
        after = _size(store)
        return Measured(
            len(store.submissions.ids()), (after - before) / n, queue_s * 1000 / n, store_s * 1000 / n
        )
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: SQLite files)")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-regrades-") as scratch:  # the SQLite files, removed
        folder = Path(scratch)
        for name, new in (("regrade_of (before)", False), ("gradings (now)", True)):
            url = args.database_url or sqlite_url(folder / f"{new}.sqlite3")
            if args.database_url:
                store = Store(url)
                with store.engine.begin() as connection:
                    connection.exec_driver_sql("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
                store.close()
            results[name] = measure(url, args.submissions, new)
    print(
        f"{args.submissions} submissions of one problem, each regraded once ({args.database_url or 'SQLite'})"
    )
    print(f"{'scheme':<22} {'listed':>8} {'bytes/regrade':>14} {'queue ms':>9} {'store ms':>9}")
    for name, m in results.items():
        print(
            f"{name:<22} {m.listed:>8} {m.bytes_per_submission:>14.0f} {m.queue_ms:>9.2f} {m.store_ms:>9.2f}"
        )
    old, now = results["regrade_of (before)"], results["gradings (now)"]
    ratios = {
        "listed": now.listed / old.listed,
        "bytes": now.bytes_per_submission / old.bytes_per_submission,
        "queue": now.queue_ms / old.queue_ms,
        "store": now.store_ms / old.store_ms,
    }
    print("ratios now/before: " + ", ".join(f"{name} {value:.2f}" for name, value in ratios.items()))


if __name__ == "__main__":
    main()
