"""Operating the platform API: callbacks a platform can operate (delivery state and tries in the read, a
redeliver endpoint, a failure metric, a grader without callback settings says so) and metrics worth
alerting on (queue wait, oldest queued, grading nodes, requeues, callback failures, HTTP latency by
route)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from judge.store import CallbackState, NewSubmission
from sandbox.backends import get_backend
from tests.conftest import FIXTURE_SLUG
from tests.service_support import FakeEngine, make_settings, running
from tests.test_service_callbacks import Receiver, receivers  # noqa: F401  (the fixture)

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


def test_a_grader_without_callback_settings_says_so(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        # As a grading node without callback settings meets a submission an API node accepted with one.
        record = services.store.create(
            NewSubmission(
                problem=FIXTURE_SLUG,
                code=CODE,
                manifest={},
                callback_url="https://hooks.example/cb",
            )
        )
        assert services.worker.callbacks is None
        services.worker.process(record.id)
        stored = services.store.get(record.id)
        assert stored is not None and stored.callback_state is CallbackState.FAILED
        ((_, status, error, _),) = services.store.callback_attempts(record.id)
        assert status is None and error is not None and "has no callback settings" in error
        assert client.post(f"/api/v1/submissions/{record.id}/callback").status_code == 503


def test_metrics_worth_alerting_on(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    with running(settings, backend=PROCESS, engine=FakeEngine()) as (client, services):
        text = client.get("/metrics").text
        assert metric(text, "judge_oldest_queued_seconds") == 0
        assert metric(text, "judge_grading_nodes", '{state="live"}') == 1
        assert metric(text, "judge_grading_nodes", '{state="lost"}') == 0
        # A queued submission nobody takes (created directly in the store): its age shows.
        services.store.create(NewSubmission(problem=FIXTURE_SLUG, code=CODE, manifest={}))
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
