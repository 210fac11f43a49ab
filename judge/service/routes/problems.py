"""GET /api/problems and GET /api/problems/{slug}."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header
from fastapi.responses import JSONResponse, Response

from judge.service import tenancy
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ProblemDep, ServicesDep
from judge.service.schemas import API_ERRORS, ErrorBody, ProblemDetail, ProblemSummary

router = APIRouter(prefix="/api/problems", tags=["problems"], responses=API_ERRORS)


@router.get("", response_model=list[ProblemSummary], summary="List the problems")
def list_problems(services: ServicesDep, caller: CallerDep) -> list[ProblemSummary]:
    if tenancy.is_operator(services, caller):
        return services.catalog.summaries(all_tenants=True)
    return services.catalog.summaries(caller.tenant)


@router.get(
    "/{slug}",
    response_model=ProblemDetail,
    summary="One problem: statement (Markdown and HTML), signature, arguments, examples, hints, starter",
    responses={
        200: {
            "headers": {"ETag": {"description": "The problem's version hash.", "schema": {"type": "string"}}}
        },
        304: {"description": "If-None-Match names the current version: nothing changed."},
        404: {"model": ErrorBody, "description": "No problem with that slug."},
    },
)
def get_problem(
    problem: ProblemDep,
    services: ServicesDep,
    caller: CallerDep,
    if_none_match: Annotated[str | None, Header(description="An ETag of this problem.")] = None,
) -> Response:
    try:
        everyone = tenancy.is_operator(services, caller)
        detail = services.catalog.detail(problem.slug, caller.tenant, all_tenants=everyone)
    except Exception as exc:  # the reference failed on an example: the judge's fault, said plainly
        raise ApiError(
            503, "problem_unavailable", f"the problem {problem.slug!r} cannot be shown now"
        ) from exc
    assert detail.version is not None
    etag = f'"{detail.version.hash}"'
    if if_none_match is not None and etag in (tag.strip() for tag in if_none_match.split(",")):
        return Response(status_code=304, headers={"ETag": etag})
    return JSONResponse(detail.model_dump(mode="json", by_alias=True), headers={"ETag": etag})
