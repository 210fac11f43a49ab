"""One event stream's share of its client's streams (``streams_per_client``), released exactly once: when
the stream ends, or after the response if the stream never ran."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

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
