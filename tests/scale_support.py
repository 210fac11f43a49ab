"""Helpers for the scale-out tests: real Redis and PostgreSQL servers, ``judge worker`` processes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.service_support import JudgeProcess

#: Short clocks for the tests: nodes beat every second, are lost after 4 s of silence, sweeps every second.
FAST_CLOCKS = {
    "JUDGE_HEARTBEAT_S": "1",
    "JUDGE_NODE_TIMEOUT_S": "4",
    "JUDGE_SWEEP_S": "1",
    "JUDGE_RATE_LIMIT": "100000/minute",
    "JUDGE_ANONYMOUS_RATE_LIMIT": "100000/minute",
    "JUDGE_LOG_LEVEL": "info",
}


class NodeProcess(JudgeProcess):
    """A real ``judge worker`` in its own session (its sandboxes too), its status server on a free port."""

    name_of_log = "worker"

    def __init__(self, data_dir: Path, concurrency: int = 1, /, **env: str) -> None:
        super().__init__(data_dir, env)
        self.concurrency = concurrency
        self.name = ""

    def argv(self) -> list[str]:
        return ["worker", "--concurrency", str(self.concurrency), "--port", "0"]

    def address(self, line: str) -> str | None:
        if "grading node " not in line or "status on " not in line:
            return None
        self.name = line.split("grading node ", 1)[1].split(":", 1)[0]
        return line.split("status on ", 1)[1].split()[0]

    def start(self, ready_timeout: float = 150.0) -> NodeProcess:
        return super().start(ready_timeout)

    def stop(self, timeout: float = 120) -> int | None:
        return super().stop(timeout)


def wait_until(condition: Any, timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(interval)
