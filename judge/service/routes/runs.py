"""POST /api/problems/{slug}/run: synchronous, never behind queued submissions."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from judge.errors import InputError, JudgeError
from judge.results import GradeResult
from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.errors import ApiError, input_error
from judge.service.gate import RunBusy
from judge.service.limits import check_inputs, checked_code
from judge.service.schemas import API_ERRORS, ErrorBody, RunRequest, error_responses
from judge.service.shares import ClientShares, ShareExceeded
from judge.store.jsonsafe import result_json
from sandbox.errors import SandboxError

router = APIRouter(prefix="/api/problems", tags=["runs"], responses=API_ERRORS)


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
        except InputError as exc:
            raise input_error(exc) from None
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
        **error_responses(413, 503),
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
            result = services.engine.run(problem, code, body.inputs, dtype=body.dtype)
    except ShareExceeded as exc:
        services.metrics.rejected.labels("run_busy").inc()
        raise ApiError(
            429, "run_busy", str(exc), limit="runs_per_client", headers={"Retry-After": str(exc.retry_after)}
        ) from None
    except RunBusy as exc:
        services.metrics.rejected.labels("run_busy").inc()
        raise ApiError(429, "run_busy", str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    except InputError as exc:
        raise input_error(exc) from None
    except (SandboxError, JudgeError) as exc:
        raise ApiError(
            503,
            "sandbox_unavailable",
            f"the sandbox could not run this now ({type(exc).__name__}); try again shortly",
            headers={"Retry-After": "5"},
        ) from exc
    services.metrics.run_finished(result.verdict.value, time.monotonic() - started)
    return JSONResponse(result_json(result))
