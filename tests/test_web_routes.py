"""judge.web without a browser: the HTML routes, the asset manifest, and the static files' cache headers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from judge.problems import ProblemSet
from judge.web import mount
from judge.web.assets import DIST_DIR, Assets, load_assets
from judge.web.static import IMMUTABLE, cache_control
from tests.conftest import FIXTURE_SLUG, TUPLE_SLUG

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def client(problems: ProblemSet) -> TestClient:
    app = FastAPI()
    assets = mount(app, lambda: problems)
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
    assert any(u.endswith(".js") for u in urls) and any(u.endswith(".css") for u in urls)
    for url in urls:
        assert re.search(r"-[A-Z0-9]{8}\.(js|css)$", url), url


def test_problem_page_names_the_problem(client: TestClient) -> None:
    response = client.get(f"/problems/{FIXTURE_SLUG}")
    assert response.status_code == 200
    assert f'data-slug="{FIXTURE_SLUG}"' in response.text
    assert "<title>Scale a Tree · JAX practice judge</title>" in response.text
    assert "no-cache" in response.headers["cache-control"]


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
    url = next(u for u in asset_urls(client.get("/").text) if u.endswith(".css"))
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

    mount(app, lambda: problems, assets=Assets(problem="the page's assets are not built: run scripts/setup"))
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
    assert assets.url("other.js") == ""


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
    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    html = client.get(f"/problems/{TUPLE_SLUG}").text
    for chunk in manifest["preload"]["problem.js"]:
        assert f'<link rel="modulepreload" href="/static/{chunk}">' in html
    assert (
        f'<link rel="preload" href="/api/problems/{TUPLE_SLUG}" as="fetch" crossorigin="anonymous">' in html
    )
    assert '<link rel="preload" href="/api/problems" as="fetch"' in client.get("/").text
