"""Prometheus metrics of one service instance (its own registry, so several apps can live in one process).

judge_queue_depth                       submissions waiting to be graded
judge_gradings_running                  submissions being graded now
judge_runs_running                      Run requests being graded now
judge_workers_idle                      warm sandbox workers ready now
judge_grading_seconds                   histogram: one submission's grading
judge_run_seconds                       histogram: one Run (examples or custom case)
judge_verdicts_total{kind,verdict}      kind = submission | run
judge_sandbox_start_failures_total      workers that failed to start or to become ready
judge_sandbox_start_seconds             histogram: a worker's start to its ready (wall time; slow starts)
judge_rejected_total{reason}            429s: rate_limit | queue_full | run_busy
judge_submissions_failed_total          submissions the judge gave up on (status failed)
judge_queue_wait_seconds                histogram: created -> first claimed (queue wait)
judge_oldest_queued_seconds             age of the oldest queued submission (0: none queued)
judge_grading_nodes{state}              live | lost grading nodes (the service itself when local)
judge_requeues_total{reason}            queued again: retry | capacity | version | lost | broker | retried
                                        | stale
judge_callback_failures_total{final}    failed callback tries; final="true" when it was given up on
judge_http_request_seconds{method,route,status}   histogram: HTTP requests by route template
judge_deferred_total                    claims put off: the owner had gradings_per_client running
judge_problem_versions_mismatched       problems served in more than one version (live nodes, this API)
judge_dependency_down{dependency}       1 while a dependency does not answer and the service runs degraded
                                        (rate_limit_storage | queue_url | database_url: the setting naming it)
judge_dependency_outages_total{dependency}   outages of a dependency, counted when each begins
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from sandbox.backends.base import Backend, Protection, SandboxedProcess, SlotBusy, WarmUp
from sandbox.host.resource_limits import SandboxLimits


class Watched(Protocol):
    """A dependency the service can run without for a while (``judge.service.degraded.Fallback``)."""

    dependency: str
    #: Called with (dependency, down) at each change of state.
    listeners: list[Callable[[str, bool], None]]

    @property
    def down(self) -> bool: ...


_WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
_HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_LATENCY_BUCKETS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 20.0, 30.0, 60.0, 120.0)
#: A start on a quiet host takes ~1-3 s; tens of seconds mean a starved host (the start gate's queue, load).
_START_BUCKETS = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.queue_depth = Gauge("judge_queue_depth", "Submissions waiting to be graded.", registry=r)
        self.gradings_running = Gauge("judge_gradings_running", "Submissions being graded now.", registry=r)
        self.runs_running = Gauge("judge_runs_running", "Run requests being graded now.", registry=r)
        self.workers_idle = Gauge("judge_workers_idle", "Warm sandbox workers ready now.", registry=r)
        self.grading_seconds = Histogram(
            "judge_grading_seconds", "Grading time of one submission.", buckets=_LATENCY_BUCKETS, registry=r
        )
        self.run_seconds = Histogram(
            "judge_run_seconds", "Time of one Run request's grading.", buckets=_LATENCY_BUCKETS, registry=r
        )
        self.verdicts = Counter(
            "judge_verdicts", "Verdicts given, by kind (submission or run).", ["kind", "verdict"], registry=r
        )
        self.sandbox_start_failures = Counter(
            "judge_sandbox_start_failures",
            "Sandbox workers that failed to start or become ready.",
            registry=r,
        )
        self.sandbox_start_seconds = Histogram(
            "judge_sandbox_start_seconds",
            "Wall time from a sandbox worker's start to its ready (slow or starved starts).",
            buckets=_START_BUCKETS,
            registry=r,
        )
        self.rejected = Counter(
            "judge_rejected", "Requests refused with 429, by reason.", ["reason"], registry=r
        )
        self.submissions_failed = Counter(
            "judge_submissions_failed", "Submissions the judge could not grade (status failed).", registry=r
        )
        self.queue_wait = Histogram(
            "judge_queue_wait_seconds",
            "Seconds from a submission's creation to its first claim by a grader.",
            buckets=_WAIT_BUCKETS,
            registry=r,
        )
        self.oldest_queued = Gauge(
            "judge_oldest_queued_seconds", "Age of the oldest queued submission (0: none).", registry=r
        )
        self.grading_nodes = Gauge(
            "judge_grading_nodes", "Grading nodes, live or lost.", ["state"], registry=r
        )
        self.requeues = Counter(
            "judge_requeues", "Submissions queued again, by reason.", ["reason"], registry=r
        )
        self.callback_failures = Counter(
            "judge_callback_failures",
            "Callback tries that failed; final=true when the callback was given up on.",
            ["final"],
            registry=r,
        )
        self.deferred = Counter(
            "judge_deferred",
            "Claims put off because the owner already had gradings_per_client gradings running.",
            registry=r,
        )
        self.versions_mismatched = Gauge(
            "judge_problem_versions_mismatched",
            "Problems that the live grading nodes and this API node serve in more than one version.",
            registry=r,
        )
        self.http_seconds = Histogram(
            "judge_http_request_seconds",
            "HTTP requests by method, route template and status.",
            ["method", "route", "status"],
            buckets=_HTTP_BUCKETS,
            registry=r,
        )
        self.dependency_down = Gauge(
            "judge_dependency_down",
            "1 while a dependency (named by its setting) does not answer and the service runs degraded.",
            ["dependency"],
            registry=r,
        )
        self.dependency_outages = Counter(
            "judge_dependency_outages", "Outages of a dependency, counted when each begins.", ["dependency"],
            registry=r,
        )  # fmt: skip
        self._watched: list[Watched] = []

    def watch(self, fallback: Watched) -> None:
        """Show ``fallback``'s dependency in judge_dependency_down and count its outages."""
        self._watched.append(fallback)
        name = fallback.dependency
        self.dependency_down.labels(name).set_function(
            lambda: float(any(f.down for f in self._watched if f.dependency == name))
        )
        self.dependency_outages.labels(name)  # 0 until the first outage
        fallback.listeners.append(self._dependency_changed)

    def _dependency_changed(self, dependency: str, down: bool) -> None:
        if down:
            self.dependency_outages.labels(dependency).inc()

    def bind(
        self,
        depth: Callable[[], int],
        running: Callable[[], int],
        runs: Callable[[], int],
        idle: Callable[[], int],
    ) -> None:
        self.queue_depth.set_function(depth)
        self.gradings_running.set_function(running)
        self.runs_running.set_function(runs)
        self.workers_idle.set_function(idle)

    def bind_store(
        self,
        oldest_queued: Callable[[], float],
        live_nodes: Callable[[], int],
        lost_nodes: Callable[[], int],
        mismatched: Callable[[], int] = lambda: 0,
    ) -> None:
        """Gauges read from the database at each scrape (a failed read shows as NaN, never an error)."""
        self.oldest_queued.set_function(_safe(oldest_queued))
        self.versions_mismatched.set_function(_safe(mismatched))
        self.grading_nodes.labels("live").set_function(_safe(live_nodes))
        self.grading_nodes.labels("lost").set_function(_safe(lost_nodes))

    # judge.dispatch.GradingObserver
    def grading_started(self) -> None:
        pass

    def queue_waited(self, seconds: float) -> None:
        self.queue_wait.observe(max(0.0, seconds))

    def deferred_claim(self) -> None:
        self.deferred.inc()

    def requeued(self, reason: str, count: int = 1) -> None:
        self.requeues.labels(reason).inc(count)

    def callback_failed(self, final: bool) -> None:
        self.callback_failures.labels("true" if final else "false").inc()

    def grading_finished(self, verdict: str | None, seconds: float) -> None:
        self.grading_seconds.observe(seconds)
        if verdict is not None:
            self.verdicts.labels("submission", verdict).inc()

    def submission_failed(self) -> None:
        self.submissions_failed.inc()

    def run_finished(self, verdict: str, seconds: float) -> None:
        self.run_seconds.observe(seconds)
        self.verdicts.labels("run", verdict).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _safe(read: Callable[[], float]) -> Callable[[], float]:
    def value() -> float:
        try:
            return float(read())
        except Exception:  # the database is down: the gauge says "unknown", the scrape still works
            return float("nan")

    return value


def metered(
    backend: Backend,
    on_failure: Callable[[str], None],
    on_ready: Callable[[], None] = lambda: None,
    on_took: Callable[[float], None] = lambda _seconds: None,
) -> Backend:
    """``backend`` reporting every worker start (tracers, forked tracers and executors alike):
    ``on_failure(reason)`` when a start or ``wait_ready`` raises (a slot held by another process does not
    count), ``on_ready()`` when a worker became ready, and ``on_took(seconds)`` then with the wall seconds
    from its start to its ready."""
    inner = backend

    def watched(
        start: Callable[[SandboxLimits, int], SandboxedProcess], limits: SandboxLimits, slot: int
    ) -> SandboxedProcess:
        try:
            worker = start(limits, slot)
        except SlotBusy:  # another process holds the slot: not a failure
            raise
        except Exception as exc:
            on_failure(f"{type(exc).__name__}: {exc}")
            raise
        original = worker.wait_ready

        def wait_ready(timeout: float) -> dict[str, Any]:
            try:
                info = original(timeout)
            except Exception as exc:
                on_failure(f"{type(exc).__name__}: {exc}")
                raise
            on_ready()
            on_took(max(0.0, time.monotonic() - worker.started_at))
            return info

        worker.wait_ready = wait_ready  # type: ignore[method-assign]
        return worker

    class Metered(Backend):
        name = inner.name
        insecure = inner.insecure

        def available(self) -> str | None:
            return inner.available()

        def protections(self) -> list[Protection]:
            return inner.protections()

        def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
            return watched(inner.start_tracer, limits, slot)

        def fork_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
            return watched(inner.fork_tracer, limits, slot)

        def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
            return watched(inner.start_executor, limits, slot)

        def fork_executor(
            self, limits: SandboxLimits, slot: int = 0, warm_up: WarmUp = "tiny"
        ) -> SandboxedProcess:
            return watched(lambda lim, s: inner.fork_executor(lim, s, warm_up), limits, slot)

        def close(self) -> None:
            inner.close()

    Metered.__name__ = Metered.__qualname__ = f"Metered{type(inner).__name__}"
    return Metered()
