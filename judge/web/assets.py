"""The page's built assets: which hashed file serves each entry point.

``web/build.mjs`` bundles the front-end sources into ``judge/web/static/dist`` (``scripts/build-web`` runs
it from the npm lock file; ``scripts/setup`` calls that) and writes ``manifest.json``::

    {"source_hash": "...", "files": {"problem.js": "problem-4QX2ZK7A.js", "style.css": "style-....css"},
     "preload": {"problem.js": ["chunk-N2R7NNDL.js"]}}

Every file but the manifest has a content hash in its name, so it can be cached for a year: a new build
gives new names, and the pages (never cached) point to them.

The stylesheet is not linked but inlined into each page's ``<head>`` (``Assets.stylesheet``): it is small
(about 9 KB), and a linked one is a request the browser must finish before it can draw anything, which
on a busy host was the largest single wait before the first paint. Its font URLs are absolute
(``/static/...``, the build's ``publicPath``), so they resolve from any page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

#: Where the built bundle lives inside the package.
DIST_DIR = Path(__file__).parent / "static" / "dist"
#: URL prefix the bundle is served under.
STATIC_PREFIX = "/static"
MANIFEST = "manifest.json"
#: The manifest entry of the page's stylesheet.
STYLESHEET = "style.css"


@dataclass(frozen=True)
class Assets:
    """The manifest of one build. ``files`` is empty and ``problem`` says why when there is no build."""

    files: dict[str, str] = field(default_factory=dict)
    preload: dict[str, list[str]] = field(default_factory=dict)
    source_hash: str | None = None
    problem: str | None = None
    #: The text of the built ``style.css``, which every page inlines ("" without a build).
    stylesheet: str = ""

    def url(self, entry: str) -> str:
        """The URL of ``entry`` (``"problem.js"``), or "" when the build lacks it."""
        name = self.files.get(entry)
        return f"{STATIC_PREFIX}/{name}" if name else ""

    def preloads(self, entry: str) -> list[str]:
        """URLs of the chunks ``entry`` imports, to announce with ``<link rel="modulepreload">``."""
        return [f"{STATIC_PREFIX}/{name}" for name in self.preload.get(entry, [])]

    @property
    def ready(self) -> bool:
        return self.problem is None


def load_assets(directory: Path = DIST_DIR) -> Assets:
    """Read ``manifest.json`` of a build; never raises (a missing or broken build is an Assets.problem)."""
    file = directory / MANIFEST
    hint = "run scripts/setup (it builds the page from web/ with Node.js and npm)"
    try:
        raw = json.loads(file.read_text())
    except FileNotFoundError:
        return Assets(problem=f"the page's assets are not built: {hint}")
    except (OSError, ValueError) as exc:
        return Assets(problem=f"the page's asset manifest is unreadable ({exc}): {hint}")
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        return Assets(problem=f"the page's asset manifest has no file map: {hint}")
    missing = sorted(entry for entry, name in files.items() if not (directory / name).is_file())
    if missing:
        return Assets(problem=f"the page's build is incomplete (missing {', '.join(missing)}): {hint}")
    preload = raw.get("preload")
    chunks = (
        {k: [n for n in v if isinstance(n, str)] for k, v in preload.items() if isinstance(v, list)}
        if isinstance(preload, dict)
        else {}
    )
    stylesheet = ""
    if STYLESHEET in files:
        try:
            stylesheet = (directory / files[STYLESHEET]).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            return Assets(problem=f"the page's stylesheet is unreadable ({exc}): {hint}")
        if "</style" in stylesheet.lower():  # it is inlined in a <style> element, which this would end
            return Assets(problem=f"the page's stylesheet contains '</style': {hint}")
    source_hash = raw.get("source_hash")
    return Assets(
        files=dict(files),
        preload=chunks,
        source_hash=source_hash if isinstance(source_hash, str) else None,
        stylesheet=stylesheet,
    )
