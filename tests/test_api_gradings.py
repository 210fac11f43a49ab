"""Regrades as gradings, through the API on SQLite and PostgreSQL: a regrade grades the same submission
again and keeps the result as a new grading (no new submission, the listing counts it once), the
submission's verdict becomes the latest grading's and the earlier ones stay readable in order; a problem
regrade is an operator's job that queues them in bounded batches and says how far it got; callbacks only
with ``notify=true``; another key cannot regrade or read the gradings; a regrade of a submission being
graded is refused (409); a regrade the judge cannot grade leaves the earlier grading the current one."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from judge.core.verdicts import Verdict
from judge.service.apikeys import generate_key, hash_key
from judge.service.state import Services
from judge.store import NewSubmission
from judge.store.models import Submission
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running, sse_events
from tests.test_service_callbacks import SECRET, Receiver

pytest_plugins = ("tests.stores",)

SCALE = FIXTURE_SLUG
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")
KEY, OTHER, OPERATOR = generate_key(), generate_key(), generate_key()
USER = {"Authorization": f"Bearer {KEY}"}
STRANGER = {"Authorization": f"Bearer {OTHER}"}
OP = {"Authorization": f"Bearer {OPERATOR}"}
KEYS = {"lms": hash_key(KEY), "other": hash_key(OTHER), "op": hash_key(OPERATOR)}

Api = tuple[TestClient, Services, FakeEngine]


@pytest.fixture
def api(tmp_path: Path, database_url: str) -> Iterator[Api]:
    settings = make_settings(
        tmp_path, database_url=database_url, api_keys=KEYS, operator_keys=["op"], max_attempts=1
    )
    engine = FakeEngine()
    with running(settings, backend=PROCESS, engine=engine) as (client, services):
        yield client, services, engine


def submitted(client: TestClient, **body: Any) -> str:
    answer = client.post("/api/v1/submissions", json={"problem": SCALE, "code": CODE, **body}, headers=USER)
    assert answer.status_code == 202, answer.text
    sid: str = answer.json()["id"]
    return sid


def finished(client: TestClient, sid: str, headers: dict[str, str] = USER) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/api/v1/submissions/{sid}?wait=30", headers=headers).json()
    assert body["status"] in ("done", "failed"), body
    return body


def gradings(client: TestClient, sid: str, headers: dict[str, str] = USER) -> dict[str, Any]:
    answer = client.get(f"/api/v1/submissions/{sid}/gradings", headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def until(predicate: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def regraded(client: TestClient, sid: str, number: int) -> dict[str, Any]:
    """Wait for grading ``number`` of ``sid`` to end; the history then."""
    until(
        lambda: any(
            g["number"] == number and g["status"] in ("done", "failed")
            for g in gradings(client, sid)["items"]
        ),
        f"grading {number} of {sid} never ended",
    )
    return gradings(client, sid)


def test_a_regrade_is_a_new_grading_of_the_same_submission(api: Api) -> None:
    client, services, engine = api
    sid = submitted(client, external_user="u1", tags={"course": "c"})
    first = finished(client, sid)
    assert (first["verdict"], first["grading"]) == ("accepted", 1)
    alone = gradings(client, sid)  # never regraded: its one grading, read from the submission
    assert alone["current"] == 1 and [g["number"] for g in alone["items"]] == [1]
    assert (
        alone["items"][0]["current"]
        and alone["items"][0]["problem_hash"] == first["manifest"]["problem_hash"]
    )
    engine.verdict = Verdict.WRONG_ANSWER  # the problem changed: the same code now fails
    answer = client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER)
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert (body["submission"], body["grading"], body["status"], body["notify"]) == (sid, 2, "queued", False)
    assert body["problem_hash"] == first["manifest"]["problem_hash"]
    assert answer.headers["location"] == f"/api/v1/submissions/{sid}/gradings"
    history = regraded(client, sid, 2)
    now = finished(client, sid)
    assert (now["verdict"], now["grading"], now["status"]) == ("wrong_answer", 2, "done")
    assert now["external_user"] == "u1" and now["tags"] == {"course": "c"} and now["regrade_of"] is None
    # No new submission: the store and the listing hold it once.
    assert services.store.submissions.count() == 1
    listed = client.get("/api/v1/submissions", headers=USER).json()["items"]
    assert [(item["id"], item["verdict"], item["grading"]) for item in listed] == [(sid, "wrong_answer", 2)]
    # The history, in order: the first grading kept as it was, the regrade current.
    assert history["current"] == 2
    one, two = history["items"]
    assert (one["number"], one["status"], one["verdict"], one["current"], one["regrade"]) == (
        1, "done", "accepted", False, False,
    )  # fmt: skip
    assert (two["number"], two["status"], two["verdict"], two["current"], two["regrade"]) == (
        2, "done", "wrong_answer", True, True,
    )  # fmt: skip
    assert one["result"]["verdict"] == "accepted" and two["result"]["verdict"] == "wrong_answer"
    assert two["problem_hash"] == first["manifest"]["problem_hash"] and two["problem_revision"] == 1
    assert two["manifest"]["problem_hash"] == two["problem_hash"] and two["job"] is None
    # The stream says the regrade started and ended.
    with client.stream("GET", f"/api/v1/submissions/{sid}/events", headers=USER) as response:
        events = sse_events(response.read().decode())
    opening = next(data for _, kind, data in events if kind == "status" and data["status"] == "running")
    assert (opening["regrade"], opening["grading"]) == (True, 2)
    _, last, final = events[-1]
    assert (last, final["verdict"], final["regrade"], final["grading"]) == ("result", "wrong_answer", True, 2)
    # Again: grading 3, the history grows by one, never doubled.
    engine.verdict = Verdict.ACCEPTED
    assert client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER).json()["grading"] == 3
    history = regraded(client, sid, 3)
    assert [(g["number"], g["verdict"], g["current"]) for g in history["items"]] == [
        (1, "accepted", False), (2, "wrong_answer", False), (3, "accepted", True),
    ]  # fmt: skip
    assert finished(client, sid)["verdict"] == "accepted" and services.store.submissions.count() == 1


def test_another_key_can_neither_regrade_nor_read_the_gradings(api: Api) -> None:
    client, _, _ = api
    sid = submitted(client)
    finished(client, sid)
    for headers in (STRANGER, {}):
        assert client.post(f"/api/v1/submissions/{sid}/regrade", headers=headers).status_code == 404
        refused = client.get(f"/api/v1/submissions/{sid}/gradings", headers=headers)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "submission_not_found"
    assert client.get("/api/v1/submissions/not-an-id/gradings", headers=USER).status_code == 404
    # An operator regrades and reads any submission.
    assert client.post(f"/api/v1/submissions/{sid}/regrade", headers=OP).json()["grading"] == 2
    assert [g["number"] for g in regraded(client, sid, 2)["items"]] == [1, 2]
    assert gradings(client, sid, OP)["current"] == 2


def test_a_regrade_of_a_submission_being_graded_is_refused(api: Api) -> None:
    client, services, engine = api
    gate = threading.Event()
    engine.delay = lambda: gate.wait(30)
    sid = submitted(client)
    until(lambda: services.dispatcher.running() == 1, "the grading never started")
    refused = client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER)
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "regrade_conflict" and "once its grading is finished" in error["message"]
    gate.set()
    finished(client, sid)
    gate.clear()
    assert client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER).status_code == 202
    # A regrade queued or under way is one too: a second one waits for it to end.
    again = client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER)
    assert again.status_code == 409 and again.json()["error"]["code"] == "regrade_conflict"
    gate.set()
    assert [g["number"] for g in regraded(client, sid, 2)["items"]] == [1, 2]


def test_a_regrade_the_judge_cannot_grade_keeps_the_earlier_grading(api: Api) -> None:
    client, services, engine = api
    sid = submitted(client)
    assert finished(client, sid)["verdict"] == "accepted"

    def broken() -> None:
        raise RuntimeError("the sandbox is gone")

    engine.delay = broken
    assert client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER).status_code == 202
    history = regraded(client, sid, 2)
    one, two = history["items"]
    assert history["current"] == 1 and one["current"] and not two["current"]
    assert two["status"] == "failed" and two["verdict"] is None and "could not grade it" in two["error"]
    now = finished(client, sid)
    assert (now["status"], now["verdict"], now["grading"], now["error"]) == ("done", "accepted", 1, None)
    final = services.store.events.after(sid)[-1]
    assert final.kind == "failed" and final.data["regrade"] is True and final.data["grading"] == 2
    # A submission whose first grading failed is regraded into a verdict.
    failed = submitted(client)
    assert finished(client, failed)["status"] == "failed"
    engine.delay = None
    assert client.post(f"/api/v1/submissions/{failed}/regrade", headers=USER).status_code == 202
    history = regraded(client, failed, 2)
    assert [(g["status"], g["current"]) for g in history["items"]] == [("failed", False), ("done", True)]
    assert finished(client, failed)["verdict"] == "accepted"


def test_a_problem_regrade_is_a_job_in_bounded_batches(api: Api) -> None:
    client, services, engine = api
    ids = [submitted(client) for _ in range(7)]
    for sid in ids:
        finished(client, sid)
    stale = ids[:5]  # graded with another version of the problem
    current_hash = finished(client, ids[0])["manifest"]["problem_hash"]
    with services.store.engine.begin() as connection:
        for sid in stale:
            old = {**finished(client, sid)["manifest"], "problem_hash": "0" * 64}
            connection.execute(update(Submission).where(Submission.id == sid).values(manifest=old))
    assert client.post(f"/api/v1/problems/{SCALE}/regrade", headers=USER).status_code == 403
    assert client.post(f"/api/v1/problems/{SCALE}/regrade").status_code == 401
    assert client.post("/api/v1/problems/nope/regrade", headers=OP).status_code == 404
    gate = threading.Event()
    engine.delay = lambda: gate.wait(30)
    started = client.post(f"/api/v1/problems/{SCALE}/regrade", params={"batch": 2}, headers=OP)
    assert started.status_code == 202, started.text
    job = started.json()
    assert (job["total"], job["batch"], job["state"], job["force"]) == (5, 2, "running", False)
    assert job["problem_hash"] == current_hash and 1 <= job["queued"] <= 2
    location = started.headers["location"]
    assert location == f"/api/v1/regrades/{job['id']}"
    # While the gradings are held, the job never has more than its batch unfinished.
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        progress = client.get(location, headers=OP).json()
        assert progress["in_flight"] <= 2 and progress["queued"] <= 2
        time.sleep(0.1)
    assert client.get(location, headers=USER).status_code == 403
    gate.set()
    until(lambda: client.get(location, headers=OP).json()["state"] == "done", "the job never ended")
    done = client.get(location, headers=OP).json()
    counts = (done["queued"], done["graded"], done["failed"], done["in_flight"], done["remaining"])
    assert counts == (5, 5, 0, 0, 0)
    assert done["finished_at"] is not None
    # Gradings of the same submissions: none new, each stale one regraded once, the others left.
    assert services.store.submissions.count() == 7
    listed = client.get("/api/v1/submissions", params={"limit": 100}, headers=USER).json()["items"]
    assert sorted(item["id"] for item in listed) == sorted(ids)
    for sid in ids:
        history = gradings(client, sid)
        expected = 2 if sid in stale else 1
        assert history["current"] == expected, (sid, history)
        if sid in stale:
            assert history["items"][1]["job"] == job["id"]
            assert history["items"][1]["manifest"]["problem_hash"] == current_hash
    # Nothing graded with another version now: a job with nothing to do ends at once; force takes all.
    nothing = client.post(f"/api/v1/problems/{SCALE}/regrade", headers=OP).json()
    assert (nothing["total"], nothing["state"], nothing["remaining"]) == (0, "done", 0)
    forced = client.post(f"/api/v1/problems/{SCALE}/regrade", params={"force": "true"}, headers=OP).json()
    assert forced["total"] == 7
    cancelled = client.post(f"/api/v1/regrades/{forced['id']}/cancel", headers=OP).json()
    assert cancelled["state"] in ("cancelled", "done")
    assert client.get("/api/v1/regrades/00000000-0000-0000-0000-000000000000", headers=OP).status_code == 404


def test_rows_of_the_old_regrades_stay_readable(api: Api) -> None:
    """Before gradings a regrade was a new submission naming its original in ``regrade_of``: such rows
    read, list and filter as before, and a problem regrade leaves them alone."""
    client, services, _ = api
    sid = submitted(client)
    manifest = finished(client, sid)["manifest"]
    old = services.store.submissions.create(
        NewSubmission(
            problem=SCALE, code=CODE, manifest=manifest, key_name="lms", key_id="lms", regrade_of=sid
        )
    )
    read = client.get(f"/api/v1/submissions/{old.id}", headers=USER).json()
    assert read["regrade_of"] == sid and read["grading"] == 1
    listed = client.get("/api/v1/submissions", params={"regrade_of": sid}, headers=USER).json()["items"]
    assert [item["id"] for item in listed] == [old.id]
    claim = services.store.attempts.claim(old.id)  # stored as the old regrades were: graded as a submission
    assert claim is not None
    services.store.attempts.finish(claim, {"verdict": "accepted"}, "accepted", manifest, ("result", {}))
    assert finished(client, old.id)["verdict"] == "accepted"
    forced = client.post(f"/api/v1/problems/{SCALE}/regrade", params={"force": "true"}, headers=OP).json()
    assert forced["total"] == 1  # the original only


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_callbacks_only_when_the_regrade_asks(tmp_path: Path, database_url: str) -> None:
    receiver = Receiver([])
    receiver.thread.start()
    settings = make_settings(
        tmp_path,
        database_url=database_url,
        api_keys=KEYS,
        operator_keys=["op"],
        callback_hosts=["127.0.0.1"],
        callback_secret=SECRET,
    )
    engine = FakeEngine()
    try:
        with running(settings, backend=PROCESS, engine=engine) as (client, _):
            sid = submitted(client, callback_url=receiver.url)
            receiver.wait_for(1)
            engine.verdict = Verdict.WRONG_ANSWER
            assert client.post(f"/api/v1/submissions/{sid}/regrade", headers=USER).status_code == 202
            regraded(client, sid, 2)
            job = client.post(f"/api/v1/problems/{SCALE}/regrade", params={"force": "true"}, headers=OP)
            until(lambda: client.get(job.headers["location"], headers=OP).json()["state"] == "done", "job")
            time.sleep(1.0)  # a callback would have gone at once
            assert len(receiver.requests) == 1
            engine.verdict = Verdict.ACCEPTED
            asked = client.post(f"/api/v1/submissions/{sid}/regrade", params={"notify": "true"}, headers=USER)
            assert asked.status_code == 202 and asked.json()["notify"] is True
            receiver.wait_for(2)
            (first, _, _), (second, body, _) = receiver.requests
            payload = json.loads(body)
            assert payload["id"] == sid and payload["grading"] == 4 and payload["verdict"] == "accepted"
            assert second["webhook-id"] != first["webhook-id"]  # a new delivery, not a retry
            time.sleep(0.5)
            assert len(receiver.requests) == 2
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


def test_a_learners_regrade_counts_against_its_cap_an_operators_against_no_one(tmp_path: Path) -> None:
    """An owner's regrade is one of its unfinished submissions (submissions_per_client, regrades
    included): past it a 429 naming the limit, with Retry-After, and nothing changes. An operator's regrade
    holds no learner back: the learner's submit is accepted beside it."""
    settings = make_settings(tmp_path, api_keys=KEYS, operator_keys=["op"], submissions_per_client=1)
    gate = threading.Event()
    gate.set()
    engine = FakeEngine(delay=lambda: gate.wait(30))
    with running(settings, backend=PROCESS, engine=engine) as (client, _):
        first = submitted(client)
        finished(client, first)
        second = submitted(client)
        finished(client, second)
        gate.clear()
        assert client.post(f"/api/v1/submissions/{first}/regrade", headers=OP).status_code == 202
        fresh = client.post("/api/v1/submissions", json={"problem": SCALE, "code": CODE}, headers=USER)
        assert fresh.status_code == 202, fresh.text  # the operator's regrade is not the learner's
        refused = client.post(f"/api/v1/submissions/{second}/regrade", headers=USER)
        assert refused.status_code == 429
        error = refused.json()["error"]
        assert error["code"] == "queue_full" and error["limit"] == "submissions_per_client"
        assert refused.headers["retry-after"] == "5"
        assert gradings(client, second)["items"][0]["status"] == "done"  # unchanged: never regraded
        gate.set()
        finished(client, fresh.json()["id"])
        regraded(client, first, 2)
        assert client.post(f"/api/v1/submissions/{second}/regrade", headers=USER).status_code == 202
        assert [g["number"] for g in regraded(client, second, 2)["items"]] == [1, 2]


def test_a_problem_regrade_cut_short_by_a_restart_goes_on(tmp_path: Path, database_url: str) -> None:
    """The job and its gradings are in the database: a restart in the middle of a batch (a grading held,
    the rest not yet queued) leaves nothing lost; the next start grades the held one as the regrade it
    was and the runner queues the rest."""
    settings = make_settings(
        tmp_path, database_url=database_url, api_keys=KEYS, operator_keys=["op"], shutdown_grace_s=0.1
    )
    gate = threading.Event()
    gate.set()
    engine = FakeEngine(delay=lambda: gate.wait(30))
    with running(settings, backend=PROCESS, engine=engine) as (client, services):
        ids = [submitted(client) for _ in range(3)]
        for sid in ids:
            finished(client, sid)
        gate.clear()
        job = client.post(
            f"/api/v1/problems/{SCALE}/regrade", params={"force": "true", "batch": 1}, headers=OP
        ).json()
        assert (job["total"], job["queued"]) == (3, 1)
        until(lambda: services.dispatcher.running() == 1, "the first regrade never started")
    gate.set()  # the old engine's grading ends after the shutdown: stored nothing (abandoned)
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        location = f"/api/v1/regrades/{job['id']}"
        until(lambda: client.get(location, headers=OP).json()["state"] == "done", "the job never ended")
        done = client.get(location, headers=OP).json()
        assert (done["queued"], done["graded"], done["failed"]) == (3, 3, 0)
        for sid in ids:
            history = gradings(client, sid)
            assert [(g["number"], g["status"]) for g in history["items"]] == [(1, "done"), (2, "done")]
            assert finished(client, sid)["grading"] == 2
        assert services.store.submissions.count() == 3
