"""The in-process dispatcher: a bounded queue and N grading threads over the warm engine.

Admission is bounded (``queue_size`` submissions waiting; ``reserve`` raises QueueFull past it, with a
Retry-After estimated from recent grading times), never blocking. Submissions recovered at start are queued
whatever the bound: nothing accepted is dropped. A judge-side failure is retried after a growing delay.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from judge.dispatch.base import Dispatcher, OneShotReservation, QueueFull, Reservation, Waiting, WaitReason
from judge.dispatch.grading_loop import VERSION_HOLD_DELAY_S, GradingLoop, Outcome
from judge.store import Store

log = logging.getLogger(__name__)

#: First delay before a retried submission is graded again (doubles per attempt).
RETRY_DELAY_S = 2.0
#: Initial guess of one grading's duration, until one has been measured.
INITIAL_GRADING_S = 3.0
#: How often a held-back submission asks ``may_start`` again, and the longest it is held back.
HOLD_POLL_S = 0.05
HOLD_MAX_S = 30.0
#: Seconds before a submission deferred by its owner's gradings cap is tried again (behind the others).
DEFER_S = 0.25


class LocalDispatcher(Dispatcher):
    def __init__(
        self,
        worker: GradingLoop,
        store: Store,
        *,
        concurrency: int,
        queue_size: int,
        may_start: Callable[[], bool] = lambda: True,
    ) -> None:
        """``may_start``: whether a grading may take a sandbox worker now; the service keeps the Run
        reserve's warm workers idle with it. A submission is held back at most ``HOLD_MAX_S`` for it."""
        if concurrency < 1 or queue_size < 1:
            raise ValueError("concurrency and queue_size must be at least 1")
        self.may_start = may_start
        self.worker = worker
        self.store = store
        self.concurrency = concurrency
        self.queue_size = queue_size
        self._cond = threading.Condition()
        self._queue: deque[str] = deque()
        self._delayed: list[tuple[float, str]] = []
        #: Delayed because this process lacked the version of its problem (``Outcome.HELD``), not capacity.
        self._version_held: set[str] = set()
        self._reserved = 0
        self._running = 0
        self._closing = False
        self._threads: list[threading.Thread] = []
        self._grading_s = INITIAL_GRADING_S
        #: A grading thread holds the next submission back for the Run reserve (``may_start`` said no).
        self._holding = False

    # ------------------------------------------------------------------------------------ API side

    def start(self) -> None:
        recovered = self.store.attempts.recover()
        with self._cond:
            known = set(self._queue)
            self._queue.extend(i for i in recovered if i not in known)
        if recovered:
            log.info("queued %d unfinished submissions again", len(recovered))
        for n in range(self.concurrency):
            thread = threading.Thread(target=self._loop, name=f"grader-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def reserve(self) -> Reservation:
        with self._cond:
            if self._closing:
                raise QueueFull("the judge is shutting down", retry_after=5)
            waiting = len(self._queue) + len(self._delayed) + self._reserved
            if waiting >= self.queue_size:
                raise QueueFull(
                    f"the grading queue is full ({waiting} submissions waiting, at most {self.queue_size})",
                    retry_after=self._retry_after(waiting),
                )
            self._reserved += 1
        return OneShotReservation(self._commit, self._cancel)

    def depth(self) -> int:
        with self._cond:
            return len(self._queue) + len(self._delayed)

    def running(self) -> int:
        with self._cond:
            return self._running

    def waiting(self, submission_id: str) -> Waiting | None:
        """Where a queued submission stands: the submissions ahead of it, why it waits and an estimate from
        recent grading times (one round of ``concurrency`` gradings per ``concurrency`` ahead)."""
        with self._cond:
            queue = list(self._queue)
            delayed = sorted(self._delayed)
            version_held = submission_id in self._version_held
            free = max(0, self.concurrency - self._running)
            holding, grading_s = self._holding, self._grading_s
        reason: WaitReason
        if submission_id in queue:
            ahead = queue.index(submission_id)
            reason = "queue" if ahead >= free else "run_reserve" if holding else "starting"
            wait = 0.0 if ahead < free else grading_s * math.ceil((ahead - free + 1) / self.concurrency)
        else:
            due = next((at for at, sid in delayed if sid == submission_id), None)
            if due is None:
                return None
            ahead = len(queue)
            # Held for its version (judge.service.version_wait says so while no grader has it): once the
            # version is here, it is back in the queue at its next offer.
            reason = "queue" if version_held else "capacity"
            wait = max(0.0, due - time.monotonic()) + grading_s * math.ceil(ahead / self.concurrency)
        estimate = max(1, math.ceil(wait + (HOLD_MAX_S / 2 if reason == "run_reserve" else 0.0)))
        return Waiting(ahead=ahead, reason=reason, estimate_s=estimate)

    def close(self, grace_s: float) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        deadline = time.monotonic() + grace_s
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        # Whatever is still grading now is cut short by the engine's close: store none of it.
        self.worker.abandon()

    # ------------------------------------------------------------------------------------ internals

    def _commit(self, submission_id: str) -> None:
        with self._cond:
            self._reserved -= 1
            self._queue.append(submission_id)
            self._cond.notify()

    def _cancel(self) -> None:
        with self._cond:
            self._reserved -= 1

    def _retry_after(self, waiting: int) -> int:
        return max(1, min(600, math.ceil(self._grading_s * (waiting + 1) / self.concurrency)))

    def _next(self) -> str | None:
        held_since: float | None = None
        while True:
            with self._cond:
                if self._closing:
                    return None
                now = time.monotonic()
                due = [item for item in self._delayed if item[0] <= now]
                for item in due:
                    self._delayed.remove(item)
                    self._version_held.discard(item[1])
                    self._queue.append(item[1])
                if not self._queue:
                    held_since = None
                    wake = min((t for t, _ in self._delayed), default=now + 60.0)
                    self._cond.wait(max(0.01, wake - now))
                    continue
            held_too_long = held_since is not None and time.monotonic() - held_since >= HOLD_MAX_S
            if not held_too_long and not self._may_start_safely():
                held_since = held_since if held_since is not None else time.monotonic()
                with self._cond:
                    self._holding = True
                    self._cond.wait(HOLD_POLL_S)
                continue
            with self._cond:
                self._holding = False
                if self._closing:
                    return None
                if self._queue:
                    self._running += 1
                    return self._queue.popleft()

    def _may_start_safely(self) -> bool:
        try:
            return self.may_start()
        except Exception:
            log.exception("the may_start hook failed")
            return True

    def _loop(self) -> None:
        while True:
            submission_id = self._next()
            if submission_id is None:
                return
            started = time.monotonic()
            outcome = Outcome.SKIPPED
            try:
                outcome = self.worker.process(submission_id)
            except Exception:  # the store is unreachable: the submission stays stored, recovered at start
                log.exception("dispatching submission %s failed", submission_id)
            delay = None
            if outcome is Outcome.RETRY:
                with contextlib.suppress(Exception):
                    delay = RETRY_DELAY_S * 2 ** max(0, self._attempts(submission_id) - 1)
            with self._cond:
                self._running -= 1
                if outcome is Outcome.GRADED:
                    self._grading_s = 0.8 * self._grading_s + 0.2 * (time.monotonic() - started)
                if outcome is Outcome.DEFERRED and not self._closing:
                    # Its owner has gradings_per_client running: the others queued go first meanwhile.
                    self._delayed.append((time.monotonic() + DEFER_S, submission_id))
                    self._cond.notify()
                if outcome is Outcome.HELD and not self._closing:
                    # Its problem's version is not served here (yet): offered again later.
                    self._delayed.append((time.monotonic() + VERSION_HOLD_DELAY_S, submission_id))
                    self._version_held.add(submission_id)
                    self._cond.notify()
                if outcome is Outcome.RETRY and not self._closing:
                    # Unknown attempts (store down): retry after the first delay; start() recovers it anyway.
                    self._delayed.append((time.monotonic() + (delay or RETRY_DELAY_S), submission_id))
                    self._cond.notify()

    def _attempts(self, submission_id: str) -> int:
        record = self.store.submissions.get(submission_id)
        return record.attempts if record is not None else 1
