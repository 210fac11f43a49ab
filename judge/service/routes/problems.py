"""GET /api/problems and GET /api/problems/{slug}."""

from __future__ import annotations

from fastapi import APIRouter

from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.errors import ApiError
from judge.service.schemas import API_ERRORS, ErrorBody, ProblemDetail, ProblemSummary

router = APIRouter(prefix="/api/problems", tags=["problems"], responses=API_ERRORS)


@router.get("", response_model=list[ProblemSummary], summary="List the problems")
def list_problems(services: ServicesDep, _caller: CallerDep) -> list[ProblemSummary]:
    return services.catalog.summaries()


@router.get(
    "/{slug}",
    response_model=ProblemDetail,
    summary="One problem: statement (Markdown and HTML), signature, arguments, examples, hints, starter",
    responses={404: {"model": ErrorBody, "description": "No problem with that slug."}},
)
def get_problem(problem: ProblemDep, services: ServicesDep, _caller: CallerDep) -> ProblemDetail:
    try:
        return services.catalog.detail(problem.slug)
    except Exception as exc:  # the reference failed on an example: the judge's fault, said plainly
        raise ApiError(
            503, "problem_unavailable", f"the problem {problem.slug!r} cannot be shown now"
        ) from exc
