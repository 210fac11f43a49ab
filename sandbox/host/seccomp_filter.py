"""The seccomp filter of the ``bwrap`` backend: a deny-list compiled to BPF by Debian's python3-seccomp.

The policy is data (``RULES``); ``build_filter`` hands it to a short script run by the SYSTEM Python
(``/usr/bin/python3``, where the ``seccomp`` bindings live; the judge's own venv does not have them), which
writes the compiled BPF program on stdout. bwrap loads it with ``--seccomp FD`` just before it starts the
sandboxed command, so everything inside (setpriv, prlimit, the tracer or executor, user code) runs under it.
The zygote's children load the same program themselves after confining (sandbox.inside.confine).

Default action: allow. Refused: debugging other processes, namespaces and mounts, kernel keyrings, BPF,
io_uring, perf, userfaultfd, modules and kexec, clock and system settings, every socket family except
AF_UNIX, terminal injection (TIOCSTI, TIOCLINUX) and personality changes (ASLR off). ``clone3`` answers
ENOSYS (its flags sit in memory the filter cannot read), so glibc falls back to ``clone``, whose flags the
filter checks. System calls of another ABI (i386 ``int 0x80``, x32) kill the whole process (libseccomp's
bad-architecture action, set to KILL_PROCESS: its default kills only the calling thread).
"""

from __future__ import annotations

import errno
import json
import subprocess
import threading
from dataclasses import dataclass

SYSTEM_PYTHON = "/usr/bin/python3"

# Namespace flags of clone(2). CLONE_NEWTIME (0x80) is only reachable through clone3/unshare, both refused.
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
AF_UNIX = 1
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
PER_LINUX = 0

#: Refused outright with EPERM. Names unknown on this architecture are skipped by the builder.
DENIED: tuple[str, ...] = (
    # other processes' memory and state
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd",
    # namespaces, mounts, root changes
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
    "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr", "open_by_handle_at",
    "name_to_handle_at",
    # kernel attack surface unused by Python and JAX
    "bpf", "keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie", "uselib", "modify_ldt",
    "iopl", "ioperm", "vhangup", "syslog", "acct", "quotactl", "nfsservctl",
    # modules, kexec, machine state
    "init_module", "finit_module", "delete_module", "create_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname",
)  # fmt: skip


@dataclass(frozen=True)
class Cmp:
    """One argument comparison, spelled like libseccomp's ``Arg(index, op, datum[, datum_b])``."""

    arg: int
    op: str  # "EQ", "NE", "MASKED_EQ"
    datum: int
    datum_b: int | None = None


@dataclass(frozen=True)
class Rule:
    syscall: str
    errno: int
    #: All must hold for the rule to apply; several rules on one call are alternatives.
    cmps: tuple[Cmp, ...] = ()


def rules() -> list[Rule]:
    out = [Rule(name, errno.EPERM) for name in DENIED]
    out.append(Rule("clone3", errno.ENOSYS))  # glibc falls back to clone(2), whose flags are checked
    for flag in CLONE_NAMESPACE_FLAGS.values():
        out.append(Rule("clone", errno.EPERM, (Cmp(0, "MASKED_EQ", flag, flag),)))
    out.append(Rule("socket", errno.EAFNOSUPPORT, (Cmp(0, "NE", AF_UNIX),)))
    for request in (TIOCSTI, TIOCLINUX):
        out.append(Rule("ioctl", errno.EPERM, (Cmp(1, "MASKED_EQ", 0xFFFFFFFF, request),)))
    # Only PER_LINUX; libseccomp 2.5 cannot test one argument twice, so the query form is refused too.
    out.append(Rule("personality", errno.EPERM, (Cmp(0, "NE", PER_LINUX),)))
    return out


# Runs under /usr/bin/python3 -I: reads the rules as JSON on stdin, writes BPF on stdout, names of calls
# unknown on this architecture on stderr.
_BUILDER = r"""
import json, os, sys
import seccomp
spec = json.load(sys.stdin)
f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)  # not just the calling thread
skipped = []
for rule in spec:
    try:
        number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, rule["syscall"])
    except Exception:
        number = -1
    if number < 0:
        skipped.append(rule["syscall"])
        continue
    args = []
    for c in rule["cmps"]:
        extra = [] if c["datum_b"] is None else [c["datum_b"]]
        args.append(seccomp.Arg(c["arg"], getattr(seccomp, c["op"]), c["datum"], *extra))
    f.add_rule(seccomp.ERRNO(rule["errno"]), rule["syscall"], *args)
out = os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
f.export_bpf(out)
out.flush()
sys.stderr.write(json.dumps(sorted(set(skipped))))
"""


class SeccompUnavailable(Exception):
    pass


@dataclass(frozen=True)
class CompiledFilter:
    bpf: bytes
    #: Denied calls this architecture does not have (nothing to filter).
    skipped: tuple[str, ...]
    rule_count: int


_lock = threading.Lock()
_cache: dict[str, CompiledFilter] = {}


def build_filter(python: str = SYSTEM_PYTHON) -> CompiledFilter:
    """The compiled BPF program (built once per process and system Python, then cached)."""
    with _lock:
        cached = _cache.get(python)
        if cached is not None:
            return cached
        spec = [
            {
                "syscall": r.syscall,
                "errno": r.errno,
                "cmps": [{"arg": c.arg, "op": c.op, "datum": c.datum, "datum_b": c.datum_b} for c in r.cmps],
            }
            for r in rules()
        ]
        try:
            proc = subprocess.run(
                [python, "-I", "-c", _BUILDER],
                input=json.dumps(spec).encode(),
                capture_output=True,
                timeout=30,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SeccompUnavailable(f"cannot run {python} to build the seccomp filter: {exc}") from None
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
            raise SeccompUnavailable(
                f"{python} could not build the seccomp filter (apt-get install python3-seccomp): {tail[0]}"
            )
        bpf = proc.stdout
        # A classic BPF program is a sequence of 8-byte instructions, at most 4096 of them.
        if not bpf or len(bpf) % 8 or len(bpf) // 8 > 4096:
            raise SeccompUnavailable(f"the seccomp builder wrote {len(bpf)} bytes, not a BPF program")
        try:
            skipped = tuple(json.loads(proc.stderr.decode() or "[]"))
        except ValueError:
            skipped = ()
        compiled = CompiledFilter(bpf, skipped, len(spec))
        _cache[python] = compiled
        return compiled


def filter_fd(compiled: CompiledFilter) -> int:
    """A readable fd positioned at the start of the BPF program, for ``bwrap --seccomp FD``."""
    return data_fd(compiled.bpf, "jax-judge-seccomp")


def data_fd(data: bytes, name: str) -> int:
    """An anonymous in-memory file holding ``data``, offset 0 (bwrap reads it to the end, once)."""
    import os

    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
