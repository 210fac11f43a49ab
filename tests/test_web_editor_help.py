"""The editor's JAX help in a real browser (Debian's Chromium under Playwright, a real ``judge serve`` of the
repository's problems): the completion's documentation panel, hover help resolving the learner's own
imports, the same help on Ctrl+I for keyboard users, the docs index fetched once and only when first
needed, and axe-core finding nothing serious with the panel or the tooltip open, light and dark.

Also the Run panel's smaller items: "my input below" kept per problem across a reload, and an input the
problem's constraints reject (device-mesh-sharding's rows, not a multiple of its mesh's 4) shown under its
box.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, expect

from tests.test_web_page import AXE, axe_findings
from tests.webtools import JudgeServer, Watched, module_artifacts, open_problem, type_code

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web_editor_help")]

#: The service's sandbox slots for this module (busy ones are skipped).
SLOT_BASE = 820
ROOT = Path(__file__).resolve().parent.parent
#: Any problem serves for the editor; this one's starter has jax and jnp imported.
SLUG = "global-norm-clipping"

CODE = """\
import jax
import jax.numpy as jnp
import jax.random as jr


def f(key, x):
    y = jnp.minimum(x, 0)
    return jr.split(key)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve-editor-help")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        ready=False,  # nothing here runs code: a rejected input is answered before any sandbox
        problems_dir=str(ROOT / "problems"),
        sandbox_slot_base=str(SLOT_BASE),
        submission_concurrency="1",
        anonymous_rate_limit="10000/minute",
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    return module_artifacts(__name__)


def _watched(browser: Browser, folder: Path, scheme: str = "light") -> Iterator[Watched]:
    # axe is injected inline by the tests that use it; the page's CSP admits only its own scripts.
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},
        color_scheme=scheme,  # type: ignore[arg-type]
        bypass_csp=True,
    )
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
    yield from _watched(browser, artifacts / request.node.name)


def docs_requests(page: Page) -> list[Response]:
    """The responses to the docs index's URL, recorded from now on."""
    seen: list[Response] = []
    page.on("response", lambda response: seen.append(response) if "/jax-docs-" in response.url else None)
    return seen


#: The middle of the first ``word`` on editor line ``line`` (0-based), in page coordinates.
WORD_AT = """([line, word]) => {
  const element = document.querySelectorAll('.cm-content .cm-line')[line];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(word);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + word.length);
    const box = range.getBoundingClientRect();
    return {x: box.x + box.width / 2, y: box.y + box.height / 2};
  }
  return null;
}"""


def word_at(page: Page, line: int, word: str) -> tuple[float, float]:
    point = page.evaluate(WORD_AT, [line, word])
    assert point is not None, f"{word!r} is not on line {line}"
    return point["x"], point["y"]


def hover_word(page: Page, line: int, word: str) -> None:
    """Put the pointer over the middle of ``word`` on editor line ``line`` (0-based)."""
    page.mouse.move(*word_at(page, line, word))


def test_completion_panel_hover_and_keyboard_help_come_from_the_docstrings(
    web: Watched, server: JudgeServer
) -> None:
    page = web.page
    fetched = docs_requests(page)
    open_problem(web, server, SLUG)
    page.wait_for_timeout(500)
    assert fetched == [], "the docs index is fetched before any help is asked for"

    # Completion: the selected option's documentation panel, described to assistive technology.
    type_code(page, "import jax.numpy as jnp\n\n\ndef f(x):\n    return ")
    page.keyboard.press("Control+End")
    page.keyboard.type("jnp.mini")
    option = page.locator(".cm-tooltip-autocomplete li[aria-selected]")
    expect(option).to_contain_text("minimum")
    expect(option).to_contain_text("(x, y, /)")  # the cleaned signature
    panel = page.locator(".cm-completionInfo")
    expect(panel).to_contain_text("Return element-wise minimum of the input arrays.")
    expect(panel.locator(".cm-jax-doc-signature")).to_have_text("jax.numpy.minimum(x, y, /)")
    expect(panel.locator(".cm-jax-doc-params li")).to_have_text(
        ["x: input array or scalar.", re.compile(r"^y: input array or scalar\. Both `?x`? and")]
    )
    expect(panel.locator(".cm-jax-doc-source")).to_have_text(
        re.compile(r"^From the docstring of jax \d+\.\d+\.\d+\. Ctrl\+I on a name shows this\.$")
    )
    info_id = panel.get_attribute("id")
    expect(option).to_have_attribute("aria-describedby", info_id or "")
    web.shot("completion-panel")
    page.keyboard.press("Escape")

    # Hover: the learner's own aliases (jr is jax.random here).
    type_code(page, CODE)
    hover_word(page, 6, "minimum")
    tooltip = page.locator(".cm-tooltip-hover .cm-jax-doc")
    expect(tooltip).to_contain_text("Return element-wise minimum of the input arrays.")
    web.shot("hover-minimum")
    page.mouse.move(5, 5)
    expect(tooltip).to_be_hidden()
    hover_word(page, 7, "split")
    expect(tooltip.locator(".cm-jax-doc-signature")).to_have_text("jax.random.split(key, num=2)")
    expect(tooltip).to_contain_text("Splits a PRNG key into num new keys")
    web.shot("hover-split")
    page.mouse.move(5, 5)

    # Keyboard: Ctrl+I at the cursor shows the same help, named for the editor's content; Escape hides it.
    content = page.locator(".cm-content")
    page.mouse.click(*word_at(page, 6, "minimum"))
    page.mouse.move(5, 5)  # no hover tooltip: only the keyboard's
    page.keyboard.press("Control+i")
    shown = page.locator(".cm-tooltip.cm-jax-doc[role=tooltip]")  # the keyboard's: not in .cm-tooltip-hover
    expect(shown).to_contain_text("Return element-wise minimum")
    tooltip_id = shown.get_attribute("id") or ""
    expect(content).to_have_attribute("aria-describedby", tooltip_id)
    web.shot("keyboard-help")
    page.keyboard.press("Escape")
    expect(shown).to_be_hidden()
    expect(content).not_to_have_attribute("aria-describedby", tooltip_id)
    page.keyboard.press("End")  # after `jnp.minimum(x, 0)`: on no name
    page.keyboard.press("Control+i")
    expect(shown).to_have_text(re.compile(r"^Put the cursor on a JAX name \(jnp.sum, .*\) to see its doc"))
    page.keyboard.press("Escape")
    expect(shown).to_be_hidden()

    # One fetch for all of it, compressed as the other assets are.
    assert len(fetched) == 1
    assert fetched[0].status == 200
    assert fetched[0].header_value("content-encoding") == "gzip"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_with_the_help_open(
    browser: Browser, artifacts: Path, server: JudgeServer, request: pytest.FixtureRequest, scheme: str
) -> None:
    assert AXE.is_file(), f"{AXE} is missing: scripts/build-web --deps installs web/node_modules"
    for watched in _watched(browser, artifacts / request.node.name, scheme):
        page = open_problem(watched, server, SLUG)
        type_code(page, CODE + "\n\ndef g(x):\n    return ")
        page.keyboard.press("Control+End")
        page.keyboard.type("jnp.mini")
        expect(page.locator(".cm-completionInfo")).to_contain_text("element-wise minimum")
        assert axe_findings(page) == []
        watched.shot(f"panel-{scheme}")
        page.keyboard.press("Escape")
        hover_word(page, 7, "split")
        expect(page.locator(".cm-tooltip-hover .cm-jax-doc")).to_contain_text("Splits a PRNG key")
        assert axe_findings(page) == []
        watched.shot(f"hover-{scheme}")


# --------------------------------------------------------------------------------- the Run panel's inputs


def test_my_input_is_kept_per_problem_across_a_reload(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server, "device-mesh-sharding")
    x = page.get_by_label("x", exact=True)
    x.fill("[[1, 2], [3, 4], [5, 6], [7, 8]]")
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    page.reload()
    open_problem(web, server, "device-mesh-sharding")
    expect(x).to_have_value("[[1, 2], [3, 4], [5, 6], [7, 8]]")
    expect(page.get_by_role("radio", name="my input below")).to_be_checked()
    expect(page.locator("#run")).to_have_text("Run on my input")
    web.shot("input-restored")

    # Another problem keeps its own boxes; going back to the examples forgets nothing typed.
    other = open_problem(web, server, "prng-key-splitting")
    expect(other.get_by_role("radio", name="the examples")).to_be_checked()
    page = open_problem(web, server, "device-mesh-sharding")
    page.get_by_role("radio", name="the examples").check()
    page.reload()
    open_problem(web, server, "device-mesh-sharding")
    expect(page.get_by_role("radio", name="the examples")).to_be_checked()
    expect(page.get_by_label("x", exact=True)).to_have_value("[[1, 2], [3, 4], [5, 6], [7, 8]]")


def test_a_mesh_input_error_shows_under_its_box(web: Watched, server: JudgeServer) -> None:
    page = open_problem(web, server, "device-mesh-sharding")
    web.allow(r"status of 422")
    x = page.get_by_label("x", exact=True)
    status = page.locator("#status")
    # 68 rows: more than the mesh's bound (the validator names it "x rows (b)", not the argument alone).
    x.fill(json.dumps([[1.0, 2.0]] * 68))
    page.locator("#run").click()
    error = page.locator("#arg-x-error")
    expect(error).to_be_visible()
    expect(error).to_have_text("x rows (b): 68, must be at most 64")
    expect(x).to_have_attribute("aria-invalid", "true")
    assert "arg-x-error" in (x.get_attribute("aria-describedby") or "").split()
    expect(x).to_be_focused()
    expect(status).not_to_contain_text("must be at most")
    web.shot("mesh-bound-error")

    # Rows that do not split over the data axis's 4 devices, and columns over the model axis's 2.
    x.fill(json.dumps([[1.0, 2.0]] * 6))
    expect(error).to_be_hidden()
    page.locator("#run").click()
    expect(error).to_contain_text("must be a multiple of 4")
    x.fill(json.dumps([[1.0, 2.0]] * 4))
    page.get_by_label("w", exact=True).fill("[[1, 2, 3], [4, 5, 6]]")
    page.locator("#run").click()
    expect(page.locator("#arg-w-error")).to_contain_text("w: 3 columns, must be a multiple of 2")
    expect(error).to_be_hidden()
    web.shot("mesh-axis-error")
