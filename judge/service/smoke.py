"""The smoke run (``scripts/run --smoke``; CI calls it): start ``judge serve`` on a free port with a
throw-away data directory, wait for ``/readyz``, Run one shipped accepted solution through
``POST /api/problems/{slug}/run``, stop the service with SIGTERM, and exit 0 only if all of that worked.

    python -m judge.service.smoke [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from judge.core.problems import ProblemSet


def _say(message: str) -> None:
    print(f"smoke: {message}", file=sys.stderr, flush=True)


def _example() -> tuple[str, str]:
    """(slug, code) of the first problem that ships an accepted solution."""
    for problem in ProblemSet():
        for folder, file in problem.solutions():
            if folder == "accepted":
                return problem.slug, file.read_text()
    raise SystemExit("smoke: no problem ships an accepted solution")


def _url(log: Path, proc: subprocess.Popen[bytes], deadline: float) -> str:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"judge serve exited with code {proc.returncode}")
        for line in log.read_text(errors="replace").splitlines():
            if "serving on " in line:
                return line.split("serving on ", 1)[1].split()[0]
        time.sleep(0.1)
    raise RuntimeError("judge serve did not print its URL in time")


def _ready(url: str, proc: subprocess.Popen[bytes], deadline: float) -> None:
    reason = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"judge serve exited with code {proc.returncode}")
        try:
            response = httpx.get(f"{url}/readyz", timeout=5)
            if response.status_code == 200:
                return
            reason = response.json().get("reason") or reason
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"not ready in time: {reason}")


def smoke(timeout: float) -> int:
    slug, code = _example()
    with tempfile.TemporaryDirectory(prefix="judge-smoke-") as scratch:
        log = Path(scratch) / "serve.log"
        env = {**os.environ, "JUDGE_DATA_DIR": scratch, "JUDGE_LOG_LEVEL": "warning"}
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "judge", "serve", "--host", "127.0.0.1", "--port", "0"],
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        try:
            url = _url(log, proc, deadline)
            _say(f"service at {url}; waiting for /readyz")
            _ready(url, proc, deadline)
            started = time.monotonic()
            response = httpx.post(f"{url}/api/problems/{slug}/run", json={"code": code}, timeout=120)
            body = response.json()
            if response.status_code != 200 or body.get("verdict") != "accepted":
                raise RuntimeError(f"Run answered {response.status_code}: {str(body)[:500]}")
            took = time.monotonic() - started
            passed = f"{body['passed']}/{body['total']} examples"
            _say(f"POST /api/problems/{slug}/run: {body['verdict']} ({passed}) in {took:.2f} s")
            proc.send_signal(signal.SIGTERM)
            code_ = proc.wait(60)
            if code_ != 0:
                raise RuntimeError(f"judge serve exited with code {code_} after SIGTERM")
            _say("stopped cleanly; smoke run passed")
            return 0
        except (RuntimeError, httpx.HTTPError, subprocess.TimeoutExpired) as exc:
            _say(f"FAILED: {exc}")
            sys.stderr.write(log.read_text(errors="replace")[-4000:])
            return 1
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/run --smoke", description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for start-up and the run")
    return smoke(parser.parse_args(argv).timeout)


if __name__ == "__main__":
    raise SystemExit(main())
