"""judge.web without a browser: the HTML routes (what the server renders into the problem page), the asset
manifest, and the static files' cache headers."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from judge.core.errors import ProblemNotFound
from judge.core.problems import ProblemSet
from judge.service.catalog import Catalog
from judge.service.schemas import ProblemDetail, ProblemSummary
from judge.web import mount
from judge.web.assets import DIST_DIR, Assets, load_assets
from judge.web.static import IMMUTABLE, cache_control
from tests.conftest import FIXTURE_SLUG, TUPLE_SLUG
from tests.webtools import page_of

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def catalog(problems: ProblemSet) -> Catalog:
    return Catalog(problems)


@pytest.fixture(scope="module")
def client(catalog: Catalog) -> TestClient:
    app = FastAPI()
    assets = mount(app, lambda: catalog)
    assert assets.ready, assets.problem
    return TestClient(app)


def asset_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/static/[^"]+)"', html)


def test_problem_list_page_is_a_shell_that_loads_hashed_assets(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-cache"
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    urls = asset_urls(response.text)
    assert any(u.endswith(".js") for u in urls)
    for url in urls:
        assert re.search(r"-[A-Z0-9]{8}\.js$", url), url


def test_pages_inline_the_built_stylesheet_whose_urls_resolve(client: TestClient) -> None:
    """The stylesheet is in the page's <head>, byte for byte the build's, and not linked (a linked one
    holds the first paint until it arrives); the font URLs in it are absolute and served."""
    css = load_assets().stylesheet
    assert css
    for path in ("/", f"/problems/{TUPLE_SLUG}"):
        page = client.get(path).text
        head = page.split("</head>", 1)[0]
        assert f"<style>{css}</style>" in head, path
        assert 'rel="stylesheet"' not in page
    fonts = re.findall(r'url\("?(/static/[^")]+)"?\)', css)
    assert fonts, "the stylesheet names its math font"
    for url in fonts:
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == IMMUTABLE


def test_problem_page_names_the_problem(client: TestClient) -> None:
    response = client.get(f"/problems/{FIXTURE_SLUG}")
    assert response.status_code == 200
    assert f'data-slug="{FIXTURE_SLUG}"' in response.text
    assert "<title>Scale a Tree · JAX practice judge</title>" in response.text
    assert "no-cache" in response.headers["cache-control"]


def test_problem_page_renders_the_api_body_without_script(client: TestClient, catalog: Catalog) -> None:
    """Statement, meta, signature, hints and the starter code are in the HTML, from the API's own body."""
    page = client.get(f"/problems/{FIXTURE_SLUG}").text
    detail = catalog.detail(FIXTURE_SLUG)
    # The statement is the API's statement_html, byte for byte (math as MathML, no TeX left).
    assert f'<div id="statement" class="prose">{detail.statement_html}</div>' in page
    assert "<math" in detail.statement_html
    assert f'<h1 id="problem-title">{html.escape(detail.title)}</h1>' in page
    assert f'<span class="difficulty difficulty-{detail.difficulty}">{detail.difficulty}</span>' in page
    for tag in detail.tags:
        assert f'<span class="tag">{html.escape(tag)}</span>' in page
    assert f"<code>{html.escape(detail.signature)}</code>" in page
    # Hints are there, hidden until asked for, with their inline Markdown rendered.
    hints = re.findall(r'<li tabindex="-1" hidden>(.*?)</li>', page)
    assert len(hints) == len(detail.hints) == 3
    assert "<code>jax.tree.map(f, tree)</code>" in hints[0]
    assert f"Show hint 1 of {len(detail.hints)}" in page
    # The starter code is in a labelled textarea, escaped as text (the newline after the tag is dropped
    # by HTML parsers, so the text is exactly the starter).
    match = re.search(r'<textarea id="code"[^>]*aria-label="([^"]+)"[^>]*>\n(.*?)</textarea>', page, re.S)
    assert match is not None
    assert match.group(1) == f"Code editor: your {detail.function} in Python"
    assert html.unescape(match.group(2)) == detail.starter_code


def test_problem_page_escapes_the_starter_code(problems: ProblemSet) -> None:
    """Starter code is text: a ``</textarea>`` in it cannot end the editor or inject markup."""
    real = Catalog(problems).detail(FIXTURE_SLUG)
    hostile = real.model_copy(update={"starter_code": "x = '</textarea><script>alert(1)</script>'\n"})
    page = page_of(hostile)
    assert "<script>alert(1)" not in page
    assert "x = &#39;&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;" in page


def test_a_problem_without_hints_has_no_hint_section(problems: ProblemSet) -> None:
    bare = Catalog(problems).detail(FIXTURE_SLUG).model_copy(update={"hints": []})
    page = page_of(bare)
    assert 'id="hints"' not in page and "Show hint" not in page
    assert '<textarea id="code"' in page


def test_a_problem_the_judge_cannot_prepare_is_a_503_page(problems: ProblemSet) -> None:
    class Failing:
        def summaries(self) -> list[ProblemSummary]:
            return []

        def detail(self, slug: str) -> ProblemDetail:
            if slug != FIXTURE_SLUG:
                raise ProblemNotFound(slug, "no such problem")
            raise RuntimeError("the reference failed on example 1")

        def visible(self, slug: str, tenant: str | None) -> bool:
            return True

    app = FastAPI()
    mount(app, lambda: Failing())
    client = TestClient(app, raise_server_exceptions=False)
    response = client.get(f"/problems/{FIXTURE_SLUG}")
    assert response.status_code == 503
    assert "cannot be shown now" in response.text
    assert "the reference failed" not in response.text  # the judge's internals stay in its log
    assert client.get("/problems/other").status_code == 404


def test_pages_say_they_are_off_when_the_api_needs_a_key(catalog: Catalog) -> None:
    """Without anonymous access the page's scripts could not call the API: the pages show no problem."""
    app = FastAPI()
    mount(app, lambda: catalog, anonymous=lambda: False)
    client = TestClient(app)
    for path in ("/", f"/problems/{FIXTURE_SLUG}", "/problems/no-such-problem"):
        response = client.get(path)
        assert response.status_code == 403
        assert "anonymous access" in response.text
        assert "Scale a Tree" not in response.text and "<textarea" not in response.text


def test_head_requests_are_answered(client: TestClient) -> None:
    assert client.head("/").status_code == 200
    assert client.head(f"/problems/{TUPLE_SLUG}").status_code == 200


def test_unknown_problem_is_a_404_page_naming_it(client: TestClient) -> None:
    response = client.get("/problems/no-such-thing")
    assert response.status_code == 404
    assert "no-such-thing" in response.text
    assert response.headers["content-type"].startswith("text/html")


def test_slug_is_escaped_in_the_404_page(client: TestClient) -> None:
    response = client.get("/problems/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    assert response.status_code == 404
    assert "<img src=x" not in response.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in response.text


def test_hashed_assets_are_immutable_and_gzip_when_accepted(client: TestClient) -> None:
    url = next(u for u in asset_urls(client.get(f"/problems/{TUPLE_SLUG}").text) if u.endswith(".js"))
    plain = client.get(url, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200
    assert plain.headers["cache-control"] == IMMUTABLE
    assert "content-encoding" not in plain.headers
    assert plain.headers["content-type"].split(";")[0] in ("text/javascript", "application/javascript")
    assert plain.headers["vary"] == "Accept-Encoding"
    assert plain.content == (DIST_DIR / url.rsplit("/", 1)[1]).read_bytes()

    packed = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.headers["cache-control"] == IMMUTABLE
    assert packed.headers["content-type"] == plain.headers["content-type"]
    # httpx decodes gzip for us; the bytes must be the same script.
    assert packed.content == plain.content
    assert int(packed.headers["content-length"]) < len(plain.content)


def test_assets_revalidate_with_etag(client: TestClient) -> None:
    url = next(u for u in asset_urls(client.get("/").text) if u.endswith(".js"))
    first = client.get(url, headers={"Accept-Encoding": "identity"})
    again = client.get(url, headers={"Accept-Encoding": "identity", "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.headers["cache-control"] == IMMUTABLE


def test_unhashed_files_must_revalidate(client: TestClient) -> None:
    response = client.get("/static/manifest.json")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-cache"
    assert cache_control("problem-ABCDEFGH.js") == IMMUTABLE
    assert cache_control("problem.js") == "no-cache"


@pytest.mark.parametrize(
    "path", ["/static/../pyproject.toml", "/static/%2e%2e/pyproject.toml", "/static/nope.js"]
)
def test_static_serves_only_the_bundle(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404


def test_without_a_build_pages_say_how_to_build_and_the_api_is_untouched(problems: ProblemSet) -> None:
    app = FastAPI()

    @app.get("/api/ping")
    def ping() -> dict[str, str]:
        return {"ok": "yes"}

    mount(
        app,
        lambda: Catalog(problems),
        assets=Assets(problem="the page's assets are not built: run scripts/setup"),
    )
    client = TestClient(app)
    response = client.get(f"/problems/{TUPLE_SLUG}")
    assert response.status_code == 503
    assert "run scripts/setup" in response.text
    assert "<script" not in response.text
    assert client.get("/api/ping").json() == {"ok": "yes"}


def test_load_assets_reports_a_missing_or_broken_build(tmp_path: Path) -> None:
    assert "not built" in (load_assets(tmp_path).problem or "")
    (tmp_path / "manifest.json").write_text("{not json")
    assert "unreadable" in (load_assets(tmp_path).problem or "")
    (tmp_path / "manifest.json").write_text(json.dumps({"files": {"problem.js": "problem-AAAAAAAA.js"}}))
    assert "missing problem.js" in (load_assets(tmp_path).problem or "")
    (tmp_path / "problem-AAAAAAAA.js").write_text("")
    assets = load_assets(tmp_path)
    assert assets.ready and assets.url("problem.js") == "/static/problem-AAAAAAAA.js"
    assert assets.url("other.js") == "" and assets.stylesheet == ""
    files = {"problem.js": "problem-AAAAAAAA.js", "style.css": "style-AAAAAAAA.css"}
    (tmp_path / "manifest.json").write_text(json.dumps({"files": files}))
    (tmp_path / "style-AAAAAAAA.css").write_text("body{color:red}")
    assert load_assets(tmp_path).stylesheet == "body{color:red}"
    # The stylesheet is inlined in a <style> element: text that would end it is a broken build.
    (tmp_path / "style-AAAAAAAA.css").write_text('a::after{content:"</STYLE><script>x()</script>"}')
    broken = load_assets(tmp_path)
    assert not broken.ready and "'</style'" in (broken.problem or "")


def test_the_built_bundle_matches_the_sources() -> None:
    """scripts/build-web records the hash of web/'s sources it built from; a stale bundle fails here."""
    import subprocess

    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    script = (
        "cd web && find package.json package-lock.json build.mjs src -type f -print0 | sort -z "
        "| xargs -0 sha256sum | sha256sum | cut -c1-16"
    )
    current = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert manifest["source_hash"] == current.stdout.strip(), "the bundle is stale: run scripts/build-web"


def test_pages_announce_chunks_and_the_api_call_they_will_make(client: TestClient) -> None:
    """The problem page announces its entry's chunks and no API call (it renders everything it needs
    before the first Run); the list page announces the list it fetches."""
    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    page = client.get(f"/problems/{TUPLE_SLUG}").text
    for chunk in manifest["preload"]["problem.js"]:
        assert f'<link rel="modulepreload" href="/static/{chunk}">' in page
    assert 'rel="preload"' not in page and "/api/" not in page
    listing = client.get("/").text
    assert "/api/" not in listing  # the list is rendered on the server: its script asks for nothing


def test_the_problem_entry_leaves_codemirror_and_jsonc_to_later_chunks(client: TestClient) -> None:
    """What the page loads first holds no CodeMirror and no JSON error locator; the editor is loaded on
    demand and announced nowhere in the HTML."""
    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    first = [manifest["files"]["problem.js"], *manifest["preload"]["problem.js"]]
    for name in first:
        text = (DIST_DIR / name).read_text()
        assert "cm-content" not in text, name  # a class name CodeMirror's view sets
        assert "<unknown ParseErrorCode>" not in text, name  # a string of jsonc-parser's
    editor = manifest["files"]["editor.js"]
    assert "cm-content" in (DIST_DIR / editor).read_text()
    assert editor in (DIST_DIR / manifest["files"]["problem.js"]).read_text()  # import("./editor-HASH.js")
    page = client.get(f"/problems/{FIXTURE_SLUG}").text
    assert editor not in page
    loaded = sum((DIST_DIR / name).stat().st_size for name in first)
    assert loaded < 64_000, f"the problem page's first scripts grew to {loaded} bytes"
