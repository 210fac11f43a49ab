"""The page's feedback (issue 25) end to end: a Run of a known mistake shows the mistake's name and note with
the failing case, the cost line beside the reference's and the program view (jaxpr, folded StableHLO, with
marked lines), in headless Chromium against a real ``judge serve`` (``tests/test_web_page.py``'s setup)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from judge.feedback.cost import MEASURABLE_MS
from judge.feedback.notes import parse_note
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.webtools import JudgeServer, Watched, module_artifacts, open_problem, type_code

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

#: The service's slot base is at most 900 (``sandbox_slot_base``), so this server takes the default slots
#: of ``tests/test_web_page.py``'s and runs in its xdist group, one server at a time.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web")]

SOLUTIONS = FIXTURES / FIXTURE_SLUG / "solutions"
GRADE_TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve-feedback")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        submission_concurrency="1",
        anonymous_rate_limit="10000/minute",
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """This module's screenshot folder (``test-artifacts/web/test_web_feedback``), emptied for this run."""
    return module_artifacts(__name__)


@pytest.fixture
def web(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Watched]:
    folder = artifacts / request.node.name
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    watched = Watched.attach(context.new_page(), folder)
    print(f"screenshots: {folder}")
    try:
        yield watched
        assert watched.unexpected_errors() == [], "the page reported errors"
    finally:
        context.close()


def test_a_run_of_a_known_mistake_shows_its_note_cost_and_program(web: Watched, server: JudgeServer) -> None:
    wrong = SOLUTIONS / "wrong_answer" / "adds_factor.py"
    note = parse_note(wrong.read_text())
    page = open_problem(web, server, FIXTURE_SLUG)
    type_code(page, wrong.read_text())
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    failing = page.locator('.case[data-case="example_1"]')
    expect(failing.locator(".verdict")).to_contain_text("Wrong answer")
    mistake = failing.locator(".mistake")
    expect(mistake.locator(".mistake-name strong")).to_have_text(note.name)
    expect(mistake.locator(".mistake-note")).to_have_text(note.note)
    # The cost: each figure beside the reference's; these sub-millisecond run times get no ratio.
    cost = failing.locator("details.cost")
    expect(cost.locator("summary")).to_contain_text(re.compile(r"\d+ FLOPs \(the reference: \d+"))
    expect(cost.locator("summary")).not_to_contain_text("run")
    cost.locator("summary").click()
    run_time = cost.locator('tr[data-figure="Run time"] td')
    expect(run_time.nth(0)).to_have_text(re.compile(r"^\d+(\.\d+)? ms$"))
    mine = float(run_time.nth(0).inner_text().split()[0])
    assert mine < MEASURABLE_MS, mine  # a tiny program's one timed run: below the floor of a ratio
    expect(run_time.nth(2)).to_have_text("too short to compare")
    expect(cost.locator('tr[data-figure="FLOPs"] td').nth(1)).to_have_text(re.compile(r"^\d+$"))
    program = failing.locator("details.program")
    expect(program).to_be_visible()
    program.locator(":scope > summary").click()
    expect(program.locator('pre[data-dialect="jaxpr"]')).to_contain_text("add")
    stablehlo = program.locator("details.stablehlo")
    stablehlo.locator(":scope > summary").click()
    expect(stablehlo.locator('pre[data-dialect="stablehlo"]')).to_contain_text("stablehlo.add")
    web.shot("run-known-mistake")

    # An accepted solution is never told it looks like a mistake; its program converts dtypes (marked).
    type_code(page, (SOLUTIONS / "accepted" / "float32_then_cast.py").read_text())
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_contain_text(
        "2 of 2 examples passed", timeout=GRADE_TIMEOUT_MS
    )
    expect(page.locator("#run-results .mistake")).to_have_count(0)
    first = page.locator('.case[data-case="example_1"]')
    first.locator("details.program > summary").click()
    expect(first.locator('pre[data-dialect="jaxpr"] .mark-convert').first).to_be_visible()
    web.shot("run-accepted-program")


def test_a_submit_of_a_known_mistake_names_it_with_the_failing_case(
    web: Watched, server: JudgeServer
) -> None:
    """Submit streams each case's result (CaseEvent): the failing case's row names the mistake and shows
    its note, as Run does; no row shows a hidden case's value."""
    wrong = SOLUTIONS / "wrong_answer" / "adds_factor.py"
    note = parse_note(wrong.read_text())
    page = open_problem(web, server, FIXTURE_SLUG)
    type_code(page, wrong.read_text())
    page.locator("#run").click()  # Submit grades the code last run
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    expect(page.locator("#submit")).to_be_enabled()
    page.locator("#submit").click()
    panel = page.locator("#submission")
    expect(panel.locator(".summary")).to_contain_text("Wrong answer", timeout=GRADE_TIMEOUT_MS)
    failing = panel.locator('.progress-row[data-verdict="wrong_answer"]').first
    expect(failing.locator(".mistake .mistake-name strong")).to_have_text(note.name)
    expect(failing.locator(".mistake .mistake-note")).to_have_text(note.note)
    # The fixture's hidden cases are every case but its two examples: none shows a value.
    expect(panel.locator('.progress-row:not([data-case^="example_"]) details')).to_have_count(0)
    web.shot("submit-known-mistake")
