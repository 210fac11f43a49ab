"""What the side-by-side benches (``bench_checkouts.py``, ``bench_integrity.py``) share: a child process
answering one JSON line per request, a burst of submissions from several threads, and the floor's
environment (the sandbox's XLA flags in the driver's)."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class Child:
    """A child process answering one JSON line per request (``wait_ready`` reads its first, ``ready``)."""

    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
        )
        self.facts: dict[str, Any] = {}

    def wait_ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        facts = json.loads(line) if line else {}
        if not facts.get("ready"):
            raise SystemExit(f"{self.name}: the child did not start: {facts.get('error', 'it died')}")
        self.facts = facts

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: the child died")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise SystemExit(f"{self.name}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def burst(count: int, concurrency: int, once: Callable[[bool], float]) -> float:
    """Submissions per second when ``concurrency`` threads share ``count`` Submits (``once(False)``); the
    first failing Submit ends the burst with a RuntimeError (a rate of the rest would mean nothing)."""
    left = [count]
    lock = threading.Lock()
    failures: list[str] = []

    def worker() -> None:
        while True:
            with lock:
                if left[0] == 0 or failures:
                    return
                left[0] -= 1
            try:
                once(False)
            except (Exception, SystemExit) as exc:
                failures.append(f"{type(exc).__name__}: {exc}")

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"a Submit of the burst failed: {failures[0]}")
    return count / (time.perf_counter() - started)


def floor_env() -> dict[str, str]:
    """The driver's environment with the sandbox's XLA flags (and platform, x64, logging) in place."""
    sys.path.insert(0, str(ROOT))
    from sandbox.host.command import EXECUTOR, program_env

    sandboxed = program_env(str(ROOT), module=EXECUTOR)
    env = dict(os.environ)
    for key in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_ENABLE_X64", "TF_CPP_MIN_LOG_LEVEL"):
        env[key] = sandboxed[key]
    return env


# ------------------------------------------------------------------------------------------ older checkouts

#: Where each moved module of the engine lived before the rooms by role (issue 38: ``judge/core``,
#: ``sandbox/backends``, ``sandbox/host``, ``sandbox/session``, ``sandbox/shared``...), new name -> old name,
#: and the classes renamed with them, new -> old. The benches import the new names; a checkout from before
#: the rooms (the baseline of a side-by-side run) answers them with its old modules (``before_rooms``).
ROOMS_MOVED: dict[str, str] = {
    "judge.authoring.markdown": "judge.markdown",
    "judge.authoring.positions": "judge.positions",
    "judge.authoring.problem_archive": "judge.problem_archive",
    "judge.authoring.scaffold": "judge.scaffold",
    "judge.authoring.scaffold_kinds": "judge.scaffold_kinds",
    "judge.authoring.starter_names": "judge.starter_names",
    "judge.authoring.statement": "judge.statement",
    "judge.core.accelerators": "judge.accelerators",
    "judge.core.compare": "judge.compare",
    "judge.core.compile_failure": "judge.compile_failure",
    "judge.core.doctor": "judge.doctor",
    "judge.core.engine": "judge.engine",
    "judge.core.errors": "judge.errors",
    "judge.core.expected": "judge.expected",
    "judge.core.grader": "judge.grader",
    "judge.core.gradients": "judge.gradients",
    "judge.core.hidden": "judge.hidden",
    "judge.core.memo": "judge.memo",
    "judge.core.menu": "judge.menu",
    "judge.core.mesh_reference": "judge.mesh_reference",
    "judge.core.output_tree": "judge.output_tree",
    "judge.core.problem_hash": "judge.problem_hash",
    "judge.core.problems": "judge.problems",
    "judge.core.progress": "judge.progress",
    "judge.core.pytree_json": "judge.pytree_json",
    "judge.core.results": "judge.results",
    "judge.core.sandboxes": "judge.sandboxes",
    "judge.core.settings": "judge.settings",
    "judge.core.shardings": "judge.shardings",
    "judge.core.source": "judge.source",
    "judge.core.spec": "judge.spec",
    "judge.core.trusted_jax": "judge.trusted_jax",
    "judge.core.verdicts": "judge.verdicts",
    "judge.dispatch.grading_loop": "judge.dispatch.worker",
    "judge.feedback.display": "judge.display",
    "judge.feedback.figure_cache": "judge.figure_cache",
    "judge.feedback.mistakes": "judge.mistakes",
    "judge.feedback.printed": "judge.printed",
    "judge.feedback.reference_cost": "judge.reference_cost",
    "judge.feedback.report": "judge.report",
    "judge.grading.compiled_rules": "judge.rules",
    "judge.grading.transform_rules": "judge.rules_transform",
    "judge.service.api_errors": "judge.service.errors",
    "sandbox.backends": "sandbox.backends",
    "sandbox.backends.base": "sandbox.base",
    "sandbox.backends.bwrap": "sandbox.bwrap",
    "sandbox.backends.bwrap_cgroups": "sandbox.bwrap_cgroups",
    "sandbox.backends.bwrap_checks": "sandbox.bwrap_checks",
    "sandbox.backends.bwrap_command": "sandbox.bwrap_command",
    "sandbox.backends.bwrap_settings": "sandbox.bwrap_settings",
    "sandbox.backends.bwrap_zygote": "sandbox.bwrap_zygote",
    "sandbox.backends.docker": "sandbox.docker",
    "sandbox.backends.process": "sandbox.process",
    "sandbox.backends.slots": "sandbox.slots",
    "sandbox.host.cgroups": "sandbox.cgroups",
    "sandbox.host.cgroups_base": "sandbox.cgroups_base",
    "sandbox.host.cgroups_v1": "sandbox.cgroups_v1",
    "sandbox.host.cgroups_v2": "sandbox.cgroups_v2",
    "sandbox.host.command": "sandbox.command",
    "sandbox.host.procfs": "sandbox.procfs",
    "sandbox.host.resource_limits": "sandbox.limits",
    "sandbox.host.seccomp_filter": "sandbox.seccomp_filter",
    "sandbox.host.waitfd": "sandbox.waitfd",
    "sandbox.session.forkserver": "sandbox.forkserver",
    "sandbox.session.monitor": "sandbox.monitor",
    "sandbox.session.pool": "sandbox.pool",
    "sandbox.session.pool_refill": "sandbox.pool_refill",
    "sandbox.session.pool_slots": "sandbox.pool_slots",
    "sandbox.session.pool_state": "sandbox.pool_state",
    "sandbox.session.starts": "sandbox.starts",
    "sandbox.shared.layouts": "sandbox.shardings",
    "sandbox.shared.output_mark": "sandbox.output_mark",
    "sandbox.shared.schedclock": "sandbox.schedclock",
    "sandbox.shared.transforms": "sandbox.transforms",
    "sandbox.shared.tree": "sandbox.tree",
    "sandbox.shared.wire": "sandbox.protocol",
}
ROOMS_RENAMED: dict[str, str] = {
    "BwrapProcess": "BwrapWorker",
    "DockerProcess": "DockerWorker",
    "GradingLoop": "GradingWorker",
    "GradingProcesses": "Pair",
    "NodeProcess": "WorkerProcess",
    "PopenProcess": "PopenWorker",
    "ProcessCgroups": "WorkerCgroups",
    "ProcessPool": "WorkerPool",
    "ProcessStartError": "WorkerStartError",
    "ProcessesSource": "PairSource",
    "SandboxedProcess": "Worker",
}


def before_rooms(root: Path) -> None:
    """Let this process import the engine's new module names from ``root`` when ``root`` is a checkout from
    before the rooms: an import finder answers each moved name with the old module (its renamed classes
    also under their new names) and each new room with an empty package."""
    if (root / "judge" / "core").is_dir():
        return
    sys.meta_path.insert(0, _OldRooms())


class _OldRooms(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        old = ROOMS_MOVED.get(fullname)
        if old == fullname:  # an old module that is a room now (``sandbox.backends``): itself, as a package
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None:
                spec.submodule_search_locations = []  # its modules are answered by this finder
            return spec
        if old is not None:
            return importlib.util.spec_from_loader(fullname, _Alias(old))
        if any(new.startswith(fullname + ".") for new in ROOMS_MOVED):
            found = importlib.machinery.PathFinder.find_spec(fullname, path)
            # A package the old checkout has (``judge``, ``judge.feedback``) is itself; a new room is empty.
            return found if found is not None else importlib.util.spec_from_loader(fullname, _Alias(None))
        return None


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str | None) -> None:
        self.old = old

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        if self.old is None:  # a new room: an empty package whose modules this finder answers
            module = ModuleType(spec.name)
            module.__path__ = []
            return module
        module = importlib.import_module(self.old)
        for new, old in ROOMS_RENAMED.items():
            if hasattr(module, old) and not hasattr(module, new):
                setattr(module, new, getattr(module, old))
        return module

    def exec_module(self, module: ModuleType) -> None:
        return None
