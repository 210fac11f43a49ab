"""POST /api/submissions, GET /api/submissions/{id} (``?wait=``), GET /api/submissions/{id}/events (SSE)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from judge.dispatch import QueueFull
from judge.dispatch.callbacks import callback_refusal
from judge.dispatch.events import FINAL_KINDS, STATUS
from judge.errors import ProblemNotFound
from judge.service import eventids
from judge.service.deps import CallerDep, ServicesDep
from judge.service.errors import ApiError
from judge.service.limits import checked_code
from judge.service.ratelimit import Principal
from judge.service.schemas import (
    API_ERRORS,
    ErrorBody,
    SubmissionAccepted,
    SubmissionCreate,
    SubmissionLinks,
    SubmissionPublic,
    error_responses,
)
from judge.service.settings import WAIT_CAP_S
from judge.service.shares import ClientShares, KeyedLocks, ShareExceeded, who
from judge.service.state import Services
from judge.service.views import submission_json, submission_links
from judge.store import NewSubmission, SubmissionRecord

router = APIRouter(prefix="/api/submissions", tags=["submissions"], responses=API_ERRORS)

_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such submission (or not yours)."}
}
_CLIENT_LOCKS = KeyedLocks()
#: Seconds between keep-alive comments on an idle event stream.
PING_S = 15
#: Milliseconds an EventSource waits before it reconnects (the ``retry:`` field every stream opens with).
RETRY_MS = 3000


def _not_found(submission_id: str) -> ApiError:
    return ApiError(404, "submission_not_found", f"no submission {submission_id[:100]!r}", path="id")


def _load(services: Services, submission_id: str, caller: Principal) -> SubmissionRecord:
    try:
        canonical = str(uuid.UUID(submission_id))  # lower case, as stored: an id's case does not matter
    except ValueError:
        raise _not_found(submission_id) from None
    record = services.store.get(canonical)
    # A submission made with an API key is visible to that key only; anonymous ones to whoever has the id.
    if record is None or (record.key_name is not None and record.key_name != caller.key_name):
        raise _not_found(submission_id)
    return record


@router.post(
    "",
    status_code=202,
    response_model=SubmissionAccepted,
    summary="Submit code: stored and queued at once, graded on every public and hidden case",
    responses={
        **error_responses(413),
        404: {"model": ErrorBody, "description": "No problem with that slug."},
        422: {"model": ErrorBody, "description": "A malformed body, code, or callback URL."},
        429: {"model": ErrorBody, "description": "Rate limit, or the grading queue is full (Retry-After)."},
    },
)
def create_submission(body: SubmissionCreate, services: ServicesDep, caller: CallerDep) -> JSONResponse:
    try:
        problem = services.catalog.get(body.problem)
    except ProblemNotFound:
        known = ", ".join(p.slug for p in services.catalog)
        raise ApiError(
            404, "problem_not_found", f"no problem {body.problem[:100]!r} (known: {known})", path="problem"
        ) from None
    code = checked_code(body.code, services.limits)
    if body.callback_url is not None:
        refusal = callback_refusal(body.callback_url, services.settings.callback_hosts)
        if refusal is not None:
            raise ApiError(422, "invalid_callback_url", f"callback_url: {refusal}", path="callback_url")
    with _CLIENT_LOCKS.holding(caller):  # count and store atomically for this client
        unfinished = services.store.unfinished_of(caller.key_name, caller.address)
        cap = services.settings.submissions_per_client
        if unfinished >= cap:
            services.metrics.rejected.labels("client_queue_full").inc()
            raise ApiError(
                429,
                "queue_full",
                f"{who(caller)} has {unfinished} submissions queued or running, the most one client "
                "may have; wait for one to finish",
                limit="submissions_per_client",
                headers={"Retry-After": "5"},
            )
        try:
            reservation = services.dispatcher.reserve()
        except QueueFull as exc:
            services.metrics.rejected.labels("queue_full").inc()
            raise ApiError(
                429, "queue_full", str(exc), headers={"Retry-After": str(exc.retry_after)}
            ) from None
        try:
            record = services.store.create(
                NewSubmission(
                    problem=problem.slug,
                    code=code,
                    manifest=services.worker.manifest(problem),
                    key_name=caller.key_name,
                    client_address=caller.address,
                    callback_url=body.callback_url,
                )
            )
        except BaseException:
            reservation.cancel()
            raise
    reservation.commit(record.id)
    links = submission_links(record.id)
    accepted = SubmissionAccepted(
        id=record.id,
        problem=record.problem,
        status=record.status,
        created_at=record.created_at,
        links=SubmissionLinks(**links),
    )
    return JSONResponse(
        accepted.model_dump(mode="json"), status_code=202, headers={"Location": links["self"]}
    )


@router.get(
    "/{submission_id}",
    response_model=SubmissionPublic,
    summary="A submission's status and, once done, its result (?wait=SECONDS waits for it)",
    responses={**_NOT_FOUND, 422: {"model": ErrorBody, "description": "wait is above the limit."}},
)
async def get_submission(
    submission_id: str,
    services: ServicesDep,
    caller: CallerDep,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=WAIT_CAP_S,
            description="Seconds to wait for the result (at most the max_wait_s setting).",
        ),
    ] = 0,
) -> JSONResponse:
    limit = services.settings.max_wait_s
    if wait > limit:
        raise ApiError(
            422, "limit_exceeded", f"wait: at most {limit:g} seconds allowed", path="wait", limit="max_wait_s"
        )
    record = await run_in_threadpool(_load, services, submission_id, caller)
    if wait > 0 and not record.finished:
        deadline = time.monotonic() + wait
        with services.feed.subscribe(record.id) as subscription:
            while not record.finished:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                await subscription.wait(min(remaining, services.feed.poll_s))
                record = await run_in_threadpool(_load, services, submission_id, caller)
    return JSONResponse(submission_json(record))


@router.get(
    "/{submission_id}/events",
    summary="Server-sent events: progress of a submission, then its result",
    description="Events: `status` (`{status}`: first the current status, then `running` with the "
    "`attempt`), one `case` per finished case (`{index, case}`; hidden cases carry verdict and message "
    "only), "
    "then `result` (`{status: done, verdict, result}`) or `failed` (`{status: failed, error}`), after which "
    "the stream ends. Every event has an `id` of this submission (`<id>/<n>`, the first `<id>/0`); "
    "reconnect with `Last-Event-ID` to resume after it (an id of another submission is a 422). A stream "
    "resumed after the final event is answered 204 (an EventSource stops reconnecting). A stream lasts at "
    "most `stream_max_s` seconds (resume it), and one client may hold `streams_per_client` at once (429). "
    "If the judge restarted mid-grading, a new `status` event with a higher `attempt` starts the cases over.",
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}, "description": "The stream."},
        204: {"description": "Resumed after the final event: nothing more will come."},
        **_NOT_FOUND,
        422: {"model": ErrorBody, "description": "Last-Event-ID is malformed or another submission's."},
        429: {"model": ErrorBody, "description": "Rate limit, or this client holds too many streams."},
    },
)
async def submission_events(
    request: Request,
    submission_id: str,
    services: ServicesDep,
    caller: CallerDep,
    last_event_id: Annotated[str | None, Header(description="Resume after this event id.")] = None,
) -> Response:
    record = await run_in_threadpool(_load, services, submission_id, caller)
    after = eventids.parse(last_event_id, record.id)
    resumed = last_event_id is not None and bool(last_event_id.strip())
    feed = services.feed
    events = await run_in_threadpool(feed.read, record.id, after)
    if resumed and not events and record.finished:
        return Response(status_code=204)  # the client has every event: tell it to stop reconnecting
    shares: ClientShares = request.app.state.stream_shares
    try:
        shares.acquire(caller)
    except ShareExceeded as exc:
        services.metrics.rejected.labels("stream_limit").inc()
        raise ApiError(
            429, "too_many_streams", str(exc), headers={"Retry-After": str(exc.retry_after)}
        ) from None
    lease = _Lease(shares, caller)
    deadline = time.monotonic() + services.settings.stream_max_s

    async def stream() -> AsyncIterator[ServerSentEvent]:
        nonlocal after, events
        try:
            yield ServerSentEvent(retry=RETRY_MS)
            if not resumed:
                data = json.dumps({"status": record.status.value})
                yield ServerSentEvent(data=data, event=STATUS, id=eventids.event_id(record.id, 0))
            with feed.subscribe(record.id) as subscription:
                while True:
                    for event in events:
                        after = event.id
                        yield ServerSentEvent(
                            data=json.dumps(event.data),
                            event=event.kind,
                            id=eventids.event_id(record.id, event.id),
                        )
                        if event.kind in FINAL_KINDS:
                            return
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return  # the longest a stream lives: the client resumes with Last-Event-ID
                    if not events:
                        await subscription.wait(min(feed.poll_s, remaining))
                    events = await run_in_threadpool(feed.read, record.id, after)
        finally:
            lease.release()

    return EventSourceResponse(stream(), ping=PING_S, background=BackgroundTask(lease.release))


class _Lease:
    """One stream's share, released once: when the stream ends, or after the response if it never ran."""

    def __init__(self, shares: ClientShares, caller: Principal) -> None:
        self._shares = shares
        self._caller = caller
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._shares.release(self._caller)
