"""ASGI middleware: a request body must keep arriving. A client that pauses longer than ``timeout_s``
between two pieces of its body (or before the first) gets 408 in the API's error shape.

Only the body is timed: once its last piece has arrived, ``receive`` is passed through untimed, since a
streaming response (server-sent events) waits on it for the client's disconnect.
"""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTimeout:
    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        done = False

        async def timed() -> Message:
            nonlocal done
            if done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.timeout_s)
            except TimeoutError:
                done = True
                raise HTTPException(
                    408,
                    f"the request body stopped arriving for {self.timeout_s:g} s",
                    headers={"Connection": "close"},  # the rest of the body is never read
                ) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                done = True
            return message

        await self.app(scope, timed, send)
