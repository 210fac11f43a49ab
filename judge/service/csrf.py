"""CSRF protection for a signed-in learner (a synchronizer token kept in the signed session cookie).

The session (judge/service/sessions.py) holds a random token; the page gets it in a ``<meta>`` element
and sends it back in the ``X-CSRF-Token`` header of every state-changing request (web/src/api.js), and the
sign-in, sign-up, sign-out and erase forms in a hidden ``csrf_token`` field. Another site can make a
browser send the cookie but cannot read the page, so it cannot know the token:

    CsrfGuard      middleware: a POST, PUT, PATCH or DELETE of a signed-in session without the header's
                   token is refused with 403 ``csrf_failed`` (the form routes check their field instead)
    csrf_token(session)            the session's token (made on first use)
    token_matches(session, token)  a constant-time comparison; False without a token on either side

Requests without the session cookie (API clients with a key, anonymous pages) are not affected.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Collection, Mapping, MutableMapping
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

SESSION_TOKEN = "csrf"
HEADER = "x-csrf-token"
FORM_FIELD = "csrf_token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The session key that marks a signed-in session (judge.service.accounts.SESSION_ACCOUNT).
SIGNED_IN = "account"


def csrf_token(session: MutableMapping[str, Any]) -> str:
    token = session.get(SESSION_TOKEN)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        session[SESSION_TOKEN] = token
    return token


def token_matches(session: Mapping[str, Any], presented: str | None) -> bool:
    expected = session.get(SESSION_TOKEN)
    if not isinstance(expected, str) or not expected or not presented:
        return False
    return hmac.compare_digest(expected.encode(), presented.encode())


class CsrfGuard:
    """Refuses a signed-in session's state-changing request without the session's token in the
    ``X-CSRF-Token`` header (``form_paths``: routes that check their form field themselves)."""

    def __init__(self, app: ASGIApp, form_paths: Collection[str] = ()) -> None:
        self.app = app
        self.form_paths = frozenset(form_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] in UNSAFE_METHODS
            and scope["path"] not in self.form_paths
        ):
            session: Mapping[str, Any] = scope.get("session") or {}
            if session.get(SIGNED_IN):
                presented = next(
                    (value.decode("latin-1") for name, value in scope["headers"] if name == HEADER.encode()),
                    None,
                )
                if not token_matches(session, presented):
                    await _refuse(send)
                    return
        await self.app(scope, receive, send)


async def _refuse(send: Send) -> None:
    body = json.dumps(
        {
            "error": {
                "code": "csrf_failed",
                "message": "this request of a signed-in session lacks its CSRF token (the X-CSRF-Token "
                "header, from the page's csrf-token meta element): reload the page and try again",
            }
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
