"""Scale-out with real servers: Redis and PostgreSQL started here from Debian's packages, two ``judge serve``
API nodes and two ``judge worker`` grading nodes on loopback, grading real submissions in real sandboxes.

- 60 submissions spread over both API nodes are all graded exactly once, with the right verdicts; one
  made on an API node is read, waited on and streamed on the other;
- GET /api/workers shows both nodes to an operator's key only;
- the broker is killed and started again empty while submissions are queued: none is lost;
- a node is SIGKILLed while grading: its work is queued again and graded once by the other; its sandboxes
  die with it;
- SIGTERM: the last node finishes the grading it runs, takes no other job (none prefetched), exits 0.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from judge.dispatch.capabilities import SUBMISSIONS_QUEUE
from judge.dispatch.events import FINAL_KINDS
from judge.service.apikeys import hash_key
from judge.store import NodeState, Status, Store
from tests import postgres, redis_server
from tests.conftest import FIXTURE_SLUG
from tests.scale_support import FAST_CLOCKS, NodeProcess, wait_until
from tests.service_support import ServeProcess, describe_processes, live_processes, solution, sse_events

# Its own xdist group: the cluster runs beside the seed-check group, not after it (suite time).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("scale")]

SCALE = FIXTURE_SLUG  # served from the fixture problems (ServeProcess, NodeProcess)
OPERATOR_KEY, LEARNER_KEY = "jj_operator-test-key-0123456789", "jj_learner-test-key-0123456789"
#: (problem, expected verdict, code): every submission is made unique by a trailing comment.
MIX = [
    (SCALE, "accepted", solution(SCALE, "accepted", "tree_util_map.py")),
    (SCALE, "wrong_answer", solution(SCALE, "wrong_answer", "adds_factor.py")),
    (SCALE, "accepted", solution(SCALE, "accepted", "float32_then_cast.py")),
]
# Loading sleeps 3 s, so a grading is surely running when its node is killed.
SLOW_ACCEPTED = "import time\ntime.sleep(3)\n" + solution(SCALE, "accepted", "tree_util_map.py")

_why = redis_server.why_unavailable() or postgres.why_unavailable()
if _why:
    pytestmark.append(pytest.mark.skip(reason=_why))


@dataclass
class Cluster:
    redis: redis_server.RedisServer
    database_url: str
    store: Store
    apis: list[ServeProcess]
    workers: list[NodeProcess]

    def client(self, n: int, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.apis[n].url, timeout=120, headers=headers)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    base = tmp_path_factory.mktemp("cluster")
    redis = redis_server.RedisServer()
    pg = postgres.PostgresServer()
    apis: list[ServeProcess] = []
    workers: list[NodeProcess] = []
    store: Store | None = None
    try:
        redis.start()
        pg.start()
        database_url = pg.new_database()
        env = {
            **FAST_CLOCKS,
            "JUDGE_QUEUE_URL": redis.url,
            "JUDGE_DATABASE_URL": database_url,
            "JUDGE_API_KEYS": json.dumps({"ops": hash_key(OPERATOR_KEY), "learner": hash_key(LEARNER_KEY)}),
            "JUDGE_OPERATOR_KEYS": "ops",
            "JUDGE_QUEUE_SIZE": "500",
        }
        for n in range(2):
            apis.append(ServeProcess(base / f"api{n}", JUDGE_SANDBOX_SLOT_BASE=str(600 + 10 * n), **env))
            slots = str(640 + 10 * n)
            workers.append(NodeProcess(base / f"worker{n}", JUDGE_SANDBOX_SLOT_BASE=slots, **env))
        # One after another: on 2 busy cores, four sandbox self-tests and warm-ups at once outlast the
        # sandbox's start-up limit.
        for process in [*apis, *workers]:
            process.start()
        store = Store(database_url)
        yield Cluster(redis, database_url, store, apis, workers)
    finally:
        for worker in workers:
            worker.stop()
        for api in apis:
            api.stop()
        if store is not None:
            store.close()
        redis.stop()
        pg.stop()


_unique = itertools.count()


def submit(client: httpx.Client, problem: str, code: str) -> str:
    response = client.post(
        "/api/submissions", json={"problem": problem, "code": f"{code}\n# {next(_unique)}\n"}
    )
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def assert_graded_once(store: Store, ids: list[str]) -> None:
    """Each submission is done, with exactly one final event (one result stored, one verdict change)."""
    for sid in ids:
        record = store.submissions.get(sid)
        assert record is not None and record.status is Status.DONE, (sid, record)
        finals = [e for e in store.events.after(sid, 0) if e.kind in FINAL_KINDS]
        assert len(finals) == 1, (sid, finals)


def wait_done(store: Store, ids: list[str], timeout: float) -> None:
    def done() -> bool:
        return all((r := store.submissions.get(sid)) is not None and r.finished for sid in ids)

    wait_until(done, timeout, f"{len(ids)} submissions to be graded", interval=0.5)


def test_sixty_submissions_over_two_api_nodes_are_graded_exactly_once(cluster: Cluster) -> None:
    expected: dict[str, str] = {}
    with cluster.client(0) as a, cluster.client(1) as b:
        for n in range(60):
            problem, verdict, code = MIX[n % len(MIX)]
            expected[submit((a, b)[n % 2], problem, code)] = verdict
        ids = list(expected)
        # Made on A, waited on and streamed from B (and the other way round): the API nodes share nothing.
        for sid, other in ((ids[0], b), (ids[1], a)):
            body = other.get(f"/api/submissions/{sid}", params={"wait": 60}).json()
            assert body["status"] == "done" and body["verdict"] == expected[sid], body
            with other.stream("GET", f"/api/submissions/{sid}/events") as stream:
                events = sse_events(stream.read().decode())
            kinds = [kind for _id, kind, _data in events]
            assert kinds.count("result") == 1 and "case" in kinds, kinds
        wait_done(cluster.store, ids, timeout=600)
        for sid, verdict in expected.items():
            body = (a, b)[hash(sid) % 2].get(f"/api/submissions/{sid}").json()
            assert body["status"] == "done" and body["verdict"] == verdict, body
    assert_graded_once(cluster.store, ids)
    graded_by = {r.node for sid in ids if (r := cluster.store.submissions.get(sid)) is not None}
    assert graded_by == {w.name for w in cluster.workers}  # both nodes took work


def test_workers_endpoint_lists_nodes_to_operators_only(cluster: Cluster) -> None:
    with cluster.client(1) as anonymous, cluster.client(1, LEARNER_KEY) as learner:
        assert anonymous.get("/api/workers").status_code == 401
        refused = learner.get("/api/workers")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    with cluster.client(0, OPERATOR_KEY) as operator:
        # A node's busy count comes with its heartbeat (1 s here): the test before may have just ended a job.
        def idle() -> bool:
            nodes = operator.get("/api/workers").json()["nodes"]
            return all(n["busy"] == 0 for n in nodes)

        wait_until(idle, 15, "every node to report its last job done")
        body = operator.get("/api/workers").json()
        ready = operator.get("/readyz").json()
    assert body["dispatch"] == "celery"
    shown = {n["name"]: n for n in body["nodes"]}
    for worker in cluster.workers:
        node = shown[worker.name]
        assert node["state"] == "ready" and node["alive"] and node["slots"] == 1, node
        assert node["busy"] == 0 and node["graded"] > 0, node
    assert body["slots"] == 2
    assert ready["ready"] and ready["database"] == "ok" and ready["queue"] == "ok" and ready["nodes"] == 2, (
        ready
    )
    # Each node's own metrics.
    metrics = httpx.get(f"{cluster.workers[0].url}/metrics", timeout=10).text
    assert "judge_grading_seconds_count" in metrics and "judge_verdicts_total" in metrics


def test_broker_restart_with_submissions_queued_loses_nothing(cluster: Cluster) -> None:
    import redis

    broker = redis.Redis.from_url(cluster.redis.url)
    with cluster.client(0) as a, cluster.client(1) as b:
        ids = [submit((a, b)[n % 2], SCALE, MIX[0][2]) for n in range(12)]
        waiting = int(broker.llen(SUBMISSIONS_QUEUE))
        queued = sum(
            1 for sid in ids if (r := cluster.store.submissions.get(sid)) and r.status is Status.QUEUED
        )
        assert waiting > 0 and queued > 0, (waiting, queued)
        broker.close()
        cluster.redis.restart()  # an empty broker: its messages are gone
        wait_done(cluster.store, ids, timeout=300)
        for sid in ids:
            assert a.get(f"/api/submissions/{sid}").json()["verdict"] == "accepted"
    assert_graded_once(cluster.store, ids)
    with cluster.client(0) as a:  # the service works on afterwards
        after = submit(a, SCALE, MIX[0][2])
        body = a.get(f"/api/submissions/{after}", params={"wait": 60}).json()
        assert body["verdict"] == "accepted", body


def test_sigkill_a_grading_node_its_work_is_graded_once_elsewhere(cluster: Cluster) -> None:
    victim, survivor = cluster.workers
    with cluster.client(0) as a:
        ids = [submit(a, SCALE, SLOW_ACCEPTED) for _ in range(6)]
        wait_until(
            lambda: bool(cluster.store.attempts.held_by(victim.name)), 120, "the victim node to be grading"
        )
        held = cluster.store.attempts.held_by(victim.name)
        started = time.monotonic()
        victim.kill()
        # Its sandboxes die with it (SIGKILL on the parent's death); on a loaded host their exit may take
        # longer than a second, so wait a bounded while for every live one (zombies are dead) to be gone.
        deadline = time.monotonic() + 10.0
        while (left := live_processes(victim.session_processes())) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], f"the killed node's sandboxes outlived it: {describe_processes(left)}"

        def requeued() -> bool:
            return all(
                (r := cluster.store.submissions.get(sid)) is not None and r.node != victim.name
                for sid in held
            )

        wait_until(requeued, 60, "the lost node's work to be queued again")
        log_redelivery(time.monotonic() - started)
        wait_done(cluster.store, ids, timeout=300)
        for sid in ids:
            assert a.get(f"/api/submissions/{sid}").json()["verdict"] == "accepted"
    assert_graded_once(cluster.store, ids)
    for sid in held:
        record = cluster.store.submissions.get(sid)
        assert record is not None and record.attempts == 2, record  # graded once more, by the survivor
    nodes = {n.name: n for n in cluster.store.nodes.known()}
    assert nodes[victim.name].state is NodeState.LOST
    assert survivor.proc.poll() is None


def log_redelivery(seconds: float) -> None:
    """Printed (pytest -s), not asserted: with node_timeout_s=4 and sweep_s=1 it is about 4-6 s."""
    print(f"lost node's work queued again {seconds:.1f} s after the SIGKILL")


def test_sigterm_finishes_the_running_grading_and_takes_nothing_more(cluster: Cluster) -> None:
    survivor = cluster.workers[1]
    with cluster.client(0) as a:
        running, waiting = submit(a, SCALE, SLOW_ACCEPTED), submit(a, SCALE, SLOW_ACCEPTED)
        wait_until(
            lambda: cluster.store.attempts.held_by(survivor.name) == [running], 120, "the node to be grading"
        )
        assert survivor.stop(timeout=120) == 0  # SIGTERM: a clean exit
        body = a.get(f"/api/submissions/{running}").json()
        assert body["status"] == "done" and body["verdict"] == "accepted", body  # finished, not cut short
        left = cluster.store.submissions.get(waiting)
        assert left is not None and left.status is Status.QUEUED and left.attempts == 0  # never taken
    nodes = {n.name: n for n in cluster.store.nodes.known()}
    assert nodes[survivor.name].state is NodeState.STOPPED and nodes[survivor.name].busy == 0
    assert_graded_once(cluster.store, [running])
