"""Grading nodes and the sweeper against a real Redis (started here from Debian's package) and SQLite:
a node whose sandbox self-test fails takes no jobs; the sweeper queues again the work of lost nodes and
what a broker lost; the API side bounds the queue; GET /api/workers is for operators only."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from judge.core.doctor import SelfTest
from judge.core.problems import ProblemSet
from judge.core.settings import Settings
from judge.dispatch import QueueFull
from judge.dispatch.capabilities import SUBMISSIONS_QUEUE
from judge.dispatch.celery_queue import (
    EPOCH_KEY,
    CeleryDispatcher,
    GradingQueue,
    Sweeper,
    is_submission_id,
)
from judge.dispatch.node import GradingNode
from judge.service.apikeys import hash_key
from judge.store import NewSubmission, NodeState, Status, Store, database_url, sqlite_url
from sandbox.backends import get_backend
from tests import redis_server
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.scale_support import wait_until
from tests.service_support import make_settings, running

pytestmark = pytest.mark.skipif(
    redis_server.why_unavailable() is not None, reason=str(redis_server.why_unavailable())
)

SCALE = FIXTURE_SLUG


@pytest.fixture(scope="module")
def broker() -> Iterator[redis_server.RedisServer]:
    server = redis_server.RedisServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def client(broker: redis_server.RedisServer) -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(broker.url)
    connection.flushall()
    yield connection
    connection.flushall()
    connection.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    db = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    db.migrate()
    yield db
    db.close()


def new(store: Store) -> str:
    record = store.submissions.create(
        NewSubmission(problem=SCALE, code="def f(): pass\n", manifest={}, key_name=None, client_address="t")
    )
    return record.id


def sweeper(store: Store, queue: GradingQueue, node_timeout_s: float = 60.0) -> Sweeper:
    return Sweeper(store, queue, node_timeout_s=node_timeout_s, requeue_after_s=900, period_s=1.0)


def test_a_node_whose_self_test_fails_takes_no_jobs(
    broker: redis_server.RedisServer, client: redis.Redis, tmp_path: Path
) -> None:
    settings = Settings(queue_url=broker.url, data_dir=tmp_path, heartbeat_s=0.2)
    engine = FakeEngine()
    node = GradingNode(
        settings,
        concurrency=2,
        backend=get_backend("process"),
        engine=engine,
        sandbox_check=lambda _b: SelfTest(ok=False, message="seccomp is missing", elapsed_ms=1.0),
    )
    node.store.migrate()
    sid = new(node.store)
    GradingQueue(broker.url).publish(sid)
    thread = threading.Thread(target=node.run)
    thread.start()
    try:
        wait_until(
            lambda: any(n.state is NodeState.UNREADY for n in node.store.nodes.known()),
            30,
            "the node to say unready",
        )
        time.sleep(1.0)  # several heartbeats: still nothing taken
        [row] = node.store.nodes.known()
        assert row.state is NodeState.UNREADY and "seccomp is missing" in (row.detail or "")
        assert row.slots == 2 and row.busy == 0
        record = node.store.submissions.get(sid)
        assert record is not None and record.status is Status.QUEUED
        assert client.llen(SUBMISSIONS_QUEUE) == 1  # the message is still waiting for a healthy node
        assert engine.graded == []
    finally:
        node.request_stop()
        thread.join(60)
    assert not thread.is_alive()
    store = Store(database_url(settings.database_url, settings.data_dir))
    assert [n.state for n in store.nodes.known()] == [NodeState.STOPPED]


def test_the_work_of_a_lost_node_is_queued_and_published_again(
    broker: redis_server.RedisServer, client: redis.Redis, store: Store
) -> None:
    from judge.store import NodeBeat
    from judge.store.models import utcnow

    queue = GradingQueue(broker.url)
    sid, other = new(store), new(store)
    assert store.attempts.claim(sid, node="gone-node") is not None
    store.nodes.heartbeat(
        NodeBeat(name="gone-node", hostname="h", pid=1, queues=SUBMISSIONS_QUEUE, backend="bwrap",
                 version="0", state=NodeState.READY, detail=None, slots=1, busy=1, idle_workers=0,
                 graded=0, started_at=utcnow())
    )  # fmt: skip
    queue.claim_epoch()
    alive = sweeper(store, queue, node_timeout_s=60.0)
    assert alive.sweep(force=True)["lost"] == 0  # its heartbeat is recent: its work stays with it
    time.sleep(0.05)
    counts = sweeper(store, queue, node_timeout_s=0.01).sweep(force=True)
    assert counts["lost"] == 1
    record = store.submissions.get(sid)
    assert record is not None and record.status is Status.QUEUED and record.node is None
    assert record.attempts == 1  # a late result of the lost attempt is refused (attempt 1 is settled)
    assert [n.state for n in store.nodes.known()] == [NodeState.LOST]
    assert client.llen(SUBMISSIONS_QUEUE) == 1
    unaffected = store.submissions.get(other)
    assert unaffected is not None and unaffected.status is Status.QUEUED
    queue.close()


def test_a_broker_that_lost_its_messages_gets_every_queued_submission_again(
    broker: redis_server.RedisServer, client: redis.Redis, store: Store
) -> None:
    queue = GradingQueue(broker.url)
    ids = [new(store) for _ in range(3)]
    running_id = new(store)
    assert store.attempts.claim(running_id, node="live") is not None
    dispatcher = CeleryDispatcher(store, queue, sweeper(store, queue), queue_size=100)
    dispatcher.start()  # a new broker: it publishes what is queued
    try:
        assert client.llen(SUBMISSIONS_QUEUE) == 3 and client.get(EPOCH_KEY) is not None
        assert sweeper(store, queue).sweep(force=True)["broker"] == 0  # nothing lost: nothing doubled
        assert client.llen(SUBMISSIONS_QUEUE) == 3
        client.flushall()  # the broker restarts empty
        assert sweeper(store, queue).sweep(force=True)["broker"] == 3
        bodies = client.lrange(SUBMISSIONS_QUEUE, 0, -1)
        assert sorted(i for i in ids if any(i.encode() in b for b in bodies)) == sorted(ids)
        assert not any(running_id.encode() in b for b in bodies)  # a running one is its node's business
    finally:
        dispatcher.close(0)


def test_publishing_while_the_broker_is_down_loses_nothing(store: Store, tmp_path: Path) -> None:
    down = redis_server.RedisServer()  # not started: nothing listens on its port
    queue = GradingQueue(down.url)
    sweep = sweeper(store, queue)
    sid = new(store)
    assert sweep.publish(sid) is False
    down.start()
    try:
        connection = redis.Redis.from_url(down.url)
        queue.claim_epoch()
        assert sweep.sweep(force=True)["retried"] == 1
        assert connection.llen(SUBMISSIONS_QUEUE) == 1
        connection.close()
    finally:
        queue.close()
        down.stop()


def test_the_api_side_bounds_the_queue_deployment_wide(
    broker: redis_server.RedisServer, store: Store
) -> None:
    queue = GradingQueue(broker.url)
    dispatcher = CeleryDispatcher(store, queue, sweeper(store, queue), queue_size=2)
    try:
        new(store)
        first = dispatcher.reserve()
        with pytest.raises(QueueFull) as full:
            dispatcher.reserve()
        assert full.value.retry_after >= 1
        first.cancel()
        dispatcher.reserve().cancel()
    finally:
        dispatcher.close(0)


def test_messages_naming_no_submission_are_dropped() -> None:
    assert is_submission_id("0b0e5c4e-4a51-4a5e-9d5c-1b2f3a4b5c6d")
    for junk in (None, 3, "x", "' OR 1=1 --", "0" * 1000, ["a"], {"id": "a"}):
        assert not is_submission_id(junk)


def test_queue_url_must_be_redis(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Redis URL"):
        Settings(queue_url="amqp://guest@localhost//", data_dir=tmp_path)
    assert Settings(queue_url="", data_dir=tmp_path).queue_url is None
    assert not Settings(data_dir=tmp_path).distributed


def test_workers_endpoint_with_in_process_dispatch(tmp_path: Path) -> None:
    keys = {"ops": hash_key("jj_ops-key-0123456789"), "learner": hash_key("jj_learner-key-0123456789")}
    settings = make_settings(tmp_path, api_keys=keys, operator_keys=["ops"])
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (http, _services):
        assert http.get("/api/workers").status_code == 401
        refused = http.get("/api/workers", headers={"Authorization": "Bearer jj_learner-key-0123456789"})
        assert refused.status_code == 403 and "operator" in refused.json()["error"]["message"]
        body = http.get("/api/workers", headers={"Authorization": "Bearer jj_ops-key-0123456789"}).json()
        assert body["dispatch"] == "local" and [n["name"] for n in body["nodes"]] == ["local"]
        ready = http.get("/readyz").json()
        assert ready["dispatch"] == "local" and ready["database"] == "ok" and ready["queue"] is None


def test_problem_set_loads_for_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    # A node loads the problems folder it is configured with, as the service does.
    monkeypatch.setenv("JUDGE_PROBLEMS_DIR", str(FIXTURES))
    assert SCALE in {p.slug for p in ProblemSet(None)}


def test_a_node_hands_back_only_its_own_work_and_a_late_result_is_refused(store: Store) -> None:
    from datetime import timedelta

    from judge.store.models import utcnow

    mine, theirs, other = new(store), new(store), new(store)
    claim = store.attempts.claim(mine, node="a")
    assert claim is not None and store.attempts.claim(theirs, node="b") is not None
    assert sorted(store.attempts.held_by("a")) == [mine]
    assert store.attempts.release_node("a") == [mine]
    assert store.attempts.held_by("a") == [] and store.attempts.held_by("b") == [theirs]
    record = store.submissions.get(mine)
    assert record is not None and record.status is Status.QUEUED and record.attempts == 1
    final = ("result", {"status": "done"})
    assert not store.attempts.finish(
        claim, {}, "accepted", {}, final
    )  # the handed-back attempt stores nothing
    again = store.attempts.claim(mine, node="b")
    assert again is not None and again.attempt == 2
    assert store.attempts.finish(again, {}, "accepted", {}, final)
    assert store.submissions.get(other) is not None and store.attempts.held_by("c") == []
    from judge.store import NodeBeat

    for name in ("b", "idle"):
        store.nodes.heartbeat(
            NodeBeat(name=name, hostname="h", pid=1, queues=SUBMISSIONS_QUEUE, backend="bwrap", version="0",
                     state=NodeState.READY, detail=None, slots=1, busy=0, idle_workers=1, graded=0,
                     started_at=utcnow())
        )  # fmt: skip
    # Forgetting old nodes spares a node that still holds work.
    assert store.nodes.prune(utcnow() + timedelta(seconds=1)) == 1
    assert [n.name for n in store.nodes.known()] == ["b"]
