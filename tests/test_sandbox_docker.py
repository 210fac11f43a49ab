"""The ``docker`` backend against a real engine: Podman's API service, set up by scripts/podman-setup.sh.

Every run goes through ``sandbox.session.driver.run_session`` on a tracer container and an executor container,
as the judge drives them. Probes run as the user's code at load time and report on stdout, which must land in
``RawRun.output`` (never in the result frames).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from judge.core.output_tree import assemble
from sandbox.backends.base import CODE_ROOT, GradingProcesses, SandboxedProcess, SlotBusy
from sandbox.backends.docker import LABEL, DockerBackend, seccomp_profile
from sandbox.backends.slots import EXECUTOR_FIRST_UID, EXECUTOR_SLOTS, FIRST_UID, lock_uid
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.driver import run_session
from sandbox.session.monitor import RawRun
from sandbox.session.reports import Load
from tests.sessions import outputs, session

SETUP = CODE_ROOT / "scripts" / "podman-setup.sh"
#: Slots (uids FIRST_UID + slot) away from the ones a judge's pool or other tests use.
SLOT = 500
LIMITS = SandboxLimits(case_time_s=5.0, wall_time_s=30.0, memory_mb=1024, processes=64, startup_time_s=60.0)


# ------------------------------------------------------------------------------------------ no engine


def test_seccomp_profile_allows_only_unix_sockets_and_no_namespaces() -> None:
    base: dict[str, Any] = {
        "defaultAction": "SCMP_ACT_ERRNO",
        "syscalls": [
            {"names": ["read", "socket", "clone", "unshare", "ptrace"], "action": "SCMP_ACT_ALLOW"},
            {"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": None},
        ],
    }
    profile = seccomp_profile(base)
    allowed = [r for r in profile["syscalls"] if r["action"] == "SCMP_ACT_ALLOW"]
    assert allowed[0]["names"] == ["read"]
    socket_rules = [r for r in allowed if "socket" in r["names"]]
    assert [r["args"][0]["value"] for r in socket_rules] == [socket.AF_UNIX]
    assert all(r["args"] for r in allowed if "clone" in r["names"])
    assert not any({"unshare", "ptrace"} & set(r["names"]) for r in allowed)
    assert base["syscalls"][0]["names"] == ["read", "socket", "clone", "unshare", "ptrace"]  # not mutated


# ------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="session")
def backend() -> Iterator[DockerBackend]:
    if shutil.which("podman") is None and (os.geteuid() != 0 or shutil.which("apt-get") is None):
        pytest.skip("podman is not installed and cannot be installed here (needs root and apt-get)")
    done = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        if shutil.which("podman") is None:
            pytest.skip(f"podman could not be installed: {done.stderr.strip()[-500:]}")
        pytest.fail(f"{SETUP} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    backend = DockerBackend()
    reason = backend.available()
    assert reason is None, reason
    yield backend


def run(
    backend: DockerBackend,
    code: str,
    limits: SandboxLimits = LIMITS,
    slot: int = SLOT,
    tracer: SandboxedProcess | None = None,
) -> RawRun:
    """One case ``f(x)`` with x = ones(3) on a tracer container and an executor container (both removed)."""
    tracer = tracer or backend.start_tracer(limits, slot)
    executor = backend.start_executor(limits, slot)
    ids = [tracer.container_id, executor.container_id]  # type: ignore[attr-defined]
    pair = GradingProcesses(tracer, executor)
    try:
        raw = run_session(
            pair, session(code.replace("def f(x):", "def f(x, s):"), np.ones(3, np.float32)), limits
        )
    finally:
        pair.close()
    assert not set(ids) & set(backend.leftovers()), "a container outlived its run"
    return raw


#: One run of the isolation probe: the raw run, what the probe found, what the host's listener heard.
Isolation = tuple[RawRun, dict[str, Any], list[bytes]]


def probes(raw: RawRun) -> dict[str, Any]:
    for line in raw.output.decode(errors="replace").splitlines():
        if line.startswith("PROBE "):
            result: dict[str, Any] = json.loads(line[len("PROBE ") :])
            return result
    raise AssertionError(f"no probe line in the output: {raw.output[-2000:]!r}")


# ------------------------------------------------------------------------------------------ behaviour


@pytest.mark.slow
def test_correct_result_and_prints_go_to_output(backend: DockerBackend) -> None:
    code = (
        "import jax.numpy as jnp\n"
        "print('hello from the submission')\n"
        "def f(x):\n"
        "    print('tracing', x.shape)\n"
        "    return {'y': jnp.sin(x) * 2, 'n': jnp.sum(x)}\n"
    )
    raw = run(backend, code)
    assert raw.stop is None and raw.executor_healthy, raw.stop
    assert raw.load == Load("loaded")
    out = assemble(raw.programs[0].skeleton, outputs(raw, 0), 1 << 20)
    np.testing.assert_allclose(out["y"], np.sin(np.ones(3, np.float32)) * 2, rtol=1e-6)
    assert float(out["n"]) == 3.0
    assert b"hello from the submission\n" in raw.output and b"tracing (3,)" in raw.output
    assert "hello" not in json.dumps(raw.programs[0].skeleton)


ISOLATION_PROBE = r"""
import ctypes, json, os, socket, sys

P = {}

def attempt(fn):
    try:
        return "ok:" + repr(fn())[:200]
    except BaseException as exc:
        return "error:" + type(exc).__name__ + ":" + str(exc)[:200]

def read(path):
    with open(path, "rb") as fh:
        return len(fh.read())

def write(folder):
    path = os.path.join(folder, "probe.txt")
    with open(path, "w") as fh:
        fh.write("x")
    os.unlink(path)
    return True

def connect(port):
    with socket.create_connection(("127.0.0.1", port), timeout=2) as conn:
        conn.sendall(b"escaped")
    return True

P["uid"], P["gid"], P["euid"] = os.getuid(), os.getgid(), os.geteuid()
P["status"] = {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/self/status"))
               if k in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp")}
P["connect"] = attempt(lambda: connect(PORT))
FAMILIES = [
    ("inet", socket.AF_INET, socket.SOCK_STREAM),
    ("inet6", socket.AF_INET6, socket.SOCK_DGRAM),
    ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
    ("packet", socket.AF_PACKET, socket.SOCK_RAW),
    ("unix", socket.AF_UNIX, socket.SOCK_STREAM),
]
P["sockets"] = {n: attempt(lambda f=fam, t=kind: socket.socket(f, t).close()) for n, fam, kind in FAMILIES}
P["read"] = {path: attempt(lambda p=path: read(p)) for path in READ}
P["list"] = {path: attempt(lambda p=path: os.listdir(p)) for path in LIST}
P["write"] = {path: attempt(lambda p=path: write(p)) for path in WRITE}
libc = ctypes.CDLL(None, use_errno=True)
P["unshare"] = libc.unshare(0x10000000)
P["visible"] = sorted(os.listdir("/opt/judge"))
print("PROBE " + json.dumps(P), flush=True)

def f(x):
    return x
"""


@pytest.fixture(scope="module")
def isolation(backend: DockerBackend, tmp_path_factory: pytest.TempPathFactory) -> Isolation:
    """One run of the isolation probe, with a listener on the host's loopback that must hear nothing.

    The backend also binds a fake Python root whose site-packages holds a copy of ``reference`` (what a
    non-editable install of the project leaves there): it must be hidden, its neighbours readable.
    """
    fake_root = tmp_path_factory.mktemp("pyroot")
    site = fake_root / "lib" / "python3.11" / "site-packages"
    (site / "reference").mkdir(parents=True)
    (site / "reference" / "secret.py").write_text("ANSWER = 42\n")
    (site / "visible.py").write_text("OK = 1\n")
    fake_root.chmod(0o755)
    for folder in fake_root.parents:
        if str(folder).startswith(str(tmp_path_factory.getbasetemp())):
            folder.chmod(0o755)
    probing = DockerBackend(python_roots=(*backend.python_roots, str(fake_root)))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    heard: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                heard.append(conn.recv(100))

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    problems = sorted(p for p in (CODE_ROOT / "problems").rglob("*") if p.is_file())
    reference = sorted(p for p in (CODE_ROOT / "reference").rglob("*") if p.is_file())
    read_paths = ["/etc/shadow", str(CODE_ROOT / "pyproject.toml"), *map(str, problems[:2] + reference[:2])]
    read_paths += [str(site / "reference" / "secret.py"), str(site / "visible.py")]
    list_paths = [str(CODE_ROOT), str(CODE_ROOT / "problems"), str(CODE_ROOT / "reference"), "/root"]
    write_paths = ["/", "/etc", "/usr", "/opt/judge", "/opt/judge/sandbox", "/var/tmp", "/run", "/dev",
                   "/dev/shm", os.path.realpath(sys.prefix), "/tmp"]  # fmt: skip
    code = (
        f"PORT = {listener.getsockname()[1]}\nREAD = {read_paths!r}\nLIST = {list_paths!r}\n"
        f"WRITE = {write_paths!r}\n{ISOLATION_PROBE}"
    )
    try:
        raw = run(probing, code, slot=SLOT + 1)
    finally:
        stop.set()
        thread.join(2)
        listener.close()
    return raw, probes(raw), heard


@pytest.mark.slow
def test_runs_as_non_root_without_capabilities(isolation: Isolation) -> None:
    raw, p, _ = isolation
    assert raw.stop is None, raw.stop
    assert p["uid"] != 0 and p["gid"] != 0 and p["euid"] != 0
    assert FIRST_UID <= p["uid"] < FIRST_UID + 1000  # a worker slot's uid (the next free one from SLOT + 1)
    status = p["status"]
    assert (
        int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0 and int(status["CapBnd"], 16) == 0
    )
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    assert p["unshare"] == -1


@pytest.mark.slow
def test_no_network(isolation: Isolation) -> None:
    _, p, heard = isolation
    assert p["connect"].startswith("error:"), p["connect"]
    assert heard == []
    for family in ("inet", "inet6", "netlink", "packet"):
        assert p["sockets"][family].startswith("error:OSError"), (family, p["sockets"][family])
    assert p["sockets"]["unix"].startswith("ok:"), p["sockets"]["unix"]


@pytest.mark.slow
def test_secrets_and_project_files_are_out_of_reach(
    isolation: Isolation,
) -> None:
    _, p, _ = isolation
    assert len(p["read"]) >= 6, p["read"]  # the project has problems and reference files to hide
    for path, outcome in p["read"].items():
        if path.endswith("/site-packages/visible.py"):
            assert outcome == "ok:7", (path, outcome)  # the fake Python root is bound ...
        else:
            assert outcome.startswith("error:"), (path, outcome)  # ... its reference/ copy is not
    assert p["list"]["/root"].startswith("error:PermissionError"), p["list"]["/root"]
    for path in (str(CODE_ROOT), str(CODE_ROOT / "problems"), str(CODE_ROOT / "reference")):
        outcome = p["list"][path]
        assert outcome.startswith("error:") or outcome in ("ok:[]", "ok:['.venv']"), (path, outcome)
    assert p["visible"] == ["sandbox"]


@pytest.mark.slow
def test_cannot_write_outside_tmp(isolation: Isolation) -> None:
    _, p, _ = isolation
    for path, outcome in p["write"].items():
        if path == "/tmp":
            assert outcome == "ok:True", outcome
        else:
            assert outcome.startswith("error:"), (path, outcome)


FORK_BOMB = r"""
import os, time
forks, error = 0, None
try:
    for _ in range(100000):
        pid = os.fork()
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        forks += 1
except OSError as exc:
    error = exc.errno
print(f"PROBE {{\"forks\": {forks}, \"errno\": {error}}}", flush=True)

def f(x):
    return x
"""


@pytest.mark.slow
def test_fork_bomb_is_stopped_by_the_pids_limit(backend: DockerBackend) -> None:
    raw = run(backend, FORK_BOMB, slot=SLOT + 2)
    p = probes(raw)
    assert p["errno"] == errno.EAGAIN and p["forks"] < LIMITS.processes, p
    # The run ends (it does not hang) and nothing survives (run() checks the containers are gone).
    assert raw.stop is None or raw.stop.timeout is None, raw.stop


#: Shared anonymous memory: not counted by RLIMIT_DATA, so only the container's memory cgroup can stop it.
SHARED_MEMORY_BOMB = """
import mmap
def f(x):
    hog = mmap.mmap(-1, MIB << 20)
    chunk = b"x" * (1 << 20)
    for _ in range(MIB):
        hog.write(chunk)
    return x
"""


@pytest.mark.slow
def test_memory_bomb_is_stopped(backend: DockerBackend) -> None:
    limits = SandboxLimits(**{**LIMITS.__dict__, "memory_mb": 512})
    raw = run(backend, SHARED_MEMORY_BOMB.replace("MIB", "2048"), limits=limits, slot=SLOT + 3)
    assert raw.stop is not None and raw.stop.returncode == 137, raw.stop
    assert raw.stop.oom_killed and raw.stop.timeout is None and raw.stop.case == 0, raw.stop
    # An ordinary allocation meets RLIMIT_DATA first: the tracer reports it itself.
    code = "import numpy as np\ndef f(x):\n    hog = np.ones((4 << 30,), np.uint8)\n    return x + hog[0]\n"
    raw = run(backend, code, limits=limits, slot=SLOT + 3)
    failure = raw.programs[0].failure
    assert failure is not None and failure.verdict == "memory_limit_exceeded", failure


@pytest.mark.slow
def test_apply_limits_tightens_a_ready_worker(backend: DockerBackend) -> None:
    worker = backend.start_tracer(LIMITS, slot=SLOT + 6)
    try:
        worker.wait_ready(LIMITS.startup_time_s)
        assert not worker.apply_limits(SandboxLimits(**{**LIMITS.__dict__, "memory_mb": 4096}))
        job_limits = SandboxLimits(**{**LIMITS.__dict__, "memory_mb": 400, "processes": 48, "cpu_time_s": 5})
        assert worker.apply_limits(job_limits)
    except BaseException:
        worker.close()
        raise
    raw = run(backend, SHARED_MEMORY_BOMB.replace("MIB", "600"), job_limits, tracer=worker)
    # 600 MiB fit the start limits, not the job's.
    assert raw.stop is not None and raw.stop.returncode == 137 and raw.stop.oom_killed, raw.stop


@pytest.mark.slow
def test_a_slot_serves_one_worker_at_a_time(backend: DockerBackend) -> None:
    first = backend.start_tracer(LIMITS, slot=SLOT + 7)
    try:
        second = backend.start_tracer(
            LIMITS, slot=SLOT + 7
        )  # the slot is held: the worker moves to a free one
        try:
            assert second.uid != first.uid  # type: ignore[attr-defined]
        finally:
            second.close()
        with pytest.raises(SlotBusy):
            lock_uid(first.uid)  # type: ignore[attr-defined]
    finally:
        first.close()


@pytest.mark.slow
def test_infinite_loop_hits_the_case_time_limit(backend: DockerBackend) -> None:
    code = "def f(x):\n    while True:\n        pass\n"
    limits = SandboxLimits(**{**LIMITS.__dict__, "case_time_s": 2.0})
    raw = run(backend, code, limits=limits, slot=SLOT + 4)
    assert raw.stop is not None and raw.stop.timeout == "case" and raw.stop.case == 0, raw.stop
    assert not raw.stop.oom_killed, raw.stop  # the judge's own kill is not a memory kill


@pytest.mark.slow
def test_no_container_is_left_behind(backend: DockerBackend) -> None:
    worker = backend.start_tracer(LIMITS, slot=SLOT + 5)
    container_id = worker.container_id  # type: ignore[attr-defined]
    listed = backend.api().containers(all=True, filters={"label": f"{LABEL}=1"})
    assert container_id in [c["Id"] for c in listed]
    worker.close()
    worker.close()  # idempotent
    listed = backend.api().containers(all=True, filters={"label": f"{LABEL}=1"})
    assert container_id not in [c["Id"] for c in listed]


def test_probe_paths_exist() -> None:
    # The isolation probe is meaningful only if the hidden folders exist on the host.
    assert Path(CODE_ROOT / "problems").is_dir() and Path(CODE_ROOT / "reference").is_dir()


CRASHING_JUDGE = """
import os, sys
from sandbox.backends.docker import DockerBackend
from sandbox.host.resource_limits import SandboxLimits
from sandbox.backends.slots import lock_uid
worker = DockerBackend().start_tracer(SandboxLimits(startup_time_s=60.0), int(sys.argv[1]))
worker.wait_ready(60.0)
print(worker.container_id, flush=True)
os.kill(os.getpid(), 9)
"""


@pytest.mark.slow
def test_a_crashed_judge_leaves_only_exited_containers(backend: DockerBackend) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_JUDGE, str(SLOT + 8)],
        capture_output=True,
        text=True,
        cwd=CODE_ROOT,
        timeout=120,
        check=False,
    )
    container_id = done.stdout.strip()
    assert container_id, done.stderr
    worker_gone = False
    for _ in range(50):  # the tracer sees end of file on stdin and exits by itself
        if container_id in backend.leftovers(running=False):
            worker_gone = True
            break
        time.sleep(0.1)
    assert worker_gone, "the orphaned worker still runs"
    # What remove_leftovers() does, limited to this container (parallel tests own the others).
    backend.api().remove_container(container_id, force=True)
    assert container_id not in backend.leftovers()


@pytest.mark.slow
def test_executors_run_as_a_uid_range_of_their_own(backend: DockerBackend) -> None:
    executor = backend.start_executor(LIMITS, slot=3)
    try:
        executor.wait_ready(LIMITS.startup_time_s)
        user = backend.api().inspect_container(executor.container_id)["Config"]["User"]  # type: ignore[attr-defined]
        uid = int(user.split(":")[0])
        assert EXECUTOR_FIRST_UID <= uid < EXECUTOR_FIRST_UID + EXECUTOR_SLOTS
        assert not FIRST_UID <= uid < FIRST_UID + 1000, "an executor must never share a tracer's uid"
    finally:
        executor.close()
