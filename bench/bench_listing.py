"""Listing at a million: every filter of ``GET /api/v1/submissions``, alone and combined, with and without
``count=true``, on PostgreSQL (1,000,000 submissions) and SQLite (100,000); and the bytes a stored
submission takes.

Each database is filled in bulk (PostgreSQL by COPY, SQLite by executemany, indexes built after) with
rows of a platform's shape (``listing_rows.py``): 80% of them one API key's, four other keys share the
rest; 60 problems (a few popular), 5,000 external users (a few busy), 8 verdicts (one rare), courses and
assignments as tags, 1% regrades, the newest few still queued or running, dates over a year, code of 1-2 KB
and a result of 5-9 KB. Then each case is timed with the store the API uses (``Store.listing.page`` for a page
of 50, plus the count the route makes with ``count=true``), ``--repeat`` times after a warm-up: p50 and p95 in
ms against the target (PostgreSQL 50 ms, SQLite 100 ms).

Bytes per stored submission: a fresh database of each kind gets ``--stored`` submissions through the store
as the judge writes them (create with an idempotency key, claim, a status event, one event per case, the
result with its final event, a callback try), and the growth of every table and index (PostgreSQL
``pg_total_relation_size``, SQLite ``dbstat``) is divided among them; minus the code and the result JSON
a client reads, what is left must stay within 2 KB.

    .venv/bin/python bench/bench_listing.py                     # 1,000,000 on PostgreSQL, 100,000 on SQLite
    .venv/bin/python bench/bench_listing.py --quick --json out.json     # 20,000 rows each, for a test

PostgreSQL needs root here (it is started as the postgres user, as the tests do); without it only SQLite
is measured.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from listing_rows import (  # noqa: E402
    MAIN_KEY,
    RARE_VERDICT,
    START,
    Population,
    case_events,
    code_text,
    manifest_doc,
    result_doc,
)
from sqlalchemy import inspect as sa_inspect  # noqa: E402
from sqlalchemy import text  # noqa: E402

from judge.store import Cursor, IdempotencyKey, NewSubmission, Store, SubmissionFilter, sqlite_url  # noqa: E402
from judge.store.models import Submission, SubmissionTag  # noqa: E402
from tests import postgres  # noqa: E402

TARGET_MS = {"postgresql": 50.0, "sqlite": 100.0}
#: Bytes a stored submission may take beyond its code and the result a client reads.
BUDGET_BYTES = 2048
PAGE = 50
COLUMNS = [column.name for column in Submission.__table__.columns]
TAG_COLUMNS = [column.name for column in SubmissionTag.__table__.columns]


# ------------------------------------------------------------------------------------------- filling


def _tag_rows(row: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The ``submission_tags`` rows of a submission's row, in the order of TAG_COLUMNS (what the store
    writes with it, and the trigger of migration 0010 keeps: its owner, problem, time, status, verdict)."""
    tags = json.loads(row["tags"]) if row["tags"] else {}
    return [
        tuple({**row, "submission_id": row["id"], "name": name, "value": value}[c] for c in TAG_COLUMNS)
        for name, value in tags.items()
    ]


def fill_postgres(store: Store, population: Population) -> None:
    """COPY ``population``'s rows in, indexes dropped first and built after (as a restore does)."""
    has_tags = sa_inspect(store.engine).has_table("submission_tags")
    raw = store.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
            "AND tablename IN ('submissions', 'submission_tags') AND indexname NOT LIKE '%%pkey'"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        columns = ", ".join(COLUMNS)
        with cursor.copy(f"COPY submissions ({columns}) FROM STDIN") as copy:
            tags: list[tuple[Any, ...]] = []
            for index in range(population.rows):
                row = population.row(index)
                copy.write_row([row.get(c) for c in COLUMNS])
                if has_tags:
                    tags.extend(_tag_rows(row))
        if has_tags:
            with cursor.copy(f"COPY submission_tags ({', '.join(TAG_COLUMNS)}) FROM STDIN") as copy:
                for tag in tags:
                    copy.write_row(tag)
        for _, definition in indexes:
            cursor.execute(definition)
        raw.commit()
        raw.driver_connection.autocommit = True  # type: ignore[union-attr]
        cursor.execute("VACUUM ANALYZE")  # what autovacuum does after a load: the visibility map, stats
    finally:
        raw.close()


def _sqlite_time(value: Any) -> Any:
    return None if value is None else value.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")


def _sqlite_result() -> Callable[[str | None], Any]:
    """A result's JSON text as this checkout's store keeps it on SQLite: packed where it packs."""
    try:
        from judge.store.packed import pack
    except ImportError:  # an older checkout: JSON text
        return lambda text: text
    return lambda text: None if text is None else pack(json.loads(text))


def fill_sqlite(store: Store, population: Population) -> None:
    has_tags = sa_inspect(store.engine).has_table("submission_tags")
    stored_result = _sqlite_result()
    raw = store.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            "AND tbl_name IN ('submissions', 'submission_tags')"
        )
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        times = {"created_at", "started_at", "finished_at", "enqueued_at"}
        marks = ", ".join("?" for _ in COLUMNS)
        batch: list[tuple[Any, ...]] = []
        tags: list[tuple[Any, ...]] = []
        for index in range(population.rows):
            row = population.row(index)
            row["result"] = stored_result(row["result"])
            batch.append(tuple(_sqlite_time(row.get(c)) if c in times else row.get(c) for c in COLUMNS))
            if has_tags:
                tags.extend(
                    tuple(_sqlite_time(v) if c in times else v for c, v in zip(TAG_COLUMNS, tag, strict=True))
                    for tag in _tag_rows(row)
                )
            if len(batch) == 5000:
                cursor.executemany(f"INSERT INTO submissions ({', '.join(COLUMNS)}) VALUES ({marks})", batch)
                batch = []
        if batch:
            cursor.executemany(f"INSERT INTO submissions ({', '.join(COLUMNS)}) VALUES ({marks})", batch)
        if has_tags:
            cursor.executemany(
                f"INSERT INTO submission_tags ({', '.join(TAG_COLUMNS)}) "
                f"VALUES ({', '.join('?' for _ in TAG_COLUMNS)})",
                tags,
            )
        for _, definition in indexes:
            cursor.execute(definition)
        raw.commit()
        cursor.execute("ANALYZE")
    finally:
        raw.close()


# ------------------------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    name: str
    chosen: SubmissionFilter
    after: Cursor | None = None


def cases(store: Store, population: Population) -> list[Case]:
    """Every filter the API offers alone, and the combinations a platform uses, with values that match
    many rows, few, and none."""
    mine = SubmissionFilter(key_id=MAIN_KEY)
    newest = store.listing.page(mine, limit=1)[0].created_at
    month = (newest - timedelta(days=200), newest - timedelta(days=170))
    regraded = next(
        (sid for sid in population.originals if store.listing.page(replace(mine, regrade_of=sid), limit=1)),
        population.originals[0] if population.originals else "00000000-0000-4000-8000-000000000000",
    )
    middle = store.listing.page(replace(mine, created_before=START + (newest - START) / 2), limit=1)
    half = Cursor(middle[0].created_at, middle[0].id) if middle else None
    busy, rare_user = "learner-1", "learner-3999"
    return [
        Case("no filter (the key's newest)", mine),
        Case("cursor half-way", mine, half),
        Case("problem popular", replace(mine, problem="problem-0")),
        Case("problem rare", replace(mine, problem="problem-50")),
        Case("problem none", replace(mine, problem="problem-none")),
        Case("status done", replace(mine, status=_status("done"))),
        Case("status queued", replace(mine, status=_status("queued"))),
        Case("status failed", replace(mine, status=_status("failed"))),
        Case("verdict accepted", replace(mine, verdict="accepted")),
        Case("verdict rare", replace(mine, verdict=RARE_VERDICT)),
        Case("user busy", replace(mine, external_user=busy)),
        Case("user rare", replace(mine, external_user=rare_user)),
        Case("user none", replace(mine, external_user="nobody")),
        Case("tag course", replace(mine, tag=("course", "c3"))),
        Case("tag assignment", replace(mine, tag=("assignment", "c3-a7"))),
        Case("tag none", replace(mine, tag=("course", "none"))),
        Case("created_after (a week)", replace(mine, created_after=newest - timedelta(days=7))),
        Case("created_before (a month in)", replace(mine, created_before=START + timedelta(days=30))),
        Case("created a month", replace(mine, created_after=month[0], created_before=month[1])),
        Case("regrade_of", replace(mine, regrade_of=regraded)),
        Case("problem+status done", replace(mine, problem="problem-0", status=_status("done"))),
        Case("problem+status queued", replace(mine, problem="problem-0", status=_status("queued"))),
        Case("problem+verdict", replace(mine, problem="problem-0", verdict="wrong_answer")),
        Case("problem+verdict rare", replace(mine, problem="problem-1", verdict=RARE_VERDICT)),
        Case("user+problem", replace(mine, external_user=busy, problem="problem-2")),
        Case("user+verdict", replace(mine, external_user=busy, verdict="accepted")),
        Case("user+status", replace(mine, external_user=rare_user, status=_status("done"))),
        Case("tag+problem", replace(mine, tag=("course", "c3"), problem="problem-1")),
        Case("tag+user", replace(mine, tag=("assignment", "c3-a7"), external_user=busy)),
        Case("tag+verdict rare", replace(mine, tag=("course", "c3"), verdict=RARE_VERDICT)),
        Case("tag+verdict accepted", replace(mine, tag=("course", "c3"), verdict="accepted")),
        Case("tag+status done", replace(mine, tag=("course", "c3"), status=_status("done"))),
        Case("tag+status queued", replace(mine, tag=("course", "c3"), status=_status("queued"))),
        Case(
            "problem+month",
            replace(mine, problem="problem-0", created_after=month[0], created_before=month[1]),
        ),
        Case("user+week", replace(mine, external_user=busy, created_after=newest - timedelta(days=7))),
        Case(
            "verdict+month",
            replace(mine, verdict="accepted", created_after=month[0], created_before=month[1]),
        ),
        Case(
            "tag+month", replace(mine, tag=("course", "c3"), created_after=month[0], created_before=month[1])
        ),
        Case(
            "problem+verdict+tag",
            replace(mine, problem="problem-0", verdict="wrong_answer", tag=("course", "c3")),
        ),
    ]


def _status(value: str) -> Any:
    from judge.store import Status

    return Status(value)


def count_of(store: Store) -> Callable[[SubmissionFilter], Any]:
    """What ``count=true`` runs: the store's capped count where it has one, else its exact count."""
    capped = getattr(store, "total", None)
    return capped if capped is not None else store.listing.count_matching


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return statistics.median(ordered), p95


def time_cases(store: Store, chosen: Iterable[Case], repeat: int) -> list[dict[str, Any]]:
    count = count_of(store)
    rows: list[dict[str, Any]] = []
    for case in chosen:
        for counted in (False, True):

            def listing(case: Case = case, counted: bool = counted) -> Any:
                page = store.listing.page(case.chosen, after=case.after, limit=PAGE + 1)
                return (page, count(case.chosen)) if counted else page

            answer = listing()  # warm-up
            samples = []
            for _ in range(repeat):
                began = time.perf_counter()
                listing()
                samples.append((time.perf_counter() - began) * 1000)
            p50, p95 = percentiles(samples)
            found = answer[0] if counted else answer
            total = answer[1] if counted else None
            rows.append(
                {
                    "case": case.name,
                    "count": counted,
                    "items": len(found[:PAGE]),
                    "total": list(total) if isinstance(total, tuple) else total,
                    "p50_ms": round(p50, 2),
                    "p95_ms": round(p95, 2),
                }
            )
    return rows


# ------------------------------------------------------------------------------------------- bytes


def _sizes(store: Store) -> dict[str, int]:
    with store.engine.connect() as connection:
        if store.dialect == "postgresql":
            tables = connection.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            ).scalars()
            return {
                t: int(connection.execute(text("SELECT pg_total_relation_size(:t)"), {"t": t}).scalar() or 0)
                for t in list(tables)
                if t != "alembic_version"
            }
        found = connection.execute(
            text(
                "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d "
                "LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY 1"
            )
        )
        return {str(name): int(size) for name, size in found}


def _compact(store: Store) -> None:
    """Leave in the files only what the rows take: in steady state the space of deleted rows (a
    grading's folded events, expired idempotency keys) is reused by new ones. PostgreSQL: VACUUM FULL
    (dead rows, and the free space and visibility maps made once per table); SQLite: its log checkpointed
    (``dbstat`` counts the pages of each table and index, free pages not)."""
    if store.dialect == "postgresql":
        with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM FULL"))
            connection.execute(text("VACUUM ANALYZE"))
    else:
        with store.engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def stored_bytes(store: Store, submissions: int, seed: int) -> dict[str, Any]:
    """Bytes per submission stored as the judge stores it, by table; the code and result JSON a client
    reads; and what is left beyond them (the budget)."""
    from judge.store import Status

    rng = random.Random(seed)
    _compact(store)
    before = _sizes(store)
    code_bytes = result_bytes = 0
    for index in range(submissions):
        problem = f"problem-{index % 7}"
        verdict = "accepted" if index % 3 else "wrong_answer"
        code = code_text(rng)
        result = result_doc(rng, problem, verdict)
        manifest = manifest_doc(problem)
        record = store.submissions.create(
            NewSubmission(
                problem=problem,
                code=code,
                manifest=manifest,
                key_name=MAIN_KEY,
                key_id=MAIN_KEY,
                callback_url="https://platform.example/judge-hook",
                external_user=f"learner-{index % 50}",
                tags={"course": "c1", "assignment": f"c1-a{index % 9}"},
            ),
            IdempotencyKey(f"key:{MAIN_KEY}", f"retry-{index}-{rng.getrandbits(64):x}", "f" * 64),
        )
        claim = store.attempts.claim(record.id)
        assert claim is not None
        events = case_events(result)
        for kind, data in events[:-1]:
            store.events.append(claim, kind, data)
        store.attempts.finish(claim, result, verdict, manifest, events[-1])
        store.callbacks.record_attempt(record.id, 1, "https://platform.example/judge-hook", 204, None)
        code_bytes += len(code.encode())
        result_bytes += len(json.dumps(result, separators=(",", ":")).encode())
        got = store.submissions.get(record.id)
        assert got is not None and got.status is Status.DONE and got.result == result
    _compact(store)
    after = _sizes(store)
    per_table = {
        name: round((after.get(name, 0) - before.get(name, 0)) / submissions)
        for name in sorted(set(after) | set(before))
        if after.get(name, 0) != before.get(name, 0)
    }
    total = sum(per_table.values())
    code, result = round(code_bytes / submissions), round(result_bytes / submissions)
    stored = _columns(store)
    return {
        # The rest beside the code and result as stored (compressed where the store compresses them):
        # the row's other columns, its indexes, events, tags, idempotency key and callback try.
        "beyond_stored_code_and_result": total - stored["code"] - stored["result"],
        "stored_columns": stored,
        "submissions": submissions,
        "per_table": per_table,
        "total": total,
        "code": code,
        "result_json": result,
        "beyond_code_and_result": total - code - result,
        "budget": BUDGET_BYTES,
    }


# ------------------------------------------------------------------------------------------- main


def run(dialect: str, url: str, rows: int, repeat: int, stored: int, seed: int) -> dict[str, Any]:
    store = Store(url)
    try:
        store.migrate()
        began = time.perf_counter()
        population = Population(seed, rows)
        (fill_postgres if dialect == "postgresql" else fill_sqlite)(store, population)
        filled = time.perf_counter() - began
        print(f"{dialect}: {rows:,} submissions stored in {filled:.0f} s", flush=True)
        timings = time_cases(store, cases(store, population), repeat)
        filled_bytes = {"per_row": round(sum(_sizes(store).values()) / rows), "columns": _columns(store)}
    finally:
        store.close()
    return {"rows": rows, "fill_s": round(filled, 1), "timings": timings, "filled_bytes": filled_bytes}


def _columns(store: Store) -> dict[str, int]:
    """Mean stored bytes of the large columns of the filled table (PostgreSQL ``pg_column_size``: after
    compression; SQLite ``length``: bytes of a BLOB, characters of text)."""
    size = "pg_column_size" if store.dialect == "postgresql" else "length"
    names = ("code", "result", "manifest", "tags")
    query = "SELECT " + ", ".join(f"avg({size}({name}))" for name in names) + " FROM submissions"
    with store.engine.connect() as connection:
        row = connection.execute(text(query)).one()
    return {name: round(float(value or 0)) for name, value in zip(names, row, strict=True)}


def measure_bytes(dialect: str, url: str, stored: int, seed: int) -> dict[str, Any]:
    store = Store(url)
    try:
        store.migrate()
        return stored_bytes(store, stored, seed)
    finally:
        store.close()


def report(results: dict[str, Any]) -> bool:
    """Print the tables; True when every case is within its target and every store within the budget."""
    within = True
    for dialect, measured in results.items():
        target = TARGET_MS[dialect]
        print(
            f"\n{dialect}, {measured['rows']:,} submissions: ms per page of {PAGE} (p50 / p95), "
            f"target p95 {target:g} ms"
        )
        print(f"{'case':<30}{'items':>6}{'p50':>9}{'p95':>9}{'+count p50':>12}{'p95':>9}{'total':>16}  ok")
        timings = measured["timings"]
        for plain, counted in zip(timings[::2], timings[1::2], strict=True):
            ok = plain["p95_ms"] <= target and counted["p95_ms"] <= target
            within &= ok
            total = counted["total"]
            shown = f"{total[0]:,}{'+' if total[1] else ''}" if isinstance(total, list) else f"{total:,}"
            print(
                f"{plain['case']:<30}{plain['items']:>6}{plain['p50_ms']:>9.1f}{plain['p95_ms']:>9.1f}"
                f"{counted['p50_ms']:>12.1f}{counted['p95_ms']:>9.1f}{shown:>16}  {'yes' if ok else 'NO'}"
            )
        filled = measured.get("filled_bytes")
        if filled:
            columns = ", ".join(f"{name} {size:,}" for name, size in filled["columns"].items())
            print(f"filled database: {filled['per_row']:,} bytes per submission (mean columns: {columns})")
        sizes = measured["bytes"]
        ok = sizes["beyond_code_and_result"] <= sizes["budget"]
        within &= ok
        tables = ", ".join(f"{name} {size:,}" for name, size in sizes["per_table"].items())
        print(
            f"bytes per stored submission ({sizes['submissions']} stored as the judge does): "
            f"{sizes['total']:,} "
            f"({tables}); code {sizes['code']:,}, result JSON {sizes['result_json']:,}; beyond them "
            f"{sizes['beyond_code_and_result']:,} (budget {sizes['budget']:,}): {'yes' if ok else 'NO'}; "
            f"beyond code and result as stored ({sizes['stored_columns']['code']:,} and "
            f"{sizes['stored_columns']['result']:,}): {sizes['beyond_stored_code_and_result']:,}"
        )
    return within


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres-rows", type=int, default=1_000_000)
    parser.add_argument("--sqlite-rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, help="timed runs of each case after a warm-up (20; --quick 5)")
    parser.add_argument("--stored", type=int, help="submissions stored to measure bytes (400; --quick 150)")
    parser.add_argument("--quick", action="store_true", help="20,000 rows each, 5 repeats, 60 stored")
    parser.add_argument("--only", choices=("postgresql", "sqlite"), help="one database only")
    parser.add_argument("--rows", type=int, help="submissions on each database (after --quick)")
    parser.add_argument("--seed", type=int, default=40)
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args()
    if args.quick:
        args.postgres_rows = args.sqlite_rows = 20_000
    args.repeat = args.repeat or (5 if args.quick else 20)
    args.stored = args.stored or (150 if args.quick else 400)
    if args.rows is not None:
        args.postgres_rows = args.sqlite_rows = args.rows
    reason = postgres.why_unavailable()
    server = None if reason is not None or args.only == "sqlite" else postgres.PostgresServer()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-listing-") as tmp:
        try:
            if server is not None:
                server.start()
            elif args.only != "sqlite":
                print(f"PostgreSQL skipped: {reason}")
            plan: list[tuple[str, Callable[[str], str], int]] = []
            if args.only != "postgresql":
                plan.append(
                    ("sqlite", lambda name: sqlite_url(Path(tmp) / f"{name}.sqlite3"), args.sqlite_rows)
                )
            if server is not None:
                plan.append(("postgresql", lambda _name: server.new_database(), args.postgres_rows))
            for dialect, make_url, rows in plan:
                results[dialect] = run(
                    dialect, make_url("listing"), rows, args.repeat, args.stored, args.seed
                )
                results[dialect]["bytes"] = measure_bytes(dialect, make_url("bytes"), args.stored, args.seed)
        finally:
            if server is not None:
                server.stop()
    within = report(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2))
    print("\nall within targets" if within else "\nsome NOT within targets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
