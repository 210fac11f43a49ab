"""Per-key and per-client-address rate limits with the ``limits`` library (moving windows).

Authenticated requests count against their key's limit, anonymous ones against their client address's.
A request with a wrong or malformed key counts against its address's ``failed_auth`` limit before it is
answered, so guessing keys is slowed like any other traffic.
The counters live in ``rate_limit_storage`` (``memory://`` for one process; a Redis URL shares them
between API nodes). While a shared storage does not answer, each process counts the same limits in its
own memory (``judge.service.degraded``: logged once per outage, shown in ``/readyz`` and ``/metrics``) and
goes back to the shared counters as soon as they answer again: a rate limit is never a reason for a 500.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from limits import RateLimitItem, parse_many
from limits.errors import StorageError
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter
from limits.util import WindowStats
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge.service.degraded import Fallback

T = TypeVar("T")
#: Seconds a shared counter storage gets to connect and to answer one command.
STORAGE_TIMEOUT_S = 2.0

#: Where a request's rate-limit window is kept for RateLimitHeaders (``request.state``).
STATE_KEY = "ratelimit"


@dataclass(frozen=True)
class Principal:
    """Who is asking: the API key's name and stable id when one was presented, and the client's address.
    Limits, shares and ownership follow the id (a renamed key keeps them; a reassigned name does not)."""

    key_name: str | None
    address: str
    key_id: str | None = None
    #: The key's ``tenant=`` (None: the key is its own tenant: ``tenant`` is its id).
    tenant_name: str | None = None

    @property
    def tenant(self) -> str | None:
        """The tenant the caller belongs to (problems scoped to it are visible); None: anonymous."""
        return self.tenant_name or self.key_id

    def __post_init__(self) -> None:
        if self.key_name is not None and self.key_id is None:
            object.__setattr__(self, "key_id", self.key_name)  # a key without an id owns by its name

    @property
    def identity(self) -> tuple[str, str]:
        return ("key", self.key_id) if self.key_id is not None else ("address", self.address)


class RateLimiter:
    def __init__(
        self,
        storage_uri: str,
        per_key: str,
        per_address: str,
        failed_auth: str = "20/minute",
        signin: str = "10/minute;100/hour",
    ) -> None:
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._shared: MovingWindowRateLimiter | None = None
        #: The shared storage's state; None when the counters are this process's anyway.
        self.fallback: Fallback | None = None
        if not storage_uri.startswith("memory://"):
            options: dict[str, float | str | bool] = {"wrap_exceptions": True}
            if storage_uri.startswith(("redis", "rediss", "valkey")):
                options |= {"socket_timeout": STORAGE_TIMEOUT_S, "socket_connect_timeout": STORAGE_TIMEOUT_S}
            storage = storage_from_string(storage_uri, **options)
            self._shared = MovingWindowRateLimiter(storage)
            self.fallback = Fallback(
                "rate_limit_storage",
                "rate limits are counted in each process",
                probe=storage.check,
            )
        self._per_key = parse_many(per_key)
        self._per_address = parse_many(per_address)
        self._failed_auth = parse_many(failed_auth)
        self._signin = parse_many(signin)

    def _counted(self, use: Callable[[MovingWindowRateLimiter], T]) -> T:
        """``use`` on the shared counters, or on this process's while they do not answer."""
        if self._shared is not None and self.fallback is not None and self.fallback.usable():
            try:
                result = use(self._shared)
            except StorageError as exc:
                self.fallback.failed(exc.storage_error)
            else:
                self.fallback.succeeded()
                return result
        return use(self._local)

    def hit_signin(self, address: str, name: str | None = None) -> int | None:
        """Count one sign-in (or sign-up) attempt of ``address``, and of the account ``name`` when given
        (guessing one account's password from many addresses is slowed too); None when allowed, else
        seconds to wait."""
        waits = [self._hit(self._signin, "signin-address", address)]
        if name is not None:
            waits.append(self._hit(self._signin, "signin-name", name.lower()))
        refused = [wait for wait in waits if wait is not None]
        return max(refused) if refused else None

    def hit_failed_auth(self, address: str) -> int | None:
        """Count one failed authentication of ``address``; None when allowed, else seconds to wait."""
        return self._hit(self._failed_auth, "failed-auth", address)

    def _hit(self, items: list[RateLimitItem], kind: str, ident: str) -> int | None:
        for item in items:
            if not self._hit_one(item, kind, ident):
                stats = self._stats(item, kind, ident)
                return max(1, math.ceil(stats.reset_time - time.time()))
        return None

    def _hit_one(self, item: RateLimitItem, kind: str, ident: str) -> bool:
        return self._counted(lambda limiter: limiter.hit(item, kind, ident))

    def _stats(self, item: RateLimitItem, kind: str, ident: str) -> WindowStats:
        return self._counted(lambda limiter: limiter.get_window_stats(item, kind, ident))

    def hit(self, principal: Principal) -> int | None:
        """Count one request; None when allowed, else the seconds to wait (for Retry-After)."""
        kind, ident = principal.identity
        items = self._per_key if principal.key_name is not None else self._per_address
        return self._hit(items, kind, ident)

    def window(self, principal: Principal) -> tuple[int, int, int]:
        """(limit, remaining, seconds to the reset) of the caller's tightest window, after its hits."""
        kind, ident = principal.identity
        items = self._per_key if principal.key_name is not None else self._per_address
        best: tuple[int, int, int] | None = None
        for item in items:
            stats = self._stats(item, kind, ident)
            reset = max(0, math.ceil(stats.reset_time - time.time()))
            entry = (item.amount, max(0, stats.remaining), reset)
            if best is None or entry[1] < best[1]:
                best = entry
        assert best is not None
        return best


def rate_limit_headers(window: tuple[int, int, int]) -> dict[str, str]:
    """``RateLimit-*`` (the IETF draft's names) and the ``X-RateLimit-*`` most clients know."""
    limit, remaining, reset = (str(v) for v in window)
    return {
        "RateLimit-Limit": limit,
        "RateLimit-Remaining": remaining,
        "RateLimit-Reset": reset,
        "X-RateLimit-Limit": limit,
        "X-RateLimit-Remaining": remaining,
        "X-RateLimit-Reset": reset,
    }


class RateLimitHeaders:
    """Adds the rate-limit headers to every response of a request that was counted (success or not)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})

        async def sending(message: Message) -> None:
            window = state.get(STATE_KEY)
            if message["type"] == "http.response.start" and window is not None:
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [
                    (name.lower().encode(), value.encode())
                    for name, value in rate_limit_headers(window).items()
                    if name.lower().encode() not in present
                ]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, sending)
