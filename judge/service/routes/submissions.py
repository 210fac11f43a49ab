"""Submissions: POST (``Idempotency-Key``), POST /batch, GET (a key's listing by cursor), GET /{id}
(``?wait=``, ``?fields=``), GET /{id}/code, DELETE /{id}, GET /{id}/events (SSE), POST /{id}/callback
(redeliver); each under /api/v1/submissions and the deprecated /api/submissions."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from judge.core.errors import ProblemNotFound
from judge.core.verdicts import Verdict
from judge.dispatch import QueueFull
from judge.dispatch.callbacks import callback_refusal
from judge.dispatch.celery_queue import NO_NODE_RETRY_S
from judge.dispatch.document import submission_json, submission_links
from judge.dispatch.events import STATUS
from judge.service import batches, eventids, filters, lookup, redelivery, tenancy
from judge.service.accounts import claim_submission
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ServicesDep
from judge.service.limits import checked_code
from judge.service.queryparams import known_query_parameters
from judge.service.ratelimit import Principal
from judge.service.schemas import (
    API_ERRORS,
    BatchAccepted,
    BatchCreate,
    BatchItem,
    ErrorBody,
    SubmissionAccepted,
    SubmissionCode,
    SubmissionCreate,
    SubmissionFields,
    SubmissionLinks,
    SubmissionPage,
    SubmissionPublic,
    SubmissionWaiting,
    error_responses,
)
from judge.service.shares import ClientShares, KeyedLocks, ShareExceeded, who
from judge.service.state import Services
from judge.service.version_wait import version_waiting
from judge.service.views import parse_fields, selected
from judge.store import (
    EventRecord,
    IdempotencyKey,
    NewSubmission,
    Quota,
    QuotaExceeded,
    Status,
    SubmissionFilter,
    SubmissionRecord,
)
from judge.store.models import utcnow
from judge.store.pages import COUNT_MAX, HEAVY_COLUMNS
from judge.submissions import intake
from judge.submissions.callbacks import check_redeliverable
from judge.submissions.refusals import IdempotencyConflict, NotRedeliverable
from judge.submissions.streams import StreamLease, follow
from judge.submissions.waiting import waiting_message

router = APIRouter(
    prefix="/api/submissions",
    tags=["submissions"],
    responses=API_ERRORS,
    dependencies=[Depends(known_query_parameters)],
)

_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such submission (or not yours)."}
}
_CLIENT_LOCKS = KeyedLocks()
#: Seconds between keep-alive comments on an idle event stream.
PING_S = 15
#: Milliseconds an EventSource waits before it reconnects (the ``retry:`` field every stream opens with).
RETRY_MS = 3000
#: Longest ``ids`` of a multi-get: 200 ids, well within the 16 KiB a request's head may take.
MAX_IDS_CHARACTERS = 200 * 37
#: Items of a listing page when ``limit`` is not given (at most page_max).
DEFAULT_LIMIT = 50
#: Longest ``Idempotency-Key`` accepted.
MAX_IDEMPOTENCY_KEY = 255


def _not_found(submission_id: str) -> ApiError:
    return ApiError(404, "submission_not_found", f"no submission {submission_id[:100]!r}", path="id")


def load_submission(services: Services, submission_id: str, caller: Principal) -> SubmissionRecord:
    try:
        canonical = str(uuid.UUID(submission_id))  # lower case, as stored: an id's case does not matter
    except ValueError:
        raise _not_found(submission_id) from None
    record = services.store.submissions.get(canonical)
    # A submission made with an API key is visible to that key only (its stable id: a name given to
    # another client later does not see it); anonymous ones to whoever has the id.
    if record is None or (record.key_id is not None and record.key_id != caller.key_id):
        raise _not_found(submission_id)
    return record


def _problem_missing(services: Services, slug: str, path: str, caller: Principal | None = None) -> ApiError:
    """404 ``problem_not_found``, listing the problems the caller sees (every one: an operator's job)."""
    slugs = [p.slug for p in services.catalog] if caller is None else tenancy.known_slugs(services, caller)
    known = ", ".join(slugs)
    return ApiError(404, "problem_not_found", f"no problem {slug[:100]!r} (known: {known})", path=path)


def accepted_body(record: SubmissionRecord) -> SubmissionAccepted:
    return SubmissionAccepted(
        id=record.id,
        problem=record.problem,
        status=record.status,
        created_at=record.created_at,
        external_user=record.external_user,
        tags=record.tags,
        regrade_of=record.regrade_of,
        links=SubmissionLinks(**submission_links(record.id)),
    )


def submit(
    services: Services,
    caller: Principal,
    body: SubmissionCreate,
    idempotency_key: str | None = None,
    path: str = "",
    body_hash: str | None = None,
) -> tuple[SubmissionRecord, bool]:
    """Validate one submission and hand it to the intake (``judge.submissions.intake``): (record, True),
    or (the earlier record, False) for a retry with the same ``Idempotency-Key`` and body. Raises ApiError
    (``path`` prefixes its field). ``body_hash``: what the key records instead of the body's hash (a batch
    item's: the batch's)."""
    try:
        problem = services.catalog.get(body.problem)
    except ProblemNotFound:
        raise _problem_missing(services, body.problem, f"{path}problem", caller) from None
    if not tenancy.sees(services, caller, problem.slug):  # scoped to other tenants: as unknown
        raise _problem_missing(services, body.problem, f"{path}problem", caller)
    code = checked_code(body.code, services.limits)
    if body.callback_url is not None:
        refusal = callback_refusal(body.callback_url, services.settings.callback_hosts)
        if refusal is not None:
            raise ApiError(
                422, "invalid_callback_url", f"callback_url: {refusal}", path=f"{path}callback_url"
            )
    idempotency: IdempotencyKey | None = None
    if idempotency_key is not None:
        digest = body_hash or intake.body_hash(body.model_dump(mode="json"))
        idempotency = IdempotencyKey(_scope(caller), idempotency_key, digest)

    def new() -> NewSubmission:
        return NewSubmission(
            problem=problem.slug,
            code=code,
            manifest=services.worker.manifest(problem),
            key_name=caller.key_name,
            key_id=caller.key_id,
            # Only a keyless client is counted by address (submissions_per_client), and only until it
            # finishes: the store forgets the address then.
            client_address=caller.address if caller.key_name is None else None,
            callback_url=body.callback_url,
            external_user=body.external_user,
            tags=body.tags,
        )

    try:
        return _intake(services, caller).accept(new, idempotency)
    except IdempotencyConflict as exc:
        where = "Idempotency-Key" if exc.names_key else None
        raise ApiError(409, "idempotency_conflict", exc.message, path=where) from None
    except QueueFull as exc:
        services.metrics.rejected.labels("queue_full").inc()
        raise ApiError(429, "queue_full", str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    except QuotaExceeded as exc:
        raise _over_quota(services, caller, exc) from None


def _intake(services: Services, caller: Principal) -> intake.Intake:
    settings = services.settings
    return intake.Intake(
        store=services.store,
        reserve=services.dispatcher.reserve,
        quota=Quota(unfinished=settings.submissions_per_client, queued=settings.queued_per_client),
        idempotency_ttl_s=settings.idempotency_ttl_s,
        owner_lock=lambda: _CLIENT_LOCKS.holding(caller),
    )


def _over_quota(services: Services, caller: Principal, exc: QuotaExceeded) -> ApiError:
    """The 429 of a client past its caps: which one, and an honest Retry-After (a minute when no
    grading node is alive to drain its queue)."""
    services.metrics.rejected.labels("client_queue_full").inc()
    if exc.limit == "queue_share":
        what = (
            f"{who(caller)} has {exc.count} submissions waiting, its share of the queue "
            f"(queue_share of {services.settings.queue_size})"
        )
    else:
        what = f"{who(caller)} has {exc.count} submissions queued or running, the most one client may have"
    retry_after = 5
    if not services.fleet.grading_alive():
        what += "; no grading node is alive to drain them"
        retry_after = NO_NODE_RETRY_S
    return ApiError(
        429,
        "queue_full",
        f"{what}; wait for one to finish",
        limit=exc.limit,
        headers={"Retry-After": str(retry_after)},
    )


def _scope(caller: Principal) -> str:
    return intake.scope(*caller.identity)


def _idempotency_key(value: str | None) -> str | None:
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_IDEMPOTENCY_KEY or not all(" " <= c <= "~" for c in value):
        raise ApiError(
            422,
            "invalid_idempotency_key",
            f"Idempotency-Key: 1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters",
            path="Idempotency-Key",
        )
    return value


IdempotencyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="Makes a retry safe: the same key and body within idempotency_ttl_s get the same "
        "submission (200); the same key with another body is a 409 idempotency_conflict. Keys are scoped "
        "to the API key (a keyless client's address).",
        max_length=255,
    ),
]


@router.post(
    "",
    status_code=202,
    response_model=SubmissionAccepted,
    summary="Submit code: stored and queued at once, graded on every public and hidden case",
    responses={
        **error_responses(413),
        200: {"model": SubmissionAccepted, "description": "A retry with the same Idempotency-Key and body."},
        404: {"model": ErrorBody, "description": "No problem with that slug."},
        409: {"model": ErrorBody, "description": "The Idempotency-Key was used with another body."},
        422: {"model": ErrorBody, "description": "A malformed body, code, or callback URL."},
        429: {"model": ErrorBody, "description": "Rate limit, or the grading queue is full (Retry-After)."},
    },
)
def create_submission(
    body: SubmissionCreate,
    request: Request,
    services: ServicesDep,
    caller: CallerDep,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    record, created = submit(services, caller, body, _idempotency_key(idempotency_key))
    if created:  # made on the page while signed in: it belongs to the learner's account
        claim_submission(services.accounts, request.scope, record.id, record.problem)
    accepted = accepted_body(record)
    waiting = waiting_json(services, record) if created else None
    if waiting is not None:
        accepted = accepted.model_copy(update={"waiting": SubmissionWaiting(**waiting)})
    headers = {"Location": accepted.links.self}
    if not created:
        headers["Idempotent-Replayed"] = "true"
    return JSONResponse(
        accepted.model_dump(mode="json"), status_code=202 if created else 200, headers=headers
    )


@router.post(
    "/batch",
    response_model=BatchAccepted,
    summary="Submit several: each item is stored and queued, or refused, by itself",
    description="With an `Idempotency-Key`, the same batch posted again within idempotency_ttl_s stores "
    "nothing new and answers the same submissions (`Idempotent-Replayed: true` when every stored item "
    "was), items refused before are tried again, and another batch body with that key is a 409.",
    responses={
        **error_responses(413),
        409: {"model": ErrorBody, "description": "The Idempotency-Key was used with another batch body."},
        422: {"model": ErrorBody, "description": "A malformed body, or more items than batch_max."},
    },
)
def create_batch(
    body: BatchCreate,
    services: ServicesDep,
    caller: CallerDep,
    idempotency_key: IdempotencyHeader = None,
) -> JSONResponse:
    limit = services.settings.batch_max
    if len(body.items) > limit:
        raise ApiError(
            422,
            "limit_exceeded",
            f"items: at most {limit} submissions per batch, got {len(body.items)}",
            path="items",
            limit="batch_max",
        )
    batches.check_bounds(body, services.settings.max_code_bytes)
    key = _idempotency_key(idempotency_key)
    digest = batches.body_hash(body)
    if key is not None:
        since = utcnow() - timedelta(seconds=services.settings.idempotency_ttl_s)
        refusal = batches.conflict(services.store, _scope(caller), key, len(body.items), digest, since)
        if refusal is not None:
            raise refusal
    items: list[BatchItem] = []
    replayed = 0
    for index, item in enumerate(body.items):
        item_key = batches.key_of(key, index) if key is not None else None
        try:
            record, created = submit(
                services, caller, item, item_key, path=f"items[{index}].", body_hash=digest
            )
        except ApiError as exc:
            items.append(BatchItem(index=index, status_code=exc.status, error=exc.info))
            continue
        replayed += not created
        items.append(BatchItem(index=index, status_code=202, submission=accepted_body(record)))
    accepted = sum(1 for item in items if item.submission is not None)
    answer = BatchAccepted(items=items, accepted=accepted, rejected=len(items) - accepted)
    headers = {"Idempotent-Replayed": "true"} if accepted and replayed == accepted else None
    return JSONResponse(answer.model_dump(mode="json"), headers=headers)


FieldsQuery = Annotated[
    str | None,
    Query(
        description="Comma-separated fields to return, e.g. `id,status,verdict` (`code` only when named).",
        max_length=500,
    ),
]


def _fields(text: str | None) -> tuple[str, ...] | None:
    try:
        return parse_fields(text)
    except ValueError as exc:
        raise ApiError(422, "invalid_fields", f"fields: {exc}", path="fields") from None


@router.get(
    "",
    response_model=SubmissionPage,
    summary="List this API key's submissions, newest first, by cursor; filter by problem, status, "
    "verdict, external user, tag and creation time; or read several by id (`ids`)",
    responses={
        401: {"model": ErrorBody, "description": "Listing needs an API key."},
        422: {"model": ErrorBody, "description": "A filter out of range (`path` names it)."},
    },
)
def list_submissions(
    services: ServicesDep,
    caller: CallerDep,
    problem: Annotated[str | None, Query(max_length=200)] = None,
    status: Status | None = None,
    verdict: Verdict | None = None,
    external_user: Annotated[str | None, Query(max_length=200)] = None,
    tag: Annotated[str | None, Query(max_length=265, description="`name:value`")] = None,
    regrade_of: Annotated[
        str | None, Query(max_length=36, description="Regrades of this submission.")
    ] = None,
    created_after: Annotated[
        str | None, Query(max_length=64, description="Created at or after (ISO 8601 with a time zone).")
    ] = None,
    created_before: Annotated[
        str | None, Query(max_length=64, description="Created before (ISO 8601 with a time zone).")
    ] = None,
    cursor: Annotated[str | None, Query(max_length=200, description="next_cursor of the last page.")] = None,
    limit: Annotated[
        int | None,
        Query(ge=1, description="Items per page (at most page_max; default 50, or page_max if less)."),
    ] = None,
    count: Annotated[
        bool,
        Query(
            description=f"Also count the matching submissions (total): exactly up to {COUNT_MAX:,}; past "
            f"that, total is {COUNT_MAX:,} and total_capped true."
        ),
    ] = False,
    fields: FieldsQuery = None,
    ids: Annotated[
        str | None,
        Query(
            max_length=MAX_IDS_CHARACTERS,
            description="Comma-separated submission ids (at most page_max, in at most "
            f"{MAX_IDS_CHARACTERS} characters): read these, in this order, "
            "instead of listing; ids that are not found (or not this API key's) are in `missing`. "
            "Combines with `fields` only.",
        ),
    ] = None,
) -> JSONResponse:
    if caller.key_id is None:
        raise ApiError(
            401,
            "unauthorized",
            "listing submissions needs an API key (Authorization: Bearer <API key>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    names = _fields(fields)
    if ids is not None:
        given = {
            "problem": problem,
            "status": status,
            "verdict": verdict,
            "external_user": external_user,
            "tag": tag,
            "regrade_of": regrade_of,
            "created_after": created_after,
            "created_before": created_before,
            "cursor": cursor,
        }
        other = next((name for name, value in given.items() if value is not None), None)
        if other is not None:
            raise ApiError(422, "invalid_filter", f"{other}: ids combines with fields only", path=other)
        wanted = filters.id_list(ids, services.settings.page_max)
        return JSONResponse(lookup.by_ids(services, caller, wanted, names))
    if limit is None:
        limit = min(DEFAULT_LIMIT, services.settings.page_max)
    if limit > services.settings.page_max:
        raise ApiError(
            422,
            "limit_exceeded",
            f"limit: at most {services.settings.page_max} items per page",
            path="limit",
            limit="page_max",
        )
    chosen = SubmissionFilter(
        key_id=caller.key_id,
        problem=problem,
        status=status,
        verdict=verdict.value if verdict is not None else None,
        external_user=filters.external_user(external_user),
        created_after=filters.instant("created_after", created_after),
        created_before=filters.instant("created_before", created_before),
        tag=filters.tag_filter(tag),
        regrade_of=filters.submission_id("regrade_of", regrade_of),
    )
    after = filters.cursor(cursor)
    heavy = [name for name in (names or ()) if name in HEAVY_COLUMNS]
    records = services.store.listing.page(chosen, after=after, limit=limit + 1, heavy=heavy)
    more = len(records) > limit
    records = records[:limit]
    # Counted exactly up to COUNT_MAX matches; past it the count stops there (total_capped).
    total, capped = services.store.listing.total(chosen) if count else (None, None)
    # The stored results are sent as stored (views.py), not validated again into SubmissionPage.
    return JSONResponse(
        {
            "items": [lookup.item(services, record, names) for record in records],
            "next_cursor": filters.next_cursor(records[-1]) if more else None,
            "total": total,
            "total_capped": capped,
        }
    )


@router.get(
    "/{submission_id}",
    response_model=SubmissionPublic | SubmissionFields,
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
            allow_inf_nan=False,
            description="Seconds to wait for the result (at most the max_wait_s setting).",
        ),
    ] = 0,
    fields: FieldsQuery = None,
) -> JSONResponse:
    names = _fields(fields)
    limit = services.settings.max_wait_s
    if wait > limit:
        raise ApiError(
            422,
            "limit_exceeded",
            f"wait: at most {limit:g} seconds allowed",
            path="wait",
            limit="max_wait_s",
        )
    record = await run_in_threadpool(load_submission, services, submission_id, caller)
    if wait > 0 and not record.finished:
        deadline = time.monotonic() + wait
        with services.feed.subscribe(record.id) as subscription:
            while not record.finished:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                await subscription.wait(min(remaining, services.feed.poll_s))
                record = await run_in_threadpool(load_submission, services, submission_id, caller)
    callback = None
    if record.callback_url and (names is None or "callback" in names):
        callback = await run_in_threadpool(lookup.callback_status, services, record)
    if names is not None:
        return JSONResponse(selected(record, names, (), callback))
    document = submission_json(record)
    if callback is not None:
        document["callback"] = callback
    waiting = waiting_json(services, record)
    if waiting is not None:
        document["waiting"] = waiting
    return JSONResponse(document)


def waiting_json(services: Services, record: SubmissionRecord) -> dict[str, Any] | None:
    """Where a queued submission stands (``SubmissionWaiting``: fields and the learner's sentence): held for
    its problem's version, or its place in this process's queue; None when it is not queued or the
    dispatcher cannot say (a distributed judge)."""
    if record.status is not Status.QUEUED:
        return None
    held = version_waiting(services, record)
    if held is not None:
        return held
    waiting = services.dispatcher.waiting(record.id)
    if waiting is None:
        return None
    return {**asdict(waiting), "message": waiting_message(waiting)}


@router.post(
    "/{submission_id}/callback",
    status_code=202,
    response_class=Response,
    summary="Deliver a finished submission's callback again, as a new delivery (debounced)",
    description="A new delivery (a new `webhook-id`), from the first try. Calls while a delivery is "
    "pending, or within 10 s of the last redelivery's start, collapse into it (202 all the same): "
    "repeated calls do not give repeated deliveries.",
    responses={
        202: {"description": "Queued, or collapsed into a delivery under way; no body."},
        **_NOT_FOUND,
        409: {"model": ErrorBody, "description": "Not finished yet, or no callback_url."},
        503: {"model": ErrorBody, "description": "This judge has no callback settings."},
    },
)
def redeliver_callback(submission_id: str, services: ServicesDep, caller: CallerDep) -> Response:
    record = load_submission(services, submission_id, caller)
    try:
        check_redeliverable(record)
    except NotRedeliverable as exc:
        raise ApiError(
            409, exc.reason, exc.message, path="id" if exc.reason == "no_callback" else None
        ) from None
    redelivery.redeliver(services, record)
    return Response(status_code=202)


@router.get(
    "/{submission_id}/code",
    response_model=SubmissionCode,
    summary="The code of a submission (its owner only)",
    responses=_NOT_FOUND,
)
def get_submission_code(submission_id: str, services: ServicesDep, caller: CallerDep) -> SubmissionCode:
    record = load_submission(services, submission_id, caller)
    return SubmissionCode(id=record.id, problem=record.problem, code=record.code)


@router.delete(
    "/{submission_id}",
    status_code=204,
    summary="Delete a submission with its events, callback records and idempotency key",
    description="A submission being graded now is deleted too; its result is then never stored and no "
    "callback is sent for it.",
    responses=_NOT_FOUND,
)
def delete_submission(submission_id: str, services: ServicesDep, caller: CallerDep) -> Response:
    record = load_submission(services, submission_id, caller)
    if not services.store.deletion.delete(record.id):
        raise _not_found(submission_id)
    return Response(status_code=204)


@router.get(
    "/{submission_id}/events",
    summary="Server-sent events: progress of a submission, then its result",
    description="Events: `status` (`{status}`: first the current status, with `waiting` as GET gives it "
    "while queued (why it waits, how many go first, an estimate, in words); then `running` with the "
    "`attempt`, the number of `cases` and how many of them are `public` (sent one by one, before the "
    "hidden ones)), one `case` per finished case (`{index, case}`; hidden cases carry verdict and message "
    "only, and from the first hidden case on the `case` events are held and sent together once the "
    "grading is over), "
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
    record = await run_in_threadpool(load_submission, services, submission_id, caller)
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
    lease = StreamLease(shares, caller)
    deadline = time.monotonic() + services.settings.stream_max_s

    async def read(since: int) -> list[EventRecord]:
        return await run_in_threadpool(feed.read, record.id, since)

    async def stream() -> AsyncIterator[ServerSentEvent]:
        try:
            yield ServerSentEvent(retry=RETRY_MS)
            if not resumed:
                first: dict[str, Any] = {"status": record.status.value}
                waiting = await run_in_threadpool(waiting_json, services, record)
                if waiting is not None:
                    first["waiting"] = waiting
                data = json.dumps(first)
                yield ServerSentEvent(data=data, event=STATUS, id=eventids.event_id(record.id, 0))
            with feed.subscribe(record.id) as subscription:
                async for event in follow(subscription, read, after, events, feed.poll_s, deadline):
                    yield ServerSentEvent(
                        data=json.dumps(event.data),
                        event=event.kind,
                        id=eventids.event_id(record.id, event.id),
                    )
        finally:
            lease.release()

    return EventSourceResponse(stream(), ping=PING_S, background=BackgroundTask(lease.release))
