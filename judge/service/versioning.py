"""The versioned API: every ``/api/...`` route is served under ``/api/v1/...`` too, with a stable
``operationId`` (the endpoint's name); the unversioned path keeps working and is marked deprecated in the
schema (its operationId is ``legacy_<name>``).

    versioned(app)      after every router is included
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

PREFIX = "/api/v1"
LEGACY = "/api"


def versioned(app: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Include each router, then a ``/api/v1`` copy of its ``/api`` routes; raise if two endpoints
    share a name (their operationIds would clash)."""
    v1 = APIRouter()
    seen: set[str] = set()
    for router in routers:
        app.include_router(router)
        for route in router.routes:
            if not isinstance(route, APIRoute) or not route.path.startswith(LEGACY + "/"):
                continue
            name = route.endpoint.__name__
            if name in seen:
                raise RuntimeError(f"two API endpoints are named {name!r}: operationIds must be unique")
            seen.add(name)
            v1.add_api_route(
                PREFIX + route.path[len(LEGACY) :],
                route.endpoint,
                methods=sorted(route.methods or ()),
                response_model=route.response_model,
                status_code=route.status_code,
                tags=list(route.tags or []),
                dependencies=list(route.dependencies),
                summary=route.summary,
                description=route.description,
                response_description=route.response_description,
                responses=dict(route.responses),
                response_class=route.response_class,
                operation_id=name,
                name=name,
                openapi_extra=route.openapi_extra,
            )
            route.deprecated = True  # the routers are shared by every app: setting it again is harmless
            route.operation_id = f"legacy_{name}"
    app.include_router(v1)
