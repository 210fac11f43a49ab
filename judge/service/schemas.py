"""Request and response bodies of the API (separate models for what comes in and what goes out).

Run results and submission results are ``judge.core.results.GradeResult`` exactly as ``judge grade --json``
prints it (``model_dump(mode="json", by_alias=True)``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from judge.core.results import GradeResult, LeafValue
from judge.core.spec import ArgKind
from judge.dispatch.callbacks import url_character_refusal
from judge.kinds.registry import KINDS
from judge.store import Status
from judge.store.pages import COUNT_MAX

#: A JSON kind a Run input may be; ``integer`` is a number with an integral value; ``string`` names a
#: function of the problem's menu.
JsonKind = Literal["object", "array", "number", "integer", "boolean", "string"]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class _In(BaseModel):
    # An unknown field is an error (a typo such as "input" for "inputs" must not be ignored silently).
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------------------------- errors


class ErrorDetail(_Out):
    path: str = Field(description="Where in the request: a body field, or an input's JSON path.")
    message: str


class ErrorInfo(_Out):
    code: str = Field(description="Stable machine-readable code, e.g. invalid_input, queue_full.")
    message: str = Field(description="What is wrong, for a person.")
    argument: str | None = Field(default=None, description="The function argument at fault (Run inputs).")
    path: str | None = Field(default=None, description="JSON path of the offending value.")
    limit: str | None = Field(default=None, description="The setting whose limit was exceeded.")
    details: list[ErrorDetail] | None = None


class ErrorBody(_Out):
    """Every error response has this shape; never a stack trace, a server path or hidden-case data."""

    error: ErrorInfo


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries with ErrorBody for the given statuses."""
    meaning = {
        401: "No API key where one is required, or an unknown one.",
        404: "Not found (the message names what).",
        413: "The request body is larger than max_body_bytes.",
        422: "A malformed request; `path` names the field (and `argument` a Run input).",
        429: "Rate limit, or no capacity now; see Retry-After.",
        500: "An unexpected failure (logged): `internal_error`, with no detail.",
        503: "A dependency (database, Redis) or the sandbox does not answer now, or the service is not "
        "ready; see Retry-After.",
    }
    return {status: {"model": ErrorBody, "description": meaning[status]} for status in statuses}


#: Every /api route may answer these.
API_ERRORS = error_responses(401, 422, 429, 500, 503)


# ---------------------------------------------------------------------------------------------- problems


class ProblemVersion(_Out):
    hash: str = Field(
        description="SHA-256 of every file grading reads (spec, statement, cases, reference): the "
        "problem_hash of the manifests of the submissions it graded, and the detail's ETag."
    )
    revision: int = Field(
        ge=1,
        description="The package's human-readable version (`revision` in its problem.toml, 1 when "
        "absent), raised by its authors with each change to what grading reads: the problem_revision "
        "of manifests. The hash is the exact version (it changes with any file).",
    )
    short_hash: str = Field(description="The hash's first 12 hex digits, for people.")


class VersionMismatch(_Out):
    """A submission graded with another version of its problem than the one it was accepted for."""

    accepted: dict[str, Any] = Field(description="`{hash, revision}` of the version it was accepted for.")
    graded: dict[str, Any] = Field(description="`{hash, revision}` of the version that graded it.")
    message: str = Field(description="The same, in a sentence.")


class ProblemSummary(_Out):
    slug: str
    title: str
    difficulty: Literal["easy", "medium", "hard"]
    tags: list[str]
    similar: list[str] = Field(
        default_factory=list,
        description="Slugs of problems to try next (strongest first); only problems of this catalog.",
    )
    function: str
    signature: str = Field(description="e.g. clip_by_global_norm(grads, max_norm)")
    version: ProblemVersion | None = None


class ArgumentPublic(_Out):
    name: str
    kind: ArgKind = Field(description="; ".join(f"{k.name}: {k.api_text}" for k in KINDS.values()) + ".")
    accepts: list[JsonKind] = Field(description="The JSON kinds a Run input for this argument may be.")
    kind_text: str = Field(
        description="The kind in words, e.g. 'an int32 array with 0 dimensions (a scalar)'."
    )
    dtype: Literal["case", "int32", "uint32", "bool"] | None = Field(
        description="array only: the leaf dtype ('case': the case's float dtype); None for other kinds."
    )
    ndim: list[int] = Field(
        description="array and key only: the ranks the array (the key array) may have; empty means any."
    )
    key_impl: Literal["threefry2x32"] | None = Field(
        default=None, description="key only: the PRNG implementation of the keys; None for other kinds."
    )
    traced: bool
    description: str
    choices: list[str] = Field(
        default_factory=list,
        description="For a function argument: the names of the functions it may be; for a str argument: "
        "the strings it may be.",
    )


class OutputPublic(_Out):
    kind: Literal["dict", "tuple", "pytree"]
    names: list[str]


class ExamplePublic(_Out):
    name: str
    dtype: str
    input: dict[str, Any] = Field(description="Run-panel JSON per argument.")
    expected: LeafValue | None = Field(description="The reference's output (None if it failed).")
    explanation: str | None


class LimitsPublic(_Out):
    case_time_s: float
    wall_time_s: float
    memory_mb: int
    output_bytes: int


class ProblemDetail(ProblemSummary):
    statement_markdown: str = Field(description="The statement with its examples filled in.")
    statement_html: str = Field(description="Rendered HTML; math as MathML with a TeX annotation.")
    arguments: list[ArgumentPublic]
    output: OutputPublic
    examples: list[ExamplePublic]
    hints: list[str] = Field(description="Markdown, in the order to reveal them.")
    requirements: list[str] = Field(description="Markdown items of the statement's Requirements section.")
    constraints: list[str] = Field(description="Markdown items of the statement's Constraints section.")
    starter_code: str
    run_panel_dtype: str = Field(description="The dtype custom Run inputs are converted to by default.")
    run_dtypes: list[str] = Field(
        default_factory=list, description="The dtypes a Run's custom inputs may be given (`dtype`)."
    )
    limits: LimitsPublic


# ---------------------------------------------------------------------------------------------- run


_EXAMPLE_CODE = (
    "import jax\nimport jax.numpy as jnp\n\n\ndef clip_by_global_norm(grads, max_norm):\n"
    "    norm = jnp.sqrt(sum(jnp.sum(jnp.square(g.astype(jnp.float32))) for g in jax.tree.leaves(grads)))\n"
    "    scale = jnp.minimum(1.0, max_norm / jnp.maximum(norm, 1e-30))\n"
    "    clipped = jax.tree.map(lambda g: (g * scale).astype(g.dtype), grads)\n"
    '    return {"clipped": clipped, "global_norm": norm}\n'
)


class RunRequest(_In):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"code": _EXAMPLE_CODE},
                {"code": _EXAMPLE_CODE, "inputs": {"grads": {"w": [3.0, 4.0]}, "max_norm": 1.0}},
            ]
        },
    )

    code: str = Field(description="Python source defining the problem's function.")
    inputs: dict[str, Any] | None = Field(
        default=None,
        description="One Run-panel JSON value per argument name: run them as one custom case. "
        "Without it the public examples run.",
    )
    dtype: Literal["float32", "bfloat16"] | None = Field(
        default=None,
        description="With `inputs`: the dtype their float leaves become, one of the problem's `run_dtypes` "
        "(default `run_panel_dtype`).",
    )


# ---------------------------------------------------------------------------------------------- submissions


#: Caller metadata bounds: an external user id, and at most MAX_TAGS tags of bounded names and values.
MAX_TAGS = 16
ExternalUser = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:@+\-]+$")
]
TagName = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.\-]+$")]
TagValue = Annotated[str, StringConstraints(max_length=200)]


class SubmissionCreate(_In):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "problem": "global-norm-clipping",
                    "code": _EXAMPLE_CODE,
                    "external_user": "learner-42",
                    "tags": {"course": "jax-101", "assignment": "week-3"},
                }
            ]
        },
    )

    problem: str = Field(description="The problem's slug.", max_length=200)
    code: str = Field(description="Python source defining the problem's function.")
    callback_url: str | None = Field(
        default=None,
        description="POSTed the finished submission (signed with X-Judge-Signature); its host must be on "
        "the operator's allowlist.",
        max_length=2048,
    )
    external_user: ExternalUser | None = Field(
        default=None,
        description="The platform's own id of the learner (letters, digits and `._:@+-`): stored, returned "
        "in reads and callbacks, a listing filter, and what DELETE /api/users/{external_user} erases.",
    )
    tags: dict[TagName, TagValue] | None = Field(
        default=None,
        description=f"Free tags such as course or assignment (at most {MAX_TAGS}), returned with the "
        "submission; `tag=name:value` filters a listing.",
    )

    @field_validator("callback_url")
    @classmethod
    def _url_characters(cls, value: str | None) -> str | None:
        """The URL's syntax (``callback.URL_PATTERN``): a malformed one is a malformed body (a whole batch
        is refused); its host and the allowlist are checked by the submit (a batch item's own 422)."""
        if value is None:
            return value
        bad = url_character_refusal(value)
        if bad is not None:
            raise ValueError(bad)
        scheme, sep, rest = value.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or not rest:
            raise ValueError("must be an http:// or https:// URL")
        return value

    @field_validator("tags")
    @classmethod
    def _few_tags(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None and len(value) > MAX_TAGS:
            raise ValueError(f"at most {MAX_TAGS} tags allowed, got {len(value)}")
        return value


#: ``regrade_of``'s description: a field of rows made by regrades of before gradings.
REGRADE_OF = (
    "Legacy: the submission this one regrades, on submissions that regrades made before a regrade became "
    "a new grading of the same submission (`grading`, `GET .../gradings`); None on every other."
)
GRADING = "The number of the grading its status, verdict and result come from: 1 until it is regraded."


class SubmissionLinks(_Out):
    self: str
    events: str


class SubmissionWaiting(_Out):
    """Where a queued submission stands on this judge (in-process dispatch; and, with any dispatch, a
    submission held for the version of its problem it was accepted for)."""

    ahead: int = Field(ge=0, description="Submissions that go first.")
    reason: Literal["queue", "run_reserve", "capacity", "starting", "version"] = Field(
        description="Why it waits: `queue` behind others; `run_reserve` held back so that Runs keep warm "
        "sandbox workers (at most 30 s); `capacity` queued again because no sandbox worker came up for it "
        "(the attempt is not counted); `starting` next, about to take a sandbox worker; `version` held "
        "until a grader has the version of its problem it was accepted for (a rollout under way; never "
        "graded with another version, the wait is not an attempt)."
    )
    estimate_s: int | None = Field(
        ge=1,
        description="Rough whole seconds until its grading starts, from recent grading times (null: "
        "unknown, as while it waits for a version).",
    )
    message: str = Field(description="The same in words, for a learner.")


class SubmissionAccepted(_Out):
    id: str
    problem: str
    status: Status
    created_at: datetime
    external_user: str | None = None
    tags: dict[str, str] | None = None
    regrade_of: str | None = Field(default=None, description=REGRADE_OF)
    links: SubmissionLinks
    waiting: SubmissionWaiting | None = Field(
        default=None,
        description="Where it stands in the queue now, as GET gives it (a single POST on a judge that "
        "dispatches in its own process; absent from a batch's items and a replayed POST).",
    )


class BatchCreate(_In):
    items: list[SubmissionCreate] = Field(
        min_length=1, description="The submissions (at most the batch_max setting)."
    )


class BatchItem(_Out):
    """One item of a batch: stored and queued (``submission``), or refused (``error``), by itself."""

    index: int
    status_code: int = Field(description="The status a single POST of this item would have had.")
    submission: SubmissionAccepted | None = None
    error: ErrorInfo | None = None


class BatchAccepted(_Out):
    items: list[BatchItem]
    accepted: int
    rejected: int


class SubmissionCode(_Out):
    id: str
    problem: str
    code: str


class SubmissionSummary(_Out):
    """A submission in a listing: everything but its result and code (``fields`` may add them)."""

    id: str
    problem: str
    status: Status
    verdict: str | None
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    external_user: str | None
    tags: dict[str, str] | None
    regrade_of: str | None = Field(description=REGRADE_OF)
    grading: int = Field(ge=1, description=GRADING)
    links: SubmissionLinks


class RegradeLinks(_Out):
    submission: str
    gradings: str
    events: str


class RegradeAccepted(_Out):
    """A regrade queued: grading ``grading`` of the submission, graded with the problem as it is now."""

    submission: str
    grading: int = Field(ge=2, description="The number the new grading will have.")
    status: Literal["queued"]
    problem_hash: str = Field(description="The problem version it is graded with (content hash).")
    problem_revision: int | None
    notify: bool = Field(description="Whether its end sends the submission's callback.")
    links: RegradeLinks


class GradingPublic(_Out):
    """One grading of a submission: the first, or a regrade."""

    number: int = Field(ge=1)
    status: Literal["queued", "running", "done", "failed"] = Field(
        description="`done` with a verdict; `failed` when the judge could not grade it (a regrade that "
        "failed leaves the earlier grading the current one)."
    )
    current: bool = Field(description="The submission's status, verdict and result are this grading's.")
    regrade: bool = Field(description="Asked for by a regrade (every grading but the first).")
    verdict: str | None
    result: GradeResult | None = Field(description="Once done: exactly `judge grade --json`'s object.")
    error: str | None = Field(description="Once failed: why the judge could not grade it.")
    manifest: Manifest | None = Field(description="What graded it (None until it ends).")
    problem_hash: str | None = Field(
        description="The problem version it was graded with; until it ends, the one it is asked for."
    )
    problem_revision: int | None
    job: str | None = Field(description="The problem regrade that asked for it (GET /api/v1/regrades/{job}).")
    notify: bool = Field(description="Its end sends the submission's callback.")
    created_at: datetime = Field(description="When it was asked for (the first: when submitted).")
    finished_at: datetime | None


class GradingList(_Out):
    submission: str
    current: int = Field(ge=1, description="The number of the submission's current grading.")
    items: list[GradingPublic] = Field(description="Every grading, oldest first.")


class RegradeJobLinks(_Out):
    self: str


class RegradeJob(_Out):
    """An operator's regrade of a problem and how far it got."""

    id: str
    problem: str
    problem_hash: str = Field(description="The problem version its gradings are graded with.")
    problem_revision: int | None
    force: bool = Field(description="Every finished submission, not only those graded with another version.")
    notify: bool = Field(description="Each grading's end sends its submission's callback.")
    batch: int = Field(ge=1, description="Its gradings queued or running at once, at most.")
    state: Literal["running", "done", "cancelled"] = Field(
        description="`running` while it queues gradings or some are unfinished; `done` once every one "
        "ended; `cancelled`: no more are queued (those queued still end)."
    )
    total: int = Field(ge=0, description="Submissions to grade again, counted when it started.")
    queued: int = Field(ge=0, description="Gradings asked for so far.")
    graded: int = Field(ge=0, description="Of them, ended done (a new current grading).")
    failed: int = Field(ge=0, description="Of them, the judge could not grade (the earlier one stays).")
    in_flight: int = Field(ge=0, description="Of them, queued or running now.")
    remaining: int = Field(
        ge=0, description="Still to ask for (at most: one deleted or regraded meanwhile is skipped)."
    )
    created_at: datetime
    finished_at: datetime | None
    links: RegradeJobLinks


class UserErased(_Out):
    external_user: str
    deleted: int = Field(description="Submissions removed (with their events and callback records).")


class Manifest(_Out):
    judge_version: str
    jax_version: str
    jaxlib_version: str
    problem: str
    problem_revision: int | None = Field(
        default=None, description="The problem's revision (absent in manifests stored before revisions)."
    )
    problem_hash: str
    sandbox_backend: str
    accepted_problem_hash: str | None = Field(
        default=None,
        description="Present only when the node that graded it served another version of the problem "
        "than the one it was accepted for: that accepted version's hash (problem_hash is what graded it).",
    )
    accepted_problem_revision: int | None = Field(
        default=None, description="With accepted_problem_hash: the accepted version's revision."
    )


class CallbackTry(_Out):
    attempt: int = Field(
        description="1 for the first try, then 2, 3, ...; 0 is a note, not a try (a grading node without "
        "callback settings left the callback to an API node, or it was left unsent too long)."
    )
    status_code: int | None = Field(description="The receiver's HTTP status; None when none answered.")
    error: str | None = Field(description="Why it failed without a status (network, refused, ...).")
    at: datetime


class CallbackStatus(_Out):
    url: str
    state: Literal["pending", "delivered", "failed"]
    attempts: list[CallbackTry] = Field(description="Every try, oldest first.")


class SubmissionCallback(_Out):
    """The body POSTed to a submission's ``callback_url`` once it is finished: the submission as
    ``GET /api/v1/submissions/{id}`` reads it, less ``callback`` and ``waiting``."""

    id: str
    problem: str
    status: Status
    verdict: str | None = Field(description="The submission's verdict once done.")
    result: GradeResult | None = Field(description="Once done: exactly `judge grade --json`'s object.")
    error: str | None = Field(description="Once failed: why the judge could not grade it.")
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    manifest: Manifest
    external_user: str | None = None
    tags: dict[str, str] | None = None
    regrade_of: str | None = Field(default=None, description=REGRADE_OF)
    grading: int = Field(ge=1, description=GRADING)
    version_mismatch: VersionMismatch | None = Field(
        default=None,
        description="Set when the grading node served another version of the problem than the one the "
        "submission was accepted for (it is graded with what the node has, and says so here, in the "
        "manifest and in the callback).",
    )
    links: SubmissionLinks


class SubmissionPublic(SubmissionCallback):
    """A submission as ``GET /api/v1/submissions/{id}`` reads it (without ``fields``)."""

    callback: CallbackStatus | None = Field(
        default=None, description="With a callback_url: its delivery state and tries (not in the callback)."
    )
    waiting: SubmissionWaiting | None = Field(
        default=None,
        description="While queued (in-process dispatch): where it stands, why it waits and an estimate.",
    )


class SubmissionFields(_Out):
    """A submission read with ``?fields=``: only the fields asked for are present (each of them may be
    absent), ``code`` among them when named."""

    id: str | None = None
    problem: str | None = None
    status: Status | None = None
    verdict: str | None = None
    result: GradeResult | None = None
    error: str | None = None
    attempts: int | None = None
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    manifest: Manifest | None = None
    external_user: str | None = None
    tags: dict[str, str] | None = None
    regrade_of: str | None = None
    grading: int | None = None
    version_mismatch: VersionMismatch | None = None
    callback: CallbackStatus | None = None
    code: str | None = Field(default=None, description="The submission's code (only when named).")
    links: SubmissionLinks | None = None


class SubmissionPage(_Out):
    items: list[SubmissionSummary | SubmissionFields] = Field(
        description="Newest first (with `ids`: in the order asked): SubmissionSummary objects, or with "
        "`fields` only the fields asked for."
    )
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; None at the end.")
    total: int | None = Field(
        description=f"Matching submissions in all pages (with `count=true`), counted exactly up to "
        f"{COUNT_MAX:,}: past that, {COUNT_MAX:,} and `total_capped` is true."
    )
    total_capped: bool | None = Field(
        default=None,
        description="With `count=true`: true when more submissions match than `total` says (the count "
        f"stopped at {COUNT_MAX:,}), false when `total` is exact.",
    )
    missing: list[str] | None = Field(
        default=None,
        description="With `ids`: the ids asked for that are not found (no such submission, or not "
        "this API key's), in the order asked.",
    )


# ---------------------------------------------------------------------------------------------- health


class Health(_Out):
    status: Literal["ok"]


class DegradedDependency(_Out):
    """A dependency that does not answer, and what the service does meanwhile."""

    dependency: str = Field(description="Its setting: rate_limit_storage, queue_url or database_url.")
    effect: str = Field(description="What the service does until it answers again.")
    reason: str = Field(description="The first error of the outage.")
    since: datetime
    seconds: float = Field(description="How long it has been down.")


class Readiness(_Out):
    ready: bool
    reason: str | None
    backend: str | None
    workers: dict[str, int | str | None]
    #: ``local`` (graded in this process) or ``celery`` (graded by ``judge worker`` nodes).
    dispatch: str = "local"
    #: ``ok``, or why the database does not answer.
    database: str = "ok"
    #: The grading queue (``celery`` dispatch): ``ok`` or why the broker does not answer; None when local.
    queue: str | None = None
    #: Live grading nodes and their free slots (``celery`` dispatch).
    nodes: int | None = None
    free_slots: int | None = None
    #: Whether a submission accepted now gets graded: with ``celery`` dispatch, only while a grading node
    #: is live (``ready`` covers the API node itself: its Runs, database and queue).
    submissions_ready: bool = True
    submissions_reason: str | None = None
    #: ``ready``: a Run could start now; ``busy``: none could (every Run place taken, or no warm sandbox pair
    #: free: a Run waits on its stream or gets 503 with Retry-After); ``not_ready`` while ``ready`` is false.
    runs: Literal["ready", "busy", "not_ready"] = "ready"
    runs_reason: str | None = None
    #: Dependencies that do not answer now while the service goes on without them (ready may stay true).
    degraded: list[DegradedDependency] = Field(default_factory=list)


class WorkerNode(_Out):
    """A grading process: a ``judge worker`` node, or the service itself with in-process dispatch."""

    name: str
    hostname: str
    pid: int
    backend: str
    version: str
    state: str = Field(description="starting, ready, unready, draining, stopped or lost")
    detail: str | None = Field(description="Why it is not ready (self-test failure, ...).")
    alive: bool = Field(description="Its last heartbeat is recent (within node_timeout_s).")
    slots: int = Field(description="Submissions it grades at once.")
    busy: int = Field(description="Submissions it is grading now.")
    idle_workers: int = Field(description="Warm sandbox workers ready now.")
    graded: int = Field(description="Submissions it graded since it started.")
    started_at: datetime
    last_seen: datetime
    problem_versions: dict[str, dict[str, Any]] | None = Field(
        default=None, description="The problems it serves: slug -> `{revision, hash}`."
    )


class ServedVersion(_Out):
    hash: str | None
    revision: int | None
    served_by: list[str] = Field(description="Names of the live nodes serving it (`api`: this API node).")


class VersionSkew(_Out):
    """One problem served in more than one version at once (a deployment mid-update, or a stale node)."""

    problem: str
    versions: list[ServedVersion]


class WorkerList(_Out):
    dispatch: str
    nodes: list[WorkerNode]
    slots: int = Field(description="Grading slots of the live nodes.")
    busy: int
    version_skew: list[VersionSkew] = Field(
        default_factory=list,
        description="Problems that this API node and the live grading nodes serve in different versions; "
        "a submission graded by a node with another version than it was accepted for says so in its "
        "version_mismatch.",
    )
