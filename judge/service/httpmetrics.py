"""Latency of every HTTP request by method, route template (``/api/v1/submissions/{submission_id}``,
never the raw path: ids would make one series per submission) and status, as the
``judge_http_request_seconds`` histogram. Pure ASGI, so it adds nothing to a streaming response."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RequestTimer:
    def __init__(self, app: ASGIApp, *, metrics: Callable[[], Any]) -> None:
        self.app = app
        self.metrics = metrics  # the service's Metrics, looked up per request (built with the app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            try:
                metrics = self.metrics()
            except Exception:  # the services are not built yet (start-up) or gone (shutdown)
                metrics = None
            if metrics is not None:
                metrics.http_seconds.labels(scope.get("method", "?"), template, str(status)).observe(
                    time.perf_counter() - began
                )
