"""A queued submission says why it waits and for how long: behind N submissions, held back for the Run
reserve, queued again for want of a sandbox worker, or about to start; in ``GET /api/v1/submissions/{id}``
as ``waiting`` (fields and a learner's sentence, never an id)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.core.problems import ProblemSet, load_problem
from judge.dispatch import GradingLoop, LocalDispatcher, ProgressFeed
from judge.dispatch.grading_loop import running_status
from judge.service.contract import StatusEvent
from judge.store import NewSubmission, Store, sqlite_url
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running, sse_events

CODE = "def scale_tree(tree, factor):\n    return tree\n"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    store.migrate()
    yield store
    store.close()


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _dispatcher(
    store: Store, problems: ProblemSet, engine: FakeEngine, may_start: Callable[[], bool] = lambda: True
) -> LocalDispatcher:
    worker = GradingLoop(store, engine, problems, ProgressFeed(store), backend_name="fake")
    return LocalDispatcher(worker, store, concurrency=1, queue_size=10, may_start=may_start)


def _queue(store: Store, dispatcher: LocalDispatcher) -> str:
    sid = store.submissions.create(NewSubmission(problem=FIXTURE_SLUG, code="code", manifest={})).id
    dispatcher.reserve().commit(sid)
    return sid


def test_submissions_behind_a_running_grading_say_how_many_go_first(
    store: Store, problems: ProblemSet
) -> None:
    gate = threading.Event()
    dispatcher = _dispatcher(store, problems, FakeEngine(delay=lambda: gate.wait(30)))
    dispatcher.start()
    try:
        _queue(store, dispatcher)
        _wait_for(lambda: dispatcher.running() == 1, "the first grading")
        second, third = _queue(store, dispatcher), _queue(store, dispatcher)
        waiting = dispatcher.waiting(second)
        assert waiting is not None and waiting.reason == "queue" and waiting.ahead == 0
        later = dispatcher.waiting(third)
        assert later is not None and later.reason == "queue" and later.ahead == 1
        assert waiting.estimate_s is not None and later.estimate_s is not None
        assert later.estimate_s > waiting.estimate_s >= 1
        assert dispatcher.waiting("not-queued-here") is None
    finally:
        gate.set()
        dispatcher.close(5)


def test_a_submission_held_back_for_the_run_reserve_says_so(store: Store, problems: ProblemSet) -> None:
    hold = threading.Event()
    dispatcher = _dispatcher(store, problems, FakeEngine(), may_start=lambda: hold.is_set())
    dispatcher.start()
    try:
        sid = _queue(store, dispatcher)
        _wait_for(
            lambda: (w := dispatcher.waiting(sid)) is not None and w.reason == "run_reserve", "the hold"
        )
    finally:
        hold.set()
        dispatcher.close(5)


def test_get_says_why_a_queued_submission_waits_in_words(tmp_path: Path) -> None:
    gate = threading.Event()
    engine = FakeEngine(delay=lambda: gate.wait(30))
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=engine) as (
        client,
        services,
    ):
        try:
            ids = [
                client.post(
                    "/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": f"# {n}\n{CODE}"}
                ).json()["id"]
                for n in range(3)
            ]
            _wait_for(lambda: services.dispatcher.running() == 1, "the first grading")
            body = client.get(f"/api/v1/submissions/{ids[2]}").json()
            assert body["status"] == "queued"
            waiting = body["waiting"]
            assert waiting["reason"] == "queue" and waiting["ahead"] == 1 and waiting["estimate_s"] >= 1
            assert waiting["message"].startswith("Queued behind 1 other submission (about ")
            assert ids[2] not in waiting["message"]
            running_body = client.get(f"/api/v1/submissions/{ids[0]}").json()
            assert running_body["status"] == "running" and running_body.get("waiting") is None
        finally:
            gate.set()


def test_post_and_the_first_event_say_where_it_waits_and_running_counts_the_cases(tmp_path: Path) -> None:
    """The POST's answer and the stream's first ``status`` event carry ``waiting`` as GET does (so a page
    says why it waits from the start); the ``running`` event says how many cases, how many public."""
    gate = threading.Event()
    engine = FakeEngine(delay=lambda: gate.wait(30))
    settings = make_settings(tmp_path, stream_max_s=1)  # a stream of a queued submission ends after 1 s
    with running(settings, backend=get_backend("process"), engine=engine) as (client, services):
        try:
            first = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}).json()
            _wait_for(lambda: services.dispatcher.running() == 1, "the first grading")
            second = client.post(
                "/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": f"# 2\n{CODE}"}
            ).json()
            third = client.post(
                "/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": f"# 3\n{CODE}"}
            ).json()
            assert second["waiting"]["reason"] == "queue" and second["waiting"]["ahead"] == 0
            assert third["waiting"]["ahead"] == 1
            assert third["waiting"]["message"].startswith("Queued behind 1")
            with client.stream("GET", f"/api/v1/submissions/{third['id']}/events") as response:
                events = sse_events(response.read().decode())
            kind, data = events[0][1], events[0][2]
            assert kind == "status" and data["status"] == "queued"
            assert data["waiting"]["ahead"] == 1 and data["waiting"]["estimate_s"] >= 1
            assert data["waiting"]["message"] == third["waiting"]["message"]
            assert StatusEvent.model_validate(data).waiting is not None  # as the OpenAPI document says
            assert third["id"] not in data["waiting"]["message"]
        finally:
            gate.set()
        _wait_for(lambda: client.get(f"/api/v1/submissions/{first['id']}").json()["status"] == "done", "done")
        done = client.get(f"/api/v1/submissions/{first['id']}").json()
        assert done.get("waiting") is None
        with client.stream("GET", f"/api/v1/submissions/{first['id']}/events") as response:
            events = sse_events(response.read().decode())
        problem = load_problem(FIXTURES / FIXTURE_SLUG)
        public = sum(1 for case in problem.cases if not case.hidden)
        started = [data for _, kind, data in events if kind == "status" and data["status"] == "running"]
        assert started == [{"status": "running", "attempt": 1, "cases": len(problem.cases), "public": public}]
        assert StatusEvent.model_validate(started[0]).public == public


def test_running_status_counts_the_cases_before_the_first_hidden_one() -> None:
    problem = load_problem(FIXTURES / FIXTURE_SLUG)
    hidden = [case.hidden for case in problem.cases]
    assert not hidden[0] and True in hidden  # public cases first, then hidden ones
    status = running_status(problem, 2)
    assert status == {"status": "running", "attempt": 2, "cases": len(hidden), "public": hidden.index(True)}
