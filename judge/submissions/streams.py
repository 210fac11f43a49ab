"""A submission's event stream without its wire format: one stream's share of its client's streams
(``streams_per_client``), released exactly once (when the stream ends, or after the response if it never
ran), and the events it sends (``follow``), up to the final one or the longest a stream lives."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from judge.dispatch.events import FINAL_KINDS, Subscription
from judge.store import EventRecord

Owner = TypeVar("Owner", contravariant=True)


class Shares(Protocol[Owner]):
    def release(self, owner: Owner) -> None: ...


class StreamLease(Generic[Owner]):
    """The share ``owner`` acquired from ``shares`` for one stream."""

    def __init__(self, shares: Shares[Owner], owner: Owner) -> None:
        self._shares = shares
        self._owner = owner
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._shares.release(self._owner)


async def follow(
    subscription: Subscription,
    read: Callable[[int], Awaitable[list[EventRecord]]],
    after: int,
    events: list[EventRecord],
    poll_s: float,
    deadline: float,
) -> AsyncIterator[EventRecord]:
    """A submission's events in order: ``events`` (the first read, of the events after ``after``), then
    those ``read(after)`` finds past the last one sent (waiting on ``subscription`` for a notice, at most
    ``poll_s``, while none is new); ends after a final event (``result``, ``failed``) or at ``deadline``
    (of ``time.monotonic()``: the client resumes with Last-Event-ID)."""
    while True:
        for event in events:
            after = event.id
            yield event
            if event.kind in FINAL_KINDS:
                return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return  # the longest a stream lives
        if not events:
            await subscription.wait(min(poll_s, remaining))
        events = await read(after)
