"""The page's HTML routes: ``/`` (the problem list) and ``/problems/{slug}`` (one problem).

The problem page is rendered on the server from the same ``ProblemDetail`` that
``GET /api/v1/problems/{slug}`` returns (the catalog's one cached copy), so page and API cannot disagree:
title, difficulty and tags, signature, statement HTML, hints (hidden; the script reveals them one at a
time), the starter code in a plain ``<textarea>`` that works as an editor before any script runs, and the
Run panel (``judge.web.run_panel``: a box per argument holding the first example, the examples to fill
them with). The page asks the API for nothing before a Run; its script wires the controls and upgrades
the textarea to CodeMirror. The list page is rendered whole on the server too (every problem, in the
suggested order: ``judge.web.order``, which follows the catalog's "similar problems" links), and its script
adds what this browser knows (your verdicts, the count solved, the next problem to try) and the search and
filters. After an Accepted the problem page offers the first problem this browser has not solved among
the ones it links to, then the rest of the suggested order.

With learner accounts on (``Pages.accounts``), the header has the account's links, and a signed-in
learner's pages carry the account's progress as JSON (``<script id="account-state">``: solved marks and
last verdicts; on a problem page its last code and history), which the scripts read instead of the
browser's storage (web/src/storage.js).

An unknown slug is a 404 page; a problem whose body cannot be built (its reference failed) a 503 page, as
the API answers. When the service refuses anonymous callers, the pages (whose scripts call the API without
a key) say so with a 403 instead of showing the problems. Pages are never cached (they name the current
hashed assets and inline the stylesheet) and carry a Content-Security-Policy that allows nothing from
another host.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from judge.authoring.markdown import inline_to_html
from judge.core.errors import ProblemNotFound
from judge.service.accounts import Accounts, Viewer
from judge.service.schemas import ProblemDetail, ProblemSummary
from judge.web.assets import Assets
from judge.web.order import DIFFICULTY_RANK, next_problems, suggested_order
from judge.web.run_panel import run_panel

log = logging.getLogger(__name__)

TEMPLATES_DIR = Path(__file__).parent / "templates"

#: Scripts and styles from this origin only; the favicon is a data: URL. Styles need 'unsafe-inline'
#: (never scripts): CodeMirror adds its own <style> element, and the browser's own contenteditable editing
#: writes style attributes when text replaces a selection (a nonce would admit the first, not the second).
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


class ProblemBodies(Protocol):
    """Where the pages get a problem's body: the service's catalog (``judge.service.catalog.Catalog``)."""

    def summaries(self) -> list[ProblemSummary]:
        """The list ``GET /api/problems`` returns, in the catalog's order."""
        ...

    def detail(self, slug: str) -> ProblemDetail:
        """The body ``GET /api/problems/{slug}`` returns; raises ProblemNotFound for an unknown slug."""
        ...

    def visible(self, slug: str, tenant: str | None) -> bool:
        """Whether ``slug`` is shown to ``tenant`` (the pages: None; a problem scoped to tenants is not)."""
        ...


class Pages:
    """Renders the pages' templates: the same headers, the 503 page without a build, the 403 page while
    the API refuses anonymous callers, and (with accounts on) the header's account links."""

    def __init__(
        self,
        assets: Assets,
        *,
        anonymous: Callable[[], bool] = lambda: True,
        accounts: Callable[[], Accounts | None] = lambda: None,
    ) -> None:
        self.assets = assets
        self.anonymous = anonymous
        self.accounts = accounts
        self.templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
        self.templates.env.globals["asset"] = assets.url
        self.templates.env.globals["preloads"] = assets.preloads
        self.templates.env.globals["stylesheet"] = assets.stylesheet  # our build's CSS, checked when loaded
        self.templates.env.globals["viewer"] = self.viewer
        self.templates.env.filters["inline_markdown"] = inline_to_html

    def viewer(self, request: Request) -> Viewer | None:
        """Who looks at the page (the header's "Sign in" or the account's name); None: accounts are off."""
        accounts = self.accounts()
        if accounts is None or "session" not in request.scope:
            return None
        return accounts.viewer(request.session)

    def account_state(self, request: Request, slug: str | None) -> dict[str, Any] | None:
        """The signed-in account's progress for the page's script (web/src/storage.js); None otherwise."""
        accounts = self.accounts()
        if accounts is None or "session" not in request.scope:
            return None
        account = accounts.current(request.session)
        return None if account is None else accounts.page_state(account, request.session, slug)

    def render(
        self, request: Request, name: str, context: dict[str, Any], status_code: int = 200
    ) -> HTMLResponse:
        if not self.assets.ready:
            name, status_code = "error.html", 503
            context = {"heading": "The page is not available", "message": self.assets.problem}
        elif not self.anonymous():
            name, status_code = "error.html", 403
            context = {
                "heading": "The page is not available",
                "message": "This judge serves API clients with a key only: its browser page, which calls "
                "the API without one, is switched off (the operator disabled anonymous access).",
            }
        return self.templates.TemplateResponse(
            request, name, context, status_code=status_code, headers=PAGE_HEADERS
        )


def build_router(catalog: Callable[[], ProblemBodies], pages: Pages) -> APIRouter:
    """The HTML routes. ``catalog`` and ``pages.anonymous`` (whether the API serves callers without a
    key) are called per request."""
    anonymous = pages.anonymous
    router = APIRouter(include_in_schema=False)

    def page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
        return pages.render(request, name, context, status_code)

    @router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def problem_list(request: Request) -> HTMLResponse:
        if not anonymous():
            return page(request, "error.html", {})
        problems = suggested_order(catalog().summaries())
        tags = sorted({tag for problem in problems for tag in problem.tags})
        difficulties = [d for d in DIFFICULTY_RANK if any(p.difficulty == d for p in problems)]
        titles = {problem.slug: problem.title for problem in problems}
        context = {"problems": problems, "tags": tags, "difficulties": difficulties, "titles": titles}
        context["account_state"] = pages.account_state(request, None)
        return page(request, "index.html", context)

    @router.api_route("/problems/{slug}", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def problem_page(request: Request, slug: str) -> HTMLResponse:
        if not anonymous():  # the 403 page, before any problem is looked up or prepared
            return page(request, "error.html", {})
        try:
            if not catalog().visible(slug, None):  # scoped to tenants: not on the public pages
                raise ProblemNotFound(slug, "scoped to tenants")
            problem = catalog().detail(slug)
        except ProblemNotFound:
            context = {
                "heading": "No such problem",
                "message": f"There is no problem named “{slug}”.",
            }
            return page(request, "error.html", context, status_code=404)
        except Exception:  # the reference failed on an example: the judge's fault, as the API says it
            log.exception("the page of problem %r cannot be built", slug)
            context = {
                "heading": "The problem cannot be shown now",
                "message": f"The judge could not prepare the problem “{slug}”; try again later.",
            }
            return page(request, "error.html", context, status_code=503)
        following = next_problems(catalog().summaries(), slug)
        shown = {"problem": problem, "panel": run_panel(problem), "title": problem.title, "next": following}
        shown["account_state"] = pages.account_state(request, slug)
        return page(request, "problem.html", shown)

    return router
