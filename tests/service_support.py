"""Helpers for the service tests: settings in a temporary data dir, a running app, a fake engine."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Self

import httpx
import pytest
from fastapi.testclient import TestClient

from judge.core.doctor import SelfTest
from judge.core.settings import Settings
from judge.service.app import create_app
from judge.service.state import GradingEngine, Services
from sandbox.backends.base import Backend
from tests.conftest import FIXTURE_SLUG, FIXTURES, ROOT, TUPLE_SLUG

#: The service's sandbox-heavy tests run in one xdist worker, one after another: each starts its own warm
#: pool, and two such batteries at once on a 2-core machine starve worker start-up in both.
HEAVY = pytest.mark.xdist_group("service")

#: The services started by these tests serve the suite's fixture problems (``tests/fixtures/problems``).
SOLUTIONS = {slug: FIXTURES / slug / "solutions" for slug in (FIXTURE_SLUG, TUPLE_SLUG)}


def solution(slug: str, verdict: str, name: str) -> str:
    return (SOLUTIONS[slug] / verdict / name).read_text()


def live_processes(pids: list[int]) -> list[int]:
    """Those of ``pids`` that still exist and are not zombies (a zombie runs nothing; its parent reaps it)."""
    live = []
    for pid in pids:
        with contextlib.suppress(OSError, IndexError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                live.append(pid)
    return live


def describe_processes(pids: list[int]) -> list[str]:
    """``pid: command line (state)`` of each process, for an assertion's message."""
    out = []
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            command, state = "(gone)", "-"
        out.append(f"{pid}: {command[:200]} ({state})")
    return out


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings for a test: its own database, generous rate limits unless overridden."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "problems_dir": FIXTURES,
        "rate_limit": "100000/minute",
        "anonymous_rate_limit": "100000/minute",
        # One test client is one client address: per-client shares as generous as the rate limits.
        "runs_per_client": 1024,
        "submissions_per_client": 100_000,
        "queue_share": 1.0,
        "streams_per_client": 100_000,
        "submission_concurrency": 1,
        "run_reserve": 1,
        "spare_workers": 0,  # fewer sandboxes on a busy test machine; the spare only adds throughput
        "shutdown_grace_s": 2.0,
        **overrides,
    }
    return Settings(**values)


def sandbox_ok(_backend: Backend) -> SelfTest:
    return SelfTest(ok=True, message="skipped: the fake engine runs no sandbox", elapsed_ms=0.0)


@contextlib.contextmanager
def running(
    settings: Settings,
    *,
    backend: Backend,
    engine: GradingEngine | None = None,
    ready_timeout: float = 300.0,
) -> Iterator[tuple[TestClient, Services]]:
    """The real app over ``Services`` (started and stopped with the app), through Starlette's TestClient."""
    if engine is None:
        services = Services.build(settings, backend=backend)
    else:
        services = Services.build(settings, backend=backend, engine=engine, sandbox_check=sandbox_ok)
    app = create_app(services=services, manage=True)
    with TestClient(app, raise_server_exceptions=False) as client:
        assert services.wait_ready(ready_timeout), services.readiness()
        yield client, services


def sse_events(text: str) -> list[tuple[str | None, str, Any]]:
    """(id, event, data) of every event in a text/event-stream body (comments skipped)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            key, _, value = line.partition(":")
            fields[key] = value[1:] if value.startswith(" ") else value
        if "event" in fields or "data" in fields:
            events.append(
                (fields.get("id"), fields.get("event", "message"), json.loads(fields.get("data", "null")))
            )
    return events


class JudgeProcess:
    """A real ``judge`` command in its own session (its sandboxes too), its logs in its data directory.

    Subclasses give the command line (``argv``) and read their address from a log line (``address``).
    Call ``stop`` in a ``finally`` that also covers ``start`` (a start that times out leaves it running)."""

    name_of_log = "judge"

    def __init__(self, data_dir: Path, env: Mapping[str, str]) -> None:
        self.data_dir = data_dir
        self.env = {**os.environ, "JUDGE_DATA_DIR": str(data_dir), "JUDGE_PROBLEMS_DIR": str(FIXTURES), **env}
        self.proc: Any = None
        self.url = ""
        self.log = data_dir / f"{self.name_of_log}.log"

    def argv(self) -> list[str]:
        raise NotImplementedError

    def address(self, line: str) -> str | None:
        """The URL a log line announces, or None."""
        raise NotImplementedError

    def start(self, ready_timeout: float = 300.0) -> Self:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        n = 1
        while (self.data_dir / f"{self.name_of_log}-{n}.log").exists():
            n += 1
        self.log = self.data_dir / f"{self.name_of_log}-{n}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "judge", *self.argv()],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                cwd=ROOT,
                env=self.env,
                start_new_session=True,
            )
        deadline = time.monotonic() + ready_timeout
        while not self.url:
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            for line in self.log.read_text().splitlines():
                self.url = self.address(line) or self.url
            time.sleep(0.05)
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return self
            time.sleep(0.1)

    def session_processes(self) -> list[int]:
        """Pids still in the process's session (its sandboxes included)."""
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    if os.getsid(int(entry)) == self.proc.pid:
                        pids.append(int(entry))
        return pids

    def kill(self) -> None:
        """SIGKILL the process only (a crash): its sandboxes must die with it."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self, timeout: float = 60) -> int | None:
        """SIGTERM and wait (a graceful stop); then make sure nothing of its session is left. The exit
        code, None when it was never started."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        return int(self.proc.returncode)


class ServeProcess(JudgeProcess):
    """A real ``judge serve`` on a free port, with its own data directory."""

    name_of_log = "serve"

    def __init__(self, data_dir: Path, **env: str) -> None:
        quiet = {
            "JUDGE_RATE_LIMIT": "100000/minute",
            "JUDGE_ANONYMOUS_RATE_LIMIT": "100000/minute",
            "JUDGE_RUNS_PER_CLIENT": "1024",
            "JUDGE_SUBMISSIONS_PER_CLIENT": "100000",
            "JUDGE_QUEUE_SHARE": "1",
            "JUDGE_STREAMS_PER_CLIENT": "100000",
            "JUDGE_LOG_LEVEL": "warning",
        }
        super().__init__(data_dir, {**quiet, **env})

    def argv(self) -> list[str]:
        return ["serve", "--port", "0"]

    def address(self, line: str) -> str | None:
        return line.split("serving on ", 1)[1].split()[0] if "serving on " in line else None
