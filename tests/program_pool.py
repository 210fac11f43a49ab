"""A warm grading pool for the program-feature tests (rules, gradients, function arguments).

Tracers are forked from a zygote, as in the service, so a grading does not wait for a fresh ``import jax``
(on a loaded shared host a one-shot tracer can take longer than its start-up limit to report ready).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from judge.grader import grade
from judge.problems import Problem
from judge.results import GradeResult
from sandbox.backends import get_backend
from sandbox.base import Pair
from sandbox.limits import SandboxLimits
from sandbox.pool import GradingPool
from tests.conftest import default_backend

Grader = Callable[[Problem, str], GradeResult]


@contextmanager
def pooled_grader(slot_base: int) -> Iterator[Grader]:
    """A grader on a one-pair pool of the default backend, tracer slots from ``slot_base``; closed after."""
    backend = default_backend()
    pool = GradingPool(backend, SandboxLimits(), size=1, slot_base=slot_base, slots=16)
    try:
        yield lambda problem, code: grade(
            problem, code, lambda limits, secret=False: pool.acquire(180, limits, secret=secret)
        )
    finally:
        pool.close()
        backend.close()


@contextmanager
def backend_pool(name: str, slot_base: int, slots: int = 16) -> Iterator[GradingPool]:
    """A one-pair warm pool of the backend ``name`` (tracer slots from ``slot_base``); closed after, with the
    backend's zygote."""
    backend = get_backend(name)
    pool = GradingPool(backend, SandboxLimits(), size=1, slot_base=slot_base, slots=slots)
    try:
        yield pool
    finally:
        pool.close()
        backend.close()


def pool_source(pool: GradingPool, timeout: float = 180) -> Callable[..., Pair]:
    """``pool`` as a grading's pair source (``judge.grader.PairSource``)."""

    def source(limits: SandboxLimits, *, secret: bool = False) -> Pair:
        return pool.acquire(timeout, limits, secret=secret)

    return source
