"""The learner's session (``JUDGE_ACCOUNTS``): Starlette's SessionMiddleware, a cookie signed with
``accounts_secret`` (itsdangerous), HttpOnly and SameSite=Lax, and Secure when the request came over
https (the ASGI scheme, which the server takes from a trusted proxy's X-Forwarded-Proto).

    install(app, settings, form_paths)   the session, then the CSRF guard inside it (judge/service/csrf.py)
    secret(settings)                     the signing key: the setting, or one kept in the data directory
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Collection
from pathlib import Path

from fastapi import FastAPI
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from judge.core.settings import Settings
from judge.service.csrf import CsrfGuard

COOKIE = "judge_session"
SECRET_FILE = "account-secret"


def secret(settings: Settings) -> str:
    """``accounts_secret``, or a random key made once and kept (mode 0600) in the data directory."""
    if settings.accounts_secret is not None and settings.accounts_secret.get_secret_value():
        return settings.accounts_secret.get_secret_value()
    path = Path(settings.data_dir) / SECRET_FILE
    try:
        kept = path.read_text().strip()
    except FileNotFoundError:
        kept = ""
    if kept:
        return kept
    path.parent.mkdir(parents=True, exist_ok=True)
    made = secrets.token_urlsafe(48)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use that one
        return path.read_text().strip() or made
    with os.fdopen(fd, "w") as out:
        out.write(made + "\n")
    return made


class SessionCookies:
    """SessionMiddleware whose cookie is Secure exactly when the request came over https."""

    def __init__(self, app: ASGIApp, secret_key: str, max_age: int) -> None:
        def session(https_only: bool) -> SessionMiddleware:
            return SessionMiddleware(
                app,
                secret_key=secret_key,
                session_cookie=COOKIE,
                max_age=max_age,
                same_site="lax",
                https_only=https_only,
            )

        self._plain = session(False)
        self._secure = session(True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("scheme") in ("https", "wss"):
            await self._secure(scope, receive, send)
        else:
            await self._plain(scope, receive, send)


def install(app: FastAPI, settings: Settings, form_paths: Collection[str]) -> None:
    # Added last is outermost: the session is decoded before the guard reads it.
    app.add_middleware(CsrfGuard, form_paths=form_paths)
    max_age = int(settings.accounts_session_days * 86400)
    app.add_middleware(SessionCookies, secret_key=secret(settings), max_age=max_age)
