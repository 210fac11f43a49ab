"""Every setting of the service, in one pydantic-settings class.

Values come from, highest precedence first: arguments (``judge serve --host/--port``), ``JUDGE_*``
environment variables, the optional TOML file named by ``JUDGE_SETTINGS_FILE`` (keys are the field names,
e.g. ``queue_size = 200``), then the defaults below. Lists accept JSON (``["a", "b"]``) or commas
(``a,b``); ``api_keys`` accepts JSON (``{"name": "sha256:..."}``). README.md ("Service settings") lists
them all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from judge.core.grader import MAX_CODE_BYTES
from judge.core.problems import REPO_ROOT

SETTINGS_FILE_ENV = "JUDGE_SETTINGS_FILE"
#: Largest ``?wait=`` any configuration may allow (a request never holds a connection longer).
WAIT_CAP_S = 600.0

StrList = Annotated[list[str], NoDecode]


def _cpus() -> int:
    return os.cpu_count() or 1


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="JUDGE_", extra="ignore", validate_default=True)

    # ---- server
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    #: Addresses of reverse proxies whose X-Forwarded-For is trusted for the client address ("*": any).
    forwarded_allow_ips: str | None = None
    log_level: Literal["critical", "error", "warning", "info", "debug"] = "info"
    #: Connections served at once; past it a new connection is closed at once. Lowered at start to fit
    #: the open-files limit and what the sandbox pool needs (``judge.service.server.connection_limit``).
    max_connections: int = Field(default=768, ge=16, le=1_000_000)
    #: Connections one client address may hold at once (trusted proxies, forwarded_allow_ips, exempt).
    max_connections_per_address: int = Field(default=64, ge=1, le=1_000_000)
    #: Seconds a client may take to send a request's headers (from the connection or the previous
    #: response); then the connection is closed.
    header_timeout_s: float = Field(default=10.0, gt=0, le=600)
    #: Seconds a client may take between two pieces of a request body (then 408).
    body_timeout_s: float = Field(default=10.0, gt=0, le=600)
    #: Seconds an idle keep-alive connection stays open.
    keep_alive_s: float = Field(default=5.0, gt=0, le=600)

    # ---- storage
    #: Where the SQLite database lives (created when missing).
    data_dir: Path = REPO_ROOT / "var"
    #: SQLAlchemy URL; default ``sqlite:///<data_dir>/judge.sqlite3``. PostgreSQL:
    #: ``postgresql+psycopg://user:password@host:5432/dbname``.
    database_url: str | None = None

    # ---- problems and sandbox
    problems_dir: Path | None = None
    #: Seconds between looks at the store for problem versions operators pushed, went live or retired
    #: (one integer read; every API and grading node).
    problems_poll_s: float = Field(default=5.0, gt=0, le=3600)
    #: Largest problem archive (tar.gz) ``PUT /api/v1/admin/problems/{slug}`` takes, in bytes.
    problem_archive_bytes: int = Field(default=8 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    #: Seconds the ``judge check`` of a pushed version may take before it is rejected for it.
    problem_check_timeout_s: float = Field(default=1800.0, gt=0, le=86400)
    #: Whether that check grades the package's solutions in the sandbox (as ``judge check`` does by
    #: default); off, it runs ``judge check --skip-solutions``.
    problem_check_solutions: bool = True
    #: Sandbox backend: auto (bwrap, then docker), bwrap, docker, or process (needs insecure).
    sandbox: str = "auto"
    #: Allow the process backend, which isolates nothing (development only; printed loudly).
    insecure: bool = False
    #: First sandbox slot (uid 60000 + slot) of this service's workers; busy slots are skipped.
    sandbox_slot_base: int = Field(default=0, ge=0, le=900)

    # ---- capacity
    #: Submissions graded at once (each holds one warm sandbox worker). Default: one per core.
    submission_concurrency: int = Field(default_factory=_cpus, ge=1, le=256)
    #: Warm workers kept beyond the submissions' for Run, so Run never waits behind the queue.
    run_reserve: int = Field(default=1, ge=1, le=64)
    #: Warm workers kept beyond those two: a used tracer is replaced by a fresh one (a fork, 0.1-1 s), and
    #: a spare pair lets the next submission start at once meanwhile instead of eating the Run reserve
    #: or waiting for the refill (measured: Submit throughput 0.81 -> see bench/bench_service.py).
    spare_workers: int = Field(default=1, ge=0, le=64)
    #: Runs that may wait for a free worker while all are busy; past it a Run gets 429.
    run_queue: int = Field(default=8, ge=0, le=1024)
    #: Seconds a Run waits for a free worker before it gets 429.
    run_wait_s: float = Field(default=30.0, gt=0, le=600)
    #: Submissions that may wait in the queue; past it POST /api/submissions gets 429 with Retry-After.
    queue_size: int = Field(default=100, ge=1, le=100_000)
    #: Runs one API key, or one client address without a key, may have running or waiting at once
    #: (with ``queue_url`` set the count lives in that Redis, so it holds across API nodes).
    runs_per_client: int = Field(default=2, ge=1, le=1024)
    #: Submissions one API key, or one client address without a key, may have queued or running at once.
    submissions_per_client: int = Field(default=20, ge=1, le=100_000)
    #: Of those, how many may wait queued at once, as a share of ``queue_size`` (at least 1): one
    #: client cannot fill the queue for all. Counted in the database, so it holds across API nodes.
    queue_share: float = Field(default=0.5, gt=0, le=1)
    #: Submissions one API key, or one client address without a key, may have graded at once across
    #: every grading node (the rest wait queued, and other clients' go first); unset: no cap.
    gradings_per_client: int | None = Field(default=None, ge=1, le=100_000)
    #: Event streams one API key, or one client address without a key, may hold open at once.
    streams_per_client: int = Field(default=16, ge=1, le=100_000)
    #: Seconds an event stream stays open at most (a client that still wants events reconnects).
    stream_max_s: float = Field(default=900.0, gt=0, le=86400)
    #: Tries per submission when the judge itself fails (the sandbox cannot start, ...).
    max_attempts: int = Field(default=3, ge=1, le=10)
    #: Seconds running gradings may finish in at shutdown (the rest are graded after the next start).
    shutdown_grace_s: float = Field(default=10.0, ge=0, le=600)
    #: Seconds a submission waits, queued, for a grader that has the version of its problem it was
    #: accepted for (a rollout under way); past it, and while no live grader has that version (retired),
    #: it ends ``failed`` saying so. It is never graded with another version.
    version_hold_s: float = Field(default=600.0, ge=0, le=86400)

    # ---- distributed dispatch (judge worker); unset: grading happens in this process
    #: Broker of the grading queue, e.g. ``redis://host:6379/0`` (Celery on Redis). Set it on every
    #: ``judge serve`` and ``judge worker`` of a deployment, with one shared PostgreSQL ``database_url``.
    queue_url: str | None = None
    #: Seconds between a grading node's heartbeats (stored in the database, shown by GET /api/workers).
    heartbeat_s: float = Field(default=2.0, gt=0, le=60)
    #: A node silent this long is lost: what it was grading is queued again for other nodes.
    node_timeout_s: float = Field(default=15.0, gt=0, le=3600)
    #: Seconds between sweeps (lost nodes' work, messages a broker lost); one process sweeps at a time.
    sweep_s: float = Field(default=2.0, gt=0, le=600)
    #: A queued submission whose message was published this long ago is published again (a safety net:
    #: duplicates are harmless, the grade is stored once).
    requeue_after_s: float = Field(default=900.0, gt=0, le=86400)
    #: Redis redelivers an unacknowledged message after this long (longer than any grading takes).
    visibility_timeout_s: float = Field(default=3600.0, ge=60, le=86400)

    # ---- request limits
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    max_code_bytes: int = Field(default=64 * 1024, ge=64, le=MAX_CODE_BYTES)
    #: Run inputs: JSON text size, container nesting depth and count of numbers, over all arguments.
    max_input_bytes: int = Field(default=256 * 1024, ge=16, le=16 * 1024 * 1024)
    max_input_depth: int = Field(default=32, ge=1, le=200)
    max_input_elements: int = Field(default=65536, ge=1, le=10_000_000)
    #: Largest ``?wait=`` in seconds for GET /api/submissions/{id}.
    max_wait_s: float = Field(default=60.0, ge=0, le=WAIT_CAP_S)
    #: Submissions one POST /api/submissions/batch may carry.
    batch_max: int = Field(default=50, ge=1, le=1000)
    #: Largest page of GET /api/submissions (``limit``).
    page_max: int = Field(default=200, ge=1, le=1000)

    # ---- retention
    #: Seconds an ``Idempotency-Key`` names its submission (a retry after that makes a new one).
    idempotency_ttl_s: float = Field(default=86400.0, ge=60, le=30 * 86400)
    #: Finished submissions older than this many days are removed (with events and callbacks); unset:
    #: kept until deleted.
    retention_days: float | None = Field(default=None, gt=0, le=36500)
    #: Seconds between retention sweeps (expired idempotency keys, old finished submissions).
    retention_sweep_s: float = Field(default=3600.0, gt=0, le=86400)

    # ---- access
    #: API keys: name -> ``HASH [id=KEY_ID]`` (``judge hash-key`` makes one). Clients send
    #: ``Authorization: Bearer KEY``. The id owns the key's submissions (default: the name).
    api_keys: dict[str, str] = Field(default_factory=dict)
    #: A file of more keys, one ``NAME HASH [id=KEY_ID]`` per line (``#`` comments); read again when it
    #: changes.
    api_keys_file: Path | None = None
    #: Names of API keys that may read operator endpoints (GET /api/workers); empty: nobody may.
    operator_keys: StrList = Field(default_factory=list)
    #: Whether requests without a key are served (rate-limited per client address).
    allow_anonymous: bool = True
    #: ``limits`` notation, e.g. ``120/minute`` or ``10/second;500/hour``: per key, and per client address.
    rate_limit: str = "240/minute"
    anonymous_rate_limit: str = "60/minute"
    #: Requests with a wrong or malformed API key, per client address (key guessing is slowed too).
    failed_auth_rate_limit: str = "20/minute"
    #: Where rate-limit counters live: ``memory://`` (one process) or e.g. ``redis://host:6379``.
    rate_limit_storage: str = "memory://"
    #: Origins allowed to call the API from a browser (CORS); empty: none besides the judge's own.
    cors_origins: StrList = Field(default_factory=list)

    # ---- learner accounts (off by default)
    #: Learner accounts on the page: sign-up and sign-in (``/account/...``); a signed-in learner's
    #: submissions, last code per problem and solved set are kept in the database and follow them to any
    #: browser. Off: no account routes, no session cookie, the page keeps progress in the browser only.
    accounts: bool = False
    #: Key that signs the session cookie (set the same one on every API node). Unset: a random key kept
    #: in ``<data_dir>/account-secret`` (made on first start; one node only).
    accounts_secret: SecretStr | None = None
    #: Days a sign-in lasts (the session cookie's lifetime).
    accounts_session_days: float = Field(default=14.0, gt=0, le=366)
    #: Sign-in and sign-up attempts per client address, and sign-in attempts per account name.
    signin_rate_limit: str = "10/minute;100/hour"

    # ---- callbacks
    #: Hosts (``name`` or ``name:port``) that ``callback_url`` may point to; empty: callbacks refused.
    callback_hosts: StrList = Field(default_factory=list)
    #: HMAC-SHA256 key of the ``X-Judge-Signature`` header (required when callback_hosts is set).
    callback_secret: SecretStr | None = None
    #: The previous key while a secret is rotated: callbacks then carry a signature with each key.
    callback_secret_previous: SecretStr | None = None
    callback_attempts: int = Field(default=5, ge=1, le=20)
    callback_backoff_s: float = Field(default=1.0, gt=0, le=3600)
    callback_timeout_s: float = Field(default=10.0, gt=0, le=120)
    #: How often an API node looks for callbacks that a grading node without callback settings left to
    #: it (finished submissions whose callback is handed off), and sends them.
    callback_poll_s: float = Field(default=5.0, gt=0, le=3600)

    @field_validator("cors_origins", "callback_hosts", "operator_keys", mode="before")
    @classmethod
    def _list(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator("rate_limit", "anonymous_rate_limit", "failed_auth_rate_limit", "signin_rate_limit")
    @classmethod
    def _rate(cls, value: str) -> str:
        from limits import parse_many

        try:
            parse_many(value)
        except ValueError as exc:
            raise ValueError(f"not a rate limit such as '120/minute': {exc}") from None
        return value

    @field_validator("queue_url")
    @classmethod
    def _queue(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        scheme = value.split("://", 1)[0].lower() if "://" in value else ""
        if scheme not in ("redis", "rediss"):
            raise ValueError("the grading queue needs a Redis URL such as redis://host:6379/0")
        return value.strip()

    @model_validator(mode="after")
    def _accounts_need_a_shared_secret(self) -> Settings:
        if self.accounts and self.queue_url is not None and self.accounts_secret is None:
            raise ValueError(
                "accounts is on with a grading queue (several API nodes) but accounts_secret is unset: "
                "every node must sign sessions with the same key"
            )
        return self

    @model_validator(mode="after")
    def _callbacks_need_secret(self) -> Settings:
        if self.callback_hosts and (
            self.callback_secret is None or not self.callback_secret.get_secret_value()
        ):
            raise ValueError("callback_hosts is set but callback_secret is empty: callbacks must be signed")
        return self

    # ---- derived

    @property
    def workers(self) -> int:
        """Warm sandbox workers: one per concurrent submission, the Run reserve and the spares."""
        return self.submission_concurrency + self.run_reserve + self.spare_workers

    @property
    def queued_per_client(self) -> int:
        """Submissions one client may have waiting queued at once: its ``queue_share`` of the queue."""
        return max(1, min(self.submissions_per_client, int(self.queue_share * self.queue_size)))

    @property
    def distributed(self) -> bool:
        """Grading happens on ``judge worker`` nodes through ``queue_url`` (else in this process)."""
        return self.queue_url is not None

    def problem_cache_dir(self) -> Path:
        """Where pushed problem versions are unpacked (one folder per version)."""
        return self.data_dir.resolve() / "problem-versions"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        file = os.environ.get(SETTINGS_FILE_ENV)
        if file:
            if not Path(file).is_file():
                raise ValueError(f"{SETTINGS_FILE_ENV}={file}: no such file")
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(file)))
        return tuple(sources)
