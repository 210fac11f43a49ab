"""ASGI middleware: refuse request bodies above ``max_bytes`` before anything parses them (413), and a
request's header fields above ``max_header_bytes`` (431, the 16 KiB README.md documents).

h11 bounds only an incomplete request head (``h11_max_incomplete_event_size``, server.py): a head that
arrives whole in one read is parsed whatever its size, so the size is checked here, on every request.

A declared Content-Length over the limit is refused at once, without reading; a body sent without one
(chunked) is counted as it arrives and refused as soon as it passes the limit.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge.service.api_errors import error_response
from judge.service.schemas import ErrorInfo

#: Largest header fields of a request, in bytes as sent (``name: value\r\n`` each).
MAX_HEADER_BYTES = 16 * 1024


def head_bytes(scope: Scope) -> int:
    """The header fields' size as the client sent them (``name: value\r\n`` each). The request line is
    not counted: its query parameters are bounded one by one (a 422 naming the parameter), and the
    whole head by h11 while it arrives."""
    return sum(len(name) + len(value) + 4 for name, value in scope.get("headers", ()))


def _too_large(max_bytes: int) -> str:
    return f"the request body is larger than {max_bytes} bytes"


class BodySizeLimit:
    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        max_header_bytes: int = MAX_HEADER_BYTES,
        wider: tuple[tuple[str, int, str], ...] = (),
    ) -> None:
        """``wider``: (path prefix, bytes, setting) for routes whose bodies may be larger (a problem
        archive), each limit named by its setting."""
        self.app = app
        self.max_bytes = max_bytes
        self.max_header_bytes = max_header_bytes
        self.wider = wider

    def _limit(self, scope: Scope) -> tuple[int, str]:
        path = str(scope.get("path", ""))
        for prefix, max_bytes, setting in self.wider:
            if path.startswith(prefix):
                return max_bytes, setting
        return self.max_bytes, "max_body_bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        size = head_bytes(scope)
        if size > self.max_header_bytes:
            info = ErrorInfo(
                code="limit_exceeded",
                message=f"the request's headers are {size} bytes, more than {self.max_header_bytes}",
                limit="max_header_bytes",
            )
            await error_response(431, info, {"Connection": "close"})(scope, receive, send)
            return
        max_bytes, setting = self._limit(scope)
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                declared = value
                break
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                length = -1
            if length < 0:
                info = ErrorInfo(code="bad_request", message="Content-Length is not a non-negative integer")
                await error_response(400, info)(scope, receive, send)
                return
            if length > max_bytes:
                info = ErrorInfo(code="limit_exceeded", message=_too_large(max_bytes), limit=setting)
                await error_response(413, info)(scope, receive, send)
                return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > max_bytes:
                    raise HTTPException(413, _too_large(max_bytes))
            return message

        await self.app(scope, limited, send)
