"""The grading engine as one object: what the CLI, the REST service and grading workers all call.

    engine = Engine(backend, workers=2)          # warm tracers (forked) and executors, in the background
    engine.wait_ready(60)                        # optional: block until the pool is full
    result = engine.grade(problem, code)         # Submit: every public and hidden case
    result = engine.run(problem, code)           # Run: the public examples
    result = engine.run(problem, code, {"grads": {...}, "max_norm": 1.0})   # Run: one custom case
    engine.close()

``on_case`` (optional) is called with each case's result, in case order, as soon as it is known (while the
grading runs, from the grading thread), so a caller can stream progress; hidden cases carry verdict and
message only, exactly as in the final result.
Bad custom inputs raise ``judge.core.errors.InputError`` naming the argument and JSON path, before any sandbox
work. Every other failure of user code is a verdict inside the result; the judge's own failures raise
``JudgeError`` or ``SandboxError``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from judge.core.grader import ProgressCallback, grade
from judge.core.problems import Problem
from judge.core.progress import RunProgress, warmup_of
from judge.core.results import CaseResult, GradeResult
from sandbox.backends.base import Backend, GradingProcesses
from sandbox.errors import Cancelled
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import GradingPool
from sandbox.session.starts import STALL_FACTOR

CaseCallback = Callable[[CaseResult], None]

#: The sub-pools of a ``GradingPool`` whose starts ``warming`` describes.
_POOLS = ("tracers", "executors")
#: Seconds without any progress (no start advanced or admitted at the host's start gate, no worker handed out
#: or back) after which ``grade``/``run`` give up waiting for a warm pair, with the pool's reason. A wait that
#: keeps progressing is never cut short, however long the queue
#: (``sandbox.session.pool.ProcessPool.acquire``).
ACQUIRE_STALL_S = STALL_FACTOR * SandboxLimits().startup_time_s
#: Seconds between looks at the pool while a Run waits for a warm pair.
WARM_POLL_S = 0.5


def _waited(progress: RunProgress, seconds: float) -> RunProgress:
    """``progress`` (of phase ``waiting``) with the whole ``seconds`` the Run has waited so far."""
    if progress.warmup is None:
        return progress
    return progress.model_copy(
        update={"warmup": progress.warmup.model_copy(update={"waited_s": int(seconds)})}
    )


class Engine:
    """Grades through one warm pool of tracer + executor pairs. Thread-safe; one instance per process.

    ``workers`` pairs are kept warm (default: the CPU count); a caller that wants capacity reserved for Run
    builds its engine with more workers than it lets submissions use at once.
    """

    def __init__(self, backend: Backend, *, workers: int | None = None, slot_base: int = 0) -> None:
        self.backend = backend
        self.pool = GradingPool(backend, SandboxLimits(), size=workers, slot_base=slot_base)

    @property
    def size(self) -> int:
        """How many gradings can run at once without waiting for a worker to start."""
        return self.pool.size

    def _source(self, limits: SandboxLimits) -> GradingProcesses:
        return self.pool.acquire(ACQUIRE_STALL_S, limits=limits)

    def grade(self, problem: Problem, code: str, *, on_case: CaseCallback | None = None) -> GradeResult:
        """Submit: grade ``code`` on every public and hidden case of ``problem``."""
        return grade(problem, code, self._source, on_case=on_case)

    def run(
        self,
        problem: Problem,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        dtype: str | None = None,
        on_case: CaseCallback | None = None,
        on_progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> GradeResult:
        """Run: the public examples, or one custom case built from Run-panel JSON ``inputs`` (its float
        leaves ``dtype``, one the problem allows; default its Run-panel dtype).

        ``on_progress`` gets the phase (``judge.core.progress``): ``waiting`` with the pools' start status (in
        words and as fields, ``warming``) while no warm pair is ready (the judge is still warming up), then
        what the workers do. ``cancel``, once set, stops the Run (waiting or in the sandbox, whose workers
        are then replaced) and raises ``sandbox.errors.Cancelled``.

        Raises InputError (argument and JSON path named) when an input is malformed or breaks the
        problem's constraints, or when the problem does not allow ``dtype``.
        """
        custom = () if inputs is None else (problem.custom_case(dict(inputs), dtype=dtype),)
        cases = problem.public_cases if inputs is None else ()
        self._wait_warm(on_progress, cancel)
        return grade(
            problem,
            code,
            self._source,
            cases=cases,
            custom=custom,
            on_case=on_case,
            on_progress=on_progress,
            cancel=cancel,
        )

    def _wait_warm(self, on_progress: ProgressCallback | None, cancel: threading.Event | None) -> None:
        """While no warm pair is ready, tell ``on_progress`` why (every second, as it changes) and stop
        waiting when ``cancel`` is set; as long as the pools progress (once they stood still for
        ``ACQUIRE_STALL_S``, the acquire itself fails with their reason)."""
        if on_progress is None and cancel is None:
            return
        began = time.monotonic()
        told = None
        while (now := self.warming()) is not None and self.quiet_s() < ACQUIRE_STALL_S:
            if cancel is not None and cancel.is_set():
                raise Cancelled("the Run was cancelled while the judge warmed up")
            if on_progress is not None and now != told:
                on_progress(_waited(now, time.monotonic() - began))
                told = now
            if cancel is not None:
                cancel.wait(WARM_POLL_S)
            else:
                time.sleep(WARM_POLL_S)

    def warming(self) -> RunProgress | None:
        """None when a grading can start now (a warm tracer and a warm executor are ready), else the
        ``waiting`` progress: what each pool is doing (starts under way and for how long, starts waiting for
        the host's start gate, a backoff after failed starts) and the last start error, in words for an
        operator (``detail``) and as fields (``warmup``)."""
        stats = self.pool.stats()
        if stats["idle"]:
            return None
        states = {
            name: pool.start_state()
            for name in _POOLS
            if (pool := getattr(self.pool, name, None)) is not None
        }
        doing = [f"{name}: {text}" for name, state in states.items() if state and (text := state.describe())]
        error = stats["last_error"]
        if doing:
            detail = f"warm sandbox workers are starting ({'; '.join(doing)})"
        else:
            detail = (
                f"no warm sandbox pair is ready ({error})" if error else "warm sandbox workers are starting"
            )
        warmup = warmup_of(states.values(), str(error) if error else None)
        return RunProgress(phase="waiting", detail=detail, warmup=warmup)

    def warm_within(self, seconds: float) -> RunProgress | None:
        """None once a grading can start (waiting at most ``seconds`` for that), else the ``waiting``
        progress: where the warm-up stands and its estimate, returned as soon as the estimate says the wait
        would outlast ``seconds`` (a caller that must answer promptly, the non-streamed Run, then says when
        to come back instead of waiting)."""
        deadline = time.monotonic() + seconds
        while (now := self.warming()) is not None:
            left = deadline - time.monotonic()
            estimate = now.warmup.estimate_s if now.warmup is not None else None
            if left <= 0 or (estimate is not None and estimate > left):
                return now
            time.sleep(min(WARM_POLL_S, max(0.0, deadline - time.monotonic())))
        return None

    def quiet_s(self) -> float:
        """Seconds since the pools that are still filling last progressed (0 when every pool is full)."""
        return self.pool.quiet_s()

    def readiness(self) -> str | None:
        """None when a grading can start now, else why not, in words (``warming``'s ``detail``)."""
        warming = self.warming()
        return None if warming is None else warming.detail

    def wait_ready(self, timeout: float) -> bool:
        return self.pool.wait_full(timeout)

    def stats(self) -> dict[str, int | str | None]:
        return self.pool.stats()

    def close(self) -> None:
        """Kill every worker and the backend's zygote. Idempotent."""
        self.pool.close()
        self.backend.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
