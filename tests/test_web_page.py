"""The browser page end to end: headless Chromium (Debian's) driven by Playwright against a real
``judge serve`` (real sandbox, real engine, its own database).

Every test runs in a fresh browser context (empty local storage) and fails if the page logged a console
error, threw, or had a request fail. Each state is saved as a screenshot under
``test-artifacts/web/test_web_page/`` (the path is printed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from judge.web.assets import DIST_DIR
from tests import webtools
from tests.conftest import FIXTURE_SLUG, FIXTURES, KINDS_SLUG, PROGRAM_SLUG, TUPLE_SLUG
from tests.webtools import (
    ROOT,
    JudgeServer,
    Watched,
    module_artifacts,
    type_code,
    wait_for_codemirror,
)

#: The colour schemes a page is shown in (a browser context's ``color_scheme``).
Scheme = Literal["light", "dark"]

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

#: The server serves the suite's fixture problems (``tests/webtools.py``); the page is tested on scale-tree.
SCALE = FIXTURE_SLUG
SOLUTIONS = FIXTURES / SCALE / "solutions"
#: Seconds to wait for a Run or a whole submission: generous, so a busy machine only makes it slower.
GRADE_TIMEOUT_MS = 120_000

# One server and one browser for the module: keep every test on the same xdist worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web")]

#: Returns float32 leaves whatever the tree's dtype (no cast back): wrong on the bfloat16 cases.
NO_CAST_BACK = """\
import jax
import jax.numpy as jnp


def scale_tree(tree, factor):
    return jax.tree.map(lambda leaf: leaf.astype(jnp.float32) * factor, tree)
"""
#: Scales the leaves of a top-level dict only, not those in its lists: right on example 1, wrong on example 2.
SHALLOW = """\
import jax


def scale_tree(tree, factor):
    if isinstance(tree, dict):
        return {k: v if isinstance(v, (dict, list)) else v * factor for k, v in tree.items()}
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve")
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
    """This module's screenshot folder (``test-artifacts/web/test_web_page``), emptied for this run."""
    return module_artifacts(__name__)


@pytest.fixture(scope="module")
def catalog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    """A server of the repository's own problems (for a problem the fixtures do not have), started only
    by the tests that need it; its own sandbox slots."""
    folder = tmp_path_factory.mktemp("judge-serve-catalog")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        problems_dir=str(ROOT / "problems"),
        sandbox_slot_base="780",
        submission_concurrency="1",
        anonymous_rate_limit="10000/minute",
    )
    try:
        yield started
    finally:
        started.stop()


def _watch(browser: Browser, folder: Path, width: int, height: int) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(30_000)
    page = context.new_page()
    watched = Watched.attach(page, folder)
    print(f"screenshots: {folder}")
    try:
        yield watched
        assert watched.unexpected_errors() == [], "the page reported errors"
    finally:
        context.close()


@pytest.fixture
def web(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Watched]:
    """A desktop-sized page (1280x900) in a fresh context."""
    yield from _watch(browser, artifacts / request.node.name, 1280, 900)


@pytest.fixture
def phone(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Watched]:
    """A phone-sized page (390x844)."""
    yield from _watch(browser, artifacts / request.node.name, 390, 844)


# --------------------------------------------------------------------------------------------- helpers


def open_problem(web: Watched, server: JudgeServer, slug: str = SCALE) -> Page:
    return webtools.open_problem(web, server, slug)


def editor_text(page: Page) -> str:
    lines = page.locator(".cm-content .cm-line").all_text_contents()
    return "\n".join(line.replace("\u200b", "") for line in lines)


def run(page: Page) -> None:
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)


def submit(page: Page) -> None:
    expect(page.locator("#submit")).to_be_enabled()
    page.locator("#submit").click()
    expect(page.locator("#submission .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)


def solution(folder: str, name: str) -> str:
    return (SOLUTIONS / folder / name).read_text()


# --------------------------------------------------------------------------------------------- scenarios


def test_problem_list_shows_problems_and_the_last_verdict(web: Watched, server: JudgeServer) -> None:
    page = web.page
    page.goto(server.url)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    rows = page.locator(".problem-row")
    expect(rows).to_have_count(len(server.get_json("/api/problems")))
    row = page.locator(f'.problem-row[data-slug="{SCALE}"]')
    expect(row.locator(".problem-link")).to_have_text("Scale a Tree")
    expect(row.locator(".difficulty")).to_have_text("easy")
    expect(row.locator(".tag")).to_contain_text(["pytree", "jit"])
    expect(row.locator(".last-verdict")).to_have_text("not submitted yet")
    web.shot("list-fresh")

    page.evaluate(
        """slug => localStorage.setItem(`jax-judge:verdict:${slug}`,
             JSON.stringify({verdict: "wrong_answer", passed: 3, total: 19, at: 0}))""",
        SCALE,
    )
    page.reload()
    expect(row.locator(".last-verdict .verdict")).to_have_text("Wrong answer")
    web.shot("list-with-verdict")
    row.locator(".problem-link").click()
    expect(page).to_have_url(f"{server.url}/problems/{SCALE}")


def test_statement_math_examples_hints_and_starter(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    expect(page).to_have_title("Scale a Tree · JAX practice judge")
    statement = page.locator("#statement")
    # Math is MathML rendered by the server: no TeX left over, nothing fetched from elsewhere.
    assert statement.locator("math").count() >= 3
    expect(statement.locator('math[display="block"]')).to_have_count(1)
    assert "\\ell" not in statement.inner_text()
    for heading in ("Example 1", "Example 2", "Requirements", "Constraints"):
        expect(statement.get_by_role("heading", name=heading)).to_be_visible()
    expect(statement).to_contain_text('Output: {"b": 1.5, "w": [3.0, 6.0]}')
    expect(statement).to_contain_text("Every entry is multiplied by 3")

    hints = page.locator("#hint-list li:visible")
    expect(hints).to_have_count(0)
    page.get_by_role("button", name="Show hint 1 of 3").click()
    expect(hints).to_have_count(1)
    expect(hints.nth(0).locator("code").first).to_have_text("jax.tree.map(f, tree)")
    page.get_by_role("button", name="Show hint 2 of 3").click()
    page.get_by_role("button", name="Show hint 3 of 3").click()
    expect(hints).to_have_count(3)
    expect(page.locator("#next-hint")).to_be_hidden()

    starter = (FIXTURES / SCALE / "starter.py").read_text().rstrip("\n")
    assert editor_text(page).rstrip("\n") == starter
    tree = page.get_by_label("tree", exact=True)
    assert tree.input_value() == '{"w": [1, 2], "b": 0.5}'
    expect(page.locator("#arg-tree-kinds")).to_have_text("accepts object, array, number")
    expect(page.locator("#arg-factor-kinds")).to_have_text("accepts number")
    expect(page.locator("#json-rule")).to_contain_text("A list whose items are all objects is a list node")
    web.shot("statement-hints")


def test_run_the_examples_and_see_the_expected_output(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    expect(page.locator("#submit")).to_be_disabled()
    expect(page.locator("#submit-why")).to_contain_text("Run your code first")
    type_code(page, solution("accepted", "tree_util_map.py"))
    web.shot("code-typed")
    run(page)
    expect(page.locator("#run-results .summary")).to_contain_text("2 of 2 examples passed")
    first = page.locator('.case[data-case="example_1"]')
    expect(first.locator(".verdict")).to_have_text("Accepted")
    expect(first.locator(".times")).to_contain_text(re.compile(r"compile [\d.]+ ms · run [\d.]+ ms"))
    # Each leaf with its dtype beside it (JSON cannot say bfloat16).
    expected = '{"b": 1.5 float32, "w": [3.0, 6.0] float32}'
    panes = first.locator(".pane .value")
    expect(panes.nth(0)).to_have_text(expected)
    expect(panes.nth(1)).to_have_text(expected)
    expect(panes.nth(0).locator(".dtype")).to_have_text(["float32", "float32"])
    expect(first.locator(".tree .diff")).to_have_count(0)
    expect(page.locator("#submit")).to_be_enabled()
    web.shot("run-accepted")

    # Any edit makes the last Run stale: Submit waits for a Run of the current code.
    page.locator(".cm-content").press("End")
    page.keyboard.type(" ")
    expect(page.locator("#submit")).to_be_disabled()
    expect(page.locator("#submit-why")).to_contain_text("Run your code first")


def test_fill_puts_an_example_in_the_boxes(web: Watched, server: JudgeServer) -> None:
    """The server-rendered boxes hold example 1; Fill with example 2 writes its values (as the statement
    shows them, numbers as JavaScript writes them) and switches to running on my input."""
    page = open_problem(web, server)
    tree = page.get_by_label("tree", exact=True)
    factor = page.get_by_label("factor", exact=True)
    assert (tree.input_value(), factor.input_value()) == ('{"w": [1, 2], "b": 0.5}', "3")
    expect(page.get_by_role("radio", name="the examples")).to_be_checked()
    expect(page.locator("#example-select option")).to_have_text(["Example 1", "Example 2"])
    page.get_by_label("Fill the boxes with").select_option(label="Example 2")
    page.get_by_role("button", name="Fill", exact=True).click()
    assert json.loads(tree.input_value()) == {"layers": [{"w": [0.5, -1.0]}, {"w": [2.0, 0.25]}]}
    assert factor.input_value() == "0.5"
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    expect(page.locator("#run")).to_have_text("Run on my input")
    page.get_by_label("Fill the boxes with").select_option(label="Example 1")
    page.get_by_role("button", name="Fill", exact=True).click()
    assert tree.input_value() == '{"w": [1, 2], "b": 0.5}'
    web.shot("filled")


def test_a_box_typed_in_before_the_script_ran_is_kept_and_run(web: Watched, server: JudgeServer) -> None:
    """The boxes work before the page's script arrives: what was typed stays, and Run uses it."""
    page = web.page
    held: list[Route] = []
    page.route(re.compile(r"/static/problem-[A-Z0-9]{8}\.js$"), lambda route: held.append(route))
    page.goto(f"{server.url}/problems/{SCALE}", wait_until="commit")  # "load" waits for the script
    factor = page.get_by_label("factor", exact=True)
    factor.fill("10")
    expect(page.locator("body")).not_to_have_attribute("data-ready", "true")
    assert len(held) == 1
    held[0].continue_()
    wait_for_codemirror(page)
    assert factor.input_value() == "10"
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    page.locator("#run").click()
    custom = page.locator('.case[data-case="custom"]')
    expect(custom.locator(".pane .value").nth(1)).to_contain_text('"b": 5.0', timeout=GRADE_TIMEOUT_MS)
    web.shot("typed-before-script")


def test_run_shows_what_the_code_printed(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    code = solution("accepted", "tree_util_map.py").replace(
        "    return ",
        '    print("leaves:", len(jax.tree.leaves(tree)), "<b>not markup</b>")\n    return ',
    )
    type_code(page, code)
    run(page)
    page.locator("#run-results .printed button").click()  # the Output tab
    prints = page.locator("#output .prints")
    expect(prints.get_by_role("heading", name="Printed output")).to_be_visible()
    expect(prints.locator(".stdout").first).to_contain_text("leaves: 2 <b>not markup</b>")
    expect(prints.locator("b")).to_have_count(0)  # shown as text, never as HTML
    web.shot("run-prints")


def test_wrong_output_marks_the_differing_leaves(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    type_code(page, SHALLOW)
    run(page)
    # Example 2 holds its leaves in a list of dicts: they must be scaled, but come back unchanged.
    failing = page.locator('.case[data-case="example_2"]')
    expect(failing.locator(".verdict")).to_have_text("Wrong answer (value)")
    expect(failing.locator(".message")).to_contain_text('layers[0]["w"][1]: got -1, expected -0.5')
    yours = failing.locator(".pane").nth(0)
    leaf = yours.locator(""".leaf.diff[data-path='layers[0]["w"]'] mark""")
    expect(leaf.first).to_have_text("0.5")
    expect(failing.locator(".differs")).to_contain_text('layers[0]["w"]')
    expect(page.locator('.case[data-case="example_1"] .tree .diff')).to_have_count(0)
    web.shot("run-wrong-answer")


def test_submit_a_correct_solution_and_see_accepted(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    type_code(page, solution("accepted", "float32_then_cast.py"))
    page.locator(".cm-content").press("Control+Enter")  # Ctrl+Enter runs
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    web.shot("ran")
    page.locator(".cm-content").press("Control+Shift+Enter")  # Ctrl+Shift+Enter submits
    summary = page.locator("#submission .summary")
    expect(summary).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    expect(summary.locator(".verdict")).to_have_text("Accepted")
    total = int(re.search(r"(\d+) of (\d+)", summary.inner_text()).group(2))  # type: ignore[union-attr]
    page.locator("#submission details.case-rows > summary").click()  # an Accepted's rows are folded
    expect(page.locator("#submission .progress-row")).to_have_count(total)
    expect(page.locator("#submission .progress-row .verdict")).to_have_text(["Accepted"] * total)
    expect(page.locator("#submission .progress-row", has_text="(hidden)").first).to_be_visible()
    # An Accepted offers the next problem in the suggested order.
    expect(page.locator("#next-problem")).to_be_visible()
    expect(page.locator("#next-problem a")).to_have_attribute("href", re.compile(r"^/problems/"))
    web.shot("submitted-accepted")

    page.goto(server.url)
    expect(page.locator(f'.problem-row[data-slug="{SCALE}"] .last-verdict .verdict')).to_have_text("Accepted")
    web.shot("list-accepted")


def test_submit_float32_for_bfloat16_names_the_leaf(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    type_code(page, NO_CAST_BACK)
    run(page)  # the examples are float32: they pass
    expect(page.locator("#run-results .summary .verdict")).to_have_text("Accepted")
    submit(page)
    expect(page.locator("#submission .summary .verdict")).to_have_text("Wrong answer")
    hidden_dtype = page.locator("#submission .progress-row", has_text="(hidden)").filter(
        has_text="dtype float32, expected bfloat16"
    )
    expect(hidden_dtype.first.locator(".message")).to_contain_text(
        re.compile(r"(\[[^\]]+\])*: dtype float32, expected bfloat16")
    )
    expect(hidden_dtype.first.locator(".verdict")).to_have_text("Wrong answer (dtype)")
    # Hidden cases show a verdict and a message, never their data.
    expect(page.locator("#submission .progress-row", has_text="(hidden)").locator("details")).to_have_count(0)
    web.shot("submitted-dtype")


def test_python_if_on_a_traced_value_shows_the_line_and_the_hint(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    type_code(page, solution("trace_error", "python_if_on_factor.py"))
    run(page)
    first = page.locator('.case[data-case="example_1"]')
    expect(first.locator(".verdict")).to_have_text("Trace error")
    expect(first.locator(".message")).to_contain_text("line 6: `if factor == 0:`")
    # The line is marked in the editor.
    marked = page.locator(".cm-line.cm-error-line")
    expect(marked).to_have_count(1)
    expect(marked).to_have_text("    if factor == 0:")
    # Why it failed and what to write instead, in the learner's own terms.
    explain = first.locator(".explain")
    expect(explain).to_contain_text("A tracer knows its shape and dtype but not its values")
    expect(explain).to_contain_text("result = jnp.where(factor == 0, value_if_true, value_if_false)")
    expect(explain).to_contain_text("result = jax.lax.cond(factor == 0, if_true_fn, if_false_fn, *operands)")
    # One explanation is enough; the other examples say it is the same message.
    expect(page.locator("#run-results .explain")).to_have_count(1)
    expect(page.locator('.case[data-case="example_2"] .same-message')).to_have_text(
        "Same message as Example 1."
    )
    web.shot("run-trace-error")

    first.get_by_role("button", name="Show line 6 in the editor").click()
    expect(page.locator(".cm-content")).to_be_focused()

    submit(page)
    expect(page.locator("#submission .summary .verdict")).to_have_text("Trace error")
    expect(page.locator("#submission .explain")).to_contain_text("jax.lax.cond(factor == 0")
    expect(page.locator("#submission .final-message")).to_contain_text("jnp.where(cond, a, b)")
    web.shot("submitted-trace-error")


def test_malformed_inputs_show_the_error_under_their_box(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    tree = page.get_by_label("tree", exact=True)
    factor = page.get_by_label("factor", exact=True)

    # JSON the browser cannot parse: caught before any request, with line and column.
    tree.fill('{"w": [1, 2,], "b": 4}')
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    page.locator("#run").click()
    expect(page.locator("#arg-tree-error")).to_have_text(
        "tree: not valid JSON: expected a value at line 1 column 13"
    )
    expect(tree).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#arg-factor-error")).to_be_hidden()
    web.shot("input-json-error")

    # Valid JSON the judge rejects: a ragged leaf, named by its JSON path.
    web.allow(r"status of 422")
    tree.fill('{"w": [[1, 2], [3]], "b": 4}')
    expect(page.locator("#arg-tree-error")).to_be_hidden()
    page.locator("#run").click()
    expect(page.locator("#arg-tree-error")).to_contain_text('tree["w"]')
    expect(page.locator("#arg-tree-error")).to_be_visible()
    web.shot("input-path-error")

    factor.fill('"one"')
    tree.fill('{"w": [3, 0], "b": 4}')
    page.locator("#run").click()
    expect(page.locator("#arg-factor-error")).to_contain_text("factor")
    expect(page.locator("#arg-tree-error")).to_be_hidden()
    web.shot("input-number-error")

    # Fixed inputs run as one custom case, with its expected output from the reference; Ctrl+Enter runs
    # from an input box too.
    factor.fill("10")
    factor.press("Control+Enter")
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    custom = page.locator('.case[data-case="custom"]')
    expect(custom.locator("h3")).to_have_text("Your input")
    expect(custom.locator(".pane .value").nth(1)).to_contain_text('"b": 40.0')
    web.shot("custom-run")


def test_reload_keeps_the_code_and_reset_restores_the_starter(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    code = solution("accepted", "float32_then_cast.py")
    type_code(page, code)
    page.reload()
    wait_for_codemirror(page)
    assert editor_text(page).rstrip("\n") == code.rstrip("\n")
    expect(page.locator("#save-state")).to_have_text("Restored from this browser")
    web.shot("reloaded")

    page.get_by_role("button", name="Reset to starter code").click()
    starter = (FIXTURES / SCALE / "starter.py").read_text()
    assert editor_text(page).rstrip("\n") == starter.rstrip("\n")
    page.reload()
    wait_for_codemirror(page)
    assert editor_text(page).rstrip("\n") == starter.rstrip("\n")
    web.shot("reset")

    # Another problem keeps its own code.
    type_code(page, code)
    other = open_problem(web, server, TUPLE_SLUG)
    assert editor_text(other).rstrip("\n") == (FIXTURES / TUPLE_SLUG / "starter.py").read_text().rstrip("\n")


def test_editor_indents_and_matches_brackets(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    type_code(page, "def f(x):")
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("return (x")
    lines = page.locator(".cm-content .cm-line")
    expect(lines.nth(1)).to_have_text("    return (x)")  # auto-indent after the colon; ( closed
    expect(page.locator(".cm-matchingBracket").first).to_be_visible()
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    expect(lines.nth(1)).to_have_text("        return (x)")  # Tab indents instead of leaving the editor
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")  # ...but Escape then Tab leaves it (keyboard users are not trapped)
    expect(page.locator(".cm-content")).not_to_be_focused()
    expect(lines.nth(1)).to_have_text("        return (x)")
    expect(page.locator(".cm-gutters .cm-lineNumbers")).to_contain_text("2")
    # Python highlighting: the keyword is coloured unlike the name after it.
    colour = "element => getComputedStyle(element).color"
    keyword = lines.nth(0).locator("span", has_text="def").first
    assert keyword.evaluate(colour) != lines.nth(0).evaluate(colour)
    web.shot("editor")


def test_every_control_has_an_accessible_name(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    session = page.context.new_cdp_session(page)
    tree = session.send("Accessibility.getFullAXTree")
    interactive = {"button", "textbox", "combobox", "radio", "checkbox", "link", "slider", "switch"}
    unnamed = []
    named = 0
    for node in tree["nodes"]:
        role = node.get("role", {}).get("value")
        if node.get("ignored") or role not in interactive:
            continue
        name = (node.get("name") or {}).get("value", "").strip()
        if name:
            named += 1
        else:
            unnamed.append(role)
    assert unnamed == [], f"controls without an accessible name: {unnamed}"
    assert named >= 8
    expect(page.get_by_role("textbox", name=re.compile("Code editor"))).to_be_visible()
    expect(page.get_by_role("button", name="Run examples")).to_be_visible()
    expect(page.get_by_role("button", name="Submit")).to_be_visible()


def test_usable_at_phone_width(phone: Watched, server: JudgeServer) -> None:
    page = open_problem(phone, server)

    def overflow() -> int:
        return int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))

    assert overflow() <= 0, "the problem page scrolls sideways at 390 px"
    # A phone shows the statement and the code as two tabs.
    expect(page.locator(".cm-content")).to_be_hidden()
    phone.shot("phone-problem")
    page.get_by_role("tab", name="Code").click()
    expect(page.locator("#statement")).to_be_hidden()
    type_code(page, solution("wrong_answer", "adds_factor.py"))
    page.get_by_role("button", name="Run examples").scroll_into_view_if_needed()
    run(page)
    expect(page.locator('.case[data-case="example_1"] .verdict')).to_have_text("Wrong answer (value)")
    assert overflow() <= 0, "the results scroll sideways at 390 px"
    box = page.locator('.case[data-case="example_1"] .pane').nth(1).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    phone.shot("phone-results")
    page.goto(server.url)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    assert overflow() <= 0, "the problem list scrolls sideways at 390 px"
    phone.shot("phone-list")


def test_assets_come_from_this_server_only(web: Watched, server: JudgeServer) -> None:
    seen: list[str] = []
    web.page.on("request", lambda request: seen.append(request.url))
    open_problem(web, server)
    run(web.page)
    assert seen, "no requests recorded"
    foreign = [url for url in seen if not (url.startswith(server.url) or url.startswith("data:"))]
    assert foreign == []
    # The page is rendered with everything the Run panel needs: the only API call is the Run itself.
    api = [url for url in seen if url.startswith(f"{server.url}/api/")]
    assert api == [f"{server.url}/api/v1/problems/{SCALE}/run/events"]


#: Every laid-out element under <main>: (what it is, top in its scroller's content, height), in order.
LAYOUT = """() => [...document.querySelectorAll('main *')].filter(e => e.offsetParent !== null).map(e => {
  const box = e.getBoundingClientRect();
  const pane = e.closest('.pane');
  const scrolled = pane && getComputedStyle(pane).overflowY === 'auto' ? pane.scrollTop : scrollY;
  return [`${e.tagName}#${e.id}.${e.className}`, Math.round(box.top + scrolled), Math.round(box.height)];
})"""


def lazy_blocks_move_nothing(page: Page) -> None:
    """Bring every lazily laid-out block on screen, then check that no element moves when the lazy layout
    (content-visibility, which contains each block) is switched off: a contained block stops the margins
    of its first and last child collapsing through it, which would."""
    assert page.locator(".prose > p").first.evaluate("e => getComputedStyle(e).contentVisibility") == "auto"
    # The page scrolls, or (side by side) each pane scrolls on its own: bring every part on screen.
    scrollers = "[document.scrollingElement, ...document.querySelectorAll('.pane')]"
    height = int(page.evaluate(f"Math.max(...{scrollers}.map(e => e.scrollHeight))"))
    for top in range(0, height + 300, 300):
        page.evaluate(f"top => {scrollers}.forEach(e => e.scrollTo(0, top))", top)
        page.wait_for_timeout(20)
    lazy = page.evaluate(LAYOUT)
    page.add_style_tag(content="* { content-visibility: visible !important; contain: none !important; }")
    eager = page.evaluate(LAYOUT)
    assert len(lazy) == len(eager) > 100
    moved = [(before, after) for before, after in zip(lazy, eager, strict=True) if before != after]
    assert moved == [], "lazily laid-out blocks moved (what, top, height): lazy vs eager"


@pytest.mark.parametrize("slug", [SCALE, TUPLE_SLUG])
def test_lazily_laid_out_blocks_sit_where_they_would(web: Watched, server: JudgeServer, slug: str) -> None:
    lazy_blocks_move_nothing(open_problem(web, server, slug))


def test_lazily_laid_out_blocks_sit_where_they_would_at_phone_width(
    phone: Watched, server: JudgeServer
) -> None:
    lazy_blocks_move_nothing(open_problem(phone, server))


# ------------------------------------------------------------------- before CodeMirror: the plain editor


def editor_chunk() -> str:
    """The URL path of the CodeMirror chunk the problem page loads on demand."""
    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    return f"/static/{manifest['files']['editor.js']}"


def test_the_page_is_usable_before_codemirror_and_hands_over_the_text_cursor_and_mark(
    web: Watched, server: JudgeServer
) -> None:
    """Hold the CodeMirror chunk back: the server-rendered textarea edits, saves, runs and marks the error
    line; once the chunk arrives CodeMirror carries on with the same text, cursor, focus and mark."""
    page = web.page
    held: list[Route] = []
    page.route(f"**{editor_chunk()}", lambda route: held.append(route))
    page.goto(f"{server.url}/problems/{SCALE}")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("body")).to_have_attribute("data-editor", "textarea")
    assert page.evaluate("performance.getEntriesByName('judge:ready').length") == 1
    assert page.evaluate("performance.getEntriesByName('judge:editor').length") == 0
    box = page.get_by_role("textbox", name=re.compile("Code editor: your scale_tree in Python"))
    starter = (FIXTURES / SCALE / "starter.py").read_text()
    assert box.input_value() == starter
    expect(page.locator(".cm-content")).to_have_count(0)
    web.shot("plain-editor")

    # A trace error, typed the way a learner types: Enter keeps the indentation (one level more after a
    # colon), Tab indents by four.
    box.fill("")
    box.press_sequentially("import jax\n\n\ndef scale_tree(tree, factor):\nif factor == 0:\n")
    page.keyboard.press("Tab")
    assert box.input_value().endswith("    if factor == 0:\n" + " " * 12)
    for _ in range(4):
        page.keyboard.press("Backspace")
    page.keyboard.type("return tree\n")
    for _ in range(4):
        page.keyboard.press("Backspace")
    page.keyboard.type("return jax.tree.map(lambda leaf: leaf * factor, tree)")
    code = box.input_value()
    assert code == (
        "import jax\n\n\ndef scale_tree(tree, factor):\n    if factor == 0:\n        return tree\n"
        "    return jax.tree.map(lambda leaf: leaf * factor, tree)"
    )
    expect(page.locator("#save-state")).to_have_text("Saved in this browser")
    page.wait_for_function(
        "([key, code]) => localStorage.getItem(key) === code", arg=[f"jax-judge:code:{SCALE}", code]
    )

    # Ctrl+Enter runs from the textarea; the trace error's line is remembered for the editor.
    box.press("Control+Enter")
    first = page.locator('.case[data-case="example_1"]')
    expect(first.locator(".verdict")).to_have_text("Trace error", timeout=GRADE_TIMEOUT_MS)
    expect(first.locator(".message")).to_contain_text("line 5: `if factor == 0:`")
    expect(box).to_have_attribute("data-error-line", "5")
    expect(page.locator("#submit")).to_be_enabled()
    web.shot("plain-editor-ran")

    # "Show line 5" puts the cursor on that line; then CodeMirror arrives and carries on from there.
    first.get_by_role("button", name="Show line 5 in the editor").click()
    expect(box).to_be_focused()
    assert box.evaluate("b => b.selectionStart") == code.index("    if factor")
    assert len(held) == 1, "the page asked for the CodeMirror chunk once"
    held[0].continue_()
    expect(page.locator("body")).to_have_attribute("data-editor", "codemirror")
    assert page.evaluate("performance.getEntriesByName('judge:editor').length") == 1
    expect(page.locator("#code")).to_have_count(0)
    assert editor_text(page) == code
    content = page.get_by_role("textbox", name=re.compile("Code editor: your scale_tree in Python"))
    expect(content).to_be_focused()
    expect(page.locator(".cm-line.cm-error-line")).to_have_text("    if factor == 0:")
    page.keyboard.type("#")  # the cursor came along: at the start of line 5
    expect(page.locator(".cm-content .cm-line").nth(4)).to_have_text("#    if factor == 0:")
    expect(page.locator(".cm-error-line")).to_have_count(0)  # an edit clears the mark, as before
    expect(page.locator("#submit")).to_be_disabled()  # and the last Run is stale
    web.shot("codemirror-took-over")


def test_without_script_the_statement_and_the_starter_code_are_there(
    browser: Browser, artifacts: Path, server: JudgeServer, request: pytest.FixtureRequest
) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/problems/{SCALE}")
        expect(page.get_by_role("heading", name="Scale a Tree", level=1)).to_be_visible()
        expect(page.locator("#statement math").first).to_be_attached()
        expect(page.locator("#statement")).to_contain_text("Every entry is multiplied by 3")
        expect(page.locator("#hint-list li:visible")).to_have_count(0)
        box = page.get_by_role("textbox", name=re.compile("Code editor"))
        assert box.input_value() == (FIXTURES / SCALE / "starter.py").read_text()
        expect(page.locator(".run-bar .noscript")).to_contain_text("Run, Submit")
        folder = artifacts / request.node.name
        folder.mkdir(parents=True, exist_ok=True)
        print(f"screenshots: {folder}")
        page.screenshot(path=str(folder / "01-no-script.png"), full_page=True)
    finally:
        context.close()


def test_if_codemirror_cannot_load_the_plain_editor_stays_and_runs(web: Watched, server: JudgeServer) -> None:
    """The CodeMirror chunk fails (a proxy dropped it, say): the page says so and keeps working."""
    page = web.page
    page.route(f"**{editor_chunk()}", lambda route: route.abort())
    web.allow(re.escape(editor_chunk()))  # the aborted request itself, and the browser's lines about it
    web.allow(r"Failed to load resource|Failed to fetch dynamically imported module")
    page.goto(f"{server.url}/problems/{SCALE}")
    expect(page.locator("#save-state")).to_have_text("Plain editor (the code editor did not load)")
    expect(page.locator("body")).to_have_attribute("data-editor", "textarea")
    box = page.get_by_role("textbox", name=re.compile("Code editor"))
    box.fill(solution("accepted", "tree_util_map.py"))
    run(page)
    expect(page.locator("#run-results .summary")).to_contain_text("2 of 2 examples passed")
    web.shot("plain-editor-only")


# ------------------------------------------------------------------------ learner page v2 (issue 24)

#: A syntax error on line 4 (the colon is missing): the code never reaches a case.
MISSING_COLON = """\
import jax


def scale_tree(tree, factor)
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


def test_a_syntax_error_on_run_shows_the_message_and_marks_the_line(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server)
    type_code(page, MISSING_COLON.replace("factor)\n", "factor):\n"))
    # The slip a learner makes: the colon deleted with the keyboard.
    page.locator(".cm-line", has_text="def scale_tree").click()
    page.keyboard.press("End")
    page.keyboard.press("Backspace")
    assert editor_text(page).rstrip("\n") == MISSING_COLON.rstrip("\n")
    run(page)
    results = page.locator("#run-results")
    expect(results.locator(".summary .verdict")).to_have_text("Compile error")
    message = results.locator(".result-message .message")
    expect(message).to_contain_text("line 4")
    expect(message).to_contain_text("SyntaxError")
    expect(message).to_contain_text("expected ':'")
    # The line is marked in the editor, and the result has the focus and is on screen.
    expect(page.locator(".cm-line.cm-error-line")).to_have_text("def scale_tree(tree, factor)")
    expect(results).to_be_focused()
    expect(results.locator(".summary")).to_be_in_viewport()
    web.shot("run-syntax-error")
    results.get_by_role("button", name="Show line 4 in the editor").click()
    expect(page.locator(".cm-content")).to_be_focused()
    # Fixed where the button put the cursor, key by key: the mark goes and the examples run.
    page.keyboard.press("End")
    page.keyboard.type(":")
    page.keyboard.press("Control+Enter")
    expect(results.locator(".summary .verdict")).to_have_text("Accepted", timeout=GRADE_TIMEOUT_MS)
    expect(page.locator(".cm-line.cm-error-line")).to_have_count(0)


#: Returns a list where the problem's tuple (mix, gap) is expected: a structure mismatch.
LIST_NOT_TUPLE = """\
import jax


def lerp_trees(start, end, weight):
    gap = jax.tree.map(lambda a, b: b - a, start, end)
    return [jax.tree.map(lambda a, d: a + weight * d, start, gap), gap]
"""


def test_display_tuples_as_tuples_names_leaves_once_and_shows_dtypes(
    web: Watched, server: JudgeServer
) -> None:
    """A tuple output reads as a tuple, a list where it is expected is marked, a leaf's path uses the
    output's names as the judge's message does, and each output leaf shows its dtype."""
    page = open_problem(web, server, TUPLE_SLUG)
    type_code(page, (FIXTURES / TUPLE_SLUG / "solutions" / "wrong_answer" / "weight_from_end.py").read_text())
    run(page)
    card = page.locator('.case[data-case="example_1"]')
    expect(card.locator(".verdict")).to_have_text("Wrong answer (value)")
    expected = card.locator(".pane").nth(1).locator(".value")
    expect(expected).to_contain_text(re.compile(r"^\("))  # a tuple, not a JSON list
    expect(expected.locator(".dtype").first).to_have_text("float32")
    message = card.locator(".message").inner_text()
    root = message.split("[")[0].split(":")[0]
    assert root in ("mix", "gap"), message
    differs = card.locator(".differs code").inner_text()
    assert differs.startswith(root), (message, differs)  # one leaf, one name in the card
    assert "output[" not in differs
    web.shot("tuple-names")

    type_code(page, LIST_NOT_TUPLE)
    run(page)
    card = page.locator('.case[data-case="example_1"]')
    expect(card.locator(".verdict")).to_have_text("Wrong answer (structure)")
    expect(card.locator(".pane").nth(0).locator(".value")).to_contain_text(re.compile(r"^\["))
    expect(card.locator(".pane").nth(1).locator(".value")).to_contain_text(re.compile(r"^\("))
    expect(card.locator(".differs code")).to_have_text("output")
    web.shot("list-for-tuple")


def test_display_integers_as_integers_and_int_arguments_say_int32(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server, KINDS_SLUG)
    # An int32 argument's box says its leaves are int32, not the case's float dtype.
    expect(page.locator('.arg[data-arg="tokens"] .leaf-dtype')).to_have_text("leaves: int32")
    expect(page.locator('.arg[data-arg="pad_id"] .leaf-dtype')).to_have_count(0)
    type_code(page, (FIXTURES / KINDS_SLUG / "solutions" / "accepted" / "full_then_set.py").read_text())
    run(page)
    card = page.locator('.case[data-case="example_1"]')
    expect(card.locator(".verdict")).to_have_text("Accepted")
    ids = card.locator(".pane").nth(0).locator('.leaf[data-path="ids"]')
    expect(ids).not_to_contain_text(".0")
    expect(ids).to_contain_text(re.compile(r"\[\[\d+, \d+"))
    expect(card.locator(".pane").nth(0).locator('.leaf[data-path="mask"]')).to_contain_text("True")
    expect(card.locator(".pane").nth(0).locator(".dtype")).to_have_text(["int32", "bool"])
    web.shot("int-output")


def test_inputs_show_their_dtypes_and_integers_as_integers(web: Watched, catalog_server: JudgeServer) -> None:
    """lr-schedule's `step` is an int32 array and its step counts Python ints: the Input of a Run's case
    shows `55` with its dtype, not `55.0`, and a Python float as a float; its arguments in the function's
    signature order."""
    page = open_problem(web, catalog_server, "lr-schedule")
    accepted = ROOT / "problems" / "lr-schedule" / "solutions" / "accepted" / "where_two_phases.py"
    type_code(page, accepted.read_text())
    page.keyboard.press("Control+Enter")
    card = page.locator('.case[data-case="example_2"]')
    expect(card.locator(".verdict")).to_have_text("Accepted", timeout=GRADE_TIMEOUT_MS)
    card.locator("details.input summary").click()
    shown = card.locator("details.input .value")
    expect(shown).to_be_visible()
    expect(shown.locator('.leaf[data-path="step"]')).to_have_text("55")
    expect(shown).to_contain_text('"step": 55 int32')
    expect(shown).not_to_contain_text("55.0")
    expect(shown.locator('.leaf[data-path="warmup_steps"]')).to_have_text("10")
    expect(shown).to_contain_text('"total_steps": 100 int')
    expect(shown).to_contain_text('"peak_lr": 0.1 float')
    expect(shown).to_contain_text('"final_lr": 0.0 float')
    # The arguments in the signature's order, lr_schedule(step, peak_lr, final_lr, ...), not sorted.
    keys = [key.strip('"') for key in shown.locator(".key").all_text_contents()]
    assert keys == ["step", "peak_lr", "final_lr", "warmup_steps", "total_steps"], keys
    web.shot("input-dtypes")


def test_display_enough_digits_and_rejected_inputs_clear_old_results(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server)
    type_code(page, solution("accepted", "tree_util_map.py"))
    tree = page.get_by_label("tree", exact=True)
    factor = page.get_by_label("factor", exact=True)
    tree.fill('{"w": [0.00059988, 0.0006], "b": 1}')
    factor.fill("1")
    run(page)
    leaf = page.locator('.case[data-case="custom"] .pane').nth(0).locator('.leaf[data-path="w"]')
    expect(leaf).to_have_text("[0.00059988, 0.0006]")  # six decimals would show 0.0006 twice
    web.allow(r"status of 422")
    page.get_by_role("tab", name="Run").click()
    tree.fill('{"w": [[1, 2], [3]], "b": 4}')
    page.locator("#run").click()
    expect(page.locator("#arg-tree-error")).to_contain_text('tree["w"]')
    expect(page.locator("#run-results")).to_be_hidden()  # no old result under a rejected input
    web.shot("rejected-input-clears")


def test_a_function_argument_is_a_choice_of_its_options(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server, PROGRAM_SLUG)
    choice = page.get_by_label("f", exact=True)
    expect(choice.locator("option")).to_have_text(["square", "sine"])
    assert choice.evaluate("e => e.tagName") == "SELECT"
    type_code(page, (FIXTURES / PROGRAM_SLUG / "solutions" / "accepted" / "scan_over_rows.py").read_text())
    choice.focus()
    page.keyboard.press("ArrowDown")  # pick with the keyboard
    expect(choice).to_have_value("sine")
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    run(page)
    card = page.locator('.case[data-case="custom"]')
    expect(card.locator(".verdict")).to_have_text("Accepted")
    expect(card.locator("details.input")).to_contain_text('"sine"')
    web.shot("function-choice")


#: Prints 900 lines while tracing, and one unordered jax.debug.print per leaf.
MANY_PRINTS = """\
import jax


def scale_tree(tree, factor):
    for i in range(900):
        print("line", i)
    out = jax.tree.map(lambda leaf: leaf * factor, tree)
    jax.debug.print("leaf sum {s}", s=sum(x.sum() for x in jax.tree.leaves(out)))
    return out
"""


def test_prints_come_per_case_capped_in_scrolling_boxes_in_order_with_a_note_on_debug_print(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server)
    type_code(page, MANY_PRINTS)
    run(page)
    page.locator("#run-results .printed button").click()  # the Output tab
    prints = page.locator("#output .prints")
    # Per case, in the order printed: each example's trace, each example's jax.debug output, the re-trace.
    sections = prints.locator(".print-section")
    expect(sections).to_have_count(5)
    kinds = [(s.get_attribute("data-kind"), s.get_attribute("data-cases")) for s in sections.all()]
    assert kinds == [
        ("trace", "example_1"),
        ("trace", "example_2"),
        ("run", "example_1"),
        ("run", "example_2"),
        ("retrace", "example_2"),
    ]
    expect(sections.nth(0).get_by_role("heading")).to_contain_text("While tracing Example 1")
    expect(sections.nth(2).get_by_role("heading")).to_contain_text("jax.debug output of Example 1")
    expect(sections.nth(2).locator(".stdout")).to_have_text(re.compile(r"^leaf sum [\d.]+$"))
    box = sections.nth(0).locator(".stdout")
    height = box.evaluate("e => e.getBoundingClientRect().height")
    assert height <= 16 * 16 + 2, f"the print box is {height} px high"
    assert box.evaluate("e => e.scrollHeight > e.clientHeight"), "the box scrolls"
    text = box.inner_text()
    assert text.startswith("line 0\nline 1\n")  # in the order printed
    expect(sections.nth(0).locator(".print-cut")).to_have_text(
        re.compile(r"^\d+ more lines not shown here\.$")
    )
    # One jax.debug.print per case: nothing to reorder, so no note; two unordered ones get it.
    expect(prints.locator(".print-order")).to_have_count(0)
    # The box is reachable and scrollable with the keyboard.
    box.focus()
    page.keyboard.press("End")
    page.wait_for_function("() => document.querySelector('#output .stdout').scrollTop > 0")
    web.shot("prints-capped")

    type_code(page, TWO_DEBUG_PRINTS)
    run(page)
    page.locator("#run-results .printed button").click()
    runs = page.locator('#output .print-section[data-kind="run"]')
    expect(runs).to_have_count(2)
    for section in runs.all():
        expect(section.locator(".print-order")).to_contain_text("ordered=True")
        assert sorted(section.locator(".stdout").inner_text().split("\n")) == ["a", "b"]
    web.shot("prints-unordered-note")


#: Two unordered jax.debug.print calls: XLA may run them in either order.
TWO_DEBUG_PRINTS = """\
import jax


def scale_tree(tree, factor):
    jax.debug.print("a")
    jax.debug.print("b")
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


def test_custom_inputs_run_in_bfloat16_and_show_the_forgotten_cast(web: Watched, server: JudgeServer) -> None:
    """The mistake the problem is about shows before Submit: custom inputs in bfloat16, and the output
    leaf's dtype marked beside the expected one."""
    page = open_problem(web, server)
    expect(page.locator("#statement")).to_contain_text("Run on my input can give your inputs")
    dtype = page.get_by_label("Float leaves as")
    expect(dtype.locator("option")).to_have_text(["float32", "bfloat16"])
    # The function's body typed key by key (brackets close themselves; typing the closer steps over it).
    head, body = NO_CAST_BACK.split("    return ")
    type_code(page, head + "    return ")
    page.keyboard.press("Control+End")
    page.keyboard.type(body.rstrip("\n"))
    page.keyboard.press("Escape")  # a completion popup, if one is open, goes
    assert editor_text(page).rstrip("\n") == NO_CAST_BACK.rstrip("\n")
    dtype.focus()
    page.keyboard.press("ArrowDown")  # the keyboard picks bfloat16
    expect(dtype).to_have_value("bfloat16")
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    expect(page.locator("#json-rule [data-case-dtype]")).to_have_text("bfloat16")
    run(page)
    card = page.locator('.case[data-case="custom"]')
    expect(card.locator(".verdict")).to_have_text("Wrong answer (dtype)")
    expect(card.locator(".message")).to_contain_text("dtype float32, expected bfloat16")
    expect(card.locator(".pane").nth(0).locator(".dtype.diff").first).to_have_text("float32")
    expect(card.locator(".pane").nth(1).locator(".dtype").first).to_have_text("bfloat16")
    web.shot("custom-bfloat16")


def test_the_run_api_takes_only_a_dtype_the_problem_allows(server: JudgeServer) -> None:
    import urllib.error
    import urllib.request

    def post(slug: str, body: dict[str, object]) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            f"{server.url}/api/problems/{slug}/run",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as exc:
            return exc.code, json.load(exc)

    code = solution("accepted", "float32_then_cast.py")
    inputs = {"tree": {"w": [1, 2]}, "factor": 2}
    status, body = post(SCALE, {"code": code, "inputs": inputs, "dtype": "bfloat16"})
    assert status == 200 and body["verdict"] == "accepted", body
    assert body["cases"][0]["output"]["leaves"] == [{"path": ["w"], "dtype": "bfloat16"}]
    status, body = post(
        PROGRAM_SLUG, {"code": code, "inputs": {"f": "sine", "x": [[1]]}, "dtype": "bfloat16"}
    )
    assert status == 422 and "bfloat16 is not a dtype of this problem" in json.dumps(body), body
    status, body = post(SCALE, {"code": code, "dtype": "bfloat16"})
    assert status == 422 and "custom inputs only" in json.dumps(body), body
    status, body = post(SCALE, {"code": code, "inputs": inputs, "dtype": "float16"})
    assert status == 422 and "dtype" in json.dumps(body), body


def test_lr_schedule_math_has_no_leftover_tex_and_its_rows_align(web: Watched) -> None:
    """The piecewise schedule as Chromium draws the statement's MathML with the page's stylesheet: no
    literal TeX, and the rows' values and conditions each start at one x (left-aligned, as TeX sets cases)."""
    from judge.authoring.markdown import to_html
    from judge.authoring.statement import fill_statement
    from judge.core.problems import ProblemSet

    problem = ProblemSet(ROOT / "problems").get("lr-schedule")
    page = web.page
    manifest = json.loads((DIST_DIR / "manifest.json").read_text())
    style = (DIST_DIR / manifest["files"]["style.css"]).read_text()
    statement = to_html(fill_statement(problem, ""))
    page.set_content(f"<!doctype html><style>{style}</style><main><div class=prose>{statement}</div></main>")
    text = page.locator("main").inner_text()
    assert "[2ex]" not in text and "\\" not in text
    lefts = page.evaluate(
        """() => [...document.querySelectorAll('mtr')].map(
             row => [...row.children].map(cell => cell.firstElementChild.getBoundingClientRect().left))"""
    )
    assert len(lefts) == 2, lefts
    (value_1, condition_1), (value_2, condition_2) = lefts
    assert abs(value_1 - value_2) < 1 and abs(condition_1 - condition_2) < 1, (
        lefts
    )  # both columns left-aligned
    web.shot("lr-schedule-math")


def test_the_list_is_rendered_by_the_server_and_says_what_needs_javascript(
    browser: Browser, artifacts: Path, server: JudgeServer, request: pytest.FixtureRequest
) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(server.url)
        rows = page.locator(".problem-row")
        expect(rows).to_have_count(len(server.get_json("/api/problems")))
        expect(page.get_by_text("Loading the problems")).to_have_count(0)
        expect(rows.locator(".problem-link").first).to_have_attribute("href", re.compile(r"^/problems/"))
        # Suggested order: easier first.
        difficulties = rows.locator(".difficulty").all_text_contents()
        rank = {"easy": 0, "medium": 1, "hard": 2}
        assert [rank[d] for d in difficulties] == sorted(rank[d] for d in difficulties)
        expect(page.locator(".noscript")).to_contain_text("need JavaScript")
        expect(page.locator("#filters")).to_be_hidden()
        folder = artifacts / request.node.name
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / "01-list-no-script.png"), full_page=True)
    finally:
        context.close()


def test_the_list_searches_filters_counts_progress_and_suggests_the_next(
    web: Watched, server: JudgeServer
) -> None:
    page = web.page
    page.goto(server.url)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    total = len(server.get_json("/api/problems"))
    expect(page.locator("#progress")).to_contain_text(f"Solved in this browser: 0 of {total}")
    first = page.locator(".problem-row").first
    expect(page.locator("#suggested-link")).to_have_text(first.locator(".problem-link").inner_text())
    page.evaluate(
        """slug => localStorage.setItem(`jax-judge:verdict:${slug}`,
             JSON.stringify({verdict: "accepted", passed: 19, total: 19, at: 0}))""",
        first.get_attribute("data-slug"),
    )
    page.reload()
    expect(page.locator("#progress")).to_contain_text(f"Solved in this browser: 1 of {total}")
    second = page.locator(".problem-row").nth(1)
    expect(page.locator("#suggested-link")).to_have_text(second.locator(".problem-link").inner_text())
    web.shot("list-progress")

    # Typed search, with the keyboard: words match the title or a tag.
    page.get_by_label("Search").focus()
    page.keyboard.type("scale")
    visible = page.locator(".problem-row:visible")
    expect(visible).to_have_count(1)
    expect(visible.first).to_have_attribute("data-slug", SCALE)
    expect(page.locator("#match-count")).to_contain_text(f"of {total} shown")
    page.keyboard.type(" nothing-has-this")
    expect(visible).to_have_count(0)
    expect(page.locator("#no-match")).to_be_visible()
    page.get_by_label("Search").fill("")
    page.get_by_label("Tag").select_option("int32")
    expect(visible).to_have_count(1)
    expect(visible.first).to_have_attribute("data-slug", KINDS_SLUG)
    page.get_by_label("Tag").select_option("")
    page.get_by_label("not solved yet").check()
    expect(visible).to_have_count(total - 1)
    web.shot("list-filtered")


@pytest.mark.parametrize(
    ("width", "scheme"), [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]
)
def test_the_pages_follow_the_system_colour_scheme(
    browser: Browser,
    artifacts: Path,
    server: JudgeServer,
    request: pytest.FixtureRequest,
    width: int,
    scheme: Scheme,
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        watched = Watched.attach(page, artifacts / request.node.name)
        page.goto(server.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        watched.shot(f"list-{width}-{scheme}")
        page.goto(f"{server.url}/problems/{SCALE}")
        wait_for_codemirror(page)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        editor = page.evaluate("getComputedStyle(document.querySelector('.cm-editor')).backgroundColor")
        dark = {"light": False, "dark": True}[scheme]
        if editor == "rgba(0, 0, 0, 0)":  # transparent: the page's own background shows through
            editor = background
        for colour in (background, editor):
            red, green, blue = (int(n) for n in re.findall(r"\d+", colour)[:3])
            assert (red + green + blue < 150) == dark, (scheme, colour)
        assert int(page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) <= 0
        watched.shot(f"problem-{width}-{scheme}")
        assert watched.unexpected_errors() == []
    finally:
        context.close()


# ------------------------------------------------------------------------------------ accessibility (axe)

#: axe-core from web/node_modules (pinned in web/package-lock.json; scripts/build-web --deps installs it).
AXE = Path(__file__).resolve().parent.parent / "web" / "node_modules" / "axe-core" / "axe.min.js"


def axe_findings(page: Page) -> list[str]:
    """The serious and critical axe-core violations on the page, one line each (rule, impact, where)."""
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(v['nodes'][:3])}"
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_the_list_and_a_problem_page(
    browser: Browser, artifacts: Path, server: JudgeServer, request: pytest.FixtureRequest, scheme: Scheme
) -> None:
    assert AXE.is_file(), f"{AXE} is missing: scripts/build-web --deps installs web/node_modules"
    # The page's CSP admits scripts from its own origin only; axe is injected inline by the test.
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, color_scheme=scheme, bypass_csp=True
    )
    try:
        page = context.new_page()
        watched = Watched.attach(page, artifacts / request.node.name)
        page.goto(server.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        assert axe_findings(page) == []
        page.goto(f"{server.url}/problems/{SCALE}")
        wait_for_codemirror(page)
        page.get_by_role("button", name="Show hint 1 of 3").click()
        type_code(page, SHALLOW)
        run(page)  # the results too: verdicts, marked leaves, messages
        expect(page.locator('.case[data-case="example_2"] .verdict')).to_have_text("Wrong answer (value)")
        assert axe_findings(page) == []
        watched.shot(f"axe-problem-{scheme}")
        # The checker sees what it is for: a button without a name is a critical finding.
        page.evaluate("document.querySelector('main').append(document.createElement('button'))")
        assert any(finding.startswith("button-name (critical)") for finding in axe_findings(page))
        assert watched.unexpected_errors() == []
    finally:
        context.close()


def test_history_keeps_submissions_and_the_last_run_across_visits(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    expect(page.locator("#history")).to_be_hidden()
    wrong = solution("wrong_answer", "adds_factor.py")
    type_code(page, wrong)
    run(page)
    submit(page)
    expect(page.locator("#history .history-row")).to_have_count(1)
    right = solution("accepted", "tree_util_map.py")
    type_code(page, right)
    run(page)
    submit(page)
    rows = page.locator("#history .history-row")
    expect(rows).to_have_count(2)
    expect(rows.locator(".verdict")).to_have_text(["Accepted", "Wrong answer"])  # newest first

    # Reopen the problem: the verdicts, their times, and the last Run are there.
    page.goto(server.url)
    page.goto(f"{server.url}/problems/{SCALE}")
    wait_for_codemirror(page)
    page.get_by_role("tab", name=re.compile(r"^Submissions \(2\)$")).click()
    expect(rows).to_have_count(2)
    expect(rows.first.locator("time")).not_to_have_text("")
    page.get_by_role("tab", name="Results").click()
    expect(page.locator("#run-results .last-run")).to_contain_text("Your last Run")
    expect(page.locator("#run-results .summary")).to_contain_text("2 of 2 examples passed")
    web.shot("history")

    # "Open this code" puts the older submission's code in the editor (undoable).
    page.get_by_role("tab", name=re.compile("^Submissions")).click()
    rows.nth(1).get_by_role("button", name="Open this code").click()
    expect(page.locator("#save-state")).to_contain_text("Opened your submission of ")
    opened = page.locator("#save-state").inner_text()
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}", opened), opened  # its time, never its id
    assert editor_text(page).rstrip("\n") == wrong.rstrip("\n")
    page.keyboard.press("Control+z")
    assert editor_text(page).rstrip("\n") == right.rstrip("\n")


# ----------------------------------------------------------------- layout: panes, splitter, console tabs


def keys_lines(page: Page) -> int:
    """How many lines the hint under the editor (its keys) takes."""
    return int(
        page.evaluate(
            """() => {
              const keys = document.getElementById('editor-keys');
              const hints = [...keys.children].map((span) => span.getBoundingClientRect());
              const lineHeight = parseFloat(getComputedStyle(keys).lineHeight);
              const lines = new Set(hints.map((box) => Math.round(box.top)));
              return Math.max(lines.size, Math.round(keys.getBoundingClientRect().height / lineHeight));
            }"""
        )
    )


def test_statement_and_editor_side_by_side_in_panes_that_scroll_and_resize(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server)
    statement = page.locator("#statement-pane")
    solve = page.locator("#solve-pane")
    left, right = statement.bounding_box(), solve.bounding_box()
    assert left and right and left["x"] + left["width"] <= right["x"], (left, right)
    # The page itself does not scroll: each pane does, on its own.
    assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1")
    editor_top = page.locator(".cm-editor").bounding_box()["y"]  # type: ignore[index]
    statement.evaluate("e => e.scrollTo(0, e.scrollHeight)")
    expect(page.get_by_role("heading", name="Constraints")).to_be_in_viewport()
    assert page.locator(".cm-editor").bounding_box()["y"] == editor_top  # type: ignore[index]
    # The keys under the editor are one line beside a normal-width window's editor (it wrapped to two).
    for width, height in ((1366, 768), (1280, 900)):
        page.set_viewport_size({"width": width, "height": height})
        assert keys_lines(page) == 1, f"the keys line wraps at {width} px"

    # The splitter resizes the panes with the keyboard, and the width is kept.
    splitter = page.get_by_role("separator", name=re.compile("Width of the statement"))
    splitter.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(splitter).to_have_attribute("aria-valuenow", "55")
    wider = statement.bounding_box()
    assert wider and wider["width"] > left["width"] + 50
    page.reload()
    wait_for_codemirror(page)
    expect(splitter).to_have_attribute("aria-valuenow", "55")
    web.shot("panes-resized")


def settled(page: Page) -> None:
    """Wait two frames: what the page scrolls in its next frame has been scrolled."""
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def test_the_console_is_docked_under_the_editor_and_a_result_leaves_the_marked_line_in_view(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server)
    # The learner types a Python `if` on the traced factor into the starter code, key by key (the editor
    # indents the line after the colon).
    page.locator(".cm-line", has_text="return jax.tree.map").click()
    page.keyboard.press("Home")
    page.keyboard.type("if factor == 0:\n")
    assert "    if factor == 0:\n        return jax.tree.map(lambda leaf: leaf, tree)" in editor_text(page)
    page.keyboard.press("Control+Enter")
    results = page.locator("#run-results")
    expect(results.locator(".summary .verdict")).to_have_text("Trace error", timeout=GRADE_TIMEOUT_MS)
    marked = page.locator(".cm-line.cm-error-line")
    expect(marked).to_have_text("    if factor == 0:")
    expect(results).to_be_focused()
    settled(page)
    # The editor with its marked line and the new result are on screen together: only the console scrolled.
    expect(marked).to_be_in_viewport(timeout=2000)
    expect(results.locator(".summary")).to_be_in_viewport(timeout=2000)
    expect(results.locator('.case[data-case="example_1"] .message')).to_be_in_viewport(timeout=2000)
    assert page.locator("#solve-pane").evaluate("e => e.scrollTop") == 0
    editor = page.locator(".cm-editor").bounding_box()
    console = page.locator(".console-body").bounding_box()
    assert editor and console and editor["y"] + editor["height"] <= console["y"], (editor, console)
    assert console["y"] + console["height"] <= 900 + 1, console  # docked: it ends inside the window
    # The console scrolls on its own, the editor stays where it was.
    editor_top = editor["y"]
    page.locator(".console-body").evaluate("e => e.scrollTo(0, e.scrollHeight)")
    assert page.locator(".cm-editor").bounding_box()["y"] == editor_top  # type: ignore[index]
    page.locator(".console-body").evaluate("e => e.scrollTo(0, 0)")
    web.shot("docked-trace-error")


def test_the_console_has_tabs_and_a_new_result_takes_the_focus(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    tabs = page.get_by_role("tablist", name="Console").get_by_role("tab")
    expect(tabs).to_have_text(["Run", "Results", "Output", "Submissions"])
    expect(page.get_by_role("tab", name="Run")).to_have_attribute("aria-selected", "true")
    type_code(page, MANY_PRINTS.replace("range(900)", "range(3)"))
    page.keyboard.press("Control+Enter")
    results = page.locator("#run-results")
    expect(results.locator(".summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    expect(page.get_by_role("tab", name="Results")).to_have_attribute("aria-selected", "true")
    expect(results).to_be_focused()
    expect(page.locator("#panel-run")).to_be_hidden()
    # Arrow keys move between the tabs; the prints are in the Output tab.
    page.get_by_role("tab", name="Results").focus()
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Output")).to_be_focused()
    # One box per section of the output: the prints of the first trace are the first box.
    expect(page.locator("#output .stdout").first).to_contain_text("line 0\nline 1\nline 2")
    expect(results).to_be_hidden()
    web.shot("console-output")
    page.keyboard.press("Home")
    expect(page.locator("#panel-run")).to_be_visible()


# ------------------------------------------------------------------- the editor: completion, focus, reset


def test_the_editor_completes_jax_names_with_signatures(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server)
    type_code(page, "import jax.numpy as jnp\n\n\ndef f(x):\n    return ")
    page.keyboard.press("Control+End")
    page.keyboard.type("jnp.whe")
    popup = page.locator(".cm-tooltip-autocomplete")
    expect(popup).to_be_visible()
    option = popup.locator("li", has_text="where").first
    expect(option).to_contain_text("condition")  # the signature, from the locked jax
    web.shot("completion")
    expect(option).to_have_attribute("aria-selected", "true")
    page.wait_for_timeout(150)  # CodeMirror ignores Enter in the first 75 ms of a popup (no accidental pick)
    page.keyboard.press("Enter")
    expect(page.locator(".cm-content .cm-line").nth(4)).to_have_text("    return jnp.where")
    page.keyboard.type("(x > 0, x, 0)\n    y = lax.sc")
    expect(page.locator(".cm-tooltip-autocomplete li", has_text="scan").first).to_be_visible()
    page.keyboard.press("Escape")


def test_tabbing_through_the_page_leaves_the_code_alone_and_reset_offers_undo(
    web: Watched, server: JudgeServer
) -> None:
    page = open_problem(web, server)
    starter = editor_text(page)
    page.get_by_role("button", name="Reset to starter code").focus()
    page.keyboard.press("Tab")  # into the editor...
    expect(page.locator(".cm-content")).to_be_focused()
    page.keyboard.press("Tab")  # ...and on: no indent, nothing saved
    expect(page.locator(".cm-content")).not_to_be_focused()
    assert editor_text(page) == starter
    expect(page.locator("#save-state")).to_have_text("Starter code")
    page.locator(".cm-content .cm-line").first.click()  # used now: Tab indents, as in any code editor
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    assert editor_text(page).startswith("    import jax")

    type_code(page, solution("accepted", "tree_util_map.py"))
    page.get_by_role("button", name="Reset to starter code").click()
    assert editor_text(page) == starter
    page.get_by_role("button", name="Undo reset").click()
    assert editor_text(page).rstrip("\n") == solution("accepted", "tree_util_map.py").rstrip("\n")
    expect(page.get_by_role("button", name="Undo reset")).to_be_hidden()
    web.shot("reset-undone")
