"""The OpenAPI document as a contract: what FastAPI's generated schema cannot say by itself.

    install(app, settings)    app.openapi() returns the schema with these additions (built once)

- every error code (``ErrorInfo.code``) as an enum, verdicts as an enum (``not_run`` is a case's only);
- response headers: ``Location`` on 202, ``Retry-After`` on 429 and 503, ``Idempotent-Replayed``;
- each event stream's own event types and their payloads (``x-event-types`` on each events operation:
  a submission's ``status``, ``case``, ``result``, ``failed``; a streamed Run's ``progress``, ``result``,
  ``error``), each a schema under ``components``;
- the result callback as an OpenAPI ``webhooks`` entry, with its signature headers, and as a
  ``callbacks`` object of the submit operations whose body is the named schema ``SubmissionCallback``
  (generators read ``callbacks`` and component schemas; few read ``webhooks``);
- ``callback_url``'s ``pattern`` (http or https, printable ASCII); the listing's ``created_after`` and
  ``created_before`` as ``format: date-time`` strings (ISO 8601, never numbers);
- the 500 ``internal_error`` and the 431 (headers over 16 KiB) every operation may answer, the 503 (with
  ``Retry-After``) of every /api operation (a dependency that does not answer);
- security: an API key is optional (``{}``) where anonymous callers are served (``allow_anonymous``),
  required on the operations that always need one (``KEY_REQUIRED``);
- each event stream's ``text/event-stream`` content as a string with that ``contentMediaType``, its
  events' types and their ``data`` schemas in ``x-event-types`` (OpenAPI 3.1 has no schema for one event
  of a stream);
- the limits that are settings, from the settings the app is built with: ``code``'s ``maxLength``
  (``max_code_bytes``), the batch's ``maxItems`` (``batch_max``), the listing's ``limit`` maximum
  (``page_max``), ``wait``'s maximum (``max_wait_s``); and ``tags``' ``maxProperties``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

from judge.core.progress import RunProgress
from judge.core.results import CaseResult, GradeResult
from judge.core.settings import Settings
from judge.core.verdicts import Verdict
from judge.dispatch.callbacks import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    URL_PATTERN,
    WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    WEBHOOK_TIMESTAMP_HEADER,
)
from judge.dispatch.events import CASE, FAILED, RESULT, STATUS
from judge.service.schemas import (
    MAX_TAGS,
    ErrorBody,
    ErrorInfo,
    SubmissionCallback,
    SubmissionWaiting,
    VersionMismatch,
)

#: Every ``error.code`` the API answers with (tests/test_api_contract.py checks the routes use no other).
ERROR_CODES = (
    "bad_request",
    "callbacks_unavailable",
    "code_too_large",
    "csrf_failed",
    "dependency_unavailable",
    "forbidden",
    "idempotency_conflict",
    "internal_error",
    "invalid_archive",
    "invalid_callback_url",
    "invalid_code",
    "invalid_cursor",
    "invalid_fields",
    "invalid_filter",
    "invalid_idempotency_key",
    "invalid_input",
    "invalid_request",
    "invalid_tag",
    "invalid_tenant",
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
    "regrade_conflict",
    "regrade_not_found",
    "request_timeout",
    "run_busy",
    "sandbox_unavailable",
    "signed_out",
    "submission_not_found",
    "too_many_streams",
    "too_many_submissions",
    "unauthorized",
    "unsupported_media_type",
    "version_not_found",
    "warming_up",
)

_HEADERS = {
    "Location": {
        "description": "Where the new submission is read (a regrade: the submission's gradings; a problem "
        "regrade: its progress).",
        "schema": {"type": "string"},
    },
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
    waiting: SubmissionWaiting | Literal["capacity", "version"] | None = Field(
        default=None,
        description="The first event of a queued submission's stream: where it stands, as GET gives it. "
        "`capacity` in a `queued` event of a grading queued again because no sandbox worker came up for it; "
        "`version` in one of a submission given back by a grader that lacks the version of its problem it "
        "was accepted for (held for a grader that has it). Neither counts as an attempt; `reason` says why.",
    )
    reason: str | None = Field(
        default=None, description="With `waiting: capacity` or `waiting: version`: why, in words."
    )
    regrade: bool | None = Field(
        default=None, description="`true` in the events of a regrade (a new grading of the submission)."
    )
    grading: int | None = Field(default=None, description="With `regrade`: the new grading's number.")


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
    regrade: bool | None = Field(default=None, description="`true` when a regrade ends: a new grading.")
    grading: int | None = Field(default=None, description="With `regrade`: the new grading's number.")


class FailedEvent(BaseModel):
    status: Literal["failed"]
    error: str
    regrade: bool | None = Field(
        default=None,
        description="`true` when a regrade failed: that grading failed, the submission keeps its current "
        "grading (and status).",
    )
    grading: int | None = Field(default=None, description="With `regrade`: the failed grading's number.")


class RunResultEvent(BaseModel):
    result: GradeResult = Field(description="The body `POST /api/v1/problems/{slug}/run` answers.")


class RunErrorEvent(BaseModel):
    status: int = Field(description="The status `POST /api/v1/problems/{slug}/run` would have answered.")
    error: ErrorInfo


#: Operations that need an API key even where anonymous callers are served (legacy_* copies too).
KEY_REQUIRED = frozenset(
    {
        "list_submissions",
        "erase_user",
        "list_workers",
        "regrade_problem",
        "get_regrade",
        "cancel_regrade",
        "put_problem",
        "get_problem_versions",
        "retire_problem",
    }
)


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
    # The callback's body (no route answers it) and the error body (every 500 and 503 refers to it).
    for model in (SubmissionCallback, ErrorBody):
        definition = model.model_json_schema(
            ref_template="#/components/schemas/{model}", mode="serialization"
        )
        for name, nested in definition.pop("$defs", {}).items():
            components.setdefault(name, nested)
        components.setdefault(model.__name__, definition)
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
    for name in ("SubmissionPublic", "SubmissionSummary", "SubmissionFields", "SubmissionCallback"):
        verdict = components.get(name, {}).get("properties", {}).get("verdict")
        if verdict is not None:
            verdict.pop("anyOf", None)
            verdict.update({"anyOf": [{"$ref": "#/components/schemas/Verdict"}, {"type": "null"}]})
    create = components.get("SubmissionCreate", {}).get("properties", {}).get("callback_url")
    if create is not None:
        # A pattern, not format: uri: exactly what the body's validation refuses (a batch refuses a
        # malformed item's body whole), where uri would also name URLs it accepts as malformed.
        _string_option(create, "string")["pattern"] = URL_PATTERN


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }


def _add_failures(schema: dict[str, Any], settings: Settings) -> None:
    """The 500 and 503 any operation may answer; optional security where anonymous callers are served;
    the listing's times as date-time strings."""
    for path, item in schema.get("paths", {}).items():
        for operation in item.values():
            responses = operation.setdefault("responses", {})
            responses.setdefault(
                "500", _error_response("An unexpected failure (logged): `internal_error`, no detail.")
            )
            responses.setdefault(
                "431",
                _error_response(
                    "The request's headers are over 16 KiB: `limit_exceeded` (max_header_bytes)."
                ),
            )
            if path.startswith("/api/"):
                responses.setdefault(
                    "503",
                    _error_response(
                        "A dependency (the database, Redis) does not answer now: "
                        "`dependency_unavailable`; see Retry-After."
                    ),
                )
            name = str(operation.get("operationId", "")).removeprefix("legacy_")
            security = operation.get("security")
            if security and settings.allow_anonymous and name not in KEY_REQUIRED and {} not in security:
                security.append({})
            for parameter in operation.get("parameters", []):
                if parameter.get("name") in ("created_after", "created_before"):
                    _string_option(parameter.get("schema", {}), "string")["format"] = "date-time"


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
                single = path.endswith(("/submissions", "/regrade"))
                if status == "202" and method == "post" and single:
                    headers["Location"] = _HEADERS["Location"]
                if status == "200" and method == "post" and path.endswith(("/submissions", "/batch")):
                    if not path.endswith("/batch"):
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
                    stream = responses.get("200", {}).setdefault("content", {}).get("text/event-stream")
                    if stream is not None:
                        stream["schema"] = {
                            "type": "string",
                            "contentMediaType": "text/event-stream",
                            "description": "Server-sent events, each an `event:` type and its `data:` as "
                            f"JSON: {', '.join(f'`{kind}`' for kind in events)}; each `data` has the "
                            "schema x-event-types names for its type.",
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


def _webhook_operation() -> dict[str, Any]:
    def header(name: str, description: str, *, deprecated: bool = False) -> dict[str, Any]:
        declared: dict[str, Any] = {
            "name": name,
            "in": "header",
            "required": True,
            "schema": {"type": "string"},
            "description": description,
        }
        if deprecated:
            declared["deprecated"] = True
        return declared

    return {
        "operationId": "submission_finished",
        "summary": "The finished submission, POSTed to its callback_url",
        "description": "Signed to the Standard Webhooks scheme (verify it with a Standard Webhooks "
        f"library and the `whsec_` secret of the operator's callback secret): `{WEBHOOK_SIGNATURE_HEADER}: "
        "v1,<base64>` is the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body bytes>` (one "
        "space-separated value per secret while it is rotated). The `X-Judge-*` signature headers are "
        "deprecated (docs/api.md says until when). Retried on network errors, 408, 425, 429 and 5xx; "
        "answer 2xx once stored; drop a `webhook-id` you have processed (a retry), never a new one "
        "(a redelivery is a new delivery with a new id).",
        "parameters": [
            header(WEBHOOK_ID_HEADER, "The delivery's id: the same on every retry, new for a redelivery."),
            header(WEBHOOK_TIMESTAMP_HEADER, "Unix seconds when this try was signed."),
            header(WEBHOOK_SIGNATURE_HEADER, "v1,<base64>[ v1,<base64>]"),
            header(SIGNATURE_HEADER, "sha256=<hex>[,sha256=<hex>]", deprecated=True),
            header(TIMESTAMP_HEADER, "Unix seconds (as webhook-timestamp).", deprecated=True),
            header(DELIVERY_HEADER, "The delivery id (as webhook-id).", deprecated=True),
            header("X-Judge-Submission", "The submission's id."),
            header("X-Judge-Delivery-Attempt", "1 for the first try of a delivery, then 2, 3, ..."),
        ],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SubmissionCallback"}}},
        },
        "responses": {"200": {"description": "Stored (any 2xx)."}},
    }


def _add_webhook(schema: dict[str, Any]) -> None:
    """The callback as a ``webhooks`` entry and as a ``callbacks`` object of each submit operation."""
    schema["webhooks"] = {"submissionFinished": {"post": _webhook_operation()}}
    for path, item in schema.get("paths", {}).items():
        operation = item.get("post")
        if operation is None or not path.endswith(("/submissions", "/submissions/batch")):
            continue
        where = "{$request.body#/callback_url}"
        if path.endswith("/batch"):
            where = "{$request.body#/items/0/callback_url}"  # each item's own callback_url
        callback = _webhook_operation()
        callback["operationId"] = f"{operation['operationId']}_callback"
        operation["callbacks"] = {"submissionFinished": {where: {"post": callback}}}


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
            _add_failures(schema, settings)
            _add_headers(schema)
            _add_limits(schema, settings)
            _add_webhook(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
