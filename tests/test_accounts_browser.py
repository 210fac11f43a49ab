"""Learner accounts in a real browser (Debian's Chromium under Playwright) against a real ``judge serve``
with ``JUDGE_ACCOUNTS`` on: progress follows the learner from one browser context to another that shares
no storage with it; a browser's anonymous progress is offered for import; the account pages pass axe-core;
and with the setting off there is no account route and no sign-in link.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.test_web_page import AXE, axe_findings
from tests.webtools import JudgeServer, Watched, module_artifacts, wait_for_codemirror

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

SCALE = FIXTURE_SLUG
SOLUTIONS = FIXTURES / SCALE / "solutions"
GRADE_TIMEOUT_MS = 120_000
PASSWORD = "a long enough password"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web-accounts")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve-accounts")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        accounts="true",
        submission_concurrency="1",
        anonymous_rate_limit="10000/minute",
        signin_rate_limit="1000/minute",
        sandbox_slot_base="820",
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    return module_artifacts(__name__)


class Contexts:
    """Fresh browser contexts (no shared cookies or storage), each page watched for errors."""

    def __init__(self, browser: Browser, folder: Path) -> None:
        self.browser = browser
        self.folder = folder
        self.opened: list[tuple[BrowserContext, Watched]] = []

    def new(self, label: str, **options: object) -> Watched:
        context = self.browser.new_context(viewport={"width": 1280, "height": 900}, **options)  # type: ignore[arg-type]
        context.set_default_timeout(30_000)
        watched = Watched.attach(context.new_page(), self.folder / label)
        self.opened.append((context, watched))
        return watched


@pytest.fixture
def contexts(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Contexts]:
    made = Contexts(browser, artifacts / request.node.name)
    print(f"screenshots: {made.folder}")
    try:
        yield made
        for _, watched in made.opened:
            assert watched.unexpected_errors() == [], "a page reported errors"
    finally:
        for context, _ in made.opened:
            context.close()


def type_code(page: Page, code: str, where: str = "your account") -> None:
    """Replace the editor's text as a paste would; signed in, until the judge has taken the save."""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    if where == "your account":
        with page.expect_response(lambda r: "/account/code/" in r.url and r.request.method == "PUT") as saved:
            page.keyboard.insert_text(code)
        assert saved.value.ok, saved.value.status
    else:
        page.keyboard.insert_text(code)
    expect(page.locator("#save-state")).to_have_text(f"Saved in {where}")


def editor_text(page: Page) -> str:
    lines = page.locator(".cm-content .cm-line").all_text_contents()
    return "\n".join(line.replace("\u200b", "") for line in lines)


def sign_up(page: Page, server: JudgeServer, name: str) -> None:
    page.goto(server.url)
    page.get_by_role("link", name="Sign in").click()
    page.get_by_role("link", name="Create one").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create the account").click()
    expect(page.locator(".topbar .account-link")).to_have_text(name)


def sign_in(page: Page, server: JudgeServer, name: str, start: str = "/") -> None:
    page.goto(f"{server.url}{start}")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    if start.startswith("/problems/"):
        wait_for_codemirror(page)  # leaving earlier would abort the editor's load
    page.get_by_role("link", name="Sign in").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".topbar .account-link")).to_have_text(name)


def test_progress_follows_the_learner_to_another_browser(contexts: Contexts, server: JudgeServer) -> None:
    first = contexts.new("a")
    page = first.page
    sign_up(page, server, "ada")
    page.goto(f"{server.url}/problems/{SCALE}")
    wait_for_codemirror(page)
    type_code(page, (SOLUTIONS / "accepted" / "float32_then_cast.py").read_text())
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    page.locator("#submit").click()
    summary = page.locator("#submission .summary")
    expect(summary).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    expect(summary.locator(".verdict")).to_have_text("Accepted")
    left = "# left in the editor by browser A\n" + (SOLUTIONS / "accepted" / "tree_util_map.py").read_text()
    type_code(page, left)
    first.shot("a-solved-and-typed")
    # Browser A keeps nothing of the account in its anonymous storage.
    kept = page.evaluate("() => Object.keys(localStorage)")
    assert [k for k in kept if re.match(r"jax-judge:(code|verdict|submissions):", k)] == []

    second = contexts.new("b")  # a fresh context: no cookie, no local storage
    other = second.page
    other.goto(server.url)
    expect(other.locator(f'.problem-row[data-slug="{SCALE}"] .last-verdict .verdict')).to_have_count(0)
    sign_in(other, server, "ada")
    row = other.locator(f'.problem-row[data-slug="{SCALE}"]')
    expect(row.locator(".last-verdict .verdict")).to_have_text("Accepted")
    expect(other.locator("#solved-count")).to_have_text("1")
    expect(other.locator("#progress")).to_contain_text("Solved in your account")
    second.shot("b-list")
    other.goto(f"{server.url}/problems/{SCALE}")
    wait_for_codemirror(other)
    assert editor_text(other).rstrip("\n") == left.rstrip("\n")
    expect(other.locator("#save-state")).to_have_text("Restored from your account")
    other.get_by_role("tab", name=re.compile(r"^Submissions \(1\)$")).click()
    expect(other.locator("#history .history-row .verdict")).to_have_text(["Accepted"])
    second.shot("b-problem")

    # Signing out leaves nothing of the account in browser B, and the page is anonymous again.
    other.get_by_role("button", name="Sign out").click()
    expect(other.locator(".topbar .account-link")).to_have_text("Sign in")
    copies = other.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('jax-judge:@'))")
    assert copies == []
    expect(other.locator(f'.problem-row[data-slug="{SCALE}"] .last-verdict .verdict')).to_have_count(0)


def test_a_browsers_anonymous_progress_is_offered_for_import(contexts: Contexts, server: JudgeServer) -> None:
    watched = contexts.new("import")
    page = watched.page
    page.goto(f"{server.url}/problems/{SCALE}")
    wait_for_codemirror(page)
    mine = "# typed before signing up\n" + (SOLUTIONS / "accepted" / "tree_util_map.py").read_text()
    type_code(page, mine, "this browser")
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    page.locator("#submit").click()
    expect(page.locator("#submission .summary .verdict")).to_have_text("Accepted", timeout=GRADE_TIMEOUT_MS)
    sign_up(page, server, "bea")
    offer = page.locator("#import-offer")
    expect(offer).to_contain_text("1 problem, 1 submission")
    watched.shot("offer")
    offer.get_by_role("button", name="Add it to my account").click()
    expect(page.locator("#import-offer")).to_have_count(0)
    expect(page.locator(f'.problem-row[data-slug="{SCALE}"] .last-verdict .verdict')).to_have_text("Accepted")
    # Another browser sees the imported code and submission.
    other = contexts.new("import-other").page
    sign_in(other, server, "bea", f"/problems/{SCALE}")
    wait_for_codemirror(other)
    assert editor_text(other).rstrip("\n") == mine.rstrip("\n")
    expect(other.get_by_role("tab", name=re.compile(r"^Submissions \(1\)$"))).to_be_visible()
    # The offer is not made again in the browser that took it.
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#import-offer")).to_have_count(0)


def test_run_and_submit_save_the_code_before_they_send_it(contexts: Contexts, server: JudgeServer) -> None:
    page = contexts.new("save-on-run").page
    sign_up(page, server, "dee")
    page.goto(f"{server.url}/problems/{SCALE}")
    wait_for_codemirror(page)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(f"{r.method} {r.url.split('/', 3)[-1]}"))
    code = (SOLUTIONS / "accepted" / "float32_then_cast.py").read_text()
    page.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)
    page.keyboard.press("Control+Enter")  # at once: the save delay has not run out
    expect(page.locator("#run-results .summary")).to_be_visible(timeout=GRADE_TIMEOUT_MS)
    saves = [i for i, line in enumerate(sent) if line.startswith("PUT account/code/")]
    runs = [i for i, line in enumerate(sent) if line.endswith("/run/events")]
    assert saves and runs and saves[0] < runs[0], sent
    other = contexts.new("save-on-run-other").page
    sign_in(other, server, "dee", f"/problems/{SCALE}")
    wait_for_codemirror(other)
    assert editor_text(other).rstrip("\n") == code.rstrip("\n")


def test_sign_in_errors_are_tied_to_their_fields(contexts: Contexts, server: JudgeServer) -> None:
    watched = contexts.new("errors")
    watched.allow(r"status of (400|401)")  # the refused forms' answers
    page = watched.page
    page.goto(f"{server.url}/account/signup")
    page.get_by_label("Name").fill("cyd")
    page.get_by_label("Password").fill("short")
    page.get_by_role("button", name="Create the account").click()
    password = page.get_by_label("Password")
    expect(password).to_have_attribute("aria-invalid", "true")
    expect(password).to_have_accessible_description(re.compile("at least 10 characters"))
    page.goto(f"{server.url}/account/signin")
    page.get_by_label("Name").fill("nobody-at-all")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong name or password.")
    expect(page.get_by_label("Name")).to_have_accessible_description("Wrong name or password.")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_the_account_pages(
    contexts: Contexts, server: JudgeServer, scheme: str
) -> None:
    assert AXE.is_file(), f"{AXE} is missing: scripts/build-web --deps installs web/node_modules"
    watched = contexts.new(f"axe-{scheme}", color_scheme=scheme, bypass_csp=True)
    watched.allow(r"status of (400|401)")  # the refused forms' answers
    page = watched.page
    page.goto(f"{server.url}/account/signin")
    assert axe_findings(page) == []
    page.get_by_label("Name").fill("x")
    page.get_by_role("button", name="Sign in").click()  # an error beside a field
    expect(page.locator("#password-error")).to_have_text("Enter your password.")
    assert axe_findings(page) == []
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()  # an error about the whole form
    expect(page.get_by_role("alert")).to_have_text("Wrong name or password.")
    assert axe_findings(page) == []
    page.goto(f"{server.url}/account/signup")
    page.get_by_label("Name").fill("a b")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create the account").click()
    expect(page.locator("#name-error")).to_be_visible()
    assert axe_findings(page) == []
    watched.shot("signup-error")
    page.evaluate("() => localStorage.setItem('jax-judge:code:scale-tree', '# anonymous')")
    sign_up(page, server, f"axe-{scheme}")
    expect(page.locator("#import-offer")).to_be_visible()  # the list with the import offer
    assert axe_findings(page) == []
    page.goto(f"{server.url}/problems/{SCALE}")
    wait_for_codemirror(page)
    assert axe_findings(page) == []
    page.goto(f"{server.url}/account")
    assert axe_findings(page) == []
    watched.shot("account")


def test_with_accounts_off_there_is_no_route_and_no_link(
    contexts: Contexts, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("judge-serve-no-accounts")
    off = JudgeServer.start(folder / "data", folder / "serve.log", ready=False, sandbox_slot_base="840")
    try:
        for path in ("/account", "/account/signin", "/account/signup"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"{off.url}{path}", timeout=30)
            assert refused.value.code == 404, path
        page = contexts.new("off").page
        page.goto(off.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        expect(page.get_by_role("link", name="Sign in")).to_have_count(0)
        expect(page.locator(".topbar nav a")).to_have_text(["Problems", "REST API"])
        assert page.context.cookies() == []
    finally:
        off.stop()
