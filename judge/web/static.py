"""Static files of the page with cache headers and pre-compressed variants.

Files whose names carry a content hash (``problem-4QX2ZK7A.js``) are served with a one-year, immutable
max-age; anything else must be revalidated (``no-cache`` plus the ETag StaticFiles sets). When the browser
accepts gzip and the build wrote ``NAME.gz`` beside ``NAME``, that copy is sent with
``Content-Encoding: gzip``.
"""

from __future__ import annotations

import mimetypes
import os
import re
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Scope

#: A name esbuild gave a content hash: ``name-HASH.ext`` with an 8-character base32 hash.
HASHED_NAME = re.compile(r"-[A-Z0-9]{8}\.[a-z0-9.]+$")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def cache_control(path: str) -> str:
    """The Cache-Control value for a served file name."""
    return IMMUTABLE if HASHED_NAME.search(os.path.basename(path)) else REVALIDATE


def accepts_gzip(headers: Headers) -> bool:
    """True when the request's Accept-Encoding names gzip (the test Starlette's GZipMiddleware uses)."""
    return "gzip" in headers.get("accept-encoding", "").lower()


class CachedStaticFiles(StaticFiles):
    """StaticFiles with the page's cache policy and gzip variants (see the module docstring)."""

    def file_response(
        self,
        full_path: Any,
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        request_headers = Headers(scope=scope)
        path = os.fspath(full_path)
        headers = {"Cache-Control": cache_control(path), "Vary": "Accept-Encoding"}
        headers["X-Content-Type-Options"] = "nosniff"
        response: Response
        compressed = path + ".gz"
        if not path.endswith(".gz") and accepts_gzip(request_headers) and os.path.isfile(compressed):
            media_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
            headers["Content-Encoding"] = "gzip"
            response = FileResponse(
                compressed, status_code=status_code, media_type=media_type, headers=headers
            )
        else:
            response = FileResponse(path, status_code=status_code, stat_result=stat_result, headers=headers)
        if self.is_not_modified(response.headers, request_headers):
            return NotModifiedResponse(response.headers)
        return response
