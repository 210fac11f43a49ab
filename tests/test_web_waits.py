"""Submit explains its waits and fits the console (issue 41, points 1 and 3), in headless Chromium against a
real ``judge serve`` that grades one submission at a time:

- a Submit made while the grading capacity is busy says where it stands in the queue, what it waits for
  and an estimate, in words (never the submission's id), then counts its cases as they are graded;
- a Submit of code with a syntax error shows that error, with its line, right under the verdict, and the
  "not run" rows fold away;
- at 1280x800, after an Accepted, the verdict and "Try next" are on screen together and the console's
  panels are tall enough to read a result.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.test_web_page import axe_findings
from tests.test_web_widths import sideways, squeezed_or_escaping
from tests.webtools import JudgeServer, Watched, module_artifacts, open_problem, type_code

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web")]

SOLUTIONS = FIXTURES / FIXTURE_SLUG / "solutions"
GRADE_TIMEOUT_MS = 180_000
#: Right, but slow to load: a submission of it holds the judge's one grading slot for a few seconds.
SLOW = """\
import time

import jax

time.sleep(4)


def scale_tree(tree, factor):
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""
SYNTAX_ERROR = """\
import jax


def scale_tree(tree, factor):
    return jax.tree.map(lambda leaf: leaf * factor, tree
"""
#: The least height of the console's panels at 1280x800: a result's summary and one whole case (its
#: header, message, and the two output panes side by side), or the verdict, "Try next" and ten rows.
CONSOLE_MIN_PX = 300


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve-waits")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        submission_concurrency="1",
        sandbox_slot_base="840",
        anonymous_rate_limit="10000/minute",
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    return module_artifacts(__name__)


def _watch(browser: Browser, folder: Path, width: int, height: int) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(30_000)
    watched = Watched.attach(context.new_page(), folder)
    print(f"screenshots: {folder}")
    try:
        yield watched
        assert watched.unexpected_errors() == [], "the page reported errors"
    finally:
        context.close()


@pytest.fixture
def web(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Watched]:
    """A laptop's window: 1280x800."""
    yield from _watch(browser, artifacts / request.node.name, 1280, 800)


def post_submission(server: JudgeServer, code: str) -> str:
    request = urllib.request.Request(
        f"{server.url}/api/v1/submissions",
        data=json.dumps({"problem": FIXTURE_SLUG, "code": code}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.load(response)["id"])


#: Every text the Submit status line shows, in order (a MutationObserver on the submission panel).
RECORD_STATUS = """
() => {
  window.statusTexts = [];
  const panel = document.getElementById("submission");
  const note = () => {
    const text = panel.querySelector(".submission-status")?.textContent;
    if (text && window.statusTexts.at(-1) !== text) window.statusTexts.push(text);
  };
  new MutationObserver(note).observe(panel, { childList: true, subtree: true, characterData: true });
}
"""


def ran(page: Page, code: str) -> None:
    type_code(page, code)
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)


def test_a_submit_behind_others_says_its_place_what_it_waits_for_and_how_long_then_counts_cases(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server, FIXTURE_SLUG)
    ran(page, (SOLUTIONS / "accepted" / "tree_util_map.py").read_text())
    # Two slow submissions take the judge's one grading slot and the first place in its queue.
    blockers = [post_submission(server, f"# {n}\n{SLOW}") for n in range(2)]
    page.evaluate(RECORD_STATUS)
    page.locator("#submit").click()
    status = page.locator("#submission .submission-status")
    expect(status).to_have_text(
        re.compile(r"^Queued behind [12] other submissions? \(about \d+ s\)\.$"), timeout=GRADE_TIMEOUT_MS
    )
    # The same words beside the Submit button, where the eye is after clicking it.
    expect(page.locator("#submit-why")).to_have_text(re.compile(r"^(Queued|Grading)"))
    web.shot("queued-behind")
    summary = page.locator("#submission .summary")
    expect(summary.locator(".verdict")).to_have_text("Accepted", timeout=GRADE_TIMEOUT_MS)
    total = int(re.search(r"of (\d+) cases", summary.inner_text()).group(1))  # type: ignore[union-attr]
    texts: list[str] = page.evaluate("window.statusTexts")
    print("status texts:", texts)
    own_id = page.evaluate("JSON.parse(localStorage.getItem(`jax-judge:submissions:scale-tree`))[0].id")
    assert not [t for t in texts if any(i in t for i in (*blockers, own_id))], texts
    assert "Queued: waiting for the judge…" not in texts, texts  # the first status already says why
    behind = re.compile(r"Queued behind \d other submissions? \(about \d+ s\)")
    queued = [i for i, t in enumerate(texts) if behind.match(t)]
    counted = [i for i, t in enumerate(texts) if re.match(rf"Grading: \d+ of {total} cases graded", t)]
    assert queued and counted and queued[0] < counted[0], texts
    # The hidden cases' verdicts are held to the end: the line says so instead of seeming stuck.
    held = "the hidden cases are being graded, their verdicts come together at the end"
    assert any(held in t for t in texts), texts
    web.shot("accepted-after-waiting")


def test_a_syntax_error_on_submit_comes_first_with_its_line_and_the_rows_fold(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server, FIXTURE_SLUG)
    ran(page, SYNTAX_ERROR)
    page.locator("#submit").click()
    panel = page.locator("#submission")
    expect(panel.locator(".summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    message = panel.locator(".result-message")
    expect(message).to_contain_text("line 5")
    expect(message).to_contain_text("SyntaxError")
    # The error comes first: right under the verdict, above any case row.
    order = panel.evaluate(
        """p => [...p.querySelectorAll('.summary, .result-message, .progress-row, details.case-rows')]
              .map(n => n.matches('.progress-row') ? 'row' : n.className.split(' ')[0])"""
    )
    assert order[:3] == ["summary", "result-message", "case-rows"], order
    expect(panel.locator(".progress-row").first).to_be_hidden()  # folded: "N cases not run"
    expect(panel.locator("details.case-rows > summary")).to_have_text(re.compile(r"^\d+ cases not run"))
    expect(message).to_be_in_viewport()
    message.get_by_role("button", name="Show line 5 in the editor").click()
    expect(page.locator(".cm-line.cm-error-line")).to_contain_text("return jax.tree.map")
    web.shot("syntax-error-first")


def test_after_an_accepted_submit_the_verdict_and_try_next_are_in_view_in_a_tall_console(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server, FIXTURE_SLUG)
    console = page.locator(".console-body")
    ran(page, (SOLUTIONS / "accepted" / "float32_then_cast.py").read_text())
    results = console.bounding_box()
    assert results and results["height"] >= CONSOLE_MIN_PX, results
    page.locator("#submit").click()
    summary = page.locator("#submission .summary")
    expect(summary.locator(".verdict")).to_have_text("Accepted", timeout=GRADE_TIMEOUT_MS)
    following = page.locator("#submission .summary + #next-problem")
    expect(following).to_be_visible()
    expect(following.get_by_role("link")).to_have_attribute("href", re.compile(r"^/problems/"))
    expect(summary).to_be_in_viewport()
    expect(following).to_be_in_viewport()
    box = console.bounding_box()
    assert box and box["height"] >= CONSOLE_MIN_PX and box["y"] + box["height"] <= 800 + 1, box
    # Thirty "Accepted" rows say nothing the verdict does not: folded under it, one click away.
    rows = page.locator("#submission details.case-rows")
    expect(rows.locator("summary")).to_have_text(re.compile(r"^All \d+ cases passed"))
    rows.locator("summary").click()
    expect(page.locator("#submission .progress-row").first).to_be_visible()
    web.shot("accepted-try-next")

    # The bar between the editor and the console resizes them from the keyboard, and the size is kept.
    splitter = page.get_by_role("separator", name=re.compile("Height of the editor"))
    editor = page.locator(".cm-editor").bounding_box()
    splitter.focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    expect(splitter).to_have_attribute("aria-valuenow", "30")
    smaller = page.locator(".cm-editor").bounding_box()
    taller = console.bounding_box()
    assert editor and smaller and taller and smaller["height"] < editor["height"] - 50
    assert taller["height"] > box["height"] + 50, (box, taller)
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-editor", "codemirror")
    expect(splitter).to_have_attribute("aria-valuenow", "30")


def test_a_run_and_an_accepted_submit_fit_a_320_px_phone_in_dark(
    browser: Browser, artifacts: Path, server: JudgeServer, request: pytest.FixtureRequest
) -> None:
    """The results and the submission (its folded rows, "Try next") at the narrowest width, in dark: no
    text squeezed to nothing or past the window, no sideways scroll, nothing serious for axe."""
    context = browser.new_context(
        viewport={"width": 320, "height": 700}, color_scheme="dark", bypass_csp=True
    )
    context.set_default_timeout(30_000)
    try:
        watched = Watched.attach(context.new_page(), artifacts / request.node.name)
        page = open_problem(watched, server, FIXTURE_SLUG)
        page.get_by_role("tab", name="Code").click()
        ran(page, (SOLUTIONS / "wrong_answer" / "adds_factor.py").read_text())
        assert sideways(page) <= 0 and squeezed_or_escaping(page) == []
        assert axe_findings(page) == []
        watched.shot("run-320-dark")
        ran(page, (SOLUTIONS / "accepted" / "float32_then_cast.py").read_text())
        page.locator("#submit").click()
        verdict = page.locator("#submission .summary .verdict")
        expect(verdict).to_have_text("Accepted", timeout=GRADE_TIMEOUT_MS)
        expect(page.locator("#next-problem")).to_be_visible()
        assert sideways(page) <= 0 and squeezed_or_escaping(page) == []
        assert axe_findings(page) == []
        watched.shot("submitted-320-dark")
        assert watched.unexpected_errors() == []
    finally:
        context.close()


#: Float32 leaves whatever the tree's dtype: right on the float32 cases, wrong on the bfloat16 ones.
NO_CAST_BACK = """\
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    return jax.tree.map(lambda leaf: leaf.astype(jnp.float32) * factor, tree)
"""


def test_a_wrong_answer_keeps_the_failing_cases_in_view_and_folds_those_that_passed(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server, FIXTURE_SLUG)
    ran(page, NO_CAST_BACK)
    page.locator("#submit").click()
    panel = page.locator("#submission")
    expect(panel.locator(".summary .verdict")).to_have_text("Wrong answer", timeout=GRADE_TIMEOUT_MS)
    summary = panel.locator(".summary").inner_text()
    passed, total = (int(n) for n in re.search(r"(\d+) of (\d+)", summary).groups())  # type: ignore[union-attr]
    assert 0 < passed < total, summary
    failing = panel.get_by_role("list", name="Cases that did not pass").locator(".progress-row")
    expect(failing).to_have_count(total - passed)
    expect(failing.first).to_be_in_viewport()
    expect(failing.first.locator(".verdict")).to_have_text(re.compile("^Wrong answer"))
    fold = panel.locator("details.passed-rows")
    expect(fold.locator("summary")).to_have_text(f"{passed} cases passed: show them")
    expect(fold.locator(".progress-row").first).to_be_hidden()
    fold.locator("summary").click()
    expect(fold.locator('.progress-row[data-verdict="accepted"]')).to_have_count(passed)
    web.shot("wrong-answer-failing-first")
