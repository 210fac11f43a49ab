"""Hostile clients against the HTTP layer (issue 22): one test per point, the engine a fake where grading
does not matter (the real sandbox: test_service_hostile_sandbox.py).

Malformed source encodings, event ids out of range or from another stream, streams that never end, one
client taking every Run or queue slot, bidirectional controls in results, a Content-Length that is not a
number, slow clients, the API pages' assets, replayed or rebound callbacks, key guessing, upper-case ids.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from judge.core.problems import Problem
from judge.core.progress import RunProgress
from judge.core.results import CaseResult, GradeResult, LeafValue
from judge.core.settings import Settings
from judge.core.verdicts import Verdict
from judge.dispatch.callbacks import pinned_target, signature_header, verify
from judge.service.apikeys import generate_key, hash_key
from judge.service.app import create_app
from judge.service.logflood import FloodFilter
from judge.service.protocol import GuardedH11Protocol
from judge.service.server import connection_limit
from judge.service.state import Services
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import CaseCallback, FakeEngine
from tests.service_support import make_settings, running, sandbox_ok, sse_events

SCALE = FIXTURE_SLUG
CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")  # never started: the fake engine grades


def blocked(gate: threading.Event) -> Callable[[], None]:
    """A FakeEngine delay: grading waits until ``gate`` is set (at most a minute)."""

    def wait() -> None:
        gate.wait(60)

    return wait


def submit(client: TestClient, code: str = CODE, **headers: str) -> str:
    response = client.post("/api/submissions", json={"problem": SCALE, "code": code}, headers=headers)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]  # type: ignore[no-any-return]


@contextlib.contextmanager
def serving(
    settings: Settings, *, engine: FakeEngine | None = None, **protocol: Any
) -> Iterator[tuple[str, Services]]:
    """The app under uvicorn with the judge's protocol, on a free loopback port, in a thread."""
    services = Services.build(
        settings, backend=PROCESS, engine=engine or FakeEngine(), sandbox_check=sandbox_ok
    )
    app = create_app(services=services, manage=True)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app,
        http=GuardedH11Protocol.configured(**protocol),
        log_level="warning",
        timeout_keep_alive=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive()
            time.sleep(0.02)
        assert services.wait_ready(60)
        yield url, services
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def exchange(url: str, data: bytes, wait: float = 10.0) -> tuple[float, bytes]:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        started = time.monotonic()
        if data:
            sock.sendall(data)
        out = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                out += chunk
        return time.monotonic() - started, out


def body_of(response: bytes) -> Any:
    import json

    head, _, body = response.partition(b"\r\n\r\n")
    assert b"application/json" in head.lower(), response
    return json.loads(body)


# ------------------------------------------------------------------------ 1. content the store refuses


class UnstorableEngine(FakeEngine):
    """Returns a result holding a lone surrogate, built without validation: what a result the models did
    not make safe would be. Storing it must give the submission a verdict, once."""

    def grade(self, problem: Problem, code: str, *, on_case: CaseCallback | None = None) -> GradeResult:
        self.graded.append(code)
        shown = LeafValue.model_construct(json_value={"\ud800": 1.0}, text="x", omitted=False)
        case = CaseResult.model_construct(
            name="example_1", visibility="public", verdict=Verdict.WRONG_ANSWER, message="m", output=shown
        )
        if on_case is not None:
            on_case(case)
        return GradeResult.model_construct(
            problem=problem.slug,
            verdict=Verdict.WRONG_ANSWER,
            passed=0,
            total=1,
            message="m",
            cases=[case],
            stdout="",
            stdout_truncated=False,
            backend="fake",
            elapsed_ms=0.0,
        )


def test_a_result_its_content_keeps_from_storing_is_that_submissions_verdict(tmp_path: Path) -> None:
    engine = UnstorableEngine()
    with running(make_settings(tmp_path), backend=PROCESS, engine=engine) as (client, services):
        sid = submit(client)
        body = client.get(f"/api/submissions/{sid}?wait=60").json()
        assert body["status"] == "done" and body["verdict"] == "runtime_error", body
        assert body["attempts"] == 1 and len(engine.graded) == 1
        assert "could not be stored" in body["result"]["message"]
        assert "\ud800" not in client.get(f"/api/submissions/{sid}/events").text
        assert services.metrics.submissions_failed._value.get() == 0


def test_results_escape_lone_surrogates_and_display_controls_in_one_place() -> None:
    case = CaseResult(
        name="c",
        visibility="public",
        verdict=Verdict.WRONG_ANSWER,
        message="key \ud800 and \u202eevil",
        output=LeafValue.of({"\ud800\u202e": 1.0}),
    )
    data = case.model_dump(mode="json", by_alias=True)  # raised UnicodeEncodeError before
    assert data["message"] == "key \\ud800 and \\u202eevil"
    assert data["output"]["json"] == {"\\ud800\u202e": 1.0}  # raw but for the surrogate
    assert "\u202e" not in data["output"]["text"] and "\\u202e" in data["output"]["text"]
    result = GradeResult(
        problem="p",
        verdict=Verdict.ACCEPTED,
        passed=1,
        total=1,
        cases=[case],
        stdout="a\u2066b\n",
        backend="x",
        elapsed_ms=0.0,
    )
    assert result.stdout == "a\\u2066b\n"


# ------------------------------------------------------------------------ 2. source encodings


@pytest.mark.parametrize("codec", ["punycode", "rot13", "utf-16", "unicode_escape", "idna"])
def test_source_encodings_off_the_list_are_422_naming_the_line(tmp_path: Path, codec: str) -> None:
    with running(make_settings(tmp_path), backend=PROCESS, engine=FakeEngine()) as (client, _):
        code = f"# generated\n# coding: {codec}\n{CODE}"
        for response in (
            client.post(f"/api/problems/{SCALE}/run", json={"code": code}),
            client.post("/api/submissions", json={"problem": SCALE, "code": code}),
        ):
            error = assert_error(response, 422, "invalid_code")
            assert error["message"].startswith("code: line 2: the source encoding"), error
            assert "not accepted" in error["message"] and "UTF-8" in error["message"]
        latin = client.post(f"/api/problems/{SCALE}/run", json={"code": f"# coding: latin-1\n{CODE}"})
        assert latin.status_code == 200, latin.text


# ------------------------------------------------------------------------ 3. and 4. event streams


def test_last_event_id_is_range_checked_and_must_be_this_submissions(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=PROCESS, engine=FakeEngine()) as (client, _):
        sid, other = submit(client), submit(client, f"# other\n{CODE}")
        assert client.get(f"/api/submissions/{sid}?wait=60").json()["status"] == "done"
        for header in ("1180591620717411303424", f"{sid}/1180591620717411303424", f"{other}/1", "x", "-1"):
            response = client.get(f"/api/submissions/{sid}/events", headers={"Last-Event-ID": header})
            error = assert_error(response, 422, "invalid_request")
            assert error["path"] == "header.last-event-id", error


def test_streams_open_with_retry_and_ids_and_end_when_the_client_has_everything(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=PROCESS, engine=FakeEngine()) as (client, _):
        sid = submit(client)
        assert client.get(f"/api/submissions/{sid}?wait=60").json()["status"] == "done"
        text = client.get(f"/api/submissions/{sid}/events").text
        assert text.replace("\r\n", "\n").startswith("retry: "), text[:80]
        events = sse_events(text)
        assert events[0][0] == f"{sid}/0" and events[0][1] == "status"
        assert all(event_id and event_id.startswith(f"{sid}/") for event_id, _, _ in events)
        assert events[-1][1] == "result"
        middle = events[len(events) // 2][0]
        assert middle is not None
        resumed = sse_events(
            client.get(f"/api/submissions/{sid}/events", headers={"Last-Event-ID": middle}).text
        )
        assert [e[0] for e in resumed] == [e[0] for e in events[len(events) // 2 + 1 :]]
        started = time.monotonic()
        final = client.get(f"/api/submissions/{sid}/events", headers={"Last-Event-ID": events[-1][0] or ""})
        assert final.status_code == 204 and time.monotonic() - started < 5  # never a stream of pings


def test_streams_have_a_lifetime_and_a_per_client_cap(tmp_path: Path) -> None:
    gate = threading.Event()
    key = generate_key()
    settings = make_settings(
        tmp_path, stream_max_s=1.5, streams_per_client=2, api_keys={"other": hash_key(key)}
    )
    try:
        with serving(
            settings,
            max_connections=64,
            header_timeout_s=5,
            engine=FakeEngine(delay=blocked(gate)),
        ) as (url, _):
            sid = httpx.post(f"{url}/api/submissions", json={"problem": SCALE, "code": CODE}).json()["id"]
            events = f"{url}/api/submissions/{sid}/events"
            started = time.monotonic()
            text = httpx.get(events, timeout=30).text  # never finishes grading: the lifetime ends it
            assert 1.4 < time.monotonic() - started < 10 and "event: status" in text
            with httpx.Client(timeout=30) as http:
                with http.stream("GET", events) as one, http.stream("GET", events) as two:
                    assert one.status_code == two.status_code == 200
                    third = http.get(events)
                    assert assert_error(third, 429, "too_many_streams")
                    assert int(third.headers["retry-after"]) >= 1
                    # Another client is not held back by this one's streams.
                    with http.stream("GET", events, headers={"Authorization": f"Bearer {key}"}) as other:
                        assert other.status_code in (200, 404)
                # Closed streams give their share back.
                deadline = time.monotonic() + 10
                while True:
                    with http.stream("GET", events) as again:
                        if again.status_code == 200:
                            break
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
    finally:
        gate.set()


# ------------------------------------------------------------------------ 6. one client, every slot


def test_one_client_gets_its_share_of_runs_and_of_the_queue(tmp_path: Path) -> None:
    gate = threading.Event()
    engine = FakeEngine(delay=blocked(gate))
    key = generate_key()
    settings = make_settings(
        tmp_path,
        runs_per_client=1,
        submissions_per_client=2,
        run_queue=8,
        api_keys={"other": hash_key(key)},
    )
    other = {"Authorization": f"Bearer {key}"}
    with running(settings, backend=PROCESS, engine=engine) as (client, _):
        results: list[httpx.Response] = []
        first = threading.Thread(
            target=lambda: results.append(client.post(f"/api/problems/{SCALE}/run", json={"code": CODE}))
        )
        first.start()
        try:
            deadline = time.monotonic() + 30
            while client.app.state.run_shares.total() == 0:  # type: ignore[attr-defined]
                assert time.monotonic() < deadline
                time.sleep(0.01)
            second = client.post(f"/api/problems/{SCALE}/run", json={"code": CODE})
            error = assert_error(second, 429, "run_busy")
            assert error["limit"] == "runs_per_client" and int(second.headers["retry-after"]) >= 1
            submit(client)
            submit(client, f"# 2\n{CODE}")
            third = client.post("/api/submissions", json={"problem": SCALE, "code": f"# 3\n{CODE}"})
            assert assert_error(third, 429, "queue_full")["limit"] == "submissions_per_client"
            assert submit(client, f"# other\n{CODE}", **other)  # another client keeps its share
        finally:
            gate.set()
            first.join(60)
        assert results and results[0].status_code == 200


# ------------------------------------------------------------------------ 7. invisible controls


def test_bidi_controls_in_prints_messages_and_keys_are_escaped_in_display_text(tmp_path: Path) -> None:
    class Bidi(FakeEngine):
        def run(
            self,
            problem: Problem,
            code: str,
            inputs: Mapping[str, Any] | None = None,
            *,
            dtype: str | None = None,
            on_case: CaseCallback | None = None,
            on_progress: Callable[[RunProgress], None] | None = None,
            cancel: threading.Event | None = None,
        ) -> GradeResult:
            case = CaseResult(
                name="example_1",
                visibility="public",
                verdict=Verdict.WRONG_ANSWER,
                message='output: unexpected key "\u202eTPECCA"',
                output=LeafValue.of({"\u2066k\u2069": 1.0}),
            )
            return GradeResult(
                problem=problem.slug,
                verdict=Verdict.WRONG_ANSWER,
                passed=0,
                total=1,
                cases=[case],
                stdout="\u202eaccepted\n",
                backend="fake",
                elapsed_ms=0.0,
            )

    with running(make_settings(tmp_path), backend=PROCESS, engine=Bidi()) as (client, _):
        response = client.post(f"/api/problems/{SCALE}/run", json={"code": CODE})
        body = response.json()
        case = body["cases"][0]
        assert body["stdout"] == "\\u202eaccepted\n"
        assert case["message"] == 'output: unexpected key "\\u202eTPECCA"'
        assert "\u2066" not in case["output"]["text"] and "\\u2066k\\u2069" in case["output"]["text"]
        assert case["output"]["json"] == {"\u2066k\u2069": 1.0}  # the raw value a client may need


# ------------------------------------------------------------------------ 5. and 8. the server itself


def test_malformed_content_length_is_400_in_the_error_shape(tmp_path: Path) -> None:
    with serving(make_settings(tmp_path), max_connections=64, header_timeout_s=5) as (url, _):
        for value in (b"-1", b"abc", b"1, 2"):
            request = b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Length: " + value + b"\r\n\r\n"
            _, response = exchange(url, request)
            assert response.startswith(b"HTTP/1.1 400 "), response
            assert body_of(response)["error"]["code"] == "bad_request"


def test_slow_clients_are_timed_out_and_connections_capped(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, body_timeout_s=1.0)
    with serving(settings, max_connections=20, header_timeout_s=1.0) as (url, _):
        # Headers that never finish: 408 in the error shape after the header timeout, then closed.
        took, response = exchange(url, b"GET /api/problems HTTP/1.1\r\nHost: x\r\n")
        assert 0.9 < took < 5 and response.startswith(b"HTTP/1.1 408 "), response
        assert body_of(response)["error"]["code"] == "request_timeout"
        # A body that stops arriving: 408 after the body timeout, and the connection is closed.
        start = b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        took, response = exchange(url, start + b'Content-Length: 100\r\n\r\n{"problem"')
        assert 0.9 < took < 5 and response.count(b"HTTP/1.1 ") == 1 and b" 408 " in response, response
        # Half-sent requests fill the connection limit: a client that sends its request at once is still
        # served, in place of the one that has waited longest for its headers (closed with a 408).
        host, port = url.removeprefix("http://").split(":")
        held = [socket.create_connection((host, int(port))) for _ in range(20)]
        try:
            for sock in held:
                sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            time.sleep(0.2)
            for _ in range(3):
                assert httpx.get(f"{url}/healthz", timeout=2).status_code == 200
            held[0].settimeout(2)
            assert held[0].recv(65536).startswith(b"HTTP/1.1 408 ")
        finally:
            for sock in held:
                sock.close()


def test_one_address_cannot_take_every_connection(tmp_path: Path) -> None:
    with serving(make_settings(tmp_path), max_connections=64, max_per_address=5, header_timeout_s=5) as (
        url,
        _,
    ):
        host, port = url.removeprefix("http://").split(":")
        held = [socket.create_connection((host, int(port))) for _ in range(5)]
        try:
            for sock in held:
                sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            time.sleep(0.2)
            with pytest.raises(httpx.HTTPError):
                httpx.get(f"{url}/healthz", timeout=2)  # a sixth from the same address: closed at once
            other = httpx.HTTPTransport(local_address="127.0.0.2")
            with httpx.Client(transport=other, timeout=5) as client:
                assert client.get(f"{url}/healthz").status_code == 200  # another address is served
        finally:
            for sock in held:
                sock.close()


def test_the_16_kib_header_cap_holds_on_the_wire(tmp_path: Path) -> None:
    """Through uvicorn and h11, as judge serve runs: 15 KiB of headers are served, 17 KiB are refused
    (431 when the head arrives whole: h11 alone let ~100 KB through; 400 from h11 when it trickles)."""
    with serving(make_settings(tmp_path), max_connections=64, header_timeout_s=5) as (url, _):

        def head(size: int) -> bytes:
            return b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: " + b"a" * size + b"\r\n\r\n"

        _, ok = exchange(url, head(15 * 1024))
        assert ok.startswith(b"HTTP/1.1 200 "), ok[:200]
        _, whole = exchange(url, head(17 * 1024))
        assert whole.startswith(b"HTTP/1.1 431 "), whole[:200]
        assert body_of(whole)["error"]["limit"] == "max_header_bytes"
        _, big = exchange(url, head(100 * 1024))
        assert big.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), big[:200]
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            data = head(17 * 1024)
            for start in range(0, len(data), 4096):  # in pieces: h11's incomplete-head bound
                with contextlib.suppress(OSError):
                    sock.sendall(data[start : start + 4096])
                time.sleep(0.01)
            answer = b""
            with contextlib.suppress(TimeoutError, ConnectionResetError):
                while chunk := sock.recv(65536):
                    answer += chunk
        assert answer.startswith((b"HTTP/1.1 431 ", b"HTTP/1.1 400 ")), answer[:200]


def test_slow_connections_from_many_addresses_leave_well_behaved_clients_served(tmp_path: Path) -> None:
    """A slowloris spread over more addresses than the per-address cap can stop (the trial: 14 or more
    addresses made the service refuse everyone): 12 addresses x 8 connections trickling header bytes,
    twice the connection limit, reopened as they are closed. Every well-behaved probe, from addresses
    of its own, is answered; the slow connections are turned over (408), not the probes refused."""
    limit, per_address, addresses = 48, 8, [f"127.0.3.{n}" for n in range(1, 13)]
    with serving(
        make_settings(tmp_path), max_connections=limit, max_per_address=per_address, header_timeout_s=30
    ) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        stop = threading.Event()
        closed = [0]

        def hold(address: str) -> None:
            socks: list[socket.socket] = []
            try:
                while not stop.is_set():
                    while len(socks) < per_address and not stop.is_set():
                        sock = socket.socket()
                        sock.bind((address, 0))
                        sock.settimeout(2)
                        try:
                            sock.connect((host, int(port)))
                            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                        except OSError:
                            sock.close()
                            continue
                        socks.append(sock)
                    for sock in list(socks):
                        try:
                            sock.sendall(b"X-Slow: 1\r\n")  # one header line at a time, never the end
                        except OSError:
                            closed[0] += 1
                            socks.remove(sock)
                            sock.close()
                    stop.wait(0.2)
            finally:
                for sock in socks:
                    sock.close()

        threads = [threading.Thread(target=hold, args=(a,), daemon=True) for a in addresses]
        for thread in threads:
            thread.start()
        try:
            time.sleep(1.5)  # every slow connection open (more than the limit), trickling
            answered = 0
            for n in range(20):
                transport = httpx.HTTPTransport(local_address=f"127.0.4.{n + 1}")
                with (
                    httpx.Client(transport=transport, timeout=5) as client,
                    contextlib.suppress(httpx.HTTPError),
                ):
                    answered += client.get(f"{url}/healthz").status_code == 200
                time.sleep(0.05)
            assert answered == 20
            assert closed[0] > 0  # slow connections were turned over to make room
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)


def test_the_connection_limit_stays_below_the_open_files_limit() -> None:
    import resource

    from judge.service.server import FD_RESERVE, FD_SETSIZE

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = connection_limit(10**9)
    assert limit < resource.getrlimit(resource.RLIMIT_NOFILE)[0] and limit >= 16
    # The sandbox pool's select() needs descriptors below FD_SETSIZE: connections leave them room.
    assert limit <= FD_SETSIZE - FD_RESERVE
    assert connection_limit(100) == 100
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def test_the_log_cannot_be_flooded() -> None:
    flood = FloodFilter(burst=20, window_s=60)
    records = [
        logging.LogRecord(
            "asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource", (), None
        )
        for _ in range(10_000)
    ]
    assert sum(flood.filter(r) for r in records) == 20
    other = logging.LogRecord("uvicorn.error", logging.WARNING, __file__, 1, "Invalid HTTP request", (), None)
    assert flood.filter(other)


# ------------------------------------------------------------------------ 9. the API pages


def test_api_docs_load_nothing_from_another_host_and_carry_a_csp(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=PROCESS, engine=FakeEngine()) as (client, _):
        page = client.get("/docs")
        assert page.status_code == 200
        html = page.text
        assert "cdn." not in html and "https://" not in html and "http://" not in html, html
        csp = page.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "cdn" not in csp
        import re

        assets = re.findall(r'(?:src|href)="(/[^"]+)"', html)
        assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
        for asset in assets:
            assert client.get(asset).status_code == 200, asset
        assert "/openapi.json" in html
        for path in ("/redoc",):
            response = client.get(path)
            assert response.status_code == 404 or "https://" not in response.text


# ------------------------------------------------------------------------ 10. callbacks and keys


def test_callback_signatures_cover_time_and_delivery_and_two_secrets_rotate() -> None:
    body, now = b'{"id": "s"}', 1_800_000_000
    header = signature_header([b"new", b"old"], body, timestamp=now, delivery="d1")
    assert header.count("sha256=") == 2
    for secret in (b"new", b"old"):
        assert verify(secret, body, header, timestamp=str(now), delivery="d1", now=now + 10)
    assert not verify(b"other", body, header, timestamp=str(now), delivery="d1", now=now)
    # A captured callback replayed later than the tolerance window, or with another delivery id.
    assert not verify(b"new", body, header, timestamp=str(now), delivery="d1", now=now + 301)
    assert not verify(b"new", body, header, timestamp=str(now + 1), delivery="d1", now=now)
    assert not verify(b"new", body, header, timestamp=str(now), delivery="d2", now=now)


def test_an_allowed_name_is_checked_by_the_address_it_resolves_to_and_pinned() -> None:
    for private in ("127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "::ffff:127.0.0.1", "fd00::1"):
        with pytest.raises(ValueError, match="non-public"):
            pinned_target("http://hooks.example/x", lambda _h, _p, a=private: ["93.184.216.34", a])  # type: ignore[misc]
    target, host, server_name = pinned_target(
        "https://hooks.example:8443/cb?q=1", lambda host, port: ["93.184.216.34"]
    )
    assert target == "https://93.184.216.34:8443/cb?q=1" and host == "hooks.example:8443"
    assert server_name == "hooks.example"
    assert pinned_target("http://127.0.0.1:9/x", lambda h, p: ["10.0.0.1"])[0] == "http://127.0.0.1:9/x"


def test_failed_authentications_are_rate_limited(tmp_path: Path) -> None:
    key = generate_key()
    settings = make_settings(tmp_path, api_keys={"a": hash_key(key)}, failed_auth_rate_limit="5/minute")
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        codes = [
            client.get("/api/problems", headers={"Authorization": f"Bearer guess{i}"}).status_code
            for i in range(8)
        ]
        assert codes == [401] * 5 + [429] * 3
        limited = client.get("/api/problems", headers={"Authorization": "Bearer guess"})
        assert assert_error(limited, 429, "rate_limited")["limit"] == "failed_auth_rate_limit"
        assert int(limited.headers["retry-after"]) >= 1


def test_an_upper_case_submission_id_is_the_same_submission(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=PROCESS, engine=FakeEngine()) as (client, _):
        sid = submit(client)
        upper = client.get(f"/api/submissions/{sid.upper()}?wait=60")
        assert upper.status_code == 200 and upper.json()["id"] == sid
        assert client.get(f"/api/submissions/{sid.upper()}/events").status_code == 200
