"""The retention sweep: forgets expired idempotency keys and, with ``retention_days`` set, removes
finished submissions older than that (with their events and callback records), every
``retention_sweep_s`` seconds on a background thread of the API process.

    Retention(store, settings).sweep()     one sweep now: (submissions removed, idempotency keys removed)
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from judge.core.settings import Settings
from judge.store import Store
from judge.store.models import utcnow

log = logging.getLogger(__name__)


class Retention:
    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.retention_days = settings.retention_days
        self.idempotency_ttl_s = settings.idempotency_ttl_s
        self.period_s = settings.retention_sweep_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> tuple[int, int]:
        now = utcnow()
        removed = 0
        if self.retention_days is not None:
            removed = self.store.deletion.purge_finished(now - timedelta(days=self.retention_days))
        keys = self.store.idempotency.expire(now - timedelta(seconds=self.idempotency_ttl_s))
        if removed or keys:
            log.info("retention: removed %d finished submissions, %d idempotency keys", removed, keys)
        return removed, keys

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.sweep()
            except Exception as exc:  # the database is down: the next sweep tries again
                log.warning("retention sweep failed: %s: %s", type(exc).__name__, exc)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="retention", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
