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

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from judge.core.doctor import SelfTest, self_test
from judge.core.engine import Engine
from judge.core.problems import ProblemSet
from judge.core.sandboxes import choose_backend
from judge.core.settings import Settings
from judge.dispatch import Dispatcher, GradingLoop, LocalDispatcher, ProgressFeed
from judge.dispatch.celery_queue import CeleryDispatcher
from judge.dispatch.live_problems import LiveProblems
from judge.dispatch.metrics import Metrics, metered
from judge.dispatch.redis_notify import RedisNotifier
from judge.dispatch.served import served_versions
from judge.service.accounts import Accounts
from judge.service.apikeys import KeyRing
from judge.service.catalog import Catalog
from judge.service.degraded import Fallback, Outage
from judge.service.fleet import Fleet
from judge.service.gate import RunGate
from judge.service.grading_engine import GradingEngine as GradingEngine
from judge.service.limits import RequestLimits
from judge.service.problem_admin import ProblemAdmin
from judge.service.ratelimit import RateLimiter
from judge.service.readiness import Readiness, SandboxStarts
from judge.service.retention import Retention
from judge.service.wiring import callback_sender, celery_dispatcher
from judge.store import Store, database_url
from judge.store.problem_versions import ProblemVersions
from sandbox.backends.base import Backend

log = logging.getLogger(__name__)


class Background(Protocol):
    """A loop the services start and close with themselves (the problem regrades' runner)."""

    def start(self) -> None: ...

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
        self.metrics = Metrics()
        self.backend_name = backend.name
        starts = SandboxStarts(self.metrics)
        self.backend = metered(backend, starts.failed, starts.ok, starts.took)
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
        self.callbacks = callback_sender(settings, store, self.metrics)
        self.worker = GradingLoop(
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
        #: The versions this node accepts submissions for (compared with the grading nodes').
        self.api_versions = served_versions(catalog.problems)
        self.fleet = Fleet(store, settings, self.worker, lambda: self.api_versions)
        self.queue: CeleryDispatcher | None = None
        broker: Fallback | None = None
        if settings.queue_url is not None:
            self.queue, grading_queue = celery_dispatcher(
                settings, settings.queue_url, store, self.metrics, self.fleet.node_slots
            )
            broker = Fallback(
                "queue_url", "submissions are stored, and published when it answers", probe=grading_queue.ping
            )
            self.add_fallback(broker)
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
        #: Problem versions operators push at runtime: stored, checked, polled (judge.dispatch.live_problems).
        self.pushed = ProblemVersions(store)
        self.problem_admin = ProblemAdmin(settings, self.pushed)
        self.live = catalog.problems if isinstance(catalog.problems, LiveProblems) else None
        self._poller: threading.Thread | None = None
        self.metrics.bind_store(
            oldest_queued=store.attempts.oldest_queued_age,
            live_nodes=lambda: self.fleet.nodes_count(alive=True),
            lost_nodes=lambda: self.fleet.nodes_count(alive=False),
            mismatched=lambda: len(self.fleet.version_skew()),
        )
        self._stop = threading.Event()
        #: Whether the service is ready (``/readyz``), and its warm-up (``judge.service.readiness``).
        self.health = Readiness(
            engine=self.engine,
            backend=self.backend,
            backend_name=self.backend_name,
            sandbox_check=sandbox_check,
            starts=starts,
            store=store,
            database=self.database,
            queue=self.queue,
            broker=broker,
            run_gate=self.run_gate,
            stop=self._stop,
        )
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

    def _submission_may_start(self) -> bool:
        """Submissions leave ``run_reserve`` warm workers idle for Run (priority to the interactive path)."""
        stats = self.engine.stats()
        if not stats.get("size"):  # an engine without a pool of its own
            return True
        reserve = max(0, self.settings.run_reserve - self.run_gate.active)
        return int(stats.get("idle") or 0) > reserve

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
        def prepare() -> None:
            self.refresh_problems(prepare=False)  # the live versions, prepared with the rest just below
            self.catalog.prepare()

        self.health.warm_up(prepare)

    def readiness(self) -> str | None:
        """None when ready, else the reason (``Readiness.readiness``)."""
        return self.health.readiness()

    def wait_ready(self, timeout: float) -> bool:
        """Block until ready (tests, the smoke run, benchmarks)."""
        return self.health.wait_ready(timeout)

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
