"""FastAPI dependencies: the services, who is asking (API key or address), rate limits, the problem."""

from __future__ import annotations

import contextlib
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from judge.core.errors import ProblemNotFound
from judge.core.problems import Problem
from judge.service import tenancy
from judge.service.api_errors import ApiError
from judge.service.ratelimit import STATE_KEY, Principal
from judge.service.state import Services

_bearer = HTTPBearer(auto_error=False, description="An API key issued by the judge's operator.")


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def _failed(services: Services, address: str, message: str) -> ApiError:
    """A failed authentication: 401, or 429 once this address has failed too often (key guessing)."""
    retry_after = services.limiter.hit_failed_auth(address)
    if retry_after is None:
        return _unauthorized(message)
    services.metrics.rejected.labels("failed_auth").inc()
    return ApiError(
        429,
        "rate_limited",
        f"too many failed authentications from client {address}; retry in {retry_after} s",
        limit="failed_auth_rate_limit",
        headers={"Retry-After": str(retry_after)},
    )


def get_principal(
    request: Request,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller. A key that is presented must be valid (no silent fall-back to anonymous)."""
    address = request.client.host if request.client else "unknown"
    if request.headers.get("authorization") is not None:
        if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
            raise _failed(services, address, "the Authorization header must be 'Bearer <API key>'")
        key = services.api_keys.identify(credentials.credentials)
        if key is None:
            raise _failed(services, address, "unknown API key")
        return Principal(key.name, address, key.key_id, key.tenant)
    if not services.settings.allow_anonymous:
        raise _unauthorized("an API key is required (Authorization: Bearer <API key>)")
    return Principal(None, address)


def rate_limited(
    request: Request, principal: Annotated[Principal, Depends(get_principal)], services: ServicesDep
) -> Principal:
    """The caller, after counting this request against its rate limit (429 with Retry-After past it).
    Every answer carries the window's RateLimit-* headers (RateLimitHeaders)."""
    retry_after = services.limiter.hit(principal)
    # The counters' storage failing after the hit: answer without the headers.
    with contextlib.suppress(Exception):
        setattr(request.state, STATE_KEY, services.limiter.window(principal))
    if retry_after is not None:
        services.metrics.rejected.labels("rate_limit").inc()
        who = f"API key {principal.key_name!r}" if principal.key_name else f"client {principal.address}"
        raise ApiError(
            429,
            "rate_limited",
            f"rate limit of {who} exceeded; retry in {retry_after} s",
            headers={"Retry-After": str(retry_after)},
        )
    return principal


CallerDep = Annotated[Principal, Depends(rate_limited)]


SlugPath = Annotated[str, Path(description="The problem's slug.", examples=["global-norm-clipping"])]


def get_problem(
    slug: SlugPath, services: ServicesDep, caller: Annotated[Principal, Depends(rate_limited)]
) -> Problem:
    """The problem, if the caller may see it (one scoped to other tenants is as unknown: 404)."""
    try:
        problem = services.catalog.get(slug)
    except ProblemNotFound:
        problem = None
    if problem is None or not tenancy.sees(services, caller, slug):
        known = ", ".join(tenancy.known_slugs(services, caller))
        raise ApiError(
            404, "problem_not_found", f"no problem {slug[:100]!r} (known: {known})", path="slug"
        ) from None
    return problem


ProblemDep = Annotated[Problem, Depends(get_problem)]
