"""The list and the problem page at every width (issue 41, point 2): at 320, 390, 768, 1280 and 1920 px, in
light and dark, no element that holds text is squeezed to nothing or overflows the window, a problem row's
title, verdict badge and links never overlap, the site's navigation shows, the page never scrolls sideways,
and axe-core finds nothing serious or critical. Headless Chromium against a real ``judge serve`` of the
repository's own problems (their long titles and "Similar" links)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.test_web_page import AXE, Scheme, axe_findings
from tests.webtools import ROOT, JudgeServer, Watched, module_artifacts, wait_for_codemirror

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web")]

WIDTHS = (320, 390, 768, 1280, 1920)
#: A problem with a long title, tags and similar problems.
SLUG = "global-norm-clipping"
#: Narrowest a problem's title may be laid out in the list (a few words a line, never one).
TITLE_MIN_PX = 120


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve-widths")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        ready=False,  # nothing here is graded: the pages only
        problems_dir=str(ROOT / "problems"),
        sandbox_slot_base="820",
        anonymous_rate_limit="10000/minute",
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    return module_artifacts(__name__)


#: Every rendered element with text of its own, where it is and whether it escapes the window: those inside
#: a box that scrolls or clips on its own (a code block, the editor) may run past the window, nothing else.
LAYOUT = """
() => {
  const found = [];
  const scrolls = (node) => {
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (["auto", "scroll", "hidden", "clip"].includes(style.overflowX)) return true;
    }
    return false;
  };
  for (const node of document.body.querySelectorAll("*")) {
    if (node.closest(".visually-hidden, .skip-link, template, script, style, noscript")) continue;
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own || !node.getClientRects().length) continue;
    const style = getComputedStyle(node);
    if (style.visibility === "hidden") continue;
    const box = node.getBoundingClientRect();
    found.push({
      what: `${node.tagName.toLowerCase()}${node.id ? "#" + node.id : ""}.${node.className}`.slice(0, 80),
      text: node.textContent.trim().slice(0, 40),
      width: box.width,
      left: box.left,
      right: box.right,
      scrolls: scrolls(node),
    });
  }
  return found;
}
"""


def squeezed_or_escaping(page: Page) -> list[str]:
    """Elements with text that are 0 px wide, or that reach past the window's sides outside a scroller."""
    width = int(page.evaluate("document.documentElement.clientWidth"))
    bad = []
    for item in page.evaluate(LAYOUT):
        if item["width"] < 1:
            bad.append(f"{item['what']} {item['text']!r} is {item['width']:.0f} px wide")
        elif not item["scrolls"] and (item["left"] < -1 or item["right"] > width + 1):
            span = f"{item['left']:.0f}-{item['right']:.0f} px"
            bad.append(f"{item['what']} {item['text']!r} spans {span} of {width}")
    return bad


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"] - 0.5
        and b["x"] < a["x"] + a["width"] - 0.5
        and a["y"] < b["y"] + b["height"] - 0.5
        and b["y"] < a["y"] + a["height"] - 0.5
    )


def sideways(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def nav_shown(page: Page) -> None:
    for name in ("Problems", "REST API"):
        link = page.get_by_role("navigation", name="Site").get_by_role("link", name=name)
        expect(link).to_be_visible()
        box = link.bounding_box()
        width = page.viewport_size["width"]  # type: ignore[index]
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (name, box)


@pytest.fixture(params=["light", "dark"])
def scheme(request: pytest.FixtureRequest) -> Scheme:
    chosen: Scheme = request.param
    return chosen


@pytest.mark.parametrize("width", WIDTHS)
def test_the_list_and_a_problem_page_fit_every_width(
    browser: Browser,
    artifacts: Path,
    server: JudgeServer,
    request: pytest.FixtureRequest,
    width: int,
    scheme: Scheme,
) -> None:
    assert AXE.is_file(), f"{AXE} is missing: scripts/build-web --deps installs web/node_modules"
    context = browser.new_context(
        viewport={"width": width, "height": 800},
        color_scheme=scheme,
        bypass_csp=True,
    )
    context.set_default_timeout(30_000)
    try:
        page = context.new_page()
        watched = Watched.attach(page, artifacts / request.node.name)
        page.goto(server.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        # Verdicts on a few problems: the badge takes the place of "not submitted yet".
        slugs: list[str] = page.locator(".problem-row").evaluate_all("rows => rows.map(r => r.dataset.slug)")
        page.evaluate(
            """slugs => slugs.forEach((slug, i) => localStorage.setItem(`jax-judge:verdict:${slug}`,
                 JSON.stringify({verdict: i % 2 ? "wrong_answer" : "accepted", passed: 1, total: 9})))""",
            slugs[::3],
        )
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        check_list(page, width)
        watched.shot(f"list-{width}-{scheme}")
        assert axe_findings(page) == [], f"the list at {width} px ({scheme})"

        page.goto(f"{server.url}/problems/{SLUG}")
        wait_for_codemirror(page)
        check_problem(page)
        watched.shot(f"problem-{width}-{scheme}")
        assert axe_findings(page) == [], f"the problem page at {width} px ({scheme})"
        if page.locator(".view-tabs").is_visible():  # a narrow window: the code is a tab of its own
            page.get_by_role("tab", name="Code").click()
            expect(page.locator(".cm-content")).to_be_visible()
            check_problem(page)
            watched.shot(f"problem-code-{width}-{scheme}")
            assert axe_findings(page) == [], f"the problem page's code tab at {width} px ({scheme})"
        assert watched.unexpected_errors() == []
    finally:
        context.close()


def check_list(page: Page, width: int) -> None:
    assert sideways(page) <= 0, f"the list scrolls sideways at {width} px"
    nav_shown(page)
    assert squeezed_or_escaping(page) == []
    rows = page.locator(".problem-row")
    assert rows.count() > 10
    for i in range(rows.count()):
        row = rows.nth(i)
        parts: dict[str, Any] = {}
        for name, selector in (
            ("title", ".problem-link"),
            ("difficulty", ".difficulty"),
            ("tags", ".tags"),
            ("verdict", ".last-verdict"),
            ("similar", ".similar"),
        ):
            found = row.locator(selector)
            if found.count():
                parts[name] = found.first.bounding_box()
        title = parts["title"]
        assert title["width"] >= min(TITLE_MIN_PX, width / 3), (width, i, parts)
        names = list(parts)
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                box_a, box_b = parts[names[a]], parts[names[b]]
                if box_a["width"] and box_b["width"]:
                    assert not overlaps(box_a, box_b), (width, i, names[a], names[b], box_a, box_b)


def check_problem(page: Page) -> None:
    width = page.viewport_size["width"]  # type: ignore[index]
    assert sideways(page) <= 0, f"the problem page scrolls sideways at {width} px"
    nav_shown(page)
    assert squeezed_or_escaping(page) == []
