"""The API's pages (``/docs``): Swagger UI from the ``swagger-ui-bundle-v2`` package, served by the judge
itself, never from a CDN, under a Content-Security-Policy that allows nothing from another host.

The page's origin is the learners' page origin, whose local storage holds their code, so no script may
come from elsewhere: the bundle and its stylesheet are package files (``/docs/assets/...``), the page's
start-up is a script of its own (``/docs/start.js``; no inline script), and Swagger UI's online validator
is switched off (it would send the schema to another host).
"""

from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle
from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response

from judge.web.routes import CONTENT_SECURITY_POLICY

#: The files of the bundle the page loads; nothing else of the package is served.
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}

#: The page's own policy (judge.web.routes): Swagger UI needs nothing more (it sets style attributes,
#: which 'unsafe-inline' styles allow; never scripts).
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/start.js"></script>
</body>
</html>
"""

_START = """"use strict";
const node = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: node.dataset.openapiUrl,
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
"""


def asset_dir() -> Path:
    return Path(swagger_ui_bundle.swagger_ui_path)


def mount(app: FastAPI, *, title: str, openapi_url: str = "/openapi.json") -> None:
    """Serve ``/docs``, ``/docs/start.js`` and ``/docs/assets/{name}`` (names in ASSETS only)."""
    page = _PAGE.format(title=title, openapi_url=openapi_url)
    folder = asset_dir()

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(page, headers=_HEADERS)

    @app.get("/docs/start.js", include_in_schema=False)
    def start() -> Response:
        return Response(_START, media_type="text/javascript", headers=_HEADERS)

    @app.get("/docs/assets/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        media_type = ASSETS.get(name)
        if media_type is None:
            return Response(status_code=404)
        headers = {**_HEADERS, "Cache-Control": "public, max-age=86400"}
        return FileResponse(folder / name, media_type=media_type, headers=headers)
