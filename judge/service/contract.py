"""The OpenAPI document as a contract: what FastAPI's generated schema cannot say by itself.

    install(app, settings)    app.openapi() returns the schema with these additions (built once)

- every error code (``ErrorInfo.code``) as an enum, verdicts as an enum (``not_run`` is a case's only);
- response headers: ``Location`` on 202, ``Retry-After`` on 429 and 503, ``Idempotent-Replayed``;
- each event stream's own event types and their payloads (``x-event-types`` on each events operation:
  a submission's ``status``, ``case``, ``result``, ``failed``; a streamed Run's ``progress``, ``result``,
  ``error``), each a schema under ``components``;
- the result callback as an OpenAPI ``webhooks`` entry, with its signature headers;
- ``callback_url`` as ``format: uri``;
- the limits that are settings, from the settings the app is built with: ``code``'s ``maxLength``
  (``max_code_bytes``), the batch's ``maxItems`` (``batch_max``), the listing's ``limit`` maximum
  (``page_max``), ``wait``'s maximum (``max_wait_s``); and ``tags``' ``maxProperties``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

from judge.dispatch.callbacks import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER
from judge.dispatch.events import CASE, FAILED, RESULT, STATUS
from judge.progress import RunProgress
from judge.results import CaseResult, GradeResult
from judge.service.schemas import MAX_TAGS, ErrorInfo, SubmissionWaiting, VersionMismatch
from judge.service.settings import Settings
from judge.verdicts import Verdict

#: Every ``error.code`` the API answers with (tests/test_api_contract.py checks the routes use no other).
ERROR_CODES = (
    "bad_request",
    "callbacks_unavailable",
    "dependency_unavailable",
    "forbidden",
    "idempotency_conflict",
    "internal_error",
    "invalid_callback_url",
    "invalid_code",
    "invalid_cursor",
    "invalid_fields",
    "invalid_idempotency_key",
    "invalid_input",
    "invalid_request",
    "invalid_tag",
    "invalid_time",
    "limit_exceeded",
    "method_not_allowed",
    "no_callback",
    "not_finished",
    "not_found",
    "not_ready",
    "problem_not_found",
    "problem_unavailable",
    "queue_full",
    "rate_limited",
    "request_timeout",
    "run_busy",
    "sandbox_unavailable",
    "submission_not_found",
    "too_many_streams",
    "unauthorized",
    "unsupported_media_type",
    "warming_up",
)

_HEADERS = {
    "Location": {"description": "Where the new submission is read.", "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before trying again.", "schema": {"type": "integer"}},
    "Idempotent-Replayed": {
        "description": "`true` when this answers a retry with the same Idempotency-Key.",
        "schema": {"type": "string", "enum": ["true"]},
    },
}


_RATE_HEADERS = {
    f"{prefix}RateLimit-{part}": {"description": description, "schema": {"type": "integer"}}
    for prefix in ("", "X-")
    for part, description in (
        ("Limit", "Requests the caller's tightest rate-limit window allows."),
        ("Remaining", "Requests left in that window."),
        ("Reset", "Seconds until the window frees up."),
    )
}


class StatusEvent(BaseModel):
    status: Literal["queued", "running", "done", "failed"]
    attempt: int | None = Field(default=None, description="With `running`: the attempt it starts.")
    cases: int | None = Field(default=None, description="With `running`: how many cases it grades.")
    public: int | None = Field(
        default=None,
        description="With `running`: how many of the cases come one by one (those before the first hidden "
        "case); the `case` events of the rest come together once the grading is over.",
    )
    waiting: SubmissionWaiting | Literal["capacity"] | None = Field(
        default=None,
        description="The first event of a queued submission's stream: where it stands, as GET gives it. "
        "`capacity` in a `queued` event of a grading queued again because no sandbox worker came up for it "
        "(the attempt is not counted), with `reason`.",
    )
    reason: str | None = Field(default=None, description="With `waiting: capacity`: why, in words.")


class CaseEvent(BaseModel):
    index: int = Field(description="The case's position in the grading order.")
    case: CaseResult = Field(
        description="The case's result as the submission's `result.cases` will hold it (hidden cases: "
        "verdict and message, and a known mistake's name and note, never a value)."
    )


class ResultEvent(BaseModel):
    status: Literal["done"]
    verdict: Verdict
    result: GradeResult = Field(description="The GradeResult, as GET /api/v1/submissions/{id}.")
    version_mismatch: VersionMismatch | None = Field(
        default=None,
        description="Present when another version of the problem than the accepted one graded it "
        "(as the submission's version_mismatch).",
    )


class FailedEvent(BaseModel):
    status: Literal["failed"]
    error: str


class RunResultEvent(BaseModel):
    result: GradeResult = Field(description="The body `POST /api/v1/problems/{slug}/run` answers.")


class RunErrorEvent(BaseModel):
    status: int = Field(description="The status `POST /api/v1/problems/{slug}/run` would have answered.")
    error: ErrorInfo


#: A submission's stream (GET .../submissions/{submission_id}/events).
_EVENTS: dict[str, type[BaseModel]] = {
    STATUS: StatusEvent,
    CASE: CaseEvent,
    RESULT: ResultEvent,
    FAILED: FailedEvent,
}
#: A streamed Run's (POST .../problems/{slug}/run/events; judge/service/routes/run_events.py).
_RUN_EVENTS: dict[str, type[BaseModel]] = {
    "progress": RunProgress,
    "result": RunResultEvent,
    "error": RunErrorEvent,
}
#: Each event stream's path (less its /api or /api/v1 prefix) and its event types.
_STREAMS: dict[str, dict[str, type[BaseModel]]] = {
    "/submissions/{submission_id}/events": _EVENTS,
    "/problems/{slug}/run/events": _RUN_EVENTS,
}


def _add_components(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in [*_EVENTS.values(), *_RUN_EVENTS.values()]:
        definition = model.model_json_schema(
            ref_template="#/components/schemas/{model}", mode="serialization"
        )
        for name, nested in definition.pop("$defs", {}).items():
            components.setdefault(name, nested)
        components[model.__name__] = definition
    info = components.get("ErrorInfo", {}).get("properties", {}).get("code")
    if info is not None:
        info["enum"] = list(ERROR_CODES)
    components["Verdict"] = {
        "type": "string",
        "enum": [v.value for v in Verdict],
        "title": "Verdict",
        "description": "`not_run` is only ever a case's (an earlier case stopped the run); a submission "
        "takes the first non-accepted case's verdict.",
    }
    for name in ("SubmissionPublic", "SubmissionSummary"):
        verdict = components.get(name, {}).get("properties", {}).get("verdict")
        if verdict is not None:
            verdict.pop("anyOf", None)
            verdict.update({"anyOf": [{"$ref": "#/components/schemas/Verdict"}, {"type": "null"}]})
    create = components.get("SubmissionCreate", {}).get("properties", {}).get("callback_url")
    if create is not None:
        for option in create.get("anyOf", []):
            if option.get("type") == "string":
                option["format"] = "uri"


def _add_headers(schema: dict[str, Any]) -> None:
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            responses = operation.get("responses", {})
            for status, response in responses.items():
                headers = response.setdefault("headers", {})
                if status in ("429", "503"):
                    headers["Retry-After"] = _HEADERS["Retry-After"]
                if path.startswith("/api/") and (status.startswith("2") or status == "429"):
                    headers.update(_RATE_HEADERS)
                single = path.endswith(("/submissions", "/regrade")) and "{slug}" not in path
                if status == "202" and method == "post" and single:
                    headers["Location"] = _HEADERS["Location"]
                if status == "200" and method == "post" and path.endswith("/submissions"):
                    headers["Location"] = _HEADERS["Location"]
                    headers["Idempotent-Replayed"] = _HEADERS["Idempotent-Replayed"]
                if not headers:
                    response.pop("headers")
            for suffix, events in _STREAMS.items():
                if path.endswith(suffix):
                    operation["x-event-types"] = {
                        kind: {"$ref": f"#/components/schemas/{model.__name__}"}
                        for kind, model in events.items()
                    }


def _string_option(prop: dict[str, Any], kind: str) -> dict[str, Any]:
    """The ``kind`` branch of an optional property (``anyOf: [{type: kind}, {type: null}]``), or itself."""
    return next((o for o in prop.get("anyOf", []) if o.get("type") == kind), prop)


def _add_limits(schema: dict[str, Any], settings: Settings) -> None:
    """The limits that are settings (checked in the routes, so a 422 names the setting), as the server
    it documents is configured."""
    components = schema.get("components", {}).get("schemas", {})
    for name in ("SubmissionCreate", "RunRequest"):
        code = components.get(name, {}).get("properties", {}).get("code")
        if code is not None:
            # The limit is in bytes of UTF-8; a string has at least as many bytes as characters, so
            # maxLength (characters) is the bound it implies and x-maxBytes the limit itself.
            code["maxLength"] = settings.max_code_bytes
            code["x-maxBytes"] = settings.max_code_bytes
            code["description"] = (
                f"{code.get('description', '').rstrip()} At most {settings.max_code_bytes} bytes of UTF-8 "
                "(max_code_bytes; a 422 limit_exceeded past it): maxLength is the character count that "
                "implies, so code with multi-byte characters can be refused below it."
            ).strip()
    tags = components.get("SubmissionCreate", {}).get("properties", {}).get("tags")
    if tags is not None:
        _string_option(tags, "object")["maxProperties"] = MAX_TAGS
    items = components.get("BatchCreate", {}).get("properties", {}).get("items")
    if items is not None:
        items["maxItems"] = settings.batch_max
    bounds = {
        ("/submissions", "get", "limit"): settings.page_max,
        ("/submissions/{submission_id}", "get", "wait"): settings.max_wait_s,
    }
    for path, item in schema.get("paths", {}).items():
        tail = path.removeprefix("/api/v1").removeprefix("/api")
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                bound = bounds.get((tail, method, parameter.get("name")))
                if bound is not None and path.startswith("/api/"):
                    parameter.setdefault("schema", {})["maximum"] = bound


def _add_webhook(schema: dict[str, Any]) -> None:
    def header(name: str, description: str) -> dict[str, Any]:
        return {
            "name": name,
            "in": "header",
            "required": True,
            "schema": {"type": "string"},
            "description": description,
        }

    schema["webhooks"] = {
        "submissionFinished": {
            "post": {
                "operationId": "submission_finished",
                "summary": "The finished submission, POSTed to its callback_url",
                "description": f"Signed: `{SIGNATURE_HEADER}: sha256=<hex>` is the HMAC-SHA256 of "
                "`<timestamp>.<delivery>.<body bytes>` with the operator's callback secret (one value per "
                "secret, comma-separated, while it is rotated). Retried on network errors, 408, 429 and "
                "5xx; answer 2xx once stored.",
                "parameters": [
                    header(SIGNATURE_HEADER, "sha256=<hex>[,sha256=<hex>]"),
                    header(TIMESTAMP_HEADER, "Unix seconds when this try was signed."),
                    header(DELIVERY_HEADER, "One id per submission's callback, the same on every retry."),
                    header("X-Judge-Submission", "The submission's id."),
                    header("X-Judge-Delivery-Attempt", "1 for the first try, then 2, 3, ..."),
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/SubmissionPublic"}}
                    },
                },
                "responses": {"200": {"description": "Stored (any 2xx)."}},
            }
        }
    }


def install(app: FastAPI, settings: Settings) -> None:
    """``settings``: what the app is built with (the limits the schema declares)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
            )
            _add_components(schema)
            _add_headers(schema)
            _add_limits(schema, settings)
            _add_webhook(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
