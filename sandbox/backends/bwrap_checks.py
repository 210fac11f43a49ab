"""The ``bwrap`` backend's checks of the host (``sandbox.backends.bwrap``): the self-test's probe (what a
sandbox sees from inside), what a probe's report must say, a passed self-test remembered for later judge
processes, and the protections in place."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from sandbox.backends.base import Protection
from sandbox.backends.bwrap_command import OUTER_ENV, Launch
from sandbox.backends.bwrap_settings import BwrapSettings
from sandbox.errors import ProcessStartError
from sandbox.host.cgroups import CgroupSetup
from sandbox.host.seccomp_filter import CompiledFilter, SeccompUnavailable

SELF_TEST = r"""
import json, os, socket, sys
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    inet = "allowed"
except OSError as exc:
    inet = exc.strerror
import numpy, sandbox.shared.wire
out = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "seccomp": status["Seccomp"].strip(),
       "nnp": status["NoNewPrivs"].strip(), "capeff": status["CapEff"].strip(), "inet": inet,
       "fds": sorted(os.listdir("/proc/self/fd")), "cwd": os.listdir(".")}
os.write(1, json.dumps(out).encode())
"""


def host_problem(settings: BwrapSettings, tools: dict[str, str | None]) -> str | None:
    """Why no sandbox can start on this host (a tool missing, not root, a Python outside the mounted
    folders), before any is tried; None when nothing is in the way."""
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        return f"missing {', '.join(missing)} (apt-get install bubblewrap util-linux)"
    if os.geteuid() != 0:
        return "the judge must run as root to drop sandboxed code to a separate real uid"
    python = os.path.realpath(settings.python)
    if not any(Path(python).is_relative_to(root) for root in settings.python_roots):
        return f"{settings.python} resolves to {python}, outside the mounted Python folders"
    return None


def run_probe(launch: Launch) -> dict[str, object]:
    """Run the self-test's probe (``SELF_TEST``) as ``launch`` starts it, and read its report; the launch's
    descriptors and cgroups are released whatever happens."""
    try:
        proc = subprocess.run(
            launch.argv,
            pass_fds=launch.fds,
            env=OUTER_ENV,
            cwd="/",
            capture_output=True,
            timeout=60,
            start_new_session=True,
            check=False,
        )
    finally:
        launch.release()
        if launch.cgroups is not None:
            launch.cgroups.remove()
    if proc.returncode != 0:
        raise ProcessStartError(
            f"exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[-800:]}"
        )
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def report_problem(report: dict[str, object], uid: int) -> str | None:
    """What is wrong with a self-test's report for a sandbox of ``uid`` (None: nothing)."""
    expected = {"uid": uid, "gid": uid, "groups": [], "seccomp": "2", "nnp": "1", "capeff": "0" * 16}
    wrong = {k: report.get(k) for k, v in expected.items() if report.get(k) != v}
    if wrong or report.get("inet") == "allowed" or report.get("cwd") != ["sandbox"]:
        return f"self-test: the sandbox is not what it should be: {report}"
    return None


def fingerprint(settings: BwrapSettings, tools: dict[str, str | None]) -> str:
    """What a self-test result depends on: settings, tools, and the sandbox code that builds launches."""
    parts = [repr(settings), repr(sorted(tools.items()))]
    for path in sorted(Path(__file__).parent.parent.glob("**/*.py")):
        stat = path.stat()
        parts.append(f"{path}:{stat.st_mtime_ns}:{stat.st_size}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


#: A passed self-test is trusted for this long by later judge processes with the same fingerprint, so a
#: one-shot ``judge grade`` does not start a probe sandbox every time (``judge doctor`` always re-runs it).
SELF_TEST_TTL_S = 600.0
VERIFIED_FILE = "/run/jax-judge/bwrap-self-test"


def recently_verified(fingerprint: str) -> bool:
    try:
        stat = os.stat(VERIFIED_FILE)
        if stat.st_uid != 0 or stat.st_mode & 0o022 or time.time() - stat.st_mtime > SELF_TEST_TTL_S:
            return False
        return Path(VERIFIED_FILE).read_text() == fingerprint
    except OSError:
        return False


def remember_verified(fingerprint: str) -> None:
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(VERIFIED_FILE), mode=0o700, exist_ok=True)
        tmp = f"{VERIFIED_FILE}.{os.getpid()}"
        Path(tmp).write_text(fingerprint)
        os.chmod(tmp, 0o600)
        os.replace(tmp, VERIFIED_FILE)


def protections(
    s: BwrapSettings,
    tools: dict[str, str | None],
    why: str | None,
    seccomp: Callable[[], CompiledFilter],
    setup: CgroupSetup,
) -> list[Protection]:
    """What the backend protects, each said as held or not (``why``: the reason it is not available)."""
    ok = why is None
    base = "" if ok else f" (not available: {why})"
    try:
        rules = f"{seccomp().rule_count} rules"
        seccomp_ok = ok
    except SeccompUnavailable as exc:
        rules, seccomp_ok = str(exc), False
    out = [
        Protection("separate process", True, "user code never runs in the judge's process"),
        Protection(
            "namespaces",
            ok and tools["bwrap"] is not None,
            "bubblewrap: new mount, network (no interfaces), PID, IPC, UTS and cgroup namespaces; dies "
            "with its parent; new session" + base,
        ),
        Protection(
            "filesystem",
            ok,
            "read-only /usr, Python install, venv and the sandbox package only; private tmpfs /tmp "
            f"({s.tmp_mb} MiB) and /dev/shm ({s.shm_mb} MiB); generated passwd/group" + base,
        ),
        Protection(
            "uid drop",
            ok,
            f"real uid/gid {s.uid_base}+slot via setpriv: no groups, no capabilities, no_new_privs" + base,
        ),
        Protection(
            "seccomp",
            seccomp_ok,
            f"deny-list ({rules}): ptrace, mount, namespaces, bpf, io_uring, keyrings, perf, modules, "
            "non-AF_UNIX sockets, TIOCSTI; clone3 -> ENOSYS",
        ),
        Protection("rlimits", ok, "cpu, data, address space, file size, core, open files, nproc per uid"),
    ]
    out.append(Protection("cgroups", setup.active and ok, setup.summary))
    for controller, state in setup.states.items():
        detail = state.detail
        if controller == "cpu":
            quota = f"quota {s.cpu_cores} cores" if s.cpu_cores else "no quota configured"
            detail = f"{detail} ({quota})"
        active = state.parent is not None and ok
        out.append(
            Protection(
                f"cgroup {controller}",
                active,
                f"{detail} under {state.parent}" if state.parent is not None else state.reason,
            )
        )
    return out
