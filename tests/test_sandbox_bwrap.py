"""The ``bwrap`` backend for real: raw sessions through ``sandbox.session.driver.run_session``, then the host.

Probes run as the user's code (at load time, or while the function is traced) and report on stdout, which
lands in ``RawRun.output``. They run in a tracer started on its own and in one forked from the zygote (the
warm pool's path), which must be confined alike. After every run: no process of the worker's uid is left
and its cgroups are gone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sandbox.backends.base import CODE_ROOT, GradingProcesses
from sandbox.backends.bwrap import BwrapBackend, BwrapProcess
from sandbox.backends.bwrap_command import bwrap_argv, project_copies
from sandbox.host.cgroups import discover
from sandbox.host.command import TRACER
from sandbox.host.procfs import processes_of_uid
from sandbox.host.resource_limits import SandboxLimits
from sandbox.host.seccomp_filter import build_filter
from sandbox.session.driver import run_session
from sandbox.session.forkserver import ForkedTracer
from sandbox.session.monitor import RawRun
from tests.load import wall_slack
from tests.sessions import outputs, session

LIMITS = SandboxLimits(case_time_s=5.0, wall_time_s=20.0, memory_mb=1024, processes=64, startup_time_s=60.0)
SECRET = "s3cr3t-value-that-must-not-leak"
#: Slots of this module's workers (the pool tests and the judge use others; the backend skips busy ones).
SLOT = 900


# ------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def backend() -> Iterator[BwrapBackend]:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    if os.geteuid() != 0:
        pytest.skip("the bwrap backend drops to a separate uid, which needs root")
    backend = BwrapBackend()
    reason = backend.available()
    assert reason is None, reason
    yield backend
    backend.close()


def run(
    backend: BwrapBackend, code: str, limits: SandboxLimits = LIMITS, *, forked: bool = False
) -> tuple[RawRun, Any]:
    """One case ``f(x)`` with x = ones(3), on a tracer of its own (or forked) and a fresh executor."""
    tracer = backend.fork_tracer(limits, SLOT) if forked else backend.start_tracer(limits, SLOT)
    executor = backend.start_executor(limits, SLOT)
    job = session(code.replace("def f(x):", "def f(x, s):"), np.ones(3, np.float32), retrace=False)
    pair = GradingProcesses(tracer, executor)
    try:
        raw = run_session(pair, job, limits)
    finally:
        pair.close()
    assert_clean(backend, tracer)
    assert_clean(backend, executor)
    return raw, tracer


def assert_clean(backend: BwrapBackend, worker: Any) -> None:
    """Nothing of the worker is left on the host: processes of its uid, cgroup directories."""
    deadline = time.monotonic() + wall_slack(3.0)  # killed at once; reaped as the host allows
    while processes_of_uid(worker.uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_of_uid(worker.uid) == set(), f"processes of uid {worker.uid} outlived the run"
    if isinstance(worker, BwrapProcess):
        assert worker.cgroups is not None and worker.cgroups.dirs == {}
        for state in backend.cgroup_states().values():
            if state.parent is not None:
                assert not (state.parent / worker.cgroups.name).exists(), f"cgroup {worker.cgroups.name} left"


def memory_verdict(raw: RawRun) -> bool:
    """The run ended for memory: an OOM kill, or a memory error claimed or reported for case 0."""
    program = raw.programs.get(0)
    run_report = raw.runs.get(0)
    return bool(
        (raw.stop is not None and raw.stop.oom_killed)
        or (program is not None and program.failure and program.failure.verdict == "memory_limit_exceeded")
        or (run_report is not None and run_report.error and run_report.error.kind == "memory")
    )


def probes(raw: RawRun) -> dict[str, Any]:
    for line in raw.output.decode(errors="replace").splitlines():
        if line.startswith("PROBE "):
            found: dict[str, Any] = json.loads(line[len("PROBE ") :])
            return found
    raise AssertionError(f"no probe line in the output: {raw.output[-2000:]!r}")


# ------------------------------------------------------------------------------------------ host facts


def test_available_and_every_protection_active(backend: BwrapBackend) -> None:
    protections = {p.name: p for p in backend.protections()}
    for name in ("namespaces", "filesystem", "uid drop", "seccomp", "rlimits"):
        assert protections[name].active, protections[name]
    for controller, state in discover(create=False).items():
        if state.parent is not None:
            assert protections[f"cgroup {controller}"].active, protections[f"cgroup {controller}"]


def test_seccomp_filter_is_built_and_cached() -> None:
    first = build_filter()
    assert len(first.bpf) % 8 == 0 and len(first.bpf) > 8 * first.rule_count // 2
    assert build_filter() is first


def test_self_test_reports_the_sandbox(backend: BwrapBackend) -> None:
    report = backend.self_test()
    assert report["uid"] == backend.settings.uid_base + int(str(report["slot"]))
    assert report["groups"] == [] and report["seccomp"] == "2" and report["nnp"] == "1"
    assert report["capeff"] == "0" * 16
    assert report["cwd"] == ["sandbox"]
    assert report["fds"] == ["0", "1", "2", "3"]  # nothing leaks in but stdio (3: the listing itself)


def test_project_copies_in_site_packages_are_hidden(backend: BwrapBackend, tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    for name in ("judge", "reference", "numpy"):
        (site / name).mkdir(parents=True)
    assert project_copies(tmp_path) == [site / "judge", site / "reference"]
    settings = replace(backend.settings, python_roots=(*backend.settings.python_roots, str(tmp_path)))
    argv = bwrap_argv(settings, "bwrap", 4, 5, seccomp_fd=3, caps=(), module=TRACER)
    for hidden in (site / "judge", site / "reference"):
        at = argv.index(str(hidden))
        assert argv[at - 1] == "--tmpfs" and argv[at + 1 : at + 3] == ["--remount-ro", str(hidden)]


def test_cgroup_discovery_follows_own_cgroup(tmp_path: Path) -> None:
    mounts = tmp_path / "mountinfo"
    mounts.write_text(
        f"30 25 0:26 / {tmp_path}/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
        f"31 25 0:27 / {tmp_path}/cpu,cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct\n"
        "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
    )
    own = tmp_path / "cgroup"
    own.write_text("4:memory:/service/x\n3:cpu,cpuacct:/\n0::/\n")
    (tmp_path / "memory" / "service" / "x").mkdir(parents=True)
    (tmp_path / "cpu,cpuacct").mkdir()
    states = discover("jj", mountinfo=str(mounts), proc_cgroup=str(own), create=True)
    assert states["memory"].parent is None and "oom_control" in states["memory"].reason
    assert states["cpu"].parent == states["cpuacct"].parent == tmp_path / "cpu,cpuacct" / "jj"
    assert (tmp_path / "memory" / "service" / "x" / "jj").is_dir()  # under the judge's own cgroup
    assert states["pids"].parent is None and states["freezer"].parent is None


# ------------------------------------------------------------------------------------------ jobs


@pytest.mark.slow
@pytest.mark.parametrize("forked", [False, True], ids=["started", "forked"])
def test_correct_solution_runs_and_returns_data(backend: BwrapBackend, forked: bool) -> None:
    raw, _ = run(backend, "import jax.numpy as jnp\ndef f(x):\n    return jnp.sin(x) * 2\n", forked=forked)
    np.testing.assert_allclose(outputs(raw, 0)[0], 2 * np.sin(np.ones(3, np.float32)), rtol=1e-6)
    assert raw.stop is None and raw.executor_healthy


PROBE = r"""
import ctypes, errno, json, os, socket, subprocess, sys
R = {}
def attempt(name, fn):
    try:
        R[name] = ["ok", repr(fn())[:300]]
    except BaseException as exc:
        R[name] = ["error", f"{type(exc).__name__}: {exc}"[:300]]
attempt("read_shadow", lambda: open("/etc/shadow").read())
attempt("read_host_passwd_root", lambda: [l for l in open("/etc/passwd") if l.startswith("root:")][0])
attempt("list_root", lambda: os.listdir("/root"))
attempt("list_work", lambda: os.listdir("/work"))
attempt("read_root_bashrc", lambda: open("/root/.bashrc").read())
attempt("list_problems", lambda: os.listdir("ROOT_DIR/problems"))
attempt("list_reference", lambda: os.listdir("ROOT_DIR/reference"))
attempt("list_judge", lambda: os.listdir("ROOT_DIR/judge"))
attempt("list_work_main", lambda: sorted(os.listdir("ROOT_DIR")))
attempt("stat_venv", lambda: os.path.isdir("VENV_DIR/lib"))
attempt("import_judge", lambda: __import__("judge"))
attempt("import_reference", lambda: __import__("reference"))
attempt("proc1_environ", lambda: open("/proc/1/environ", "rb").read())
leaks = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        if b"SECRET_VALUE" in open(f"/proc/{pid}/environ", "rb").read():
            leaks.append(pid)
    except OSError:
        pass
R["environ_leaks"] = leaks + [k for k, v in os.environ.items() if "SECRET_VALUE" in v or "SECRET" in k]
R["environ_keys"] = sorted(os.environ)
attempt("write_usr", lambda: open("/usr/probe", "w"))
attempt("write_root_dir", lambda: open("/probe", "w"))
attempt("write_code", lambda: open("/opt/jax-judge/sandbox/probe.py", "w"))
attempt("write_venv", lambda: open(os.path.join(sys.prefix, "probe"), "w"))
attempt("write_python", lambda: open(os.path.join(sys.base_prefix, "probe"), "w"))
attempt("write_etc_passwd", lambda: open("/etc/passwd", "a"))
attempt("write_tmp", lambda: open("/tmp/probe", "w").write("ok"))
attempt("write_shm", lambda: open("/dev/shm/probe", "w").write("ok"))
attempt("tcp_connect", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
attempt("udp_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("inet6_socket", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
attempt("netlink_socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW))
attempt("unix_socket", lambda: socket.socket(socket.AF_UNIX).close())
R["uid"] = [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()]
attempt("id_u", lambda: subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip())
attempt("setuid_root", lambda: os.setuid(0))
attempt("kill_pid1", lambda: os.kill(1, 9))
libc = ctypes.CDLL(None, use_errno=True)
def sc(*args):
    rc = libc.syscall(*args)
    return rc, errno.errorcode.get(ctypes.get_errno(), "0") if rc < 0 else "0"
R["ptrace_attach_1"] = sc(101, 16, 1, 0, 0)
R["unshare_user"] = sc(272, 0x10000000)
R["unshare_net"] = sc(272, 0x40000000)
R["clone3"] = sc(435, 0, 0)
R["clone_newuser"] = sc(56, 0x10000000 | 17, 0, 0, 0, 0)  # SIGCHLD | CLONE_NEWUSER
R["clone_newns"] = sc(56, 0x00020000 | 17, 0, 0, 0, 0)
R["mount"] = sc(165, b"none", b"/tmp", b"tmpfs", 0, 0)
R["bpf"] = sc(321, 0, 0, 0)
R["io_uring_setup"] = sc(425, 1, 0)
R["personality_no_aslr"] = sc(135, 0x0040000)
R["tiocsti"] = sc(16, 0, 0x5412, ctypes.c_char_p(b"x"))
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
R["status"] = {k: status[k].strip() for k in ("Seccomp", "NoNewPrivs", "CapEff", "CapBnd", "CapPrm")}
R["hostname"] = socket.gethostname()
R["visible_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("PROBE " + json.dumps(R), flush=True)
def f(x):
    return x
"""


@pytest.fixture(scope="module", params=["started", "forked"])
def isolation(
    backend: BwrapBackend, request: pytest.FixtureRequest
) -> Iterator[tuple[RawRun, dict[str, Any], list[bytes], int]]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    os.environ["JUDGE_SECRET_PROBE"] = SECRET  # in the judge's environment: must not reach the sandbox
    try:
        code = (
            PROBE.replace("PORT", str(listener.getsockname()[1]))
            .replace("SECRET_VALUE", SECRET)
            .replace("ROOT_DIR", str(CODE_ROOT))
            .replace("VENV_DIR", sys.prefix)
        )
        raw, worker = run(backend, code, forked=request.param == "forked")
        heard: list[bytes] = []
        try:
            connection, _ = listener.accept()
            heard.append(connection.recv(100) or b"(connected)")
            connection.close()
        except BlockingIOError:
            pass
        yield raw, probes(raw), heard, worker.uid
    finally:
        os.environ.pop("JUDGE_SECRET_PROBE", None)
        listener.close()


def _failed(found: dict[str, Any], name: str) -> None:
    assert found[name][0] == "error", f"{name} succeeded inside the sandbox: {found[name]}"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "read_shadow", "read_root_bashrc", "list_root", "list_work", "list_work_main", "list_problems",
        "list_reference", "list_judge", "import_judge", "import_reference", "proc1_environ", "write_usr",
        "write_root_dir", "write_code", "write_venv", "write_python", "write_etc_passwd", "tcp_connect",
        "udp_socket", "inet6_socket", "netlink_socket", "setuid_root", "kill_pid1",
    ],
)  # fmt: skip
def test_denied_inside(isolation: tuple[RawRun, dict[str, Any], list[bytes], int], name: str) -> None:
    _failed(isolation[1], name)


@pytest.mark.slow
def test_what_the_sandbox_sees(isolation: tuple[RawRun, dict[str, Any], list[bytes], int]) -> None:
    raw, found, heard, uid = isolation
    assert found["uid"] == [uid, uid, uid, []]
    assert found["id_u"] == ["ok", repr(str(uid))]
    assert found["stat_venv"] == ["ok", "True"]  # reachable (Python runs from it), yet not listable above
    assert found["write_tmp"][0] == "ok" and found["write_shm"][0] == "ok"
    assert found["unix_socket"][0] == "ok"
    assert found["read_host_passwd_root"][1].count("nologin") == 1  # the generated passwd
    assert found["environ_leaks"] == []
    assert "JUDGE_SECRET_PROBE" not in found["environ_keys"]
    assert heard == [], "the sandbox reached a TCP listener on the host's 127.0.0.1"
    assert found["status"]["Seccomp"] == "2" and found["status"]["NoNewPrivs"] == "1"
    assert found["status"]["CapEff"] == found["status"]["CapBnd"] == found["status"]["CapPrm"] == "0" * 16
    assert found["hostname"] == "sandbox"
    assert max(found["visible_pids"]) < 100, "host processes are visible"
    assert raw.runs[0].outputs is not None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "errno_name"),
    [
        ("ptrace_attach_1", "EPERM"), ("unshare_user", "EPERM"), ("unshare_net", "EPERM"),
        ("clone3", "ENOSYS"), ("clone_newuser", "EPERM"), ("clone_newns", "EPERM"), ("mount", "EPERM"),
        ("bpf", "EPERM"), ("io_uring_setup", "EPERM"),
        ("personality_no_aslr", "EPERM"), ("tiocsti", "EPERM"),
    ],
)  # fmt: skip
def test_seccomp_refuses(
    isolation: tuple[RawRun, dict[str, Any], list[bytes], int], name: str, errno_name: str
) -> None:
    assert isolation[1][name] == [-1, errno_name]


# ------------------------------------------------------------------------------------------ hostile code


@pytest.mark.slow
def test_fork_bomb_is_contained(backend: BwrapBackend) -> None:
    code = "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n"  # noqa: E501
    limits = SandboxLimits(case_time_s=4.0, wall_time_s=20.0, memory_mb=1024, processes=48, startup_time_s=60)
    raw, _ = run(backend, code, limits)
    assert raw.stop is not None and raw.stop.timeout == "case"
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


@pytest.mark.slow
def test_thread_bomb_is_stopped_by_the_process_limit(backend: BwrapBackend) -> None:
    code = (
        "import threading, time\nn = 0\ntry:\n    while n < 100000:\n"
        "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n        n += 1\n"
        "except RuntimeError as exc:\n    print('STOPPED', n, exc, flush=True)\n"
        "def f(x):\n    return x\n"
    )
    raw, _ = run(backend, code)
    text = raw.output.decode(errors="replace")
    assert "STOPPED" in text, text[-2000:]
    assert int(text.split("STOPPED")[1].split()[0]) < LIMITS.processes


@pytest.mark.slow
def test_numpy_memory_bomb_is_a_memory_error(backend: BwrapBackend) -> None:
    raw, _ = run(backend, "import numpy as np\ndef f(x):\n    a = np.ones(1 << 30)\n    return x\n")
    assert memory_verdict(raw), (raw.stop, raw.programs)


@pytest.mark.slow
def test_jax_memory_bomb_inside_jit(backend: BwrapBackend) -> None:
    # An 8 GiB intermediate that must be materialized (a sort cannot be fused away); the output is small.
    code = (
        "import jax.numpy as jnp\ndef f(x):\n"
        "    return jnp.sort(jnp.arange(1 << 31, dtype=jnp.float32) * x[0])[:2]\n"
    )
    raw, _ = run(backend, code)
    assert memory_verdict(raw), (raw.stop, raw.programs, raw.runs)


@pytest.mark.slow
def test_an_8_gib_output_is_refused_before_it_runs(backend: BwrapBackend) -> None:
    code = "import jax.numpy as jnp\ndef f(x):\n    return jnp.broadcast_to(x[0], (1 << 31,)) + 1.0\n"
    raw, _ = run(backend, code)
    refused = raw.programs[0].refused
    assert refused is not None and refused.kind == "output_limit" and raw.runs == {}


@pytest.mark.slow
def test_memory_spread_over_processes_is_an_oom_kill(backend: BwrapBackend) -> None:
    # Each child stays under RLIMIT_DATA (per process); together they exceed the memory cgroup.
    code = (
        "import os, time\nimport numpy as np\nfor i in range(5):\n    if os.fork() == 0:\n"
        "        a = np.ones(50 << 20)\n        time.sleep(60)\n        os._exit(0)\n"
        "time.sleep(8)\ndef f(x):\n    return x\n"
    )
    raw, _ = run(backend, code)
    assert raw.stop is not None and raw.stop.oom_killed, (raw.stop, raw.output[-500:])


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        "    while True:\n        pass\n",
        "    import time\n    time.sleep(1e9)\n",
        "    import time\n    time.sleep(1e9)\n",
    ],
    ids=["busy-loop", "sleep", "ignores-sigterm"],
)
def test_case_timeout(backend: BwrapBackend, body: str, request: pytest.FixtureRequest) -> None:
    prefix = ""
    if request.node.callspec.id == "ignores-sigterm":  # at load time: the main thread may set handlers
        prefix = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    raw, _ = run(backend, prefix + "def f(x):\n" + body + "    return x\n")
    assert raw.stop is not None and raw.stop.timeout == "case" and raw.stop.case == 0
    assert raw.elapsed_s < LIMITS.case_time_s + wall_slack(10), "a loop costs one case limit"


@pytest.mark.slow
def test_detached_grandchild_does_not_outlive_the_run(backend: BwrapBackend) -> None:
    code = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        time.sleep(1000)\n    os._exit(0)\ntime.sleep(0.5)\n"
        "def f(x):\n    return x\n"
    )
    for forked in (False, True):
        raw, worker = run(backend, code, forked=forked)  # run() asserts that no process of the uid is left
        assert raw.runs[0].outputs is not None
        assert processes_of_uid(worker.uid) == set()


def _runs_no_user_code(pid: int) -> bool:
    """The process is gone, a zombie, or has SIGKILL pending (it dies before it returns to user space)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    pending = int(fields.get("ShdPnd", "0"), 16) | int(fields.get("SigPnd", "0"), 16)
    return fields.get("State", "").startswith(("Z", "X")) or bool(pending & (1 << (signal.SIGKILL - 1)))


@pytest.mark.slow
def test_the_tracer_runs_no_user_code_once_hidden_cases_may_run(backend: BwrapBackend) -> None:
    """With a hidden case the monitor stops the tracer before any hidden case runs
    (``SandboxedProcess.stop``): every process of it, a child it forked included, has SIGKILL pending or is
    gone when the session returns, though nobody waited for them to exit."""
    code = (
        "import os, time\nif os.fork() == 0:\n    while True:\n        time.sleep(0.001)\n"
        "def f(x, s):\n    return x * s\n"
    )
    tracer = backend.fork_tracer(LIMITS, SLOT)
    executor = backend.start_executor(LIMITS, SLOT)
    job = session(code, np.ones(3, np.float32), np.ones(4, np.float32), secret=(False, True))
    pair = GradingProcesses(tracer, executor)
    try:
        raw = run_session(pair, job, LIMITS)
        assert raw.runs[1].outputs is not None, raw.stop  # the hidden case ran
        assert isinstance(tracer, ForkedTracer), type(tracer)
        pids = processes_of_uid(tracer.uid)
        assert all(_runs_no_user_code(pid) for pid in pids), pids
    finally:
        pair.close()
    assert_clean(backend, tracer)


@pytest.mark.slow
def test_output_flood_is_capped(backend: BwrapBackend) -> None:
    raw, _ = run(backend, "import sys\nsys.stdout.write('x' * (1 << 22))\ndef f(x):\n    return x\n")
    assert len(raw.output) == LIMITS.output_bytes and raw.output_truncated


@pytest.mark.slow
def test_worker_tightened_to_job_limits(backend: BwrapBackend) -> None:
    worker = backend.start_tracer(LIMITS, SLOT)
    assert isinstance(worker, BwrapProcess)
    try:
        worker.wait_ready(60)
        tight = SandboxLimits(memory_mb=700, processes=40, cpu_time_s=3)
        assert worker.apply_limits(tight)
        limits = Path(f"/proc/{worker.program_pid()}/limits").read_text()
        assert f"Max data size             {700 << 20}" in limits
        assert "Max processes             40" in limits
        assert worker.cgroups is not None
        memory = worker.cgroups.dirs["memory"] / "memory.limit_in_bytes"
        assert memory.read_text().strip() == str(700 << 20)
        assert not worker.apply_limits(SandboxLimits(memory_mb=4096)), "rlimits cannot be raised"
    finally:
        worker.close()
    assert_clean(backend, worker)


@pytest.mark.slow
def test_foreign_abi_system_call_kills_the_process(backend: BwrapBackend) -> None:
    # An x32 system call (nr | 0x40000000) would slip past filters written for x86-64 numbers.
    code = (
        "import ctypes\nctypes.CDLL(None).syscall(0x40000000 + 39)\nprint('SURVIVED', flush=True)\n"
        "def f(x):\n    return x\n"
    )
    for forked in (False, True):
        raw, _ = run(backend, code, forked=forked)
        assert b"SURVIVED" not in raw.output
        assert raw.stop is not None and raw.stop.timeout is None
        assert raw.stop.returncode in (128 + signal.SIGSYS, -signal.SIGSYS), raw.stop.returncode


# ------------------------------------------------------------------------------------- the zygote's children

SIBLING_A = r"""
import os, socket, time
open("/tmp/sibling-marker", "w").write("a")
open("/dev/shm/sibling-marker", "w").write("a")
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind("\0jax-judge-sibling")
server.listen(1)
print("A-READY", os.getpid(), flush=True)
time.sleep(15)
def f(x):
    return x
"""

SIBLING_B = r"""
import errno, json, os, signal, socket
R = {"tmp": os.path.exists("/tmp/sibling-marker"), "shm": os.path.exists("/dev/shm/sibling-marker")}
try:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect("\0jax-judge-sibling")
    R["abstract"] = "connected"
except OSError as exc:
    R["abstract"] = errno.errorcode.get(exc.errno, str(exc.errno))
R["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
mine = set(R["pids"]) | {int(t) for t in os.listdir("/proc/self/task")}  # its own threads answer too
signalled = []
for pid in range(1, 400):
    if pid in mine:
        continue
    try:
        os.kill(pid, 0)
        signalled.append(pid)
    except OSError:
        pass
R["signalled"] = signalled
R["uid"] = os.getuid()
print("PROBE " + json.dumps(R), flush=True)
def f(x):
    return x
"""


@pytest.mark.slow
def test_forked_tracers_cannot_reach_their_siblings(backend: BwrapBackend) -> None:
    """Two tracers forked from one zygote run at once: the second sees nothing of the first (its /tmp,
    /dev/shm, abstract sockets, processes) and can signal no process but its own."""
    first: dict[str, Any] = {}

    def run_a() -> None:
        first["raw"], first["tracer"] = run(backend, SIBLING_A, forked=True)

    thread = threading.Thread(target=run_a)
    thread.start()
    uids = [backend.uid(SLOT + i) for i in range(20)]
    deadline = time.monotonic() + 60
    while not any(processes_of_uid(uid) for uid in uids) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.5)  # A loads its code and sleeps for 15 s
    raw_b, tracer_b = run(backend, SIBLING_B, forked=True)
    overlapped = any(processes_of_uid(uid) for uid in uids if uid != tracer_b.uid)
    thread.join(60)
    assert overlapped, "the two tracers did not run at the same time"
    found = probes(raw_b)
    assert b"A-READY" in first["raw"].output, "the first tracer did not run at the same time"
    assert tracer_b.uid != first["tracer"].uid
    assert found["uid"] == tracer_b.uid
    assert found["tmp"] is False and found["shm"] is False, "a sibling's private /tmp or /dev/shm is visible"
    assert found["abstract"] != "connected", "a sibling's abstract socket is reachable"
    assert found["signalled"] == [], f"a sibling could signal {found['signalled']}"
    assert len(found["pids"]) <= 2, f"a sibling sees other processes: {found['pids']}"


@pytest.mark.slow
def test_a_dead_zygote_is_started_again(backend: BwrapBackend) -> None:
    tracer = backend.fork_tracer(LIMITS, SLOT)
    tracer.close()
    server = backend._zygote
    assert server is not None and server.alive()
    server.close()  # as if it died
    raw, _ = run(backend, "def f(x):\n    return x\n", forked=True)
    assert raw.runs[0].outputs is not None
    assert backend._zygote is not server
