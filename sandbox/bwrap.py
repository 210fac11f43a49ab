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
it (the kernel sends the parent-death signal only when no thread of the parent's process is left). Worker
cgroups left by a judge that died are removed by the next backend that starts (they carry its pid).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from sandbox.base import (
    CODE_ROOT,
    Backend,
    ExitInfo,
    PopenWorker,
    Protection,
    Role,
    SlotBusy,
    Worker,
    apply_rlimits,
    rlimit_plan,
)
from sandbox.cgroups import (
    PARENT_NAME,
    CgroupError,
    CgroupSetup,
    ControllerState,
    WorkerCgroups,
    adopt,
    detect,
    stale_children,
    worker_cgroups,
)
from sandbox.command import (
    EXECUTOR,
    FAST_COMPILE_XLA_FLAGS,
    MALLOC_PERTURB,
    MIB,
    TRACER,
    ZYGOTE,
    executor_options,
    program_argv,
    program_env,
    rlimit_argv,
    rlimit_values,
)
from sandbox.errors import WorkerStartError
from sandbox.forkserver import ForkedExecutor, ForkedTracer, ForkServer, ZygoteProcess
from sandbox.limits import SandboxLimits
from sandbox.procfs import processes_of_uid, session_cpu_s, uid_cpu_s, uid_of
from sandbox.seccomp_filter import SYSTEM_PYTHON, CompiledFilter, SeccompUnavailable, build_filter, data_fd
from sandbox.slots import (
    EXECUTOR_FIRST_UID,
    EXECUTOR_SLOTS,
    FIRST_UID,
    SELF_TEST_SLOTS,
    SLOT_LOCK_DIR,
    SLOTS,
    in_free_slot,
    lock_uid,
    unlock,
)

#: Joins every cgroup.procs file given, then execs the rest: bwrap and everything under it start inside.
_JOIN = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'
)
#: Names under a site-packages folder that must never be visible inside (copies of trusted project code).
_PROJECT_PACKAGES = ("judge", "reference", "problems")
#: The highest slots are kept for self-tests, so a health check never waits for a busy worker slot.
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")

_SELF_TEST = r"""
import json, os, socket, sys
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    inet = "allowed"
except OSError as exc:
    inet = exc.strerror
import numpy, sandbox.protocol
out = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "seccomp": status["Seccomp"].strip(),
       "nnp": status["NoNewPrivs"].strip(), "capeff": status["CapEff"].strip(), "inet": inet,
       "fds": sorted(os.listdir("/proc/self/fd")), "cwd": os.listdir(".")}
os.write(1, json.dumps(out).encode())
"""


@dataclass(frozen=True)
class BwrapSettings:
    """Host-specific choices; the defaults fit a Debian host where the judge runs from its venv as root."""

    #: Worker in slot s runs as uid/gid ``uid_base + s``; no other process may use these ids.
    uid_base: int = FIRST_UID
    uid_slots: int = SLOTS
    tmp_mb: int = 64
    shm_mb: int = 16
    #: CFS quota per worker in cores, or None for no quota (CPU time is still limited by RLIMIT_CPU).
    cpu_cores: float | None = None
    cgroup_parent: str = PARENT_NAME
    #: cgroup v2 only: a cgroup delegated to the judge (a directory of the cgroup2 mount, no processes of
    #: its own) to hold ``cgroup_parent`` instead of the judge's own cgroup (``JUDGE_CGROUP_ROOT``).
    cgroup_root: str | None = field(default_factory=lambda: os.environ.get("JUDGE_CGROUP_ROOT") or None)
    #: "1" or "2" to use that cgroup hierarchy on a host that mounts both; None: v1 if its memory, pids or
    #: cpu hierarchy is mounted, else v2 (``JUDGE_CGROUP_VERSION``).
    cgroup_version: str | None = field(default_factory=lambda: os.environ.get("JUDGE_CGROUP_VERSION") or None)
    #: The Python that runs the sandboxed programs, as a path valid inside (the venv's ``bin/python``).
    python: str = sys.executable
    #: Folders bound read-only at their own path so that Python works: the install and the venv.
    python_roots: tuple[str, ...] = field(
        default_factory=lambda: tuple(
            dict.fromkeys(os.path.realpath(p) for p in (sys.base_prefix, sys.prefix))
        )
    )
    code_dir: Path = CODE_ROOT / "sandbox"
    #: Where the folder holding only the ``sandbox`` package appears inside (the working directory).
    inside_root: str = "/opt/jax-judge"
    system_python: str = SYSTEM_PYTHON
    #: CPU weight (cpu.shares; 1024 is normal) of a worker until it reports ready: importing JAX yields to
    #: running jobs, but not so far that a refill starves on a busy host (16 made starts take over 60 s).
    startup_cpu_shares: int = 256
    #: One lock file per uid, held while a worker runs as it: slots stay distinct across judge processes.
    lock_dir: str = SLOT_LOCK_DIR
    #: Executors run as ``executor_uid_base + slot``: a range of their own, never a tracer's uid.
    executor_uid_base: int = EXECUTOR_FIRST_UID
    executor_slots: int = EXECUTOR_SLOTS
    #: ``job``: compiled programs are cached within one grading; ``process``: across an executor's jobs
    #: (``JUDGE_EXECUTOR_CACHE``; see docs/architecture-sandbox.md for the trade-off).
    executor_cache_scope: str = field(default_factory=lambda: os.environ.get("JUDGE_EXECUTOR_CACHE", "job"))
    #: ``XLA_FLAGS`` of every sandboxed program. The expected outputs are computed with the same flags
    #: (``judge.expected``); only a benchmark that replays an older design sets others.
    xla_flags: str = FAST_COMPILE_XLA_FLAGS
    #: The zygote's cgroup: itself (JAX imported) plus its children until each moves to its own cgroup.
    zygote_memory_mb: int = 4096
    zygote_processes: int = 4096


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
                _sweep_stale(self._cgroups.states)
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
        missing = [name for name, path in self.tools().items() if path is None]
        if missing:
            return f"missing {', '.join(missing)} (apt-get install bubblewrap util-linux)"
        if os.geteuid() != 0:
            return "the judge must run as root to drop sandboxed code to a separate real uid"
        python = os.path.realpath(self.settings.python)
        if not any(Path(python).is_relative_to(root) for root in self.settings.python_roots):
            return f"{self.settings.python} resolves to {python}, outside the mounted Python folders"
        try:
            self.seccomp()
        except SeccompUnavailable as exc:
            return str(exc)
        if _recently_verified(self._fingerprint()):
            return None
        try:
            report = self.self_test()
        except (WorkerStartError, OSError, ValueError) as exc:
            return f"self-test failed: {exc}"
        uid = self.settings.uid_base + int(str(report["slot"]))
        expected = {"uid": uid, "gid": uid, "groups": [], "seccomp": "2", "nnp": "1", "capeff": "0" * 16}
        wrong = {k: report.get(k) for k, v in expected.items() if report.get(k) != v}
        if wrong or report.get("inet") == "allowed" or report.get("cwd") != ["sandbox"]:
            return f"self-test: the sandbox is not what it should be: {report}"
        _remember_verified(self._fingerprint())
        return None

    def _fingerprint(self) -> str:
        """What a self-test result depends on: settings, tools, and the sandbox code that builds launches."""
        parts = [repr(self.settings), repr(sorted(self.tools().items()))]
        for path in sorted(Path(__file__).parent.glob("**/*.py")):
            stat = path.stat()
            parts.append(f"{path}:{stat.st_mtime_ns}:{stat.st_size}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

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
        raise WorkerStartError("every self-test slot is busy")

    def _probe(self, limits: SandboxLimits, slot: int) -> dict[str, object]:
        tail = [self.settings.python, "-E", "-s", "-B", "-c", _SELF_TEST]
        launch = self._launch(
            limits, self.uid(slot), tail, name=f"selftest-{os.getpid()}-{next(self._names)}", module=TRACER
        )
        try:
            proc = subprocess.run(
                launch.argv,
                pass_fds=launch.fds,
                env=_OUTER_ENV,
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
            raise WorkerStartError(
                f"exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[-800:]}"
            )
        report: dict[str, object] = json.loads(proc.stdout)
        report["slot"] = slot
        return report

    def protections(self) -> list[Protection]:
        tools = self.tools()
        why = self.available()
        ok = why is None
        base = "" if ok else f" (not available: {why})"
        try:
            rules = f"{self.seccomp().rule_count} rules"
            seccomp_ok = ok
        except SeccompUnavailable as exc:
            rules, seccomp_ok = str(exc), False
        s = self.settings
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
                f"real uid/gid {s.uid_base}+slot via setpriv: no groups, no capabilities, no_new_privs"
                + base,
            ),
            Protection(
                "seccomp",
                seccomp_ok,
                f"deny-list ({rules}): ptrace, mount, namespaces, bpf, io_uring, keyrings, perf, modules, "
                "non-AF_UNIX sockets, TIOCSTI; clone3 -> ENOSYS",
            ),
            Protection("rlimits", ok, "cpu, data, address space, file size, core, open files, nproc per uid"),
        ]
        setup = self.cgroup_setup()
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

    # ------------------------------------------------------------------------------------- starting

    def uid(self, slot: int) -> int:
        if not 0 <= slot < self.settings.uid_slots:
            raise ValueError(f"slot {slot} outside 0..{self.settings.uid_slots - 1}")
        return self.settings.uid_base + slot

    def executor_uid(self, slot: int) -> int:
        if not 0 <= slot < self.settings.executor_slots:
            raise ValueError(f"executor slot {slot} outside 0..{self.settings.executor_slots - 1}")
        return self.settings.executor_uid_base + slot

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        """A tracer of its own (bwrap, seccomp, setpriv) in ``slot``, or in the next free one if another
        worker (of any judge process on this host) holds it: a slot is a uid, locked for the worker's
        lifetime and free of processes."""
        return in_free_slot(
            lambda s: self._start_in(limits, s, TRACER, self.uid(s)),
            slot,
            self.settings.uid_slots - SELF_TEST_SLOTS,
        )

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        """An executor as a uid of the executor range (never a tracer's), in ``slot`` or the next free one."""
        count = self.settings.executor_slots
        return in_free_slot(
            lambda s: self._start_in(limits, s, EXECUTOR, self.executor_uid(s)), slot % count, count
        )

    def fork_tracer(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        """A tracer forked from this backend's zygote; it confines itself to the slot's uid."""
        return in_free_slot(
            lambda s: self._fork_in(limits, s), slot, self.settings.uid_slots - SELF_TEST_SLOTS
        )

    def fork_executor(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        """An executor forked from this backend's executor zygote; it confines itself to an executor uid (in
        ``slot`` or the next free one) and serves one job."""
        count = self.settings.executor_slots
        return in_free_slot(lambda s: self._fork_in(limits, s, executor=True), slot % count, count)

    def _start_in(self, limits: SandboxLimits, slot: int, module: str, uid: int) -> BwrapWorker:
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

    def _start(self, limits: SandboxLimits, slot: int, uid: int, module: str) -> BwrapWorker:
        # Importing JAX costs CPU seconds before any job: allow them at start; the pool re-applies the
        # limits once the worker is ready (Worker.apply_limits), so a job's CPU time counts from there.
        started = replace(limits, cpu_time_s=limits.cpu_time_s + limits.startup_time_s)
        role: Role = "executor" if module == EXECUTOR else "tracer"
        name = f"{role[0]}{slot}-{os.getpid()}-{next(self._names)}"
        tail = program_argv(module, self.settings.python)
        if module == EXECUTOR:
            tail += ["--cache-scope", self.settings.executor_cache_scope, *executor_options(limits)]
        launch = self._launch(started, uid, tail, name=name, module=module)
        try:
            return BwrapWorker(self.name, launch, uid, role=role)
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
            passwd_fd = data_fd(_passwd([uid]), "passwd")
            fds.append(passwd_fd)
            group_fd = data_fd(_group([uid]), "group")
            fds.append(group_fd)
        except BaseException:
            for fd in fds:
                os.close(fd)
            if cgroups is not None:
                cgroups.remove()
            raise
        argv = [
            *self._bwrap_argv(passwd_fd, group_fd, seccomp_fd=filter_fd, caps=_SETPRIV_CAPS, module=module),
            *rlimit_argv(limits, nproc=True),
            *_setpriv_argv(uid),
            *tail,
        ]
        if cgroups is not None and cgroups.procs_files():
            files = [str(f) for f in cgroups.procs_files()]
            argv = ["/bin/sh", "-c", _JOIN, "jax-judge-join", str(len(files)), *files, *argv]
        return Launch(argv, (filter_fd, passwd_fd, group_fd), cgroups, self.settings.startup_cpu_shares)

    def _make_cgroups(
        self, name: str, limits: SandboxLimits, cpu_cores: float | bool | None = True
    ) -> WorkerCgroups | None:
        states = self.cgroup_states()
        if not any(state.parent is not None for state in states.values()):
            return None
        try:
            cgroups = worker_cgroups(states, name)
        except CgroupError as exc:
            raise WorkerStartError(str(exc)) from None
        try:
            cores = self.settings.cpu_cores if cpu_cores is True else (cpu_cores or None)
            cgroups.set_limits(limits.memory_mb * MIB, limits.processes, cores)
        except (CgroupError, OSError) as exc:
            cgroups.remove()
            raise WorkerStartError(f"cannot set cgroup limits: {exc}") from None
        return cgroups

    def _bwrap_argv(
        self, passwd_fd: int, group_fd: int, *, seccomp_fd: int | None, caps: tuple[str, ...], module: str
    ) -> list[str]:
        s = self.settings
        tools = self.tools()
        args = [
            tools["bwrap"] or "bwrap",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox",
        ]  # fmt: skip
        fs = _Tree()
        # Kernel filesystems and the private tmpfs first: a venv or checkout that lives under /tmp on the host
        # (a CI clone, say) is then bound on top of the empty tmpfs instead of being hidden by it.
        fs.args += ["--proc", "/proc", "--dev", "/dev"]
        fs.tmpfs("/tmp", s.tmp_mb * MIB)
        fs.tmpfs("/dev/shm", s.shm_mb * MIB)
        fs.ro_bind("/usr")
        for name in _SYSTEM_LINKS:
            host = Path("/", name)
            if host.is_symlink():
                fs.args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                fs.ro_bind(str(host))
        fs.dir("/etc", "0755")
        fs.ro_bind("/etc/ld.so.cache")
        fs.args += ["--perms", "0444", "--ro-bind-data", str(passwd_fd), "/etc/passwd"]
        fs.args += ["--perms", "0444", "--ro-bind-data", str(group_fd), "/etc/group"]
        for root in s.python_roots:
            fs.ro_bind(root)
        for root in s.python_roots:
            for hidden in project_copies(Path(root)):
                fs.args += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
        fs.dir(s.inside_root, "0755")  # the working directory, on sys.path: Python lists it to import
        fs.ro_bind(str(s.code_dir), f"{s.inside_root}/sandbox")
        args += fs.args
        args += ["--chdir", s.inside_root]
        # Only the capabilities named survive inside (bwrap run as root would otherwise keep them all).
        args += ["--cap-drop", "ALL"]
        for cap in caps:
            args += ["--cap-add", cap]
        if seccomp_fd is not None:
            args += ["--seccomp", str(seccomp_fd)]
        args += ["--clearenv"]
        for key, value in program_env(s.inside_root, {"XLA_FLAGS": s.xla_flags}, module=module).items():
            args += ["--setenv", key, value]
        return [*args, "--"]

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
        """sh (joins the zygote's cgroups) -> bwrap (root inside, CAP_SYS_ADMIN/SETUID/SETGID/SETPCAP, no
        seccomp: each child applies it after confining itself) -> prlimit -> python -m
        sandbox.inside.zygote. ``executor``: the executor zygote (``--role executor``; its passwd names the
        executor uids, its environment is an executor's, heap scrub included)."""
        s = self.settings
        name = f"{'executor-' if executor else ''}zygote-{os.getpid()}-{next(self._names)}"
        zygote_limits = SandboxLimits(
            memory_mb=s.zygote_memory_mb, processes=s.zygote_processes, cpu_time_s=10**7
        )
        cgroups = self._make_cgroups(name, zygote_limits, cpu_cores=False)
        fds: list[int] = []
        try:
            if executor:
                uids = [self.executor_uid(slot) for slot in range(s.executor_slots)]
            else:
                uids = [self.uid(slot) for slot in range(s.uid_slots)]
            passwd_fd = data_fd(_passwd(uids), "passwd")
            fds.append(passwd_fd)
            group_fd = data_fd(_group(uids), "group")
            fds.append(group_fd)
            filter_fd = data_fd(self.seccomp().bpf, "seccomp")
            fds.append(filter_fd)
            module = EXECUTOR if executor else ZYGOTE  # the environment's: an executor's scrubs its heap
            argv = [
                *self._bwrap_argv(passwd_fd, group_fd, seccomp_fd=None, caps=_ZYGOTE_CAPS, module=module),
                "/usr/bin/prlimit", "--core=0", "--nofile=4096:4096", "--",
                *program_argv(ZYGOTE, s.python),
                "--control-fd", str(control_fd), "--seccomp-fd", str(filter_fd),
                "--role", "executor" if executor else "tracer",
            ]  # fmt: skip
            if cgroups is not None and cgroups.procs_files():
                files = [str(f) for f in cgroups.procs_files()]
                argv = ["/bin/sh", "-c", _JOIN, "jax-judge-join", str(len(files)), *files, *argv]
            output_r, output_w = os.pipe()
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=output_w,
                    stderr=output_w,
                    pass_fds=(control_fd, *fds),
                    env=_OUTER_ENV,
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

    def _fork_in(self, limits: SandboxLimits, slot: int, *, executor: bool = False) -> Worker:
        uid = self.executor_uid(slot) if executor else self.uid(slot)
        lock = self._claim_uid(uid, slot)
        cgroups: WorkerCgroups | None = None
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
                on_ready=lambda t: _adopt(t, cgroups),
                on_kill=lambda t: _kill_worker(t.uid, cgroups),
                on_stop=lambda t: cgroups is not None and cgroups.signal_all_members(),
                on_close=lambda t: _release(t.uid, cgroups, lock),
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


_OUTER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
#: Numbers the cgroups of every backend of this process (``<role><slot>-<pid>-<n>``): a backend made after
#: another one must not meet a directory the first could not remove (a worker that took long to die).
_CGROUP_NAMES = itertools.count()
DEFAULT_CPU_SHARES = 1024


@dataclass
class Launch:
    argv: list[str]
    fds: tuple[int, ...]
    cgroups: WorkerCgroups | None
    startup_shares: int = DEFAULT_CPU_SHARES

    def release(self) -> None:
        """Close the parent's copies of the data descriptors (the child has its own)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = ()


class _Tree:
    """bwrap mount arguments. The parents of every target are created 0711 (bwrap would make them 0700,
    unusable by the sandbox's uid): traversable, not listable, so e.g. /root shows nothing of itself."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.made: set[str] = {"/"}
        self.bound: list[Path] = []

    def _inside_bound(self, path: str) -> bool:
        return any(Path(path).is_relative_to(b) for b in self.bound)

    def dir(self, path: str, mode: str = "0711") -> None:
        if path in self.made or self._inside_bound(path):
            return
        for parent in reversed(Path(path).parents):
            self.dir(str(parent))
        self.args += ["--perms", mode, "--dir", path]
        self.made.add(path)

    def tmpfs(self, path: str, size: int) -> None:
        """A private, size-capped, world-writable (sticky) tmpfs; binds below it may come later."""
        self.args += ["--perms", "1777", "--size", str(size), "--tmpfs", path]
        self.made.add(path)

    def ro_bind(self, source: str, target: str | None = None) -> None:
        target = target or source
        if self._inside_bound(target) and source == target:
            return
        self.dir(str(Path(target).parent))
        self.args += ["--ro-bind", source, target]
        self.made.add(target)
        self.bound.append(Path(target))


def project_copies(root: Path) -> list[Path]:
    """Copies of the project's trusted packages inside a Python folder's site-packages (to hide)."""
    found: list[Path] = []
    for site in sorted(root.glob("lib*/python3*/site-packages")):
        found += [site / name for name in _PROJECT_PACKAGES if (site / name).is_dir()]
    return found


def _setpriv_argv(uid: int) -> list[str]:
    return [
        "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
    ]  # fmt: skip


def _passwd(uids: list[int]) -> bytes:
    """A passwd file with root, nobody and one ``judge`` user per uid (the zygote's children use many)."""
    names = [("judge" if len(uids) == 1 else f"judge{uid}", uid) for uid in uids]
    users = "".join(f"{name}:x:{uid}:{uid}:sandboxed code:/tmp:/usr/sbin/nologin\n" for name, uid in names)
    return (
        "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        + users
        + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    ).encode()


def _group(uids: list[int]) -> bytes:
    groups = "".join(f"{'judge' if len(uids) == 1 else f'judge{uid}'}:x:{uid}:\n" for uid in uids)
    return f"root:x:0:\n{groups}nogroup:x:65534:\n".encode()


#: Inside a worker's bwrap: setpriv needs these three to switch uid, clear groups and empty the bounding set;
#: it drops them all before the program starts.
_SETPRIV_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
#: Inside the zygote's bwrap: each forked tracer also unshares namespaces and mounts its private /tmp and
#: /proc (CAP_SYS_ADMIN) before it drops every capability.
_ZYGOTE_CAPS = ("CAP_SYS_ADMIN", *_SETPRIV_CAPS)


def _adopt(tracer: ForkedTracer, cgroups: WorkerCgroups | None) -> None:
    """A forked tracer reported ready (confined, nothing of the user's run yet): check that its host pid is
    the slot's uid, then move it into its own cgroups before it is handed out."""
    if uid_of(tracer.pid) != tracer.uid:
        tracer.kill()
        raise WorkerStartError(f"forked tracer {tracer.pid} is not uid {tracer.uid}")
    if cgroups is None:
        return
    try:
        for procs in cgroups.procs_files():
            procs.write_text(str(tracer.pid))
    except OSError as exc:
        tracer.kill()
        raise WorkerStartError(f"cannot move the tracer into its cgroups: {exc}") from None


def _kill_uid(uid: int, cgroups: WorkerCgroups | None, *, scan: bool) -> bool:
    """Kill every process of a forked worker: its cgroups' members (everything it started after it was
    moved there) and, with ``scan`` (or without cgroups), anything else running as its uid. True when a
    scan of ``/proc`` then found nothing of the uid (False without a scan, or when something survived)."""
    if cgroups is not None:
        cgroups.kill_all()
        if not scan:
            return False
    for _ in range(20):
        pids = processes_of_uid(uid)
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    return False


def _kill_worker(uid: int, cgroups: WorkerCgroups | None) -> None:
    """A forked worker's kill: its cgroups' members, or every process of its uid where it has no cgroups."""
    _kill_uid(uid, cgroups, scan=cgroups is None)


def _release(uid: int, cgroups: WorkerCgroups | None, lock: int | None) -> list[str]:
    """Once nothing runs as the uid any more: remove the cgroups and release the slot's lock. The kill's
    last scan of ``/proc`` is the check (a scan reads every host process's status: one per close, not two);
    nothing of the uid can start after it, as only the slot's own worker, now gone, ran as that uid."""
    notes: list[str] = []
    cleared = _kill_uid(uid, cgroups, scan=True)
    if cgroups is not None:
        notes.extend(cgroups.remove())
    if cleared or not processes_of_uid(uid):
        unlock(lock)
    else:
        notes.append(f"processes of uid {uid} survived; its slot stays locked")
    return notes


#: A passed self-test is trusted for this long by later judge processes with the same fingerprint, so a
#: one-shot ``judge grade`` does not start a probe sandbox every time (``judge doctor`` always re-runs it).
SELF_TEST_TTL_S = 600.0
_VERIFIED_FILE = "/run/jax-judge/bwrap-self-test"


def _recently_verified(fingerprint: str) -> bool:
    try:
        stat = os.stat(_VERIFIED_FILE)
        if stat.st_uid != 0 or stat.st_mode & 0o022 or time.time() - stat.st_mtime > SELF_TEST_TTL_S:
            return False
        return Path(_VERIFIED_FILE).read_text() == fingerprint
    except OSError:
        return False


def _remember_verified(fingerprint: str) -> None:
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(_VERIFIED_FILE), mode=0o700, exist_ok=True)
        tmp = f"{_VERIFIED_FILE}.{os.getpid()}"
        Path(tmp).write_text(fingerprint)
        os.chmod(tmp, 0o600)
        os.replace(tmp, _VERIFIED_FILE)


def _sweep_stale(states: dict[str, ControllerState]) -> None:
    """Remove worker cgroups left by a judge process that no longer runs (named ``*-<judge pid>-<n>``)."""
    for state, child in stale_children(states):
        adopt(state, child).remove()


class BwrapWorker(PopenWorker):
    def __init__(self, backend: str, launch: Launch, uid: int, role: Role = "tracer") -> None:
        self.cgroups = launch.cgroups
        self.uid = uid
        #: Lock on the uid (see BwrapSettings.lock_dir), released by close once nothing runs as it.
        self.lock_fd: int | None = None
        self._notes: list[str] = []
        self.startup_shares = launch.cgroups is not None and launch.cgroups.set_cpu_shares(
            launch.startup_shares
        )
        super().__init__(backend, launch.argv, _OUTER_ENV, cwd="/", pass_fds=launch.fds, role=role)

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


def tighten(pid: int, uid: int, limits: SandboxLimits, cgroups: WorkerCgroups | None) -> bool:
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
                [*_setpriv_argv(uid), "/usr/bin/prlimit", f"--pid={pid}", *options],
                env=_OUTER_ENV,
                capture_output=True,
                timeout=10,
                check=True,
            )
        if cgroups is not None:
            cgroups.set_limits(limits.memory_mb * MIB, limits.processes)
    except (OSError, CgroupError, subprocess.SubprocessError):
        return False
    return True
