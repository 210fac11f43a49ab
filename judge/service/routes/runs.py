"""POST /api/problems/{slug}/run: synchronous, never behind queued submissions.

It answers, or says promptly when to come back: when no warm sandbox pair is ready (the judge is warming
up, or every pair is busy and replacements are starting) and the warm-up's estimate says one will not be
within ``RUN_WARM_WAIT_S`` (at once), or none came by then, it answers ``503 warming_up`` with where the
warm-up stands (starts under way, other judges' starts queued ahead at the host's start gate) and a
``Retry-After`` from the estimate, instead of holding the request for as long as the starts take. The
streamed Run (``run_events``) waits instead, telling each change."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from judge.core.errors import JudgeError
from judge.core.progress import RunProgress
from judge.core.results import GradeResult, result_json
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.gate import RunBusy
from judge.service.limits import check_inputs, checked_code
from judge.service.run_errors import RUN_FAILURES, run_error
from judge.service.schemas import API_ERRORS, ErrorBody, RunRequest, error_responses
from judge.service.shares import ClientShares, ShareExceeded

router = APIRouter(prefix="/api/problems", tags=["runs"], responses=API_ERRORS)

#: Seconds a non-streamed Run may wait for a warm sandbox pair (it answers 503 with Retry-After at once when
#: the warm-up's estimate is longer, and after this when no pair came).
RUN_WARM_WAIT_S = 30.0
#: Retry-After when the warm-up has nothing to estimate from yet.
DEFAULT_RETRY_S = 5


def not_warm(waiting: RunProgress) -> ApiError:
    """The 503 of a Run that found no warm sandbox pair: where the warm-up stands, and when to retry."""
    warmup = waiting.warmup
    retry = DEFAULT_RETRY_S
    parts: list[str] = []
    if warmup is not None:
        retry = warmup.estimate_s or warmup.retry_in_s or DEFAULT_RETRY_S
        if warmup.starting:
            parts.append(f"{warmup.starting} starting")
        if warmup.queued:
            parts.append(f"{warmup.queued} waiting their turn to start")
        if warmup.ahead:
            parts.append(f"{warmup.ahead} starts of other judges queued ahead on this host")
    where = f" ({', '.join(parts)})" if parts else ""
    estimate = "" if warmup is None or warmup.estimate_s is None else f"about {warmup.estimate_s} s; "
    return ApiError(
        503,
        "warming_up",
        f"no sandbox worker is ready for this Run yet{where}: {estimate}try again in {retry} s",
        headers={"Retry-After": str(retry)},
    )


def checked_run(body: RunRequest, problem: Any, services: Any) -> str:
    """A Run body checked before it takes a worker (a bad input costs no sandbox time): its code, or an
    ApiError naming what is wrong. ``POST .../run`` and ``POST .../run/events`` check the same way."""
    code = checked_code(body.code, services.limits)
    if body.inputs is None and body.dtype is not None:
        raise ApiError(422, "invalid_input", "dtype: applies to custom inputs only", path="dtype")
    if body.inputs is not None:
        check_inputs(body.inputs, services.limits)
        try:
            problem.custom_case(dict(body.inputs), dtype=body.dtype)
        except JudgeError as exc:  # an input it rejects (422), or its validator failing (the problem's fault)
            raise run_error(exc, problem.slug) from None
    return code


@router.post(
    "/{slug}/run",
    response_model=GradeResult,
    summary="Run code on the public examples, or on one custom case",
    description="Without `inputs`, every public example runs. With `inputs` (one Run-panel JSON value per "
    "argument) they run as one custom case whose expected output the reference computes. The body is "
    "exactly `judge run --json`'s object: per case the verdict, message, output, expected output and "
    "compile/run times, plus the captured prints.",
    responses={
        **error_responses(413),
        503: {
            "model": ErrorBody,
            "description": "`warming_up`: no sandbox worker ready, and the warm-up's estimate is past 30 s "
            "or 30 s passed (where the warm-up stands, Retry-After from its estimate); "
            "`sandbox_unavailable`: the sandbox failed.",
        },
        404: {"model": ErrorBody, "description": "No problem with that slug."},
        422: {
            "model": ErrorBody,
            "description": "A malformed body, code or input (argument and path named).",
        },
        429: {"model": ErrorBody, "description": "Rate limit, or every sandbox worker busy (Retry-After)."},
    },
)
def run(
    request: Request, body: RunRequest, problem: ProblemDep, services: ServicesDep, caller: CallerDep
) -> JSONResponse:
    code = checked_run(body, problem, services)
    started = time.monotonic()
    shares: ClientShares = request.app.state.run_shares
    try:
        # One client's share first (running or waiting), so it cannot queue every other client out.
        with shares.hold(caller), services.run_gate.slot():
            waiting = services.engine.warm_within(RUN_WARM_WAIT_S)
            if waiting is not None:
                raise not_warm(waiting)
            result = services.engine.run(problem, code, body.inputs, dtype=body.dtype)
    except RUN_FAILURES as exc:
        if isinstance(exc, ShareExceeded | RunBusy):
            services.metrics.rejected.labels("run_busy").inc()
        raise run_error(exc, problem.slug) from exc
    services.metrics.run_finished(result.verdict.value, time.monotonic() - started)
    return JSONResponse(result_json(result))
