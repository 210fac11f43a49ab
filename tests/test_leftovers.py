"""The session check of tests/conftest.py: a run that leaves a sandbox worker or a stray file fails."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.leftovers import Snapshot, _ppid, _walk, descendants, is_worker, untracked_files, worker_processes

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


#: The command line of a process that reads like a worker of this checkout (it only sleeps).
FAKE_WORKER = [str(VENV / "bin" / "python"), "-c", "import time; time.sleep(120)", "-m", "sandbox.harness"]

#: Run by a stand-in for a session's process: it becomes a subreaper, and on a line on stdin starts a fake
#: worker through a parent that exits at once (an orphan in a session of its own, as a killed service's
#: sandboxes are), prints the orphan's pid and holds until stdin closes.
_ORPHANING = """
import ctypes, os, sys
from tests.leftovers import become_subreaper
assert become_subreaper()
sys.stdin.readline()
read, write = os.pipe()
middle = os.fork()
if middle == 0:
    os.setsid()
    pid = os.fork()
    if pid == 0:
        os.execv(sys.argv[1], sys.argv[1:])
    os.write(write, str(pid).encode())
    os._exit(0)
os.waitpid(middle, 0)
print(os.read(read, 32).decode(), flush=True)
sys.stdin.read()
"""


def _fake_worker() -> subprocess.Popen[bytes]:
    return subprocess.Popen(FAKE_WORKER, start_new_session=True)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


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


def test_only_the_sessions_own_workers_count_orphans_included() -> None:
    """A worker of the checkout started beside the session (here: by this test, outside the stand-in
    session) is not counted; one the session started and orphaned still is, re-parented to the session."""
    session = subprocess.Popen(
        [sys.executable, "-c", _ORPHANING, *FAKE_WORKER],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    beside: subprocess.Popen[bytes] | None = None
    orphan = 0
    try:
        snapshot = Snapshot.take(ROOT, session=session.pid)
        beside = _fake_worker()
        _wait_visible(beside)
        assert session.stdin is not None and session.stdout is not None
        session.stdin.write("go\n")
        session.stdin.flush()
        orphan = int(session.stdout.readline())
        deadline = time.monotonic() + 30
        while orphan not in worker_processes(VENV):
            assert time.monotonic() < deadline, "the orphaned fake worker never showed in /proc"
            time.sleep(0.05)
        assert _ppid(orphan) == session.pid, "the orphan was not re-parented to the session's subreaper"
        assert orphan in descendants(session.pid) and beside.pid not in descendants(session.pid)
        found = snapshot.leftovers(grace_s=0.5, files=False)
        assert any(line.startswith(f"sandbox worker still alive: pid {orphan} ") for line in found), found
        assert not any(f"pid {beside.pid} " in line for line in found), "not the session's: not counted"
        assert Snapshot.take(ROOT).session is None  # without a session: every worker of the checkout
    finally:
        if orphan:
            _kill(orphan)
        if beside is not None:
            beside.kill()
            beside.wait()
        session.kill()
        session.wait()
        for stream in (session.stdin, session.stdout):
            if stream is not None:
                stream.close()


#: Set (to a folder) only by test_a_nested_session_fails_on_its_own_leftover_only, for its probe.
PROBE_ENV = "JUDGE_LEFTOVER_PROBE"


@pytest.mark.skipif(PROBE_ENV not in os.environ, reason="the probe of a nested test session")
def test_probe_of_a_nested_session() -> None:
    """Inside a nested session: tell the outer test it runs, wait for its go, then leave an orphaned worker
    (a double fork: its parent exits) and write its pid down."""
    folder = Path(os.environ[PROBE_ENV])
    (folder / "running").write_text("")
    deadline = time.monotonic() + 120
    while not (folder / "go").exists():
        assert time.monotonic() < deadline, "the outer test never said go"
        time.sleep(0.05)
    middle = os.fork()
    if middle == 0:
        os.setsid()
        pid = os.fork()
        if pid == 0:
            os.execv(FAKE_WORKER[0], FAKE_WORKER)
        (folder / "orphan").write_text(str(pid))
        os._exit(0)
    os.waitpid(middle, 0)
    # The session's check runs as soon as this returns: wait until the orphan is the worker (exec'd), or
    # it would still be a copy of this process, no sandbox worker to find (seen once on a busy host).
    orphan = int((folder / "orphan").read_text())
    while b"sandbox.harness" not in Path(f"/proc/{orphan}/cmdline").read_bytes():
        assert time.monotonic() < deadline + 120, "the orphan never became the fake worker"
        time.sleep(0.01)


def test_a_nested_session_fails_on_its_own_leftover_only(tmp_path: Path) -> None:
    """The real session check (tests/conftest.py) in a test session of this checkout: a worker of the same
    checkout started beside it while it runs does not fail it; the worker it left itself does."""
    env = {**os.environ, PROBE_ENV: str(tmp_path)}
    probe = test_probe_of_a_nested_session.__name__
    nested = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", f"{Path(__file__).name}::{probe}"],
        cwd=ROOT / "tests",
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    beside: subprocess.Popen[bytes] | None = None
    orphan = 0
    try:
        deadline = time.monotonic() + 300
        while not (tmp_path / "running").exists():
            assert nested.poll() is None, nested.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the nested session never reached its probe"
            time.sleep(0.05)
        beside = _fake_worker()
        _wait_visible(beside)
        (tmp_path / "go").write_text("")
        output, _ = nested.communicate(timeout=300)
        orphan = int((tmp_path / "orphan").read_text())
        assert nested.returncode == 1, output[-3000:]
        assert f"sandbox worker still alive: pid {orphan} " in output, output[-3000:]
        assert f"pid {beside.pid} " not in output, output[-3000:]
    finally:
        if orphan or (tmp_path / "orphan").exists():
            _kill(orphan or int((tmp_path / "orphan").read_text()))
        if beside is not None:
            beside.kill()
            beside.wait()
        if nested.poll() is None:
            nested.kill()
        nested.communicate()
