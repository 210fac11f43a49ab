"""How long emptying a worker's cgroup takes on this host: v2 ``cgroup.kill`` against v2 freeze + SIGKILL +
thaw (kernels before 5.14) and v1 freezer + SIGKILL + thaw (the hierarchy this host uses).

    .venv/bin/python bench/bench_cgroup_kill.py [--rounds 15] [--procs 20]

Each round fills one cgroup per variant with ``--procs`` sleeping processes (a shell and its children),
then empties them in turn, variants interleaved so that load from other work on the machine falls on
each alike. Printed: the median and worst time per variant and the ratio of medians to ``cgroup.kill``.
Needs root and a writable cgroup2 tree (v1 variant: a v1 freezer hierarchy); a variant the host lacks is
skipped with the reason. Every cgroup made is removed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from sandbox.host.cgroups import detect, worker_cgroups
from sandbox.host.cgroups_base import ControllerState, ProcessCgroups
from sandbox.host.cgroups_v2 import V2Cgroups, discover_v2


def _unified() -> Path | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        if right.startswith("cgroup2 "):
            return Path(left.split()[4])
    return None


def _fill(cgroups: ProcessCgroups, procs: int) -> subprocess.Popen[bytes]:
    """A shell in the cgroup with ``procs - 1`` sleeping children; returns once all are members."""
    script = 'echo $$ > "$0"; ' + "sleep 600 & " * (procs - 1) + "wait"
    shell = subprocess.Popen(["/bin/sh", "-c", script, str(cgroups.procs_files()[0])])
    deadline = time.monotonic() + 30
    while len(cgroups.members()) < procs:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(cgroups.members())} of {procs} processes joined")
        time.sleep(0.005)
    return shell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--procs", type=int, default=20)
    args = parser.parse_args()
    name = f"jax-judge-bench-{os.getpid()}"
    variants: dict[str, Callable[[int], ProcessCgroups]] = {}
    parents: list[Path] = []

    mount = _unified()
    if mount is None:
        print("v2 variants skipped: no cgroup2 hierarchy mounted")
    else:
        states: dict[str, ControllerState] = discover_v2(mount, "/", "/", name).states
        if states["freezer"].parent is None:
            print(f"v2 variants skipped: {states['freezer'].reason}")
        else:
            parents.append(states["freezer"].parent)
            core = {c: s for c, s in states.items() if c in ("freezer", "cpuacct")}

            def v2(use_kill: bool) -> Callable[[int], ProcessCgroups]:
                def make(n: int) -> ProcessCgroups:
                    cgroups = worker_cgroups(core, f"b-{os.getpid()}-{n}-{int(use_kill)}")
                    assert isinstance(cgroups, V2Cgroups)
                    cgroups.use_cgroup_kill = use_kill
                    return cgroups

                return make

            variants["v2 cgroup.kill"] = v2(True)
            variants["v2 freeze+SIGKILL"] = v2(False)
    v1 = detect(name, version="1")
    freezer = v1.states["freezer"]
    if freezer.parent is None:
        print(f"v1 variant skipped: {freezer.reason}")
    else:
        parents.append(freezer.parent)
        variants["v1 freezer+SIGKILL"] = lambda n: worker_cgroups(
            {"freezer": freezer}, f"b-{os.getpid()}-{n}-v1"
        )
    for state in v1.states.values():
        if state.parent is not None and state.parent not in parents:
            parents.append(state.parent)

    times: dict[str, list[float]] = {label: [] for label in variants}
    try:
        for n in range(args.rounds):
            for label, make in variants.items():
                cgroups = make(n)
                shell = _fill(cgroups, args.procs)
                started = time.perf_counter()
                emptied = cgroups.kill_all(timeout=10.0)
                times[label].append(time.perf_counter() - started)
                shell.wait()
                assert emptied and not cgroups.remove(), label
    finally:
        for parent in parents:
            for child in sorted(parent.glob("b-*"), reverse=True):
                child.rmdir()
            parent.rmdir()
    if not times:
        return
    base = statistics.median(next(iter(times.values())))
    print(f"{args.procs} processes per cgroup, {args.rounds} rounds, interleaved")
    print(f"{'variant':<22} {'median ms':>10} {'worst ms':>10} {'ratio':>7}")
    for label, values in times.items():
        median = statistics.median(values)
        print(f"{label:<22} {median * 1e3:>10.2f} {max(values) * 1e3:>10.2f} {median / base:>7.2f}")


if __name__ == "__main__":
    main()
