"""Operators' problem versions: PUT /api/admin/problems/{slug} (a package as tar.gz), GET its versions,
POST .../retire. The use-cases are ``judge.service.problem_admin``; this module maps them to HTTP."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from judge.authoring.problem_archive import ArchiveError
from judge.core.errors import ProblemNotFound
from judge.service.api_errors import ApiError
from judge.service.deps import CallerDep, ServicesDep
from judge.service.problem_admin import TenantError, parse_tenants
from judge.service.routes.workers import require_operator
from judge.service.schemas import API_ERRORS, ErrorBody
from judge.service.schemas_versions import ProblemVersionList, ProblemVersionState
from judge.service.state import Services

router = APIRouter(prefix="/api/admin/problems", tags=["operations"], responses=API_ERRORS)

AdminSlug = Annotated[str, Path(description="The problem's slug.", max_length=64, examples=["layer-norm"])]
HashQuery = Annotated[
    str | None,
    Query(
        description="One version, by its content hash (64 hex digits); absent: every version of the slug.",
        pattern=r"^[0-9a-f]{64}$",
    ),
]
_OPERATOR: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "No API key."},
    403: {"model": ErrorBody, "description": "Not an operator key (operator_keys)."},
}


def _listing(services: Services, slug: str) -> ProblemVersionList:
    try:
        served = services.catalog.get(slug)
    except ProblemNotFound:
        served_hash = None
    else:
        served_hash = services.worker.manifest(served)["problem_hash"]
    versions = [ProblemVersionState.of(v) for v in services.pushed.versions(slug)]
    return ProblemVersionList(slug=slug, versions=versions, served=served_hash)


@router.put(
    "/{slug}",
    status_code=202,
    response_model=ProblemVersionState,
    summary="Add or update a problem: a version from its package (tar.gz), live once `judge check` passes",
    description="The body is a tar.gz holding `problems/<slug>/...` (problem.toml, statement.md, starter.py, "
    "cases, validator.py, solutions) and `reference/<module>.py` (`judge push-problem` builds it). The "
    "version is stored as `checking` and `judge check` runs on it in a process of its own; it turns `live` "
    "(every node serves it after its next poll, without a restart) or `rejected` with the findings: poll "
    "GET. The same package again while it is checking or live answers 200 with it, unchanged. `tenant` "
    "(repeated or comma-separated) scopes the problem to those tenants' keys.",
    responses={
        200: {"model": ProblemVersionState, "description": "This package is already checking or live."},
        202: {"description": "Stored; its check has started."},
        **_OPERATOR,
        413: {"model": ErrorBody, "description": "The archive is larger than problem_archive_bytes."},
        422: {
            "model": ErrorBody,
            "description": "The archive or a tenant is refused (the message says why).",
        },
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def put_problem(
    slug: AdminSlug,
    request: Request,
    services: ServicesDep,
    caller: CallerDep,
    tenant: Annotated[
        list[str] | None, Query(description="Tenants the problem is visible to (absent: everyone).")
    ] = None,
) -> JSONResponse:
    require_operator(services, caller)
    try:
        tenants = parse_tenants(tenant)
    except TenantError as exc:
        raise ApiError(422, "invalid_tenant", f"tenant: {exc}", argument="tenant") from None
    archive = await request.body()
    try:
        record, new = await run_in_threadpool(
            services.problem_admin.push, slug, archive, tenants=tenants, pushed_by=caller.key_name
        )
    except ArchiveError as exc:
        raise ApiError(422, "invalid_archive", f"{exc.where}: {exc.message}", path=exc.where) from None
    body = ProblemVersionState.of(record).model_dump(mode="json")
    return JSONResponse(body, status_code=202 if new else 200)


@router.get(
    "/{slug}",
    response_model=ProblemVersionList,
    summary="A problem's pushed versions: state, check findings, tenants; and the version served",
    responses=_OPERATOR,
)
def get_problem_versions(slug: AdminSlug, services: ServicesDep, caller: CallerDep) -> ProblemVersionList:
    require_operator(services, caller)
    return _listing(services, slug)


@router.post(
    "/{slug}/retire",
    response_model=ProblemVersionList,
    summary="Retire a pushed version (or every one of the slug): no node serves it after its next poll",
    description="Submissions still queued for a retired version wait `version_hold_s`, then end `failed` "
    "saying so. A slug with no live pushed version left is served from the problems folder again, if it "
    "has it.",
    responses={**_OPERATOR, 404: {"model": ErrorBody, "description": "No such live or checking version."}},
)
def retire_problem(
    slug: AdminSlug, services: ServicesDep, caller: CallerDep, hash: HashQuery = None
) -> ProblemVersionList:
    require_operator(services, caller)
    retired = services.problem_admin.retire(slug, hash)
    if not retired:
        which = f"version {hash[:12]} of {slug!r}" if hash else f"version of {slug!r}"
        raise ApiError(404, "version_not_found", f"no live or checking {which} to retire", path="slug")
    services.refresh_problems()
    return _listing(services, slug)
