"""Store a new submission once: the use-case behind ``POST /api/submissions`` (and each item of a batch).

    intake.accept(new, idempotency)  (record, True): stored and queued; (the earlier record, False): a retry
                                     of the same ``Idempotency-Key`` and body within the key's lifetime

A retry is found by its key (scoped to its owner) before anything is stored; a concurrent request that
stores first wins (the key's unique row) and this one answers its submission. The new row takes a place
in the dispatcher's queue (``reserve``: ``QueueFull`` when there is none) and is counted against its
owner's caps in the store's transaction (``QuotaExceeded``: nothing stored, the place given back).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from judge.dispatch.base import Reservation
from judge.store import (
    IdempotencyHit,
    IdempotencyKey,
    IdempotencyTaken,
    NewSubmission,
    Quota,
    Store,
    SubmissionRecord,
)
from judge.store.models import utcnow
from judge.submissions.refusals import IdempotencyConflict


def body_hash(body: dict[str, Any]) -> str:
    """The SHA-256 of a request body's canonical JSON (what an ``Idempotency-Key`` records)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def scope(kind: str, ident: str) -> str:
    """The scope of an owner's idempotency keys: an API key's id, or a keyless client's address."""
    return f"{kind}:{ident}"[:200]


@dataclass(frozen=True)
class Intake:
    """The collaborators of one acceptance: the store, the dispatcher's ``reserve``, the owner's caps
    (``quota``), how long an idempotency key lives, and ``owner_lock``: held over the reservation and
    the store's count, so one owner's concurrent requests in this process are counted one by one."""

    store: Store
    reserve: Callable[[], Reservation]
    quota: Quota
    idempotency_ttl_s: float
    owner_lock: Callable[[], AbstractContextManager[object]]

    def accept(
        self, new: Callable[[], NewSubmission], idempotency: IdempotencyKey | None
    ) -> tuple[SubmissionRecord, bool]:
        """Store and queue the submission ``new()`` builds, or answer the earlier one of the same key and
        body. Raises IdempotencyConflict, QueueFull or QuotaExceeded (nothing stored)."""
        since = utcnow() - timedelta(seconds=self.idempotency_ttl_s)
        if idempotency is not None:
            hit = self.store.idempotency.live(idempotency.scope, idempotency.key, since)
            if hit is not None:
                return self._replayed(hit, idempotency), False
            self.store.idempotency.expire(since, idempotency.scope, idempotency.key)
        try:
            return self._stored(new(), idempotency), True
        except IdempotencyTaken:
            assert idempotency is not None
            return self._concurrent(idempotency, since), False

    def _concurrent(self, idempotency: IdempotencyKey, since: datetime) -> SubmissionRecord:
        hit = self.store.idempotency.live(idempotency.scope, idempotency.key, since)
        if hit is None:
            raise IdempotencyConflict("a concurrent request holds this key") from None
        return self._replayed(hit, idempotency)

    def _replayed(self, hit: IdempotencyHit, idempotency: IdempotencyKey) -> SubmissionRecord:
        """The submission an idempotency key already names (same body), or IdempotencyConflict."""
        if hit.body_hash != idempotency.body_hash:
            key = idempotency.key
            key = key.split("\t")[1] if key.startswith("batch\t") else key  # a batch item's: the batch's
            raise IdempotencyConflict(
                f"Idempotency-Key {key[:64]!r} was used for another request body (at "
                f"{hit.created_at.isoformat()}); use a new key for a new submission",
                names_key=True,
            )
        record = self.store.submissions.get(hit.submission_id)
        if record is None:  # deleted between the two reads: its key went with it
            raise IdempotencyConflict("the submission of this Idempotency-Key was deleted")
        return record

    def _stored(self, new: NewSubmission, idempotency: IdempotencyKey | None) -> SubmissionRecord:
        """Store and queue ``new``: a place in the queue (queue_size) and the owner's caps
        (submissions_per_client, queue_share) counted with the new row. Raises QueueFull, QuotaExceeded
        (nothing stored, the place given back) or IdempotencyTaken."""
        with self.owner_lock():  # the store counts the caps with the new row (across nodes)
            reservation = self.reserve()
            try:
                record = self.store.submissions.create(new, idempotency, self.quota)
            except BaseException:  # QuotaExceeded among them: the place goes back
                reservation.cancel()
                raise
        reservation.commit(record.id)
        return record
