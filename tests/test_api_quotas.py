"""Limits a platform can plan with: RateLimit-* and X-RateLimit-* headers on every counted answer
(success and 429, declared in the schema), an honest Retry-After when no grading node is alive, /readyz
saying whether submissions get graded, and per-key fairness that holds across nodes: concurrent gradings
(gradings_per_client, at claim), a share of the queue (queue_share) and Runs counted in Redis."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from fastapi.testclient import TestClient

from judge.core.settings import Settings
from judge.dispatch import QueueFull
from judge.dispatch.capabilities import SUBMISSIONS_QUEUE
from judge.dispatch.celery_queue import NO_NODE_RETRY_S, CeleryDispatcher
from judge.dispatch.node import GradingNode
from judge.service.apikeys import generate_key, hash_key
from judge.service.app import create_app
from judge.service.ratelimit import Principal
from judge.service.shares import RedisShares, ShareExceeded
from judge.store import Deferred, NewSubmission, Status, Store, sqlite_url
from sandbox.backends import get_backend
from tests import redis_server
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

CODE = "def scale_tree(tree, factor):\n    return tree\n"


def test_rate_limit_headers_on_success_and_on_429(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, anonymous_rate_limit="3/minute")
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        answers = [client.get("/api/v1/problems") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.headers["ratelimit-remaining"] for a in answers] == ["2", "1", "0", "0"]
    for answer in answers:
        assert answer.headers["x-ratelimit-limit"] == answer.headers["ratelimit-limit"] == "3"
        assert 0 <= int(answer.headers["x-ratelimit-reset"]) <= 60
    assert int(answers[-1].headers["retry-after"]) >= 1


def test_rate_limit_headers_are_in_the_schema(tmp_path: Path) -> None:
    schema: dict[str, Any] = create_app(make_settings(tmp_path)).openapi()
    responses = schema["paths"]["/api/v1/submissions"]["post"]["responses"]
    for status in ("202", "200", "429"):
        assert {"RateLimit-Remaining", "X-RateLimit-Remaining"} <= set(responses[status]["headers"])


def test_a_full_queue_with_no_live_node_says_so(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    store.migrate()
    try:
        store.submissions.create(NewSubmission(problem=FIXTURE_SLUG, code="x", manifest={}))
        slots = [0]
        dispatcher = CeleryDispatcher(store, None, None, queue_size=1, slots=lambda: slots[0])  # type: ignore[arg-type]
        with pytest.raises(QueueFull) as none_alive:
            dispatcher.reserve()
        assert none_alive.value.retry_after == NO_NODE_RETRY_S
        assert "no grading node is alive" in str(none_alive.value)
        slots[0] = 4
        with pytest.raises(QueueFull) as draining:
            dispatcher.reserve()
        assert "no grading node" not in str(draining.value) and 1 <= draining.value.retry_after <= 600
    finally:
        store.close()


def test_readyz_says_whether_submissions_get_graded(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        body = client.get("/readyz").json()
    assert body["ready"] and body["submissions_ready"] and body["submissions_reason"] is None


# ---------------------------------------------------------------------------------------------- per-key


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def submit(client: TestClient, key: str, tag: str) -> httpx.Response:
    body = {"problem": FIXTURE_SLUG, "code": f"# {tag}\n{CODE}"}
    answer: httpx.Response = client.post("/api/v1/submissions", json=body, headers=bearer(key))
    return answer


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def gated(
    tmp_path: Path, names: tuple[str, ...], **overrides: Any
) -> tuple[Settings, FakeEngine, threading.Event, dict[str, str]]:
    """Settings with one API key per name and an engine whose gradings wait for the gate."""
    gate = threading.Event()
    keys = {name: generate_key() for name in names}
    settings = make_settings(tmp_path, api_keys={n: hash_key(k) for n, k in keys.items()}, **overrides)
    return settings, FakeEngine(delay=lambda: gate.wait(30)), gate, keys


def test_gradings_per_client_holds_one_key_back_and_lets_the_others_through(tmp_path: Path) -> None:
    settings, engine, gate, keys = gated(
        tmp_path, ("heavy", "light"), submission_concurrency=2, gradings_per_client=1
    )
    heavy, light = keys["heavy"], keys["light"]
    with running(settings, backend=get_backend("process"), engine=engine) as (client, services):
        first, second = (submit(client, heavy, f"h{i}").json()["id"] for i in range(2))
        wait_for(lambda: services.dispatcher.running() == 1, "the heavy key's first grading")
        other = submit(client, light, "l").json()["id"]
        wait_for(lambda: services.dispatcher.running() == 2, "the light key's grading")
        time.sleep(0.6)  # the heavy key's second is tried again (deferred) meanwhile
        status = {sid: services.store.submissions.get(sid).status for sid in (first, second, other)}  # type: ignore[union-attr]
        assert status == {first: Status.RUNNING, second: Status.QUEUED, other: Status.RUNNING}
        assert b"judge_deferred_total" in client.get("/metrics").content
        gate.set()
        for sid, key in ((first, heavy), (second, heavy), (other, light)):
            done = client.get(f"/api/v1/submissions/{sid}?wait=30", headers=bearer(key)).json()
            assert done["status"] == "done"


def test_a_share_of_the_queue_keeps_room_for_other_clients(tmp_path: Path) -> None:
    settings, engine, gate, keys = gated(tmp_path, ("greedy", "other"), queue_size=4, queue_share=0.5)
    greedy, other = keys["greedy"], keys["other"]
    with running(settings, backend=get_backend("process"), engine=engine) as (client, services):
        assert submit(client, greedy, "0").status_code == 202
        wait_for(lambda: services.dispatcher.running() == 1, "the first grading")
        answers = [submit(client, greedy, str(i)) for i in range(1, 5)]
        assert [a.status_code for a in answers] == [202, 202, 429, 429]
        error = answers[2].json()["error"]
        assert error["code"] == "queue_full" and error["limit"] == "queue_share"
        assert "share of the queue" in error["message"] and answers[2].headers["retry-after"] == "5"
        assert submit(client, other, "x").status_code == 202  # the queue still has room for another
        gate.set()


@pytest.fixture(scope="module")
def broker() -> Iterator[redis_server.RedisServer]:
    yield from redis_server.started()


def test_run_shares_hold_across_api_nodes_in_redis(broker: redis_server.RedisServer) -> None:
    """Two API nodes' shares over one Redis: a client's cap counts its holds on both; a node that died
    holding one frees it when the lease expires; Redis away, a node counts in its own process."""
    one, two = (RedisShares(broker.url, 2, what="Runs", lease_s=30) for _ in range(2))
    dying = RedisShares(broker.url, 2, what="Runs", lease_s=0.3)
    lms, ci = Principal("lms", "10.0.0.1", "key_lms"), Principal("ci", "10.0.0.1", "key_ci")
    try:
        one.acquire(lms)
        two.acquire(lms)
        for node in (one, two):
            with pytest.raises(ShareExceeded, match="already has 2 Runs open"):
                node.acquire(lms)
        two.acquire(ci)  # another key has its own share
        assert one.held(lms) == 2 and two.held(ci) == 1
        one.release(lms)
        two.acquire(lms)
        dying.acquire(ci)
        with pytest.raises(ShareExceeded):
            one.acquire(ci)
        time.sleep(0.5)  # the dead node's lease expires
        one.acquire(ci)
    finally:
        for node in (one, two, dying):
            node.close()
    away = RedisShares("redis://127.0.0.1:9/0", 1, what="Runs")
    with away.hold(lms), pytest.raises(ShareExceeded):
        away.acquire(lms)
    away.acquire(lms)
    away.close()


def test_a_grading_node_defers_past_gradings_per_client_across_nodes(
    broker: redis_server.RedisServer, tmp_path: Path
) -> None:
    """Another node grades one of the key's submissions: this node puts the next one back at the end of
    the queue instead of grading it, and grades it once that one is done."""
    settings = Settings(queue_url=broker.url, data_dir=tmp_path, problems_dir=FIXTURES, gradings_per_client=1)
    engine = FakeEngine()
    node = GradingNode(settings, concurrency=1, backend=get_backend("process"), engine=engine)
    connection = redis.Redis.from_url(broker.url)
    try:
        node.store.migrate()
        connection.delete(SUBMISSIONS_QUEUE)
        first, second = (
            node.store.submissions.create(
                NewSubmission(problem=FIXTURE_SLUG, code=CODE, manifest={}, key_id="key_a")
            ).id
            for _ in range(2)
        )
        elsewhere = node.store.attempts.claim_within(first, "other-node", 1)
        assert elsewhere is not None and not isinstance(elsewhere, Deferred)
        assert node.handle(second) == "deferred"
        record = node.store.submissions.get(second)
        assert record is not None and record.status is Status.QUEUED and record.attempts == 0
        assert connection.llen(SUBMISSIONS_QUEUE) == 1 and engine.graded == []  # published again
        assert node.store.attempts.finish(elsewhere, {}, "accepted", {}, ("result", {}))
        assert node.handle(second) == "graded"
    finally:
        connection.delete(SUBMISSIONS_QUEUE)
        connection.close()
        node.engine.close()
        node.queue.close()
        node.notifier.close()
        node.store.close()


def test_a_client_at_its_cap_with_no_grading_node_alive_is_told_so(
    broker: redis_server.RedisServer, tmp_path: Path
) -> None:
    settings = make_settings(tmp_path, queue_url=broker.url, submissions_per_client=1, run_reserve=1)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        ready = client.get("/readyz").json()
        assert ready["submissions_ready"] is False and "no live grading node" in ready["submissions_reason"]
        assert (
            client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}).status_code
            == 202
        )
        refused = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": f"#\n{CODE}"})
    assert refused.status_code == 429 and refused.headers["retry-after"] == str(NO_NODE_RETRY_S)
    assert "no grading node is alive" in refused.json()["error"]["message"]
