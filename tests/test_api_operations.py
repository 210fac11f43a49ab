"""Operating the platform API: callbacks a platform can operate (delivery state and tries in the read, a
redeliver endpoint, a failure metric, a grader without callback settings says so) and metrics worth
alerting on (queue wait, oldest queued, grading nodes, requeues, callback failures, HTTP latency by
route)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from judge.dispatch.callbacks import SIGNATURE_HEADER, CallbackSender, verify
from judge.dispatch.grading_loop import GradingLoop
from judge.store import CallbackState, NewSubmission
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running
from tests.test_service_callbacks import SECRET, Receiver, receivers  # noqa: F401  (the fixture)

CODE = "def scale_tree(tree, factor):\n    return tree\n"
PROCESS = get_backend("process")


def metric(text: str, name: str, labels: str = "") -> float:
    match = re.search(rf"^{re.escape(name)}{re.escape(labels)} (\S+)$", text, re.MULTILINE)
    assert match is not None, f"{name}{labels} not in /metrics"
    return float(match.group(1))


def wait_state(client: object, sid: str, state: str, timeout: float = 30) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(f"/api/v1/submissions/{sid}").json()  # type: ignore[attr-defined]
        if body["callback"]["state"] == state:
            return dict(body)
        time.sleep(0.05)
    raise AssertionError(f"callback of {sid} never became {state}")


def test_callback_state_tries_redelivery_and_failure_metric(
    tmp_path: Path,
    receivers: Callable[[list[int]], Receiver],  # noqa: F811  (the fixture of test_service_callbacks)
) -> None:
    receiver: Receiver = receivers([500, 500])  # the first delivery fails twice (given up), then 200s
    settings = make_settings(
        tmp_path,
        callback_hosts=[receiver.url.split("/")[2]],
        callback_secret="s3cret",
        callback_attempts=2,
        callback_backoff_s=0.05,
    )
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, _):
        body = {"problem": FIXTURE_SLUG, "code": CODE, "callback_url": receiver.url}
        sid = client.post("/api/v1/submissions", json=body).json()["id"]
        failed = wait_state(client, sid, "failed")
        tries = failed["callback"]["attempts"]  # type: ignore[index]
        assert [(t["attempt"], t["status_code"]) for t in tries] == [(1, 500), (2, 500)]
        text = client.get("/metrics").text
        assert metric(text, "judge_callback_failures_total", '{final="false"}') == 1
        assert metric(text, "judge_callback_failures_total", '{final="true"}') == 1
        again = client.post(f"/api/v1/submissions/{sid}/callback")
        assert again.status_code == 202
        delivered = wait_state(client, sid, "delivered")
        assert len(delivered["callback"]["attempts"]) == 3  # type: ignore[index]
        receiver.wait_for(3)
        plain = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}).json()["id"]
        refused = client.post(f"/api/v1/submissions/{plain}/callback")
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "no_callback"


def test_a_grader_without_callback_settings_hands_the_callback_off(tmp_path: Path) -> None:
    """A grader without callback settings leaves the callback pending with a note naming it (not failed);
    an API node's sender takes it exactly once, and gives up one left unsent past its deadline."""
    settings = make_settings(tmp_path)
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        # As a grading node without callback settings meets a submission an API node accepted with one.
        ids = [
            services.store.submissions.create(
                NewSubmission(
                    problem=FIXTURE_SLUG, code=CODE, manifest={}, callback_url="https://hooks.example/cb"
                )
            ).id
            for _ in range(2)
        ]
        assert services.worker.callbacks is None
        for sid in ids:
            services.worker.process(sid)
        stored = services.store.submissions.get(ids[0])
        assert stored is not None and stored.callback_state is CallbackState.HANDED_OFF
        ((attempt, status, error, _),) = services.store.callbacks.attempts(ids[0])
        assert attempt == 0 and status is None and error is not None
        assert "grading node local: it has no callback settings" in error and "left pending" in error
        read = client.get(f"/api/v1/submissions/{ids[0]}").json()["callback"]
        assert read["state"] == "pending" and read["attempts"][0]["attempt"] == 0
        assert client.post(f"/api/v1/submissions/{ids[0]}/callback").status_code == 503
        # Of two API nodes asking, one takes it.
        assert [services.store.callbacks.take(ids[0]) for _ in range(2)] == [True, False]
        # Past its deadline, a sender gives it up (failed, with a note) instead of sending it that late.
        sender = CallbackSender(
            services.store,
            secret=b"k",
            allowed_hosts=["hooks.example"],
            render=lambda record: b"{}",
            handoff_max_s=0,
        )
        try:
            time.sleep(0.01)
            assert sender.poll() == 1 and sender.pending() == 0
        finally:
            sender.close()
        late = services.store.submissions.get(ids[1])
        assert late is not None and late.callback_state is CallbackState.FAILED
        assert "left unsent" in (services.store.callbacks.attempts(ids[1])[-1][2] or "")


def test_an_api_node_sends_the_callback_a_grader_without_settings_could_not(
    tmp_path: Path,
    receivers: Callable[[list[int]], Receiver],  # noqa: F811  (the fixture of test_service_callbacks)
) -> None:
    receiver: Receiver = receivers([])
    settings = make_settings(
        tmp_path,
        callback_hosts=[receiver.url.split("/")[2]],
        callback_secret=SECRET,
        callback_poll_s=0.1,
    )
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        assert services.callbacks is not None and services.callbacks.poll_s == 0.1
        record = services.store.submissions.create(
            NewSubmission(problem=FIXTURE_SLUG, code=CODE, manifest={}, callback_url=receiver.url)
        )
        # A grading node without callback settings (sharing the API node's store) grades it.
        grader = GradingLoop(
            services.store,
            services.engine,
            services.catalog.problems,
            services.feed,
            backend_name="process",
            node="grader-1",
        )
        assert grader.process(record.id) is not None
        receiver.wait_for(1)
        delivered = wait_state(client, record.id, "delivered")
        time.sleep(0.5)  # several more polls: nothing is sent twice
        assert len(receiver.requests) == 1
        headers, body, _ = receiver.requests[0]
        assert verify(
            SECRET.encode(),
            body,
            headers[SIGNATURE_HEADER],
            timestamp=headers["X-Judge-Timestamp"],
            delivery=headers["X-Judge-Delivery"],
        )
        assert json.loads(body)["id"] == record.id and json.loads(body)["status"] == "done"
        assert headers["X-Judge-Delivery-Attempt"] == "1"
        tries = delivered["callback"]["attempts"]  # type: ignore[index]
        assert [(t["attempt"], t["status_code"]) for t in tries] == [(0, None), (1, 200)]
        assert "grading node grader-1" in tries[0]["error"]


def test_metrics_worth_alerting_on(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        text = client.get("/metrics").text
        assert metric(text, "judge_oldest_queued_seconds") == 0
        assert metric(text, "judge_grading_nodes", '{state="live"}') == 1
        assert metric(text, "judge_grading_nodes", '{state="lost"}') == 0
        # A queued submission nobody takes (created directly in the store): its age shows.
        services.store.submissions.create(NewSubmission(problem=FIXTURE_SLUG, code=CODE, manifest={}))
        time.sleep(0.3)
        assert metric(client.get("/metrics").text, "judge_oldest_queued_seconds") >= 0.25
        sid = client.post("/api/v1/submissions", json={"problem": FIXTURE_SLUG, "code": CODE}).json()["id"]
        client.get(f"/api/v1/submissions/{sid}?wait=30")
        client.get("/api/v1/submissions/00000000-0000-0000-0000-000000000000")
        text = client.get("/metrics").text
        assert metric(text, "judge_queue_wait_seconds_count") >= 1
        route = '{method="GET",route="/api/v1/submissions/{submission_id}",status="404"}'
        assert metric(text, "judge_http_request_seconds_count", route) == 1
        assert metric(text, "judge_http_request_seconds_count", route.replace("404", "200")) == 1
        services.metrics.requeued("lost", 2)  # what the sweeper reports (tests/test_api_distributed.py)
        assert metric(client.get("/metrics").text, "judge_requeues_total", '{reason="lost"}') == 2
