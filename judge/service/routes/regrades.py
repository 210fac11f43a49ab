"""Regrades: POST /api/submissions/{id}/regrade (its owner) and POST /api/problems/{slug}/regrade
(operators). A regrade is a new submission linked to the original (``regrade_of``), with the same code,
owner, metadata and callback, graded with the problem as it is now; the original keeps its verdict."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.errors import ApiError
from judge.service.routes.submissions import accepted_body, enqueue_regrade, load_submission
from judge.service.routes.workers import require_operator
from judge.service.schemas import API_ERRORS, ErrorBody, RegradeBatch, SubmissionAccepted

router = APIRouter(prefix="/api", tags=["regrades"], responses=API_ERRORS)


@router.post(
    "/submissions/{submission_id}/regrade",
    status_code=202,
    response_model=SubmissionAccepted,
    summary="Regrade one submission: a new submission linked to it, graded with the problem as it is now",
    description="The regrade is the caller's new submission and counts against the caller's limits "
    "exactly as a submit does (queue_size, submissions_per_client, queue_share): past them a 429 "
    "`queue_full` naming the `limit`, with Retry-After.",
    responses={
        404: {"model": ErrorBody, "description": "No such submission (or not yours)."},
        429: {"model": ErrorBody, "description": "Rate limit, full queue, or caller's caps (Retry-After)."},
    },
)
def regrade_submission(submission_id: str, services: ServicesDep, caller: CallerDep) -> JSONResponse:
    original = load_submission(services, submission_id, caller)
    accepted = accepted_body(enqueue_regrade(services, original, caller))
    return JSONResponse(
        accepted.model_dump(mode="json"), status_code=202, headers={"Location": accepted.links.self}
    )


@router.post(
    "/problems/{slug}/regrade",
    status_code=202,
    response_model=RegradeBatch,
    summary="Regrade every submission of a problem graded with another version of it (operators)",
    description="Queues a regrade of each original submission of the problem whose latest grading used "
    "another problem hash (every finished one with `force=true`) and has no regrade pending, as far as "
    "the queue has room; `remaining` says how many are left for the next call. Each regrade belongs to "
    "the original's owner; an operator's regrade is not held to that owner's per-client caps "
    "(submissions_per_client, queue_share) but never goes past the queue's size (queue_size).",
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
) -> RegradeBatch:
    require_operator(services, caller)
    current = services.worker.manifest(problem)["problem_hash"]
    targets = services.store.regrade_targets(problem.slug, current, force=force)
    queued: list[str] = []
    for index, submission_id in enumerate(targets):
        original = services.store.get(submission_id)
        if original is None:  # deleted meanwhile
            continue
        try:
            queued.append(enqueue_regrade(services, original).id)
        except ApiError as exc:
            if exc.status != 429:
                raise
            return RegradeBatch(
                problem=problem.slug, problem_hash=current, queued=queued, remaining=len(targets) - index
            )
    return RegradeBatch(problem=problem.slug, problem_hash=current, queued=queued, remaining=0)
