"""Hidden cases say nothing through time, names or a shared executor (issue 36, points 2-4), on every backend.

- a compromised executor serves nobody else: the executors of two Submits and a Run are all different
  processes (a crash's replacement is in tests/test_pool.py);
- the hidden-timing attack (an accepted global-norm-clipping solution that loops a number of times set by
  each hidden case's ``max_norm``): its hidden results arrive in one burst once the grading is over, carry
  no time, and the burst comes no sooner than the padded end of the hidden phase;
- the mistake channel (a program that returns one of four shipped wrong solutions, picked by two bits of
  the hidden ``max_norm``): its hidden cases name at most one mistake, though an author's grading (per-case
  names, as before) shows it picked several.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import judge.core.grader
from judge.core.grader import grade
from judge.core.hidden import PHASE_FIRST_RUNG_S, PHASE_RUNG_RATIO, hidden_phase_bound, one_hidden_mistake
from judge.core.problems import Problem, ProblemSet
from judge.core.results import CaseResult, MistakeMatch
from judge.core.verdicts import Verdict
from sandbox.backends.base import GradingProcesses
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import GradingPool
from tests.conftest import available_backends
from tests.program_pool import per_backend_pool

ROOT = Path(__file__).resolve().parent.parent
SLOT_BASE = 1860
SLOTS = 24
SOLUTIONS = ROOT / "problems" / "global-norm-clipping" / "solutions"

#: The accepted solution, plus a loop whose trip count follows the case's max_norm (up to 20,000 steps).
TIMING_ATTACK = (
    (SOLUTIONS / "accepted" / "tree_map_minimum.py").read_text()
    + """

_accepted = clip_by_global_norm


def clip_by_global_norm(grads, max_norm):
    out = _accepted(grads, max_norm)
    steps = (jnp.clip(max_norm, 0.0, 50.0) * 400.0).astype(jnp.int32)
    spin = jax.lax.fori_loop(0, steps, lambda i, x: jnp.sin(x) + 0.5, jnp.ones(64, jnp.float32))
    nothing = 0.0 * jnp.minimum(jnp.sum(spin), 0.0)
    return {"clipped": out["clipped"], "global_norm": out["global_norm"] + nothing}
"""
)

#: Four shipped wrong solutions, one picked per case by two exponent bits of max_norm.
CHANNEL_MISTAKES = ("always_rescale", "l1_norm", "per_leaf_norm", "large_epsilon")


def _channel_program() -> str:
    parts = ["import jax\nimport jax.numpy as jnp\n"]
    for k, name in enumerate(CHANNEL_MISTAKES):
        text = (SOLUTIONS / "wrong_answer" / f"{name}.py").read_text()
        body = text.split('"""', 2)[2]
        parts.append(body.replace("clip_by_global_norm", f"_mistake{k}").replace("_clip_leaf", f"_leaf{k}"))
    parts.append("""

def clip_by_global_norm(grads, max_norm):
    bits = jax.lax.bitcast_convert_type(jnp.asarray(max_norm, jnp.float32), jnp.int32)
    pick = (bits >> 23) & 3
    outs = [_mistake0(grads, max_norm), _mistake1(grads, max_norm), _mistake2(grads, max_norm),
            _mistake3(grads, max_norm)]

    def choose(*leaves):
        out = leaves[0]
        for k in range(1, 4):
            out = jnp.where(pick == k, leaves[k].astype(out.dtype), out)
        return out

    return jax.tree.map(choose, *outs)
""")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def problem() -> Problem:
    return ProblemSet(ROOT / "problems").get("global-norm-clipping")


@pytest.fixture(scope="module", params=available_backends())
def pool(request: pytest.FixtureRequest) -> Iterator[GradingPool]:
    with per_backend_pool(str(request.param), SLOT_BASE, SLOTS) as pool:
        yield pool


class _Recording:
    """A pair source that notes every executor it lends."""

    def __init__(self, pool: GradingPool) -> None:
        self.pool = pool
        self.executors: list[Any] = []

    def __call__(self, limits: SandboxLimits) -> GradingProcesses:
        pair = self.pool.acquire(180, limits)
        self.executors.append(pair.executor)
        return pair


# ------------------------------------------------------------------------------------------ executors


def _process(worker: Any) -> str:
    """What names an executor's process on the host: its pid, or a container's id."""
    container = getattr(worker, "container_id", None)
    return f"container {container}" if container is not None else f"pid {worker.pid}"


@pytest.mark.slow
def test_no_executor_serves_two_submissions_or_a_run(pool: GradingPool, problem: Problem) -> None:
    accepted = (SOLUTIONS / "accepted" / "tree_map_minimum.py").read_text()
    wrong = (SOLUTIONS / "wrong_answer" / "l1_norm.py").read_text()
    source = _Recording(pool)
    assert grade(problem, accepted, source).verdict is Verdict.ACCEPTED
    assert grade(problem, wrong, source).verdict is Verdict.WRONG_ANSWER
    public = [c for c in problem.cases if c.definition.visibility == "public"]
    assert grade(problem, accepted, source, cases=public).verdict is Verdict.ACCEPTED
    assert len(source.executors) == 3  # one executor per Submit and one for the Run
    assert len({id(w) for w in source.executors}) == 3
    processes = [_process(w) for w in source.executors]
    assert len(set(processes)) == len(processes), f"an executor served two jobs: {processes}"
    for worker in source.executors:
        assert worker.wait(10) is not None, "an executor lives on after its job"


# ------------------------------------------------------------------------------------------ time


def test_the_hidden_phase_is_padded_to_a_rung() -> None:
    assert hidden_phase_bound(0.0) == PHASE_FIRST_RUNG_S
    for took in (0.051, 0.2, 0.33, 1.0, 4.6, 37.9, 3600.0):
        bound = hidden_phase_bound(took)
        assert took <= bound < took * PHASE_RUNG_RATIO + 1e-9
        k = round(math.log(bound / PHASE_FIRST_RUNG_S, PHASE_RUNG_RATIO))
        assert abs(bound - PHASE_FIRST_RUNG_S * PHASE_RUNG_RATIO**k) < 1e-9 * bound
    # Durations spanning less than one rung's ratio end on at most two rungs.
    assert len({hidden_phase_bound(0.2 * PHASE_RUNG_RATIO ** (i / 40)) for i in range(40)}) <= 2


@pytest.mark.slow
def test_the_timing_attack_gets_its_hidden_results_together_untimed_and_padded(
    pool: GradingPool, problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[float, CaseResult]] = []
    updates: list[float] = []
    pads: list[tuple[float, float, float]] = []  # (when asked, took, bound)

    def bound(took: float) -> float:
        rung = hidden_phase_bound(took)
        pads.append((time.monotonic(), took, rung))
        return rung

    monkeypatch.setattr(judge.core.grader, "hidden_phase_bound", bound)
    result = grade(
        problem,
        TIMING_ATTACK,
        _Recording(pool),
        on_case=lambda case: events.append((time.monotonic(), case)),
        on_progress=lambda _: updates.append(time.monotonic()),
    )
    assert result.verdict is Verdict.ACCEPTED, result.message
    hidden = [(at, c) for at, c in events if c.visibility == "hidden"]
    assert len(hidden) == 28
    first = min(at for at, _ in hidden)
    assert first >= max(updates), "a hidden result was sent while the grading ran"
    assert max(at for at, _ in hidden) - first < 0.05, "the hidden results came apart"
    for case in [c for _, c in hidden] + [c for c in result.cases if c.visibility == "hidden"]:
        assert case.compile_ms is None and case.run_ms is None and case.error_ratio is None
    public = [c for c in result.cases if c.visibility == "public"]
    assert any(c.compile_ms is not None for c in public), "public cases keep their times"
    (asked, took, rung) = pads[0]
    assert len(pads) == 1
    assert first >= asked - took + rung - 1e-3, "the hidden phase ended before its rung"


# ------------------------------------------------------------------------------------------ names


def _case(name: str, vis: str, verdict: Verdict, mistake: str | None, others: int = 0) -> CaseResult:
    match = MistakeMatch(name=mistake, note=f"note of {mistake}", others=others) if mistake else None
    return CaseResult(name=name, visibility=vis, verdict=verdict, mistake=match)  # type: ignore[arg-type]


def test_hidden_cases_name_one_mistake_only_when_every_failing_one_matches_it() -> None:
    wa, ok = Verdict.WRONG_ANSWER, Verdict.ACCEPTED
    same = one_hidden_mistake(
        [
            _case("p", "public", wa, "A"),
            _case("h1", "hidden", wa, "B", others=2),
            _case("h2", "hidden", ok, None),
            _case("h3", "hidden", wa, "B", others=0),
        ]
    )
    assert [c.mistake.name if c.mistake else None for c in same] == ["A", "B", None, "B"]
    assert all(c.mistake.others == 0 for c in same[1:] if c.mistake), "no per-case count of other matches"
    mixed = one_hidden_mistake(
        [_case("p", "public", wa, "A"), _case("h1", "hidden", wa, "B"), _case("h2", "hidden", wa, "C")]
    )
    assert [c.mistake.name if c.mistake else None for c in mixed] == ["A", None, None]
    partly = one_hidden_mistake(
        [_case("h1", "hidden", wa, "B"), _case("h2", "hidden", Verdict.RUNTIME_ERROR, None)]
    )
    assert all(c.mistake is None for c in partly)


@pytest.mark.slow
def test_the_mistake_channel_gets_at_most_one_hidden_name(pool: GradingPool, problem: Problem) -> None:
    code = _channel_program()
    learner = grade(problem, code, _Recording(pool))
    assert learner.verdict is Verdict.WRONG_ANSWER, learner.message
    names = {c.mistake.name for c in learner.cases if c.visibility == "hidden" and c.mistake is not None}
    assert len(names) <= 1, names
    author = grade(problem, code, _Recording(pool), author=True)
    chosen = {c.mistake.name for c in author.cases if c.visibility == "hidden" and c.mistake is not None}
    assert len(chosen) >= 2, f"the program should pick several mistakes by the hidden values: {chosen}"
