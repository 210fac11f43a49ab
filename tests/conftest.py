"""Shared fixtures (problems, sandbox backends to run the same tests against) and the session's check that
a run leaves nothing behind: no sandbox worker process of the session alive, no new untracked file in the
checkout (``tests/leftovers.py``). A run that leaves either fails, and the summary names what was left.
Workers of other judges on the host (a ``judge check`` or service of the same checkout) are not the
session's and never fail it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from judge.check import ProblemReport, run_checks
from judge.core.errors import SandboxRefused
from judge.core.grader import grade
from judge.core.problems import Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.sandboxes import choose_backend
from sandbox.backends import BACKENDS, get_backend
from sandbox.backends.base import Backend
from sandbox.host.command import FAST_COMPILE_XLA_FLAGS
from tests.leftovers import Snapshot, become_subreaper

#: JAX in this process compiles with the sandbox's XLA flags, as the judge's trusted side does
#: (``judge.core.expected`` sets them only when it imports JAX first): a test that imports JAX before the
#: judge code it tests must not change the flags the judge's expected outputs are computed with.
os.environ.setdefault("XLA_FLAGS", FAST_COMPILE_XLA_FLAGS)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

ROOT = Path(__file__).resolve().parent.parent
#: The test fixture's problems folder (``reference/`` beside it): a complete package that passes
#: ``judge check --werror``, for tests that need a concrete problem without naming one of the repository's.
FIXTURES = ROOT / "tests" / "fixtures" / "problems"
#: ``scale_tree(tree, factor)``: a pytree and a traced number in, a pytree out (float32 and bfloat16).
FIXTURE_SLUG = "scale-tree"
#: ``lerp_trees(start, end, weight)``: a tuple output ``(mix, gap)``, inputs that must stay unchanged.
TUPLE_SLUG = "lerp-trees"
#: ``shift_tokens(tokens, lengths, offset, widths, pad_id)``: int32 and bool arrays of given ranks, a traced
#: int32 scalar, a static tuple and int; int32 and bool outputs compared exactly.
KINDS_SLUG = "shift-tokens"
#: ``running_total(f, x)``: a function argument from a menu, a ``require_loop`` rule and a ``[gradient]``.
PROGRAM_SLUG = "running-total"


# ------------------------------------------------------------------------------------ nothing left behind

_SNAPSHOT = pytest.StashKey[Snapshot]()
_SESSION_LOCK = pytest.StashKey[int]()
_LEFTOVERS = pytest.StashKey[list[str]]()
#: Every test session of this checkout holds this lock shared; one that cannot take it exclusively at its
#: end overlapped another session, whose files it cannot tell from its own (its workers it can: they are
#: not the session's descendants).
SESSION_LOCK_FILE = ROOT / ".pytest_cache" / "leftovers.lock"


def _controller(config: pytest.Config) -> bool:
    """The process that runs the session (not an xdist worker)."""
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _controller(session.config):
        return
    SESSION_LOCK_FILE.parent.mkdir(exist_ok=True)
    fd = os.open(SESSION_LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    fcntl.flock(fd, fcntl.LOCK_SH)
    session.config.stash[_SESSION_LOCK] = fd
    # The session's workers are this process's descendants, orphans included (it becomes their reaper):
    # a `judge check` or a service of this checkout running beside the suite is not the suite's leftover.
    own = os.getpid() if become_subreaper() else None
    session.config.stash[_SNAPSHOT] = Snapshot.take(ROOT, session=own)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    snapshot = session.config.stash.get(_SNAPSHOT, None)
    fd = session.config.stash.get(_SESSION_LOCK, None)
    if snapshot is None or fd is None:
        return
    try:
        alone = True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            alone = False
        if snapshot.session is None and not alone:
            print("\n[leftovers] not checked: another test session of this checkout is running")
            return
        if not alone:
            print("\n[leftovers] new files not checked: another test session of this checkout is running")
        found = snapshot.leftovers(files=alone)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    session.config.stash[_LEFTOVERS] = found
    if found and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class _TempCleanup:
    """A passing run leaves no temp folders. ``tmp_path_retention_policy = "failed"`` makes pytest remove
    its base folder after a passing run, but not under xdist, where the controller makes it and hands each
    worker a folder inside: the controller removes it, last (a failing run keeps it, for a look)."""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        if not _controller(config) or config.option.basetemp or session.exitstatus != pytest.ExitCode.OK:
            return
        base = getattr(getattr(config, "_tmp_path_factory", None), "_basetemp", None)
        if isinstance(base, Path):
            shutil.rmtree(base, ignore_errors=True)
            current = base.parent / "pytest-current"
            if current.is_symlink() and not current.exists():
                current.unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # pytest's per-user folder, when no other run is using it
                base.parent.rmdir()


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_TempCleanup(), "judge-temp-cleanup")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    found = config.stash.get(_LEFTOVERS, [])
    if not found:
        return
    terminalreporter.section("left behind by this run (the run fails)", sep="=", red=True, bold=True)
    for line in found:
        terminalreporter.line(line, red=True)
    terminalreporter.line(
        "Find the test or fixture that leaves it and make it clean up (tests/leftovers.py)."
    )


# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def problems() -> ProblemSet:
    """The suite's fixture problems: tests that need concrete problems never depend on the repository's."""
    return ProblemSet(FIXTURES)


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
        return grade(problem, code, lambda limits, **_: backend.start_pair(limits))

    return run


#: The sandbox slots the problem checks grade in (and the next ones if they are busy).
SEED_CHECK_SLOTS = 700


def seed_check_group(slug: str) -> pytest.MarkDecorator:
    """The mark of every test that reads ``seed_check(slug)``: pytest-xdist (``--dist loadgroup``) runs them
    in one worker, so each problem's solutions are graded once per test run, and different problems' checks
    spread over the workers."""
    return pytest.mark.xdist_group(f"check-{slug}")


SeedCheck = Callable[[str], ProblemReport]


@pytest.fixture(scope="session")
def seed_check(backend: Backend) -> SeedCheck:
    """``judge check`` of one problem of the repository with the default backend, once per worker (it
    grades every shipped solution of that problem)."""
    reports: dict[str, ProblemReport] = {}

    def report(slug: str) -> ProblemReport:
        if slug not in reports:
            # Slots far from 0, which other tests' workers use while this runs.
            (reports[slug],) = run_checks(
                [ROOT / "problems" / slug],
                backend=backend,
                concurrency=2,
                slot_base=SEED_CHECK_SLOTS,
            ).problems
        return reports[slug]

    return report
