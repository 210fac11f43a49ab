"""Limits a platform can plan with: RateLimit-* and X-RateLimit-* headers on every counted answer
(success and 429, declared in the schema), an honest Retry-After when no grading node is alive, and
/readyz saying whether submissions get graded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judge.dispatch import QueueFull
from judge.dispatch.celery_queue import NO_NODE_RETRY_S, CeleryDispatcher
from judge.service.app import create_app
from judge.store import NewSubmission, Store, sqlite_url
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.service_support import FakeEngine, make_settings, running


def test_rate_limit_headers_on_success_and_on_429(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, anonymous_rate_limit="3/minute")
    with running(settings, backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        answers = [client.get("/api/v1/problems") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert [a.headers["ratelimit-remaining"] for a in answers] == ["2", "1", "0", "0"]
    for answer in answers:
        assert answer.headers["x-ratelimit-limit"] == answer.headers["ratelimit-limit"] == "3"
        assert 0 <= int(answer.headers["x-ratelimit-reset"]) <= 60
    assert int(answers[-1].headers["retry-after"]) >= 1


def test_rate_limit_headers_are_in_the_schema(tmp_path: Path) -> None:
    schema: dict[str, Any] = create_app(make_settings(tmp_path)).openapi()
    responses = schema["paths"]["/api/v1/submissions"]["post"]["responses"]
    for status in ("202", "200", "429"):
        assert {"RateLimit-Remaining", "X-RateLimit-Remaining"} <= set(responses[status]["headers"])


def test_a_full_queue_with_no_live_node_says_so(tmp_path: Path) -> None:
    store = Store(sqlite_url(tmp_path / "judge.sqlite3"))
    store.migrate()
    try:
        store.create(NewSubmission(problem=FIXTURE_SLUG, code="x", manifest={}))
        slots = [0]
        dispatcher = CeleryDispatcher(store, None, None, queue_size=1, slots=lambda: slots[0])  # type: ignore[arg-type]
        with pytest.raises(QueueFull) as none_alive:
            dispatcher.reserve()
        assert none_alive.value.retry_after == NO_NODE_RETRY_S
        assert "no grading node is alive" in str(none_alive.value)
        slots[0] = 4
        with pytest.raises(QueueFull) as draining:
            dispatcher.reserve()
        assert "no grading node" not in str(draining.value) and 1 <= draining.value.retry_after <= 600
    finally:
        store.close()


def test_readyz_says_whether_submissions_get_graded(tmp_path: Path) -> None:
    with running(make_settings(tmp_path), backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        body = client.get("/readyz").json()
    assert body["ready"] and body["submissions_ready"] and body["submissions_reason"] is None
