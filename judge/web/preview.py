"""``judge preview SLUG``: the problem's statement as learners see it, in one self-contained HTML file.

The statement goes through the page's own path: the examples and rules filled in
(``judge.authoring.statement``), Markdown and math rendered to HTML and MathML by the same renderer the REST
API serves to the page (``judge.authoring.markdown.to_html``), laid out with the page's markup and built
stylesheet (inlined, with its math font as a data URL), so the file opens anywhere (a CI artifact, a browser
without a server). The examples' outputs come from running the reference (trusted code) on the public cases in
this process.
"""

from __future__ import annotations

import base64
import html
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from judge.core.errors import ReferenceFailure
from judge.core.problems import Problem
from judge.web.assets import DIST_DIR, STATIC_PREFIX, load_assets

_FONT_URL = re.compile(rf"""url\(["']?{STATIC_PREFIX}/([A-Za-z0-9_.-]+\.woff2)["']?\)""")


class PreviewError(Exception):
    """The statement cannot be shown: the reference failed on a public case (its output is an example)."""


@dataclass(frozen=True)
class Preview:
    html: str
    #: Why the page's stylesheet is missing from the file (the assets are not built), or None.
    unstyled: str | None


def render(problem: Problem) -> Preview:
    """The statement page of ``problem`` as one HTML document. Raises PreviewError when the reference fails
    on a public case."""
    from judge.authoring.markdown import to_html
    from judge.authoring.statement import fill_statement, render_examples
    from judge.core.expected import reference_outputs

    outputs = reference_outputs(problem, problem.public_cases)
    for case, out in zip(problem.public_cases, outputs, strict=True):
        if isinstance(out, ReferenceFailure):
            raise PreviewError(f"the reference fails on the public case {case.name}: {out}")
    statement = to_html(fill_statement(problem, render_examples(problem, outputs)))
    css, unstyled = _stylesheet()
    spec = problem.spec
    tags = "".join(f'<span class="tag">{html.escape(tag)}</span>' for tag in spec.tags)
    signature = f"{spec.function}({', '.join(a.name for a in spec.args)})"
    hints = "".join(f"<li>{to_html(hint)}</li>" for hint in spec.hints)
    hints_section = (
        '<section class="hints" aria-labelledby="hints-title"><h2 id="hints-title">Hints</h2>'
        f"<ol>{hints}</ol></section>"
        if hints
        else ""
    )
    title = html.escape(spec.title)
    document = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · preview · JAX practice judge</title>
<style>{css}</style>
</head>
<body data-page="problem">
<header class="topbar">
  <span class="brand">JAX practice judge</span><nav><span>preview of {html.escape(spec.slug)}</span></nav>
</header>
<main id="main" class="list-page">
  <article class="statement" aria-labelledby="problem-title">
    <h1 id="problem-title">{title}</h1>
    <p class="meta"><span class="difficulty difficulty-{spec.difficulty}">{spec.difficulty}</span>{tags}</p>
    <p class="signature"><code>{html.escape(signature)}</code></p>
    <div id="statement" class="prose">{statement}</div>
    {hints_section}
  </article>
</main>
</body>
</html>
"""
    return Preview(document, unstyled)


def _stylesheet() -> tuple[str, str | None]:
    """The page's built CSS with its fonts inlined; ("", why) when the page's assets are not built."""
    assets = load_assets()
    if not assets.ready or not assets.stylesheet:
        return "", assets.problem or "the page's build has no style.css"
    css = assets.stylesheet

    def inline(match: re.Match[str]) -> str:
        font = DIST_DIR / match.group(1)
        if not font.is_file():
            return match.group(0)
        return f'url("data:font/woff2;base64,{base64.b64encode(font.read_bytes()).decode()}")'

    return _FONT_URL.sub(inline, css), None


def default_output(slug: str) -> Path:
    """Where ``judge preview`` writes without ``--output``: the system's temporary folder, never the
    working directory (a repository root would gain an untracked file)."""
    return Path(tempfile.gettempdir()) / "judge-preview" / f"{slug}.preview.html"


def write(problem: Problem, out: Path) -> Preview:
    """Render ``problem`` and write it to ``out`` (its folder is created)."""
    preview = render(problem)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(preview.html)
    return preview
