"""The API's errors: one JSON shape (``schemas.ErrorBody``) for every 4xx and 5xx.

    ApiError(status, code, message, argument=, path=, limit=, headers=)   raised by routes and deps

Handlers turn ApiError, the judge's InputError, FastAPI's validation errors and Starlette's HTTP errors
(404 route, 405, 413 ...) into that shape. A dependency that does not answer (the database, Redis) is a
503 ``dependency_unavailable`` with ``Retry-After``, logged once per outage (``judge.service.degraded``).
Anything else is logged and answered with a bare 500 that holds no detail: no stack trace, server path or
hidden data ever reaches a client.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from judge.core.errors import InputError
from judge.service.degraded import DATABASE_ERRORS, REDIS_ERRORS, UNAVAILABLE_RETRY_S
from judge.service.schemas import ErrorBody, ErrorDetail, ErrorInfo

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "limit_exceeded",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "not_ready",
}


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        argument: str | None = None,
        path: str | None = None,
        limit: str | None = None,
        headers: Mapping[str, str] | None = None,
        details: Sequence[ErrorDetail] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.info = ErrorInfo(
            code=code,
            message=message,
            argument=argument,
            path=path,
            limit=limit,
            details=list(details) if details is not None else None,
        )
        self.headers = dict(headers or {})


def error_response(status: int, info: ErrorInfo, headers: Mapping[str, str] | None = None) -> JSONResponse:
    body = ErrorBody(error=info).model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


#: The argument a path starts with: ``grads`` of ``grads["w"][0]``, ``x`` of a validator's ``x rows (b)``
#: or ``x, w`` (a bound on both: the first named).
_ARGUMENT = re.compile(r"[A-Za-z_]\w*")


def input_error(exc: InputError) -> ApiError:
    """A Run input the converter or the problem's validator rejected: 422 naming the argument (the page
    shows the message under that argument's box) and the path."""
    argument = _ARGUMENT.match(exc.path)
    return ApiError(422, "invalid_input", str(exc), argument=argument[0] if argument else None, path=exc.path)


def _loc(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        where, parts = parts[0], parts[1:]
        if where != "body" and parts:
            return f"{where}.{'.'.join(parts)}"
    text = ""
    for part in parts:
        text += f"[{part}]" if part.isdigit() else (f".{part}" if text else part)
    return text or "body"


def _validation_message(error: Mapping[str, Any]) -> str:
    message = str(error.get("msg", "invalid"))
    if error.get("type") == "json_invalid":
        return f"the body is not valid JSON ({error.get('ctx', {}).get('error', 'parse error')})"
    return message


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.info, exc.headers)

    @app.exception_handler(InputError)
    async def _input_error(_request: Request, exc: InputError) -> JSONResponse:
        api = input_error(exc)
        return error_response(api.status, api.info)

    @app.exception_handler(RequestValidationError)
    async def _validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        details = [ErrorDetail(path=_loc(e.get("loc", ())), message=_validation_message(e)) for e in errors]
        first = details[0] if details else ErrorDetail(path="body", message="invalid request")
        more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
        info = ErrorInfo(
            code="invalid_request",
            message=f"{first.path}: {first.message}{more}",
            path=first.path,
            details=details[:20],
        )
        return error_response(422, info)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 400 and message == "There was an error parsing the body":
            # FastAPI's answer to a body that is not UTF-8: a malformed body like invalid JSON, so a 422.
            info = ErrorInfo(code="invalid_request", message="the body is not UTF-8 JSON", path="body")
            return error_response(422, info)
        if exc.status_code == 404 and message == "Not Found":
            message = "no such endpoint"
        return error_response(exc.status_code, ErrorInfo(code=code, message=message), exc.headers)

    async def _unavailable(request: Request, exc: Exception) -> JSONResponse:
        database = isinstance(exc, DATABASE_ERRORS)
        dependency, what = ("database_url", "the database") if database else ("queue_url", "Redis")
        services = getattr(request.app.state, "services", None)
        fallback = getattr(services, "database", None) if database else None
        if fallback is None and services is not None:
            fallback = services.fallback(dependency)
        if fallback is not None:
            fallback.failed(exc)  # logged once per outage
        else:
            log.warning("%s %s: %s does not answer (%s)", request.method, request.url.path, what, exc)
        api = ApiError(
            503,
            "dependency_unavailable",
            f"{what} does not answer ({type(exc).__name__}); retry in {UNAVAILABLE_RETRY_S} s",
            headers={"Retry-After": str(UNAVAILABLE_RETRY_S)},
        )
        return error_response(api.status, api.info, api.headers)

    for kind in (*DATABASE_ERRORS, *REDIS_ERRORS):
        app.add_exception_handler(kind, _unavailable)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        info = ErrorInfo(code="internal_error", message="the judge failed to handle this request")
        return error_response(500, info)
