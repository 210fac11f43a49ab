"""Platform API v1 through the HTTP layer: idempotent submit, listing by cursor with filters and counts,
batch submit, ``fields``, a submission's code and metadata, delete, retention and erasing a user.

The engine is a fake (these rules do not depend on grading); the store's side of the same rules runs on
SQLite and a real PostgreSQL in test_api_store.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from judge.dispatch.document import submission_json
from judge.service.apikeys import generate_key, hash_key
from judge.service.retention import Retention
from judge.service.state import Services
from judge.store import pages
from judge.store.models import CallbackAttempt, IdempotencyRecord, Submission, SubmissionEvent
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

SCALE = FIXTURE_SLUG
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")  # never started: the fake engine grades
KEY_A, KEY_B = generate_key(), generate_key()
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"Authorization": f"Bearer {KEY_B}"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[TestClient, Services]]:
    settings = make_settings(
        tmp_path, api_keys={"a": hash_key(KEY_A), "b": hash_key(KEY_B)}, batch_max=4, page_max=50
    )
    with running(settings, backend=PROCESS, engine=FakeEngine()) as pair:
        yield pair


def submit(client: TestClient, headers: dict[str, str], **body: Any) -> Any:
    return client.post("/api/submissions", json={"problem": SCALE, "code": CODE, **body}, headers=headers)


def done(client: TestClient, headers: dict[str, str], sid: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/api/submissions/{sid}?wait=30", headers=headers).json()
    assert body["status"] == "done", body
    return body


def count_rows(services: Services, model: Any, submission_id: str) -> int:
    with services.store.engine.connect() as connection:
        query = select(func.count()).select_from(model).where(model.submission_id == submission_id)
        return int(connection.scalar(query) or 0)


# ---------------------------------------------------------------------------------------------- 1


def test_a_retry_with_the_same_key_and_body_gets_the_same_submission(
    api: tuple[TestClient, Services],
) -> None:
    client, services = api
    first = submit(client, {**A, "Idempotency-Key": "order-1"})
    assert first.status_code == 202 and "idempotent-replayed" not in first.headers
    again = submit(client, {**A, "Idempotency-Key": "order-1"})
    assert again.status_code == 200 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["location"] == f"/api/v1/submissions/{first.json()['id']}"
    other = submit(client, {**A, "Idempotency-Key": "order-1"}, tags={"x": "y"})
    assert other.status_code == 409
    error = other.json()["error"]
    assert error["code"] == "idempotency_conflict" and "another request body" in error["message"]
    # Keys are scoped to the API key: key b's "order-1" is its own submission.
    theirs = submit(client, {**B, "Idempotency-Key": "order-1"})
    assert theirs.status_code == 202 and theirs.json()["id"] != first.json()["id"]
    done(client, A, first.json()["id"])
    assert len(services.store.submissions.ids()) == 2  # graded once, not twice
    bad = submit(client, {**A, "Idempotency-Key": "tab\there"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_idempotency_key"


def test_concurrent_retries_with_one_key_store_one_submission(api: tuple[TestClient, Services]) -> None:
    client, services = api
    answers: list[Any] = []
    barrier = threading.Barrier(6)

    def post() -> None:
        barrier.wait()
        answers.append(submit(client, {**A, "Idempotency-Key": "race"}))

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.status_code for a in answers) == [200] * 5 + [202]
    assert len({a.json()["id"] for a in answers}) == 1
    assert len(services.store.submissions.ids()) == 1


def test_an_expired_idempotency_key_makes_a_new_submission(api: tuple[TestClient, Services]) -> None:
    client, services = api
    first = submit(client, {**A, "Idempotency-Key": "old"}).json()["id"]
    with services.store.engine.begin() as connection:  # the record is older than idempotency_ttl_s
        old = datetime.now(UTC) - timedelta(seconds=services.settings.idempotency_ttl_s + 5)
        connection.execute(update(IdempotencyRecord).values(created_at=old))
    second = submit(client, {**A, "Idempotency-Key": "old"})
    assert second.status_code == 202 and second.json()["id"] != first


# ---------------------------------------------------------------------------------------------- 2


def test_listing_pages_by_cursor_with_filters_and_counts(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    mine = [
        submit(client, A, external_user=f"u{i % 3}", tags={"course": "c1" if i < 5 else "c2"}).json()["id"]
        for i in range(11)
    ]
    submit(client, B)  # another key's: never listed for a
    for sid in mine:
        done(client, A, sid)
    seen: list[str] = []
    cursor = None
    while True:
        page = client.get(
            "/api/submissions",
            params={"limit": 4, "count": "true", **({"cursor": cursor} if cursor else {})},
            headers=A,
        ).json()
        assert page["total"] == 11
        assert all("result" not in item and "code" not in item for item in page["items"])
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(mine))  # newest first, each once
    by_user = client.get(
        "/api/submissions", params={"external_user": "u1", "count": "true"}, headers=A
    ).json()
    assert by_user["total"] == 4 and {item["external_user"] for item in by_user["items"]} == {"u1"}
    by_tag = client.get("/api/submissions", params={"tag": "course:c2"}, headers=A).json()
    assert len(by_tag["items"]) == 6
    accepted = client.get("/api/submissions", params={"verdict": "accepted", "status": "done"}, headers=A)
    assert len(accepted.json()["items"]) == 11
    assert client.get("/api/submissions", params={"problem": "nope"}, headers=A).json()["items"] == []
    later = datetime.now(UTC) + timedelta(hours=1)
    after = client.get("/api/submissions", params={"created_after": later.isoformat()}, headers=A)
    assert after.json()["items"] == []
    slim = client.get("/api/submissions", params={"fields": "id,verdict", "limit": 2}, headers=A).json()
    assert [set(item) for item in slim["items"]] == [{"id", "verdict"}] * 2


def test_a_count_past_its_cap_says_so(
    api: tuple[TestClient, Services], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _ = api
    monkeypatch.setattr(pages, "COUNT_MAX", 3)
    for i in range(4):
        submit(client, A, tags={"course": "c1" if i else "c2"})
    page = client.get("/api/submissions", params={"count": "true", "limit": 2}, headers=A).json()
    assert (page["total"], page["total_capped"], len(page["items"])) == (3, True, 2)
    tagged = client.get("/api/v1/submissions", params={"count": "true", "tag": "course:c1"}, headers=A).json()
    assert (tagged["total"], tagged["total_capped"], len(tagged["items"])) == (3, False, 3)
    plain = client.get("/api/v1/submissions", headers=A).json()
    assert plain["total"] is None and plain["total_capped"] is None


def test_listing_refuses_what_it_cannot_serve(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    anonymous = client.get("/api/submissions")
    assert anonymous.status_code == 401 and "needs an API key" in anonymous.json()["error"]["message"]
    for params, code, path in [
        ({"cursor": "not-a-cursor"}, "invalid_cursor", "cursor"),
        ({"limit": 51}, "limit_exceeded", "limit"),
        ({"fields": "id,secret"}, "invalid_fields", "fields"),
        ({"tag": "nocolon"}, "invalid_tag", "tag"),
        ({"created_after": "2026-01-01T00:00:00"}, "invalid_time", "created_after"),
    ]:
        answer = client.get("/api/submissions", params=params, headers=A)
        assert answer.status_code == 422, params
        assert answer.json()["error"]["code"] == code and answer.json()["error"]["path"] == path
    assert client.get("/api/submissions", params={"verdict": "great"}, headers=A).status_code == 422


# ---------------------------------------------------------------------------------------------- 3


def test_batch_items_succeed_or_fail_by_themselves(api: tuple[TestClient, Services]) -> None:
    client, services = api
    items = [
        {"problem": SCALE, "code": CODE, "external_user": "u1"},
        {"problem": "no-such-problem", "code": CODE},
        {"problem": SCALE, "code": CODE, "callback_url": "http://evil.example/cb"},
        {"problem": SCALE, "code": CODE},
    ]
    answer = client.post("/api/submissions/batch", json={"items": items}, headers=A)
    assert answer.status_code == 200
    body = answer.json()
    assert [item["status_code"] for item in body["items"]] == [202, 404, 422, 202]
    assert body["accepted"] == 2 and body["rejected"] == 2
    assert body["items"][1]["error"]["path"] == "items[1].problem"
    assert body["items"][2]["error"]["code"] == "invalid_callback_url"
    assert len(services.store.submissions.ids()) == 2
    too_many = client.post("/api/submissions/batch", json={"items": items + items[:1]}, headers=A)
    assert too_many.status_code == 422 and too_many.json()["error"]["limit"] == "batch_max"


def test_fields_select_what_a_read_returns(api: tuple[TestClient, Services]) -> None:
    client, _ = api
    sid = submit(client, A).json()["id"]
    done(client, A, sid)
    slim = client.get(f"/api/submissions/{sid}", params={"fields": "status,verdict"}, headers=A)
    assert slim.json() == {"status": "done", "verdict": "accepted"}
    with_code = client.get(f"/api/submissions/{sid}", params={"fields": "id,code"}, headers=A).json()
    assert with_code == {"id": sid, "code": CODE}
    assert "code" not in client.get(f"/api/submissions/{sid}", headers=A).json()


# ---------------------------------------------------------------------------------------------- 4


def test_code_and_metadata_belong_to_the_submission(api: tuple[TestClient, Services]) -> None:
    client, services = api
    tags = {"course": "jax-101", "assignment": "week-3"}
    created = submit(client, A, external_user="learner-42", tags=tags)
    assert created.json()["external_user"] == "learner-42" and created.json()["tags"] == tags
    sid = created.json()["id"]
    body = done(client, A, sid)
    assert body["external_user"] == "learner-42" and body["tags"] == tags
    code = client.get(f"/api/submissions/{sid}/code", headers=A)
    assert code.json() == {"id": sid, "problem": SCALE, "code": CODE}
    assert client.get(f"/api/submissions/{sid}/code", headers=B).status_code == 404
    record = services.store.submissions.get(sid)
    assert record is not None
    callback = submission_json(record)  # the callback body is this document
    assert callback["external_user"] == "learner-42" and callback["tags"] == tags


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({"external_user": "has space"}, "external_user"),
        ({"external_user": "x" * 201}, "external_user"),
        ({"tags": {f"t{i}": "v" for i in range(17)}}, "tags"),
        ({"tags": {"bad name": "v"}}, "tags"),
        ({"tags": {"course": "v" * 201}}, "tags.course"),
        ({"tags": {"course": 3}}, "tags.course"),
    ],
)
def test_metadata_is_bounded(api: tuple[TestClient, Services], extra: dict[str, Any], path: str) -> None:
    client, _ = api
    answer = submit(client, A, **extra)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["path"].startswith(path)


# ---------------------------------------------------------------------------------------------- 5


def test_delete_removes_the_submission_with_everything_of_it(api: tuple[TestClient, Services]) -> None:
    client, services = api
    sid = submit(client, {**A, "Idempotency-Key": "del"}).json()["id"]
    done(client, A, sid)
    services.store.callbacks.record_attempt(sid, 1, "http://h/cb", 500, None)
    assert count_rows(services, SubmissionEvent, sid) > 0
    assert client.delete(f"/api/submissions/{sid}", headers=B).status_code == 404
    assert client.delete(f"/api/submissions/{sid}", headers=A).status_code == 204
    assert client.get(f"/api/submissions/{sid}", headers=A).status_code == 404
    assert client.delete(f"/api/submissions/{sid}", headers=A).status_code == 404
    for model in (SubmissionEvent, CallbackAttempt, IdempotencyRecord):
        assert count_rows(services, model, sid) == 0, model
    again = submit(client, {**A, "Idempotency-Key": "del"})  # its key went with it
    assert again.status_code == 202 and again.json()["id"] != sid


def test_retention_removes_old_finished_submissions_only(api: tuple[TestClient, Services]) -> None:
    client, services = api
    old, recent = (submit(client, A).json()["id"] for _ in range(2))
    for sid in (old, recent):
        done(client, A, sid)
    with services.store.engine.begin() as connection:
        connection.execute(
            update(Submission)
            .where(Submission.id == old)
            .values(finished_at=datetime.now(UTC) - timedelta(days=40))
        )
    settings = services.settings.model_copy(update={"retention_days": 30.0})
    assert Retention(services.store, settings).sweep() == (1, 0)
    assert services.store.submissions.get(old) is None and services.store.submissions.get(recent) is not None
    assert Retention(services.store, services.settings).sweep() == (0, 0)  # unset: nothing goes


def test_erasing_a_user_removes_their_submissions_of_this_key(api: tuple[TestClient, Services]) -> None:
    client, services = api
    theirs = [submit(client, A, external_user="gone").json()["id"] for _ in range(3)]
    kept = submit(client, A, external_user="stays").json()["id"]
    other_key = submit(client, B, external_user="gone").json()["id"]
    erased = client.delete("/api/users/gone", headers=A)
    assert erased.json() == {"external_user": "gone", "deleted": 3}
    assert all(services.store.submissions.get(sid) is None for sid in theirs)
    assert (
        services.store.submissions.get(kept) is not None
        and services.store.submissions.get(other_key) is not None
    )
    assert client.delete("/api/users/gone").status_code == 401


def test_the_client_address_is_kept_only_while_the_per_client_cap_counts_it(
    api: tuple[TestClient, Services],
) -> None:
    client, services = api
    keyed = submit(client, A).json()["id"]
    anonymous = submit(client, {}).json()["id"]
    record = services.store.submissions.get(keyed)
    assert record is not None and record.client_address is None  # a key is counted by its name
    done(client, {}, anonymous)
    finished = services.store.submissions.get(anonymous)
    assert finished is not None and finished.client_address is None
