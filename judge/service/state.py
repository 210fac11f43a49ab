"""The service's long-lived parts, built from Settings, started and stopped with the app.

Services.build(settings)   choose the sandbox (fails closed), load problems, open the database
services.start(regrades)   migrate, recover, start grading, callbacks and regrades; warm up in background
services.readiness()       None when ready, else why not (for /readyz): problems, sandbox, database, queue
services.degraded()        the dependencies that do not answer now and what the service does meanwhile

With ``queue_url`` set the service is a stateless API node: submissions go through Celery to ``judge
worker`` nodes (``judge.dispatch.celery_queue``), progress notices come over Redis pub/sub, and the
service's own small warm pool (``run_reserve`` workers) serves Run only.
services.stop()            stop taking work, let gradings finish (grace), close the sandbox pool
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any, Protocol

from judge.dispatch import Dispatcher, GradingWorker, LocalDispatcher, ProgressFeed
from judge.dispatch.callbacks import CallbackSender
from judge.dispatch.celery_queue import CeleryDispatcher, GradingQueue, Sweeper
from judge.dispatch.document import submission_json
from judge.dispatch.live_problems import LiveProblems
from judge.dispatch.metrics import Metrics, metered
from judge.dispatch.redis_notify import RedisNotifier
from judge.dispatch.served import served_versions, serves
from judge.doctor import SelfTest, self_test
from judge.engine import Engine
from judge.problems import Problem, ProblemSet
from judge.progress import RunProgress
from judge.results import CaseResult, GradeResult
from judge.sandboxes import choose_backend
from judge.service.accounts import Accounts
from judge.service.apikeys import KeyRing
from judge.service.catalog import Catalog
from judge.service.degraded import Fallback, Outage
from judge.service.gate import RunGate
from judge.service.limits import RequestLimits
from judge.service.problem_admin import ProblemAdmin
from judge.service.ratelimit import RateLimiter
from judge.service.retention import Retention
from judge.settings import Settings
from judge.store import NodeRecord, NodeState, Store, database_url
from judge.store.models import utcnow
from judge.store.problem_versions import ProblemVersions
from sandbox.base import Backend

log = logging.getLogger(__name__)


class Background(Protocol):
    """A loop the services start and close with themselves (the problem regrades' runner)."""

    def start(self) -> None: ...

    def close(self) -> None: ...


#: Node states that count as alive (taking or about to take work).
_LIVE = frozenset({NodeState.STARTING, NodeState.READY, NodeState.UNREADY, NodeState.DRAINING})
#: Seconds between self-test attempts while it keeps failing.
SELF_TEST_RETRY_S = 30.0


class GradingEngine(Protocol):
    """What the service needs of ``judge.engine.Engine`` (tests of the HTTP layer may pass a fake)."""

    def grade(
        self, problem: Problem, code: str, *, on_case: Callable[[CaseResult], None] | None = None
    ) -> GradeResult: ...

    def run(
        self,
        problem: Problem,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        dtype: str | None = None,
        on_case: Callable[[CaseResult], None] | None = None,
        on_progress: Callable[[RunProgress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> GradeResult: ...

    def readiness(self) -> str | None: ...

    def warm_within(self, seconds: float) -> RunProgress | None: ...

    def warming(self) -> RunProgress | None: ...

    def stats(self) -> dict[str, int | str | None]: ...

    def close(self) -> None: ...


class Services:
    def __init__(
        self,
        settings: Settings,
        *,
        backend: Backend,
        catalog: Catalog,
        store: Store,
        engine: GradingEngine | None = None,
        sandbox_check: Callable[[Backend], SelfTest] = self_test,
    ) -> None:
        self.settings = settings
        self._sandbox_check = sandbox_check
        self.metrics = Metrics()
        self.backend_name = backend.name
        self._start_failed_at = 0.0
        self._start_ok_at = 0.0
        self._start_error = ""
        self.backend = metered(backend, self._start_failed, self._start_ok, self._start_took)
        self.catalog = catalog
        self.store = store
        # A bad key setting or keys file stops the start (KeyFileError).
        self.api_keys = KeyRing(settings.api_keys, settings.api_keys_file)
        self.limits = RequestLimits.from_settings(settings)
        self.limiter = RateLimiter(
            settings.rate_limit_storage,
            settings.rate_limit,
            settings.anonymous_rate_limit,
            settings.failed_auth_rate_limit,
            settings.signin_rate_limit,
        )
        #: Dependencies the request path consults, watched for outages (judge/service/degraded.py).
        self.database = Fallback(
            "database_url", "requests that need the database answer 503 with Retry-After", probe=store.ping
        )
        self.fallbacks: list[Fallback] = []
        for fallback in (self.database, self.limiter.fallback):
            if fallback is not None:
                self.add_fallback(fallback)
        # Distributed: submissions are graded by ``judge worker`` nodes; this node's own warm pool serves
        # Run only (run_reserve workers), so Run never waits behind the queue.
        self.distributed = settings.distributed
        pool_size = settings.run_reserve if self.distributed else settings.workers
        self.engine: GradingEngine = engine or Engine(
            self.backend, workers=pool_size, slot_base=settings.sandbox_slot_base
        )
        self.notifier: RedisNotifier | None = None
        if settings.queue_url is not None:
            self.notifier = RedisNotifier(settings.queue_url)
        self.feed = ProgressFeed(store, self.notifier)
        self.retention = Retention(store, settings)
        #: Learner accounts (``accounts`` setting); None when they are off.
        self.accounts: Accounts | None = (
            Accounts(store, settings, self.limiter) if settings.accounts else None
        )
        self.callbacks: CallbackSender | None = None
        # Distributed: the node that grades a submission sends its callback; this node's sender
        # redelivers what an operator asks for (POST .../callback), resumes nothing at start, and sends
        # the callbacks a grading node without callback settings handed off (polled every
        # callback_poll_s; the node that accepted a callback_url always has callback settings).
        if settings.callback_hosts and settings.callback_secret is not None:
            self.callbacks = CallbackSender(
                store,
                secret=settings.callback_secret.get_secret_value().encode(),
                previous_secret=(
                    settings.callback_secret_previous.get_secret_value().encode()
                    if settings.callback_secret_previous is not None
                    else None
                ),
                allowed_hosts=settings.callback_hosts,
                render=lambda record: json.dumps(submission_json(record)).encode(),
                attempts=settings.callback_attempts,
                backoff_s=settings.callback_backoff_s,
                timeout_s=settings.callback_timeout_s,
                on_failure=self.metrics.callback_failed,
                poll_s=settings.callback_poll_s,
            )
        self.worker = GradingWorker(
            store,
            self.engine,
            catalog.problems,
            self.feed,
            backend_name=self.backend_name,
            callbacks=None if self.distributed else self.callbacks,
            observer=self.metrics,
            max_attempts=settings.max_attempts,
            gradings_cap=settings.gradings_per_client,
            hold_s=settings.version_hold_s,
        )
        self.queue: CeleryDispatcher | None = None
        if settings.queue_url is not None:
            grading_queue = GradingQueue(
                settings.queue_url, visibility_timeout_s=settings.visibility_timeout_s
            )
            sweeper = Sweeper(
                store,
                grading_queue,
                node_timeout_s=settings.node_timeout_s,
                requeue_after_s=settings.requeue_after_s,
                period_s=settings.sweep_s,
                on_requeue=self.metrics.requeued,
            )
            self.queue = CeleryDispatcher(
                store, grading_queue, sweeper, queue_size=settings.queue_size, slots=self._node_slots
            )
            self.add_fallback(
                Fallback(
                    "queue_url",
                    "submissions are stored, and published when it answers",
                    probe=grading_queue.ping,
                )
            )
            self.dispatcher: Dispatcher = self.queue
        else:
            self.dispatcher = LocalDispatcher(
                self.worker,
                store,
                concurrency=settings.submission_concurrency,
                queue_size=settings.queue_size,
                may_start=self._submission_may_start,
            )
        self.run_gate = RunGate(
            lambda: pool_size - (0 if self.distributed else self.dispatcher.running()),
            queue=settings.run_queue,
            wait_s=settings.run_wait_s,
        )
        self.metrics.bind(
            depth=self.dispatcher.depth,
            running=self.dispatcher.running,
            runs=lambda: self.run_gate.active,
            idle=lambda: int(self.engine.stats().get("idle") or 0),
        )
        #: The versions this node accepts submissions for (compared with the grading nodes').
        self.api_versions = served_versions(catalog.problems)
        #: Problem versions operators push at runtime: stored, checked, polled (judge.dispatch.live_problems).
        self.pushed = ProblemVersions(store)
        self.problem_admin = ProblemAdmin(settings, self.pushed)
        self.live = catalog.problems if isinstance(catalog.problems, LiveProblems) else None
        self._poller: threading.Thread | None = None
        self.metrics.bind_store(
            oldest_queued=store.attempts.oldest_queued_age,
            live_nodes=lambda: self._nodes_count(alive=True),
            lost_nodes=lambda: self._nodes_count(alive=False),
            mismatched=lambda: len(self.version_skew()),
        )
        self._self_test: str | None = "the sandbox self-test has not run yet"
        self._prepared: str | None = "the problems are being prepared"
        self._warm: str | None = "the warm sandbox workers are starting"
        self._stop = threading.Event()
        self._warmup: threading.Thread | None = None
        #: Moves operators' problem regrades on (``judge.service.regrading.RegradeRunner``), from ``start``.
        self.regrades: Background | None = None

    def add_fallback(self, fallback: Fallback) -> None:
        """Watch ``fallback`` (metrics, ``degraded``)."""
        self.fallbacks.append(fallback)
        self.metrics.watch(fallback)

    def fallback(self, dependency: str) -> Fallback | None:
        return next((f for f in self.fallbacks if f.dependency == dependency), None)

    def degraded(self) -> list[Outage]:
        """The outages now (a dependency that is down is probed first, so a recovery shows at once)."""
        return [outage for f in self.fallbacks if (outage := f.outage()) is not None]

    def live_nodes(self) -> list[NodeRecord]:
        """Grading nodes whose heartbeat is recent (distributed dispatch)."""
        cutoff = utcnow() - timedelta(seconds=self.settings.node_timeout_s)
        return [n for n in self.store.nodes.known(seen_after=cutoff) if n.state in _LIVE]

    def version_skew(self) -> list[dict[str, Any]]:
        """Problems served in more than one version by this API node (what it accepts submissions for)
        and the live grading nodes (what grades them): per problem, each version's hash, revision and
        who serves it. Empty when every node agrees (always, with in-process dispatch)."""
        if not self.distributed:
            return []
        served: dict[str, dict[str, dict[str, Any]]] = {}

        def add(slug: str, version: Mapping[str, Any], who: str) -> None:
            entry = served.setdefault(slug, {}).setdefault(
                str(version.get("hash")),
                {"hash": version.get("hash"), "revision": version.get("revision"), "served_by": []},
            )
            entry["served_by"].append(who)

        for slug, version in self.api_versions.items():
            add(slug, version, "api")
        for node in self.live_nodes():
            for slug, version in (node.problem_versions or {}).items():
                if isinstance(version, Mapping):
                    add(slug, version, node.name)
        return [
            {"problem": slug, "versions": list(versions.values())}
            for slug, versions in sorted(served.items())
            if len(versions) > 1
        ]

    def version_graded(self, slug: str, content_hash: str) -> bool:
        """Whether a grader has ``slug`` in version ``content_hash``: this process (in-process dispatch),
        or a live grading node (by its heartbeat)."""
        if not self.distributed:
            return self.worker.has_version(slug, content_hash)
        return any(
            serves(node.problem_versions, slug, content_hash)
            for node in self.live_nodes()
            if node.state is not NodeState.DRAINING
        )

    def grading_alive(self) -> bool:
        """Whether anything grades submissions now: this process (in-process dispatch), or a live
        grading node; True when the database cannot tell (no claim of a dead queue is made then)."""
        if not self.distributed:
            return True
        try:
            return bool(self.live_nodes())
        except Exception:
            return True

    def _nodes_count(self, *, alive: bool) -> int:
        """Live grading nodes (``alive``), or those marked lost; in-process dispatch: itself, never lost."""
        if not self.distributed:
            return 1 if alive else 0
        if alive:
            return len(self.live_nodes())
        return sum(
            1
            for n in self.store.nodes.known(seen_after=utcnow() - timedelta(hours=1))
            if n.state is NodeState.LOST
        )

    def _node_slots(self) -> int:
        return sum(n.slots for n in self.live_nodes() if n.state is NodeState.READY)

    def _submission_may_start(self) -> bool:
        """Submissions leave ``run_reserve`` warm workers idle for Run (priority to the interactive path)."""
        stats = self.engine.stats()
        if not stats.get("size"):  # an engine without a pool of its own
            return True
        reserve = max(0, self.settings.run_reserve - self.run_gate.active)
        return int(stats.get("idle") or 0) > reserve

    def _start_failed(self, reason: str) -> None:
        self.metrics.sandbox_start_failures.inc()
        self._start_failed_at = time.monotonic()
        self._start_error = reason[:300]

    def _start_ok(self) -> None:
        self._start_ok_at = time.monotonic()

    def _start_took(self, seconds: float) -> None:
        self.metrics.sandbox_start_seconds.observe(seconds)

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        backend: Backend | None = None,
        engine: GradingEngine | None = None,
        sandbox_check: Callable[[Backend], SelfTest] = self_test,
    ) -> Services:
        """Raises SandboxRefused (no secure sandbox), ProblemError (a bad problem package),
        KeyFileError (a bad API keys file) or an SQLAlchemy error (the database is unreachable)."""
        if backend is None:
            backend = choose_backend(settings.sandbox, allow_insecure=settings.insecure)
        problems = LiveProblems(ProblemSet(settings.problems_dir), settings.problem_cache_dir())
        store = Store(database_url(settings.database_url, settings.data_dir))
        catalog = Catalog(problems)
        return cls(
            settings,
            backend=backend,
            catalog=catalog,
            store=store,
            engine=engine,
            sandbox_check=sandbox_check,
        )

    # ------------------------------------------------------------------------------------ lifecycle

    def start(self, regrades: Callable[[Services], Background]) -> None:
        """``regrades``: makes the runner of problem regrades for these services (``RegradeRunner``, which
        reads them; passed in by the app that starts them)."""
        self.store.migrate()
        if self.notifier is not None:
            self.notifier.listen()
        self.dispatcher.start()
        if self.callbacks is not None:
            self.callbacks.start(resume=not self.distributed)
        self.retention.start()
        self.regrades = regrades(self)
        self.regrades.start()
        self._warmup = threading.Thread(target=self._warm_up, name="warm-up", daemon=True)
        self._warmup.start()
        if self.live is not None:
            self._poller = threading.Thread(target=self._poll_problems, name="problems-poll", daemon=True)
            self._poller.start()
        try:
            self.problem_admin.resume()
        except Exception:
            log.exception("resuming the checks of pushed problem versions failed")

    def refresh_problems(self, *, prepare: bool = True) -> bool:
        """Load the problem versions that went live, drop the retired ones (``LiveProblems.refresh``), the
        new ones' details prepared before they are served; True when the problems served changed."""
        if self.live is None:
            return False
        changed = self.live.refresh(self.pushed, self.catalog.prepare_problems if prepare else None)
        if changed:
            self.api_versions = served_versions(self.catalog.problems)
        return changed

    def _poll_problems(self) -> None:
        failing = False
        while not self._stop.wait(self.settings.problems_poll_s):
            try:
                self.refresh_problems()
            except Exception as exc:  # the database is down: look again at the next poll
                (log.debug if failing else log.warning)("polling the problem versions failed: %s", exc)
                failing = True
            else:
                failing = False

    def _warm_up(self) -> None:
        try:
            self.refresh_problems(prepare=False)  # the live versions, prepared with the rest just below
            self.catalog.prepare()
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
        if not idle and self._start_failed_at > self._start_ok_at:
            return f"no warm sandbox worker: starting one failed ({self._start_error})"
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
        broker = self.fallback("queue_url")
        if broker is not None:
            if reason is None:
                broker.succeeded()
            else:
                broker.failed(ConnectionError(reason))
        return reason or "ok"

    def wait_ready(self, timeout: float) -> bool:
        """Block until ready (tests, the smoke run, benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.readiness() is None:
                return True
            time.sleep(0.05)
        return self.readiness() is None

    def stop(self) -> None:
        self._stop.set()
        self.retention.close()
        if self.regrades is not None:
            self.regrades.close()
        self.dispatcher.close(self.settings.shutdown_grace_s)
        self.engine.close()
        if self.callbacks is not None:
            self.callbacks.close()
        if self.notifier is not None:
            self.notifier.close()
        if self._warmup is not None:
            self._warmup.join(timeout=5)
        if self._poller is not None:
            self._poller.join(timeout=5)
        self.problem_admin.close()
        self.problem_admin.wait(5)
        self.store.close()
