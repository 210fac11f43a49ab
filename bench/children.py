"""What the side-by-side benches (``bench_checkouts.py``, ``bench_integrity.py``) share: a child process
answering one JSON line per request, a burst of submissions from several threads, and the floor's
environment (the sandbox's XLA flags in the driver's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class Child:
    """A child process answering one JSON line per request (``wait_ready`` reads its first, ``ready``)."""

    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
        )
        self.facts: dict[str, Any] = {}

    def wait_ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        facts = json.loads(line) if line else {}
        if not facts.get("ready"):
            raise SystemExit(f"{self.name}: the child did not start: {facts.get('error', 'it died')}")
        self.facts = facts

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: the child died")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise SystemExit(f"{self.name}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def burst(count: int, concurrency: int, once: Callable[[bool], float]) -> float:
    """Submissions per second when ``concurrency`` threads share ``count`` Submits (``once(False)``); the
    first failing Submit ends the burst with a RuntimeError (a rate of the rest would mean nothing)."""
    left = [count]
    lock = threading.Lock()
    failures: list[str] = []

    def worker() -> None:
        while True:
            with lock:
                if left[0] == 0 or failures:
                    return
                left[0] -= 1
            try:
                once(False)
            except (Exception, SystemExit) as exc:
                failures.append(f"{type(exc).__name__}: {exc}")

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"a Submit of the burst failed: {failures[0]}")
    return count / (time.perf_counter() - started)


def floor_env() -> dict[str, str]:
    """The driver's environment with the sandbox's XLA flags (and platform, x64, logging) in place."""
    sys.path.insert(0, str(ROOT))
    from sandbox.command import EXECUTOR, program_env

    sandboxed = program_env(str(ROOT), module=EXECUTOR)
    env = dict(os.environ)
    for key in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_ENABLE_X64", "TF_CPP_MIN_LOG_LEVEL"):
        env[key] = sandboxed[key]
    return env
