"""A rollout on real servers (Redis and PostgreSQL from Debian's packages, one ``judge serve``, two ``judge
worker`` nodes, real sandboxes), as the issue's platform engineer ran it:

- a revision rolled out to the API node and one grading node only (the other still has the old files):
  every submission accepted for the new revision is graded with it, by the node that has it, none by the
  other (nothing misgraded, nothing failed, no attempt used);
- then a version pushed through the operator API: checked by ``judge check``, live, learned by every node
  without a restart, and every submission after it graded with it by whichever node takes it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from judge.authoring.problem_archive import pack
from judge.service.apikeys import hash_key
from judge.store import Status, Store
from tests import postgres, redis_server
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.scale_support import FAST_CLOCKS, NodeProcess, wait_until
from tests.service_support import ServeProcess, solution

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("rollout")]

_why = redis_server.why_unavailable() or postgres.why_unavailable()
if _why:
    pytestmark.append(pytest.mark.skip(reason=_why))

SCALE = FIXTURE_SLUG
OPERATOR, LEARNER = "jj_rollout-operator-key-0123456789", "jj_rollout-learner-key-0123456789"
ACCEPTED = solution(SCALE, "accepted", "tree_util_map.py")


def revised(base: Path, revision: int) -> Path:
    """The fixture problems with scale-tree at ``revision`` (its problems folder)."""
    root = base / f"fixtures-r{revision}"
    shutil.copytree(FIXTURES.parent, root)
    toml = root / "problems" / SCALE / "problem.toml"
    toml.write_text(
        toml.read_text().replace('difficulty = "easy"\n', f'difficulty = "easy"\nrevision = {revision}\n', 1)
    )
    return root / "problems"


@dataclass
class Rollout:
    store: Store
    api: ServeProcess
    old: NodeProcess
    new: NodeProcess
    base: Path

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.api.url, timeout=120, headers={"Authorization": f"Bearer {key}"})


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rollout]:
    base = tmp_path_factory.mktemp("rollout")
    redis = redis_server.RedisServer()
    pg = postgres.PostgresServer()
    processes: list[ServeProcess | NodeProcess] = []
    store: Store | None = None
    try:
        redis.start()
        pg.start()
        database_url = pg.new_database()
        env = {
            **FAST_CLOCKS,
            "JUDGE_QUEUE_URL": redis.url,
            "JUDGE_DATABASE_URL": database_url,
            "JUDGE_API_KEYS": json.dumps({"ops": hash_key(OPERATOR), "learner": hash_key(LEARNER)}),
            "JUDGE_OPERATOR_KEYS": "ops",
            "JUDGE_PROBLEMS_POLL_S": "1",
            "JUDGE_PROBLEM_CHECK_SOLUTIONS": "false",
            "JUDGE_VERSION_HOLD_S": "600",
        }
        two = str(revised(base, 2))
        api = ServeProcess(base / "api", JUDGE_SANDBOX_SLOT_BASE="700", JUDGE_PROBLEMS_DIR=two, **env)
        old = NodeProcess(base / "old", JUDGE_SANDBOX_SLOT_BASE="720", **env)  # the fixture files: r1
        new = NodeProcess(base / "new", JUDGE_SANDBOX_SLOT_BASE="740", JUDGE_PROBLEMS_DIR=two, **env)
        for process in (api, old, new):  # one after another: self-tests at once outlast start-up limits
            processes.append(process)
            process.start()
        store = Store(database_url)
        yield Rollout(store, api, old, new, base)
    finally:
        for process in reversed(processes):
            process.stop()
        if store is not None:
            store.close()
        redis.stop()
        pg.stop()


def graded(rollout: Rollout, ids: list[str], timeout: float = 240) -> dict[str, dict[str, object]]:
    def done() -> bool:
        return all((r := rollout.store.submissions.get(sid)) is not None and r.finished for sid in ids)

    wait_until(done, timeout, f"{len(ids)} gradings", interval=0.5)
    records = {sid: rollout.store.submissions.get(sid) for sid in ids}
    assert all(r is not None and r.status is Status.DONE and r.attempts == 1 for r in records.values()), (
        records
    )
    return {sid: r.manifest for sid, r in records.items() if r is not None}


def submit(client: httpx.Client, n: int) -> str:
    answer = client.post("/api/v1/submissions", json={"problem": SCALE, "code": f"{ACCEPTED}\n# {n}\n"})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["id"])


def test_a_revision_on_one_node_only_is_graded_by_that_node_only(rollout: Rollout) -> None:
    with rollout.client(LEARNER) as client:
        version = client.get(f"/api/v1/problems/{SCALE}").json()["version"]
        assert version["revision"] == 2
        ids = [submit(client, n) for n in range(8)]
        manifests = graded(rollout, ids)
        for sid in ids:
            body = client.get(f"/api/v1/submissions/{sid}").json()
            assert body["verdict"] == "accepted" and body["version_mismatch"] is None
    assert {m["problem_hash"] for m in manifests.values()} == {version["hash"]}
    assert {m["problem_revision"] for m in manifests.values()} == {2}
    graders = {record.node for sid in ids if (record := rollout.store.submissions.get(sid)) is not None}
    assert graders == {rollout.new.name}, "graded only by the node with revision 2"
    metrics = httpx.get(f"{rollout.old.url}/metrics", timeout=30).text
    held = [
        line for line in metrics.splitlines() if line.startswith('judge_requeues_total{reason="version"}')
    ]
    assert held and float(held[0].split()[-1]) >= 1, "the old node was offered some and gave them back"


def test_a_pushed_version_is_learned_by_every_node_without_a_restart(rollout: Rollout) -> None:
    package = revised(rollout.base, 3) / SCALE
    with rollout.client(OPERATOR) as operator:
        answer = operator.put(
            f"/api/v1/admin/problems/{SCALE}",
            content=pack(package),
            headers={"Content-Type": "application/octet-stream"},
        )
        assert answer.status_code == 202, answer.text
        digest = answer.json()["hash"]

        def state() -> str:
            listing = operator.get(f"/api/v1/admin/problems/{SCALE}").json()
            return str(next(v["state"] for v in listing["versions"] if v["hash"] == digest))

        wait_until(lambda: state() != "checking", 300, "judge check of the pushed version", interval=1)
        assert state() == "live"
    wait_until(
        lambda: all(
            (n.problem_versions or {}).get(SCALE, {}).get("hash") == digest
            for n in rollout.store.nodes.known()
            if n.name in (rollout.old.name, rollout.new.name)
        ),
        60,
        "both grading nodes to serve the pushed version",
    )
    with rollout.client(LEARNER) as client:
        wait_until(
            lambda: client.get(f"/api/v1/problems/{SCALE}").json()["version"]["hash"] == digest,
            60,
            "the API node to serve it",
        )
        ids = [submit(client, 100 + n) for n in range(6)]
    manifests = graded(rollout, ids)
    assert {(m["problem_hash"], m["problem_revision"]) for m in manifests.values()} == {(digest, 3)}
