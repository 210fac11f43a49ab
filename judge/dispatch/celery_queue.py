"""Distributed dispatch on Celery with a Redis broker: the API side, the broker client and the sweeper.

    GradingQueue        the broker: publish a submission's id, ping, the broker-epoch key, the sweep lock
    CeleryDispatcher    ``Dispatcher`` for ``judge serve`` nodes: the database bounds the queue, Celery
                        carries ids to ``judge worker`` nodes (``judge.dispatch.node``)
    Sweeper             every ``sweep_s`` (one process at a time, by a Redis lock): queue again the work of
                        lost nodes, and publish again what the broker lost

A message holds only a submission id (JSON; never pickle), so the database stays the truth: a node claims
the submission (``queued -> running``, a conditional update) before grading it, and stores its result
conditionally on its attempt, so a message delivered twice, or published again by the sweeper, is graded
once. Messages are acknowledged late (after the result is stored) and one node prefetches exactly as many
as it has grading slots.

A broker that restarted without its data (or a fresh one) lacks the epoch key: whoever notices first sets
it again and publishes every queued submission again, so a broker restart loses nothing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from judge.dispatch.base import Dispatcher, OneShotReservation, QueueFull, Reservation
from judge.dispatch.capabilities import SUBMISSIONS_QUEUE, queue_for
from judge.store import Status, Store
from judge.store.models import utcnow

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger(__name__)

#: The Celery task name of a grading (the message body is ``[submission_id]``; its queue:
#: ``judge.dispatch.capabilities``).
GRADE_TASK = "judge.grade"
#: Redis keys: set while the broker still holds every published message; the sweep lock.
EPOCH_KEY = "judge:broker-epoch"
SWEEP_LOCK_KEY = "judge:sweep-lock"
#: Most submissions one sweep publishes again.
SWEEP_BATCH = 500
#: Retry-After (seconds) of a full queue while no grading node is alive: about what a node takes to start.
NO_NODE_RETRY_S = 60
#: Initial guess of one grading's duration (for Retry-After), until the queue has drained some.
INITIAL_GRADING_S = 3.0


def is_submission_id(value: object) -> bool:
    """Whether a message body names a submission (an id the store could hold); anything else is dropped."""
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def celery_app(queue_url: str, *, visibility_timeout_s: float, concurrency: int = 1) -> Celery:
    """A Celery app for the grading queue. Late acknowledgement, no prefetching beyond the node's slots
    (``concurrency`` x 1), JSON only, no results backend (results live in the database), no remote
    control or events (nothing but ids travels through the broker)."""
    # The [distributed] extra, imported when a deployment has a queue (a lone `judge serve` imports this
    # module without it).
    from celery import Celery

    app = Celery("judge", broker=queue_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        worker_concurrency=concurrency,
        worker_pool="threads",
        task_ignore_result=True,
        result_backend=None,
        task_serializer="json",
        accept_content=["json"],
        task_default_queue=SUBMISSIONS_QUEUE,
        task_routes={GRADE_TASK: {"queue": SUBMISSIONS_QUEUE}},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        broker_transport_options={"visibility_timeout": visibility_timeout_s},
        broker_pool_limit=4,
        worker_enable_remote_control=False,
        worker_send_task_events=False,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    return app


class GradingQueue:
    """The broker as the judge uses it. Every method raises ``RedisError`` (or kombu's connection errors)
    when the broker is unreachable; callers decide what that means."""

    def __init__(self, queue_url: str, *, visibility_timeout_s: float = 3600.0, concurrency: int = 1) -> None:
        import redis
        from redis.exceptions import RedisError

        self.url = queue_url
        self.app = celery_app(queue_url, visibility_timeout_s=visibility_timeout_s, concurrency=concurrency)
        self.redis = redis.Redis.from_url(queue_url, socket_timeout=5, socket_connect_timeout=5)
        #: What an unreachable broker raises (with ``OSError``).
        self.redis_error: type[Exception] = RedisError

    def publish(self, submission_id: str, backend: str = "cpu") -> None:
        """Queue the id of a stored submission for a grading node on ``backend`` (its queue:
        ``judge.dispatch.capabilities``; kombu retries a dropped connection)."""
        self.app.send_task(
            GRADE_TASK,
            args=[submission_id],
            queue=queue_for(backend),
            retry=True,
            retry_policy={"max_retries": 2, "interval_start": 0.1, "interval_step": 0.4, "interval_max": 1},
        )

    def ping(self) -> None:
        self.redis.ping()

    def waiting_messages(self) -> int:
        """Messages in the broker's submissions queue (not yet delivered to a node)."""
        return int(self.redis.llen(SUBMISSIONS_QUEUE))

    def claim_epoch(self) -> bool:
        """Set the epoch key if it is missing; True when it was missing (the broker lost its messages, or
        is new): the caller then publishes every queued submission again."""
        return bool(self.redis.set(EPOCH_KEY, uuid.uuid4().hex, nx=True))

    def take_sweep(self, period_s: float) -> bool:
        """True for one caller per ``period_s`` across the deployment."""
        return bool(self.redis.set(SWEEP_LOCK_KEY, "1", nx=True, px=max(1, int(period_s * 1000))))

    def close(self) -> None:
        self.redis.close()
        self.app.close()


class Sweeper:
    """Publishes again what would otherwise wait forever: the work of lost nodes (no heartbeat for
    ``node_timeout_s``), every queued submission when the broker lost its messages, submissions whose
    publishing failed here, and (a safety net) queued ones last published ``requeue_after_s`` ago."""

    def __init__(
        self,
        store: Store,
        queue: GradingQueue,
        *,
        node_timeout_s: float,
        requeue_after_s: float,
        period_s: float,
        on_requeue: Callable[[str, int], None] | None = None,
    ) -> None:
        #: ``on_requeue(reason, count)`` after each sweep that published something (a metric).
        self.on_requeue = on_requeue
        self.store = store
        self.queue = queue
        self.node_timeout_s = node_timeout_s
        self.requeue_after_s = requeue_after_s
        self.period_s = period_s
        self._lock = threading.Lock()
        self._unpublished: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def publish(self, submission_id: str) -> bool:
        """Publish now; when the broker is unreachable, remember it for the next sweep. True if published."""
        try:
            self.queue.publish(submission_id)
        except Exception as exc:  # kombu's OperationalError, RedisError, OSError
            with self._lock:
                first = not self._unpublished
                self._unpublished.add(submission_id)
            # Once per outage (while nothing waits to be published again), not once per submission.
            (log.warning if first else log.debug)(
                "publishing submission %s failed (%s); the sweeper retries it and those after it",
                submission_id,
                exc,
            )
            return False
        return True

    def republish_all_queued(self) -> int:
        """Publish every queued submission again (the broker lost its messages). How many."""
        total = 0
        cutoff = utcnow()  # each batch moves its publish time past the cutoff: no id comes twice
        while True:
            ids = self.store.attempts.requeue_stale(cutoff, SWEEP_BATCH)
            for submission_id in ids:
                self.publish(submission_id)
            total += len(ids)
            if len(ids) < SWEEP_BATCH:
                return total

    def sweep(self, *, force: bool = False) -> dict[str, int]:
        """One sweep (unless another process swept within ``period_s``, or ``force``). Counts of what it
        published, by reason. Raises when the broker or the database is unreachable."""
        counts = {"lost": 0, "broker": 0, "retried": 0, "stale": 0}
        if not force and not self.queue.take_sweep(self.period_s * 0.9):
            return counts
        if self.queue.claim_epoch():
            counts["broker"] = self.republish_all_queued()
            if counts["broker"]:
                log.warning(
                    "the broker had lost its messages: %d queued submissions published again",
                    counts["broker"],
                )
        with self._lock:
            retry, self._unpublished = self._unpublished, set()
        for submission_id in retry:
            record = self.store.submissions.get(submission_id)
            if record is not None and record.status is Status.QUEUED and self.publish(submission_id):
                counts["retried"] += 1
        for submission_id in self.store.attempts.reclaim_lost(
            utcnow() - timedelta(seconds=self.node_timeout_s)
        ):
            self.publish(submission_id)
            counts["lost"] += 1
        if counts["lost"]:
            log.warning("queued again %d submissions of lost grading nodes", counts["lost"])
        stale = self.store.attempts.requeue_stale(
            utcnow() - timedelta(seconds=self.requeue_after_s), SWEEP_BATCH
        )
        for submission_id in stale:
            self.publish(submission_id)
        counts["stale"] = len(stale)
        if self.on_requeue is not None:
            for reason, count in counts.items():
                if count:
                    self.on_requeue(reason, count)
        return counts

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="queue-sweeper", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        failing = False
        while not self._stop.wait(self.period_s):
            try:
                self.sweep()
            except Exception as exc:  # the broker or the database is down: try again next period
                # Logged when the outage begins, then quietly each period until a sweep works again.
                (log.debug if failing else log.warning)("queue sweep failed: %s: %s", type(exc).__name__, exc)
                failing = True
            else:
                if failing:
                    log.warning("queue sweeps work again")
                failing = False

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


class CeleryDispatcher(Dispatcher):
    """The API node's side of the distributed queue. ``queue_size`` bounds the submissions queued in the
    database across the deployment (429 past it); a submission is stored first, then its id published,
    so a publish that fails loses nothing (the sweeper publishes it again)."""

    def __init__(
        self,
        store: Store,
        queue: GradingQueue,
        sweeper: Sweeper,
        *,
        queue_size: int,
        slots: Callable[[], int] = lambda: 1,
    ) -> None:
        """``slots``: grading slots of the live nodes (for the Retry-After estimate)."""
        self.store = store
        self.queue = queue
        self.sweeper = sweeper
        self.queue_size = queue_size
        self.slots = slots
        self._lock = threading.Lock()
        self._reserved = 0
        self._closing = False
        self._counted_at = 0.0
        self._counts: dict[Status, int] = {}

    def start(self) -> None:
        try:
            if self.queue.claim_epoch():
                published = self.sweeper.republish_all_queued()
                if published:
                    log.info("published %d queued submissions to a broker that lacked them", published)
        except Exception as exc:  # the broker is down: the sweeper publishes them once it is back
            log.warning("the grading queue is unreachable at start (%s); will retry", exc)
        self.sweeper.start()

    def reserve(self) -> Reservation:
        with self._lock:
            if self._closing:
                raise QueueFull("the judge is shutting down", retry_after=5)
            self._reserved += 1
            reserved = self._reserved
        waiting = self.store.submissions.count(Status.QUEUED) + reserved - 1
        if waiting >= self.queue_size:
            self._release()
            full = f"the grading queue is full ({waiting} submissions waiting, at most {self.queue_size})"
            live = self._live_slots()
            if live == 0:  # nothing drains the queue: an estimate from grading times would be a lie
                raise QueueFull(f"{full}; no grading node is alive to drain it", retry_after=NO_NODE_RETRY_S)
            estimate = math.ceil(INITIAL_GRADING_S * (waiting + 1) / max(1, live or 1))
            raise QueueFull(full, retry_after=max(1, min(600, estimate)))
        return OneShotReservation(self._commit, self._release)

    def _live_slots(self) -> int | None:
        """Grading slots of the live nodes; None when the database cannot tell."""
        try:
            return max(0, self.slots())
        except Exception:
            return None

    def _commit(self, submission_id: str) -> None:
        self._release()
        self.sweeper.publish(submission_id)

    def _release(self) -> None:
        with self._lock:
            self._reserved -= 1

    def _count(self, status: Status) -> int:
        """Deployment-wide counts from the database, cached for a second (metrics scrapes, 429 hints)."""
        now = time.monotonic()
        if now - self._counted_at > 1.0:
            try:
                self._counts = {s: self.store.submissions.count(s) for s in (Status.QUEUED, Status.RUNNING)}
            except Exception:
                log.exception("counting submissions failed")
            self._counted_at = now
        return self._counts.get(status, 0)

    def depth(self) -> int:
        return self._count(Status.QUEUED)

    def running(self) -> int:
        return self._count(Status.RUNNING)

    def readiness(self) -> str | None:
        """None when the broker answers, else why not."""
        try:
            self.queue.ping()
        except (self.queue.redis_error, OSError) as exc:
            return f"the grading queue is unreachable ({type(exc).__name__})"
        return None

    def close(self, grace_s: float) -> None:
        with self._lock:
            self._closing = True
        self.sweeper.close()
        self.queue.close()
