"""The ``bwrap`` backend's command lines (``sandbox.backends.bwrap``): bwrap's options and file tree, the uid
drop (setpriv), the generated passwd and group files, and the shell that joins a worker's cgroups before it
execs the rest."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from sandbox.backends.bwrap_settings import BwrapSettings
from sandbox.host.cgroups import ProcessCgroups
from sandbox.host.command import MIB, program_env

#: Joins every cgroup.procs file given, then execs the rest: bwrap and everything under it start inside.
JOIN = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'
)
#: Names under a site-packages folder that must never be visible inside (copies of trusted project code).
PROJECT_PACKAGES = ("judge", "reference", "problems")
#: The top-level system folders (or links to them) bound read-only beside /usr.
SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
OUTER_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
DEFAULT_CPU_SHARES = 1024


@dataclass
class Launch:
    argv: list[str]
    fds: tuple[int, ...]
    cgroups: ProcessCgroups | None
    startup_shares: int = DEFAULT_CPU_SHARES

    def release(self) -> None:
        """Close the parent's copies of the data descriptors (the child has its own)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = ()


class MountTree:
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
        found += [site / name for name in PROJECT_PACKAGES if (site / name).is_dir()]
    return found


def setpriv_argv(uid: int) -> list[str]:
    return [
        "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
    ]  # fmt: skip


def passwd_file(uids: list[int]) -> bytes:
    """A passwd file with root, nobody and one ``judge`` user per uid (the zygote's children use many)."""
    names = [("judge" if len(uids) == 1 else f"judge{uid}", uid) for uid in uids]
    users = "".join(f"{name}:x:{uid}:{uid}:sandboxed code:/tmp:/usr/sbin/nologin\n" for name, uid in names)
    return (
        "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        + users
        + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    ).encode()


def group_file(uids: list[int]) -> bytes:
    groups = "".join(f"{'judge' if len(uids) == 1 else f'judge{uid}'}:x:{uid}:\n" for uid in uids)
    return f"root:x:0:\n{groups}nogroup:x:65534:\n".encode()


#: Inside a worker's bwrap: setpriv needs these three to switch uid, clear groups and empty the bounding set;
#: it drops them all before the program starts.
SETPRIV_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
#: Inside the zygote's bwrap: each forked tracer also unshares namespaces and mounts its private /tmp and
#: /proc (CAP_SYS_ADMIN) before it drops every capability.
ZYGOTE_CAPS = ("CAP_SYS_ADMIN", *SETPRIV_CAPS)


def joined(argv: list[str], cgroups: ProcessCgroups | None) -> list[str]:
    """``argv`` started inside the cgroups (a shell joins each, then execs it), or as it is without any."""
    if cgroups is None or not cgroups.procs_files():
        return argv
    files = [str(f) for f in cgroups.procs_files()]
    return ["/bin/sh", "-c", JOIN, "jax-judge-join", str(len(files)), *files, *argv]


def bwrap_argv(
    s: BwrapSettings,
    bwrap: str | None,
    passwd_fd: int,
    group_fd: int,
    *,
    seccomp_fd: int | None,
    caps: tuple[str, ...],
    module: str,
) -> list[str]:
    """bwrap and its options up to ``--``: namespaces, the file tree (``MountTree``), the working directory,
    the capabilities kept (``caps``), the seccomp filter (its fd, or None: the zygote's children apply it)
    and the program's environment (``module``'s)."""
    args = [
        bwrap or "bwrap",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--hostname", "sandbox",
    ]  # fmt: skip
    fs = MountTree()
    # Kernel filesystems and the private tmpfs first: a venv or checkout that lives under /tmp on the host
    # (a CI clone, say) is then bound on top of the empty tmpfs instead of being hidden by it.
    fs.args += ["--proc", "/proc", "--dev", "/dev"]
    fs.tmpfs("/tmp", s.tmp_mb * MIB)
    fs.tmpfs("/dev/shm", s.shm_mb * MIB)
    fs.ro_bind("/usr")
    for name in SYSTEM_LINKS:
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
