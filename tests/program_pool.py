"""A warm grading pool for the program-feature tests (rules, gradients, function arguments).

Tracers are forked from a zygote, as in the service, so a grading does not wait for a fresh ``import jax``
(on a loaded shared host a one-shot tracer can take longer than its start-up limit to report ready).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from judge.core.grader import grade
from judge.core.problems import Problem
from judge.core.results import GradeResult
from sandbox.backends import get_backend
from sandbox.backends.base import GradingProcesses
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import GradingPool
from tests.conftest import available_backends, default_backend

Grader = Callable[[Problem, str], GradeResult]


@contextmanager
def default_pool(slot_base: int) -> Iterator[GradingPool]:
    """A one-pair warm pool of the default backend, tracer slots from ``slot_base``; closed after, with the
    backend's zygote."""
    backend = default_backend()
    pool = GradingPool(backend, SandboxLimits(), size=1, slot_base=slot_base, slots=16)
    try:
        yield pool
    finally:
        pool.close()
        backend.close()


@contextmanager
def pooled_grader(slot_base: int) -> Iterator[Grader]:
    """A grader on a one-pair pool of the default backend, tracer slots from ``slot_base``; closed after."""
    with default_pool(slot_base) as pool:
        yield lambda problem, code: grade(problem, code, pool_source(pool))


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


@contextmanager
def per_backend_pool(name: str, slot_base: int, slots: int) -> Iterator[GradingPool]:
    """:func:`backend_pool` for one of ``available_backends()``, each backend in its own ``slots`` tracer
    slots from ``slot_base`` (the module's pool fixture is parametrized over them)."""
    index = available_backends().index(name)
    with backend_pool(name, slot_base + slots * index, slots=slots) as pool:
        yield pool


def pool_source(pool: GradingPool, timeout: float = 180) -> Callable[..., GradingProcesses]:
    """``pool`` as a grading's pair source (``judge.core.grader.ProcessesSource``)."""

    def source(limits: SandboxLimits) -> GradingProcesses:
        return pool.acquire(timeout, limits)

    return source
