"""What the browser tests stand on: a real ``judge serve``, Debian's Chromium under Playwright, and a page
that records its console and saves screenshots.

- ``JudgeServer.start(data_dir, log)``: ``judge serve --port 0`` in its own session (real sandbox, real
  engine, SQLite under ``data_dir``), its URL read from what it prints, ready once ``/readyz`` says so;
  ``stop()`` sends SIGTERM, then SIGKILL to the whole group if it lingers.
- ``launch_browser(playwright)``: the system Chromium (no browser download), headless, no network chatter.
- ``Watched``: a page whose console errors, uncaught exceptions and failed requests are collected, so a
  test can require that there were none; ``shot(label)`` saves a numbered full-page screenshot.
- ``module_artifacts(__name__)``: a module's own screenshot folder, emptied when the module starts.
- ``open_problem(web, server, slug)``, ``wait_for_codemirror(page)``, ``type_code(page, code)``: a problem
  page opened until usable, and its editor's text replaced as a paste would.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, Request, expect

from judge.service.schemas import ProblemDetail, ProblemSummary
from judge.web import mount

ROOT = Path(__file__).resolve().parent.parent
#: The problems the pages serve: the suite's fixture problems (``tests.conftest.FIXTURES``).
FIXTURES = ROOT / "tests" / "fixtures" / "problems"
CHROMIUM = Path(os.environ.get("JUDGE_TEST_CHROMIUM", "/usr/bin/chromium"))
#: Where screenshots go (gitignored); JUDGE_TEST_ARTIFACTS moves it.
ARTIFACTS = Path(os.environ.get("JUDGE_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "web"
CHROMIUM_ARGS = [
    "--no-sandbox",  # root cannot use Chromium's own sandbox
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
#: Seconds a server may take to bind, warm its sandbox workers and pass the self-test.
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0
_URL_LINE = re.compile(r"judge: serving on (http://\S+)")


class ServerFailed(RuntimeError):
    pass


@dataclass
class JudgeServer:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    @classmethod
    def start(cls, data_dir: Path, log: Path, *, ready: bool = True, **settings: str) -> JudgeServer:
        """Start ``judge serve`` on a free loopback port and wait until it is ready to grade (with
        ``ready=False`` only until it answers: its sandbox workers may still be warming up)."""
        env = {
            **os.environ,
            "JUDGE_DATA_DIR": str(data_dir),
            "JUDGE_PROBLEMS_DIR": str(FIXTURES),  # the suite's fixture problems
            "JUDGE_HOST": "127.0.0.1",
            "JUDGE_PORT": "0",
            **{f"JUDGE_{k.upper()}": v for k, v in settings.items()},
        }
        judge = Path(sys.executable).with_name("judge")
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [str(judge), "serve"],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = cls(process, "", log)
        try:
            server.url = server._wait_for_url()
            if ready:
                server._wait_ready()
            else:
                server._wait_listening()
        except BaseException:
            server.stop()
            raise
        return server

    def _fail(self, what: str) -> ServerFailed:
        tail = self.log.read_text(errors="replace")[-3000:]
        return ServerFailed(f"judge serve {what} (log {self.log}):\n{tail}")

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            match = _URL_LINE.search(self.log.read_text(errors="replace"))
            if match:
                return match.group(1)
            if self.process.poll() is not None:
                raise self._fail(f"exited with {self.process.returncode} before listening")
            time.sleep(0.1)
        raise self._fail("printed no URL")

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self._fail(f"exited with {self.process.returncode} while starting")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=5):
                    return
            except urllib.error.HTTPError:
                return  # it answers, whatever it says
            except OSError:
                time.sleep(0.1)
        raise self._fail(f"did not answer in {START_TIMEOUT_S:.0f} s")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        reason = "no answer"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self._fail(f"exited with {self.process.returncode} while starting")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=5) as response:
                    if response.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                reason = exc.read().decode(errors="replace")
            except OSError as exc:
                reason = str(exc)
            time.sleep(0.2)
        raise self._fail(f"was not ready in {START_TIMEOUT_S:.0f} s ({reason})")

    def stop(self) -> None:
        """SIGTERM the server's session (it stops its workers), then SIGKILL whatever is left."""
        if self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(STOP_TIMEOUT_S)
        _signal_group(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def get_json(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=30) as response:
            return json.load(response)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def module_artifacts(module: str) -> Path:
    """The screenshot folder of one test module (``ARTIFACTS/<module>``), emptied for this run: each module
    clears only its own shots, so the shots of the modules that ran before it stay."""
    folder = ARTIFACTS / module.rsplit(".", 1)[-1]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def launch_browser(playwright: Playwright) -> Browser:
    """Debian's Chromium through Playwright's own driver; fails with the fix when it is missing."""
    if not CHROMIUM.is_file():
        raise RuntimeError(f"{CHROMIUM} is missing: scripts/setup --test installs Debian's chromium")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


@dataclass
class Watched:
    """A page, what went wrong in it, and its screenshots (``folder/NN-label.png``)."""

    page: Page
    folder: Path
    errors: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)
    _shots: int = 0

    @classmethod
    def attach(cls, page: Page, folder: Path) -> Watched:
        watched = cls(page, folder)
        page.on("console", watched._console)
        page.on("pageerror", lambda error: watched.errors.append(f"uncaught: {error}"))
        page.on("requestfailed", watched._request_failed)
        return watched

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "assert"):
            self.errors.append(f"console {message.type}: {message.text}")

    def _request_failed(self, request: Request) -> None:
        # Closing an EventSource once the final event arrived aborts its response: that is the page's
        # own doing, not a failure.
        if request.resource_type == "eventsource" and request.failure == "net::ERR_ABORTED":
            return
        # The same for a Run's event stream, which the page reads from a fetch (a POST): Chromium reports
        # its end, and a cancel's abort, as aborted.
        if request.url.endswith("/run/events") and request.failure == "net::ERR_ABORTED":
            return
        self.errors.append(f"request failed: {request.method} {request.url} ({request.failure})")

    def allow(self, pattern: str) -> None:
        """Expect console errors matching ``pattern`` (e.g. the browser's own line for an intended 422)."""
        self.allowed.append(re.compile(pattern))

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]

    def shot(self, label: str) -> Path:
        self._shots += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self._shots:02d}-{label}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def open_problem(web: Watched, server: JudgeServer, slug: str) -> Page:
    """Open a problem and wait until it is usable and CodeMirror has taken over the textarea."""
    page = web.page
    page.goto(f"{server.url}/problems/{slug}")
    wait_for_codemirror(page)
    return page


def wait_for_codemirror(page: Page) -> None:
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("body")).to_have_attribute("data-editor", "codemirror")


def type_code(page: Page, code: str) -> None:
    """Replace the editor's text as a paste would (no auto-indent or completion on the way)."""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)
    expect(page.locator("#save-state")).to_have_text("Saved in this browser")


def page_of(body: ProblemDetail) -> str:
    """The problem page of ``body`` rendered from it (by a catalog that answers it for any slug)."""

    class Bodies:
        def summaries(self) -> list[ProblemSummary]:
            return [ProblemSummary.model_validate(body.model_dump(include=set(ProblemSummary.model_fields)))]

        def detail(self, slug: str) -> ProblemDetail:
            return body

        def visible(self, slug: str, tenant: str | None) -> bool:
            return True

    app = FastAPI()
    mount(app, lambda: Bodies())
    text: str = TestClient(app).get(f"/problems/{body.slug}").text
    return text
