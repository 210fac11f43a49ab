"""The README's distributed set-up, as written, and what it promises, on real servers the suite starts.

The README's steps: PostgreSQL's role and database made with the README's own commands (as the postgres
user, on the suite's private server), Redis, the venv's ``judge serve`` with the settings every node needs;
with no grading node yet, /readyz says the API node is ready but submissions are not graded, and a
submission is stored and queued, not lost; then two ``judge worker`` grading nodes: /readyz says
``"nodes": 2`` and ``"submissions_ready": true``, and the queued submission is graded.

On that deployment (the grading nodes without callback settings, the API node with them):

- a callback of a submission a grading node graded is delivered by the API node, once, signed, from try 1
  after the grading node's try-0 note (issue 23, point 10);
- a grading node SIGKILLed while grading: the sweeper queues its job again, which shows in the sweeping
  node's ``judge_requeues_total{reason="lost"}``, the API node's ``judge_grading_nodes{state="lost"}``
  counts the node, and the other node grades the job once (point 12).
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from judge.dispatch.callbacks import SIGNATURE_HEADER, verify
from judge.dispatch.events import FINAL_KINDS
from judge.store import Status, Store
from tests import postgres, redis_server
from tests.conftest import FIXTURE_SLUG, ROOT
from tests.scale_support import FAST_CLOCKS, NodeProcess, wait_until
from tests.service_support import ServeProcess, solution
from tests.test_service_callbacks import Receiver

# One deployment for the module's tests, on one xdist worker, in this order (the last kills a node).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("api_distributed")]

README = ROOT / "README.md"
JUDGE = ROOT / ".venv" / "bin" / "judge"
SECRET = "distributed-callback-secret"
CODE = "def scale_tree(tree, factor):\n    return tree\n"
# Loading sleeps 3 s, so its grading is surely running when its node is killed.
SLOW_ACCEPTED = "import time\ntime.sleep(3)\n" + solution(FIXTURE_SLUG, "accepted", "tree_util_map.py")


def readme_commands() -> list[str]:
    """The SQL of the README's ``runuser -u postgres -- psql -c "..."`` lines, in order."""
    text = README.read_text()
    return re.findall(r'^runuser -u postgres -- psql -c "([^"]+)"$', text, re.MULTILINE)


def readme_slot_bases() -> list[str]:
    """The ``JUDGE_SANDBOX_SLOT_BASE`` of each README ``judge worker`` line, in order."""
    text = README.read_text()
    return re.findall(r"^JUDGE_SANDBOX_SLOT_BASE=(\d+) judge worker --concurrency 1 .*&", text, re.MULTILINE)


def readme_steps() -> list[str]:
    """What the README's two-worker set-up does, step by step, in its order."""
    block = README.read_text().split("apt-get install -y postgresql redis-server\n", 1)[1].split("```", 1)[0]
    kinds = [
        ("role", r"^runuser -u postgres -- psql -c \"CREATE ROLE"),
        ("database", r"^runuser -u postgres -- psql -c \"CREATE DATABASE"),
        ("serve", r"^judge serve "),
        ("readyz", r"^curl -s localhost:8000/readyz"),
        ("submit", r"^ID=\$\(curl -s localhost:8000/api/v1/submissions "),
        ("worker", r"^JUDGE_SANDBOX_SLOT_BASE=\d+ judge worker "),
        ("read", r"^curl -s \"localhost:8000/api/v1/submissions/\$ID\?wait="),
    ]
    return [kind for line in block.splitlines() for kind, pattern in kinds if re.match(pattern, line)]


@dataclass
class Deployment:
    """The README's steps taken, with what each answered."""

    api: ServeProcess
    workers: list[NodeProcess]
    store: Store
    receiver: Receiver
    #: /readyz before any grading node, and the submission made then (with its status a moment later).
    ready_alone: dict[str, Any] = field(default_factory=dict)
    queued_id: str = ""
    queued_status: str = ""
    #: /readyz once both grading nodes are up.
    ready_with_nodes: dict[str, Any] = field(default_factory=dict)

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.api.url}{path}", timeout=30)

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(f"{self.api.url}{path}", json=body, timeout=30)

    def finished(self, sid: str, timeout: float = 150) -> dict[str, Any]:
        """The submission's read once it is finished (long-polled ``?wait=``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            read: dict[str, Any] = self.get(f"/api/v1/submissions/{sid}?wait=20").json()
            if read["status"] in ("done", "failed"):
                return read
        raise AssertionError(f"submission {sid} not finished within {timeout:g} s")


def _start_all(processes: list[NodeProcess]) -> None:
    """Start the grading nodes together, as the README's two background lines do."""
    errors: list[BaseException] = []

    def start(process: NodeProcess) -> None:
        try:
            process.start()
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(p,)) for p in processes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    for reason in (postgres.why_unavailable(), redis_server.why_unavailable()):
        if reason is not None:
            pytest.skip(reason)
    base = tmp_path_factory.mktemp("distributed")
    pg, redis = postgres.PostgresServer(), redis_server.RedisServer()
    receiver = Receiver([])
    receiver.thread.start()
    api: ServeProcess | None = None
    workers: list[NodeProcess] = []
    store: Store | None = None
    try:
        pg.start()
        redis.start()
        psql = ["runuser", "-u", "postgres", "--", "psql", "-h", str(pg.base), "-p", str(pg.port)]
        for sql in readme_commands():  # the README's commands, pointed at the suite's private server
            subprocess.run([*psql, "-c", sql], check=True, capture_output=True, timeout=60, cwd=pg.base)
        database = f"postgresql+psycopg://judge:judge@/judge?host={pg.base}&port={pg.port}"
        # What every node needs (README): the queue and the database; the sandbox the suite can run; short
        # clocks (a lost node is noticed in 4 s).
        every = {
            **FAST_CLOCKS,
            "JUDGE_QUEUE_URL": redis.url,
            "JUDGE_DATABASE_URL": database,
            "JUDGE_SANDBOX": "process",
            "JUDGE_INSECURE": "1",
        }
        # Callback settings on the API node only: the grading nodes leave callbacks to it (README).
        callbacks = {
            "JUDGE_CALLBACK_HOSTS": "127.0.0.1",
            "JUDGE_CALLBACK_SECRET": SECRET,
            "JUDGE_CALLBACK_POLL_S": "0.2",
        }
        api = ServeProcess(base / "api", JUDGE_SANDBOX_SLOT_BASE="890", **every, **callbacks)
        api.start()
        store = Store(database)
        found = Deployment(api, workers, store, receiver)
        found.ready_alone = found.get("/readyz").json()
        created = found.post("/api/v1/submissions", {"problem": FIXTURE_SLUG, "code": CODE})
        assert created.status_code == 202, created.text
        found.queued_id = created.json()["id"]
        time.sleep(0.5)
        found.queued_status = found.get(created.headers["location"]).json()["status"]
        for n, slot_base in enumerate(readme_slot_bases()):
            workers.append(NodeProcess(base / f"worker{n}", JUDGE_SANDBOX_SLOT_BASE=slot_base, **every))
        _start_all(workers)

        def both_ready() -> bool:
            found.ready_with_nodes = found.get("/readyz").json()
            return found.ready_with_nodes.get("nodes") == 2

        wait_until(both_ready, 60, "/readyz to count both grading nodes")
        yield found
    finally:
        for worker in workers:
            worker.stop()
        if api is not None:
            api.stop()
        if store is not None:
            store.close()
        receiver.server.shutdown()
        receiver.server.server_close()
        redis.stop()
        pg.stop()


def test_the_readme_distributed_steps_work_as_written(deployment: Deployment) -> None:
    assert readme_commands() == [
        "CREATE ROLE judge LOGIN PASSWORD 'judge'",
        "CREATE DATABASE judge OWNER judge",
    ]
    assert readme_slot_bases() == ["100", "200"]  # one slot base per node on the machine
    # The fixture takes these steps in this order (the README's problem is a shipped one, the fixture's
    # the suite's own).
    assert readme_steps() == [
        "role", "database", "serve", "readyz", "submit", "worker", "worker", "readyz", "read",
    ]  # fmt: skip
    # `judge` is the venv's command, as the README says.
    assert subprocess.run([str(JUDGE), "--help"], capture_output=True, timeout=120).returncode == 0
    alone = deployment.ready_alone
    assert alone["ready"] and alone["dispatch"] == "celery"
    assert alone["database"] == "ok" and alone["queue"] == "ok" and alone["nodes"] == 0
    assert alone["submissions_ready"] is False and "no live grading node" in alone["submissions_reason"]
    assert deployment.queued_status == "queued"  # stored in the role's database, waiting for a grading node
    both = deployment.ready_with_nodes
    assert both["ready"] and both["nodes"] == 2 and both["submissions_ready"] is True
    # The submission made before any grading node is graded once they are up.
    read = deployment.finished(deployment.queued_id)
    assert read["status"] == "done" and read["verdict"] == "wrong_answer", read


def test_a_grading_nodes_callback_is_sent_by_the_api_node(deployment: Deployment) -> None:
    receiver = deployment.receiver
    body = {"problem": FIXTURE_SLUG, "code": CODE + "# called back\n", "callback_url": receiver.url}
    created = deployment.post("/api/v1/submissions", body)
    assert created.status_code == 202, created.text
    sid = created.json()["id"]
    receiver.wait_for(1, timeout=120)

    def delivered() -> bool:
        state: str = deployment.get(f"/api/v1/submissions/{sid}").json()["callback"]["state"]
        return state == "delivered"

    wait_until(delivered, 30, "the callback to be recorded delivered")
    time.sleep(1.0)  # several more polls of the API node: nothing is sent twice
    assert len(receiver.requests) == 1
    headers, payload, _ = receiver.requests[0]
    assert verify(
        SECRET.encode(),
        payload,
        headers[SIGNATURE_HEADER],
        timestamp=headers["X-Judge-Timestamp"],
        delivery=headers["X-Judge-Delivery"],
    )
    assert json.loads(payload)["id"] == sid and json.loads(payload)["status"] == "done"
    assert headers["X-Judge-Delivery-Attempt"] == "1"
    read = deployment.get(f"/api/v1/submissions/{sid}").json()
    tries = read["callback"]["attempts"]
    assert [(t["attempt"], t["status_code"]) for t in tries] == [(0, None), (1, 200)]
    graders = {w.name for w in deployment.workers}
    assert any(f"not sent by grading node {name}" in tries[0]["error"] for name in graders), tries[0]


def test_a_regrade_is_a_grading_nodes_new_grading_called_back_only_when_asked(deployment: Deployment) -> None:
    """A regrade through the distributed queue: a grading node grades the same submission again and
    stores a new grading (no new submission); its callback, handed off to the API node, is sent only with
    ``notify=true``, as a new delivery (a new webhook-id)."""
    receiver = deployment.receiver
    body = {"problem": FIXTURE_SLUG, "code": CODE + "# regraded\n", "callback_url": receiver.url}
    sid = deployment.post("/api/v1/submissions", body).json()["id"]
    first = deployment.finished(sid)

    def calls() -> list[tuple[dict[str, str], dict[str, Any]]]:
        with receiver.lock:
            received = list(receiver.requests)
        return [(h, json.loads(b)) for h, b, _ in received if json.loads(b)["id"] == sid]

    wait_until(lambda: len(calls()) == 1, 120, "the first grading's callback")
    stored = len(deployment.store.submissions.ids())

    def graded(number: int) -> bool:
        items = deployment.get(f"/api/v1/submissions/{sid}/gradings").json()["items"]
        return any(g["number"] == number and g["status"] == "done" for g in items)

    quiet = httpx.post(f"{deployment.api.url}/api/v1/submissions/{sid}/regrade", timeout=30)
    assert quiet.status_code == 202 and quiet.json()["grading"] == 2, quiet.text
    wait_until(lambda: graded(2), 150, "the regrade to be graded")
    again = deployment.finished(sid)
    assert again["grading"] == 2 and again["verdict"] == first["verdict"]
    assert again["manifest"]["problem_hash"] == first["manifest"]["problem_hash"]
    assert len(deployment.store.submissions.ids()) == stored  # no new submission
    time.sleep(1.5)  # several polls of the API node's sender: no callback without notify
    assert len(calls()) == 1
    loud = httpx.post(
        f"{deployment.api.url}/api/v1/submissions/{sid}/regrade", params={"notify": "true"}, timeout=30
    )
    assert loud.status_code == 202 and loud.json()["grading"] == 3, loud.text
    wait_until(lambda: len(calls()) == 2, 150, "the notifying regrade's callback")
    (before, _), (after, payload) = calls()
    assert payload["grading"] == 3 and payload["status"] == "done"
    assert after["webhook-id"] != before["webhook-id"]


def _metric(text: str, name: str, labels: str) -> float:
    """A sample of ``/metrics`` text; 0 when the series has no sample yet."""
    match = re.search(rf"^{re.escape(name)}{re.escape(labels)} (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def test_a_lost_nodes_job_is_requeued_and_counted(deployment: Deployment) -> None:
    assert all(w.proc.poll() is None for w in deployment.workers)
    lost_before = _metric(deployment.get("/metrics").text, "judge_grading_nodes", '{state="lost"}')
    assert lost_before == 0
    created = deployment.post("/api/v1/submissions", {"problem": FIXTURE_SLUG, "code": SLOW_ACCEPTED})
    assert created.status_code == 202, created.text
    sid = created.json()["id"]

    def running() -> bool:
        record = deployment.store.submissions.get(sid)
        return record is not None and record.status is Status.RUNNING and record.node is not None

    wait_until(running, 120, "the slow submission to be graded")
    record = deployment.store.submissions.get(sid)
    assert record is not None
    (victim,) = [w for w in deployment.workers if w.name == record.node]
    (survivor,) = [w for w in deployment.workers if w is not victim]
    victim.kill()
    read = deployment.finished(sid)
    assert read["status"] == "done" and read["verdict"] == "accepted", read
    graded = deployment.store.submissions.get(sid)
    assert graded is not None and graded.attempts == 2
    finals = [e for e in deployment.store.events.after(sid, 0) if e.kind in FINAL_KINDS]
    assert len(finals) == 1  # graded once: the lost attempt stored nothing
    # The sweep runs on one node at a time (a Redis lock): the requeue is counted by whichever swept.
    texts = [deployment.get("/metrics").text, httpx.get(f"{survivor.url}/metrics", timeout=30).text]
    assert sum(_metric(t, "judge_requeues_total", '{reason="lost"}') for t in texts) >= 1
    assert _metric(texts[0], "judge_grading_nodes", '{state="lost"}') == 1
    assert _metric(texts[0], "judge_grading_nodes", '{state="live"}') == 1
    assert deployment.get("/readyz").json()["nodes"] == 1
