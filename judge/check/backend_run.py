"""Run problems' references and shipped value solutions on one JAX backend, in a process of its own that
holds the accelerator: ``python -m judge.check.backend_run PLATFORM OUT_DIR PROBLEM_DIR...``.

The ``backend`` check of ``judge check --backend PLATFORM`` starts one of these for every problem it checks
(an accelerator opens once per process, and one process at a time may hold a TPU chip). The code it runs
is the repository's own: each problem's reference and the files of its ``solutions/accepted/`` and
``solutions/wrong_answer/`` folders, the author's trusted code, the same trust as the reference (the
other folders' verdicts are about the sandbox, not numerics, and stay with the sandboxed grading). Each
runs under ``jax.jit`` with the problem's static arguments and ``[compare] matmul_precision`` on the
platform's default device, as a learner's notebook on that accelerator runs it, compiled with the
platform's own XLA options (the CPU keeps the judge's). For a problem with ``[gradient]`` the gradient
the problem checks is computed too.

Output, per problem ``OUT_DIR/<slug>/``: ``files.json`` (the solution files in order, as
``folder/name``), then for the reference (``r``) and each solution (``s<k>``) and each case index ``i``
``<who>.<i>.frame`` (``sandbox.shared.wire.dumps_tree`` of ``[output, gradient or None]``: data, never pickle)
or ``<who>.<i>.error`` (its failure as text). A problem that does not load, or that runs on several
devices, gets ``skipped.txt`` saying why. Exit 0 once every problem is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge.core.problems import Problem

#: Folders whose solutions differ from one backend to another only by their values.
VALUE_FOLDERS = ("accepted", "wrong_answer")


def run_function(problem: Problem, fn: Any) -> list[tuple[Any, Any] | str]:
    """``fn`` (the reference or a solution's function) under ``jax.jit`` on every case of ``problem``, on
    this process's default device: ``(output, gradient or None)`` per case on the host, or its failure."""
    from judge.core.errors import ProblemError
    from judge.core.expected import call_arguments, jit_with_gradient, matmul_precision
    from judge.core.trusted_jax import import_jax, to_host

    jax = import_jax()
    try:
        menu = problem.menu()
    except ProblemError as exc:
        return [f"the problem's menu module failed: {exc}"] * len(problem.cases)
    jitted = jit_with_gradient(problem, fn)
    results: list[tuple[Any, Any] | str] = []
    for case in problem.cases:
        try:
            args = call_arguments(jax, problem, case, menu)
            with matmul_precision(problem):
                result = jax.block_until_ready(jitted(*args))
            if problem.spec.gradient is not None:
                results.append((to_host(result[0]), to_host(result[1])))
            else:
                results.append((to_host(result), None))
        except Exception as exc:
            results.append(f"{type(exc).__name__}: {str(exc)[:2000]}")
    jax.clear_caches()
    return results


def solution_function(problem: Problem, file: Path) -> Any:
    """The problem's function as a shipped solution file defines it (imported afresh)."""
    from judge.core.problems import import_trusted_file

    return getattr(import_trusted_file(file, "backend_solution"), problem.spec.function)


def value_solutions(problem: Problem) -> list[tuple[str, Path]]:
    """(folder, file) of every shipped solution whose verdict rests on its values."""
    return [(folder, file) for folder, file in problem.solutions() if folder in VALUE_FOLDERS]


def run_problem(root: Path, out: Path) -> None:
    """Write the reference's and every value solution's result per case for one problem to ``out``."""
    from judge.core.errors import ProblemError
    from judge.core.problems import load_problem
    from judge.core.trusted_jax import load_reference
    from sandbox.shared.wire import dumps_tree

    out.mkdir(parents=True, exist_ok=True)
    try:
        problem = load_problem(root)
    except ProblemError as exc:
        (out / "skipped.txt").write_text(f"the problem does not load: {exc}")
        return
    if problem.spec.sandbox.devices > 1:
        (out / "skipped.txt").write_text(
            f"it runs on {problem.spec.sandbox.devices} devices ([sandbox] devices); this run has one"
        )
        return
    files = value_solutions(problem)
    (out / "files.json").write_text(json.dumps([f"{folder}/{file.name}" for folder, file in files]))
    runs: list[tuple[str, Path | None]] = [("r", None)]
    runs += [(f"s{k}", file) for k, (_, file) in enumerate(files)]
    for who, source in runs:
        try:
            fn = load_reference(problem) if source is None else solution_function(problem, source)
            results = run_function(problem, fn)
        except Exception as exc:
            results = [f"it does not load: {type(exc).__name__}: {exc}"] * len(problem.cases)
        for i, result in enumerate(results):
            if isinstance(result, str):
                (out / f"{who}.{i}.error").write_text(result)
            else:
                (out / f"{who}.{i}.frame").write_bytes(dumps_tree(list(result)))


def root_key(root: Path) -> str:
    """The folder name of one problem folder's results (two checked folders may share a slug)."""
    resolved = root.resolve()
    return f"{resolved.name}-{hashlib.sha1(str(resolved).encode()).hexdigest()[:10]}"


#: Seconds the run may take per problem (every case of the reference and of each value solution, compiled
#: on the platform), beyond a start-up allowance.
RUN_S_PER_PROBLEM = 600.0


@dataclass
class PlatformRun:
    """One ``backend_run`` process over the problems of a ``judge check``, started before the checks and
    running beside them (it alone opens the accelerator; the checks' own JAX runs on the CPU)."""

    platform: str
    out: Path
    process: subprocess.Popen[bytes] | None
    deadline: float
    progress: Callable[[str], None] | None = None
    #: How the run ended (``exit 0``, ``exit 1: ...``, ``timed out``), once it has.
    ended: str | None = field(default=None)

    @classmethod
    def start(
        cls, platform: str, out: Path, roots: Sequence[Path], progress: Callable[[str], None] | None = None
    ) -> PlatformRun:
        from judge.core.problems import REPO_ROOT

        if progress is not None:
            progress(f"running references and value solutions on {platform} ({len(roots)} problems)")
        log = (out / "stderr.txt").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "judge.check.backend_run", platform, str(out), *map(str, roots)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            cwd=str(REPO_ROOT),
        )
        log.close()
        deadline = time.monotonic() + 60.0 + RUN_S_PER_PROBLEM * len(roots)
        return cls(platform, out, process, deadline, progress)

    def results(self, root: Path) -> Path:
        """The folder of ``root``'s results, once the run has ended (see ``ended``)."""
        self.wait()
        return self.out / root_key(root)

    def wait(self) -> str:
        """Wait for the run to end (killing it past its deadline); how it ended."""
        if self.ended is None and self.process is not None:
            try:
                code = self.process.wait(timeout=max(1.0, self.deadline - time.monotonic()))
                tail = (self.out / "stderr.txt").read_text(errors="replace").strip().splitlines()[-3:]
                self.ended = f"exit {code}" + (": " + " / ".join(tail) if code else "")
            except subprocess.TimeoutExpired:
                self.stop()
                self.ended = "timed out"
            if self.progress is not None:
                self.progress(f"the run on {self.platform} ended: {self.ended}")
        return self.ended or "not started"

    def stop(self) -> None:
        """End the run if it still runs (a check that stopped early must not leave it holding the chip)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: python -m judge.check.backend_run PLATFORM OUT_DIR PROBLEM_DIR...", file=sys.stderr)
        return 2
    if "jax" in sys.modules:  # the platform must be chosen before JAX is imported
        print("backend_run must start in a fresh process", file=sys.stderr)
        return 2
    platform, out = argv[0], Path(argv[1])
    os.environ["JAX_PLATFORMS"] = platform
    if platform != "cpu":
        # The accelerator's own compilation, as a learner's notebook gets it (the judge's flags are the
        # CPU's: fast compiles of small programs).
        os.environ["XLA_FLAGS"] = ""
    for root in argv[2:]:
        path = Path(root)
        run_problem(path, out / root_key(path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
