"""Listing at a million, the store's side, on SQLite and a real PostgreSQL: tag filters read
``submission_tags``, counts stop at a cap, a finished grading's events are folded into one row and read
back unchanged, results are packed on SQLite, migrations 0009 and 0010 carry existing rows over (and
back), tag rows follow their submission's status and verdict, and a stored submission takes at most 2 KB
beyond its code and result (measured as ``bench/bench_listing.py`` does; its ``--quick`` mode runs here
too).
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import delete, func, select, text, update

from judge.store import Cursor, NewSubmission, Status, Store, SubmissionFilter
from judge.store import pages as store_pages
from judge.store.migrate import config, current, upgrade
from judge.store.models import Submission, SubmissionEvent, SubmissionTag

pytest_plugins = ("tests.stores",)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_listing  # noqa: E402
from listing_rows import case_events, result_doc  # noqa: E402


def new(key: str = "k", **kw: Any) -> NewSubmission:
    return NewSubmission(problem="p", code="def f(x):\n    return x\n", manifest={"m": 1}, key_id=key, **kw)


def listed(store: Store, chosen: SubmissionFilter, limit: int = 2) -> list[str]:
    """Every id of a listing, page by page (by cursor), newest first."""
    ids: list[str] = []
    after = None
    while True:
        page = store.listing.page(chosen, after=after, limit=limit)
        ids += [record.id for record in page]
        if len(page) < limit:
            return ids
        after = Cursor(page[-1].created_at, page[-1].id)


def rows(store: Store, model: Any, submission_id: str) -> int:
    with store.engine.connect() as connection:
        query = select(func.count()).select_from(model).where(model.submission_id == submission_id)
        return int(connection.scalar(query) or 0)


# ------------------------------------------------------------------------------------------- tags


def test_a_tag_filter_reads_the_tag_rows_written_with_the_submission(store: Store) -> None:
    made = [
        store.submissions.create(new(tags={"course": "c1" if i % 2 else "c2", "n": str(i)})).id
        for i in range(7)
    ]
    store.submissions.create(new(key="other", tags={"course": "c1"}))
    odd = list(reversed(made[1::2]))
    assert listed(store, SubmissionFilter("k", tag=("course", "c1"))) == odd  # by cursor, newest first
    assert rows(store, SubmissionTag, made[0]) == 2
    # The filter reads submission_tags, not the JSON column: without its rows a submission is not found
    # by its tag, and a tag only in the JSON is not found either.
    with store.engine.begin() as connection:
        connection.execute(delete(SubmissionTag).where(SubmissionTag.submission_id == made[1]))
        connection.execute(update(Submission).where(Submission.id == made[0]).values(tags={"course": "c1"}))
    assert listed(store, SubmissionFilter("k", tag=("course", "c1"))) == odd[:-1]
    assert store.listing.total(SubmissionFilter("k", tag=("course", "c1"))) == (len(odd) - 1, False)
    assert store.submissions.get(made[1]).tags == {"course": "c1", "n": "1"}  # type: ignore[union-attr]
    # Combined with other filters, and counted with them.
    chosen = SubmissionFilter("k", tag=("n", "4"), problem="p", status=Status.QUEUED)
    assert listed(store, chosen) == [made[4]] and store.listing.total(chosen) == (1, False)
    assert listed(store, SubmissionFilter("k", tag=("n", "4"), problem="q")) == []
    # Beside a narrow filter the tag is looked up per submission; beside a broad one (or a problem, or
    # times) the tag's rows are walked: the same answers.
    users = [
        store.submissions.create(new(tags={"course": "c1"}, external_user=f"u{i % 2}")).id for i in range(4)
    ]
    by_user = SubmissionFilter("k", tag=("course", "c1"), external_user="u1")
    assert listed(store, by_user) == [users[3], users[1]] and store.listing.total(by_user) == (2, False)
    by_problem = SubmissionFilter("k", tag=("course", "c1"), problem="p")
    assert listed(store, by_problem) == list(reversed(users)) + odd[:-1]
    assert store.listing.total(by_problem) == (len(users) + len(odd) - 1, False)
    # Deleting a submission deletes its tag rows.
    assert store.deletion.delete(made[4])
    assert rows(store, SubmissionTag, made[4]) == 0


def test_a_tag_beside_a_status_or_verdict_is_served_each_way(store: Store) -> None:
    """Broad (done, accepted): the tag's rows walked, each submission checked; narrow (failed, a rare
    verdict): that filter's rows walked, each tag looked up. Both give what the filters say."""
    graded: dict[str, str] = {}
    for i, verdict in enumerate(("accepted", "wrong_answer", "accepted", "output_limit_exceeded", None)):
        record = store.submissions.create(new(tags={"course": "c1" if i != 2 else "c2"}))
        claim = store.attempts.claim(record.id)
        assert claim is not None
        if verdict is None:
            store.attempts.fail(claim, "gave up", ("failed", {"status": "failed", "error": "gave up"}))
        else:
            store.attempts.finish(
                claim, {"verdict": verdict}, verdict, {"m": 1}, ("result", {"status": "done"})
            )
        graded[record.id] = verdict or "failed"
    ids = list(graded)
    course = ("course", "c1")
    cases = {
        SubmissionFilter("k", tag=course, verdict="accepted"): [ids[0]],
        SubmissionFilter("k", tag=course, status=Status.DONE): [ids[3], ids[1], ids[0]],
        SubmissionFilter("k", tag=course, status=Status.DONE, verdict="wrong_answer", problem="p"): [ids[1]],
        SubmissionFilter("k", tag=course, verdict="output_limit_exceeded"): [ids[3]],
        SubmissionFilter("k", tag=course, status=Status.FAILED): [ids[4]],
        SubmissionFilter("k", tag=("course", "c2"), verdict="output_limit_exceeded"): [],
    }
    for chosen, expected in cases.items():
        assert listed(store, chosen) == expected, chosen
        assert store.listing.total(chosen) == (len(expected), False), chosen


def unequal_tag_rows(store: Store) -> int:
    """Tag rows whose status or verdict differs from their submission's."""
    query = text(
        "SELECT count(*) FROM submission_tags t JOIN submissions s ON s.id = t.submission_id "
        "WHERE t.status <> s.status OR (t.verdict IS NULL) <> (s.verdict IS NULL) OR t.verdict <> s.verdict"
    )
    with store.engine.connect() as connection:
        return int(connection.execute(query).scalar() or 0)


def test_the_tag_rows_follow_their_submissions_status_and_verdict(store: Store) -> None:
    """Every writer of a status or a verdict keeps the tag rows' copy equal (a trigger of migration 0010):
    claim, release, finish, fail, a regrade asked, graded and failed, a lost claim put back, and a plain
    UPDATE no store method makes; a tag filter beside a status or a verdict follows."""
    from judge.store.gradings import GradingStore, ProblemVersion

    gradings = GradingStore(store)
    course = ("course", "c1")
    ids = [store.submissions.create(new(tags={"course": "c1", "n": str(i)})).id for i in range(4)]
    untagged = store.submissions.create(new()).id
    assert unequal_tag_rows(store) == 0
    claims = [store.attempts.claim(sid, node="n1") for sid in ids]
    assert all(claims) and unequal_tag_rows(store) == 0
    assert listed(store, SubmissionFilter("k", tag=course, status=Status.RUNNING)) == list(reversed(ids))
    assert store.attempts.release(claims[3])  # type: ignore[arg-type]
    assert store.attempts.finish(claims[0], {"v": 1}, "accepted", {"m": 1}, ("result", {}))  # type: ignore[arg-type]
    assert store.attempts.finish(claims[1], {"v": 1}, "wrong_answer", {"m": 1}, ("result", {}))  # type: ignore[arg-type]
    assert store.attempts.fail(claims[2], "gave up", ("failed", {"status": "failed"}))  # type: ignore[arg-type]
    assert unequal_tag_rows(store) == 0
    by = {
        "accepted": SubmissionFilter("k", tag=course, verdict="accepted"),
        "done": SubmissionFilter("k", tag=course, status=Status.DONE),
        "queued": SubmissionFilter("k", tag=course, status=Status.QUEUED),
    }
    assert listed(store, by["accepted"]) == [ids[0]] and store.listing.total(by["accepted"]) == (1, False)
    assert listed(store, by["done"]) == [ids[1], ids[0]]
    assert listed(store, by["queued"]) == [ids[3]]
    # A regrade: queued again with its verdict kept, then graded to another verdict.
    assert gradings.request(ids[0], ProblemVersion("b" * 64, 2)) == 2
    assert unequal_tag_rows(store) == 0 and listed(store, by["queued"]) == [ids[3], ids[0]]
    claim = store.attempts.claim(ids[0])
    pending = gradings.pending(ids[0])
    assert claim is not None and pending is not None
    assert gradings.finish(claim, pending, {"v": 2}, "wrong_answer", {"m": 2}, ("result", {}))
    assert unequal_tag_rows(store) == 0 and listed(store, by["accepted"]) == []
    # A claim lost with its node is put back; a write no store method makes is followed too.
    lost = store.attempts.claim(ids[3], node="gone")
    assert lost is not None and store.attempts.release_node("gone") == [ids[3]]
    with store.engine.begin() as connection:
        connection.execute(update(Submission).where(Submission.id == ids[3]).values(verdict="accepted"))
        connection.execute(update(Submission).where(Submission.id == untagged).values(verdict="accepted"))
    assert unequal_tag_rows(store) == 0 and listed(store, by["accepted"]) == [ids[3]]


def test_a_count_stops_at_its_cap_and_says_so(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        store.submissions.create(new(tags={"course": "c1"}, external_user=f"u{i % 2}"))
    everything = SubmissionFilter("k")
    assert store.listing.total(everything) == (6, False)
    assert store.listing.total(everything, most=6) == (6, False)
    assert store.listing.total(everything, most=5) == (5, True)
    # The tag-and-time count reads the tag rows alone; the others the submissions: capped alike.
    week_ago = datetime.now(UTC) - timedelta(days=7)
    assert store.listing.total(
        SubmissionFilter("k", tag=("course", "c1"), created_after=week_ago), most=4
    ) == (
        4,
        True,
    )
    assert store.listing.total(SubmissionFilter("k", tag=("course", "c1"), created_before=week_ago)) == (
        0,
        False,
    )
    assert store.listing.total(SubmissionFilter("k", tag=("course", "c1"), external_user="u1"), most=2) == (
        2,
        True,
    )
    assert store.listing.total(SubmissionFilter("k", tag=("course", "c1"), external_user="u1")) == (3, False)
    assert store.listing.count_matching(SubmissionFilter("k", tag=("course", "c1"))) == 6
    monkeypatch.setattr(store_pages, "COUNT_MAX", 3)
    assert store.listing.total(everything) == (3, True)


# ------------------------------------------------------------------------------------------- events


def _grade(store: Store, result: dict[str, Any], *, replace_case: int | None = None) -> tuple[str, list[Any]]:
    """A submission graded as the judge does it; the events as a stream read them while it ran."""
    record = store.submissions.create(new())
    claim = store.attempts.claim(record.id)
    assert claim is not None
    events = case_events(result)
    for kind, data in events[:-1]:
        if replace_case is not None and data.get("index") == replace_case:
            data = {"index": replace_case, "case": {"name": "bare", "verdict": "runtime_error"}}
        store.events.append(claim, kind, data)
    during = [(e.id, e.kind, e.data) for e in store.events.after(record.id)]
    assert store.attempts.finish(claim, result, result["verdict"], {"m": 1}, events[-1])
    return record.id, during


def test_a_finished_gradings_events_are_one_row_read_back_unchanged(store: Store) -> None:
    result = result_doc(__import__("random").Random(1), "p", "wrong_answer")
    sid, during = _grade(store, result, replace_case=2)
    after = [(e.id, e.kind, e.data) for e in store.events.after(sid)]
    assert after[:-1] == during  # the same ids, kinds and data, the case that differs from the result too
    final_id, final_kind, final_data = after[-1]
    assert final_kind == "result" and final_data == {
        "status": "done",
        "verdict": "wrong_answer",
        "result": result,
    }
    assert after[3][2]["case"] == {"name": "bare", "verdict": "runtime_error"}  # after status, 0, 1
    assert rows(store, SubmissionEvent, sid) == 1  # one row holds them all
    with store.engine.connect() as connection:
        stored = connection.execute(select(SubmissionEvent.data).where(SubmissionEvent.submission_id == sid))
        assert len(json.dumps(stored.scalar_one())) < 1000  # the result and its cases are not kept twice
    # Resuming after any event gives the rest, as before.
    middle = during[5][0]
    assert [e.id for e in store.events.after(sid, middle)] == [i for i, _, _ in after if i > middle]
    assert store.events.after(sid, final_id) == []
    assert [e.id for e in store.events.after(sid, limit=3)] == [i for i, _, _ in after[:3]]


def test_a_failed_gradings_events_are_folded_too(store: Store) -> None:
    record = store.submissions.create(new())
    claim = store.attempts.claim(record.id)
    assert claim is not None
    store.events.append(claim, "status", {"status": "running", "attempt": 1, "cases": 2, "public": 1})
    store.events.append(claim, "case", {"index": 0, "case": {"name": "a", "verdict": "accepted"}})
    during = [(e.id, e.kind, e.data) for e in store.events.after(record.id)]
    assert store.attempts.fail(claim, "gave up", ("failed", {"status": "failed", "error": "gave up"}))
    after = [(e.id, e.kind, e.data) for e in store.events.after(record.id)]
    assert after[:-1] == during and after[-1][1:] == ("failed", {"status": "failed", "error": "gave up"})
    assert rows(store, SubmissionEvent, record.id) == 1


def test_results_are_packed_on_sqlite_and_read_back(store: Store) -> None:
    result = result_doc(__import__("random").Random(2), "p", "accepted")
    sid, _ = _grade(store, result)
    assert store.submissions.get(sid).result == result  # type: ignore[union-attr]
    with store.engine.connect() as connection:
        raw = connection.execute(text("SELECT result FROM submissions WHERE id = :id"), {"id": sid}).scalar()
    if store.dialect == "sqlite":
        assert isinstance(raw, bytes) and len(raw) < len(json.dumps(result)) / 2
    else:
        assert raw == result


# ------------------------------------------------------------------------------------------- migration


def test_migrations_0009_and_0010_carry_existing_rows_over_and_back(database_url: str) -> None:
    legacy = Store(database_url)
    result = result_doc(__import__("random").Random(3), "p", "wrong_answer")
    events = case_events(result)
    try:
        upgrade(legacy.engine, "0006")
        created = datetime(2026, 3, 1, tzinfo=UTC)
        with legacy.engine.begin() as connection:
            for n, (sid, tags, status) in enumerate(
                (
                    ("00000000-0000-4000-8000-000000000001", {"course": "c1", "team": "t"}, "done"),
                    ("00000000-0000-4000-8000-000000000002", None, "done"),
                    ("00000000-0000-4000-8000-000000000003", {"course": "c2"}, "running"),
                )
            ):
                connection.execute(
                    text(
                        "INSERT INTO submissions (id, problem, code, status, verdict, result, attempts, "
                        "manifest, key_name, key_id, created_at, tags) VALUES (:id, 'p', 'x', :status, "
                        ":verdict, :result, 1, '{}', 'k', 'k', :at, :tags)"
                    ),
                    {
                        "id": sid,
                        "status": status,
                        "verdict": "wrong_answer" if status == "done" else None,
                        "result": json.dumps(result) if status == "done" else None,
                        "at": (created + timedelta(minutes=n)).replace(tzinfo=None),
                        "tags": json.dumps(tags) if tags else None,
                    },
                )
                shown = events if status == "done" else events[:3]
                for kind, data in shown:
                    connection.execute(
                        text(
                            "INSERT INTO submission_events (submission_id, attempt, kind, data, created_at) "
                            "VALUES (:sid, 1, :kind, :data, :at)"
                        ),
                        {
                            "sid": sid,
                            "kind": kind,
                            "data": json.dumps(data),
                            "at": created.replace(tzinfo=None),
                        },
                    )
        first, _second, running = (f"00000000-0000-4000-8000-00000000000{i}" for i in (1, 2, 3))
        before = {sid: legacy.events.after(sid) for sid in (first, running)}
        legacy.migrate()
        assert current(legacy.engine) == "0010"
        assert listed(legacy, SubmissionFilter("k", tag=("course", "c1"))) == [first]
        assert listed(legacy, SubmissionFilter("k", tag=("course", "c2"))) == [running]
        assert listed(legacy, SubmissionFilter("k", tag=("team", "t"))) == [first]
        # 0010: the tag rows carry their submission's status and verdict.
        assert listed(legacy, SubmissionFilter("k", tag=("course", "c1"), verdict="wrong_answer")) == [first]
        assert listed(legacy, SubmissionFilter("k", tag=("course", "c2"), status=Status.RUNNING)) == [running]
        assert unequal_tag_rows(legacy) == 0
        assert legacy.submissions.get(first).result == result  # type: ignore[union-attr]
        assert legacy.events.after(first) == before[first] and rows(legacy, SubmissionEvent, first) == 1
        assert legacy.events.after(running) == before[running] and rows(legacy, SubmissionEvent, running) == 3
        if legacy.dialect == "sqlite":
            with legacy.engine.connect() as connection:
                raw = connection.execute(text("SELECT result FROM submissions WHERE id = :id"), {"id": first})
                assert isinstance(raw.scalar(), bytes)
        # And back: the events unfolded into their rows, the result as JSON text, the tag table gone.
        cfg = config()
        with legacy.engine.begin() as connection:
            cfg.attributes["connection"] = connection
            command.downgrade(cfg, "0006")
        with legacy.engine.connect() as connection:
            assert connection.execute(
                text("SELECT count(*) FROM submission_events WHERE submission_id = :id"), {"id": first}
            ).scalar() == len(events)
            stored = connection.execute(
                text("SELECT result FROM submissions WHERE id = :id"), {"id": first}
            ).scalar()
            assert (json.loads(stored) if isinstance(stored, str) else stored) == result
        legacy.migrate()
        assert legacy.events.after(first) == before[first]
    finally:
        legacy.close()


# ------------------------------------------------------------------------------------------- bytes


def test_a_stored_submission_takes_at_most_2_kb_beyond_its_code_and_result(store: Store) -> None:
    """Measured as bench_listing.py measures it: the growth of every table and index of the store over
    submissions stored as the judge stores them (an idempotency key, tags, a status event and one per case,
    the result with its final event, a callback try), less their code and the result JSON a client reads."""
    measured = bench_listing.stored_bytes(store, 200 if store.dialect == "postgresql" else 60, seed=7)
    assert measured["beyond_code_and_result"] <= bench_listing.BUDGET_BYTES, measured
    assert set(measured["per_table"]) >= {"submissions", "submission_events", "submission_tags"}


def test_the_bench_runs_in_quick_mode(tmp_path: Path) -> None:
    out = tmp_path / "listing.json"
    answer = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_listing.py"), "--quick", "--only", "sqlite",
         "--rows", "3000", "--repeat", "2", "--stored", "20", "--json", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr[-3000:]
    measured = json.loads(out.read_text())["sqlite"]
    names = {row["case"] for row in measured["timings"]}
    assert {"tag none", "verdict rare", "status queued", "problem+verdict+tag", "regrade_of"} <= names
    assert len(measured["timings"]) == 2 * len(names)  # each with and without count
    assert measured["bytes"]["beyond_code_and_result"] <= measured["bytes"]["budget"]
    assert "p95" in answer.stdout and "bytes per stored submission" in answer.stdout
