"""A Run answers, or says promptly where it stands: a non-streamed Run that finds no warm sandbox pair, and
whose warm-up estimate is longer than it may wait, gets ``503 warming_up`` with the warm-up's state and an
honest ``Retry-After`` (its estimate) at once, not after a minute of waiting; ``/readyz`` says ``busy``
when no Run could start now; the warm-up
fields carry the queue ahead at the host's start gate and an estimate."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import judge.service.routes.runs as runs
from judge.core.engine import Engine
from judge.core.progress import RunProgress, WarmupProgress, estimate_s, warmup_of
from judge.core.settings import Settings
from sandbox.backends import get_backend
from sandbox.session.starts import StartProgress, StartState
from tests.conftest import FIXTURE_SLUG
from tests.fakes import FakeEngine
from tests.service_support import make_settings, running

CODE = "def scale_tree(tree, factor):\n    return tree\n"
RUN = f"/api/v1/problems/{FIXTURE_SLUG}/run"


class _Cold(FakeEngine):
    """No warm pair: two starts under way, three of other judges queued ahead, ready in about 12 s."""

    WAITING = RunProgress(
        phase="waiting",
        detail="operator's words",
        warmup=WarmupProgress(starting=2, queued=1, ahead=3, estimate_s=12),
    )

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def warm_within(self, seconds: float) -> RunProgress | None:
        self.asked.append(seconds)
        return self.WAITING

    def warming(self) -> RunProgress | None:
        return self.WAITING


def _settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


def test_a_run_with_no_warm_pair_is_told_when_to_come_back(tmp_path: Path) -> None:
    engine = _Cold()
    with running(_settings(tmp_path), backend=get_backend("process"), engine=engine) as (client, _):
        began = time.monotonic()
        answer = client.post(RUN, json={"code": CODE})
        took = time.monotonic() - began
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "12"
    error = answer.json()["error"]
    assert error["code"] == "warming_up"
    assert "2 starting" in error["message"] and "3 starts of other judges queued ahead" in error["message"]
    assert "about 12 s" in error["message"]
    assert engine.asked == [runs.RUN_WARM_WAIT_S]
    assert took < 10
    assert engine.graded == []


def test_a_run_with_a_warm_pair_is_answered(tmp_path: Path) -> None:
    with running(_settings(tmp_path), backend=get_backend("process"), engine=FakeEngine()) as (client, _):
        answer = client.post(RUN, json={"code": CODE})
        ready = client.get("/readyz").json()
    assert answer.status_code == 200, answer.text
    assert ready["ready"] and ready["runs"] == "ready" and ready["runs_reason"] is None


def test_readyz_says_busy_when_no_run_could_start_now(tmp_path: Path) -> None:
    with running(_settings(tmp_path), backend=get_backend("process"), engine=_Cold()) as (client, _):
        answer = client.get("/readyz")
    body = answer.json()
    assert answer.status_code == 200 and body["ready"] is True and body["reason"] is None
    assert body["runs"] == "busy"
    assert body["runs_reason"].startswith("busy: no warm sandbox pair is free now (operator's words)")


class _Warming(FakeEngine):
    """Warming up: the warm-up says ``estimates`` in turn (one a look), then a pair is ready."""

    def __init__(self, *estimates: int | None) -> None:
        super().__init__()
        self.estimates = list(estimates)

    def warming(self) -> RunProgress | None:
        if not self.estimates:
            return None
        return RunProgress(
            phase="waiting", warmup=WarmupProgress(starting=1, estimate_s=self.estimates.pop(0))
        )


def test_a_short_warm_up_is_waited_for_and_a_long_one_is_said_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("judge.core.engine.WARM_POLL_S", 0.01)
    assert Engine.warm_within(_Warming(3, 2, 1), 30.0) is None  # type: ignore[arg-type]
    began = time.monotonic()
    long = Engine.warm_within(_Warming(120, 1), 30.0)  # type: ignore[arg-type]
    assert long is not None and long.warmup is not None and long.warmup.estimate_s == 120
    assert time.monotonic() - began < 1
    unknown = Engine.warm_within(_Warming(*[None] * 1000), 0.2)  # type: ignore[arg-type]
    assert unknown is not None and unknown.warmup is not None and unknown.warmup.estimate_s is None


def test_the_warmup_estimate_counts_the_queue_ahead_in_rounds_of_the_gate() -> None:
    gated = StartState(gated=1, gate_limit=2, queue_ahead=3, typical_s=10.0)
    assert estimate_s(gated) == 20.0  # 3 ahead and this one: two rounds of two places
    starting = StartState(starting=1, oldest=StartProgress(4.0, 1.0, 0.0), typical_s=10.0)
    assert estimate_s(starting) == 6.0
    assert estimate_s(StartState(gated=1, gate_limit=2)) is None  # nothing to estimate from yet
    warmup = warmup_of([gated, starting, None], None)
    assert warmup.ahead == 3 and warmup.estimate_s == 20 and warmup.queued == 1 and warmup.starting == 1
    assert warmup_of([gated, StartState(gated=1, gate_limit=2)], None).estimate_s is None


@pytest.mark.parametrize("retry", [3.2])
def test_a_backoff_is_part_of_the_estimate(retry: float) -> None:
    state = StartState(failures=1, retry_in_s=retry, gate_limit=2, typical_s=5.0)
    assert estimate_s(state) == pytest.approx(retry + 5.0)
