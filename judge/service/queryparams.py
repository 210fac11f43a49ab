"""A query parameter the route does not take is a 422 naming it, as an unknown body field is: a typo
such as ``feilds=`` or ``created_afer=`` must not be ignored silently (a listing would answer with no
filter at all).

    router = APIRouter(..., dependencies=[Depends(known_query_parameters)])
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute

from judge.service.api_errors import ApiError

_NAMES: dict[int, frozenset[str]] = {}


def _names(dependant: Any) -> frozenset[str]:
    found = {str(field.alias) for field in dependant.query_params}
    for sub in dependant.dependencies:
        found |= _names(sub)
    return frozenset(found)


def known_query_parameters(request: Request) -> None:
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = _NAMES.get(id(route))
    if known is None:
        known = _NAMES[id(route)] = _names(route.dependant)
    for name in request.query_params:
        if name not in known:
            shown = ", ".join(sorted(known)) or "none"
            raise ApiError(
                422,
                "invalid_request",
                f"unknown query parameter {name[:64]!r} (this route takes: {shown})",
                path=f"query.{name[:64]}",
            )
