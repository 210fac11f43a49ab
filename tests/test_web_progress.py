"""Slow work is not silent: a Run shows its phase as the judge reports it, can be cancelled (the judge stops
the sandbox work and replaces its workers), and says when the judge is still warming up.

The browser half drives Debian's Chromium against a real ``judge serve`` (its own sandbox slots); the
warm-up half runs the engine's wait on a pool that reports it is starting.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from judge.core.engine import Engine
from judge.core.progress import RunProgress, WarmupProgress
from sandbox.errors import Cancelled
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.webtools import JudgeServer, Watched, module_artifacts, type_code

#: ``browser``: Debian's Chromium, one per module (tests/browsers.py).
pytest_plugins = ("tests.browsers",)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("web_progress")]

#: The service's sandbox slots for this module (the page's tests own 740..779).
SLOT_BASE = 740
GRADE_TIMEOUT_MS = 120_000

#: Sleeps while it is traced: the Run stays in its tracing phase long enough to be seen and cancelled.
SLOW_TRACE = """\
import time

import jax


def scale_tree(tree, factor):
    time.sleep(8)
    return jax.tree.map(lambda leaf: leaf * factor, tree)
"""


#: The warm-up line: "The judge is still warming up: 2 sandbox workers starting (3 s so far). Your Run ..."
WARMING_UP = re.compile(
    r"The judge is still warming up(: \d+ sandbox workers? (starting(, \d+ more waiting their turn)?"
    r"|waiting their turn to start)( behind \d+ starts? of other judges on this machine)?"
    r"|, starting its sandbox)( \(\d+ s so far\))?\. "
    r"Your Run starts as soon as it is ready(, in about \d+ s)?\."
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JudgeServer]:
    folder = tmp_path_factory.mktemp("judge-serve-progress")
    started = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        submission_concurrency="1",
        sandbox_slot_base=str(SLOT_BASE),
        anonymous_rate_limit="10000/minute",
    )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def artifacts() -> Path:
    """This module's screenshot folder (``test-artifacts/web/test_web_progress``), emptied for this run."""
    return module_artifacts(__name__)


@pytest.fixture
def web(browser: Browser, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    watched = Watched.attach(context.new_page(), artifacts / request.node.name)
    try:
        yield watched
        assert watched.unexpected_errors() == [], "the page reported errors"
    finally:
        context.close()


def test_a_run_shows_its_phase_and_cancel_stops_it(web: Watched, server: JudgeServer) -> None:
    page = web.page
    page.goto(f"{server.url}/problems/{FIXTURE_SLUG}")
    expect(page.locator("body")).to_have_attribute("data-editor", "codemirror")
    type_code(web.page, SLOW_TRACE)
    page.keyboard.press("Control+Enter")  # Run, from the keyboard
    phase = page.locator("#run-phase")
    expect(phase).to_have_attribute("data-phase", "tracing", timeout=GRADE_TIMEOUT_MS)
    expect(phase).to_have_text(re.compile(r"^Tracing 1 of \d+…$"))
    web.shot("run-phase-tracing")
    cancel = page.get_by_role("button", name="Cancel Run")
    expect(cancel).to_be_visible()
    web.allow(r"run/events \(net::ERR_ABORTED\)")  # the page's own abort of the cancelled Run
    cancel.focus()
    clicked = time.monotonic()
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("Run cancelled: the judge stopped it.")
    assert time.monotonic() - clicked < 3.0
    expect(cancel).to_be_hidden()
    expect(phase).to_be_hidden()
    expect(page.locator("#run")).to_be_focused()  # the focus is not lost with the hidden button
    web.shot("run-cancelled")

    # The judge stopped the cancelled trace and replaced its workers: a Run now answers at once, well
    # before the cancelled one's 8 s sleep could have ended, with the phases it went through.
    solution = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted").glob("*.py")
    type_code(web.page, next(iter(sorted(solution))).read_text())
    seen: list[tuple[str, str]] = []
    page.expose_function("notePhase", lambda phase, text: seen.append((phase, text)))
    page.evaluate(
        """() => new MutationObserver(() => {
             const node = document.getElementById('run-phase');
             if (!node.hidden) window.notePhase(node.dataset.phase, node.textContent);
           }).observe(document.getElementById('run-phase'), {attributes: true, childList: true})"""
    )
    again = time.monotonic()
    page.locator("#run").click()
    expect(page.locator("#run-results .summary")).to_contain_text("Accepted", timeout=GRADE_TIMEOUT_MS)
    answered = time.monotonic() - again
    # Had the cancelled trace slept on, this Run would have waited for its 8 s sleep to end.
    assert answered < 6.0, f"the Run after a cancel took {answered:.1f} s"
    phases = [phase for phase, _ in seen]
    assert "running" in phases or "compiling" in phases, seen
    for shown, text in seen:  # each phase in words, with its count: "Compiling 1 of 1…"
        if shown == "compiling":
            assert re.fullmatch(r"Compiling \d+ of \d+…", text), text
        if shown == "running":
            assert re.fullmatch(r"Running case \d+ of \d+…", text), text
    web.shot("run-after-cancel")


def test_a_run_says_the_judge_is_still_warming_up(
    web: Watched, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A judge that has just started (its sandbox workers still warming up) takes a Run: the page says it
    is warming up, and the Run can be cancelled while it waits."""
    folder = tmp_path_factory.mktemp("judge-serve-cold")
    cold = JudgeServer.start(
        folder / "data",
        folder / "serve.log",
        ready=False,
        submission_concurrency="1",
        sandbox_slot_base=str(SLOT_BASE + 20),
        anonymous_rate_limit="10000/minute",
    )
    try:
        page = web.page
        page.goto(f"{cold.url}/problems/{FIXTURE_SLUG}")
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        seen: list[str] = []
        page.expose_function("noteWaiting", lambda text: seen.append(text))
        page.evaluate(
            """() => new MutationObserver(() => {
                 const node = document.getElementById('run-phase');
                 if (!node.hidden && node.dataset.phase === 'waiting') window.noteWaiting(node.textContent);
               }).observe(document.getElementById('run-phase'), {attributes: true, childList: true})"""
        )
        page.locator("#run").click()
        phase = page.locator("#run-phase")
        expect(phase).to_have_attribute("data-phase", "waiting", timeout=GRADE_TIMEOUT_MS)
        # A sentence a learner reads (what is starting, for how long), not the pools' status string.
        expect(phase).to_have_text(WARMING_UP)
        expect(phase).not_to_contain_text(re.compile("tracers|executors|secrets|warm sandbox"))
        # Worded from the event's warmup fields (web/src/phase.js reads no status string): while the
        # workers start, the line counts them.
        expect(phase).to_contain_text(re.compile(r"\d+ sandbox workers? (starting|waiting their turn)"))
        raw = re.compile("tracers|executors|secrets|warm sandbox|Error")
        assert seen and not any(raw.search(text) for text in seen), seen
        expect(page.locator("#run")).to_have_attribute("aria-busy", "true")
        web.shot("run-warming-up")
        web.allow(r"run/events \(net::ERR_ABORTED\)")
        page.get_by_role("button", name="Cancel Run").click()
        expect(page.locator("#status")).to_have_text("Run cancelled: the judge stopped it.")
        expect(phase).to_be_hidden()
    finally:
        cold.stop()


def test_the_stream_names_each_phase_then_the_result(server: JudgeServer) -> None:
    import json
    import urllib.request

    code = next(iter(sorted((FIXTURES / FIXTURE_SLUG / "solutions" / "accepted").glob("*.py")))).read_text()
    request = urllib.request.Request(
        f"{server.url}/api/v1/problems/{FIXTURE_SLUG}/run/events",
        data=json.dumps({"code": code}).encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        text = response.read().decode()
    events = re.findall(r"event: (\w+)\r?\ndata: (.*)\r?\n", text)
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "result" and kinds.count("result") == 1
    phases = [json.loads(data)["phase"] for kind, data in events if kind == "progress"]
    assert "running" in phases and phases.index("loading") < phases.index("running"), phases
    result = json.loads(events[-1][1])["result"]
    assert result["verdict"] == "accepted"
    # A bad input is the same 422 as POST .../run, before any stream.
    bad = urllib.request.Request(
        f"{server.url}/api/v1/problems/{FIXTURE_SLUG}/run/events",
        data=json.dumps({"code": code, "inputs": {"tree": "nope"}}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bad, timeout=30)
    assert refused.value.code == 422


class _Starting(Engine):
    """An engine whose pool is still starting for a while (no sandbox: only the wait is tested)."""

    def __init__(self, ready_after_s: float) -> None:
        self.ready_at = time.monotonic() + ready_after_s

    def quiet_s(self) -> float:
        return 0.0  # its starts progress

    def warming(self) -> RunProgress | None:
        left = self.ready_at - time.monotonic()
        if left <= 0:
            return None
        return RunProgress(
            phase="waiting", detail="tracers: 2 starts under way for 3 s", warmup=WarmupProgress(starting=2)
        )


def test_a_run_says_the_judge_is_warming_up_and_can_stop_waiting() -> None:
    told: list[RunProgress] = []
    _Starting(1.0)._wait_warm(told.append, threading.Event())
    assert [p.phase for p in told] == ["waiting"]
    assert told[0].detail == "tracers: 2 starts under way for 3 s"
    assert told[0].warmup == WarmupProgress(starting=2, waited_s=0)

    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        _Starting(30.0)._wait_warm(told.append, cancel)
    assert time.monotonic() - started < 2.0
