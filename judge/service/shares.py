"""Per-client shares of a scarce resource: at most ``cap`` held at once by one API key, or by one client
address without a key, so one client cannot take what every other client needs.

    shares = ClientShares(cap=2, what="Runs")
    with shares.hold(principal):        # raises ShareExceeded (a 429 for the caller) past the cap
        ...

``ClientShares`` counts in this process. ``RedisShares`` counts in Redis (with ``queue_url`` set:
every API node of a deployment shares that Redis), so the cap holds across API nodes; each hold is a
lease that expires after ``lease_s`` if its node dies holding it. ``client_shares(settings, ...)``
picks one.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from judge.core.errors import JudgeError
from judge.service.degraded import Fallback
from judge.service.ratelimit import Principal

if TYPE_CHECKING:
    from judge.core.settings import Settings

log = logging.getLogger(__name__)


class ShareExceeded(JudgeError):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def who(principal: Principal) -> str:
    if principal.key_name is not None:
        return f"API key {principal.key_name!r}"
    return f"client {principal.address}"


class ClientShares:
    #: The shared counters' state (RedisShares); None: counted in this process only.
    fallback: Fallback | None = None

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

    def close(self) -> None:
        """Let go of any connection (nothing in this process)."""


class RedisShares(ClientShares):
    """ClientShares counted in Redis: one sorted set per client (``judge:shares:<what>:<kind>:<id>``),
    a member per hold scored by when its lease expires. Taking a hold drops expired leases, counts and
    adds in one Lua script (atomic across API nodes). When Redis does not answer, this process's own
    count stands in (``fallback``: logged once per outage, Redis tried again every few seconds): a share
    is fairness, not access control, and Run must not fail for it."""

    _ACQUIRE = """
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
    local held = redis.call('ZCARD', KEYS[1])
    if held >= tonumber(ARGV[3]) then return -held - 1 end
    redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
    return held + 1
    """

    def __init__(
        self, url: str, cap: int, *, what: str, retry_after: int = 1, lease_s: float = 900.0
    ) -> None:
        import redis

        super().__init__(cap, what=what, retry_after=retry_after)
        self._redis = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._script: Any = self._redis.register_script(self._ACQUIRE)
        self._health = Fallback(
            "queue_url", f"{what} open per client are counted in each process", probe=self._redis.ping
        )
        self.fallback = self._health
        self.lease_s = lease_s
        self._tokens: dict[tuple[str, str], list[str]] = {}
        self._local: set[tuple[str, str]] = set()  # identities counted here while Redis was away

    def _key(self, principal: Principal) -> str:
        kind, ident = principal.identity
        return f"judge:shares:{self.what.replace(' ', '-')}:{kind}:{ident}"

    def held(self, principal: Principal) -> int:
        if not self._health.usable():
            return super().held(principal)
        try:
            key = self._key(principal)
            self._redis.zremrangebyscore(key, "-inf", time.time())
            count = int(self._redis.zcard(key))
        except Exception as exc:
            self._health.failed(exc)
            return super().held(principal)
        self._health.succeeded()
        return count

    def acquire(self, principal: Principal) -> None:
        from redis.exceptions import RedisError

        token = secrets.token_hex(8)
        now = time.time()
        held: int | None = None
        if self._health.usable():
            try:
                held = int(
                    self._script(
                        keys=[self._key(principal)],
                        args=[now, now + self.lease_s, self.cap, token, int(self.lease_s * 1000) + 1000],
                    )
                )
            except (RedisError, OSError) as exc:
                self._health.failed(exc)
            else:
                self._health.succeeded()
        if held is None:
            super().acquire(principal)
            with self._lock:
                self._tokens.setdefault(principal.identity, []).append("")  # "": a local hold
            return
        if held < 0:
            raise ShareExceeded(
                f"{who(principal)} already has {-held - 1} {self.what} open, the most one client may have",
                self.retry_after,
            )
        with self._lock:
            self._tokens.setdefault(principal.identity, []).append(token)

    def release(self, principal: Principal) -> None:
        with self._lock:
            tokens = self._tokens.get(principal.identity, [])
            token = tokens.pop() if tokens else None
            if not tokens:
                self._tokens.pop(principal.identity, None)
        if token is None:
            return
        if token == "":
            super().release(principal)
            return
        try:
            self._redis.zrem(self._key(principal), token)
        except Exception as exc:  # the lease expires by itself
            log.warning("client shares: releasing a hold in Redis failed (%s); it expires", exc)

    def close(self) -> None:
        self._redis.close()


def client_shares(
    settings: Settings, cap: int, *, what: str, retry_after: int, lease_s: float
) -> ClientShares:
    """Shares counted in the deployment's Redis (``queue_url`` set), else in this process."""
    if settings.queue_url is not None:
        return RedisShares(settings.queue_url, cap, what=what, retry_after=retry_after, lease_s=lease_s)
    return ClientShares(cap, what=what, retry_after=retry_after)


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
