"""``judge worker``: a grading node of the distributed queue (``judge.dispatch.celery_queue``).

One node = one process: a warm sandbox pool of ``concurrency`` workers and a Celery consumer (threads pool)
with exactly ``concurrency`` slots, prefetching nothing beyond them. Its life:

    starting    the self-test grades a known submission through the sandbox; warm workers come up
    unready     the self-test failed: the node consumes nothing, says why, and tries again
    ready       consuming: claim (``queued -> running``, recorded with the node's name), grade, store the
                result, then acknowledge the message
    draining    SIGTERM: consumes no more; running gradings finish (a second SIGTERM/SIGQUIT cuts them
                short); whatever it still holds is handed back (``running -> queued``) and published again
    stopped     gone; its row stays visible in GET /api/workers until pruned

A heartbeat row in the database every ``heartbeat_s`` says how it is (``/api/workers``); a node silent for
``node_timeout_s`` (killed, cut off) is ``lost`` and a sweeper anywhere queues its work again. Each node
also serves ``/healthz``, ``/readyz`` and ``/metrics`` on ``host:port`` for its orchestrator and Prometheus.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import socket
import threading
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

from judge import __version__
from judge.core.doctor import SelfTest, self_test
from judge.dispatch.callback_setup import callback_sender
from judge.dispatch.capabilities import node_queues
from judge.dispatch.celery_queue import GradingQueue, Sweeper, is_submission_id
from judge.dispatch.consumer import celery_worker, register_grade_task
from judge.dispatch.events import ProgressFeed
from judge.dispatch.grading_loop import VERSION_HOLD_DELAY_S, GradingLoop, Outcome
from judge.dispatch.metrics import Metrics, metered
from judge.dispatch.node_gate import ready_to_consume
from judge.dispatch.node_problems import refresh_live, served_elsewhere
from judge.dispatch.redis_notify import RedisNotifier
from judge.dispatch.served import served_versions
from judge.dispatch.status_server import serve_status, url_of
from judge.store import NodeBeat, NodeState, Store, database_url
from judge.store.models import utcnow

if TYPE_CHECKING:
    from judge.core.problems import Problem
    from judge.core.results import CaseResult, GradeResult
    from judge.core.settings import Settings
    from sandbox.backends.base import Backend

log = logging.getLogger(__name__)

#: Nodes not seen for this long (and holding nothing) are forgotten.
PRUNE_AFTER = timedelta(days=1)
#: Seconds a node waits before it publishes again a submission deferred by its owner's gradings cap
#: (to the back of the queue: other clients' submissions are taken meanwhile).
DEFER_S = 0.5


class NodeEngine(Protocol):
    """What a node needs of ``judge.core.engine.Engine`` (tests may pass a fake)."""

    def grade(
        self, problem: Problem, code: str, *, on_case: Callable[[CaseResult], None] | None = None
    ) -> GradeResult: ...

    def readiness(self) -> str | None: ...

    def stats(self) -> dict[str, int | str | None]: ...

    def close(self) -> None: ...


class _NoEngine:
    """The engine before the self-test passed: no pool, grades nothing."""

    def grade(
        self, problem: Problem, code: str, *, on_case: Callable[[CaseResult], None] | None = None
    ) -> GradeResult:
        raise RuntimeError("the grading node is not ready")

    def readiness(self) -> str | None:
        return "the sandbox self-test has not passed yet"

    def stats(self) -> dict[str, int | str | None]:
        return {"size": 0, "idle": 0}

    def close(self) -> None:
        pass


def node_name() -> str:
    """Unique per process run: host, pid and a random suffix (a restarted node is a new node)."""
    return f"{socket.gethostname()[:120]}-{os.getpid()}-{secrets.token_hex(3)}"


class GradingNode:
    def __init__(
        self,
        settings: Settings,
        *,
        concurrency: int,
        backend: Backend | None = None,
        engine: NodeEngine | None = None,
        sandbox_check: Callable[[Backend], SelfTest] = self_test,
    ) -> None:
        """Raises SandboxRefused (no secure sandbox), ProblemError, or an SQLAlchemy error, before any job
        is taken. ``settings.queue_url`` must be set."""
        from judge.core.engine import Engine
        from judge.core.problems import ProblemSet
        from judge.core.sandboxes import choose_backend

        if settings.queue_url is None:
            raise ValueError("judge worker needs JUDGE_QUEUE_URL (the broker of the grading queue)")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.settings = settings
        self.concurrency = concurrency
        self.name = node_name()
        self.started_at = utcnow()
        self.metrics = Metrics()
        if backend is None:
            backend = choose_backend(settings.sandbox, allow_insecure=settings.insecure)
        self.backend_name = backend.name
        #: The JAX backend this node grades on, and so the queues it takes work from
        #: (``judge.dispatch.capabilities``): the CPU, which its executors compile for (docs/architecture.md,
        #: "A grading node on an accelerator", says what a TPU or GPU node needs first).
        self.grading_backend = "cpu"
        self.backend = metered(
            backend,
            lambda _reason: self.metrics.sandbox_start_failures.inc(),
            on_took=self.metrics.sandbox_start_seconds.observe,
        )
        self._sandbox_check = sandbox_check
        from judge.dispatch.live_problems import LiveProblems
        from judge.store.problem_versions import ProblemVersions

        #: The problems folder plus the versions operators pushed (refreshed every problems_poll_s).
        self.problems = LiveProblems(ProblemSet(settings.problems_dir), settings.problem_cache_dir())
        #: What this node grades with, in its heartbeat: API nodes compare it with their own versions.
        self.problem_versions = served_versions(self.problems)
        self.store = Store(database_url(settings.database_url, settings.data_dir))
        self.pushed = ProblemVersions(self.store)
        self.queue = GradingQueue(
            settings.queue_url, visibility_timeout_s=settings.visibility_timeout_s, concurrency=concurrency
        )
        self.notifier = RedisNotifier(settings.queue_url)
        self.feed = ProgressFeed(self.store, self.notifier)
        # The warm pool starts once the self-test passed: ``judge.core.doctor.self_test`` closes the backend
        # it is given (its zygote too), which would kill warm tracers forked before it.
        self._make_engine: Callable[[], NodeEngine] = lambda: Engine(
            self.backend, workers=concurrency, slot_base=settings.sandbox_slot_base
        )
        self.engine: NodeEngine = engine or _NoEngine()
        self.callbacks = callback_sender(settings, self.store, self.metrics)
        self.worker = GradingLoop(
            self.store,
            self.engine,
            self.problems,
            self.feed,
            backend_name=self.backend_name,
            callbacks=self.callbacks,
            observer=self.metrics,
            max_attempts=settings.max_attempts,
            node=self.name,
            gradings_cap=settings.gradings_per_client,
            hold_s=settings.version_hold_s,
            served_elsewhere=partial(served_elsewhere, self.store, self.name, settings.node_timeout_s),
        )
        self.sweeper = Sweeper(
            self.store,
            self.queue,
            node_timeout_s=settings.node_timeout_s,
            requeue_after_s=settings.requeue_after_s,
            period_s=settings.sweep_s,
            on_requeue=self.metrics.requeued,
        )
        self.state = NodeState.STARTING
        self.detail: str | None = "the sandbox self-test has not run yet"
        self._lock = threading.Lock()
        self._in_flight: set[str] = set()
        self.graded = 0
        self._stop = threading.Event()
        self._celery: Any = None
        self._http: ThreadingHTTPServer | None = None
        self.metrics.bind(
            depth=self._waiting,
            running=lambda: self.busy,
            runs=lambda: 0,
            idle=lambda: int(self.engine_stats().get("idle") or 0),
        )

    # ------------------------------------------------------------------------------------ state

    @property
    def busy(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def engine_stats(self) -> dict[str, int | str | None]:
        return self.engine.stats()

    def _waiting(self) -> int:
        try:
            return self.queue.waiting_messages()
        except Exception:
            return 0

    def beat(self) -> NodeBeat:
        return NodeBeat(
            name=self.name,
            hostname=socket.gethostname()[:255],
            pid=os.getpid(),
            queues=",".join(node_queues(self.grading_backend)),
            backend=self.backend_name,
            version=__version__,
            state=self.state,
            detail=self.detail,
            slots=self.concurrency,
            busy=self.busy,
            idle_workers=int(self.engine_stats().get("idle") or 0),
            graded=self.graded,
            started_at=self.started_at,
            problem_versions=self.problem_versions,
        )

    def _set_state(self, state: NodeState, detail: str | None = None) -> None:
        self.state, self.detail = state, detail
        self._heartbeat_once()

    def _heartbeat_once(self) -> None:
        try:
            self.store.nodes.heartbeat(self.beat())
        except Exception as exc:  # the database is down: others may declare us lost; our results then lose
            log.warning("heartbeat failed: %s: %s", type(exc).__name__, exc)

    def _heartbeats(self) -> None:
        while not self._stop.wait(self.settings.heartbeat_s):
            self._heartbeat_once()
            self._hand_back_orphans()

    def _poll_problems(self) -> None:
        """Every ``problems_poll_s``, on a thread of its own: preparing a new version (its reference's
        expected outputs) may take longer than a heartbeat may wait."""
        while not self._stop.wait(self.settings.problems_poll_s):
            if self.refresh_problems():
                self._heartbeat_once()  # report the versions at once

    def refresh_problems(self) -> bool:
        """Load the problem versions that went live (and drop the retired ones) since the last look at the
        store's catalog revision; the heartbeats then report them. True when they changed."""
        changed = refresh_live(self.problems, self.pushed)
        if changed:
            self.problem_versions = served_versions(self.problems)
        return changed

    def _hand_back_orphans(self) -> None:
        """Claims recorded with this node that no task of it holds (its database write failed midway, or a
        sweeper raced a slow heartbeat): queue them again."""
        try:
            held = self.store.attempts.held_by(self.name)
            with self._lock:
                orphans = [i for i in held if i not in self._in_flight]
            for submission_id in orphans:
                if self.store.attempts.release_node(self.name, submission_id):
                    self.sweeper.publish(submission_id)
        except Exception as exc:
            log.warning("checking this node's claims failed: %s: %s", type(exc).__name__, exc)

    # ------------------------------------------------------------------------------------ grading

    def handle(self, submission_id: object) -> str:
        """The Celery task's body: grade one submission; returns the outcome (for logs). Never raises, so
        the message is acknowledged once this returns (after the result is stored)."""
        if not is_submission_id(submission_id):
            log.warning("dropped a message that names no submission")
            return "dropped"
        assert isinstance(submission_id, str)
        with self._lock:
            if submission_id in self._in_flight:  # a duplicate delivery while we grade it
                return Outcome.SKIPPED.value
            self._in_flight.add(submission_id)
        try:
            outcome = self.worker.process(submission_id)
        except Exception:  # the database failed: the claim (if any) is handed back by _hand_back_orphans
            log.exception("grading submission %s failed", submission_id)
            outcome = Outcome.RETRY
        finally:
            with self._lock:
                self._in_flight.discard(submission_id)
        if outcome is Outcome.GRADED:
            self.graded += 1
        elif outcome is Outcome.RETRY:
            self.sweeper.publish(submission_id)
        elif outcome is Outcome.DEFERRED:
            self._stop.wait(DEFER_S)
            self.sweeper.publish(submission_id)
        elif outcome is Outcome.HELD:
            # Another node may have its problem's version: offered again after a while, without holding a
            # slot meanwhile (if this node stops first, the sweeper's stale requeue publishes it). The while
            # varies: at a fixed delay this node's next wait on the broker stood in the same phase each time
            # and the broker handed it the message again and again, never to an idle node that has the
            # version (tests/test_problem_rollout.py: 142 holds in 4 minutes).
            delay = VERSION_HOLD_DELAY_S * (0.5 + secrets.randbelow(1000) / 1000)
            timer = threading.Timer(delay, self._publish_held, (submission_id,))
            timer.daemon = True
            timer.start()
        return outcome.value

    def _publish_held(self, submission_id: str) -> None:
        if not self._stop.is_set():
            self.sweeper.publish(submission_id)

    # ------------------------------------------------------------------------------------ life

    def _start_engine(self) -> NodeEngine:
        """The warm pool, started once the self-test passed (unless one was given)."""
        if isinstance(self.engine, _NoEngine):
            self.engine = self.worker.engine = self._make_engine()
        return self.engine

    def request_stop(self) -> None:
        """Stop before consuming (the self-test or warm-up phase); once consuming, SIGTERM stops Celery."""
        self._stop.set()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._stop.set()
        if self.state in (NodeState.READY, NodeState.DRAINING):
            self.state = NodeState.DRAINING

    def serve_status(self) -> str:
        """Start the status server (``/healthz``, ``/readyz``, ``/metrics``); its URL."""
        self._http = serve_status(self, self.settings.host, self.settings.port)
        return url_of(self._http.socket)

    def run(self) -> int:
        """Grade until SIGTERM/SIGINT; the exit status. From the main thread (Celery's worker installs its
        signal handlers); another thread may run it only up to consuming (tests of the self-test gate)."""
        if threading.current_thread() is threading.main_thread():
            for stop in (signal.SIGTERM, signal.SIGINT):
                signal.signal(stop, self._on_signal)
        self.store.migrate()
        self.refresh_problems()
        self._heartbeat_once()
        beats = threading.Thread(target=self._heartbeats, name="heartbeat", daemon=True)
        beats.start()
        threading.Thread(target=self._poll_problems, name="problems-poll", daemon=True).start()
        if self.callbacks is not None:
            self.callbacks.start()
        try:
            check = partial(self._sandbox_check, self.backend)
            if not ready_to_consume(check, self._start_engine, self._set_state, self._stop):
                return 0
            self.sweeper.start()
            register_grade_task(self.queue, self.handle)
            self._celery = celery_worker(
                self.queue,
                node_name=self.name,
                concurrency=self.concurrency,
                grading_backend=self.grading_backend,
                log_level=self.settings.log_level,
            )
            self._set_state(NodeState.READY)
            log.info("grading node %s ready: %d slots on %s", self.name, self.concurrency, self.backend_name)
            if not self._stop.is_set():
                self._celery.start()  # returns after a warm (SIGTERM) or cold shutdown
            return 0
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        self._stop.set()
        self.state = NodeState.DRAINING
        self.worker.abandon()
        handed_back: list[str] = []
        try:
            handed_back = self.store.attempts.release_node(self.name)
        except Exception as exc:
            log.warning("handing back this node's claims failed (%s); the sweeper reclaims them", exc)
        for submission_id in handed_back:
            self.sweeper.publish(submission_id)
        if handed_back:
            log.info("handed back %d unfinished submissions", len(handed_back))
        self.sweeper.close()
        self.engine.close()
        if self.callbacks is not None:
            self.callbacks.close()
        self._set_state(NodeState.STOPPED)
        try:
            self.store.nodes.prune(utcnow() - PRUNE_AFTER)
        except Exception:
            log.debug("pruning old nodes failed", exc_info=True)
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self.notifier.close()
        self.queue.close()
        self.store.close()


def run_node(settings: Settings, concurrency: int) -> int:
    """``judge worker``: build the node (failing closed before taking any job), serve its status, grade
    until stopped. The exit status: 0 after a requested stop, 2 for a refused configuration, 1 otherwise."""
    import sys

    from sqlalchemy.exc import SQLAlchemyError

    from judge.core.errors import JudgeError

    def say(message: str) -> None:
        print(f"judge: {message}", file=sys.stderr, flush=True)

    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if settings.queue_url is None:
        say("refusing to start: judge worker needs JUDGE_QUEUE_URL (e.g. redis://127.0.0.1:6379/0)")
        return 2
    try:
        node = GradingNode(settings, concurrency=concurrency)
    except JudgeError as exc:  # SandboxRefused, ProblemError
        say(f"refusing to start: {exc}")
        return 2
    except SQLAlchemyError as exc:
        say(f"cannot open the database: {type(exc).__name__}: {exc}")
        return 1
    try:
        url = node.serve_status()
    except OSError as exc:
        node.engine.close()
        say(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}")
        return 1
    say(f"grading node {node.name}: {concurrency} slots, status on {url} (/readyz, /metrics)")
    try:
        return node.run()
    except SQLAlchemyError as exc:
        say(f"the database failed: {type(exc).__name__}: {exc}")
        return 1
