"""The judge's warm-up as fields (issue 24): each pool's ``StartState``, their sum in a Run's ``waiting``
progress (``judge.core.progress.WarmupProgress``) and its place in the API's schema. The page words the fields
(web/src/phase.js, tested in web/test/phase.test.mjs); the operator's sentence (``detail``, ``/readyz``) is
built from the same state and says what it always said. No sandbox: fake pools hold the states.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from judge.core.engine import ACQUIRE_STALL_S, Engine
from judge.core.progress import RunProgress, WarmupProgress, warmup_of
from judge.service.app import create_app
from sandbox.errors import Cancelled
from sandbox.session.starts import StartProgress, StartState
from tests.service_support import make_settings

# ------------------------------------------------------------------------------------------ one pool


def test_a_start_state_in_words_is_the_operators_status() -> None:
    state = StartState(
        starting=2,
        oldest=StartProgress(wall_s=3.2, cpu_s=1.25, idle_s=0.0),
        gated=1,
        gate_limit=2,
        failures=2,
        retry_in_s=3.6,
        last_error="OSError: [Errno 12]",
    )
    assert state.describe() == (
        "2 starting (the oldest for 3 s, 1.2 s of CPU); 1 waiting for a place at the host's start gate "
        "(2 at once); next start in 4 s after 2 failed start(s): OSError: [Errno 12]"
    )
    assert StartState(starting=1, oldest=StartProgress(0.4, None, 0.4)).describe() == (
        "1 starting (the oldest for 0 s)"
    )
    # Failures with no backoff under way (the retry has begun) say nothing of them.
    assert StartState(failures=3, last_error="boom").describe() == ""


def test_a_start_state_is_frozen() -> None:
    state = StartState(starting=1)
    with pytest.raises(AttributeError):
        state.starting = 2  # type: ignore[misc]


# ------------------------------------------------------------------------------------------ every pool


def test_the_warm_up_sums_the_pools_and_keeps_no_error_text() -> None:
    states = [
        StartState(starting=2, oldest=StartProgress(3.0, 1.0, 0.0)),
        None,  # a full pool
        StartState(starting=1, gated=3, gate_limit=2),
    ]
    assert warmup_of(states, "RuntimeError: cgroup") == WarmupProgress(starting=3, queued=3)
    retrying = [
        StartState(failures=2, retry_in_s=4.2, last_error="OSError: secret path"),
        StartState(failures=1, retry_in_s=0.3, last_error="x"),
        StartState(starting=1),
    ]
    warmup = warmup_of(retrying, "OSError: secret path")
    # The soonest retry, in whole seconds rounded up (never "in 0 s"); the failures of the pools retrying.
    assert warmup == WarmupProgress(starting=1, failed_starts=3, retry_in_s=1)
    assert "secret path" not in warmup.model_dump_json()


def test_the_last_start_failed_only_when_nothing_is_under_way() -> None:
    assert warmup_of([StartState(failures=1, last_error="boom"), None], "boom").start_failed
    assert not warmup_of([StartState(gated=1, last_error="boom")], "boom").start_failed
    assert not warmup_of([StartState()], None).start_failed
    assert warmup_of([], None) == WarmupProgress()


# ------------------------------------------------------------------------------------------ the engine


class _Pool:
    """What ``Engine.warming`` reads of a ``GradingPool``: stats and each sub-pool's start state."""

    def __init__(self, idle: int = 0, last_error: str | None = None, **states: StartState | None) -> None:
        self.idle, self.last_error = idle, last_error
        self.tracers, self.executors = (_Sub(states.get(n)) for n in _NAMES)

    def stats(self) -> dict[str, Any]:
        return {"idle": self.idle, "last_error": self.last_error}


_NAMES = ("tracers", "executors")


class _Sub:
    def __init__(self, state: StartState | None) -> None:
        self.state = state

    def start_state(self) -> StartState | None:
        return self.state


def _engine(pool: _Pool) -> Engine:
    engine = Engine.__new__(Engine)  # no backend, no pool threads: only the warm-up is read
    engine.pool = pool  # type: ignore[assignment]
    return engine


def test_the_engine_says_the_warm_up_in_words_and_as_fields() -> None:
    pool = _Pool(
        tracers=StartState(starting=2, oldest=StartProgress(3.0, 1.2, 0.0)),
        executors=StartState(gated=1, gate_limit=2),
    )
    warming = _engine(pool).warming()
    assert warming is not None and warming.phase == "waiting"
    assert warming.detail == (
        "warm sandbox workers are starting (tracers: 2 starting (the oldest for 3 s, 1.2 s of CPU); "
        "executors: 1 waiting for a place at the host's start gate (2 at once))"
    )
    assert warming.warmup == WarmupProgress(starting=2, queued=1)
    assert _engine(pool).readiness() == warming.detail

    failed = _engine(_Pool(last_error="RuntimeError: cgroup", tracers=StartState(failures=1)))
    assert failed.readiness() == "no warm sandbox pair is ready (RuntimeError: cgroup)"
    warmup = failed.warming().warmup  # type: ignore[union-attr]
    assert warmup == WarmupProgress(failed_starts=0, start_failed=True)

    assert _engine(_Pool()).readiness() == "warm sandbox workers are starting"
    assert _engine(_Pool(idle=1, tracers=StartState(starting=1))).warming() is None


class _Script(Engine):
    """Reports the warm-up states of ``script`` in turn, one a poll, then ready."""

    def __init__(self, *script: WarmupProgress, quiet_s: float = 0.0) -> None:
        self.script = list(script)
        self.quiet = quiet_s

    def quiet_s(self) -> float:
        return self.quiet

    def warming(self) -> RunProgress | None:
        if not self.script:
            return None
        return RunProgress(phase="waiting", detail="reworded at will", warmup=self.script.pop(0))


def test_a_waiting_run_is_told_each_change_with_the_seconds_waited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("judge.core.engine.WARM_POLL_S", 0.4)
    told: list[RunProgress] = []
    two, retry = WarmupProgress(starting=2), WarmupProgress(failed_starts=1, retry_in_s=3)
    _Script(two, two, retry)._wait_warm(told.append, None)
    assert [p.warmup.model_copy(update={"waited_s": 0}) for p in told if p.warmup] == [two, retry]
    assert told[0].warmup is not None and told[0].warmup.waited_s == 0  # whole seconds, at once
    slow: list[RunProgress] = []
    _Script(two, two, two, retry)._wait_warm(slow.append, None)
    assert slow[-1].warmup is not None and slow[-1].warmup.waited_s >= 1  # sent after 3 polls of 0.4 s


def test_a_waiting_run_stops_reporting_once_the_pools_stood_still(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the no-progress bound the wait ends (the acquire then fails with the pools' reason); a wait
    whose pools progress goes on however long (the test above)."""
    monkeypatch.setattr("judge.core.engine.WARM_POLL_S", 0.01)
    told: list[RunProgress] = []
    started = time.monotonic()
    _Script(*[WarmupProgress(starting=1)] * 100, quiet_s=ACQUIRE_STALL_S)._wait_warm(told.append, None)
    assert told == [] and time.monotonic() - started < 1.0


def test_a_waiting_run_stops_when_cancelled() -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        _Script(*[WarmupProgress(starting=1)] * 100)._wait_warm(None, cancel)
    assert time.monotonic() - started < 2.0


# ------------------------------------------------------------------------------------------ the API


def test_the_progress_event_declares_its_warm_up_fields(tmp_path: Path) -> None:
    schema = create_app(make_settings(tmp_path)).openapi()
    components = schema["components"]["schemas"]
    progress = components["RunProgress"]["properties"]
    assert {"phase", "detail", "warmup"} <= set(progress)
    refs = [option.get("$ref", "") for option in progress["warmup"].get("anyOf", [])]
    assert "#/components/schemas/WarmupProgress" in refs, progress["warmup"]
    fields = components["WarmupProgress"]["properties"]
    assert set(fields) == {
        "starting",
        "queued",
        "failed_starts",
        "retry_in_s",
        "start_failed",
        "waited_s",
        "ahead",
        "estimate_s",
    }
    assert all(field.get("description") for field in fields.values())
    event = RunProgress(phase="waiting", detail="d", warmup=WarmupProgress(starting=1, waited_s=4))
    dumped = event.model_dump()
    assert dumped["warmup"] == {
        "starting": 1,
        "queued": 0,
        "failed_starts": 0,
        "retry_in_s": None,
        "start_failed": False,
        "waited_s": 4,
        "ahead": 0,
        "estimate_s": None,
    }
    assert RunProgress(phase="tracing").model_dump()["warmup"] is None
