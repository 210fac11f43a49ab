"""Helpers for the scale-out tests: real Redis and PostgreSQL servers, ``judge worker`` processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ROOT

#: Short clocks for the tests: nodes beat every second, are lost after 4 s of silence, sweeps every second.
FAST_CLOCKS = {
    "JUDGE_HEARTBEAT_S": "1",
    "JUDGE_NODE_TIMEOUT_S": "4",
    "JUDGE_SWEEP_S": "1",
    "JUDGE_RATE_LIMIT": "100000/minute",
    "JUDGE_ANONYMOUS_RATE_LIMIT": "100000/minute",
    "JUDGE_LOG_LEVEL": "info",
}


class WorkerProcess:
    """A real ``judge worker`` in its own session (its sandboxes too), its status server on a free port."""

    def __init__(self, data_dir: Path, concurrency: int = 1, **env: str) -> None:
        self.data_dir = data_dir
        self.concurrency = concurrency
        self.env = {**os.environ, "JUDGE_DATA_DIR": str(data_dir), **env}
        self.proc: Any = None
        self.url = ""
        self.name = ""
        self.log = data_dir / "worker.log"

    def start(self, ready_timeout: float = 150.0) -> WorkerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        n = 1
        while (self.data_dir / f"worker-{n}.log").exists():
            n += 1
        self.log = self.data_dir / f"worker-{n}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "judge",
                    "worker",
                    "--concurrency",
                    str(self.concurrency),
                    "--port",
                    "0",
                ],
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
                if "grading node " in line and "status on " in line:
                    self.name = line.split("grading node ", 1)[1].split(":", 1)[0]
                    self.url = line.split("status on ", 1)[1].split()[0]
            time.sleep(0.05)
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return self
            time.sleep(0.1)

    def session_processes(self) -> list[int]:
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    if os.getsid(int(entry)) == self.proc.pid:
                        pids.append(int(entry))
        return pids

    def kill(self) -> None:
        """SIGKILL the node's process only (a crash)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self, timeout: float = 120) -> int | None:
        """SIGTERM and wait (a graceful stop); then make sure nothing of its session is left."""
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


def wait_until(condition: Any, timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(interval)
