"""The FastAPI application factory.

    app = create_app(Settings())                  # builds the services when the app starts (lifespan)
    app = create_app(settings, services=prebuilt) # services built, started and stopped by the caller
    app = create_app(services=built, manage=True) # built by the caller, started/stopped with the app

Routes, each under ``/api/v1`` and (deprecated) ``/api`` (judge/service/versioning.py; docs/api.md):
``/problems``, ``/problems/{slug}`` (ETag), ``/problems/{slug}/run``, ``/problems/{slug}/run/events``
(progress as server-sent events; closing the stream cancels the Run), ``/problems/{slug}/regrade``
(operators), ``/submissions`` (submit, list), ``/submissions/batch``, ``/submissions/{id}`` (read,
delete), ``/submissions/{id}/code``, ``/submissions/{id}/events``, ``/submissions/{id}/regrade``,
``/submissions/{id}/gradings``, ``/submissions/{id}/callback``, ``/regrades/{job}`` (operators: a problem
regrade's progress, ``.../cancel``), ``/users/{external_user}`` (erase), ``/workers`` (operators);
``/healthz``, ``/readyz``, ``/metrics``; with learner accounts on (``JUDGE_ACCOUNTS``), ``/account/...``
(sign-up, sign-in, the account's last code and import: judge/service/routes/accounts.py), outside the
OpenAPI schema; the OpenAPI schema at ``/openapi.json`` and its pages at ``/docs`` (Swagger UI from a
package, no CDN).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.concurrency import run_in_threadpool

from judge import __version__, web
from judge.core.settings import Settings
from judge.service import api_errors as errors
from judge.service import apidocs, contract, sessions
from judge.service.bodylimit import BodySizeLimit
from judge.service.bodytimeout import BodyTimeout
from judge.service.httpmetrics import RequestTimer
from judge.service.ratelimit import RateLimitHeaders
from judge.service.regrading import RegradeRunner
from judge.service.routes import (
    health,
    problem_admin,
    problems,
    regrades,
    run_events,
    runs,
    submissions,
    users,
    workers,
)
from judge.service.routes.accounts import FORM_PATHS
from judge.service.shares import client_shares
from judge.service.state import Services
from judge.service.versioning import versioned

log = logging.getLogger(__name__)

DESCRIPTION = """\
Grades solutions to JAX coding problems: each submission runs inside `jax.jit` in a sandbox, on public
and hidden cases, and is compared with a reference solution.

Every route lives under `/api/v1` (the unversioned `/api` paths still work and are deprecated).
Run (`POST /api/v1/problems/{slug}/run`) answers synchronously; a submission (`POST /api/v1/submissions`,
safe to retry with an `Idempotency-Key`) is stored and queued at once (202) and followed with
`GET /api/v1/submissions/{id}` (`?wait=`) or its
server-sent events. Errors always have the shape `{"error": {"code", "message", ...}}`.
"""


def create_app(
    settings: Settings | None = None, *, services: Services | None = None, manage: bool | None = None
) -> FastAPI:
    """``manage``: build (unless given), start and stop the services with the app (default: when none are
    given). With ``manage=False`` the caller owns them and sets ``app.state.services`` if none is given."""
    settings = settings or (services.settings if services is not None else Settings())
    owned = services is None if manage is None else manage

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not owned:  # the caller runs the services (and may set app.state.services itself)
            yield
            return
        current = services if services is not None else await run_in_threadpool(Services.build, settings)
        app.state.services = current
        if services is None:
            watch_shares(current)
        await run_in_threadpool(current.start, RegradeRunner)
        try:
            yield
        finally:
            await run_in_threadpool(current.stop)

    app = FastAPI(
        title="JAX practice judge",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served by apidocs from the package, not from a CDN
        redoc_url=None,
        # Stable operationIds: the endpoint's name (versioning.py names the deprecated copies legacy_*).
        generate_unique_id_function=lambda route: route.name,
    )
    if services is not None:
        app.state.services = services
    # Per-client shares of Run capacity and event streams, across API nodes when they share a Redis
    # (judge/service/shares.py); a lease outlives the longest Run or stream.
    app.state.run_shares = client_shares(
        settings, settings.runs_per_client, what="Runs", retry_after=2, lease_s=settings.run_wait_s + 600
    )
    app.state.stream_shares = client_shares(
        settings,
        settings.streams_per_client,
        what="event streams",
        retry_after=5,
        lease_s=settings.stream_max_s + 60,
    )

    def watch_shares(watcher: Services) -> None:
        for shares in (app.state.run_shares, app.state.stream_shares):
            if shares.fallback is not None:
                watcher.add_fallback(shares.fallback)

    if services is not None:
        watch_shares(services)
    errors.install(app)
    apidocs.mount(app, title=app.title)
    versioned(
        app,
        (
            problems.router,
            runs.router,
            run_events.router,
            submissions.router,
            regrades.router,
            users.router,
            workers.router,
            problem_admin.router,
            health.router,
        ),
    )  # each /api/... route also under /api/v1/...; the unversioned paths are deprecated in the schema
    contract.install(app, settings)
    web.mount(
        app,
        lambda: app.state.services.catalog,
        anonymous=lambda: app.state.services.settings.allow_anonymous,
        # Learner accounts (the accounts setting): the /account/... routes, the session and CSRF guard.
        accounts=(lambda: app.state.services.accounts) if settings.accounts else None,
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "Idempotency-Key"],
            expose_headers=[
                "Retry-After",
                "Location",
                "ETag",
                "Idempotent-Replayed",
                "RateLimit-Limit",
                "RateLimit-Remaining",
                "RateLimit-Reset",
                "X-RateLimit-Limit",
                "X-RateLimit-Remaining",
                "X-RateLimit-Reset",
            ],
            max_age=600,
        )
    if settings.accounts:
        sessions.install(app, settings, FORM_PATHS)
    app.add_middleware(RateLimitHeaders)
    archives = settings.problem_archive_bytes  # PUT /api/v1/admin/problems/{slug} takes a package archive
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_body_bytes,
        wider=tuple(
            (prefix, archives, "problem_archive_bytes")
            for prefix in ("/api/v1/admin/problems/", "/api/admin/problems/")
        ),
    )
    app.add_middleware(
        RequestTimer, metrics=lambda: getattr(app.state, "services", None) and app.state.services.metrics
    )
    app.add_middleware(BodyTimeout, timeout_s=settings.body_timeout_s)
    return app
