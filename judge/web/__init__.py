"""The browser page: a problem list and a problem page with an editor, a Run panel and Submit.

``mount(app, problems)`` adds the HTML routes (``/``, ``/problems/{slug}``) and the built assets
(``/static/...``) to the service's FastAPI app. The page's scripts call the REST API under ``/api``; the
page has no other path to the engine. Sources live in ``web/`` at the repository root and are bundled into
``judge/web/static/dist`` by ``scripts/build-web`` (``scripts/setup`` runs it when they change).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from fastapi import FastAPI

from judge.problems import ProblemSet
from judge.web.assets import DIST_DIR, STATIC_PREFIX, Assets, load_assets
from judge.web.routes import build_router
from judge.web.static import CachedStaticFiles

__all__ = ["mount"]

log = logging.getLogger(__name__)


def mount(app: FastAPI, problems: Callable[[], ProblemSet], *, assets: Assets | None = None) -> Assets:
    """Serve the page from ``app``; returns the assets it serves (``assets.problem`` says if none).

    Without a build the pages answer 503 naming the fix, and the API is unaffected.
    """
    assets = assets if assets is not None else load_assets()
    if not assets.ready:
        log.warning("%s", assets.problem)
    app.include_router(build_router(problems, assets))
    app.mount(STATIC_PREFIX, CachedStaticFiles(directory=DIST_DIR, check_dir=False), name="static")
    return assets
