"""``bwrap``: the default backend on a Linux host. The judge runs as root; each started worker is

    sh (joins the worker's cgroups, then execs)
      bwrap --unshare-net/pid/ipc/uts/cgroup --die-with-parent --new-session --seccomp FD --cap-drop ALL ...
        prlimit (rlimits) -> setpriv (real unprivileged uid, no capabilities, no_new_privs)
          python -E -s -B -u -m sandbox.inside.tracer|executor --result-fd N

Tracers run as uid 60000 + slot, executors as uid 61000 + slot (a range of their own). For the warm pools,
tracers are instead forked from a zygote (``fork_tracer``), and executors from an executor zygote of their
own launched the same way with ``--role executor`` (``fork_executor``; each child confines itself to an
executor uid, sets the heap scrub and starts its own XLA backend):

    sh (joins the zygote's cgroups) -> bwrap (same namespaces and files, no seccomp, root inside with only
      CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_SETPCAP) -> prlimit -> python -m sandbox.inside.zygote

and each child confines itself before any user code (``sandbox.inside.confine``: new mount, network, IPC
and UTS namespaces, a private size-capped /tmp and /dev/shm, a /proc that shows only its own processes, the
slot's uid, no capabilities, no_new_privs, the same seccomp filter), then the judge moves it into cgroups of
its own. Siblings share the zygote's PID namespace but cannot see (hidepid), signal or trace one another.

What the sandbox sees (read-only unless said otherwise): /usr and the /bin /lib /lib64 links, an /etc with
only ld.so.cache and a generated passwd/group, the Python install and the venv at their host paths (their
parent directories created 0711: traversable, not listable; bwrap's default 0700 would hide Python), a
folder holding ONLY the ``sandbox`` package (nothing else of the project: no problems, references, judge,
database or settings), a new /proc for its own PID namespace, a minimal /dev, and private size-capped
tmpfs /tmp and /dev/shm. No network.
Project packages that a non-editable install copied into site-packages (``judge``, ``reference``) are
hidden under empty read-only tmpfs mounts.

Why a real uid (60000 + slot) instead of ``bwrap --uid``: with a user namespace the process would still be
root outside, so RLIMIT_NPROC would not apply and a sandbox escape would be root. Each uid is a slot:
``start`` takes an flock on ``lock_dir/<uid>`` for the worker's lifetime and checks that no process runs as
that uid, moving on to the next slot if either fails, so workers of several judge processes never share one.

Measured here (Linux 6.18): if the judge process dies, even SIGKILLed mid-job, every sandboxed process dies
with it (``--die-with-parent`` + the PID namespace); the worker survives the exit of the THREAD that started
it (the kernel sends the parent-death signal only when no thread of the parent's process is left).
SandboxedProcess cgroups left by a judge that died are removed by the next backend that starts (they carry its
pid).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import threading
from dataclasses import replace
from typing import Any, ClassVar

from sandbox.backends.base import (
    Backend,
    ExitInfo,
    PopenProcess,
    Protection,
    Role,
    SandboxedProcess,
    SlotBusy,
    WarmUp,
    apply_rlimits,
    rlimit_plan,
)
from sandbox.backends.bwrap_cgroups import adopt_forked, kill_worker, make_cgroups, release_uid, sweep_stale
from sandbox.backends.bwrap_checks import (
    SELF_TEST,
    fingerprint,
    host_problem,
    protections,
    recently_verified,
    remember_verified,
    report_problem,
    run_probe,
)
from sandbox.backends.bwrap_command import (
    DEFAULT_CPU_SHARES,
    OUTER_ENV,
    SETPRIV_CAPS,
    Launch,
    bwrap_argv,
    group_file,
    joined,
    passwd_file,
    setpriv_argv,
)
from sandbox.backends.bwrap_settings import BwrapSettings
from sandbox.backends.bwrap_zygote import launch_zygote
from sandbox.backends.slots import SELF_TEST_SLOTS, in_free_slot, lock_uid, unlock
from sandbox.errors import ProcessStartError
from sandbox.host.cgroups import CgroupError, CgroupSetup, ControllerState, ProcessCgroups, detect
from sandbox.host.command import (
    EXECUTOR,
    MALLOC_PERTURB,
    MIB,
    TRACER,
    executor_options,
    program_argv,
    rlimit_argv,
    rlimit_values,
)
from sandbox.host.procfs import processes_of_uid, session_cpu_s, uid_cpu_s, uid_of
from sandbox.host.resource_limits import SandboxLimits
from sandbox.host.seccomp_filter import CompiledFilter, SeccompUnavailable, build_filter, data_fd
from sandbox.session.forkserver import ForkedExecutor, ForkedTracer, ForkServer, ZygoteProcess

__all__ = ["BwrapBackend", "BwrapProcess", "BwrapSettings", "tighten"]

#: Numbers the cgroups of every backend of this process (``<role><slot>-<pid>-<n>``): a backend made after
#: another one must not meet a directory the first could not remove (a worker that took long to die).
_CGROUP_NAMES = itertools.count()


class BwrapBackend(Backend):
    name: ClassVar[str] = "bwrap"

    def __init__(self, settings: BwrapSettings | None = None) -> None:
        self.settings = settings or BwrapSettings()
        self._lock = threading.Lock()
        self._cgroups: CgroupSetup | None = None
        self._available: str | None = None
        self._checked = False
        self._names = _CGROUP_NAMES
        self._zygote_lock = threading.Lock()
        self._zygote: ForkServer | None = None
        #: Forks executors (``sandbox.inside.zygote --role executor``): a zygote of its own, never the
        #: tracers' (it names only executor uids and never traces).
        self._executor_zygote: ForkServer | None = None

    # ------------------------------------------------------------------------------------- host facts

    @staticmethod
    def tools() -> dict[str, str | None]:
        return {
            name: shutil.which(name, path="/usr/bin:/bin") for name in ("bwrap", "setpriv", "prlimit", "sh")
        }

    def cgroup_setup(self) -> CgroupSetup:
        """The cgroup hierarchy found (once) and the judge's parent cgroups in it; stale workers removed."""
        with self._lock:
            if self._cgroups is None:
                self._cgroups = detect(
                    self.settings.cgroup_parent,
                    root=self.settings.cgroup_root,
                    version=self.settings.cgroup_version,
                )
                sweep_stale(self._cgroups.states)
            return self._cgroups

    def cgroup_states(self) -> dict[str, ControllerState]:
        return self.cgroup_setup().states

    def seccomp(self) -> CompiledFilter:
        return build_filter(self.settings.system_python)

    def available(self) -> str | None:
        """None when a sandbox starts here with every protection that must hold; the reason otherwise."""
        with self._lock:
            if self._checked:
                return self._available
        reason = self._check()
        with self._lock:
            self._available, self._checked = reason, True
        return reason

    def _check(self) -> str | None:
        problem = host_problem(self.settings, self.tools())
        if problem is not None:
            return problem
        try:
            self.seccomp()
        except SeccompUnavailable as exc:
            return str(exc)
        if recently_verified(fingerprint(self.settings, self.tools())):
            return None
        try:
            report = self.self_test()
        except (ProcessStartError, OSError, ValueError) as exc:
            return f"self-test failed: {exc}"
        problem = report_problem(report, self.settings.uid_base + int(str(report["slot"])))
        if problem is not None:
            return problem
        remember_verified(fingerprint(self.settings, self.tools()))
        return None

    def self_test(self) -> dict[str, object]:
        """Start a sandbox exactly like a worker (cgroups, seccomp, uid drop) running a short probe.

        It uses one of the top SELF_TEST_SLOTS slots (never a worker's) and reports what it saw inside.
        """
        limits = SandboxLimits()
        top = self.settings.uid_slots
        for slot in range(top - 1, top - 1 - SELF_TEST_SLOTS, -1):
            try:
                lock = self._lock_uid(self.uid(slot))
            except SlotBusy:
                continue
            try:
                return self._probe(limits, slot)
            finally:
                if lock is not None:
                    os.close(lock)
        raise ProcessStartError("every self-test slot is busy")

    def _probe(self, limits: SandboxLimits, slot: int) -> dict[str, object]:
        tail = [self.settings.python, "-E", "-s", "-B", "-c", SELF_TEST]
        launch = self._launch(
            limits, self.uid(slot), tail, name=f"selftest-{os.getpid()}-{next(self._names)}", module=TRACER
        )
        report = run_probe(launch)
        report["slot"] = slot
        return report

    def protections(self) -> list[Protection]:
        why = self.available()
        return protections(self.settings, self.tools(), why, self.seccomp, self.cgroup_setup())

    # ------------------------------------------------------------------------------------- starting

    def uid(self, slot: int) -> int:
        if not 0 <= slot < self.settings.uid_slots:
            raise ValueError(f"slot {slot} outside 0..{self.settings.uid_slots - 1}")
        return self.settings.uid_base + slot

    def executor_uid(self, slot: int) -> int:
        if not 0 <= slot < self.settings.executor_slots:
            raise ValueError(f"executor slot {slot} outside 0..{self.settings.executor_slots - 1}")
        return self.settings.executor_uid_base + slot

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """A tracer of its own (bwrap, seccomp, setpriv) in ``slot``, or in the next free one if another
        worker (of any judge process on this host) holds it: a slot is a uid, locked for the worker's
        lifetime and free of processes."""
        return in_free_slot(
            lambda s: self._start_in(limits, s, TRACER, self.uid(s)),
            slot,
            self.settings.uid_slots - SELF_TEST_SLOTS,
        )

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """An executor as a uid of the executor range (never a tracer's), in ``slot`` or the next free one."""
        count = self.settings.executor_slots
        return in_free_slot(
            lambda s: self._start_in(limits, s, EXECUTOR, self.executor_uid(s)), slot % count, count
        )

    def fork_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """A tracer forked from this backend's zygote; it confines itself to the slot's uid."""
        return in_free_slot(
            lambda s: self._fork_in(limits, s), slot, self.settings.uid_slots - SELF_TEST_SLOTS
        )

    def fork_executor(
        self, limits: SandboxLimits, slot: int = 0, warm_up: WarmUp = "tiny"
    ) -> SandboxedProcess:
        """An executor forked from this backend's executor zygote; it confines itself to an executor uid (in
        ``slot`` or the next free one), warms up as ``warm_up`` says and serves one job."""
        count = self.settings.executor_slots
        return in_free_slot(
            lambda s: self._fork_in(limits, s, executor=True, warm_up=warm_up), slot % count, count
        )

    def _start_in(self, limits: SandboxLimits, slot: int, module: str, uid: int) -> BwrapProcess:
        lock = self._claim_uid(uid, slot)
        try:
            worker = self._start(limits, slot, uid, module)
        except BaseException:
            unlock(lock)
            raise
        worker.lock_fd = lock
        return worker

    def _claim_uid(self, uid: int, slot: int) -> int | None:
        lock = self._lock_uid(uid)
        busy = processes_of_uid(uid)
        if busy:
            unlock(lock)
            raise SlotBusy(f"uid {uid} (slot {slot}) still has processes {sorted(busy)[:5]}")
        return lock

    def _lock_uid(self, uid: int) -> int | None:
        return lock_uid(uid, self.settings.lock_dir)

    def _start(self, limits: SandboxLimits, slot: int, uid: int, module: str) -> BwrapProcess:
        # Importing JAX costs CPU seconds before any job: allow them at start; the pool re-applies the
        # limits once the worker is ready (SandboxedProcess.apply_limits), so a job's CPU time counts from
        # there.
        started = replace(limits, cpu_time_s=limits.cpu_time_s + limits.startup_time_s)
        role: Role = "executor" if module == EXECUTOR else "tracer"
        name = f"{role[0]}{slot}-{os.getpid()}-{next(self._names)}"
        tail = program_argv(module, self.settings.python)
        if module == EXECUTOR:
            tail += ["--cache-scope", self.settings.executor_cache_scope, *executor_options(limits)]
        launch = self._launch(started, uid, tail, name=name, module=module)
        try:
            return BwrapProcess(self.name, launch, uid, role=role)
        except BaseException:
            if launch.cgroups is not None:
                launch.cgroups.remove()
            raise
        finally:
            launch.release()

    def _launch(self, limits: SandboxLimits, uid: int, tail: list[str], name: str, module: str) -> Launch:
        cgroups = self._make_cgroups(name, limits)
        fds: list[int] = []
        try:
            filter_fd = data_fd(self.seccomp().bpf, "seccomp")
            fds.append(filter_fd)
            passwd_fd = data_fd(passwd_file([uid]), "passwd")
            fds.append(passwd_fd)
            group_fd = data_fd(group_file([uid]), "group")
            fds.append(group_fd)
        except BaseException:
            for fd in fds:
                os.close(fd)
            if cgroups is not None:
                cgroups.remove()
            raise
        argv = [
            *bwrap_argv(
                self.settings,
                self.tools()["bwrap"],
                passwd_fd,
                group_fd,
                seccomp_fd=filter_fd,
                caps=SETPRIV_CAPS,
                module=module,
            ),
            *rlimit_argv(limits, nproc=True),
            *setpriv_argv(uid),
            *tail,
        ]
        argv = joined(argv, cgroups)
        return Launch(argv, (filter_fd, passwd_fd, group_fd), cgroups, self.settings.startup_cpu_shares)

    def _make_cgroups(
        self, name: str, limits: SandboxLimits, *, cpu_quota: bool = True
    ) -> ProcessCgroups | None:
        cores = self.settings.cpu_cores if cpu_quota else None
        return make_cgroups(self.cgroup_states(), name, limits, cores)

    # ------------------------------------------------------------------------------------- the zygote

    def _fork_server(self, *, executor: bool = False) -> ForkServer:
        with self._zygote_lock:
            server = self._executor_zygote if executor else self._zygote
            if server is not None and server.alive():
                return server
            if server is not None:
                server.close()
            server = ForkServer(
                self.name,
                lambda fd: self._launch_zygote(fd, executor=executor),
                confine=True,
                pid_namespace=True,
            )
            server.start()
            if executor:
                self._executor_zygote = server
            else:
                self._zygote = server
            return server

    def _launch_zygote(self, control_fd: int, *, executor: bool = False) -> ZygoteProcess:
        """The tracers' zygote, or the executors' (``executor``: its passwd names the executor uids), in
        cgroups of its own (``sandbox.backends.bwrap_zygote``)."""
        s = self.settings
        if executor:
            uids = [self.executor_uid(slot) for slot in range(s.executor_slots)]
        else:
            uids = [self.uid(slot) for slot in range(s.uid_slots)]
        name = f"{'executor-' if executor else ''}zygote-{os.getpid()}-{next(self._names)}"
        limits = SandboxLimits(memory_mb=s.zygote_memory_mb, processes=s.zygote_processes, cpu_time_s=10**7)
        cgroups = self._make_cgroups(name, limits, cpu_quota=False)
        bpf = self.seccomp().bpf
        return launch_zygote(s, self.tools()["bwrap"], bpf, cgroups, uids, control_fd, executor=executor)

    def _fork_in(
        self, limits: SandboxLimits, slot: int, *, executor: bool = False, warm_up: WarmUp = "tiny"
    ) -> SandboxedProcess:
        uid = self.executor_uid(slot) if executor else self.uid(slot)
        lock = self._claim_uid(uid, slot)
        cgroups: ProcessCgroups | None = None
        try:
            server = self._fork_server(executor=executor)
            name = f"{'e' if executor else 't'}{slot}-{os.getpid()}-{next(self._names)}"
            cgroups = self._make_cgroups(name, limits)
            started = replace(limits, cpu_time_s=limits.cpu_time_s + limits.startup_time_s)
            kind: type[ForkedTracer] = ForkedTracer
            extra: dict[str, Any] = {}
            if executor:
                kind = ForkedExecutor
                extra = {
                    "malloc_perturb": MALLOC_PERTURB,
                    "cache_scope": self.settings.executor_cache_scope,
                    "warm_up": warm_up,
                    "on_memory": lambda _, mb: cgroups is not None and cgroups.set_memory(mb * MIB),
                }
            worker = kind(
                server,
                limits,
                rlimit_values(started, nproc=True),
                **extra,
                uid=uid,
                tmp_bytes=self.settings.tmp_mb * MIB,
                shm_bytes=self.settings.shm_mb * MIB,
                on_ready=lambda t: adopt_forked(t, cgroups),
                on_kill=lambda t: kill_worker(t.uid, cgroups),
                on_stop=lambda t: cgroups is not None and cgroups.signal_all_members(),
                on_close=lambda t: release_uid(t.uid, cgroups, lock),
                on_limits=lambda t, job: tighten(t.pid, t.uid, job, cgroups),
                oom_killed=lambda: cgroups is not None and cgroups.oom_kills() > 0,
            )
        except BaseException:
            if cgroups is not None:
                cgroups.remove()
            unlock(lock)
            raise
        return worker

    def close(self) -> None:
        with self._zygote_lock:
            servers = [self._zygote, self._executor_zygote]
            self._zygote = self._executor_zygote = None
        for server in servers:
            if server is not None:
                server.close()


#: Numbers the cgroups of every backend of this process (``<role><slot>-<pid>-<n>``): a backend made after
#: another one must not meet a directory the first could not remove (a worker that took long to die).
_CGROUP_NAMES = itertools.count()


class BwrapProcess(PopenProcess):
    def __init__(self, backend: str, launch: Launch, uid: int, role: Role = "tracer") -> None:
        self.cgroups = launch.cgroups
        self.uid = uid
        #: Lock on the uid (see BwrapSettings.lock_dir), released by close once nothing runs as it.
        self.lock_fd: int | None = None
        self._notes: list[str] = []
        self.startup_shares = launch.cgroups is not None and launch.cgroups.set_cpu_shares(
            launch.startup_shares
        )
        super().__init__(backend, launch.argv, OUTER_ENV, cwd="/", pass_fds=launch.fds, role=role)

    def wait_ready(self, timeout: float) -> dict[str, Any]:
        """As for every worker; once ready, the worker gets the normal CPU weight back."""
        info = super().wait_ready(timeout)
        if self.cgroups is not None and self.startup_shares:
            self.cgroups.set_cpu_shares(DEFAULT_CPU_SHARES)
            self.startup_shares = False
        return info

    def start_cpu_s(self) -> float | None:
        """CPU seconds of the worker: its cgroup's account, else its session plus its uid's processes
        (``--new-session`` gives the program a session of its own)."""
        if self.cgroups is not None:
            used = self.cgroups.cpu_seconds()
            if used is not None:
                return used
        if self.proc.returncode is not None:
            return None
        return session_cpu_s(self.proc.pid) + uid_cpu_s(self.uid)

    def kill(self) -> None:
        if self.cgroups is not None and self.startup_shares:
            # Killed while starting: its low CPU weight would make even dying slow on a busy host.
            self.cgroups.set_cpu_shares(DEFAULT_CPU_SHARES)
            self.startup_shares = False
        if self.cgroups is not None and not self.cgroups.kill_all():
            self._notes.append("cgroup: some processes survived SIGKILL for 2 s")
        super().kill()

    def oom_killed_now(self) -> bool:
        return self.cgroups is not None and self.cgroups.oom_kills() > 0

    def exit_info(self) -> ExitInfo:
        info = super().exit_info()
        if self.cgroups is not None and self.cgroups.oom_kills() > 0:
            info.oom_killed = True
            info.notes.append("the memory cgroup's OOM killer ended the worker")
        info.notes.extend(self._notes)
        return info

    def close(self) -> None:
        super().close()
        if self.cgroups is not None:
            self._notes.extend(self.cgroups.remove())
        if self.lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.lock_fd)
            self.lock_fd = None

    def set_memory_limit(self, memory_mb: int) -> bool:
        return self.cgroups is not None and self.cgroups.set_memory(memory_mb * MIB)

    def program_pid(self) -> int:
        """Host pid of the program: the one process of the worker's uid once it is ready."""
        candidates = self.cgroups.members() if self.cgroups is not None else processes_of_uid(self.uid)
        mine = [pid for pid in candidates if uid_of(pid) == self.uid]
        if len(mine) != 1:
            raise ProcessLookupError(f"expected one process of uid {self.uid}, found {mine}")
        return mine[0]

    def apply_limits(self, limits: SandboxLimits) -> bool:
        """Tighten the worker to a job's limits: rlimits of the program, then its cgroups."""
        try:
            pid = self.program_pid()
        except ProcessLookupError:
            return False
        return tighten(pid, self.uid, limits, self.cgroups)


def tighten(pid: int, uid: int, limits: SandboxLimits, cgroups: ProcessCgroups | None) -> bool:
    """Lower a running program's rlimits (CPU counted from now) and cgroup limits to a job's; False when the
    job needs more than it has or a limit cannot be set."""
    try:
        plan = rlimit_plan(pid, limits, nproc=True)
        if plan is None:
            return False
        try:
            apply_rlimits(pid, plan)
        except PermissionError:
            # No CAP_SYS_RESOURCE (containers, this VM): lowering as the worker's own uid is allowed.
            options = [f"--{name}={soft}:{hard}" for name, (soft, hard) in plan.items()]
            subprocess.run(
                [*setpriv_argv(uid), "/usr/bin/prlimit", f"--pid={pid}", *options],
                env=OUTER_ENV,
                capture_output=True,
                timeout=10,
                check=True,
            )
        if cgroups is not None:
            cgroups.set_limits(limits.memory_mb * MIB, limits.processes)
    except (OSError, CgroupError, subprocess.SubprocessError):
        return False
    return True
