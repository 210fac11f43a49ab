"""Per-key and per-client-address rate limits with the ``limits`` library (moving windows).

Authenticated requests count against their key's limit, anonymous ones against their client address's.
A request with a wrong or malformed key counts against its address's ``failed_auth`` limit before it is
answered, so guessing keys is slowed like any other traffic.
The counters live in ``rate_limit_storage`` (``memory://`` for one process; a Redis URL shares them
between API nodes).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse_many
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter


@dataclass(frozen=True)
class Principal:
    """Who is asking: the API key's name when one was presented, and the client's address."""

    key_name: str | None
    address: str

    @property
    def identity(self) -> tuple[str, str]:
        return ("key", self.key_name) if self.key_name is not None else ("address", self.address)


class RateLimiter:
    def __init__(
        self, storage_uri: str, per_key: str, per_address: str, failed_auth: str = "20/minute"
    ) -> None:
        self._limiter = MovingWindowRateLimiter(storage_from_string(storage_uri))
        self._per_key = parse_many(per_key)
        self._per_address = parse_many(per_address)
        self._failed_auth = parse_many(failed_auth)

    def hit_failed_auth(self, address: str) -> int | None:
        """Count one failed authentication of ``address``; None when allowed, else seconds to wait."""
        return self._hit(self._failed_auth, "failed-auth", address)

    def _hit(self, items: list[RateLimitItem], kind: str, ident: str) -> int | None:
        for item in items:
            if not self._limiter.hit(item, kind, ident):
                stats = self._limiter.get_window_stats(item, kind, ident)
                return max(1, math.ceil(stats.reset_time - time.time()))
        return None

    def hit(self, principal: Principal) -> int | None:
        """Count one request; None when allowed, else the seconds to wait (for Retry-After)."""
        kind, ident = principal.identity
        items = self._per_key if principal.key_name is not None else self._per_address
        return self._hit(items, kind, ident)
