"""Problem versions: every problem shows its version (hash and revision) in the list, the detail (ETag)
and each manifest, and grading nodes that serve other versions are detected (a submission is held for
its own version: tests/test_version_hold.py; regrades, new gradings of a submission:
tests/test_api_gradings.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.service.apikeys import generate_key, hash_key
from judge.service.routes.workers import _listing
from judge.service.state import Services
from judge.store import NodeBeat, NodeState
from judge.store.models import utcnow
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running, sandbox_ok

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
            services.store.nodes.heartbeat(
                NodeBeat(name=name, hostname="h", pid=1, queues="q", backend="bwrap", version="0",
                         state=NodeState.READY, detail=None, slots=1, busy=0, idle_workers=1, graded=0,
                         started_at=utcnow(), problem_versions=versions)
            )  # fmt: skip
        [skew] = services.fleet.version_skew()
        assert skew["problem"] == SCALE
        by_hash = {v["hash"]: v["served_by"] for v in skew["versions"]}
        assert by_hash == {ours[SCALE]["hash"]: ["api", "node-a"], "e" * 64: ["node-b"]}
        listing = _listing(services)
        assert [s.problem for s in listing.version_skew] == [SCALE]
        assert {n.name: n.problem_versions for n in listing.nodes}["node-b"] == stale
        assert b"judge_problem_versions_mismatched 1.0" in services.metrics.render()
    finally:
        services.stop()
