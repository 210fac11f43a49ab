"""Shared fixtures: problems, and sandbox backends to run the same tests against."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
def backend() -> Backend:
    return default_backend()


Grader = Callable[[Problem, str], GradeResult]


@pytest.fixture(scope="session")
def grade_with(backend: Backend) -> Grader:
    def run(problem: Problem, code: str) -> GradeResult:
        return grade(problem, code, lambda limits: backend.start(limits))

    return run
