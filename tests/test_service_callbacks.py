"""Result callbacks against a real HTTP server on loopback: signed, retried with backoff, recorded,
allowlisted. (The grading is faked: callbacks do not depend on it.)"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from judge.dispatch.callbacks import (
    SIGNATURE_HEADER,
    CallbackSender,
    callback_refusal,
    sign,
    standard_secret,
    standard_signature,
    verify,
)
from judge.service import redelivery
from judge.store import CallbackState, NewSubmission, Store, sqlite_url
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

#: The ``store`` fixture: SQLite and a real PostgreSQL (tests/stores.py).
pytest_plugins = ("tests.stores",)

SCALE = FIXTURE_SLUG  # served from the fixture problems (make_settings)
CODE = "def scale_tree(tree, factor):\n    return tree\n"
SECRET = "s3cret-for-tests"


class Receiver:
    """A loopback HTTP server that answers each POST with the next status of ``statuses`` (then 200)."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = list(statuses)
        self.requests: list[tuple[dict[str, str], bytes, float]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    receiver.requests.append((dict(self.headers), body, time.monotonic()))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= count:
                    return
            time.sleep(0.02)
        raise AssertionError(f"{len(self.requests)} callbacks arrived, expected {count}")


@pytest.fixture
def receivers() -> Iterator[Callable[[list[int]], Receiver]]:
    started: list[Receiver] = []

    def start(statuses: list[int]) -> Receiver:
        server = Receiver(statuses)
        server.thread.start()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.server.shutdown()
            server.server.server_close()


def test_allowlist_rules() -> None:
    hosts = ["hooks.example", "127.0.0.1:8080"]
    assert callback_refusal("https://hooks.example/x", hosts) is None
    assert callback_refusal("http://HOOKS.example:9000/x", hosts) is None
    assert callback_refusal("http://127.0.0.1:8080/x", hosts) is None
    assert "not on the callback allowlist" in (callback_refusal("http://127.0.0.1:8081/x", hosts) or "")
    assert "not on the callback allowlist" in (
        callback_refusal("http://hooks.example.evil.com/", hosts) or ""
    )
    assert "http" in (callback_refusal("file:///etc/passwd", hosts) or "")
    assert "user information" in (callback_refusal("http://u:p@hooks.example/", hosts) or "")
    assert "not enabled" in (callback_refusal("https://hooks.example/x", []) or "")


def test_signature_is_hmac_sha256_of_timestamp_delivery_and_body() -> None:
    body, stamp, delivery = b'{"id": "x"}', int(time.time()), "d-1"
    header = sign(b"k", body, timestamp=stamp, delivery=delivery)
    assert header.startswith("sha256=")
    assert verify(b"k", body, header, timestamp=str(stamp), delivery=delivery)
    assert not verify(b"k", body + b" ", header, timestamp=str(stamp), delivery=delivery)
    assert not verify(b"other", body, header, timestamp=str(stamp), delivery=delivery)
    assert not verify(b"k", body, header, timestamp=str(stamp), delivery="d-2")


def test_callback_is_signed_retried_with_backoff_and_recorded(
    tmp_path: Path, receivers: Callable[[list[int]], Receiver]
) -> None:
    receiver = receivers([500, 503])
    settings = make_settings(
        tmp_path,
        callback_hosts=["127.0.0.1"],
        callback_secret=SECRET,
        callback_backoff_s=0.2,
        callback_attempts=4,
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        sid = client.post(
            "/api/submissions", json={"problem": SCALE, "code": CODE, "callback_url": receiver.url}
        ).json()["id"]
        receiver.wait_for(3)
        deadline = time.monotonic() + 60
        while services.store.submissions.get(sid).callback_state is not CallbackState.DELIVERED:  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        (h1, b1, t1), (h2, b2, t2), (h3, body, t3) = receiver.requests
        assert b1 == b2 == body
        payload = json.loads(body)
        assert (
            payload["id"] == sid
            and payload["status"] == "done"
            and payload["result"]["verdict"] == "accepted"
        )
        read = client.get(f"/api/submissions/{sid}").json()
        assert read.pop("callback")["state"] in ("pending", "delivered")
        assert payload == read  # the read, less its own delivery record
        assert verify(
            SECRET.encode(),
            body,
            h3[SIGNATURE_HEADER],
            timestamp=h3["X-Judge-Timestamp"],
            delivery=h3["X-Judge-Delivery"],
        )
        assert h1["X-Judge-Delivery"] == h2["X-Judge-Delivery"] == h3["X-Judge-Delivery"]
        assert [h["X-Judge-Delivery-Attempt"] for h in (h1, h2, h3)] == ["1", "2", "3"]
        assert t2 - t1 >= 0.2 and t3 - t2 >= 0.4  # exponential backoff
        attempts = services.store.callbacks.attempts(sid)
        assert [(a, s) for a, s, _, _ in attempts] == [(1, 500), (2, 503), (3, 200)]


def test_callback_gives_up_after_its_attempts(
    tmp_path: Path, receivers: Callable[[list[int]], Receiver]
) -> None:
    receiver = receivers([500, 500, 500])
    settings = make_settings(
        tmp_path,
        callback_hosts=["127.0.0.1"],
        callback_secret=SECRET,
        callback_backoff_s=0.05,
        callback_attempts=2,
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        sid = client.post(
            "/api/submissions", json={"problem": SCALE, "code": CODE, "callback_url": receiver.url}
        ).json()["id"]
        deadline = time.monotonic() + 60
        while services.store.submissions.get(sid).callback_state is not CallbackState.FAILED:  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert len(receiver.requests) == 2


def test_callback_url_off_the_allowlist_is_refused_before_storing(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, callback_hosts=["hooks.example"], callback_secret=SECRET)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        for url, code in (
            ("http://127.0.0.1:1/x", "invalid_callback_url"),
            ("gopher://hooks.example/", "invalid_request"),  # malformed: no http(s) URL at all
            ("http://10.0.0.1/", "invalid_callback_url"),
        ):
            response = client.post(
                "/api/submissions", json={"problem": SCALE, "code": CODE, "callback_url": url}
            )
            assert response.status_code == 422
            error = response.json()["error"]
            assert error["code"] == code and error["path"] == "callback_url"
        assert services.store.submissions.count() == 0


def test_pending_callbacks_are_delivered_after_a_restart(
    tmp_path: Path, receivers: Callable[[list[int]], Receiver]
) -> None:
    receiver = receivers([])
    settings = make_settings(tmp_path, callback_hosts=["127.0.0.1"], callback_secret=SECRET)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        assert services.callbacks is not None
        services.callbacks.close()  # the first run dies before it can deliver anything
        sid = client.post(
            "/api/submissions", json={"problem": SCALE, "code": CODE, "callback_url": receiver.url}
        ).json()["id"]
        assert client.get(f"/api/submissions/{sid}?wait=60").json()["status"] == "done"
    assert receiver.requests == []
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (_, services):
        receiver.wait_for(1)
        deadline = time.monotonic() + 60
        while services.store.submissions.get(sid).callback_state is not CallbackState.DELIVERED:  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.02)


# ------------------------------------------------------------------------------------ leases

LEASE_S = 0.5


def _finished(store: Store, url: str) -> str:
    """A graded submission with a callback to send (as a grading node leaves it)."""
    sid = store.submissions.create(NewSubmission(problem=SCALE, code=CODE, manifest={}, callback_url=url)).id
    claim = store.attempts.claim(sid, node="grader-1")
    assert claim is not None
    assert store.attempts.finish(
        claim, {"verdict": "accepted"}, "accepted", {}, ("result", {"verdict": "accepted"})
    )
    return sid


def _sender(store: Store, name: str, receiver: Receiver) -> CallbackSender:
    return CallbackSender(
        store,
        secret=SECRET.encode(),
        allowed_hosts=["127.0.0.1"],
        render=lambda record: json.dumps({"id": record.id}).encode(),
        lease_s=LEASE_S,
        name=name,
    )


def _wait_state(store: Store, sid: str, state: CallbackState) -> None:
    deadline = time.monotonic() + 30
    while (record := store.submissions.get(sid)) is None or record.callback_state is not state:
        assert time.monotonic() < deadline, record
        time.sleep(0.02)


def test_a_callback_whose_sender_died_is_sent_by_another_after_its_lease(
    store: Store, receivers: Callable[[list[int]], Receiver]
) -> None:
    """At least once, never stuck: an API node that took a handed-off callback and died after a failed try
    holds it only until its lease passes; a pending callback whose grading node died before its first try
    (no lease) is taken over once it has waited as long. Another API node then sends each, on from the
    dead one's tries, with the same delivery id; the dead sender's late renewal is refused."""
    receiver = receivers([])
    handed, orphan = _finished(store, receiver.url), _finished(store, receiver.url)
    assert store.callbacks.hand_off(handed, receiver.url, "not sent by grading node grader-1")
    dead = _sender(store, "api-1", receiver)
    assert dead.poll() == 1 and dead.holds(handed)  # taken; its delivery threads never run: it dies
    store.callbacks.record_attempt(handed, 1, receiver.url, 503, None)  # ... after one try that failed
    alive = _sender(store, "api-2", receiver)
    try:
        assert alive.poll() == 0  # the dead node's lease runs; the orphan has not waited a lease yet
        assert store.callbacks.handed_off(10, LEASE_S) == []
        time.sleep(LEASE_S + 0.1)
        assert {sid for sid, _ in store.callbacks.handed_off(10, LEASE_S)} == {handed, orphan}
        alive.start(resume=False)
        assert alive.poll() == 2 and alive.poll() == 0  # taken once, not queued twice
        assert not store.callbacks.lease(handed, "api-1", LEASE_S)  # the dead one's late renewal
        for sid in (handed, orphan):
            _wait_state(store, sid, CallbackState.DELIVERED)
        assert sorted(r[0]["X-Judge-Submission"] for r in receiver.requests) == sorted([handed, orphan])
        attempts = {r[0]["X-Judge-Submission"]: r[0]["X-Judge-Delivery-Attempt"] for r in receiver.requests}
        assert attempts == {handed: "2", orphan: "1"}  # on from the dead sender's try 1
        assert [(a, code) for a, code, _, _ in store.callbacks.attempts(handed)] == [
            (0, None),
            (1, 503),
            (2, 200),
        ]
        assert alive.poll() == 0 and not alive.holds(handed)
    finally:
        alive.close()
        dead.close()


def test_a_sender_that_stops_releases_what_it_holds(
    store: Store, receivers: Callable[[list[int]], Receiver]
) -> None:
    """A sender closed with callbacks still queued gives up their leases: another takes them at once."""
    receiver = receivers([])
    sid = _finished(store, receiver.url)
    assert store.callbacks.hand_off(sid, receiver.url, "not sent by grading node grader-1")
    first, second = _sender(store, "api-1", receiver), _sender(store, "api-2", receiver)
    try:
        assert first.poll() == 1 and second.poll() == 0
        first.close()
        assert second.poll() == 1
    finally:
        second.close()


def test_a_callback_handed_off_again_is_a_new_delivery(
    store: Store, receivers: Callable[[list[int]], Receiver]
) -> None:
    """A grading node hands off a submission's callback after an earlier delivery (a regrade with
    ``notify=true``): the API node's sender delivers it from try 1 with a new delivery id, so a receiver
    that drops ids it has processed does not drop it."""
    receiver = receivers([])
    sid = _finished(store, receiver.url)
    sender = _sender(store, "api-1", receiver)
    sender.start(resume=False)
    try:
        for count in (1, 2):
            if count == 2:  # the regrade's end: pending again, left to an API node
                assert store.callbacks.reopen(sid)
            assert store.callbacks.hand_off(sid, receiver.url, "not sent by grading node grader-1")
            assert sender.poll() == 1
            receiver.wait_for(count)
            _wait_state(store, sid, CallbackState.DELIVERED)
    finally:
        sender.close()
    (first, _, _), (second, _, _) = receiver.requests
    assert second["webhook-id"] != first["webhook-id"]
    assert first["X-Judge-Delivery-Attempt"] == second["X-Judge-Delivery-Attempt"] == "1"


# ------------------------------------------------------------------------------------ issue 40


def _delivered(services: Any, sid: str, count: int = 1) -> None:
    """Wait until ``sid``'s callback is delivered, ``count`` deliveries (tries answered 2xx) in all."""
    deadline = time.monotonic() + 60
    while True:
        record = services.store.submissions.get(sid)
        tries = services.store.callbacks.attempts(sid)
        ok = sum(1 for _, code, _, _ in tries if code is not None and 200 <= code < 300)
        if record.callback_state is CallbackState.DELIVERED and ok >= count:
            return
        assert time.monotonic() < deadline, tries
        time.sleep(0.02)


def test_a_delivery_verifies_with_the_standard_webhooks_library_under_both_secrets_while_rotated(
    tmp_path: Path, receivers: Callable[[list[int]], Receiver]
) -> None:
    """Signed to the Standard Webhooks scheme: the reference library's Webhook(secret).verify accepts a
    real delivery with the whsec_ secret of the current key and of the previous one (rotation), and
    refuses another secret or a changed body; the deprecated X-Judge-* headers are still sent."""
    receiver = receivers([])
    current = "whsec_" + base64.b64encode(b"current-key-32-bytes-long-......").decode()
    settings = make_settings(
        tmp_path,
        callback_hosts=["127.0.0.1"],
        callback_secret=current,
        callback_secret_previous=SECRET,  # a plain (non-whsec_) secret: its bytes are the key
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        sid = client.post(
            "/api/v1/submissions", json={"problem": SCALE, "code": CODE, "callback_url": receiver.url}
        ).json()["id"]
        receiver.wait_for(1)
        headers, body, _ = receiver.requests[0]
        assert json.loads(body)["id"] == sid
        assert headers["webhook-signature"].count("v1,") == 2  # one per secret while rotated
        for secret in (current, standard_secret(SECRET.encode())):
            assert Webhook(secret).verify(body, headers)["id"] == sid
        with pytest.raises(WebhookVerificationError):
            Webhook(standard_secret(b"another secret")).verify(body, headers)
        with pytest.raises(WebhookVerificationError):
            Webhook(current).verify(body.replace(b"accepted", b"wrong_answer"), headers)
        assert headers["webhook-id"] == headers["X-Judge-Delivery"]
        assert headers["webhook-timestamp"] == headers["X-Judge-Timestamp"]
        assert verify(  # the deprecated scheme, with the setting's own bytes as its key
            current.encode(),
            body,
            headers[SIGNATURE_HEADER],
            timestamp=headers["X-Judge-Timestamp"],
            delivery=headers["X-Judge-Delivery"],
        )


def test_standard_signatures_match_the_library_for_a_given_id_time_and_body() -> None:
    secret = standard_secret(b"k3y")
    signed = standard_signature([b"k3y"], b'{"a": 1}', timestamp=1_700_000_000, delivery="msg_1")
    expected = Webhook(secret).sign("msg_1", datetime.fromtimestamp(1_700_000_000, UTC), '{"a": 1}')
    assert signed == expected


def test_a_redelivery_is_a_new_delivery_id_and_thirty_calls_give_one_delivery(
    tmp_path: Path, receivers: Callable[[list[int]], Receiver], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A receiver that drops the ids it has processed (as docs/api.md tells it) gets a redelivery: it has
    a new id, while the retries of one delivery keep theirs; calls while a delivery is pending or within
    the debounce window collapse into one."""
    monkeypatch.setattr(redelivery, "WINDOW_S", 0.5)
    receiver = receivers([503])  # the first delivery needs a retry: same id on both tries
    settings = make_settings(
        tmp_path, callback_hosts=["127.0.0.1"], callback_secret=SECRET, callback_backoff_s=0.05
    )
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        sid = client.post(
            "/api/v1/submissions", json={"problem": SCALE, "code": CODE, "callback_url": receiver.url}
        ).json()["id"]
        _delivered(services, sid)
        answers = [client.post(f"/api/v1/submissions/{sid}/callback") for _ in range(30)]
        assert {a.status_code for a in answers} == {202} and all(a.content == b"" for a in answers)
        _delivered(services, sid, 2)
        time.sleep(0.6)
        assert client.post(f"/api/v1/submissions/{sid}/callback").status_code == 202
        _delivered(services, sid, 3)
        time.sleep(0.3)
        ids = [h["webhook-id"] for h, _, _ in receiver.requests]
        assert len(ids) == 4, ids  # a retry, then one delivery per burst of redelivery calls
        assert ids[0] == ids[1] and len(set(ids[1:])) == 3
        assert [h["X-Judge-Delivery-Attempt"] for h, _, _ in receiver.requests] == ["1", "2", "1", "1"]
        assert [h["X-Judge-Delivery"] for h, _, _ in receiver.requests] == ids


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook\r\nX-Injected: 1",
        "http://127.0.0.1/ho\nok",
        "http://127.0.0.1/hook\x7f",
        "http://127.0.0.1/h ook",
        "http://127.0.0.1/\x00",
        "http://127.0.0.1/h\u00e9",
        "http://127.0.0.1/\u202e",
    ],
)
def test_a_callback_url_with_a_control_or_non_ascii_character_is_refused_naming_where(
    tmp_path: Path, url: str
) -> None:
    settings = make_settings(tmp_path, callback_hosts=["127.0.0.1"], callback_secret=SECRET)
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, services):
        response = client.post(
            "/api/v1/submissions", json={"problem": SCALE, "code": CODE, "callback_url": url}
        )
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_request" and error["path"] == "callback_url"
        position = next(i for i, c in enumerate(url) if not 0x21 <= ord(c) <= 0x7E)
        assert f"U+{ord(url[position]):04X} at position {position}" in error["message"]
        assert services.store.submissions.count() == 0
        # In a batch, a malformed item makes the body malformed: refused whole, nothing stored.
        batch = {
            "items": [{"problem": SCALE, "code": CODE}, {"problem": SCALE, "code": CODE, "callback_url": url}]
        }
        answer = client.post("/api/v1/submissions/batch", json=batch)
        assert answer.status_code == 422 and answer.json()["error"]["path"] == "items[1].callback_url"
        assert services.store.submissions.count() == 0


def test_the_sender_survives_any_url_it_is_given_recording_each_try(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """URLs stored before they were checked (or that no request can be made to): each try is recorded
    with its error and the callback is given up after its attempts, as any failure; nothing escapes the
    delivery (which would leave the callback to be retried every poll, forever, with no try recorded)."""
    store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    store.migrate()

    def resolver(host: str, port: int) -> list[str]:
        raise RuntimeError(f"no resolver for {host!r}")

    urls = [
        "http://127.0.0.1/hook\r\nX-Injected: 1",
        "http://127.0.0.1:8080:80/",
        "http://[127.0.0.1]/",
        "http://hooks.example/",  # the resolver fails with an error no resolver should raise
        "http://" + "a" * 70 + ".hooks.example/",  # a label past 63 characters
    ]
    sender = CallbackSender(
        store,
        secret=SECRET.encode(),
        allowed_hosts=["127.0.0.1", "127.0.0.1:8080", "hooks.example", "a" * 70 + ".hooks.example"],
        render=lambda record: b"{}",
        attempts=2,
        backoff_s=0.05,
        resolver=resolver,
    )
    ids = [_finished(store, url) for url in urls]
    sender.start()
    try:
        for sid in ids:
            _wait_state(store, sid, CallbackState.FAILED)
        for sid in ids:
            tries = store.callbacks.attempts(sid)
            assert tries and all(error for _, _, error, _ in tries), tries
            assert len(tries) <= 2
    finally:
        sender.close()
        store.close()
    assert not [r for r in caplog.records if "delivering the callback" in r.getMessage()]


def test_a_settled_callback_is_reopened_by_one_caller_only(store: Store) -> None:
    """What keeps two API nodes asked to redeliver at once from starting two deliveries."""
    sid = _finished(store, "http://127.0.0.1:9/hook")
    assert not store.callbacks.reopen(sid)  # pending: a delivery is under way
    for settled in (CallbackState.DELIVERED, CallbackState.FAILED):
        store.callbacks.set_state(sid, settled)
        assert [store.callbacks.reopen(sid) for _ in range(3)] == [True, False, False]
        assert store.submissions.get(sid).callback_state is CallbackState.PENDING  # type: ignore[union-attr]
