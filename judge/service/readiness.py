"""Whether the service is ready (``/readyz``), and its warm-up: the problems prepared, the sandbox
self-test passed, the first warm workers up; afterwards, the database and the queue's broker answering,
and sandbox starts not failing.

    starts = SandboxStarts(metrics)      what the metered backend reports of each sandbox start
    health = Readiness(...)              from the service's parts
    health.warm_up(prepare)              the warm-up thread's body (until ready or stopped)
    health.readiness()                   None when ready, else why not
    health.run_busy()                    why no Run could start now, or None
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from judge.core.doctor import SelfTest
from judge.dispatch.celery_queue import CeleryDispatcher
from judge.dispatch.metrics import Metrics
from judge.service.degraded import Fallback
from judge.service.gate import RunGate
from judge.service.grading_engine import GradingEngine
from judge.store import Store
from sandbox.backends.base import Backend

log = logging.getLogger(__name__)

#: Seconds between self-test attempts while it keeps failing.
SELF_TEST_RETRY_S = 30.0


class SandboxStarts:
    """The outcome of the latest sandbox starts (``judge.dispatch.metrics.metered`` calls these)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.failed_at = 0.0
        self.ok_at = 0.0
        self.error = ""

    def failed(self, reason: str) -> None:
        self.metrics.sandbox_start_failures.inc()
        self.failed_at = time.monotonic()
        self.error = reason[:300]

    def ok(self) -> None:
        self.ok_at = time.monotonic()

    def took(self, seconds: float) -> None:
        self.metrics.sandbox_start_seconds.observe(seconds)


class Readiness:
    def __init__(
        self,
        *,
        engine: GradingEngine,
        backend: Backend,
        backend_name: str,
        sandbox_check: Callable[[Backend], SelfTest],
        starts: SandboxStarts,
        store: Store,
        database: Fallback,
        queue: CeleryDispatcher | None,
        broker: Fallback | None,
        run_gate: RunGate,
        stop: threading.Event,
    ) -> None:
        self.engine = engine
        self.backend = backend
        self.backend_name = backend_name
        self._sandbox_check = sandbox_check
        self.starts = starts
        self.store = store
        self.database = database
        self.queue = queue
        self.broker = broker
        self.run_gate = run_gate
        self._stop = stop
        self._self_test: str | None = "the sandbox self-test has not run yet"
        self._prepared: str | None = "the problems are being prepared"
        self._warm: str | None = "the warm sandbox workers are starting"

    def warm_up(self, prepare: Callable[[], None]) -> None:
        """Prepare the problems (``prepare``), pass the sandbox self-test (retried while it fails), wait
        for a warm worker; each step's failure is what ``readiness`` says."""
        try:
            prepare()
            self._prepared = None
        except Exception as exc:  # a broken reference: say so in /readyz, keep serving what works
            log.exception("preparing the problems failed")
            self._prepared = f"preparing the problems failed ({type(exc).__name__})"
        while not self._stop.is_set():
            # self_test leaves the backend open: the warm pool forks its tracers from its zygote.
            result = self._sandbox_check(self.backend)
            if result.ok:
                self._self_test = None
                log.info("sandbox self-test passed in %.0f ms (%s)", result.elapsed_ms, self.backend_name)
                break

            self._self_test = f"the sandbox self-test failed: {result.message[:300]}"
            log.error("%s", self._self_test)
            self._stop.wait(SELF_TEST_RETRY_S)
        while not self._stop.is_set() and self._warm is not None:
            if self.engine.readiness() is None:  # a warm worker is ready
                self._warm = None
            else:
                self._stop.wait(0.1)

    def readiness(self) -> str | None:
        """None when ready, else the reason: the problems are prepared, the sandbox self-test passed and
        warm workers came up; afterwards, not ready while no worker is idle because starting them fails
        (all workers merely busy is still ready: Run has its reserve, submissions queue)."""
        # While the first warm workers come up, the engine says what its starts are doing (on a busy host
        # they are slow, not failed: /readyz says so instead of a fixed sentence).
        warm = None if self._warm is None else (self.engine.readiness() or self._warm)
        checks = (self._prepared, self._self_test, warm, self.database_status(), self.queue_status())
        for reason in checks:
            if reason is not None and reason != "ok":
                return reason
        idle = self.engine.stats().get("idle")
        if not idle and self.starts.failed_at > self.starts.ok_at:
            return f"no warm sandbox worker: starting one failed ({self.starts.error})"
        return None

    def run_busy(self) -> str | None:
        """Why no Run could start now (every Run place taken, or no warm sandbox pair free: a Run would
        wait or be told to come back), or None when one could."""
        capacity = max(1, self.run_gate.capacity())
        active, waiting = self.run_gate.active, self.run_gate.waiting
        if active >= capacity:
            return f"busy: {active} Runs running and {waiting} waiting ({capacity} at once now)"
        warming = self.engine.warming()
        if warming is not None:
            return f"busy: no warm sandbox pair is free now ({warming.detail})"
        return None

    def database_status(self) -> str:
        """``ok``, or why the database does not answer."""
        try:
            self.store.ping()
        except Exception as exc:
            self.database.failed(exc)
            return f"the database is unreachable ({type(exc).__name__})"
        self.database.succeeded()
        return "ok"

    def queue_status(self) -> str | None:
        """``ok`` or why the grading queue's broker does not answer; None with in-process dispatch."""
        if self.queue is None:
            return None
        reason = self.queue.readiness()
        if self.broker is not None:
            if reason is None:
                self.broker.succeeded()
            else:
                self.broker.failed(ConnectionError(reason))
        return reason or "ok"

    def wait_ready(self, timeout: float) -> bool:
        """Block until ready (tests, the smoke run, benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.readiness() is None:
                return True
            time.sleep(0.05)
        return self.readiness() is None
