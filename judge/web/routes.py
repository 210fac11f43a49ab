"""The page's HTML routes: ``/`` (the problem list) and ``/problems/{slug}`` (one problem).

The HTML is a shell: the scripts it loads fill it from the REST API (``/api/problems``...), the same
endpoints platforms call. The routes only know which problems exist (an unknown slug is a 404 page) and
which hashed asset files to reference. Pages are never cached (they name the current assets) and carry a
Content-Security-Policy that allows nothing from another host.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from judge.errors import ProblemNotFound
from judge.problems import ProblemSet
from judge.web.assets import Assets

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


def build_router(problems: Callable[[], ProblemSet], assets: Assets) -> APIRouter:
    """The HTML routes, reading the problem set through ``problems`` (called per request)."""
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    templates.env.globals["asset"] = assets.url
    templates.env.globals["preloads"] = assets.preloads
    router = APIRouter(include_in_schema=False)

    def page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
        if not assets.ready:
            name, status_code = "error.html", 503
            context = {"heading": "The page is not available", "message": assets.problem}
        return templates.TemplateResponse(
            request, name, context, status_code=status_code, headers=PAGE_HEADERS
        )

    @router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def problem_list(request: Request) -> HTMLResponse:
        return page(request, "index.html", {})

    @router.api_route("/problems/{slug}", methods=["GET", "HEAD"], response_class=HTMLResponse)
    def problem_page(request: Request, slug: str) -> HTMLResponse:
        try:
            problem = problems().get(slug)
        except ProblemNotFound:
            context = {
                "heading": "No such problem",
                "message": f"There is no problem named “{slug}”.",
            }
            return page(request, "error.html", context, status_code=404)
        return page(request, "problem.html", {"slug": problem.slug, "title": problem.spec.title})

    return router
