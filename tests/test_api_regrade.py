"""Regrades and problem versions: a regrade is a new submission linked to its original and graded with
the problem as it is now (both verdicts kept); operators regrade a whole problem; every problem shows its
version (hash and revision) in the list, the detail (ETag) and each manifest, and grading nodes that
serve other versions are detected (a submission is held for its own version: tests/test_version_hold.py)."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from judge.service.apikeys import generate_key, hash_key
from judge.service.routes.workers import _listing
from judge.service.state import Services
from judge.store import NodeBeat, NodeState
from judge.store.models import Submission, utcnow
from judge.verdicts import Verdict
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.service_support import FakeEngine, make_settings, running, sandbox_ok

SCALE = FIXTURE_SLUG
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")
KEY, OPERATOR = generate_key(), generate_key()
USER = {"Authorization": f"Bearer {KEY}"}
OP = {"Authorization": f"Bearer {OPERATOR}"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, Services, FakeEngine]]:
    settings = make_settings(
        tmp_path, api_keys={"lms": hash_key(KEY), "op": hash_key(OPERATOR)}, operator_keys=["op"]
    )
    engine = FakeEngine()
    with running(settings, backend=PROCESS, engine=engine) as (client, services):
        yield client, services, engine


def submitted(client: TestClient, **body: Any) -> str:
    answer = client.post("/api/submissions", json={"problem": SCALE, "code": CODE, **body}, headers=USER)
    assert answer.status_code == 202, answer.text
    sid: str = answer.json()["id"]
    return sid


def finished(client: TestClient, sid: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/api/submissions/{sid}?wait=30", headers=USER).json()
    assert body["status"] == "done", body
    return body


def test_a_regrade_is_a_new_linked_submission_and_both_verdicts_stay(
    api: tuple[TestClient, Services, FakeEngine],
) -> None:
    client, _, engine = api
    original = submitted(client, external_user="u1", tags={"course": "c"})
    assert finished(client, original)["verdict"] == "accepted"
    engine.verdict = Verdict.WRONG_ANSWER  # the problem changed: the same code now fails
    answer = client.post(f"/api/submissions/{original}/regrade", headers=USER)
    assert answer.status_code == 202 and answer.json()["regrade_of"] == original
    regrade = answer.json()["id"]
    assert regrade != original and answer.headers["location"].endswith(regrade)
    again = finished(client, regrade)
    assert again["verdict"] == "wrong_answer" and again["regrade_of"] == original
    assert again["external_user"] == "u1" and again["tags"] == {"course": "c"}
    assert finished(client, original)["verdict"] == "accepted"  # the old verdict is kept
    # A regrade of a regrade links to the original; the listing finds every regrade of it.
    second = client.post(f"/api/submissions/{regrade}/regrade", headers=USER).json()
    assert second["regrade_of"] == original
    listed = client.get("/api/submissions", params={"regrade_of": original}, headers=USER).json()
    assert {item["id"] for item in listed["items"]} == {regrade, second["id"]}
    assert client.get(f"/api/submissions/{regrade}/code", headers=USER).json()["code"] == CODE
    # Someone else's submission cannot be regraded (it does not exist for them).
    assert client.post(f"/api/submissions/{original}/regrade", headers=OP).status_code == 404


def test_operators_regrade_what_another_version_graded(api: tuple[TestClient, Services, FakeEngine]) -> None:
    client, services, _ = api
    old, current = submitted(client), submitted(client)
    for sid in (old, current):
        finished(client, sid)
    stale = {**finished(client, old)["manifest"], "problem_hash": "0" * 64}
    with services.store.engine.begin() as connection:
        connection.execute(update(Submission).where(Submission.id == old).values(manifest=stale))
    assert client.post(f"/api/problems/{SCALE}/regrade", headers=USER).status_code == 403
    anonymous = client.post(f"/api/problems/{SCALE}/regrade")
    assert anonymous.status_code == 401
    batch = client.post(f"/api/problems/{SCALE}/regrade", headers=OP)
    assert batch.status_code == 202
    body = batch.json()
    assert body["remaining"] == 0 and len(body["queued"]) == 1
    regrade = body["queued"][0]
    assert finished(client, regrade)["regrade_of"] == old  # owned by the original's key
    # Graded with this version now: a second call has nothing left to do; force regrades all.
    assert client.post(f"/api/problems/{SCALE}/regrade", headers=OP).json()["queued"] == []
    forced = client.post(f"/api/problems/{SCALE}/regrade", params={"force": "true"}, headers=OP).json()
    assert len(forced["queued"]) == 2
    assert client.post("/api/problems/nope/regrade", headers=OP).status_code == 404


def test_every_problem_shows_its_version(api: tuple[TestClient, Services, FakeEngine]) -> None:
    client, _, _ = api
    listed = {p["slug"]: p for p in client.get("/api/problems", headers=USER).json()}
    version = listed[SCALE]["version"]
    assert len(version["hash"]) == 64 and version["short_hash"] == version["hash"][:12]
    assert version["revision"] == 1  # the fixture's problem.toml states none: 1
    detail = client.get(f"/api/problems/{SCALE}", headers=USER)
    assert detail.headers["etag"] == f'"{version["hash"]}"'
    assert detail.json()["version"] == version
    unchanged = client.get(
        f"/api/problems/{SCALE}", headers={**USER, "If-None-Match": detail.headers["etag"]}
    )
    assert unchanged.status_code == 304 and unchanged.content == b""
    stale = client.get(f"/api/problems/{SCALE}", headers={**USER, "If-None-Match": '"old"'})
    assert stale.status_code == 200
    sid = submitted(client)
    manifest = finished(client, sid)["manifest"]
    assert manifest["problem_hash"] == version["hash"] and "accepted_problem_hash" not in manifest
    assert manifest["problem_revision"] == 1


def test_a_stated_revision_is_shown_with_the_hash_everywhere(tmp_path: Path) -> None:
    """``revision = 7`` in problem.toml: the list, the detail and the manifest say 7 beside the hash."""
    fixtures = tmp_path / "fixtures"
    shutil.copytree(FIXTURES.parent, fixtures)
    toml = fixtures / "problems" / SCALE / "problem.toml"
    toml.write_text(
        toml.read_text().replace('difficulty = "easy"\n', 'difficulty = "easy"\nrevision = 7\n', 1)
    )
    settings = make_settings(tmp_path, problems_dir=fixtures / "problems", api_keys={"lms": hash_key(KEY)})
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        listed = {p["slug"]: p for p in client.get("/api/v1/problems", headers=USER).json()}
        version = listed[SCALE]["version"]
        assert version["revision"] == 7 and listed["lerp-trees"]["version"]["revision"] == 1
        assert client.get(f"/api/v1/problems/{SCALE}", headers=USER).json()["version"] == version
        manifest = finished(client, submitted(client))["manifest"]
    assert (manifest["problem_revision"], manifest["problem_hash"]) == (7, version["hash"])


def test_nodes_serving_other_versions_are_detected(tmp_path: Path) -> None:
    """Grading nodes report the versions they serve in their heartbeats; the API node compares them
    with its own: GET /api/v1/workers lists the problem in version_skew, and a gauge counts it."""
    settings = make_settings(tmp_path, queue_url="redis://127.0.0.1:9/0")  # built, never started
    services = Services.build(settings, backend=PROCESS, engine=FakeEngine(), sandbox_check=sandbox_ok)
    try:
        services.store.migrate()
        ours = services.api_versions
        stale = {**ours, SCALE: {"revision": 1, "hash": "e" * 64}}
        for name, versions in (("node-a", ours), ("node-b", stale)):
            services.store.heartbeat(
                NodeBeat(name=name, hostname="h", pid=1, queues="q", backend="bwrap", version="0",
                         state=NodeState.READY, detail=None, slots=1, busy=0, idle_workers=1, graded=0,
                         started_at=utcnow(), problem_versions=versions)
            )  # fmt: skip
        [skew] = services.version_skew()
        assert skew["problem"] == SCALE
        by_hash = {v["hash"]: v["served_by"] for v in skew["versions"]}
        assert by_hash == {ours[SCALE]["hash"]: ["api", "node-a"], "e" * 64: ["node-b"]}
        listing = _listing(services)
        assert [s.problem for s in listing.version_skew] == [SCALE]
        assert {n.name: n.problem_versions for n in listing.nodes}["node-b"] == stale
        assert b"judge_problem_versions_mismatched 1.0" in services.metrics.render()
    finally:
        services.stop()


def test_a_regrade_counts_against_the_callers_limits_and_operators_against_the_queue(
    tmp_path: Path,
) -> None:
    """A learner's regrade is the caller's submit: past submissions_per_client a 429 like a submit's
    (Retry-After, rate-limit headers, the limit named). An operator's regrade of a problem is not held to
    the owner's caps, but never goes past the queue's size."""
    settings = make_settings(
        tmp_path,
        api_keys={"lms": hash_key(KEY), "op": hash_key(OPERATOR)},
        operator_keys=["op"],
        submissions_per_client=2,
        queue_size=2,
    )
    gate = threading.Event()
    gate.set()

    def held() -> None:
        gate.wait(30)

    engine = FakeEngine(delay=held)
    with running(settings, backend=PROCESS, engine=engine) as (client, services):
        done = [submitted(client) for _ in range(2)]
        for sid in done:
            finished(client, sid)
        gate.clear()
        submitted(client)  # grading, held at the gate
        deadline = time.monotonic() + 30
        while services.dispatcher.running() != 1:
            assert time.monotonic() < deadline, "the grading never started"
            time.sleep(0.02)
        submitted(client)  # queued: the key is at its cap of 2 unfinished
        refused = [client.post(f"/api/v1/submissions/{done[0]}/regrade", headers=USER) for _ in range(3)]
        submit = client.post("/api/v1/submissions", json={"problem": SCALE, "code": CODE}, headers=USER)
        assert [r.status_code for r in refused] == [429, 429, 429] and submit.status_code == 429
        for answer in (*refused, submit):
            error = answer.json()["error"]
            assert error["code"] == "queue_full" and error["limit"] == "submissions_per_client"
            assert answer.headers["retry-after"] == "5"
            assert "x-ratelimit-remaining" in answer.headers and "ratelimit-limit" in answer.headers
        assert set(refused[0].json()["error"]) == set(submit.json()["error"])
        assert services.store.count() == 4  # nothing stored for the refused regrades
        # The operator regrades both finished ones past the key's cap, as far as the queue has room (2,
        # one taken): one queued, one left for the next call.
        batch = client.post(f"/api/v1/problems/{SCALE}/regrade", params={"force": "true"}, headers=OP)
        assert batch.status_code == 202
        assert len(batch.json()["queued"]) == 1 and batch.json()["remaining"] == 1
        gate.set()
