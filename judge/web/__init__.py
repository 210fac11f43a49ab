"""The browser page: a problem list and a problem page with an editor, a Run panel and Submit.

``mount(app, catalog)`` adds the HTML routes (``/``, ``/problems/{slug}``) and the built assets
(``/static/...``) to the service's FastAPI app. The problem page is rendered from the catalog's problem
body, the one ``GET /api/problems/{slug}`` returns; the page's scripts call the REST API under ``/api``
for everything else and have no other path to the engine. Sources live in ``web/`` at the repository
root and are bundled into ``judge/web/static/dist`` by ``scripts/build-web`` (``scripts/setup`` runs it
when they change).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from judge.web.assets import DIST_DIR, STATIC_PREFIX, Assets, load_assets

if TYPE_CHECKING:  # the web framework is the [service] extra's; judge preview (judge.web.preview) needs none
    from fastapi import FastAPI

    from judge.service.accounts import Accounts
    from judge.web.routes import ProblemBodies

__all__ = ["mount"]

log = logging.getLogger(__name__)


def mount(
    app: FastAPI,
    catalog: Callable[[], ProblemBodies],
    *,
    anonymous: Callable[[], bool] = lambda: True,
    accounts: Callable[[], Accounts | None] | None = None,
    assets: Assets | None = None,
) -> Assets:
    """Serve the page from ``app``; returns the assets it serves (``assets.problem`` says if none).

    ``catalog()`` gives the problem bodies (the service's ``Catalog``); ``anonymous()`` says whether the
    API serves callers without a key (when not, the pages answer 403: their scripts could not call it).
    Without a build the pages answer 503 naming the fix, and the API is unaffected. ``accounts``: with
    learner accounts on, the service's ``Accounts`` (the ``/account/...`` pages and the header's link);
    None (the default): no account route exists and the header has no sign-in link.
    """
    from judge.web.routes import Pages, build_router
    from judge.web.static import CachedStaticFiles

    assets = assets if assets is not None else load_assets()
    if not assets.ready:
        log.warning("%s", assets.problem)
    current = accounts if accounts is not None else lambda: None
    pages = Pages(assets, anonymous=anonymous, accounts=current)
    app.include_router(build_router(catalog, pages))
    if accounts is not None:
        from judge.service.routes.accounts import build_router as account_router

        app.include_router(account_router(pages, accounts, catalog))
    app.mount(STATIC_PREFIX, CachedStaticFiles(directory=DIST_DIR, check_dir=False), name="static")
    return assets
