"""Degraded dependencies degrade, never fail: a real Redis (the rate limiter's counters, the Run and stream
shares, the grading queue's broker) stopped and started during traffic, and a real PostgreSQL halted and
resumed under a service (``judge/service/degraded.py``)."""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from judge.dispatch.capabilities import SUBMISSIONS_QUEUE
from judge.service.degraded import RETRY_S, Fallback
from sandbox.backends import get_backend
from tests import redis_server
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.postgres import PostgresServer, why_unavailable
from tests.service_support import make_settings, running

CODE = "def scale_tree(tree, factor):\n    return tree\n"


@pytest.fixture
def broker() -> Iterator[redis_server.RedisServer]:
    yield from redis_server.started()


def _said(caplog: pytest.LogCaptureFixture, words: str) -> int:
    return sum(words in record.getMessage() for record in caplog.records)


def test_an_outage_is_logged_once_when_it_begins_and_once_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers = [False]
    fallback = Fallback("queue_url", "counted here", probe=lambda: answers[0], retry_s=0.05)
    seen: list[bool] = []
    fallback.listeners.append(lambda _name, down: seen.append(down))
    with caplog.at_level(logging.WARNING, logger="judge.service.degraded"):
        for _ in range(50):
            fallback.failed(ConnectionError("refused"))
        assert fallback.usable() is False, "tried again at once: every request would pay for the outage"
        time.sleep(0.06)
        assert fallback.usable() is True and fallback.usable() is False  # one caller tries, the rest wait
        outage = fallback.outage()
        assert outage is not None and outage.reason == "ConnectionError: refused" and outage.seconds > 0
        answers[0] = True
        time.sleep(0.06)
        assert fallback.outage() is None, "the probe did not notice the recovery"
        fallback.succeeded()
    assert _said(caplog, "queue_url does not answer (ConnectionError: refused); meanwhile counted here") == 1
    assert _said(caplog, "queue_url answers again") == 1
    assert seen == [True, False]


# ------------------------------------------------------------------------------------------ Redis


def _counts(answers: list[Any]) -> dict[int, int]:
    out: dict[int, int] = {}
    for answer in answers:
        out[answer.status_code] = out.get(answer.status_code, 0) + 1
    return out


def test_rate_limits_count_per_process_while_redis_is_away_and_shared_again_after(
    broker: redis_server.RedisServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two API nodes sharing their counters in Redis: a client's limit holds across both; with Redis
    stopped each node counts it alone (no 5xx), says so in /readyz and /metrics and logs it once; with
    Redis back the counters are shared again."""
    limit = "4/minute"
    one = make_settings(tmp_path / "one", anonymous_rate_limit=limit, rate_limit_storage=broker.url)
    two = make_settings(tmp_path / "two", anonymous_rate_limit=limit, rate_limit_storage=broker.url)
    process = get_backend("process")
    with (
        caplog.at_level(logging.WARNING, logger="judge.service.degraded"),
        running(one, backend=process, engine=FakeEngine()) as (a, _),
        running(two, backend=process, engine=FakeEngine()) as (b, _),
    ):
        shared = [a.get("/api/v1/problems"), a.get("/api/v1/problems"), b.get("/api/v1/problems")]
        shared += [b.get("/api/v1/problems"), a.get("/api/v1/problems")]
        assert [r.status_code for r in shared] == [200, 200, 200, 200, 429], "not shared while Redis is up"

        broker.kill()
        away_a = [a.get("/api/v1/problems") for _ in range(5)]
        away_b = [b.get("/api/v1/problems") for _ in range(5)]
        assert [r.status_code for r in away_a] == [200, 200, 200, 200, 429], _counts(away_a)
        assert [r.status_code for r in away_b] == [200, 200, 200, 200, 429], _counts(away_b)
        assert away_a[-1].headers["retry-after"] and away_a[0].headers["ratelimit-limit"] == "4"
        ready = a.get("/readyz")
        assert ready.status_code == 200, ready.text  # degraded, still serving
        (outage,) = [d for d in ready.json()["degraded"] if d["dependency"] == "rate_limit_storage"]
        assert outage["effect"] == "rate limits are counted in each process" and outage["reason"]
        assert 'judge_dependency_down{dependency="rate_limit_storage"} 1.0' in a.get("/metrics").text

        broker.start()  # a fresh, empty Redis on the same port
        time.sleep(RETRY_S + 0.2)
        assert a.get("/readyz").json()["degraded"] == [], "the recovery did not show"
        back = [a.get("/api/v1/problems"), b.get("/api/v1/problems"), b.get("/api/v1/problems")]
        back += [a.get("/api/v1/problems"), b.get("/api/v1/problems")]
        assert [r.status_code for r in back] == [200, 200, 200, 200, 429], "not shared again after"
        metrics = a.get("/metrics").text
        assert 'judge_dependency_down{dependency="rate_limit_storage"} 0.0' in metrics
        assert 'judge_dependency_outages_total{dependency="rate_limit_storage"} 1.0' in metrics
    assert _said(caplog, "rate_limit_storage does not answer") == 2, "once per node and outage"
    assert _said(caplog, "rate_limit_storage answers again") == 2


def _published(url: str) -> set[str]:
    """The submission ids of the messages waiting in the broker's submissions queue."""
    connection = redis.Redis.from_url(url)
    try:
        ids = set()
        for raw in connection.lrange(SUBMISSIONS_QUEUE, 0, -1):
            message = json.loads(raw)
            body = message["body"]
            if message.get("properties", {}).get("body_encoding") == "base64":
                body = base64.b64decode(body)
            args = json.loads(body)[0]
            ids.add(str(args[0]))
        return ids
    finally:
        connection.close()


def test_a_redis_stop_during_traffic_gives_no_5xx_and_loses_no_submission(
    broker: redis_server.RedisServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An API node with everything on one Redis (rate limits, Run shares, the grading queue), under a
    client looping reads, Runs and submissions while Redis is stopped and started again: every answer is
    a 2xx, and every submission accepted meanwhile reaches the broker once it is back."""
    settings = make_settings(
        tmp_path, rate_limit_storage=broker.url, queue_url=broker.url, sweep_s=1.0, queue_size=100_000
    )
    statuses: list[tuple[str, int, str]] = []
    accepted: list[str] = []
    stop = threading.Event()

    def traffic(client: TestClient) -> None:
        while not stop.is_set():
            for what, answer in (
                ("list", client.get("/api/v1/problems")),
                ("run", client.post(f"/api/v1/problems/{FIXTURE_SLUG}/run", json={"code": CODE})),
                ("submit", client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE})),
            ):
                statuses.append((what, answer.status_code, answer.text[:200]))
                if what == "submit" and answer.status_code == 202:
                    accepted.append(answer.json()["id"])
            time.sleep(0.05)

    with (
        caplog.at_level(logging.WARNING),
        running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _),
    ):
        thread = threading.Thread(target=traffic, args=(client,), daemon=True)
        thread.start()
        try:
            time.sleep(1.0)
            broker.kill()
            time.sleep(4.0)
            during = len(statuses)
            degraded = {d["dependency"] for d in client.get("/readyz").json()["degraded"]}
            broker.start()
            time.sleep(RETRY_S + 2.0)
        finally:
            stop.set()
            thread.join(60)
        assert not thread.is_alive()
        assert {"rate_limit_storage", "queue_url"} <= degraded, degraded
        deadline = time.monotonic() + 30
        while not set(accepted) <= _published(broker.url) and time.monotonic() < deadline:
            time.sleep(0.2)
        missing = set(accepted) - _published(broker.url)
    failures = [s for s in statuses if s[1] >= 300]
    assert not failures, failures[:5]
    assert during > 0 and len(statuses) > during, "no traffic during or after the outage"
    assert accepted and not missing, f"{len(missing)} of {len(accepted)} accepted submissions never published"
    assert _said(caplog, "rate_limit_storage does not answer") == 1
    assert _said(caplog, "publishing submission") == 1, "once per outage, not per submission"
    assert _said(caplog, "queue sweep failed") <= 1


# ------------------------------------------------------------------------------------------ PostgreSQL


@pytest.fixture
def postgres() -> Iterator[PostgresServer]:
    reason = why_unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_a_database_outage_answers_503_with_retry_after_and_recovers_by_itself(
    postgres: PostgresServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path, database_url=postgres.new_database())
    with (
        caplog.at_level(logging.WARNING, logger="judge.service.degraded"),
        running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _),
    ):
        made = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE})
        assert made.status_code == 202, made.text
        sid = made.json()["id"]
        postgres.halt()
        try:
            answers = [
                client.get(f"/api/v1/submissions/{sid}"),
                client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}),
                client.get(f"/api/v1/submissions/{sid}/code"),
            ]
            for answer in answers:
                assert answer.status_code == 503, answer.text
                assert answer.json()["error"]["code"] == "dependency_unavailable", answer.text
                assert "the database does not answer" in answer.json()["error"]["message"]
                assert int(answer.headers["retry-after"]) > 0
            assert client.get("/api/v1/problems").status_code == 200  # what needs no database still works
            ready = client.get("/readyz")
            assert ready.status_code == 503 and "database" in ready.json()["reason"]
            assert [d["dependency"] for d in ready.json()["degraded"]] == ["database_url"]
        finally:
            postgres.resume()
        deadline = time.monotonic() + 30
        while (again := client.get(f"/api/v1/submissions/{sid}")).status_code != 200:
            assert again.status_code == 503 and time.monotonic() < deadline, again.text
            time.sleep(0.2)
        assert client.get("/readyz").json()["degraded"] == []
    assert _said(caplog, "database_url does not answer") == 1, "logged once per outage"
    assert _said(caplog, "database_url answers again") == 1
