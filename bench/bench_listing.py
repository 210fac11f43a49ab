"""Listing submissions by cursor: 100,000 stored against 1,000, on SQLite and PostgreSQL, side by side.

Four databases are filled in one run (SQLite files and a PostgreSQL started here from Debian's package,
as the tests do, removed at the end): one API key holds every row (``--big`` and ``--small`` of them),
another key as many again, so a filter has something to skip. Rows carry code and a result of realistic
size. Per database, timed with the store the API uses (``Store.page``, the query behind
``GET /api/submissions``):

  first     the first page (``--limit`` items, newest first)
  walk      pages followed by cursor from the start (``--pages`` of them), ms per page
  deep      the same walk starting from a cursor half-way through the key's rows
  filtered  a page filtered by external user (one user of 100)
  count     ``count=true`` over every row of the key (the one part that grows with the rows)

and the ratio big / small of each, which stays near 1 for the cursor pages (an index range scan):

    .venv/bin/python bench/bench_listing.py [--big 100000] [--small 1000] [--limit 50] [--pages 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from judge.store import Cursor, Store, SubmissionFilter, sqlite_url  # noqa: E402
from judge.store.models import Submission  # noqa: E402
from tests import postgres  # noqa: E402

CODE = "import jax\nimport jax.numpy as jnp\n\n\ndef f(x):\n    return jax.tree.map(lambda a: a * 2, x)\n" * 4
RESULT = {"verdict": "accepted", "cases": [{"name": f"case-{i}", "verdict": "accepted"} for i in range(12)]}


def fill(store: Store, key: str, rows: int) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    batch: list[dict[str, Any]] = []
    with store.engine.begin() as connection:
        for index in range(rows):
            created = start + timedelta(seconds=index // 3)  # ties on created_at: the id orders them
            batch.append(
                {
                    "id": str(uuid.uuid4()),
                    "problem": f"problem-{index % 20}",
                    "code": CODE,
                    "status": "done",
                    "verdict": "accepted" if index % 4 else "wrong_answer",
                    "result": RESULT,
                    "attempts": 1,
                    "manifest": {"problem_hash": "x" * 64},
                    "key_name": key,
                    "key_id": key,
                    "created_at": created,
                    "started_at": created,
                    "finished_at": created,
                    "external_user": f"user-{index % 100}",
                    "tags": {"course": f"c{index % 5}"},
                }
            )
            if len(batch) == 5000:
                connection.execute(insert(Submission), batch)
                batch = []
        if batch:
            connection.execute(insert(Submission), batch)


def timed(action: Callable[[], object], repeat: int = 5) -> float:
    """Median milliseconds of ``action``."""
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def walk(store: Store, chosen: SubmissionFilter, after: Cursor | None, pages: int, limit: int) -> float:
    """Milliseconds per page of ``pages`` pages followed by cursor from ``after``."""
    began = time.perf_counter()
    walked = 0
    for _ in range(pages):
        page = store.page(chosen, after=after, limit=limit)
        walked += 1
        if len(page) < limit:
            break
        after = Cursor(page[-1].created_at, page[-1].id)
    return (time.perf_counter() - began) * 1000 / walked


def measure(store: Store, rows: int, limit: int, pages: int) -> dict[str, float]:
    mine = SubmissionFilter(key_id="platform")
    middle = store.page(mine, limit=1)[0]
    half = Cursor(middle.created_at - timedelta(seconds=rows // 6), middle.id)
    walk(store, mine, None, 3, limit)  # warm the caches
    return {
        "first": timed(lambda: store.page(mine, limit=limit)),
        "walk": statistics.median(walk(store, mine, None, pages, limit) for _ in range(3)),
        "deep": statistics.median(walk(store, mine, half, pages, limit) for _ in range(3)),
        "filtered": timed(
            lambda: store.page(SubmissionFilter("platform", external_user="user-7"), limit=limit)
        ),
        "count": timed(lambda: store.count_matching(mine), repeat=3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--pages", type=int, default=40)
    args = parser.parse_args()
    reason = postgres.why_unavailable()
    server = None if reason is not None else postgres.PostgresServer()
    results: dict[tuple[str, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-listing-") as tmp:
        try:
            urls: dict[str, Callable[[int], str]] = {
                "sqlite": lambda n: sqlite_url(Path(tmp) / f"{n}.sqlite3")
            }
            if server is not None:
                server.start()
                urls["postgresql"] = lambda _n: server.new_database()
            else:
                print(f"PostgreSQL skipped: {reason}")
            for dialect, make_url in urls.items():
                for rows in (args.small, args.big):
                    store = Store(make_url(rows))
                    try:
                        store.migrate()
                        began = time.perf_counter()
                        fill(store, "platform", rows)
                        fill(store, "other", rows)
                        if dialect == "postgresql":
                            with store.engine.begin() as connection:
                                connection.exec_driver_sql("ANALYZE submissions")
                        print(f"{dialect}: stored {2 * rows:,} rows in {time.perf_counter() - began:.1f} s")
                        results[(dialect, rows)] = measure(store, rows, args.limit, args.pages)
                    finally:
                        store.close()
        finally:
            if server is not None:
                server.stop()
    print(f"\nms per page of {args.limit} (median), {args.small:,} vs {args.big:,} rows of one key:")
    print(f"{'database':<12}{'measure':<10}{args.small:>12,}{args.big:>12,}{'ratio':>8}")
    for dialect in urls:
        small, big = results[(dialect, args.small)], results[(dialect, args.big)]
        for name in small:
            ratio = big[name] / small[name] if small[name] else float("nan")
            print(f"{dialect:<12}{name:<10}{small[name]:>12.2f}{big[name]:>12.2f}{ratio:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
