"""The ``bwrap`` backend's zygotes (``sandbox.backends.bwrap``): the process each pool's workers are forked
from, launched once per backend and role:

    sh (joins the zygote's cgroups) -> bwrap (root inside, CAP_SYS_ADMIN/SETUID/SETGID/SETPCAP, no seccomp:
      each child applies it after confining itself) -> prlimit -> python -m sandbox.inside.zygote
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

from sandbox.backends.bwrap_command import OUTER_ENV, ZYGOTE_CAPS, bwrap_argv, group_file, joined, passwd_file
from sandbox.backends.bwrap_settings import BwrapSettings
from sandbox.host.cgroups import ProcessCgroups
from sandbox.host.command import EXECUTOR, ZYGOTE, program_argv
from sandbox.host.procfs import session_cpu_s
from sandbox.host.seccomp_filter import data_fd
from sandbox.session.forkserver import ZygoteProcess


def launch_zygote(
    s: BwrapSettings,
    bwrap: str | None,
    seccomp_bpf: bytes,
    cgroups: ProcessCgroups | None,
    uids: list[int],
    control_fd: int,
    *,
    executor: bool,
) -> ZygoteProcess:
    """Start a zygote in ``cgroups`` (removed if it cannot start), its passwd naming ``uids``, listening on
    ``control_fd``. ``executor``: the executor zygote (``--role executor``; its environment is an
    executor's, heap scrub included)."""
    fds: list[int] = []
    try:
        passwd_fd = data_fd(passwd_file(uids), "passwd")
        fds.append(passwd_fd)
        group_fd = data_fd(group_file(uids), "group")
        fds.append(group_fd)
        filter_fd = data_fd(seccomp_bpf, "seccomp")
        fds.append(filter_fd)
        module = EXECUTOR if executor else ZYGOTE  # the environment's: an executor's scrubs its heap
        argv = [
            *bwrap_argv(s, bwrap, passwd_fd, group_fd, seccomp_fd=None, caps=ZYGOTE_CAPS, module=module),
            "/usr/bin/prlimit", "--core=0", "--nofile=4096:4096", "--",
            *program_argv(ZYGOTE, s.python),
            "--control-fd", str(control_fd), "--seccomp-fd", str(filter_fd),
            "--role", "executor" if executor else "tracer",
        ]  # fmt: skip
        argv = joined(argv, cgroups)
        output_r, output_w = os.pipe()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=(control_fd, *fds),
                env=OUTER_ENV,
                cwd="/",
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(output_w)
    except BaseException:
        if cgroups is not None:
            cgroups.remove()
        raise
    finally:
        for fd in fds:
            os.close(fd)

    def kill() -> None:
        if cgroups is not None:
            cgroups.kill_all()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def wait(timeout: float | None) -> int | None:
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def cleanup() -> None:
        if cgroups is not None:
            cgroups.remove()

    def cpu() -> float | None:
        used = cgroups.cpu_seconds() if cgroups is not None else None
        return used if used is not None else session_cpu_s(proc.pid)

    return ZygoteProcess(proc.pid, kill, wait, cleanup, output_r, cpu)
