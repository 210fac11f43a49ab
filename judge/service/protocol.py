"""The HTTP/1.1 protocol ``judge serve`` runs: uvicorn's h11 protocol with the bounds a server on the open
internet needs, whether or not a reverse proxy sits in front.

- a connection limit (``max_connections``, kept below the open-files limit by ``server.py``) and a
  per-address one (``max_per_address``; addresses in ``exempt``, the trusted proxies, are not counted,
  and ``exempt=None`` exempts every address): a connection past either is closed at once, before it can
  hold a file descriptor for long, so one address cannot take every connection;
- a header timeout (``header_timeout_s``): a client that has not sent a whole request line and headers
  this long after connecting, or after the previous response, gets a 408 and the connection is closed
  (uvicorn itself bounds only the idle time between requests, and any byte received cancels that);
- a budget for connections still sending their headers (``max_waiting``, half of ``max_connections`` by
  default): past it, or when every connection is taken, a new connection closes one that is waiting for
  its headers (408) instead of being refused: the longest-waiting of the address with the most
  connections waiting. A slowloris spread over many addresses then holds at most that budget, turned over
  by its own new connections, while a client that sends its headers at once (one connection, waiting
  for milliseconds) is served: the rest of the connections stay for requests whose headers arrived
  (docs/api.md gives the measure: bench/bench_slowloris.py);
- a malformed request (``Content-Length: -1``, a bad request line, headers past the h11 size limit) is
  answered 400 in the API's error shape, not uvicorn's plain text.

The request body's own timeout is the ASGI middleware ``judge.service.bodytimeout``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("judge.service.protocol")


def error_bytes(status: int, reason: str, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response in the API's error shape that closes the connection."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


_BAD_REQUEST = error_bytes(
    400,
    "Bad Request",
    "bad_request",
    "the request is not valid HTTP/1.1 (request line, a header, its size, or Content-Length)",
)


class Waiting:
    """The connections waiting for a request's headers, by client address, the longest-waiting first."""

    def __init__(self) -> None:
        self.by_address: dict[str, dict[GuardedH11Protocol, None]] = {}
        self.total = 0

    def add(self, address: str, connection: GuardedH11Protocol) -> None:
        self.discard(address, connection)
        self.by_address.setdefault(address, {})[connection] = None
        self.total += 1

    def discard(self, address: str, connection: GuardedH11Protocol) -> None:
        group = self.by_address.get(address)
        if group is not None and group.pop(connection, False) is None:
            self.total -= 1
            if not group:
                del self.by_address[address]

    def victim(self) -> GuardedH11Protocol | None:
        """The longest-waiting connection of the address with the most waiting (taken out), or None."""
        if not self.by_address:
            return None
        address = max(self.by_address, key=lambda a: len(self.by_address[a]))
        connection = next(iter(self.by_address[address]))
        self.discard(address, connection)
        return connection


class GuardedH11Protocol(H11Protocol):
    """Set the class attributes with ``configured`` (uvicorn builds one instance per connection)."""

    max_connections: ClassVar[int] = 768
    max_per_address: ClassVar[int] = 64
    exempt: ClassVar[frozenset[str] | None] = frozenset()
    header_timeout_s: ClassVar[float] = 10.0
    #: Connections still sending a request's headers, at most (None: half of max_connections).
    max_waiting: ClassVar[int | None] = None
    #: Open connections per client address, shared by every connection of this configured class.
    per_address: ClassVar[dict[str, int]] = {}
    #: The connections waiting for a request's headers.
    waiting: ClassVar[Waiting] = Waiting()
    #: Connections closed to make room whose close has not completed yet (still in ``connections``).
    evicted: ClassVar[set[GuardedH11Protocol]] = set()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._counted: str | None = None
        self._address = ""

    @classmethod
    def configured(
        cls,
        *,
        max_connections: int,
        header_timeout_s: float,
        max_per_address: int = 64,
        exempt: frozenset[str] | None = frozenset(),
        max_waiting: int | None = None,
    ) -> type[GuardedH11Protocol]:
        return type(
            "GuardedH11Protocol",
            (cls,),
            {
                "max_connections": max_connections,
                "max_per_address": max_per_address,
                "exempt": exempt,
                "header_timeout_s": header_timeout_s,
                "max_waiting": max_waiting,
                "per_address": {},
                "waiting": Waiting(),
                "evicted": set(),
            },
        )

    # ------------------------------------------------------------------------------ connection limits

    def _refusal(self, address: str | None) -> str | None:
        counted = address is not None and self.exempt is not None and address not in self.exempt
        if counted and self.per_address.get(str(address), 0) >= self.max_per_address:
            return f"{address} holds {self.max_per_address} connections, the most one address may"
        budget = self.max_waiting if self.max_waiting is not None else max(1, self.max_connections // 2)
        if self.waiting.total >= budget:
            self._evict_longest_waiting()
        full = len(self.connections) - len(self.evicted) >= self.max_connections
        if full and not self._evict_longest_waiting():
            return f"{len(self.connections)} connections open, the most allowed"
        return None

    def _evict_longest_waiting(self) -> bool:
        """Close a connection waiting for its headers (408): the longest-waiting of the address with the
        most waiting. Room for a new one."""
        while (victim := self.waiting.victim()) is not None:
            if victim.transport.is_closing():
                continue
            victim._cancel_header_timer()
            self.evicted.add(victim)
            message = "the request's headers were too slow while others waited to connect"
            victim.transport.write(error_bytes(408, "Request Timeout", "request_timeout", message))
            victim.transport.close()
            return True
        return False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else None
        self._address = address or ""
        refusal = self._refusal(address)
        if refusal is not None:
            log.warning("connection refused: %s", refusal)
            self.transport = transport
            transport.abort()
            return
        super().connection_made(transport)
        if address is not None and self.exempt is not None and address not in self.exempt:
            self._counted = address
            self.per_address[address] = self.per_address.get(address, 0) + 1
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self.waiting.discard(self._address, self)
        self.evicted.discard(self)
        if self._counted is not None:
            left = self.per_address.get(self._counted, 1) - 1
            if left > 0:
                self.per_address[self._counted] = left
            else:
                self.per_address.pop(self._counted, None)
            self._counted = None
        if self not in self.connections:  # refused at connection_made: nothing of ours was set up
            return
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self not in self.connections:
            return
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a whole request line and headers arrived
            self._cancel_header_timer()
            self.waiting.discard(self._address, self)

    # ------------------------------------------------------------------------------ header timeout

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request's headers must come in time too

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)
        self.waiting.add(self._address, self)  # the newest waiting of its address

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return  # a request is being served (pipelined data arrived meanwhile)
        message = f"the request's headers did not arrive within {self.header_timeout_s:g} s"
        self.transport.write(error_bytes(408, "Request Timeout", "request_timeout", message))
        self.transport.close()

    # ------------------------------------------------------------------------------ malformed requests

    def send_400_response(self, msg: str) -> None:
        self.transport.write(_BAD_REQUEST)
        self.transport.close()
