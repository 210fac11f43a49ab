"""POST /api/v1/problems/{slug}/run/events: a Run whose progress streams as server-sent events, and that
stops when its caller goes away.

The body is the Run body (``RunRequest``) and is checked exactly as ``POST .../run`` checks it: a bad body,
code or input, a client over its share or no Run capacity answer with their usual status before any
stream opens. Then the answer is ``text/event-stream``:

- ``progress``: ``judge.core.progress.RunProgress`` as JSON, each time the phase changes: ``waiting`` (the
judge
  is still warming its sandbox workers; ``warmup`` counts what is starting, waiting its turn or being
  retried, ``detail`` says it in the operator's words), ``loading``, ``tracing``, ``compiling`` and
  ``running`` with counts of programs traced and compiled and cases run;
- ``result``: ``{"result": ...}``, the body ``POST .../run`` answers; the stream then ends;
- ``error``: ``{"status", "error": {"code", "message", ...}}``, what ``POST .../run`` would have answered
  (``judge.service.run_errors``: an input the converter rejects, 422; the problem's own fault, 500; the
  sandbox failing, 503); the stream then ends.

Cancel: closing the stream (a page aborting its fetch, or going away) sets the Run's cancel event. The
monitor stops within half a second: the tracer is killed and every executor of the pair is replaced, not
reused (one may be running a program that does not stop). A Run waiting for a warm worker stops waiting.
The Run's capacity is held until the sandbox work has stopped, not only until the stream closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from judge.core.progress import RunProgress
from judge.core.results import result_json
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.gate import RunBusy
from judge.service.routes.runs import checked_run
from judge.service.run_errors import RUN_FAILURES, run_error
from judge.service.schemas import API_ERRORS, ErrorBody, RunRequest, error_responses
from judge.service.shares import ClientShares, ShareExceeded
from sandbox.errors import Cancelled

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/problems", tags=["runs"], responses=API_ERRORS)

#: Seconds between keep-alive comments while a Run is quiet (a long compile).
PING_S = 10


def _error(exc: ApiError) -> dict[str, Any]:
    return {"status": exc.status, "error": exc.info.model_dump(exclude_none=True)}


@router.post(
    "/{slug}/run/events",
    summary="Run with progress as server-sent events; closing the stream cancels the Run",
    description="The Run of `POST /problems/{slug}/run`, answered as `text/event-stream`: `progress` events "
    "(phase `waiting` while the judge warms up, with its `warmup` fields, then `loading`, `tracing`, "
    "`compiling`, `running` with counts), then one `result` (the Run's body) or `error` (`status` and the "
    "error body). Closing the stream stops the sandbox work.",
    response_class=EventSourceResponse,
    responses={
        **error_responses(413),
        200: {"content": {"text/event-stream": {}}, "description": "The progress, then the result."},
        404: {"model": ErrorBody, "description": "No problem with that slug."},
        422: {
            "model": ErrorBody,
            "description": "A malformed body, code or input (argument and path named).",
        },
        429: {"model": ErrorBody, "description": "Rate limit, or every sandbox worker busy (Retry-After)."},
    },
)
async def run_events(
    request: Request, body: RunRequest, problem: ProblemDep, services: ServicesDep, caller: CallerDep
) -> EventSourceResponse:
    code = checked_run(body, problem, services)
    shares: ClientShares = request.app.state.run_shares
    held = contextlib.ExitStack()
    try:
        await run_in_threadpool(held.enter_context, shares.hold(caller))
        await run_in_threadpool(held.enter_context, services.run_gate.slot())
    except (ShareExceeded, RunBusy) as exc:
        held.close()
        services.metrics.rejected.labels("run_busy").inc()
        raise run_error(exc, problem.slug) from None

    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue()
    cancel = threading.Event()

    def send(kind: str, data: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(events.put_nowait, (kind, data))

    def progress(now: RunProgress) -> None:
        send("progress", now.model_dump())

    def work() -> None:
        started = time.monotonic()
        try:
            result = services.engine.run(
                problem, code, body.inputs, dtype=body.dtype, on_progress=progress, cancel=cancel
            )
            services.metrics.run_finished(result.verdict.value, time.monotonic() - started)
            send("result", {"result": result_json(result)})
        except Cancelled:
            log.info("a Run of %s was cancelled after %.1f s", problem.slug, time.monotonic() - started)
        except RUN_FAILURES as exc:
            send("error", _error(run_error(exc, problem.slug)))
        except Exception:
            log.exception("a streamed Run of %s failed", problem.slug)
            send("error", _error(ApiError(500, "internal_error", "the judge failed on this Run")))
        finally:
            held.close()  # the capacity is free only once the sandbox work has stopped
            loop.call_soon_threadsafe(events.put_nowait, None)

    threading.Thread(target=work, name=f"run-events-{problem.slug}", daemon=True).start()

    async def stream() -> AsyncIterator[ServerSentEvent]:
        try:
            while (item := await events.get()) is not None:
                kind, data = item
                yield ServerSentEvent(data=json.dumps(data), event=kind)
                if kind in ("result", "error"):
                    return
        finally:
            cancel.set()  # the caller went away, or the Run is over: nothing more to do either way

    return EventSourceResponse(stream(), ping=PING_S)
