"""Per-client shares of a scarce resource: at most ``cap`` held at once by one API key, or by one client
address without a key, so one client cannot take what every other client needs.

    shares = ClientShares(cap=2, what="Runs")
    with shares.hold(principal):        # raises ShareExceeded (a 429 for the caller) past the cap
        ...

In-process counters: each API node enforces its own (a client spread over N nodes gets N shares).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from judge.errors import JudgeError
from judge.service.ratelimit import Principal


class ShareExceeded(JudgeError):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def who(principal: Principal) -> str:
    if principal.key_name is not None:
        return f"API key {principal.key_name!r}"
    return f"client {principal.address}"


class ClientShares:
    def __init__(self, cap: int, *, what: str, retry_after: int = 1) -> None:
        self.cap = cap
        self.what = what
        self.retry_after = retry_after
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], int] = {}

    def held(self, principal: Principal) -> int:
        with self._lock:
            return self._held.get(principal.identity, 0)

    def total(self) -> int:
        with self._lock:
            return sum(self._held.values())

    def acquire(self, principal: Principal) -> None:
        key = principal.identity
        with self._lock:
            count = self._held.get(key, 0)
            if count >= self.cap:
                raise ShareExceeded(
                    f"{who(principal)} already has {count} {self.what} open, the most one client may have",
                    self.retry_after,
                )
            self._held[key] = count + 1

    def release(self, principal: Principal) -> None:
        key = principal.identity
        with self._lock:
            count = self._held.get(key, 0) - 1
            if count > 0:
                self._held[key] = count
            else:
                self._held.pop(key, None)

    @contextlib.contextmanager
    def hold(self, principal: Principal) -> Iterator[None]:
        self.acquire(principal)
        try:
            yield
        finally:
            self.release(principal)


class KeyedLocks:
    """One lock per client, so a check-then-act on one client's share (count, then store) is atomic in
    this process without serializing other clients."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, str], tuple[threading.Lock, int]] = {}

    @contextlib.contextmanager
    def holding(self, principal: Principal) -> Iterator[None]:
        key = principal.identity
        with self._lock:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._lock:
                lock, users = self._locks[key]
                if users > 1:
                    self._locks[key] = (lock, users - 1)
                else:
                    del self._locks[key]
