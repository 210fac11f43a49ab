"""cgroup v2 for the bwrap backend, against a fake unified tree that answers like the kernel.

``FakeKernel`` stands in for the kernel's cgroupfs over a temp dir laid out like ``/sys/fs/cgroup``: a
``mkdir`` fills in the interface files (the core ones, plus those of each controller the parent enables),
``cgroup.subtree_control`` accepts only delegated controllers and refuses a domain controller (memory) in
a non-root cgroup that holds processes (the "no internal processes" rule), ``cgroup.procs`` moves a pid,
``cgroup.kill`` SIGKILLs every member, ``cgroup.freeze`` shows in ``cgroup.events``, ``rmdir`` refuses a
cgroup with members or children, and exited processes leave ``cgroup.procs`` as they do on Linux. The
members are real ``sleep`` processes started by the tests, so a kill is a real kill.

The real-kernel tests at the end use this host's unified hierarchy, which has no controllers (they are
bound to v1) but does have ``cgroup.kill``, ``cgroup.freeze`` and ``cpu.stat``.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.host import cgroups_base
from sandbox.host.cgroups import adopt, detect, stale_children, worker_cgroups
from sandbox.host.cgroups_base import KernelFiles
from sandbox.host.cgroups_v2 import V2Cgroups, discover_v2, shares_to_weight

MIB = 1 << 20
ALL = "cpuset cpu io memory hugetlb pids rdma misc"
DOMAIN = {"memory", "io", "hugetlb", "rdma", "misc"}
CORE = {
    "cgroup.controllers": "",
    "cgroup.subtree_control": "",
    "cgroup.procs": "",
    "cgroup.events": "populated 0\nfrozen 0\n",
    "cgroup.freeze": "0\n",
    "cgroup.type": "domain\n",
    "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
}
PER_CONTROLLER = {
    "memory": {
        "memory.max": "max\n",
        "memory.current": "0\n",
        "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
        "memory.swap.max": "max\n",
    },
    "pids": {"pids.max": "max\n", "pids.current": "0\n"},
    "cpu": {"cpu.max": "max 100000\n", "cpu.weight": "100\n"},
}


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie): what cgroup.procs lists on Linux."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class FakeKernel(KernelFiles):
    """cgroupfs semantics over a plain directory tree rooted at ``mount`` (see the module docstring)."""

    def __init__(self, mount: Path, *, cgroup_kill: bool = True, swap: bool = True) -> None:
        self.mount = mount
        self.cgroup_kill = cgroup_kill
        self.swap = swap
        self.log: list[tuple[str, str]] = []
        mount.mkdir(parents=True, exist_ok=True)
        for name, text in CORE.items():
            (mount / name).write_text(text)
        (mount / "cgroup.controllers").write_text(ALL + "\n")
        (mount / "cgroup.subtree_control").write_text("cpu memory pids\n")

    # --- helpers for the tests
    def make(self, relative: str, procs: frozenset[int] | set[int] = frozenset()) -> Path:
        """A cgroup of the tree (parents too) holding ``procs``, as systemd leaves a unit with Delegate=yes:
        every controller its parent has is enabled down to it (``cgroup.controllers``)."""
        path = self.mount
        for part in Path(relative).parts:
            if path != self.mount:
                (path / "cgroup.subtree_control").write_text((path / "cgroup.controllers").read_text())
            path = path / part
            if not path.exists():
                self.mkdir(path)
        (path / "cgroup.procs").write_text("".join(f"{p}\n" for p in procs))
        return path

    def put(self, path: Path, text: str) -> None:
        path.write_text(text)

    # --- the kernel's side
    def read(self, path: Path) -> str:
        text = path.read_text()
        if path.name == "cgroup.procs":
            return "".join(f"{p}\n" for p in text.split() if _alive(int(p)))
        return text

    def write(self, path: Path, value: str) -> None:
        self.log.append((str(path.relative_to(self.mount)), value))
        directory, name = path.parent, path.name
        if not directory.is_dir() or not (directory / "cgroup.procs").exists():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        if name == "cgroup.subtree_control":
            self._subtree(directory, value)
        elif name == "cgroup.procs":
            self._move(directory, int(value))
        elif name == "cgroup.kill":
            if not (directory / "cgroup.kill").exists():
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            for pid in self._members(directory):
                os.kill(pid, signal.SIGKILL)
        elif name == "cgroup.freeze":
            frozen = value.strip()
            (directory / "cgroup.freeze").write_text(f"{frozen}\n")
            (directory / "cgroup.events").write_text(f"populated 1\nfrozen {frozen}\n")
        elif not path.exists():
            raise PermissionError(errno.EACCES, "Permission denied", str(path))  # no such interface file
        else:
            path.write_text(value)

    def mkdir(self, path: Path, exist_ok: bool = False) -> None:
        if path.exists():
            if exist_ok:
                return
            raise FileExistsError(errno.EEXIST, "File exists", str(path))
        path.mkdir()
        enabled = (path.parent / "cgroup.subtree_control").read_text().split()
        for name, text in CORE.items():
            (path / name).write_text(text)
        (path / "cgroup.controllers").write_text(" ".join(enabled) + "\n")
        if self.cgroup_kill:
            (path / "cgroup.kill").write_text("")
        for controller in enabled:
            for name, text in PER_CONTROLLER.get(controller, {}).items():
                if name != "memory.swap.max" or self.swap:
                    (path / name).write_text(text)

    def rmdir(self, path: Path) -> None:
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        if self._members(path) or any(child.is_dir() for child in path.iterdir()):
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        shutil.rmtree(path)

    def _members(self, directory: Path) -> set[int]:
        return {int(p) for p in self.read(directory / "cgroup.procs").split()}

    def _subtree(self, directory: Path, value: str) -> None:
        enabled = set((directory / "cgroup.subtree_control").read_text().split())
        available = set((directory / "cgroup.controllers").read_text().split())
        for token in value.split():
            controller = token[1:]
            if token[0] == "+":
                if controller not in available:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(directory))
                if controller in DOMAIN and directory != self.mount and self._members(directory):
                    raise OSError(errno.EBUSY, "Device or resource busy", str(directory))
                enabled.add(controller)
            else:
                enabled.discard(controller)
        (directory / "cgroup.subtree_control").write_text(" ".join(sorted(enabled)) + "\n")

    def _move(self, directory: Path, pid: int) -> None:
        domain = set((directory / "cgroup.subtree_control").read_text().split()) & DOMAIN
        if domain and directory != self.mount:
            raise OSError(errno.EBUSY, "Device or resource busy", str(directory))
        for procs in self.mount.rglob("cgroup.procs"):
            pids = procs.read_text().split()
            if str(pid) in pids:
                procs.write_text("".join(f"{p}\n" for p in pids if p != str(pid)))
        with open(directory / "cgroup.procs", "a") as handle:
            handle.write(f"{pid}\n")


@pytest.fixture()
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeKernel:
    fake = FakeKernel(tmp_path / "cgroup")
    monkeypatch.setattr(cgroups_base, "KERNEL", fake)
    return fake


@pytest.fixture()
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Real processes to put in fake cgroups; whatever a test leaves alive is killed and reaped."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def sleep(started: list[subprocess.Popen[bytes]]) -> int:
    proc = subprocess.Popen(["sleep", "60"])
    started.append(proc)
    return proc.pid


def mountinfo(tmp_path: Path, kernel: FakeKernel, *, v1: bool = False) -> str:
    lines = []
    if v1:
        for controller in ("memory", "pids"):
            (tmp_path / controller).mkdir()
            lines.append(f"30 25 0:26 / {tmp_path / controller} rw - cgroup cgroup rw,{controller}\n")
    lines.append(f"32 25 0:28 / {kernel.mount} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
    path = tmp_path / "mountinfo"
    path.write_text("".join(lines))
    return str(path)


def own_cgroup(tmp_path: Path, path: str) -> str:
    own = tmp_path / "self-cgroup"
    own.write_text(f"0::{path}\n")
    return str(own)


def setup(tmp_path: Path, kernel: FakeKernel, own: str, **kwargs: object) -> V2Cgroups:
    found = detect("jj", mountinfo=mountinfo(tmp_path, kernel), proc_cgroup=own_cgroup(tmp_path, own))
    assert found.version == 2, found.summary
    cgroups = worker_cgroups(found.states, "t0-1-0")
    assert isinstance(cgroups, V2Cgroups)
    return cgroups


# ------------------------------------------------------------------------------------------ detection


def test_delegated_unit_gets_every_controller_and_the_judge_leaves_for_a_leaf(
    tmp_path: Path, kernel: FakeKernel
) -> None:
    """A systemd unit with Delegate=yes: the judge is alone in its cgroup, so it moves itself into a leaf
    and enables memory, pids and cpu for its workers (the no-internal-processes rule is kept)."""
    base = kernel.make("system.slice/judge.service", {os.getpid()})
    found = detect(
        "jj",
        mountinfo=mountinfo(tmp_path, kernel),
        proc_cgroup=own_cgroup(tmp_path, "/system.slice/judge.service"),
    )
    assert found.version == 2 and found.mount == kernel.mount
    for controller in ("memory", "pids", "cpu", "cpuacct", "freezer"):
        assert found.states[controller].parent == base / "jj", found.states[controller]
        assert found.states[controller].version == 2
    assert kernel.read(base / "jj.self" / "cgroup.procs").split() == [str(os.getpid())]
    assert kernel.read(base / "cgroup.procs") == ""
    assert set(kernel.read(base / "cgroup.subtree_control").split()) == {"cpu", "memory", "pids"}
    assert set(kernel.read(base / "jj" / "cgroup.subtree_control").split()) == {"cpu", "memory", "pids"}
    assert "cgroup v2" in found.summary and "moved itself" in found.summary
    assert "lost" not in found.summary
    assert "cgroup.kill" in found.states["freezer"].detail
    again = detect(  # a second backend in the same judge: nothing more to move or enable
        "jj",
        mountinfo=mountinfo(tmp_path, kernel),
        proc_cgroup=own_cgroup(tmp_path, "/system.slice/judge.service/jj.self"),
        root=base,
    )
    assert again.states == found.states and "moved" not in again.summary


def test_shared_cgroup_is_not_emptied_and_memory_falls_back_with_the_reason(
    tmp_path: Path, kernel: FakeKernel, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    """A login shell or CI step shares the judge's cgroup: nothing is moved; memory cannot be delegated
    (EBUSY), the threaded controllers pids and cpu still can, and doctor says what is lost."""
    other = sleep(sleepers)
    base = kernel.make("user.slice/session-1.scope", {os.getpid(), other})
    found = detect(
        "jj",
        mountinfo=mountinfo(tmp_path, kernel),
        proc_cgroup=own_cgroup(tmp_path, "/user.slice/session-1.scope"),
    )
    memory = found.states["memory"]
    assert memory.parent is None
    assert "no-internal-processes" in memory.reason and "cgroup.subtree_control" in memory.reason
    assert found.states["pids"].parent == found.states["cpu"].parent == base / "jj"
    assert found.states["freezer"].parent == base / "jj"  # cgroup.kill needs no controller
    assert set(kernel.read(base / "cgroup.procs").split()) == {str(os.getpid()), str(other)}
    assert not (base / "jj.self").exists()
    assert f"other processes ({other})" in found.summary and "Delegate=yes" in found.summary
    assert "without memory" in found.summary and "RLIMIT_DATA" in found.summary
    assert "one memory bound over all of a worker's processes" in found.summary


def test_controllers_the_parent_does_not_delegate_are_named(tmp_path: Path, kernel: FakeKernel) -> None:
    base = kernel.make("svc", {os.getpid()})
    (base / "cgroup.controllers").write_text("pids\n")
    found = detect("jj", mountinfo=mountinfo(tmp_path, kernel), proc_cgroup=own_cgroup(tmp_path, "/svc"))
    for controller in ("memory", "cpu"):
        assert found.states[controller].parent is None
        assert found.states[controller].reason == f"not delegated: missing from {base / 'cgroup.controllers'}"
    assert found.states["pids"].parent == base / "jj"
    assert "without memory, cpu" in found.summary and "a CPU quota" in found.summary


def test_no_writable_cgroup_means_no_cgroups_and_a_clear_line(tmp_path: Path, kernel: FakeKernel) -> None:
    found = detect(
        "jj",
        mountinfo=mountinfo(tmp_path, kernel),
        proc_cgroup=own_cgroup(tmp_path, "/x"),
        root=tmp_path / "not-a-cgroup",
    )
    assert found.version == 2 and not found.active
    assert all(state.parent is None for state in found.states.values())
    assert "is not a cgroup v2 directory" in found.states["memory"].reason
    assert "kills go by uid" in found.summary and "rlimits" in found.summary


def test_delegated_root_is_used_as_given_and_nobody_is_moved(tmp_path: Path, kernel: FakeKernel) -> None:
    """JUDGE_CGROUP_ROOT: an empty cgroup an administrator delegated; the judge stays where it is."""
    kernel.make("svc", {os.getpid()})
    root = kernel.make("jax")
    found = detect(
        "jj", mountinfo=mountinfo(tmp_path, kernel), proc_cgroup=own_cgroup(tmp_path, "/svc"), root=str(root)
    )
    assert found.states["memory"].parent == root / "jj"
    assert kernel.read(kernel.mount / "svc" / "cgroup.procs").split() == [str(os.getpid())]
    assert not (kernel.mount / "svc" / "jj.self").exists()


def test_hierarchy_root_delegates_without_moving(tmp_path: Path, kernel: FakeKernel) -> None:
    """The root cgroup is exempt from the no-internal-processes rule."""
    kernel.put(kernel.mount / "cgroup.procs", f"{os.getpid()}\n")
    found = detect("jj", mountinfo=mountinfo(tmp_path, kernel), proc_cgroup=own_cgroup(tmp_path, "/"))
    assert found.states["memory"].parent == kernel.mount / "jj"
    assert not (kernel.mount / "jj.self").exists()


def test_hybrid_host_uses_v1_and_says_why_unless_told(tmp_path: Path, kernel: FakeKernel) -> None:
    (kernel.mount / "cgroup.controllers").write_text("hugetlb\n")
    info = mountinfo(tmp_path, kernel, v1=True)
    own = tmp_path / "cg"
    own.write_text("5:pids:/\n4:memory:/\n0::/\n")
    found = detect("jj", mountinfo=info, proc_cgroup=str(own), create=False)
    assert found.version == 1 and not found.active
    assert "without memory, pids, cpu" in found.summary and "kills go by uid" in found.summary
    assert f"the cgroup2 tree at {kernel.mount} is not used (hybrid host: its controllers are hugetlb" in (
        found.summary
    )
    forced = detect("jj", mountinfo=info, proc_cgroup=str(own), version="2")
    assert forced.version == 2 and forced.states["memory"].parent is None
    assert "missing from" in forced.states["memory"].reason
    bad = detect("jj", mountinfo=info, proc_cgroup=str(own), version="3")
    assert bad.version is None and "JUDGE_CGROUP_VERSION must be 1 or 2, not '3'" in bad.summary


def test_no_hierarchy_at_all(tmp_path: Path) -> None:
    empty = tmp_path / "mountinfo"
    empty.write_text("")
    found = detect("jj", mountinfo=str(empty), proc_cgroup=str(empty))
    assert found.version is None and not found.active
    assert found.summary.startswith("no cgroups: no cgroup hierarchy mounted")


# ------------------------------------------------------------------------------------------ limits


def test_limits_are_written_to_the_v2_files(tmp_path: Path, kernel: FakeKernel) -> None:
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = kernel.mount / "svc" / "jj" / "t0-1-0"
    assert set(cgroups.dirs.values()) == {directory}
    assert cgroups.procs_files() == [directory / "cgroup.procs"]
    cgroups.set_limits(512 * MIB, 64, 0.5)
    assert kernel.read(directory / "memory.max") == str(512 * MIB)
    assert kernel.read(directory / "memory.swap.max") == "0"
    assert kernel.read(directory / "pids.max") == "64"
    assert kernel.read(directory / "cpu.max") == "50000 100000"
    cgroups.set_limits(256 * MIB, 32)  # no quota given: cpu.max untouched
    assert kernel.read(directory / "cpu.max") == "50000 100000"
    assert cgroups.set_cpu_shares(16) and kernel.read(directory / "cpu.weight") == "2"
    assert cgroups.set_cpu_shares(1024) and kernel.read(directory / "cpu.weight") == "100"
    assert shares_to_weight(2) == 1 and shares_to_weight(10**7) == 10_000
    cgroups.remove()


def test_no_swap_accounting_means_memory_max_only(tmp_path: Path, kernel: FakeKernel) -> None:
    kernel.swap = False
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    cgroups.set_limits(128 * MIB, 8)
    directory = next(iter(cgroups.dirs.values()))
    assert kernel.read(directory / "memory.max") == str(128 * MIB)
    assert not (directory / "memory.swap.max").exists()
    cgroups.remove()


def test_memory_is_never_lowered_below_what_is_in_use(tmp_path: Path, kernel: FakeKernel) -> None:
    """v2 would reclaim and then OOM-kill the worker inside the write: refuse instead, like v1's EBUSY."""
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = next(iter(cgroups.dirs.values()))
    assert cgroups.set_memory(1024 * MIB)
    kernel.put(directory / "memory.current", f"{300 * MIB}\n")
    writes = len(kernel.log)
    assert not cgroups.set_memory(256 * MIB)
    assert kernel.log[writes:] == [] and kernel.read(directory / "memory.max") == str(1024 * MIB)
    assert cgroups.set_memory(512 * MIB) and kernel.read(directory / "memory.max") == str(512 * MIB)
    cgroups.remove()


def test_without_delegated_controllers_limits_are_refused_not_faked(
    tmp_path: Path, kernel: FakeKernel
) -> None:
    base = kernel.make("svc", {os.getpid()})
    (base / "cgroup.controllers").write_text("\n")
    cgroups = setup(tmp_path, kernel, "/svc")
    assert set(cgroups.dirs) == {"cpuacct", "freezer"}
    cgroups.set_limits(128 * MIB, 8, 1.0)  # nothing to write: rlimits carry the limits
    assert not cgroups.set_memory(128 * MIB) and not cgroups.set_cpu_shares(16)
    assert cgroups.oom_kills() == 0
    assert [path for path, _ in kernel.log if "t0-1-0" in path] == []
    cgroups.remove()


# ------------------------------------------------------------------------------------------ reading


def test_oom_kills_come_from_memory_events(tmp_path: Path, kernel: FakeKernel) -> None:
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = next(iter(cgroups.dirs.values()))
    assert cgroups.oom_kills() == 0
    kernel.put(directory / "memory.events", "low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n")
    assert cgroups.oom_kills() == 2
    kernel.put(directory / "memory.events", "garbage\n")
    assert cgroups.oom_kills() == 0
    kernel.put(directory / "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    assert cgroups.cpu_seconds() == 1.5
    cgroups.remove()


# ------------------------------------------------------------------------------------------ killing


def test_kill_uses_cgroup_kill(
    tmp_path: Path, kernel: FakeKernel, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    pids = {sleep(sleepers), sleep(sleepers)}
    for pid in pids:
        kernel.write(cgroups.procs_files()[0], str(pid))
    assert cgroups.members() == pids
    start = len(kernel.log)
    assert cgroups.kill_all()
    assert [(Path(p).name, v) for p, v in kernel.log[start:]] == [("cgroup.kill", "1")]
    assert all(proc.wait(5) == -signal.SIGKILL for proc in sleepers)
    assert cgroups.members() == set()
    cgroups.remove()


@pytest.mark.parametrize("cgroup_kill", [True, False], ids=["cgroup.kill", "freeze"])
def test_signal_all_members_kills_without_waiting(
    tmp_path: Path, kernel: FakeKernel, sleepers: list[subprocess.Popen[bytes]], cgroup_kill: bool
) -> None:
    """``signal_all_members`` (a tracer stopped before hidden cases run): every member gets SIGKILL, by
    ``cgroup.kill`` or frozen, signalled and thawed; it says so without waiting for them to exit."""
    kernel.cgroup_kill = cgroup_kill
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = next(iter(cgroups.dirs.values()))
    pids = {sleep(sleepers), sleep(sleepers)}
    for pid in pids:
        kernel.write(directory / "cgroup.procs", str(pid))
    start = len(kernel.log)
    assert cgroups.signal_all_members()
    writes = [(Path(p).name, v) for p, v in kernel.log[start:]]
    expected = [("cgroup.kill", "1")] if cgroup_kill else [("cgroup.freeze", "1"), ("cgroup.freeze", "0")]
    assert writes == expected, writes
    assert all(proc.wait(5) == -signal.SIGKILL for proc in sleepers)
    cgroups.remove()


def test_kill_freezes_kills_every_member_then_thaws_without_cgroup_kill(
    tmp_path: Path, kernel: FakeKernel, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    """Before Linux 5.14 there is no cgroup.kill: freeze, SIGKILL each member, thaw."""
    kernel.cgroup_kill = False
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = next(iter(cgroups.dirs.values()))
    assert not (directory / "cgroup.kill").exists()
    pids = {sleep(sleepers), sleep(sleepers), sleep(sleepers)}
    for pid in pids:
        kernel.write(directory / "cgroup.procs", str(pid))
    start = len(kernel.log)
    assert cgroups.kill_all()
    writes = [(Path(p).name, v) for p, v in kernel.log[start:]]
    assert writes[:2] == [("cgroup.freeze", "1"), ("cgroup.freeze", "0")], writes
    assert all(proc.wait(5) == -signal.SIGKILL for proc in sleepers)
    assert kernel.read(directory / "cgroup.freeze").strip() == "0"  # left thawed, usable
    cgroups.remove()


def test_remove_kills_members_and_removes_only_the_worker(
    tmp_path: Path, kernel: FakeKernel, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = next(iter(cgroups.dirs.values()))
    kernel.write(directory / "cgroup.procs", str(sleep(sleepers)))
    assert cgroups.remove() == []
    assert not directory.exists() and directory.parent.is_dir()
    assert cgroups.dirs == {} and cgroups.remove() == []
    assert sleepers[0].wait(5) == -signal.SIGKILL


def test_remove_reports_a_cgroup_that_cannot_go(tmp_path: Path, kernel: FakeKernel) -> None:
    kernel.make("svc", {os.getpid()})
    cgroups = setup(tmp_path, kernel, "/svc")
    directory = next(iter(cgroups.dirs.values()))
    kernel.mkdir(directory / "child")  # a nested cgroup (the kernel refuses rmdir: EBUSY)
    notes = cgroups.remove(timeout=0.05)
    assert notes == [f"cgroup {directory} not removed: Device or resource busy"]


def test_stale_worker_of_a_dead_judge_is_swept(
    tmp_path: Path, kernel: FakeKernel, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    kernel.make("svc", {os.getpid()})
    found = detect("jj", mountinfo=mountinfo(tmp_path, kernel), proc_cgroup=own_cgroup(tmp_path, "/svc"))
    dead = subprocess.Popen(["true"])
    dead.wait()
    parent = kernel.mount / "svc" / "jj"
    stale, live = parent / f"t3-{dead.pid}-0", parent / f"t3-{os.getpid()}-0"
    kernel.mkdir(stale)
    kernel.mkdir(live)
    kernel.write(stale / "cgroup.procs", str(sleep(sleepers)))
    assert [child for _, child in stale_children(found.states)] == [stale]
    for state, child in stale_children(found.states):
        assert isinstance(adopt(state, child), V2Cgroups)
        assert adopt(state, child).remove() == []
    assert not stale.exists() and live.exists()
    assert sleepers[0].wait(5) == -signal.SIGKILL


def test_discover_without_create_writes_nothing(tmp_path: Path, kernel: FakeKernel) -> None:
    kernel.make("svc", {os.getpid()})
    setup_ = discover_v2(kernel.mount, "/", "/svc", "jj", create=False)
    assert kernel.log == [] and setup_.states["memory"].parent is None
    assert "does not exist" in setup_.states["memory"].reason


# ------------------------------------------------------------------------------------------ real kernel


def _real_unified() -> Path:
    """This host's cgroup2 mount when the test may create cgroups in it (root, writable)."""
    if os.geteuid() != 0:
        pytest.skip("creating cgroups needs root")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        if right.startswith("cgroup2 "):
            mount = Path(left.split()[4])
            if os.access(mount / "cgroup.procs", os.W_OK):
                return mount
    pytest.skip("no writable cgroup2 hierarchy on this host")


@pytest.fixture()
def real_parent() -> Iterator[tuple[Path, str]]:
    """(mount, a parent name of this test's own) on the real unified hierarchy; removed afterwards."""
    mount = _real_unified()
    name = f"jax-judge-test-{os.getpid()}"
    yield mount, name
    parent = mount / name
    if parent.is_dir():
        for child in parent.iterdir():
            if child.is_dir():
                child.rmdir()
        parent.rmdir()


def _join(procs: Path, script: str) -> subprocess.Popen[bytes]:
    """A shell that joins the cgroup, then runs ``script`` (its children start inside)."""
    return subprocess.Popen(["/bin/sh", "-c", f'echo $$ > "$0"; {script}', str(procs)])


@pytest.mark.parametrize("use_kill", [True, False], ids=["cgroup.kill", "freeze"])
def test_real_unified_hierarchy_kills_every_member(real_parent: tuple[Path, str], use_kill: bool) -> None:
    mount, name = real_parent
    own = "/"  # the host's own line is 0::/ here; any base works for the core files
    found = discover_v2(mount, "/", own, name, create=True)
    for controller in ("memory", "pids", "cpu"):
        if controller not in (mount / "cgroup.controllers").read_text().split():
            assert found.states[controller].parent is None
            assert "not delegated" in found.states[controller].reason
    assert found.states["freezer"].parent == mount / name
    cgroups = worker_cgroups(found.states, f"t0-{os.getpid()}-0")
    assert isinstance(cgroups, V2Cgroups)
    cgroups.use_cgroup_kill = use_kill
    shell = _join(cgroups.procs_files()[0], "sleep 60 & sleep 60 & i=0; while :; do i=$((i+1)); done")
    try:
        deadline = time.monotonic() + 10
        while len(cgroups.members()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        members = cgroups.members()
        assert shell.pid in members and len(members) == 3, members
        while not cgroups.cpu_seconds() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert (cgroups.cpu_seconds() or 0) > 0
        assert cgroups.kill_all()
        assert shell.wait(5) == -signal.SIGKILL
        assert cgroups.members() == set()
        for pid in members - {shell.pid}:
            assert not _alive(pid)
    finally:
        if shell.poll() is None:
            shell.kill()
        shell.wait()
        notes = cgroups.remove()
    assert notes == [] and not (mount / name / f"t0-{os.getpid()}-0").exists()


@pytest.mark.slow
def test_bwrap_worker_on_the_real_v2_tree(real_parent: tuple[Path, str]) -> None:
    """The bwrap backend told to use v2 on this hybrid host: its self-test and a tracer run in cgroups of
    the unified tree (core files only here), doctor says what is lost, a kill empties the cgroup and
    closing removes it."""
    from sandbox.backends.bwrap import BwrapBackend, BwrapProcess, BwrapSettings
    from sandbox.host.procfs import processes_of_uid
    from sandbox.host.resource_limits import SandboxLimits

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    mount, name = real_parent
    backend = BwrapBackend(BwrapSettings(cgroup_version="2", cgroup_parent=name))
    try:
        setup_ = backend.cgroup_setup()
        assert setup_.version == 2 and setup_.mount == mount
        protections = {p.name: p for p in backend.protections()}  # runs the self-test through v2 cgroups
        assert protections["cgroups"].active, protections["cgroups"]
        assert protections["cgroups"].detail.startswith(f"cgroup v2 (the unified hierarchy at {mount})")
        assert protections["cgroup freezer"].active and "cgroup.kill" in protections["cgroup freezer"].detail
        if not protections["cgroup memory"].active:
            assert "not delegated" in protections["cgroup memory"].detail
            assert "without memory" in protections["cgroups"].detail
        worker = backend.start_tracer(SandboxLimits(startup_time_s=60.0), 940)
        assert isinstance(worker, BwrapProcess)
        try:
            worker.wait_ready(120)
            cgroups = worker.cgroups
            assert isinstance(cgroups, V2Cgroups)
            directory = next(iter(cgroups.dirs.values()))
            assert directory.parent == mount / name
            program = worker.program_pid()
            assert program in cgroups.members()
            assert (cgroups.cpu_seconds() or 0) > 0  # importing JAX, counted by cpu.stat
            worker.kill()
            assert cgroups.members() == set()
        finally:
            worker.close()
        assert not directory.exists()
        assert processes_of_uid(worker.uid) == set()
    finally:
        backend.close()


def test_this_host_is_detected_as_it_is() -> None:
    """Whatever this host mounts, detection names it: v1 (saying why a cgroup2 tree beside it is unused),
    v2, or none."""
    kinds = []  # (filesystem type, mount options) of every mount
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        tail = line.partition(" - ")[2].split()
        if len(tail) >= 3:
            kinds.append((tail[0], set(tail[2].split(","))))
    v1 = any(kind == "cgroup" and options & {"memory", "pids", "cpu"} for kind, options in kinds)
    unified = any(kind == "cgroup2" for kind, _ in kinds)
    found = detect(create=False)
    if v1:
        assert found.version == 1 and found.summary.startswith("cgroup v1 (v1 hierarchies under ")
        assert ("hybrid host" in found.summary) == unified
    elif unified:
        assert found.version == 2 and found.summary.startswith("cgroup v2 (the unified hierarchy at ")
    else:
        assert found.version is None and found.summary.startswith("no cgroups")


def test_cgroup_names_stay_distinct_across_backends_of_one_process() -> None:
    """A backend made after another must not reuse a worker cgroup name the first may have left behind."""
    from sandbox.backends.bwrap import BwrapBackend

    first, second = BwrapBackend(), BwrapBackend()
    numbers = [next(first._names), next(second._names), next(first._names)]
    assert len(set(numbers)) == 3
