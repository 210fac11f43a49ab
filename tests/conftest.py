"""Shared fixtures: problems, and sandbox backends to run the same tests against."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.check import CheckReport, problem_dirs, run_checks
from judge.errors import SandboxRefused
from judge.grader import grade
from judge.problems import Problem, ProblemSet
from judge.results import GradeResult
from judge.sandboxes import choose_backend
from sandbox.backends import BACKENDS, get_backend
from sandbox.base import Backend

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def problems() -> ProblemSet:
    return ProblemSet(ROOT / "problems")


def default_backend() -> Backend:
    """The secure backend this host offers (bwrap, then docker); the process backend only if none works."""
    try:
        return choose_backend("auto")
    except SandboxRefused:
        return get_backend("process")


def available_backends() -> list[str]:
    names = []
    for name in BACKENDS:
        if get_backend(name).available() is None:
            names.append(name)
    return names


@pytest.fixture(scope="session")
def backend() -> Iterator[Backend]:
    backend = default_backend()
    yield backend
    backend.close()  # its zygote, if it started one


Grader = Callable[[Problem, str], GradeResult]


@pytest.fixture(scope="session")
def grade_with(backend: Backend) -> Grader:
    def run(problem: Problem, code: str) -> GradeResult:
        return grade(problem, code, lambda limits: backend.start_pair(limits))

    return run


#: Tests that use ``seed_check`` carry this mark, so pytest-xdist (``--dist loadgroup``) runs them in one
#: worker and the seed problems' solutions are graded once per test run.
SEED_CHECK = pytest.mark.xdist_group("seed_check")
#: The sandbox slots the seed check grades in (and the next ones if they are busy).
SEED_CHECK_SLOTS = 700


@pytest.fixture(scope="session")
def seed_check(backend: Backend) -> CheckReport:
    """``judge check`` on every seed problem with the default backend (grades every shipped solution once)."""
    # Slots far from 0, which other tests' workers use while this runs in another xdist worker.
    return run_checks(
        problem_dirs([], ROOT / "problems"), backend=backend, concurrency=2, slot_base=SEED_CHECK_SLOTS
    )
