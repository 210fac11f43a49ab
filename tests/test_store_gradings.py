"""``judge.store.gradings`` and ``judge.store.regrade_jobs`` on SQLite and PostgreSQL: a regrade is a
conditional move of a finished submission back to ``queued`` with a grading row, finished or failed only
by the claim that holds it; a problem regrade is a job that queues at most ``batch`` unfinished gradings
at once from its cursor and resumes from it in another process; erasing a submission takes its gradings
with it."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from judge.store import Claim, NewSubmission, Status, Store, sqlite_url
from judge.store.gradings import (
    GradingStore,
    OwnerCap,
    ProblemVersion,
    RegradeOverCap,
    RegradeRefused,
)
from judge.store.models import Grading, Submission
from judge.store.packed import pack
from judge.store.records import Quota
from judge.store.regrade_jobs import RegradeJobs

pytest_plugins = ("tests.stores",)

OLD, NEW = ProblemVersion("a" * 64, 1), ProblemVersion("b" * 64, 2)


def manifest(version: ProblemVersion) -> dict[str, Any]:
    return {"problem": "p", "problem_hash": version.hash, "problem_revision": version.revision}


def graded(store: Store, key: str = "k", verdict: str = "accepted") -> str:
    """A submission of problem ``p`` graded with the OLD version."""
    record = store.submissions.create(
        NewSubmission(problem="p", code="x = 1", manifest=manifest(OLD), key_name=key, key_id=key)
    )
    claim = store.attempts.claim(record.id)
    assert claim is not None
    store.attempts.finish(claim, {"verdict": verdict}, verdict, manifest(OLD), ("result", {"status": "done"}))
    return record.id


def grade_pending(store: Store, sid: str, verdict: str = "wrong_answer") -> None:
    """What the worker does with a claimed regrade: store the new grading."""
    gradings = GradingStore(store)
    claim = store.attempts.claim(sid)
    assert claim is not None
    pending = gradings.pending(sid)
    assert pending is not None and pending.accepted == NEW
    assert gradings.finish(claim, pending, {"verdict": verdict}, verdict, manifest(NEW), ("result", {}))


def test_a_regrade_is_a_new_grading_written_once(store: Store) -> None:
    gradings = GradingStore(store)
    sid = graded(store)
    assert gradings.history(sid) == [] and gradings.pending(sid) is None
    assert gradings.request(sid, NEW) == 2
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.QUEUED and record.verdict == "accepted"
    with pytest.raises(RegradeRefused):  # one grading at a time
        gradings.request(sid, NEW)
    events = store.events.after(sid)
    assert [(e.kind, e.data) for e in events] == [
        ("status", {"status": "queued", "regrade": True, "grading": 2})
    ]
    claim = store.attempts.claim(sid)
    assert claim is not None and claim.attempt == 2
    pending = gradings.pending(sid)
    assert pending is not None and (pending.number, pending.first_attempt) == (2, 2)
    stale = Claim(sid, 1)
    assert not gradings.finish(stale, pending, {"verdict": "x"}, "x", manifest(NEW), ("result", {}))
    assert gradings.history(sid)[0].result is None  # nothing moved by the stale claim (rolled back)
    assert gradings.finish(
        claim, pending, {"verdict": "wrong_answer"}, "wrong_answer", manifest(NEW), ("result", {})
    )
    assert not gradings.finish(claim, pending, {"verdict": "x"}, "x", manifest(NEW), ("result", {}))
    record = store.submissions.get(sid)
    assert record is not None and (record.status, record.verdict, record.grading) == (
        Status.DONE, "wrong_answer", 2,
    )  # fmt: skip
    assert record.manifest["problem_hash"] == NEW.hash
    history = gradings.history(sid)
    assert [(g.number, g.status, g.verdict) for g in history] == [
        (1, "done", "accepted"),
        (2, "done", "wrong_answer"),
    ]
    assert history[0].manifest == manifest(OLD) and history[1].manifest == manifest(NEW)
    # Each result is stored once: the earlier grading's moved to its row, the current one's in the
    # submission row only.
    assert [g.result for g in history] == [{"verdict": "accepted"}, None]
    assert gradings.request(sid, NEW) == 3
    grade_pending(store, sid, verdict="accepted")
    results = [g.result for g in gradings.history(sid)]
    assert results == [{"verdict": "accepted"}, {"verdict": "wrong_answer"}, None]
    assert store.submissions.get(sid).result == {"verdict": "accepted"}  # type: ignore[union-attr]
    assert store.submissions.ids() == [sid]
    with pytest.raises(RegradeRefused):
        gradings.request("00000000-0000-0000-0000-000000000000", NEW)


def test_of_many_concurrent_regrades_of_one_submission_one_is_queued(store: Store, database_url: str) -> None:
    """Eight requests at once, each through its own connection pool (as API nodes): one grading is
    queued, the others are refused, none fails on the database (a lock wait, never a stale snapshot)."""
    sid = graded(store)
    outcomes: list[object] = []
    barrier = threading.Barrier(8)

    def ask() -> None:
        node = Store(database_url)
        try:
            barrier.wait()
            outcomes.append(GradingStore(node).request(sid, NEW))
        except RegradeRefused as refused:
            outcomes.append(refused.status)
        except Exception as exc:  # what must not happen
            outcomes.append(exc)
        finally:
            node.close()

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, outcomes)) == ["2", *["queued"] * 7], outcomes
    assert [g.number for g in GradingStore(store).history(sid)] == [1, 2]


def test_a_failed_regrade_puts_the_submission_back_as_it_was(store: Store) -> None:
    gradings = GradingStore(store)
    sid = graded(store)
    gradings.request(sid, NEW)
    claim = store.attempts.claim(sid)
    pending = gradings.pending(sid)
    assert claim is not None and pending is not None
    assert gradings.fail(claim, pending, "the judge could not grade it", ("failed", {"status": "failed"}))
    record = store.submissions.get(sid)
    assert record is not None and (record.status, record.verdict, record.grading) == (
        Status.DONE,
        "accepted",
        1,
    )
    assert record.manifest["problem_hash"] == OLD.hash
    assert [(g.number, g.status, g.error) for g in gradings.history(sid)] == [
        (1, "done", None), (2, "failed", "the judge could not grade it"),
    ]  # fmt: skip
    assert gradings.request(sid, NEW) == 3  # numbers go on


def test_regrades_count_against_a_learners_own_cap_only(store: Store) -> None:
    gradings = GradingStore(store)
    first, second = graded(store), graded(store)
    gradings.request(first, NEW)  # an operator's: no cap
    # A regrade counts for neither the submit caps nor gradings_per_client ...
    assert store.submissions.owner_counts("k", None) == {Status.QUEUED: 0, Status.RUNNING: 0}
    fresh = store.submissions.create(
        NewSubmission(problem="p", code="y", manifest=manifest(NEW), key_name="k", key_id="k"),
        quota=Quota(unfinished=1, queued=1),
    )
    assert fresh.status is Status.QUEUED
    # ... but a learner's own regrade counts every unfinished one of its owner, regrades included.
    with pytest.raises(RegradeOverCap) as refused:
        gradings.request(second, NEW, owner_cap=OwnerCap("k", None, 2))
    assert refused.value.count == 2
    record = store.submissions.get(second)
    assert record is not None and record.status is Status.DONE and gradings.history(second) == []
    assert gradings.request(second, NEW, owner_cap=OwnerCap("k", None, 3)) == 2


def test_a_problem_regrade_goes_in_batches_and_resumes_elsewhere(store: Store, database_url: str) -> None:
    ids = [graded(store) for _ in range(5)]
    current = graded(store)
    with store.transaction() as session:  # one already graded with the new version: left alone
        session.execute(update(Submission).where(Submission.id == current).values(manifest=manifest(NEW)))
    gradings, jobs = GradingStore(store), RegradeJobs(store)
    job = jobs.create("p", NEW, force=False, notify=False, batch=2, requested_by="op")
    assert (job.total, job.state, job.queued) == (5, "running", 0)
    assert jobs.advance(job.id, room=1) == ids[:1]  # the queue had one place
    assert jobs.advance(job.id, room=10) == ids[1:2]  # the batch's second
    assert jobs.advance(job.id, room=10) == []  # two unfinished: its batch
    for sid in ids[:2]:
        grade_pending(store, sid)
    # Another process (an API node restarted) goes on from the cursor.
    other = Store(database_url)
    try:
        elsewhere = RegradeJobs(other)
        assert elsewhere.advance(job.id, room=10) == ids[2:4]
        for sid in ids[2:4]:
            grade_pending(other, sid)
        assert elsewhere.advance(job.id, room=10) == ids[4:]
        progress = elsewhere.job(job.id)
        assert progress is not None and (progress.queued, progress.graded, progress.in_flight) == (5, 4, 1)
        grade_pending(other, ids[4])
        assert elsewhere.advance(job.id, room=10) == []
    finally:
        other.close()
    done = jobs.job(job.id)
    assert done is not None and (done.state, done.queued, done.graded, done.failed) == ("done", 5, 5, 0)
    assert done.finished_at is not None and jobs.running_jobs() == []
    assert gradings.history(current) == [] and sorted(store.submissions.ids()) == sorted([*ids, current])
    assert jobs.advance(job.id, room=10) == []
    # Nothing left on another version: a new job is done at once; force takes every one.
    assert jobs.create("p", NEW, force=False, notify=False, batch=2, requested_by=None).state == "done"
    forced = jobs.create("p", NEW, force=True, notify=True, batch=50, requested_by=None)
    assert forced.total == 6 and len(jobs.advance(forced.id, room=50)) == 6
    assert jobs.cancel(forced.id) and not jobs.cancel(forced.id)
    cancelled = jobs.job(forced.id)
    assert cancelled is not None and cancelled.state == "cancelled" and cancelled.in_flight == 6
    assert jobs.advance(forced.id, room=50) == []


def test_deleting_a_submission_takes_its_gradings(store: Store) -> None:
    gradings = GradingStore(store)
    sid = graded(store)
    gradings.request(sid, NEW)
    grade_pending(store, sid)
    assert store.deletion.delete(sid)
    with store.transaction() as session:
        assert session.query(Grading).count() == 0


@pytest.mark.parametrize("how", ["delete", "erase_user"])
def test_an_erased_regraded_submission_leaves_no_grading_in_the_files(tmp_path: Path, how: str) -> None:
    """Every grading's result (the first one copied when it was regraded) goes with the submission, out
    of every file of the SQLite store (tests/test_store_erasure.py for the rest of it)."""
    folder = tmp_path / "data"
    store = Store(sqlite_url(folder / "judge.sqlite3"))
    store.migrate()
    try:
        marker, user = f"gone-{uuid.uuid4().hex}", f"user-{uuid.uuid4().hex}"
        record = store.submissions.create(
            NewSubmission(problem="p", code="x = 1", manifest=manifest(OLD), external_user=user)
        )
        claim = store.attempts.claim(record.id)
        assert claim is not None
        store.attempts.finish(claim, {"note": marker}, "accepted", manifest(OLD), ("result", {}))
        GradingStore(store).request(record.id, NEW)
        grade_pending(store, record.id, verdict=marker[:30])
        with store.transaction() as session:
            assert session.query(Grading).count() == 2
        # The first result as SQLite stores it (packed: judge.store.packed), the regrade's verdict, the id.
        needles = (pack({"note": marker}), marker[:30].encode(), record.id.encode())

        def found(needle: bytes) -> list[str]:
            return [p.name for p in folder.iterdir() if p.is_file() and needle in p.read_bytes()]

        assert all(found(needle) for needle in needles)
        if how == "delete":
            assert store.deletion.delete(record.id)
        else:
            assert store.deletion.erase_user(None, user) == 1
        for needle in needles:
            assert found(needle) == []
    finally:
        store.close()
