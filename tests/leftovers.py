"""What a test run leaves behind: sandbox worker processes still alive, and new untracked files.

``tests/conftest.py`` takes a ``Snapshot`` when the session starts and calls ``Snapshot.leftovers`` when it
ends (on the xdist controller, after every worker has finished); anything found fails the run.

- A sandbox worker is a process running one of the in-sandbox programs (``python -m sandbox.harness``, a
  tracer or an executor: any ``-m sandbox.<module>``, subpackages included) with THIS checkout's
  virtual environment as its interpreter. Every backend runs the venv's Python at its host path, so the
  interpreter path tells this checkout's workers from those of other checkouts on a shared host. A forked
  child of a worker keeps its command line, so an escaped grandchild is found the same way.
- Only the session's own workers count: descendants of the process that runs the session. That process
  makes itself a child subreaper (``become_subreaper``), so a worker whose parents died (a service killed
  with SIGKILL, an escaped grandchild in a new session) is re-parented to it, not to init, and is still
  its descendant; a ``judge check``, a service or another test run of the same checkout started beside the
  session never is. Its orphans stay zombies until the session ends: a zombie runs nothing and is not
  counted. Where no subreaper can be had, every worker of the checkout started during the session counts.
- A stray file is a path ``git ls-files --others --exclude-standard`` lists at the end but not at the start
  (untracked and not ignored: caches and ``.venv`` are ignored). Outside a git work tree the same question
  is answered by walking the checkout, skipping the folders ``.gitignore`` names.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import re
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The in-sandbox programs: ``-m sandbox.harness`` today, a tracer and an executor after the split (in a
#: subpackage such as ``sandbox.inside.tracer``).
WORKER_MODULE = re.compile(r"^sandbox(\.[A-Za-z_][A-Za-z0-9_]*)+$")
#: Folders never walked when git cannot tell what is untracked.
_WALK_SKIP = frozenset(
    {".git", ".venv", ".cache", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "__pycache__"}
)


@dataclass(frozen=True)
class Process:
    pid: int
    ppid: int
    cmdline: tuple[str, ...]

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}): {' '.join(self.cmdline)[:200]}"


def _cmdline(pid: int) -> tuple[str, ...]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ()
    return tuple(part.decode(errors="replace") for part in raw.split(b"\0") if part)


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rpartition(")")[2].split()[1])


def is_worker(cmdline: tuple[str, ...], venv: Path) -> bool:
    """``cmdline`` runs an in-sandbox program (``-m sandbox.<name>``) with the interpreter of ``venv``."""
    if not cmdline or not cmdline[0].startswith(str(venv) + os.sep):
        return False
    return any(
        flag == "-m" and WORKER_MODULE.match(module) is not None
        for flag, module in itertools.pairwise(cmdline)
    )


def worker_processes(venv: Path) -> dict[int, Process]:
    """Every live process (zombies have no command line) that is a sandbox worker of ``venv``."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        cmdline = _cmdline(pid)
        if is_worker(cmdline, venv):
            found[pid] = Process(pid, _ppid(pid), cmdline)
    return found


def descendants(root: int) -> set[int]:
    """Pids of every live process below ``root`` in the process tree (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            pid = int(entry.name)
            children.setdefault(_ppid(pid), []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


#: ``prctl`` option: orphaned descendants are re-parented to this process instead of init.
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); False where that fails."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _git_untracked(root: Path) -> set[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return {p.decode(errors="replace") for p in done.stdout.split(b"\0") if p}


def _ignored_names(root: Path) -> set[str]:
    names = set(_WALK_SKIP)
    try:
        lines = (root / ".gitignore").read_text().splitlines()
    except OSError:
        return names
    for line in lines:
        line = line.strip().strip("/")
        if line and not line.startswith("#") and not any(c in line for c in "*?[!/"):
            names.add(line)
    return names


def _walk(root: Path) -> set[str]:
    skip = _ignored_names(root)
    found = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
        for name in files:
            if not name.endswith((".pyc", ".pyo")):
                found.add(os.path.relpath(os.path.join(folder, name), root))
    return found


def untracked_files(root: Path) -> set[str]:
    """Untracked, not ignored files of the checkout (every file outside a git work tree)."""
    listed = _git_untracked(root)
    return listed if listed is not None else _walk(root)


@dataclass(frozen=True)
class Snapshot:
    """What was there when the session started. ``session``: the pid whose descendants are the session's
    processes (a subreaper: ``become_subreaper``); None counts every worker of the checkout."""

    root: Path
    venv: Path
    workers: frozenset[int]
    files: frozenset[str]
    session: int | None = None

    @classmethod
    def take(cls, root: Path, *, session: int | None = None) -> Snapshot:
        venv = root / ".venv"
        return cls(root, venv, frozenset(worker_processes(venv)), frozenset(untracked_files(root)), session)

    def new_workers(self) -> list[Process]:
        found = worker_processes(self.venv)
        mine = descendants(self.session) if self.session is not None else set(found)
        return [p for pid, p in sorted(found.items()) if pid in mine and pid not in self.workers]

    def new_files(self) -> list[str]:
        return sorted(untracked_files(self.root) - self.files)

    def leftovers(self, grace_s: float = 10.0, *, files: bool = True) -> list[str]:
        """One line per leftover. Workers killed a moment ago may still be exiting: wait up to ``grace_s``.
        ``files``: also the new untracked files (not while another session of the checkout runs: its files
        cannot be told from this one's)."""
        deadline = time.monotonic() + grace_s
        workers = self.new_workers()
        while workers and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = self.new_workers()
        return [
            *(f"sandbox worker still alive: {p}" for p in workers),
            *(f"new untracked file in the checkout: {f}" for f in (self.new_files() if files else ())),
        ]


def describe(lines: Iterable[str]) -> str:
    return "\n".join(f"  {line}" for line in lines)
