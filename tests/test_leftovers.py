"""The session check of tests/conftest.py: a run that leaves a sandbox worker or a stray file fails."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.leftovers import Snapshot, _walk, is_worker, untracked_files, worker_processes

VENV = ROOT / ".venv"


@pytest.mark.parametrize(
    ("cmdline", "expected"),
    [
        ((f"{VENV}/bin/python", "-E", "-s", "-B", "-u", "-m", "sandbox.harness", "--result-fd", "9"), True),
        ((f"{VENV}/bin/python", "-m", "sandbox.tracer"), True),
        ((f"{VENV}/bin/python", "-m", "sandbox.executor", "--result-fd", "3"), True),
        ((f"{VENV}/bin/python", "-E", "-m", "sandbox.inside.tracer", "--result-fd", "20"), True),
        (("/work/other/.venv/bin/python", "-m", "sandbox.harness"), False),  # another checkout's worker
        ((f"{VENV}/bin/python", "-m", "pytest", "tests/test_sandbox.py"), False),
        ((f"{VENV}/bin/python", "-m", "judge", "grade", "x", "sandbox.harness"), False),
        ((f"{VENV}/bin/python", "-m", "sandbox.harness; rm"), False),
        ((), False),
    ],
)
def test_a_worker_is_this_checkouts_interpreter_running_a_sandbox_module(
    cmdline: tuple[str, ...], expected: bool
) -> None:
    assert is_worker(cmdline, VENV) is expected


def _fake_worker() -> subprocess.Popen[bytes]:
    """A process whose command line reads like a worker of this checkout (it only sleeps)."""
    python = VENV / "bin" / "python"
    return subprocess.Popen(
        [str(python), "-c", "import time; time.sleep(120)", "-m", "sandbox.harness"], start_new_session=True
    )


def _wait_visible(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Until ``proc`` shows as a worker of this checkout (it has exec'd when Popen returns; the wait only
    guards a heavily loaded host), failing if it died."""
    deadline = time.monotonic() + timeout
    while proc.pid not in worker_processes(VENV):
        assert proc.poll() is None, f"the fake worker exited with {proc.returncode}"
        assert time.monotonic() < deadline, "the fake worker never showed in /proc"
        time.sleep(0.05)


def test_a_new_worker_and_a_new_file_are_reported_and_old_ones_are_not() -> None:
    old = _fake_worker()
    stray = ROOT / f"leftover-probe-{os.getpid()}.tmp"
    new: subprocess.Popen[bytes] | None = None
    try:
        _wait_visible(old)
        snapshot = Snapshot.take(ROOT)
        assert old.pid in snapshot.workers
        assert not any(f"pid {old.pid} " in line for line in snapshot.leftovers(grace_s=0))
        new = _fake_worker()
        stray.write_text("")
        _wait_visible(new)
        found = snapshot.leftovers(grace_s=0.5)
        assert any(line.startswith(f"sandbox worker still alive: pid {new.pid} ") for line in found), found
        assert not any(f"pid {old.pid} " in line for line in found), "alive before the session: not ours"
        assert f"new untracked file in the checkout: {stray.name}" in found
    finally:
        for proc in (old, new):
            if proc is not None:
                proc.kill()
                proc.wait()
        stray.unlink(missing_ok=True)


def test_a_worker_that_is_exiting_gets_a_grace_period() -> None:
    # Other tests may start workers meanwhile (xdist): only this test's own process is looked at.
    snapshot = Snapshot.take(ROOT)
    dying = subprocess.Popen(
        [str(VENV / "bin" / "python"), "-c", "import time; time.sleep(2.0)", "-m", "sandbox.harness"]
    )
    try:
        _wait_visible(dying)
        found = snapshot.leftovers(grace_s=60)
        assert not any(f"pid {dying.pid} " in line for line in found), found
    finally:
        dying.kill()
        dying.wait()


def test_ignored_files_are_not_stray(tmp_path: Path) -> None:
    snapshot = Snapshot.take(ROOT)
    cache = ROOT / ".cache" / f"leftover-probe-{os.getpid()}.tmp"
    cache.parent.mkdir(exist_ok=True)
    cache.write_text("")
    try:
        assert str(cache.relative_to(ROOT)) not in snapshot.new_files()
    finally:
        cache.unlink()


def test_outside_git_the_checkout_is_walked(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    for rel in ("a.py", "pkg/b.py", "build/out.txt", ".venv/bin/python", "pkg/__pycache__/b.cpython-311.pyc"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert _walk(tmp_path) == {".gitignore", "a.py", os.path.join("pkg", "b.py")}
    assert untracked_files(tmp_path) == _walk(tmp_path)  # tmp_path is no git work tree


def test_the_session_check_runs_in_this_session(pytestconfig: pytest.Config) -> None:
    if hasattr(pytestconfig, "workerinput"):
        assert sys.modules.get("tests.leftovers") is not None  # the controller holds the snapshot
    else:
        from tests.conftest import _SNAPSHOT

        assert pytestconfig.stash.get(_SNAPSHOT, None) is not None
