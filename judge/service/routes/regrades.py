"""Regrades: POST /api/submissions/{id}/regrade (its owner, or an operator), GET
/api/submissions/{id}/gradings, POST /api/problems/{slug}/regrade and GET /api/regrades/{job} (operators).

A regrade grades the same submission again with the problem as it is now and keeps the result as a new
grading of it (``judge.service.regrading``): no new submission, no callback unless ``notify=true``; the
submission's verdict and result become the new grading's, the earlier ones stay in its gradings."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from judge.service import regrading
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.grading_views import gradings_json, job_json
from judge.service.ratelimit import Principal
from judge.service.routes.submissions import load_submission
from judge.service.routes.workers import require_operator
from judge.service.schemas import (
    API_ERRORS,
    ErrorBody,
    GradingList,
    RegradeAccepted,
    RegradeJob,
    RegradeLinks,
)
from judge.service.state import Services
from judge.store import SubmissionRecord
from judge.store.gradings import GradingStore
from judge.store.regrade_jobs import RegradeJobs

router = APIRouter(prefix="/api", tags=["regrades"], responses=API_ERRORS)

_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such submission (or not yours)."}
}

NotifyQuery = Annotated[
    bool,
    Query(description="Send the submission's callback (a new delivery) when the regrade is graded."),
]


def _load(services: Services, submission_id: str, caller: Principal) -> SubmissionRecord:
    """The submission for its owner (a 404 for another key, as a read), or for an operator whatever
    its owner."""
    try:
        return load_submission(services, submission_id, caller)
    except ApiError as exc:
        if exc.status != 404 or not regrading.is_operator(services, caller):
            raise
        try:
            record = services.store.submissions.get(str(uuid.UUID(submission_id)))
        except ValueError:
            record = None
        if record is None:
            raise
        return record


@router.post(
    "/submissions/{submission_id}/regrade",
    status_code=202,
    response_model=RegradeAccepted,
    summary="Regrade one submission: a new grading of it with the problem as it is now",
    description="Its owner (or an operator) queues a new grading of the finished submission. While it "
    "is queued and graded the submission's status says so and its verdict and result stay the current "
    "grading's; once it is graded they are the new grading's (`grading` gives its number), and the "
    "earlier ones stay in `GET .../gradings`. If the judge cannot grade it, the earlier grading stays the "
    'current one. The stream (`.../events`) starts over with a `status` event `{"status": "queued", '
    '"regrade": true, "grading": N}` and ends with the grading\'s `result` (or `failed`) event, which '
    "carries `regrade` and `grading` too. No callback is sent unless `notify=true`. An owner's regrade "
    "counts as an unfinished submission against submissions_per_client; a 409 `regrade_conflict` while "
    "the submission is queued or being graded (ask again once it is finished).",
    responses={
        **_NOT_FOUND,
        409: {"model": ErrorBody, "description": "It is queued or being graded (regrade_conflict)."},
        429: {"model": ErrorBody, "description": "Rate limit, full queue, or the owner's cap (Retry-After)."},
    },
)
def regrade_submission(
    submission_id: str, services: ServicesDep, caller: CallerDep, notify: NotifyQuery = False
) -> JSONResponse:
    record = _load(services, submission_id, caller)
    number, version = regrading.regrade_one(services, record, caller, notify=notify)
    base = f"/api/v1/submissions/{record.id}"
    links = RegradeLinks(submission=base, gradings=f"{base}/gradings", events=f"{base}/events")
    accepted = RegradeAccepted(
        submission=record.id,
        grading=number,
        status="queued",
        problem_hash=version.hash,
        problem_revision=version.revision,
        notify=notify,
        links=links,
    )
    return JSONResponse(
        accepted.model_dump(mode="json"), status_code=202, headers={"Location": links.gradings}
    )


@router.get(
    "/submissions/{submission_id}/gradings",
    response_model=GradingList,
    summary="Every grading of a submission, oldest first: the first, then one per regrade",
    responses=_NOT_FOUND,
)
async def list_gradings(submission_id: str, services: ServicesDep, caller: CallerDep) -> JSONResponse:
    record = await run_in_threadpool(_load, services, submission_id, caller)
    rows = await run_in_threadpool(GradingStore(services.store).history, record.id)
    return JSONResponse(gradings_json(record, rows))


@router.post(
    "/problems/{slug}/regrade",
    status_code=202,
    response_model=RegradeJob,
    summary="Regrade a problem's submissions as new gradings of them, in batches (operators)",
    description="Starts a job that regrades every finished submission of the problem graded with another "
    "version of it (every one with `force=true`) made until now, oldest first, at most `batch` of them "
    "queued or running at once and only as far as the queue has room; each API node moves running jobs "
    "on, so a job resumes after a restart. Its progress: `GET /api/v1/regrades/{job}` (`Location`). "
    "Callbacks only with `notify=true`. An operator's regrades never count against the owners' caps.",
    responses={
        403: {"model": ErrorBody, "description": "The API key is not an operator key."},
        404: {"model": ErrorBody, "description": "No problem with that slug."},
    },
)
def regrade_problem(
    problem: ProblemDep,
    services: ServicesDep,
    caller: CallerDep,
    force: Annotated[bool, Query(description="Regrade even those graded with this version.")] = False,
    notify: NotifyQuery = False,
    batch: Annotated[
        int,
        Query(ge=1, le=regrading.MAX_BATCH, description="Gradings of the job queued or running at once."),
    ] = regrading.DEFAULT_BATCH,
) -> JSONResponse:
    require_operator(services, caller)
    job = regrading.start_problem_regrade(services, problem, caller, force=force, notify=notify, batch=batch)
    body = job_json(job)
    return JSONResponse(body, status_code=202, headers={"Location": body["links"]["self"]})


def _job(services: Services, job_id: str) -> dict[str, object]:
    job = RegradeJobs(services.store).job(job_id.lower()[:36])
    if job is None:
        raise ApiError(404, "regrade_not_found", f"no problem regrade {job_id[:100]!r}", path="job_id")
    return job_json(job)


@router.get(
    "/regrades/{job_id}",
    response_model=RegradeJob,
    summary="How far an operator's problem regrade got (operators)",
    responses={
        403: {"model": ErrorBody, "description": "The API key is not an operator key."},
        404: {"model": ErrorBody, "description": "No such problem regrade."},
    },
)
async def get_regrade(job_id: str, services: ServicesDep, caller: CallerDep) -> JSONResponse:
    require_operator(services, caller)
    return JSONResponse(await run_in_threadpool(_job, services, job_id))


@router.post(
    "/regrades/{job_id}/cancel",
    response_model=RegradeJob,
    summary="Stop a problem regrade: no more gradings are queued; those queued still end (operators)",
    responses={
        403: {"model": ErrorBody, "description": "The API key is not an operator key."},
        404: {"model": ErrorBody, "description": "No such problem regrade."},
    },
)
def cancel_regrade(job_id: str, services: ServicesDep, caller: CallerDep) -> JSONResponse:
    require_operator(services, caller)
    body = _job(services, job_id)
    RegradeJobs(services.store).cancel(str(body["id"]))
    return JSONResponse(_job(services, job_id))
