"""The in-process dispatcher and the grading worker, with a scripted engine: retries, giving up, shutdown,
duplicates. (The real engine is exercised through the service tests.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.core.problems import Problem, ProblemSet
from judge.core.results import CaseResult, GradeResult
from judge.dispatch import GradingLoop, LocalDispatcher, Outcome, ProgressFeed, QueueFull
from judge.dispatch.grading_loop import DEFAULT_MAX_ATTEMPTS, MAX_CAPACITY_REQUEUES
from judge.dispatch.metrics import Metrics
from judge.store import NewSubmission, Status, Store, sqlite_url
from judge.store.records import Claim
from sandbox.errors import ProcessStartError, SandboxError
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine

#: A fixture problem (the conftest's ``problems``): the fake engine grades every problem alike.
GNC = FIXTURE_SLUG


class FlakyEngine(FakeEngine):
    """Fails with a sandbox error the first ``failures`` times (``capacity``: no worker came up, the judge's
    contention; else a grading that had its workers failed)."""

    def __init__(self, failures: int, *, capacity: bool = False) -> None:
        super().__init__()
        self.failures = failures
        self.capacity = capacity
        self.calls = 0

    def grade(
        self, problem: Problem, code: str, *, on_case: Callable[[CaseResult], None] | None = None
    ) -> GradeResult:
        self.calls += 1
        if self.calls <= self.failures:
            if self.capacity:
                raise ProcessStartError("no ready bwrap worker: nothing progressed for 60 s: /secret/path")
            raise SandboxError("the executor died mid-grading: /secret/path/detail")
        return super().grade(problem, code, on_case=on_case)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    store.migrate()
    yield store
    store.close()


def worker(
    store: Store, problems: ProblemSet, engine: FakeEngine, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS
) -> GradingLoop:
    return GradingLoop(
        store, engine, problems, ProgressFeed(store), backend_name="fake", max_attempts=max_attempts
    )


def submit(store: Store, problem: str = GNC) -> str:
    return store.submissions.create(NewSubmission(problem=problem, code="code", manifest={})).id


def test_grading_stores_result_events_and_manifest_once(store: Store, problems: ProblemSet) -> None:
    w = worker(store, problems, FakeEngine())
    sid = submit(store)
    assert w.process(sid) is Outcome.GRADED
    assert w.process(sid) is Outcome.SKIPPED  # a duplicate delivery does nothing
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.DONE and record.verdict == "accepted"
    assert record.manifest["sandbox_backend"] == "fake" and len(record.manifest["problem_hash"]) == 64
    kinds = [e.kind for e in store.events.after(sid)]
    assert kinds == ["status"] + ["case"] * len(problems.get(GNC).cases) + ["result"]


def test_judge_failures_are_retried_then_the_submission_fails_without_detail(
    store: Store, problems: ProblemSet
) -> None:
    engine = FlakyEngine(failures=5)
    metrics = Metrics()
    w = GradingLoop(
        store, engine, problems, ProgressFeed(store), backend_name="fake", max_attempts=2, observer=metrics
    )
    sid = submit(store)
    assert w.process(sid) is Outcome.RETRY
    assert store.submissions.get(sid).status is Status.QUEUED  # type: ignore[union-attr]
    assert w.process(sid) is Outcome.FAILED
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.FAILED and record.attempts == 2
    assert record.error is not None and "SandboxError" in record.error and "/secret" not in record.error
    assert [e.kind for e in store.events.after(sid)][-1] == "failed"
    assert b"judge_submissions_failed_total 1.0" in metrics.render()


def test_waiting_for_capacity_does_not_use_up_an_attempt(store: Store, problems: ProblemSet) -> None:
    """Three capacity failures with max_attempts=2: each gives its attempt back, says why on the stream,
    and the submission is then graded on its first counted attempt."""
    engine = FlakyEngine(failures=3, capacity=True)
    metrics = Metrics()
    w = GradingLoop(
        store, engine, problems, ProgressFeed(store), backend_name="fake", max_attempts=2, observer=metrics
    )
    sid = submit(store)
    for _ in range(3):
        assert w.process(sid) is Outcome.RETRY
        record = store.submissions.get(sid)
        assert record is not None and record.status is Status.QUEUED and record.attempts == 0
        waiting = [e.data for e in store.events.after(sid) if e.kind == "status"][-1]
        assert waiting["status"] == "queued" and waiting["waiting"] == "capacity"
        assert "does not count as an attempt" in waiting["reason"] and "/secret" not in waiting["reason"]
    assert w.process(sid) is Outcome.GRADED
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.DONE and record.attempts == 1
    assert b'judge_requeues_total{reason="capacity"} 3.0' in metrics.render()


def test_a_judge_that_never_has_capacity_still_ends_in_failed(store: Store, problems: ProblemSet) -> None:
    engine = FlakyEngine(failures=10**6, capacity=True)
    w = worker(store, problems, engine, max_attempts=2)
    sid = submit(store)
    outcomes = [w.process(sid) for _ in range(MAX_CAPACITY_REQUEUES + 2)]
    assert outcomes[-1] is Outcome.FAILED and outcomes.count(Outcome.RETRY) == MAX_CAPACITY_REQUEUES + 1
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.FAILED and record.attempts == 2


def test_a_refunded_release_is_refused_for_a_stale_claim(store: Store) -> None:
    sid = submit(store)
    claim = store.attempts.claim(sid, None)
    assert claim is not None and claim.attempt == 1
    assert not store.attempts.release(Claim(sid, 2), refund=True)
    assert store.attempts.release(claim, refund=True)
    assert store.submissions.get(sid).attempts == 0  # type: ignore[union-attr]


def test_abandoned_gradings_store_nothing_and_are_recovered(store: Store, problems: ProblemSet) -> None:
    release = threading.Event()
    engine = FakeEngine(delay=lambda: release.wait(10))
    w = worker(store, problems, engine)
    dispatcher = LocalDispatcher(w, store, concurrency=1, queue_size=10)
    dispatcher.start()
    sid = submit(store)
    dispatcher.reserve().commit(sid)
    deadline = time.monotonic() + 60
    while dispatcher.running() == 0:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    threading.Timer(0.3, release.set).start()
    dispatcher.close(grace_s=0.0)  # the engine would be closed now: whatever it returns is not stored
    deadline = time.monotonic() + 60
    while dispatcher.running():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.RUNNING and record.result is None
    assert store.attempts.recover() == [sid]


def test_dispatcher_recovers_and_grades_everything_once(store: Store, problems: ProblemSet) -> None:
    ids = [submit(store) for _ in range(5)]
    store.attempts.claim(ids[0])  # was running when the previous process died
    engine = FakeEngine()
    dispatcher = LocalDispatcher(worker(store, problems, engine), store, concurrency=3, queue_size=2)
    dispatcher.start()
    deadline = time.monotonic() + 60
    while store.submissions.count(Status.DONE) < 5:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    dispatcher.close(grace_s=5)
    assert len(engine.graded) == 5


def test_reservations_bound_the_queue(store: Store, problems: ProblemSet) -> None:
    dispatcher = LocalDispatcher(worker(store, problems, FakeEngine()), store, concurrency=1, queue_size=2)
    first, second = dispatcher.reserve(), dispatcher.reserve()
    with pytest.raises(QueueFull) as full:
        dispatcher.reserve()
    assert full.value.retry_after >= 1
    first.cancel()
    third = dispatcher.reserve()  # the cancelled place is free again
    second.cancel()
    third.cancel()
    dispatcher.close(grace_s=0)
    with pytest.raises(QueueFull, match="shutting down"):
        dispatcher.reserve()


def test_submissions_wait_while_may_start_says_no_but_not_forever(
    store: Store, problems: ProblemSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judge.dispatch.local as local

    allowed = threading.Event()
    engine = FakeEngine()
    dispatcher = LocalDispatcher(
        worker(store, problems, engine), store, concurrency=1, queue_size=5, may_start=allowed.is_set
    )
    dispatcher.start()
    held = submit(store)
    dispatcher.reserve().commit(held)
    time.sleep(0.3)
    assert engine.graded == [] and dispatcher.depth() == 1  # held back: the Run reserve is not idle
    allowed.set()
    deadline = time.monotonic() + 60
    while store.submissions.count(Status.DONE) < 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    allowed.clear()
    monkeypatch.setattr(local, "HOLD_MAX_S", 0.2)
    late = submit(store)
    dispatcher.reserve().commit(late)
    deadline = time.monotonic() + 60
    while store.submissions.count(Status.DONE) < 2:  # graded anyway once held back for HOLD_MAX_S
        assert time.monotonic() < deadline
        time.sleep(0.01)
    dispatcher.close(grace_s=5)


def test_json_safe_spells_out_non_finite_numbers() -> None:
    from judge.core.results import json_safe

    value = {"error_ratio": float("inf"), "cases": [{"error_ratio": float("nan"), "x": [float("-inf"), 1.5]}]}
    assert json_safe(value) == {
        "error_ratio": None,
        "cases": [{"error_ratio": None, "x": ["-Infinity", 1.5]}],
    }
