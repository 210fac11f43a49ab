"""Issue 40 through the HTTP layer: a batch as idempotent as a single submit, a multi-get by ids
(owner-scoped, with ``fields``), ``fields`` naming ``callback``, every listing filter out of range a
422 naming it, and the header cap as documented (16 KiB)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from judge.service.apikeys import generate_key, hash_key
from judge.service.bodylimit import MAX_HEADER_BYTES
from judge.service.server import H11_MAX_HEADER_BYTES
from judge.service.state import Services
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

CODE = "def scale_tree(tree, factor):\n    return tree\n"
KEY_A, KEY_B = generate_key(), generate_key()
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"Authorization": f"Bearer {KEY_B}"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, Services]]:
    settings = make_settings(
        tmp_path,
        api_keys={"a": hash_key(KEY_A), "b": hash_key(KEY_B)},
        batch_max=4,
        page_max=10,
        callback_hosts=["127.0.0.1"],
        callback_secret="s3cret",
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as pair:
        yield pair


def shape(batch: dict[str, Any]) -> list[tuple[int, str | None, str | None]]:
    """A batch answer's items: (status code, submission id, error code)."""
    return [
        (i["status_code"], (i["submission"] or {}).get("id"), (i["error"] or {}).get("code"))
        for i in batch["items"]
    ]


def item(**extra: Any) -> dict[str, Any]:
    return {"problem": FIXTURE_SLUG, "code": CODE, **extra}


# ---------------------------------------------------------------------------------------------- batches


def test_a_batch_posted_twice_with_one_key_stores_its_submissions_once(
    api: tuple[TestClient, Services],
) -> None:
    client, services = api
    batch = {"items": [item(external_user="u1"), item(problem="no-such"), item(tags={"n": "2"})]}
    key = {**A, "Idempotency-Key": "batch-1"}
    first = client.post("/api/v1/submissions/batch", json=batch, headers=key)
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    again = client.post("/api/v1/submissions/batch", json=batch, headers=key)
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert shape(again.json()) == shape(first.json())  # the same submissions, the same refusal
    assert len(services.store.submissions.ids()) == 2
    # Another body with the key: a 409 before anything is stored, as the single route answers.
    other = client.post("/api/v1/submissions/batch", json={"items": [item()]}, headers=key)
    assert other.status_code == 409, other.text
    assert other.json()["error"]["code"] == "idempotency_conflict"
    assert (
        other.json()["error"]["path"] == "Idempotency-Key" and "'batch-1'" in other.json()["error"]["message"]
    )
    assert len(services.store.submissions.ids()) == 2
    # The key is the caller's: another API key with the same key and body gets its own submissions.
    theirs = client.post("/api/v1/submissions/batch", json=batch, headers={**B, "Idempotency-Key": "batch-1"})
    assert theirs.status_code == 200 and "Idempotent-Replayed" not in theirs.headers
    assert len(services.store.submissions.ids()) == 4
    # A batch key never answers a single submit's key of the same name, nor the other way round.
    single = client.post("/api/v1/submissions", json=item(external_user="u1"), headers=key)
    assert single.status_code == 202
    replayed = client.post("/api/v1/submissions/batch", json=batch, headers=key).json()
    assert shape(replayed) == shape(first.json())
    bad = client.post("/api/v1/submissions/batch", json=batch, headers={**A, "Idempotency-Key": "x\ty"})
    assert bad.status_code == 422 and bad.json()["error"]["path"] == "Idempotency-Key"


# ---------------------------------------------------------------------------------------------- multi-get


def test_several_submissions_are_read_by_id_in_order_and_only_the_callers(
    api: tuple[TestClient, Services],
) -> None:
    client, _ = api
    mine = [client.post("/api/v1/submissions", json=item(), headers=A).json()["id"] for _ in range(3)]
    theirs = client.post("/api/v1/submissions", json=item(), headers=B).json()["id"]
    anonymous = client.post("/api/v1/submissions", json=item()).json()["id"]
    unknown = "00000000-0000-0000-0000-000000000000"
    asked = [mine[2], theirs, mine[0].upper(), unknown, anonymous, mine[1]]
    answer = client.get("/api/v1/submissions", params={"ids": ",".join(asked)}, headers=A)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [i["id"] for i in body["items"]] == [mine[2], mine[0], mine[1]]
    assert body["missing"] == [theirs, unknown, anonymous]  # another key's: not found, never shown
    assert set(body["items"][0]) == {
        "id", "problem", "status", "verdict", "attempts", "created_at", "started_at", "finished_at",
        "external_user", "tags", "regrade_of", "grading", "links",
    }  # fmt: skip
    slim = client.get(
        "/api/v1/submissions", params={"ids": f"{mine[0]},{theirs}", "fields": "id,code,status"}, headers=B
    ).json()
    assert slim["items"] == [{"id": theirs, "code": CODE, "status": slim["items"][0]["status"]}] and slim[
        "missing"
    ] == [mine[0]]
    eleven = ",".join(f"00000000-0000-0000-0000-{n:012d}" for n in range(11))
    for params, code, path in [
        ({"ids": f"{mine[0]},not-an-id"}, "invalid_filter", "ids"),
        ({"ids": eleven}, "limit_exceeded", "ids"),
        ({"ids": ","}, "invalid_filter", "ids"),
        ({"ids": mine[0], "problem": FIXTURE_SLUG}, "invalid_filter", "problem"),
        ({"ids": mine[0], "cursor": "abc"}, "invalid_filter", "cursor"),
        ({"ids": mine[0], "fields": "id,nope"}, "invalid_fields", "fields"),
    ]:
        refused = client.get("/api/v1/submissions", params=params, headers=A)
        assert refused.status_code == 422, (params, refused.text)
        assert (refused.json()["error"]["code"], refused.json()["error"]["path"]) == (code, path), params
    assert (
        "item 1"
        in client.get("/api/v1/submissions", params={"ids": f"{mine[0]},nope"}, headers=A).json()["error"][
            "message"
        ]
    )
    assert client.get("/api/v1/submissions", params={"ids": mine[0]}).status_code == 401


def test_fields_may_name_the_callback_record(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    sid = client.post(
        "/api/v1/submissions", json=item(callback_url="http://127.0.0.1:9/hook"), headers=A
    ).json()["id"]
    plain = client.post("/api/v1/submissions", json=item(), headers=A).json()["id"]
    read = client.get(f"/api/v1/submissions/{sid}", params={"fields": "id,callback"}, headers=A)
    assert read.status_code == 200, read.text
    assert set(read.json()) == {"id", "callback"}
    assert read.json()["callback"]["url"] == "http://127.0.0.1:9/hook"
    assert client.get(f"/api/v1/submissions/{plain}", params={"fields": "callback"}, headers=A).json() == {
        "callback": None
    }
    listed = client.get("/api/v1/submissions", params={"fields": "id,callback"}, headers=A).json()["items"]
    assert {i["id"]: (i["callback"] or {}).get("url") for i in listed} == {
        sid: "http://127.0.0.1:9/hook",
        plain: None,
    }


# ---------------------------------------------------------------------------------------------- filters


@pytest.mark.parametrize(
    ("params", "code", "path"),
    [
        ({"created_after": "2026-01-01T00:00:00+25:00"}, "invalid_time", "created_after"),
        ({"created_before": "2026-01-01T00:00:00-24:00"}, "invalid_time", "created_before"),
        ({"created_after": "0001-01-01T00:00:00+01:00"}, "invalid_time", "created_after"),
        ({"created_before": "9999-12-31T23:59:59-01:00"}, "invalid_time", "created_before"),
        ({"created_before": "0.5"}, "invalid_time", "created_before"),
        ({"created_after": "1700000000"}, "invalid_time", "created_after"),
        ({"created_after": "2026-13-01T00:00:00Z"}, "invalid_time", "created_after"),
        ({"created_after": "2026-01-01"}, "invalid_time", "created_after"),
        ({"created_after": "2026-01-01T00:00:00"}, "invalid_time", "created_after"),
        ({"tag": "nocolon"}, "invalid_tag", "tag"),
        ({"tag": "bad name:x"}, "invalid_tag", "tag"),
        ({"tag": "n:" + "v" * 201}, "invalid_tag", "tag"),
        ({"external_user": "not allowed!"}, "invalid_filter", "external_user"),
        ({"regrade_of": "not-an-id"}, "invalid_filter", "regrade_of"),
        ({"cursor": "bm90LWEtY3Vyc29y"}, "invalid_cursor", "cursor"),
        ({"cursor": "MDAwMS0wMS0wMVQwMDowMDowMCswMTowMHwwMDAwMDAwMC0wMDAwLTAwMDAtMDAwMC0wMDAwMDAwMDAwMDA"},
         "invalid_cursor", "cursor"),
        ({"limit": 11}, "limit_exceeded", "limit"),
        ({"limit": 0}, "invalid_request", "query.limit"),
        ({"limit": "many"}, "invalid_request", "query.limit"),
        ({"status": "sleeping"}, "invalid_request", "query.status"),
        ({"count": "perhaps"}, "invalid_request", "query.count"),
    ],
)  # fmt: skip
def test_every_listing_filter_out_of_range_is_a_422_naming_it(
    api: tuple[TestClient, Services], params: dict[str, Any], code: str, path: str
) -> None:
    client, _ = api
    answer = client.get("/api/v1/submissions", params=params, headers=A)
    assert answer.status_code == 422, answer.text
    assert (answer.json()["error"]["code"], answer.json()["error"]["path"]) == (code, path)


def test_listing_times_in_any_offset_are_compared_in_utc(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    sid = client.post("/api/v1/submissions", json=item(), headers=A).json()["id"]
    for value, found in [
        ("2000-01-01T00:00:00+14:00", True),
        ("2000-01-01t00:00:00z", True),
        ("2999-01-01T00:00:00-12:00", False),
        ("9999-12-31T23:59:59+01:00", False),
    ]:
        page = client.get("/api/v1/submissions", params={"created_after": value}, headers=A)
        assert page.status_code == 200, (value, page.text)
        assert [i["id"] for i in page.json()["items"]] == ([sid] if found else []), value


# ---------------------------------------------------------------------------------------------- headers


def test_the_header_cap_is_16_kib(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    assert MAX_HEADER_BYTES == H11_MAX_HEADER_BYTES == 16 * 1024
    passes = client.get("/healthz", headers={"X-Filler": "x" * (15 * 1024)})
    assert passes.status_code == 200
    refused = client.get("/healthz", headers={"X-Filler": "x" * (17 * 1024)})
    assert refused.status_code == 431, refused.text
    assert refused.json()["error"]["limit"] == "max_header_bytes"
    many = {f"X-Filler-{n}": "y" * 1000 for n in range(17)}  # many headers add up
    assert client.get("/healthz", headers=many).status_code == 431


def test_an_unknown_query_parameter_is_a_422_naming_it(api: tuple[TestClient, Services]) -> None:
    """A typo (``feilds=``) is refused, not ignored: the listing would otherwise answer unfiltered."""
    client, _ = api
    sid = client.post("/api/v1/submissions", json=item(), headers=A).json()["id"]
    for path, params in [
        ("/api/v1/submissions", {"feilds": "id"}),
        ("/api/v1/submissions", {"created_afer": "2026-01-01T00:00:00Z"}),
        ("/api/submissions", {"": "null"}),
        (f"/api/v1/submissions/{sid}", {"wiat": "5"}),
        (f"/api/v1/submissions/{sid}/code", {"x": "1"}),
    ]:
        answer = client.get(path, params=params, headers=A)
        assert answer.status_code == 422, (path, params, answer.text)
        name = next(iter(params))
        assert answer.json()["error"]["path"] == f"query.{name}"
    assert client.get(
        f"/api/v1/submissions/{sid}", params={"wait": "0", "fields": "id"}, headers=A
    ).json() == {"id": sid}
