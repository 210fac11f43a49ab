"""ASGI middleware: refuse request bodies above ``max_bytes`` before anything parses them (413).

A declared Content-Length over the limit is refused at once, without reading; a body sent without one
(chunked) is counted as it arrives and refused as soon as it passes the limit.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judge.service.errors import error_response
from judge.service.schemas import ErrorInfo


def _too_large(max_bytes: int) -> str:
    return f"the request body is larger than {max_bytes} bytes"


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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
            if length > self.max_bytes:
                info = ErrorInfo(
                    code="limit_exceeded", message=_too_large(self.max_bytes), limit="max_body_bytes"
                )
                await error_response(413, info)(scope, receive, send)
                return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, _too_large(self.max_bytes))
            return message

        await self.app(scope, limited, send)
