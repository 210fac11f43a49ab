"""Problems scoped to tenants: a version pushed with ``tenant`` is visible to that tenant's keys (a key's
``tenant=``, else its own id) and to operators; to other keys, anonymous callers and the web pages it does
not exist (404 in the listing, the detail, Run and Submit, and left out of the known slugs a 404 lists)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from judge.authoring.problem_archive import pack
from judge.service.apikeys import KeyFileError, generate_key, hash_key, parse_key
from judge.service.state import Services
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.fakes import FakeEngine
from tests.scale_support import wait_until
from tests.service_support import make_settings, running
from tests.test_problem_versions import Checker

SCOPED = "scale-tree-acme"
LINKING = "lerp-trees"
KEYS = {name: generate_key() for name in ("acme-a", "acme-b", "other", "op")}


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}"}


def scoped_package(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    shutil.copytree(FIXTURES.parent, root)
    package = root / "problems" / SCOPED
    shutil.move(root / "problems" / FIXTURE_SLUG, package)
    toml = package / "problem.toml"
    toml.write_text(toml.read_text().replace(f'slug = "{FIXTURE_SLUG}"', f'slug = "{SCOPED}"'))
    return package


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, Services]]:
    hashes = {name: hash_key(key) for name, key in KEYS.items()}
    base = tmp_path / "base"
    shutil.copytree(FIXTURES.parent, base)  # lerp-trees links to the scoped problem as similar
    toml = base / "problems" / LINKING / "problem.toml"
    toml.write_text(
        toml.read_text().replace(
            'tags = ["pytree", "jit"]\n', f'tags = ["pytree", "jit"]\nsimilar = ["{SCOPED}"]\n'
        )
    )
    settings = make_settings(
        tmp_path,
        problems_dir=base / "problems",
        api_keys={
            "acme-a": f"{hashes['acme-a']} id=key_a tenant=acme",
            "acme-b": f"{hashes['acme-b']} tenant=acme",
            "other": hashes["other"],
            "op": hashes["op"],
        },
        operator_keys=["op"],
        problems_poll_s=0.2,
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        services.problem_admin.checker = Checker()
        answer = client.put(
            f"/api/v1/admin/problems/{SCOPED}",
            content=pack(scoped_package(tmp_path)),
            headers={**bearer("op"), "Content-Type": "application/gzip"},
            params={"tenant": "acme"},
        )
        assert answer.status_code == 202 and answer.json()["tenants"] == ["acme"]
        wait_until(lambda: SCOPED in {p.slug for p in services.catalog.problems}, 30, "the scoped problem")
        yield client, services


def test_a_scoped_problem_is_visible_to_its_tenant_and_operators_only(
    api: tuple[TestClient, Services],
) -> None:
    client, _ = api
    code = "def scale_tree(tree, factor):\n    return tree\n"
    run = {"code": code, "inputs": {"tree": {"a": [6.0, 8.0]}, "factor": 0.5}}
    for who in ("acme-a", "acme-b", "op"):
        listed = {p["slug"]: p for p in client.get("/api/v1/problems", headers=bearer(who)).json()}
        assert {SCOPED, FIXTURE_SLUG} <= set(listed), who
        assert listed[LINKING]["similar"] == [SCOPED]
        assert client.get(f"/api/v1/problems/{SCOPED}", headers=bearer(who)).status_code == 200
        assert client.get(f"/api/v1/problems/{LINKING}", headers=bearer(who)).json()["similar"] == [SCOPED]
    submitted = client.post(
        "/api/v1/submissions", json={"problem": SCOPED, "code": code}, headers=bearer("acme-b")
    )
    assert submitted.status_code == 202
    assert (
        client.post(f"/api/v1/problems/{SCOPED}/run", json=run, headers=bearer("acme-a")).status_code == 200
    )
    for outsider in ("other", None):
        headers = bearer(outsider) if outsider else {}
        listed = {p["slug"]: p for p in client.get("/api/v1/problems", headers=headers).json()}
        assert SCOPED not in listed and FIXTURE_SLUG in listed
        assert listed[LINKING]["similar"] == []  # not even named in another problem's links
        assert client.get(f"/api/v1/problems/{LINKING}", headers=headers).json()["similar"] == []
        detail = client.get(f"/api/v1/problems/{SCOPED}", headers=headers)
        assert detail.status_code == 404 and detail.json()["error"]["code"] == "problem_not_found"
        assert SCOPED not in detail.json()["error"]["message"].split("(known:")[1]
        refused = client.post("/api/v1/submissions", json={"problem": SCOPED, "code": code}, headers=headers)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "problem_not_found"
        assert client.post(f"/api/v1/problems/{SCOPED}/run", json=run, headers=headers).status_code == 404
        assert client.get(f"/api/v1/problems/{FIXTURE_SLUG}", headers=headers).status_code == 200
    assert client.get(f"/problems/{SCOPED}").status_code == 404  # the public pages
    assert SCOPED not in client.get("/").text


def test_a_key_line_carries_its_tenant() -> None:
    digest = hash_key("k")
    assert parse_key("lms", f"{digest} id=key_1 tenant=acme", "x").tenant == "acme"
    assert parse_key("lms", f"{digest} tenant=acme id=key_1", "x").key_id == "key_1"
    assert parse_key("lms", digest, "x").tenant is None
    for bad in (f"{digest} tenant=a/b", f"{digest} tenant=a tenant=b", f"{digest} owner=x"):
        with pytest.raises(KeyFileError):
            parse_key("lms", bad, "api_keys['lms']")
