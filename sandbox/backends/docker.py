"""``docker``: one container per worker through the Docker API (a Docker engine, or Podman's API service).

Each worker is a fresh container from a tiny skeleton image (empty directories, a small passwd; built by
``scripts/podman-setup.sh`` with ``podman import``): a one-shot tracer per submission (a container cannot
be forked; the pool keeps them warm) or a long-lived executor, each as a uid of its own range (tracers
60000 + slot, executors 61000 + slot). What the program needs is bound read-only at run
time: ``/usr`` (and ``/lib``-style directories where the host has no merged ``/usr``), ``/etc/ld.so.cache``,
the Python install and the venv at their host paths, and ONLY the ``sandbox`` package directory at
``/opt/judge/sandbox``; never problems, reference solutions, the judge or secrets (copies of ``judge``,
``reference`` or ``problems`` in a bound site-packages, left by a non-editable install, are covered with
empty read-only tmpfs mounts; ``notmpcopyup`` on Podman, which would otherwise copy them in). ``/root`` is
0711 in the image, so a Python installed under it is reachable but ``/root`` is not listable.

The container has no network (``none``), a read-only root, all capabilities dropped, no-new-privileges, a
non-root uid per slot, memory (swap included) and pids limits, rlimits for CPU time, open files, file size,
processes and core dumps, a size-capped ``/tmp`` tmpfs, no ``/dev/shm`` (private IPC), no log driver (output
is never written to disk), and, where the engine's default seccomp profile is at hand, that profile
tightened: ``socket()`` only for ``AF_UNIX``, no namespace-creating ``clone``/``unshare``/``setns``, no
``ptrace``, ``mount``, ``bpf``, ``io_uring``, ``keyctl``, ``perf_event_open``, ``userfaultfd``, kexec or
module loading. ``/var/tmp`` is an empty read-only tmpfs (Podman gives read-only containers a writable one).

The private result channel. A container cannot inherit a file descriptor from the judge, so the program
runs under a one-line shell inside the container::

    sh -c '"$@" 3>&1 1>&2; exit $?' sh python -E -s -B -u -m sandbox.inside.tracer --result-fd 3

Its fd 3 (the result channel) is the container's stdout; its fd 1 and fd 2 (every user print) both go to
the container's stderr. The judge attaches to the container before starting it (stdin, stdout, stderr,
stream; no tty, so the stream is multiplexed with 8-byte headers: stream id, three zero bytes, big-endian
length) and a thread splits it into two local pipes: stdout payloads to ``result_fd``, stderr payloads to
``output_fd``. ``stdin_fd`` is the write end of a third pipe that another thread forwards to the socket;
closing it half-closes the socket, which the engine passes on as end-of-file on the container's stdin
(``StdinOnce``). So a ``DockerProcess`` is an ordinary ``SandboxedProcess`` and
``sandbox.session.monitor.run_job`` drives it unchanged. The shell stays as the container's PID 1 (it does not
exec), so the program is an ordinary process: default signal actions apply to it (SIGXCPU at the CPU limit
ends it, which a namespace init would ignore) and the shell reports a signal death as 128 + signal number.

User code can write to the tracer's fd 3 (or dup it), exactly as under every other backend, since it runs
in the tracer. It can only forge frames that claim a program; the program is what the executor runs, and
the judge validates every frame (see ``sandbox.session.monitor``).

Out-of-memory: Podman does not set ``OOMKilled`` for a cgroup v1 memory kill, so an exit code of 137
(SIGKILL) that the judge did not cause itself counts as a memory kill. User code that SIGKILLs its own
tracer is reported the same way; that changes nothing but its own verdict.

Slots: slot ``n`` runs as uid/gid 60000 + n and holds the lock file ``/run/jax-judge/slots/<uid>`` while
its container exists (the same locks as the bwrap backend), so ``start`` raises ``SlotBusy`` for a uid in
use. ``apply_limits`` tightens a warm worker for a job where the engine runs on this host: it prlimits the
program (CPU counted from then; from a helper running as the worker's uid when the judge lacks
CAP_SYS_RESOURCE) and writes the container's memory and pids cgroup files (Podman's API cannot update them).

A warm worker whose judge dies sees end of file on stdin and exits; ``remove_leftovers`` removes such
exited containers (call it when the service starts).

Access to the engine's socket is root-equivalent: keep it private to the judge (the setup script makes
its directory 0700).
"""

from __future__ import annotations

import contextlib
import copy
import errno
import hashlib
import json
import os
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from sandbox.backends.base import (
    CODE_ROOT,
    Backend,
    ExitInfo,
    Protection,
    Role,
    SandboxedProcess,
    apply_rlimits,
    rlimit_plan,
)
from sandbox.backends.slots import (
    EXECUTOR_FIRST_UID,
    EXECUTOR_SLOTS,
    FIRST_UID,
    in_free_slot,
    lock_uid,
    unlock,
)
from sandbox.errors import ProcessStartError
from sandbox.host.command import (
    EXECUTOR,
    MIB,
    TRACER,
    executor_options,
    program_argv,
    program_env,
    rlimit_argv,
)
from sandbox.host.resource_limits import SandboxLimits
from sandbox.host.waitfd import readable
from sandbox.shared.wire import write_all

DEFAULT_SOCKET = "/run/jax-judge/podman.sock"
DEFAULT_URL = f"unix://{DEFAULT_SOCKET}"
DEFAULT_IMAGE = "localhost/jax-judge-skeleton:3"
#: Podman's default profile: the base the tightened seccomp profile is built from.
DEFAULT_SECCOMP_BASE = "/usr/share/containers/seccomp.json"
#: Every container this backend starts carries this label (value: "1").
LABEL = "jax-judge.sandbox"
#: Where the sandbox package is mounted inside; also the working directory.
CODE_MOUNT = "/opt/judge"
TMP_MB = 64
API_TIMEOUT_S = 30

#: Host directories bound read-only at the same path when they are real directories (not /usr symlinks).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache",)
#: Names under a bound site-packages that must never be visible inside (copies of trusted project code).
PROJECT_PACKAGES = ("judge", "reference", "problems")
#: Options of the empty read-only tmpfs laid over what must stay hidden.
_EMPTY = "ro,nosuid,nodev,size=4k,mode=0755"
#: The program under a shell that keeps it off PID 1 and routes fd 3 -> stdout, fd 1 -> stderr.
_SHELL = ["/bin/sh", "-c", '"$@" 3>&1 1>&2; exit $?', "sh"]

_AF_UNIX = 1
#: CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
_CLONE_NAMESPACE_FLAGS = 0x7E020000
_DENIED_SYSCALLS = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
)


def rlimits(limits: SandboxLimits) -> dict[str, tuple[int, int]]:
    """The program's rlimits by ulimit name, from ``rlimit_argv`` (the one source for every backend).

    Engines know no ``as`` ulimit; the memory cgroup bounds the container instead.
    """
    out: dict[str, tuple[int, int]] = {}
    for option in rlimit_argv(limits, nproc=True)[1:-1]:
        name, _, value = option.removeprefix("--").partition("=")
        soft, _, hard = value.partition(":")
        if name != "as":
            out[name] = (int(soft), int(hard or soft))
    return out


def docker_url() -> str:
    """``JUDGE_DOCKER_URL``; else the setup script's socket if it exists; else ``DOCKER_HOST``."""
    explicit = os.environ.get("JUDGE_DOCKER_URL")
    if explicit:
        return explicit
    if os.path.exists(DEFAULT_SOCKET):
        return DEFAULT_URL
    return os.environ.get("DOCKER_HOST") or DEFAULT_URL


def seccomp_profile(base: dict[str, Any]) -> dict[str, Any]:
    """The engine's default profile, tightened: AF_UNIX sockets only, no namespaces, no exotic syscalls."""
    profile = copy.deepcopy(base)
    special = {*_DENIED_SYSCALLS, "socket", "clone", "clone3"}
    rules: list[dict[str, Any]] = []
    for rule in profile.get("syscalls") or []:
        names = rule.get("names") or ([rule["name"]] if rule.get("name") else [])
        kept = [name for name in names if name not in special]
        if kept:
            rule = {key: value for key, value in rule.items() if key != "name"}
            rule["names"] = kept
            rules.append(rule)

    def arg(index: int, value: int, op: str, value_two: int = 0) -> dict[str, Any]:
        return {"index": index, "value": value, "valueTwo": value_two, "op": op}

    rules += [
        {"names": list(_DENIED_SYSCALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EPERM},
        {"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [arg(0, _AF_UNIX, "SCMP_CMP_EQ")]},
        {
            "names": ["socket"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": errno.EAFNOSUPPORT,
            "args": [arg(0, _AF_UNIX, "SCMP_CMP_NE")],
        },
        # Threads and fork only: (flags & namespace flags) == 0. Anything else gets the default action.
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ALLOW",
            "args": [arg(0, _CLONE_NAMESPACE_FLAGS, "SCMP_CMP_MASKED_EQ", 0)],
        },
        # clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall back.
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
    ]
    profile["syscalls"] = rules
    return profile


# ------------------------------------------------------------------------------------------ the backend


class DockerBackend(Backend):
    name: ClassVar[str] = "docker"

    def __init__(
        self, url: str | None = None, image: str | None = None, python_roots: Sequence[str] | None = None
    ) -> None:
        self.url = url or docker_url()
        self.image = image or os.environ.get("JUDGE_DOCKER_IMAGE") or DEFAULT_IMAGE
        #: The Python install and the venv, bound read-only at these paths.
        self.python_roots = tuple(python_roots or dict.fromkeys((sys.base_prefix, sys.prefix)))
        self._client: Any = None
        self._engine: str | None = None
        self._seccomp: str | None = None
        self._seccomp_note = ""
        self._lock = threading.Lock()
        #: ``job`` or ``process``: how long an executor keeps compiled programs (see sandbox.inside.executor).
        self.executor_cache_scope = os.environ.get("JUDGE_EXECUTOR_CACHE", "job")

    # -------------------------------------------------------------------------------------- engine

    def api(self) -> Any:
        """The low-level Docker API client (``docker.APIClient``), created on first use."""
        with self._lock:
            if self._client is None:
                import docker

                self._client = docker.DockerClient(base_url=self.url, timeout=API_TIMEOUT_S)
            return self._client.api

    def engine(self) -> str:
        """``podman`` or ``docker``: they take a seccomp profile differently (a path / inline JSON)."""
        if self._engine is None:
            components = self.api().version().get("Components") or []
            names = " ".join(str(c.get("Name", "")) for c in components)
            self._engine = "podman" if "podman" in names.lower() else "docker"
        return self._engine

    def available(self) -> str | None:
        try:
            import docker  # noqa: F401
        except ImportError:
            return "the Docker SDK for Python (`docker`) is not installed: pip install 'jax-judge[docker]'"
        try:
            self.api().ping()
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
            return f"no Docker API answers at {self.url} ({problem}); run scripts/podman-setup.sh"
        try:
            self.api().inspect_image(self.image)
        except Exception:
            return f"image {self.image} is missing at {self.url}; run scripts/podman-setup.sh"
        for path in self._mounts():
            if not os.path.exists(path):
                return f"{path} (needed inside the container) does not exist"
        return None

    def protections(self) -> list[Protection]:
        up = self.available() is None
        seccomp = self._seccomp_option() if up else None
        return [
            Protection("separate container", up, "one fresh container per worker, removed after the job"),
            Protection("network none", up, "own network namespace with loopback only"),
            Protection("read-only root", up, "skeleton image; system, Python and venv bound read-only"),
            Protection("files", up, "only the sandbox package of the project is visible"),
            Protection("capabilities dropped", up, "cap_drop ALL"),
            Protection("no-new-privileges", up, "setuid binaries cannot raise privileges"),
            Protection("non-root uid", up, f"uid/gid {FIRST_UID} + slot"),
            Protection("cgroup", up, "memory (swap included) and pids limits"),
            Protection("rlimits", up, "cpu, open files, file size, processes, core"),
            Protection("tmpfs /tmp", up, f"{TMP_MB} MiB; no /dev/shm"),
            Protection(
                "seccomp",
                seccomp is not None,
                "AF_UNIX sockets only, no namespaces, ptrace, mount, bpf, io_uring, keyctl"
                if seccomp is not None
                else self._seccomp_note or "engine default profile only",
            ),
        ]

    # -------------------------------------------------------------------------------------- mounts

    def _mounts(self) -> dict[str, str]:
        """Host path -> container path, bound read-only: system directories, the Python install, the venv.

        The Python install and the venv keep the paths this interpreter sees (the venv's ``pyvenv.cfg`` and
        its ``python`` symlink name them); the sources are their real paths.
        """
        mounts: dict[str, str] = {}
        for path in _SYSTEM_DIRS:
            if os.path.isdir(path) and not os.path.islink(path):
                mounts[path] = path
        mounts.update({path: path for path in _SYSTEM_FILES if os.path.isfile(path)})
        for prefix in self.python_roots:
            if not any(prefix == p or prefix.startswith(p.rstrip("/") + "/") for p in mounts.values()):
                mounts[os.path.realpath(prefix)] = prefix
        mounts[str(CODE_ROOT / "sandbox")] = f"{CODE_MOUNT}/sandbox"
        return mounts

    def _binds(self) -> dict[str, dict[str, str]]:
        return {source: {"bind": target, "mode": "ro"} for source, target in self._mounts().items()}

    def hidden_paths(self) -> list[str]:
        """Copies of the project's trusted packages in a bound site-packages (a non-editable install put
        them there), as container paths: each gets an empty read-only tmpfs over it."""
        hidden: list[str] = []
        for source, target in self._mounts().items():
            if target not in self.python_roots:
                continue
            for site in sorted(Path(source).glob("lib*/python3*/site-packages")):
                for name in PROJECT_PACKAGES:
                    if (site / name).is_dir():
                        hidden.append(target + str(site / name)[len(source) :])
        return hidden

    # -------------------------------------------------------------------------------------- seccomp

    def _seccomp_option(self) -> str | None:
        """The ``seccomp=`` security option, or None when no base profile is at hand."""
        with self._lock:
            cached = self._seccomp
            path = cached.removeprefix("seccomp=") if cached else ""
            if cached is not None and (not path.startswith("/") or os.path.isfile(path)):
                return cached  # inline, or a profile file that still exists
            if cached is None and self._seccomp_note:
                return None
        base_path = os.environ.get("JUDGE_DOCKER_SECCOMP_BASE") or DEFAULT_SECCOMP_BASE
        option: str | None = None
        note = ""
        try:
            with open(base_path, encoding="utf-8") as fh:
                profile = seccomp_profile(json.load(fh))
        except (OSError, ValueError) as exc:
            note = f"engine default profile only: cannot read {base_path} ({exc})"
        else:
            text = json.dumps(profile, sort_keys=True)
            if self.engine() == "docker":
                option = f"seccomp={text}"  # Docker takes the profile itself
            elif self.url.startswith("unix://"):
                option, note = self._write_profile(text)  # Podman opens a path on its own host
            else:
                note = "engine default profile only: Podman reads profiles from its host's files"
        with self._lock:
            self._seccomp, self._seccomp_note = option, note
        return option

    def _write_profile(self, text: str) -> tuple[str | None, str]:
        folder = os.path.dirname(self.url[len("unix://") :])
        path = os.path.join(folder, f"seccomp-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json")
        try:
            if not os.path.isfile(path):
                tmp = f"{path}.{os.getpid()}.tmp"
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.chmod(tmp, 0o644)
                os.replace(tmp, path)
        except OSError as exc:
            return None, f"engine default profile only: cannot write {path} ({exc})"
        return f"seccomp={path}", ""

    # -------------------------------------------------------------------------------------- start

    def container_config(
        self, limits: SandboxLimits, slot: int, module: str = TRACER, uid: int | None = None
    ) -> dict[str, Any]:
        """Arguments for ``APIClient.create_container`` (host config included)."""
        from docker.types import LogConfig, Ulimit

        api = self.api()
        uid = FIRST_UID + slot if uid is None else uid
        extra = (
            ["--cache-scope", self.executor_cache_scope, *executor_options(limits)]
            if module == EXECUTOR
            else []
        )
        security = ["no-new-privileges"]
        seccomp = self._seccomp_option()
        if seccomp is not None:
            security.append(seccomp)
        memory = f"{limits.memory_mb}m"
        # Podman fills a tmpfs with what the image or a bind had at that path, unless told not to.
        nocopy = ",notmpcopyup" if self.engine() == "podman" else ""
        ulimits = rlimits(limits)
        host_config = api.create_host_config(
            binds=self._binds(),
            network_mode="none",
            ipc_mode="none",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=security,
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=limits.processes,
            # /var/tmp: replaces the engine's writable default for read-only containers with an empty one.
            tmpfs={
                "/tmp": f"rw,nosuid,nodev,size={TMP_MB}m,mode=1777{nocopy}",
                **{path: _EMPTY + nocopy for path in ("/var/tmp", *self.hidden_paths())},
            },
            ulimits=[Ulimit(name=name, soft=soft, hard=hard) for name, (soft, hard) in ulimits.items()],
            log_config=LogConfig(type="none"),
        )
        return {
            "image": self.image,
            "command": [*_SHELL, *program_argv(module), "--result-fd", "3", *extra],
            "user": f"{uid}:{uid}",
            "environment": program_env(CODE_MOUNT, module=module),
            "working_dir": CODE_MOUNT,
            "hostname": "sandbox",
            "stdin_open": True,  # with detach=False this also sets StdinOnce and the Attach* flags
            "tty": False,
            "labels": {LABEL: "1", f"{LABEL}.slot": str(slot), f"{LABEL}.uid": str(uid)},
            "name": f"jax-judge-{uid}-{secrets.token_hex(4)}",
            "host_config": host_config,
            "use_config_proxy": False,  # never copy proxy settings from ~/.docker/config.json
        }

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """A one-shot tracer container in ``slot``, or the next free one: slots are locked across backends
        and judges. (This backend has no zygote: a container cannot be forked; the pool keeps them warm.)"""
        return in_free_slot(lambda s: self._start_in(limits, s, TRACER, FIRST_UID + s), slot)

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """A long-lived executor container, as a uid of the executor range."""
        return in_free_slot(
            lambda s: self._start_in(limits, s, EXECUTOR, EXECUTOR_FIRST_UID + s),
            slot % EXECUTOR_SLOTS,
            EXECUTOR_SLOTS,
        )

    def _start_in(self, limits: SandboxLimits, slot: int, module: str, uid: int) -> SandboxedProcess:
        api = self.api()
        lock = lock_uid(uid)  # SlotBusy if another worker (of any backend or judge process) runs as uid
        try:
            container_id = api.create_container(**self.container_config(limits, slot, module, uid))["Id"]
        except Exception as exc:
            unlock(lock)
            raise ProcessStartError(f"docker: cannot create the container: {exc}") from None
        try:
            # Attach before start, so not a byte of the program's output can be missed.
            sock = api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        except Exception as exc:
            _remove(api, container_id)
            unlock(lock)
            raise ProcessStartError(f"docker: cannot attach to the container: {exc}") from None
        role: Role = "executor" if module == EXECUTOR else "tracer"
        worker = DockerProcess(self.name, api, container_id, sock, limits, uid, role)
        worker.lock_fd = lock
        try:
            api.start(container_id)
        except Exception as exc:
            worker._returncode = -1  # never ran: nothing to kill or wait for
            worker.close()
            raise ProcessStartError(f"docker: cannot start the container: {exc}") from None
        return worker

    def leftovers(self, *, running: bool = True) -> list[str]:
        """Ids of containers with this backend's label that still exist (with ``running=False``: those
        that no longer run)."""
        listed = self.api().containers(all=True, filters={"label": f"{LABEL}=1"})
        return [c["Id"] for c in listed if running or c.get("State") != "running"]

    def remove_leftovers(self, *, running: bool = False) -> int:
        """Remove containers a crashed judge left behind; how many.

        A warm worker exits by itself when its judge's connection closes (end of file on its stdin), so a
        crash leaves exited containers: those go by default. ``running=True`` removes every container of
        this backend, which is right only when no other judge process uses the same engine.
        """
        ids = self.leftovers(running=running)
        for container_id in ids:
            _remove(self.api(), container_id)
        return len(ids)


def _remove(api: Any, container_id: str, attempts: int = 20) -> str | None:
    """Remove a container (forced: killed first if it runs) and make sure it is gone. A container that is
    exiting on its own when the removal comes can make Podman refuse it ("could not be stopped ... container
    state improper") and leave it behind as exited: so the removal is checked and repeated, a few tens of
    milliseconds at most. The last error, if it never went."""
    problem = f"container {container_id[:12]} was still there after {attempts} removals"
    for _ in range(attempts):
        try:
            api.remove_container(container_id, force=True)
        except Exception as exc:
            if _status(exc) != 404:
                problem = f"could not remove container {container_id[:12]}: {exc}"
        try:
            api.inspect_container(container_id)
        except Exception as exc:
            if _status(exc) == 404:
                return None
        time.sleep(0.05)
    return problem


def _status(exc: BaseException) -> int | None:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


# ------------------------------------------------------------------------------------------ the worker


class DockerProcess(SandboxedProcess):
    """One container; its multiplexed attach stream split into the monitor's three pipes."""

    def __init__(
        self,
        backend: str,
        api: Any,
        container_id: str,
        sock: Any,
        limits: SandboxLimits,
        uid: int,
        role: Role = "tracer",
    ) -> None:
        super().__init__()
        self.backend = backend
        self.role = role
        self.api = api
        self.container_id = container_id
        self.limits = limits
        self.uid = uid
        self._sock_io = sock
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._sock.settimeout(None)  # an idle warm worker may wait long for its job
        self._returncode: int | None = None
        self._oom_reported = False
        self._killed_by_judge = False
        self._closed = False
        self._clock_root: int | None = None
        #: The uid's slot lock, released by close once the container is gone.
        self.lock_fd: int | None = None
        self._notes: list[str] = []
        self._stream_done = threading.Event()
        self.result_fd, self._result_w = os.pipe()
        self.output_fd, self._output_w = os.pipe()
        self._stdin_r, self.stdin_fd = os.pipe()
        st = os.fstat(self.stdin_fd)
        self._stdin_id = (st.st_dev, st.st_ino)
        tag = container_id[:12]
        self._threads = [
            threading.Thread(target=self._demux, name=f"docker-out-{tag}", daemon=True),
            threading.Thread(target=self._forward_stdin, name=f"docker-in-{tag}", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # -------------------------------------------------------------------------------------- threads

    def _demux(self) -> None:
        """Split the attach stream: stdout frames -> result pipe, stderr frames -> output pipe."""
        header = bytearray()
        remaining = 0
        target = self._output_w
        try:
            while True:
                chunk = self._sock.recv(1 << 16)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    if remaining == 0:
                        need = 8 - len(header)
                        header += view[:need]
                        view = view[need:]
                        if len(header) < 8:
                            break
                        target = self._result_w if header[0] == 1 else self._output_w
                        remaining = int.from_bytes(header[4:8], "big")
                        header.clear()
                        continue
                    piece = view[:remaining]
                    write_all(target, piece)
                    remaining -= len(piece)
                    view = view[len(piece) :]
        except OSError:
            pass  # the socket was shut down by close(), or the monitor closed its ends
        finally:
            for fd in (self._result_w, self._output_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._stream_done.set()

    def _forward_stdin(self) -> None:
        """Copy the stdin pipe to the container; its end of file half-closes the socket."""
        try:
            while not self._closed:
                if not readable([self._stdin_r], 0.5):
                    continue
                data = os.read(self._stdin_r, 1 << 16)
                if not data:
                    self._sock.shutdown(socket.SHUT_WR)
                    break
                self._sock.sendall(data)
        except OSError:
            pass  # the container is gone or close() shut the socket
        finally:
            os.close(self._stdin_r)

    # -------------------------------------------------------------------------------------- state

    @property
    def closed(self) -> bool:
        return self._closed

    def _poll(self) -> int | None:
        """The exit code once the container has exited (cached), else None."""
        if self._returncode is not None:
            return self._returncode
        try:
            state = self.api.inspect_container(self.container_id)["State"]
        except Exception as exc:
            if _status(exc) == 404:
                self._notes.append("the container disappeared before its exit code was read")
                self._returncode = -1
                return self._returncode
            note = f"cannot inspect the container: {type(exc).__name__}: {exc}"
            if note not in self._notes:
                self._notes.append(note)
            return None  # unknown: the caller's timeout decides
        if state.get("Running") or state.get("Status") in ("created", "configured", "running", "paused"):
            return None
        self._returncode = int(state.get("ExitCode", -1))
        self._oom_reported = bool(state.get("OOMKilled"))
        return self._returncode

    def apply_limits(self, limits: SandboxLimits) -> bool:
        """Tighten a running worker to a job's limits: rlimits of the program (CPU counted from now) and
        the container's memory and pids cgroups, written directly (the engine's API cannot update them).

        Only where the engine runs on this host and the judge may write the container's cgroups (root).
        """
        if limits.memory_mb > self.limits.memory_mb or limits.processes > self.limits.processes:
            return False
        pid = self._program_pid()
        if pid is None:
            return False
        try:
            plan = rlimit_plan(pid, limits, nproc=True)
            if plan is None:
                return False
            _set_rlimits(pid, plan, self.uid)
            files = _cgroup_files(pid)
            if limits.memory_mb < self.limits.memory_mb:
                if "memory" not in files:
                    return False
                value = str(limits.memory_mb * MIB)
                # v2 does not refuse a limit below the usage (v1: EBUSY): it reclaims, then OOM-kills.
                if "current" in files and int(Path(files["current"]).read_text()) > limits.memory_mb * MIB:
                    return False
                Path(files["memory"]).write_text(value)  # lower the limit first: memsw must stay >= it
                if "memsw" in files:
                    Path(files["memsw"]).write_text(value)
            if limits.processes < self.limits.processes:
                if "pids" not in files:
                    return False
                Path(files["pids"]).write_text(str(limits.processes))
        except (OSError, ValueError, subprocess.SubprocessError):
            return False  # e.g. EBUSY: the worker already uses more memory than the job may
        self.limits = limits
        return True

    def clock_root(self) -> int | None:
        """The container's first process, read once from the engine (None where it runs on another host)."""
        if self._clock_root is None:
            try:
                pid = int(self.api.inspect_container(self.container_id)["State"]["Pid"])
                ours = pid > 0 and self.container_id in Path(f"/proc/{pid}/cgroup").read_text()
                self._clock_root = pid if ours else 0
            except Exception:
                self._clock_root = 0
        return self._clock_root or None

    def _program_pid(self) -> int | None:
        """The host pid of the program (the one child of the container's shell), if it runs on this host."""
        try:
            shell = int(self.api.inspect_container(self.container_id)["State"]["Pid"])
            if shell <= 0:
                return None
            children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
            if len(children) != 1 or self.container_id not in Path(f"/proc/{shell}/cgroup").read_text():
                return None
            return int(children[0])
        except Exception:
            return None

    def kill(self) -> None:
        if self._returncode is not None:
            return
        # The attach stream ends when every process of the container has exited: then let the engine
        # notice, so that a memory kill is not mistaken for the judge's own.
        if self._stream_done.is_set() and self.wait(0.5) is not None:
            return
        try:
            self.api.kill(self.container_id, "SIGKILL")
        except Exception:
            return  # already exited (the engine refuses to kill a stopped container) or removed
        self._killed_by_judge = True

    def wait(self, timeout: float | None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.01
        while True:
            code = self._poll()
            if code is not None:
                return code
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            pause = delay if remaining is None else min(delay, remaining)
            # The attach stream ends when the program exits: wake on that while it is open, else poll.
            if self._stream_done.is_set():
                time.sleep(pause)
            else:
                self._stream_done.wait(pause)
            delay = min(delay * 2, 0.2)

    def exit_info(self) -> ExitInfo:
        code = self._returncode if self._returncode is not None else self.wait(0)
        info = ExitInfo(returncode=code, notes=list(self._notes))
        if self._oom_reported:
            info.oom_killed = True
        elif code == 137 and not self._killed_by_judge:
            info.oom_killed = True
            info.notes.append("exit 137 (SIGKILL) not sent by the judge: counted as the memory limit")
        return info

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.release_admission()
        problem = _remove(self.api, self.container_id)  # forced: kills it first if it still runs
        if problem:
            self._notes.append(problem)
        else:
            unlock(self.lock_fd)  # keep the slot locked if the container may still run
            self.lock_fd = None
        # The monitor closes stdin_fd after writing the job; close it here only if it is still our pipe
        # (its number may already belong to another file).
        try:
            st = os.fstat(self.stdin_fd)
            if stat.S_ISFIFO(st.st_mode) and (st.st_dev, st.st_ino) == self._stdin_id:
                os.close(self.stdin_fd)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        for fd in (self.result_fd, self.output_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        for thread in self._threads:
            thread.join(1.0)
        response = getattr(self._sock_io, "_response", None)
        for closable in (self._sock_io, response, self._sock):
            try:
                if closable is not None:
                    closable.close()
            except Exception:
                pass


def _set_rlimits(pid: int, plan: dict[str, tuple[int, int]], uid: int) -> None:
    """prlimit(2) another process: directly with CAP_SYS_RESOURCE, else from a helper running as its uid."""
    try:
        apply_rlimits(pid, plan)
        return
    except PermissionError:
        pass
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    options = [f"--{name}={soft}:{hard}" for name, (soft, hard) in plan.items()]
    subprocess.run(
        [prlimit, f"--pid={pid}", *options],
        user=uid,
        group=uid,
        extra_groups=[],
        env={"PATH": "/usr/bin:/bin", "LANG": "C"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=10,
        check=True,
    )


def _cgroup_files(pid: int) -> dict[str, str]:
    """The memory (and memory+swap) limit and pids.max files of a process's cgroups (v1, else v2; on v2
    also ``current``: memory.current, checked before lowering memory.max)."""
    files: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        names = set(controllers.split(","))
        if "memory" in names:
            files["memory"] = f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"
            files["memsw"] = f"/sys/fs/cgroup/memory{path}/memory.memsw.limit_in_bytes"
        if "pids" in names:
            files["pids"] = f"/sys/fs/cgroup/pids{path}/pids.max"
        if not controllers:  # the v2 tree, used only for what no v1 hierarchy holds
            if "memory" not in files:
                files["memory"] = f"/sys/fs/cgroup{path}/memory.max"
                files["current"] = f"/sys/fs/cgroup{path}/memory.current"
            files.setdefault("pids", f"/sys/fs/cgroup{path}/pids.max")
    return {key: file for key, file in files.items() if os.path.exists(file)}


__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_URL",
    "LABEL",
    "DockerBackend",
    "DockerProcess",
    "docker_url",
    "seccomp_profile",
]
