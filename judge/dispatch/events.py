"""Per-case progress: stored with the submission (the truth), announced to whoever is waiting for it.

``ProgressFeed`` is the seam the SSE endpoint and ``?wait=`` read through. This implementation stores events
in the database (``Store.events.append``) and wakes waiters in this process at once with a ``Notifier``;
waiters also re-read the store every ``poll_s`` seconds, so events written by another process (a grading
node) are seen too. A distributed deployment swaps the ``Notifier`` for its broker's pub/sub.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from judge.store import Claim, EventRecord, Store

#: Event kinds. ``result`` and ``failed`` are final: exactly one per finished submission.
STATUS, CASE, RESULT, FAILED = "status", "case", "result", "failed"
FINAL_KINDS = frozenset({RESULT, FAILED})


class Subscription:
    """Wakes one waiter when its key is notified. Register BEFORE reading, so no notice falls between."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._event = asyncio.Event()

    def _set(self) -> None:
        self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float) -> bool:
        """True when notified within ``timeout`` seconds (and resets), False on timeout."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            return False
        self._event.clear()
        return True


class Notifier:
    """Thread-safe notices from grading threads to asyncio waiters, by submission id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = {}

    @contextlib.contextmanager
    def subscribe(self, key: str) -> Iterator[Subscription]:
        sub = Subscription(asyncio.get_running_loop())
        with self._lock:
            self._subs.setdefault(key, set()).add(sub)
        try:
            yield sub
        finally:
            with self._lock:
                subs = self._subs.get(key)
                if subs is not None:
                    subs.discard(sub)
                    if not subs:
                        del self._subs[key]

    def notify(self, key: str) -> None:
        with self._lock:
            subs = list(self._subs.get(key, ()))
        for sub in subs:
            with contextlib.suppress(RuntimeError):  # the waiter's loop has closed
                sub._set()

    def waiting(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._subs.values())


class ProgressFeed:
    """Store events of a claimed attempt and wake the streams that follow the submission."""

    def __init__(self, store: Store, notifier: Notifier | None = None, *, poll_s: float = 1.0) -> None:
        self.store = store
        self.notifier = notifier or Notifier()
        self.poll_s = poll_s

    def publish(self, claim: Claim, kind: str, data: dict[str, Any]) -> int | None:
        event_id = self.store.events.append(claim, kind, data)
        self.notifier.notify(claim.submission_id)
        return event_id

    def announce(self, submission_id: str) -> None:
        """The submission's stored state changed (finished, failed): wake its waiters."""
        self.notifier.notify(submission_id)

    def read(self, submission_id: str, after: int = 0) -> list[EventRecord]:
        return self.store.events.after(submission_id, after)

    def subscribe(self, submission_id: str) -> contextlib.AbstractContextManager[Subscription]:
        return self.notifier.subscribe(submission_id)
