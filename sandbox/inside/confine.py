"""Confine a freshly forked tracer before any user code runs (Linux, called as root inside the zygote's
bubblewrap sandbox, which keeps CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID and CAP_SETPCAP for this).

In order:

1. new mount, network, IPC and UTS namespaces of its own (no abstract socket, SysV IPC or hostname shared
   with sibling tracers);
2. a private, size-capped tmpfs on ``/tmp`` and ``/dev/shm``, and a new ``/proc`` with ``hidepid=invisible``
   (it sees its own processes only, not its siblings' or the zygote's);
3. the rlimits of the job;
4. an empty capability bounding set, then the slot's uid and gid with no supplementary groups (all
   capabilities are gone), an empty inheritable set, ``no_new_privs``;
5. the judge's seccomp filter (the same BPF program bwrap loads for its other sandboxes).

Then it checks the result from ``/proc/self/status`` and raises ``ConfinementError`` if anything is off. The
PID namespace stays the zygote's (a namespace init would ignore SIGXCPU and other default-action signals);
siblings are separated by uid, ``hidepid`` and seccomp (no ptrace).
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
from collections.abc import Mapping

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_REC, MS_PRIVATE = 1 << 14, 1 << 18
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "data": resource.RLIMIT_DATA,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "core": resource.RLIMIT_CORE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
}


class ConfinementError(Exception):
    pass


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise ConfinementError(f"{what}: {os.strerror(errno)}")


def _mount_points() -> list[str]:
    """Mount points of this mount namespace (``/proc/self/mountinfo``, octal escapes undone)."""
    points = []
    with open("/proc/self/mountinfo", "rb") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) > 4:
                points.append(re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), fields[4]).decode())
    return points


def _open_mounts_under(target: str) -> list[tuple[str, int]]:
    """The outermost mounts strictly under ``target`` (the venv and the sandbox package of a checkout that
    lives under /tmp, bound there by bwrap), each with an O_PATH descriptor that still reaches it after a
    new tmpfs covers ``target``."""
    prefix = target.rstrip("/") + "/"
    under = sorted({p for p in _mount_points() if p.startswith(prefix)}, key=len)
    outermost = [p for p in under if not any(p.startswith(q.rstrip("/") + "/") for q in under if q != p)]
    return [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in outermost]


def _traversable_dirs(path: str) -> None:
    """Create the missing directories of ``path`` as bwrap does for its binds: mode 0711, so the user can
    pass through them to what is bound there but cannot list them."""
    missing = []
    while path and not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for directory in reversed(missing):
        os.mkdir(directory)
        os.chmod(directory, 0o711)


def _bind_again(kept: list[tuple[str, int]]) -> None:
    """Bind each kept mount at its old path inside the new tmpfs, read-only."""
    for path, fd in kept:
        try:
            is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
            _traversable_dirs(path if is_dir else os.path.dirname(path))
            if not is_dir:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
            source = f"/proc/self/fd/{fd}".encode()
            _check(_libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None), f"bind {path}")
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
            _check(_libc.mount(None, path.encode(), None, flags, None), f"read-only {path}")
        finally:
            os.close(fd)


def set_rlimits(rlimits: Mapping[str, tuple[int, int]]) -> None:
    for name, (soft, hard) in rlimits.items():
        resource.setrlimit(RLIMITS[name], (soft, hard))


def confine(
    uid: int,
    rlimits: Mapping[str, tuple[int, int]],
    tmp_bytes: int,
    shm_bytes: int,
    bpf: bytes | None,
) -> None:
    """Steps 1-5 of the module docstring, then a check. Raises ConfinementError on any failure."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    for target, size in (("/tmp", tmp_bytes), ("/dev/shm", shm_bytes)):
        kept = _open_mounts_under(target)
        options = f"size={size},mode=1777".encode()
        _check(
            _libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options), f"mount {target}"
        )
        _bind_again(kept)
    proc_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _libc.mount(b"proc", b"/proc", b"proc", proc_flags, b"hidepid=invisible") != 0:
        _check(_libc.mount(b"proc", b"/proc", b"proc", proc_flags, b"hidepid=2"), "mount /proc")
    set_rlimits(rlimits)
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # from root to another uid: the permitted and effective sets empty
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "clear capabilities")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if bpf:
        buffer = ctypes.create_string_buffer(bpf, len(bpf))
        program = _SockFprog(len(bpf) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0), "seccomp")
    verify(uid, seccomp=bpf is not None)


def verify(uid: int, *, seccomp: bool) -> None:
    with open("/proc/self/status") as handle:
        status = dict(line.split(":", 1) for line in handle.read().splitlines() if ":" in line)
    expected = {
        "Uid": "\t".join([str(uid)] * 4),
        "Gid": "\t".join([str(uid)] * 4),
        "Groups": "",
        "NoNewPrivs": "1",
        **{name: "0" * 16 for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    }
    if seccomp:
        expected["Seccomp"] = "2"
    wrong = {
        key: status.get(key, "").strip()
        for key, value in expected.items()
        if status.get(key, "").strip() != value
    }
    if wrong:
        raise ConfinementError(f"the tracer is not confined as it should be: {wrong}")
