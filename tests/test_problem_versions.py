"""Problem versions as data: stored (SQLite and PostgreSQL) with their check's state, loaded by every node
at its next poll without a restart (``LiveProblems``), served to new submissions once live and prepared,
dropped when retired; the operator API (``/api/v1/admin/problems``) and its refusals; the check that
decides (``judge check`` in a child process)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.authoring.problem_archive import pack, unpack
from judge.cli import main
from judge.core.problem_hash import problem_hash
from judge.core.problems import Problem, ProblemSet
from judge.core.settings import Settings
from judge.dispatch.live_problems import LiveProblems
from judge.service.apikeys import generate_key, hash_key
from judge.service.operator import OperatorError
from judge.service.problem_admin import ProblemAdmin
from judge.service.problem_check import CheckOutcome, outcome, run_check
from judge.service.problem_push import push, retire
from judge.service.state import Services
from judge.store import Store, sqlite_url
from judge.store.problem_versions import ProblemVersions, VersionState
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.scale_support import wait_until
from tests.service_support import make_settings, running

pytest_plugins = ("tests.stores",)

SCALE = FIXTURE_SLUG
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")
KEY, OPERATOR = generate_key(), generate_key()
USER = {"Authorization": f"Bearer {KEY}"}
OP = {"Authorization": f"Bearer {OPERATOR}"}


def revised(tmp_path: Path, revision: int, slug: str = SCALE, title: str | None = None) -> Path:
    """A copy of the fixture package at ``revision`` (and ``title``), as ``problems/<slug>``."""
    root = tmp_path / f"r{revision}-{slug}"
    shutil.copytree(FIXTURES.parent, root)
    package = root / "problems" / slug
    if slug != SCALE:
        shutil.move(root / "problems" / SCALE, package)
    toml = package / "problem.toml"
    text = toml.read_text().replace(f'slug = "{SCALE}"', f'slug = "{slug}"')
    text = text.replace('difficulty = "easy"\n', f'difficulty = "easy"\nrevision = {revision}\n', 1)
    if title is not None:
        text = "\n".join(
            f'title = "{title}"' if line.startswith("title =") else line for line in text.splitlines()
        )
    toml.write_text(text + "\n")
    return package


def content_hash(package: Path, tmp_path: Path) -> str:
    return unpack(
        pack(package), Path(tmp_path / f"h-{package.parent.parent.name}"), package.name
    ).content_hash


# ---------------------------------------------------------------------------------------- the store


def test_versions_are_stored_checked_and_retired_and_the_revision_counts_each_change(
    store: Store, tmp_path: Path
) -> None:
    versions = ProblemVersions(store)
    archive = pack(revised(tmp_path, 2))
    assert versions.revision() == 0
    record, new = versions.push(SCALE, "a" * 64, 2, archive, tenants=["acme"], pushed_by="op")
    assert new and record.state is VersionState.CHECKING and record.tenants == ("acme",)
    assert versions.revision() == 1
    again, new = versions.push(SCALE, "a" * 64, 2, archive, tenants=None, pushed_by="op")
    assert not new and again == record and versions.revision() == 1  # the same package: nothing changes
    findings = [{"check": "spec", "severity": "warning", "where": "problem.toml", "message": "m"}]
    assert versions.settle(SCALE, "a" * 64, live=True, findings=findings)
    assert not versions.settle(SCALE, "a" * 64, live=False, findings=[])  # settled once
    live = versions.get(SCALE, "a" * 64)
    assert live is not None and live.state is VersionState.LIVE and live.findings == findings
    assert live.live_at is not None and versions.revision() == 2
    assert versions.archive(SCALE, "a" * 64) == archive
    assert [v.hash for v in versions.versions(state=VersionState.LIVE)] == ["a" * 64]
    versions.push(SCALE, "b" * 64, 3, archive, tenants=None, pushed_by="op")
    assert versions.settle(SCALE, "b" * 64, live=False, findings=findings)
    [retired] = versions.retire(SCALE, "a" * 64)
    assert retired.state is VersionState.RETIRED and versions.retire(SCALE) == []
    assert versions.revision() == 5
    # A rejected or retired package pushed again is checked again.
    _, new = versions.push(SCALE, "b" * 64, 3, archive, tenants=None, pushed_by="op")
    assert new and versions.get(SCALE, "b" * 64).state is VersionState.CHECKING  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------- loading


def test_a_node_loads_live_versions_at_its_next_poll_and_drops_retired_ones(
    store: Store, tmp_path: Path
) -> None:
    versions = ProblemVersions(store)
    live = LiveProblems(ProblemSet(FIXTURES), tmp_path / "cache")
    base = live.get(SCALE)
    prepared: list[list[Problem]] = []
    assert live.refresh(versions, prepared.append) and not live.refresh(versions, prepared.append)
    assert prepared == []
    package = revised(tmp_path, 2)
    digest = content_hash(package, tmp_path)
    versions.push(SCALE, digest, 2, pack(package), tenants=None, pushed_by="op")
    assert live.refresh(versions, prepared.append)  # checking: nothing served yet
    assert live.get(SCALE) is base
    versions.settle(SCALE, digest, live=True, findings=[])
    assert live.refresh(versions, prepared.append)
    new = live.get(SCALE)
    assert new.spec.revision == 2 and problem_hash(new) == digest
    assert [p.slug for p in prepared[-1]] == [SCALE]  # prepared before it was served
    assert live.versions(SCALE) == (new, base)  # the base version still grades what was accepted for it
    assert len(live) == len(ProblemSet(FIXTURES)) and live.generation == 3
    versions.retire(SCALE)
    assert live.refresh(versions, prepared.append)
    assert live.get(SCALE) is base and live.versions(SCALE) == (base,)


def test_a_pushed_problem_that_is_new_appears_and_goes(store: Store, tmp_path: Path) -> None:
    versions = ProblemVersions(store)
    live = LiveProblems(ProblemSet(FIXTURES), tmp_path / "cache")
    package = revised(tmp_path, 1, slug="scale-tree-two")
    digest = content_hash(package, tmp_path)
    versions.push("scale-tree-two", digest, 1, pack(package), tenants=["acme"], pushed_by="op")
    versions.settle("scale-tree-two", digest, live=True, findings=[])
    live.refresh(versions)
    assert live.get("scale-tree-two").slug == "scale-tree-two"
    assert live.scope("scale-tree-two") == frozenset({"acme"}) and live.scope(SCALE) is None
    versions.retire("scale-tree-two")
    live.refresh(versions)
    assert "scale-tree-two" not in {p.slug for p in live}


# ---------------------------------------------------------------------------------------- the check


def test_the_check_runs_judge_check_in_a_child_process(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, problem_check_solutions=False)
    passed = run_check(settings, FIXTURES, SCALE)
    assert passed.passed, passed.findings
    broken = revised(tmp_path, 2)
    (broken / "statement.md").write_text("# Scale a tree\n\nNo sections at all.\n")
    rejected = run_check(settings, broken.parent, SCALE)
    assert not rejected.passed and rejected.findings
    assert all(f["severity"] in ("error", "warning") for f in rejected.findings)
    assert any(f["severity"] == "error" and "statement" in f["where"] for f in rejected.findings)


def test_the_check_outcome_from_its_report() -> None:
    report = b"""{"ok": false, "problems": [{"checks": [{"name": "cases", "findings": [
        {"severity": "error", "check": "cases", "where": "problems/x/cases/hidden.json: case a",
         "message": "bad", "file": "/tmp/secret/x"}]}]}], "judge_failures": []}"""
    result = outcome(1, report)
    assert not result.passed
    assert result.findings == [
        {
            "check": "cases",
            "severity": "error",
            "where": "problems/x/cases/hidden.json: case a",
            "message": "bad",
        }
    ]
    assert not outcome(0, b"Traceback ...").passed
    assert "without a report" in outcome(-9, b"").findings[0]["message"]
    usage = outcome(2, b'{"error": {"code": "no_sandbox", "message": "no sandbox here"}}')
    assert not usage.passed and usage.findings[0]["message"] == "no sandbox here"
    assert outcome(0, b'{"ok": true, "problems": []}') == CheckOutcome(True, [])


# ---------------------------------------------------------------------------------------- the API


class Checker:
    """Stands for ``run_check`` (whose own test is above): passes, or rejects with a finding."""

    def __init__(self, passed: bool = True) -> None:
        self.passed = passed
        self.checked: list[tuple[Path, str]] = []

    def __call__(self, settings: Settings, problems_dir: Path, slug: str, track: Any = None) -> CheckOutcome:
        assert (problems_dir / slug / "problem.toml").is_file()
        self.checked.append((problems_dir, slug))
        if self.passed:
            return CheckOutcome(True, [])
        finding = {
            "check": "statement",
            "severity": "error",
            "where": "statement.md",
            "message": "no Examples",
        }
        return CheckOutcome(False, [finding])


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, Services, Checker]]:
    settings = make_settings(
        tmp_path,
        api_keys={"lms": hash_key(KEY), "op": hash_key(OPERATOR)},
        operator_keys=["op"],
        problems_poll_s=0.2,
        problem_archive_bytes=256 * 1024,
    )
    checker = Checker()
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        services.problem_admin.checker = checker
        yield client, services, checker


def put(client: TestClient, slug: str, data: bytes, **params: Any) -> Any:
    return client.put(
        f"/api/v1/admin/problems/{slug}",
        content=data,
        headers={**OP, "Content-Type": "application/gzip"},
        params=params,
    )


def settled(client: TestClient, slug: str, digest: str) -> dict[str, Any]:
    def state() -> dict[str, Any]:
        listing = client.get(f"/api/v1/admin/problems/{slug}", headers=OP).json()
        return next(v for v in listing["versions"] if v["hash"] == digest)

    wait_until(lambda: state()["state"] != "checking", 30, "the check")
    return state()


def test_an_operator_adds_a_version_at_runtime_and_new_submissions_are_graded_with_it(
    api: tuple[TestClient, Services, Checker], tmp_path: Path
) -> None:
    client, _, checker = api
    before = client.get(f"/api/v1/problems/{SCALE}", headers=USER).json()["version"]
    old = client.post("/api/v1/submissions", json={"problem": SCALE, "code": CODE}, headers=USER).json()["id"]
    package = revised(tmp_path, 2, title="Scale a Tree, Revised")
    answer = put(client, SCALE, pack(package))
    assert answer.status_code == 202, answer.text
    version = answer.json()
    assert version["state"] == "checking" and version["revision"] == 2 and version["pushed_by"] == "op"
    assert settled(client, SCALE, version["hash"])["state"] == "live"
    assert checker.checked and checker.checked[0][1] == SCALE
    # Served without a restart once the poll loaded and prepared it.
    wait_until(
        lambda: client.get(f"/api/v1/problems/{SCALE}", headers=USER).json()["version"]["revision"] == 2,
        20,
        "the new version served",
    )
    detail = client.get(f"/api/v1/problems/{SCALE}", headers=USER)
    assert detail.json()["title"] == "Scale a Tree, Revised"
    assert detail.headers["etag"] == f'"{version["hash"]}"'
    listed = {p["slug"]: p for p in client.get("/api/v1/problems", headers=USER).json()}
    assert listed[SCALE]["version"]["hash"] == version["hash"]
    sid = client.post("/api/v1/submissions", json={"problem": SCALE, "code": CODE}, headers=USER).json()["id"]
    graded = client.get(f"/api/v1/submissions/{sid}?wait=30", headers=USER).json()
    assert (
        graded["manifest"]["problem_hash"] == version["hash"] and graded["manifest"]["problem_revision"] == 2
    )
    earlier = client.get(f"/api/v1/submissions/{old}?wait=30", headers=USER).json()
    assert earlier["manifest"]["problem_hash"] == before["hash"]
    # The same package again: 200, unchanged.
    same = put(client, SCALE, pack(package))
    assert same.status_code == 200 and same.json()["state"] == "live"
    # Retired: the problems folder's version is served again.
    retired = client.post(f"/api/v1/admin/problems/{SCALE}/retire", headers=OP)
    assert retired.status_code == 200
    body = retired.json()
    assert body["served"] == before["hash"] and body["versions"][0]["state"] == "retired"
    assert client.get(f"/api/v1/problems/{SCALE}", headers=USER).json()["version"] == before
    missing = client.post(f"/api/v1/admin/problems/{SCALE}/retire", headers=OP)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "version_not_found"


def test_a_rejected_version_reports_its_findings_and_is_never_served(
    api: tuple[TestClient, Services, Checker], tmp_path: Path
) -> None:
    client, services, checker = api
    checker.passed = False
    version = put(client, SCALE, pack(revised(tmp_path, 5))).json()
    rejected = settled(client, SCALE, version["hash"])
    assert rejected["state"] == "rejected"
    assert rejected["findings"] == [
        {"check": "statement", "severity": "error", "where": "statement.md", "message": "no Examples"}
    ]
    services.refresh_problems()
    assert client.get(f"/api/v1/problems/{SCALE}", headers=USER).json()["version"]["revision"] == 1


def test_the_admin_api_is_for_operators_and_refuses_bad_archives_naming_the_fault(
    api: tuple[TestClient, Services, Checker], tmp_path: Path
) -> None:
    client, services, checker = api
    data = pack(revised(tmp_path, 2))
    anonymous = client.put(f"/api/v1/admin/problems/{SCALE}", content=data)
    assert anonymous.status_code == 401
    learner = client.put(f"/api/v1/admin/problems/{SCALE}", content=data, headers=USER)
    assert learner.status_code == 403 and learner.json()["error"]["code"] == "forbidden"
    assert client.get(f"/api/v1/admin/problems/{SCALE}", headers=USER).status_code == 403
    wrong_slug = put(client, "lerp-trees", data)
    assert wrong_slug.status_code == 422
    error = wrong_slug.json()["error"]
    assert error["code"] == "invalid_archive" and "outside the package's layout" in error["message"]
    garbage = put(client, SCALE, b"\x1f\x8b not really gzip")
    assert garbage.status_code == 422 and "not a readable tar.gz" in garbage.json()["error"]["message"]
    too_big = put(client, SCALE, b"\0" * (256 * 1024 + 1))
    assert too_big.status_code == 413 and too_big.json()["error"]["limit"] == "problem_archive_bytes"
    bad_tenant = put(client, SCALE, data, tenant="no spaces allowed")
    assert bad_tenant.status_code == 422 and bad_tenant.json()["error"]["code"] == "invalid_tenant"
    other = client.post("/api/v1/submissions", content=b"x" * (1024 * 1024 + 1), headers=USER)
    assert other.status_code == 413 and other.json()["error"]["limit"] == "max_body_bytes"
    assert checker.checked == [] and services.pushed.versions() == []


def test_the_operator_client_pushes_waits_for_the_check_and_retires(
    api: tuple[TestClient, Services, Checker], tmp_path: Path
) -> None:
    """What ``judge push-problem`` and ``judge retire-problem`` do, through the app itself."""
    client, _, _ = api
    package = revised(tmp_path, 4)
    version = push(client, OPERATOR, package, tenants=["acme"], wait_s=30)
    assert version["state"] == "live" and version["revision"] == 4 and version["tenants"] == ["acme"]
    listing = retire(client, OPERATOR, SCALE, version["hash"])
    assert [v["state"] for v in listing["versions"]] == ["retired"]
    with pytest.raises(OperatorError, match="403 forbidden"):
        push(client, KEY, package)


def test_the_push_command_needs_a_key_and_a_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_API_KEY", raising=False)
    with pytest.raises(SystemExit) as no_key:
        main(["push-problem", str(FIXTURES / SCALE)])
    assert no_key.value.code == 2
    monkeypatch.setenv("JUDGE_API_KEY", OPERATOR)
    with pytest.raises(SystemExit) as no_package:
        main(["push-problem", str(tmp_path)])
    assert no_package.value.code == 2
    with pytest.raises(SystemExit) as unreachable:
        main(["push-problem", str(FIXTURES / SCALE), "--url", "http://127.0.0.1:9"])
    assert unreachable.value.code == 1


def test_a_check_left_unfinished_by_a_stopped_api_node_is_run_again(store: Store, tmp_path: Path) -> None:
    versions = ProblemVersions(store)
    package = revised(tmp_path, 2)
    digest = content_hash(package, tmp_path)
    versions.push(SCALE, digest, 2, pack(package), tenants=None, pushed_by="op")  # its node stopped here
    checker = Checker()
    admin = ProblemAdmin(Settings(data_dir=tmp_path), versions, checker)
    assert admin.resume() == 1
    admin.wait(30)
    assert versions.get(SCALE, digest).state is VersionState.LIVE  # type: ignore[union-attr]
    assert [slug for _, slug in checker.checked] == [SCALE]


def test_a_check_under_way_is_killed_at_shutdown_and_left_to_the_next_start(tmp_path: Path) -> None:
    db = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    db.migrate()
    try:
        versions = ProblemVersions(db)
        admin = ProblemAdmin(Settings(data_dir=tmp_path, problem_check_solutions=False), versions)
        record, _ = admin.push(SCALE, pack(revised(tmp_path, 2)), tenants=None, pushed_by="op")
        wait_until(lambda: admin._children, 30, "the check's child process")
        [child] = admin._children.values()
        admin.close()
        admin.wait(30)
        assert child.wait(10) is not None and not admin._children
        assert versions.get(SCALE, record.hash).state is VersionState.CHECKING  # type: ignore[union-attr]
    finally:
        db.close()
