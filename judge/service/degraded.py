"""Dependencies the request path consults, and what the service does while one does not answer.

    fallback = Fallback("rate_limit_storage", "rate limits counted in each process", probe=storage_check)
    if fallback.usable():            # up, or down long enough that one caller should try it again
        try:
            use_it()
            fallback.succeeded()
        except StorageError as exc:
            fallback.failed(exc)     # logged once per outage; the caller uses its stand-in
    fallback.outage()                # None, or since when and why (for /readyz and /metrics)

A dependency that does not answer degrades the service, never fails a request with a 500: the rate limiter
counts in the process (``ratelimit.RateLimiter``), Run and stream shares likewise (``shares.RedisShares``),
and a request that needs the database gets a 503 with ``Retry-After`` (``errors.install``). Each outage is
logged twice, when it begins and when it ends, however many requests meet it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import limits.errors
import sqlalchemy.exc

log = logging.getLogger(__name__)

#: What a request meets when the database does not answer (a connection refused or lost, a pool timeout,
#: SQLite's busy database): the request is answered 503 with Retry-After, not 500.
DATABASE_ERRORS: tuple[type[Exception], ...] = (
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.TimeoutError,
    sqlalchemy.exc.DisconnectionError,
)


#: What a request meets when Redis (the broker, shared counters) does not answer.
def _redis_errors() -> tuple[type[Exception], ...]:
    """The shared counters' storage error, and the broker's connection errors when the [distributed]
    extra is installed (without it no broker or Redis is configured, so none of them can be met)."""
    try:
        import kombu.exceptions
        import redis.exceptions
    except ModuleNotFoundError:
        return (limits.errors.StorageError,)
    return (
        redis.exceptions.ConnectionError,
        redis.exceptions.TimeoutError,
        limits.errors.StorageError,
        kombu.exceptions.OperationalError,
    )


REDIS_ERRORS: tuple[type[Exception], ...] = _redis_errors()
#: Retry-After of a 503 answered because a dependency does not answer.
UNAVAILABLE_RETRY_S = 5

#: Seconds between tries of a dependency that is down (by a request that needs it, or by a probe).
RETRY_S = 2.0


@dataclass(frozen=True)
class Outage:
    dependency: str
    #: What the service does meanwhile, in an operator's words.
    effect: str
    #: The first error of the outage (its type and message, cut short).
    reason: str
    since: datetime
    seconds: float


class Fallback:
    """The state of one dependency: up, or down since a time for a reason. ``probe`` (raises or returns
    False while the dependency does not answer) lets ``outage()`` notice the recovery without a request."""

    def __init__(
        self,
        dependency: str,
        effect: str,
        *,
        probe: Callable[[], object] | None = None,
        retry_s: float = RETRY_S,
    ) -> None:
        self.dependency = dependency
        self.effect = effect
        self.retry_s = retry_s
        self._probe = probe
        self._lock = threading.Lock()
        self._down: tuple[float, datetime, str] | None = None  # (monotonic, wall clock, reason)
        self._next_try = 0.0
        #: Called with (dependency, down) at each change of state (metrics).
        self.listeners: list[Callable[[str, bool], None]] = []

    @property
    def down(self) -> bool:
        return self._down is not None

    def usable(self) -> bool:
        """True when the dependency is up, or when it is down and a try is due (the caller that gets True
        tries it, the others keep using the stand-in until ``retry_s`` has passed again)."""
        with self._lock:
            if self._down is None:
                return True
            now = time.monotonic()
            if now < self._next_try:
                return False
            self._next_try = now + self.retry_s
            return True

    def failed(self, exc: BaseException) -> None:
        reason = f"{type(exc).__name__}: {exc}"[:300]
        with self._lock:
            self._next_try = time.monotonic() + self.retry_s
            if self._down is not None:
                return
            self._down = (time.monotonic(), datetime.now(UTC), reason)
        log.warning("%s does not answer (%s); meanwhile %s", self.dependency, reason, self.effect)
        self._tell(True)

    def succeeded(self) -> None:
        with self._lock:
            if self._down is None:
                return
            began = self._down[0]
            self._down = None
        log.warning("%s answers again after %.0f s of outage", self.dependency, time.monotonic() - began)
        self._tell(False)

    def outage(self) -> Outage | None:
        """The current outage, or None; with a probe, a due try first (so a recovery shows without
        traffic)."""
        if self._down is not None and self._probe is not None and self.usable():
            try:
                ok = self._probe()
            except Exception as exc:
                self.failed(exc)
            else:
                if ok is False:
                    self.failed(ConnectionError("the probe got no answer"))
                else:
                    self.succeeded()
        down = self._down
        if down is None:
            return None
        return Outage(self.dependency, self.effect, down[2], down[1], time.monotonic() - down[0])

    def _tell(self, down: bool) -> None:
        for listener in list(self.listeners):
            listener(self.dependency, down)
