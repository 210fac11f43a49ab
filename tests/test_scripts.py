"""The newcomer path and the helper scripts: `scripts/run --smoke`, `.ci/run`, `scripts/podman-setup.sh`."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.service_support import HEAVY


def _commands(script: Path) -> list[str]:
    """The command lines of a shell script (comments, blank lines and `set`/`cd` set-up left out)."""
    lines = [line.strip() for line in script.read_text().splitlines()]
    return [
        line
        for line in lines
        if line and not line.startswith("#") and not line.startswith(("set ", "cd ")) and line != "exit 0"
    ]


def test_ci_runs_the_tests_then_smoke_runs_the_readmes_first_command() -> None:
    assert _commands(ROOT / ".ci" / "run") == ["scripts/test", "scripts/run --smoke"]
    readme = (ROOT / "README.md").read_text()
    first = readme.split("```sh\n", 1)[1].split("\n", 1)[0]
    assert first == "scripts/run", "the README's first command is the one CI smoke-runs"


DOCS = [ROOT / "README.md", ROOT / "docs" / "architecture.md", ROOT / "problems" / "README.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_point_only_inside_the_repository(doc: Path) -> None:
    text = doc.read_text()
    outside = re.findall(r"(?<![\w/])\.\./\S*", text)  # a path that starts by leaving the repository
    assert not outside, f"pointers outside the repository: {outside}"
    for target in re.findall(r"\]\(([^)#]+)\)", text):  # Markdown links
        if "://" not in target:
            assert (doc.parent / target).exists(), target


def test_the_readme_links_the_architecture() -> None:
    assert "[`docs/architecture.md`](docs/architecture.md)" in (ROOT / "README.md").read_text()


@pytest.mark.slow
@HEAVY
def test_smoke_run_does_the_main_job_and_stops() -> None:
    """The README's first command, as CI runs it: the service starts, Runs one example over HTTP, stops."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "run"), "--smoke"], capture_output=True, text=True, timeout=600, cwd="/"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "accepted (3/3 examples)" in done.stderr and "smoke run passed" in done.stderr


@pytest.mark.slow
@HEAVY
def test_smoke_run_fails_when_the_main_job_fails() -> None:
    env = {**os.environ, "JUDGE_SANDBOX": "no-such-backend"}
    done = subprocess.run(
        [str(ROOT / "scripts" / "run"), "--smoke"], capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "smoke: FAILED" in done.stderr and "no-such-backend" in done.stderr


# ------------------------------------------------------------------------------------ podman-setup.sh


@pytest.mark.slow
def test_podman_service_works_in_its_own_state_directory(tmp_path: Path) -> None:
    """Its container monitors write files (an `oom` marker after a memory kill) into the service's working
    directory: started from a checkout, they landed there. The service must run in its state directory."""
    if os.geteuid() != 0 or shutil.which("podman") is None or shutil.which("runc") is None:
        pytest.skip("needs root with podman and runc installed (scripts/setup --test installs them)")
    base = Path(f"/run/jax-judge-test-{os.getpid()}")
    socket = base / "podman.sock"
    env = {
        **os.environ,
        "JUDGE_PODMAN_SOCKET": str(socket),
        "JUDGE_PODMAN_LOG": str(tmp_path / "podman.log"),
    }
    caller = tmp_path / "checkout"
    caller.mkdir()
    pid = None
    try:
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "podman-setup.sh")],
            cwd=caller,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        pid = int((base / "podman-service.pid").read_text())
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        assert cwd == base / "service", cwd
        assert list(caller.iterdir()) == []
    finally:
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
                    break
                time.sleep(0.1)
        shutil.rmtree(base, ignore_errors=True)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "Z"
