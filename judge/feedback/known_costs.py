"""Known mistakes by what they cost: the shipped wrong solutions a cost rule refuses, measured and chosen.

A mistake such as forming the whole Hessian gives the right numbers; only the problem's ``[cost]`` rule
refuses it, so no output can name it. What does is its cost: each shipped wrong solution (repository code,
like the reference) is compiled on the trusted side exactly as ``judge.feedback.reference_cost`` compiles the
reference, and XLA's cost analysis gives its FLOPs and bytes accessed on the case, cached per (solution
source, case, JAX version, XLA flags) as JSON. A learner's program that breaks the rule on a figure is said
to look like the known mistake that breaks it on the same figure with the nearest value, when that value is
within ``NEAR`` times the learner's either way (``nearest``, pure); the others that near are counted.

This is the one module of ``judge.feedback`` that runs code (``CostMistakeFinder``); ``nearest`` is pure.
Figures are measured only when a cost rule refuses a program, so an accepted submission pays nothing.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.core import expected as _expected
from judge.core import trusted_jax
from judge.core.problems import Case, Problem
from judge.feedback.figure_cache import FigureCache
from judge.feedback.matching import Match
from judge.feedback.mistakes import KnownMistake, jitted_mistake, known_mistakes_cached, output_key
from judge.feedback.notes import MistakeNote

#: A learner's figure and a known mistake's match when either is at most this many times the other: the
#: same idea written another way (jax.hessian of the pytree instead of the flattened x, say) costs within a
#: small factor, while the rule's own margin is orders of magnitude (hundreds of times the reference's).
NEAR = 2.0
#: What the figures are and how they are measured: part of their cache key.
FIGURES = 1
#: The figures by key, in this process and on disk (one that cannot compile is kept as such).
_CACHE = FigureCache("mistake-cost", keep_failures=True)


@dataclass(frozen=True)
class KnownCost:
    """One known mistake's figure on a case (``None``: it could not be compiled there)."""

    mistake: MistakeNote
    figure: float | None


def nearest(mine: float, known: Sequence[KnownCost], *, over: float, near: float = NEAR) -> Match | None:
    """The known mistake whose figure is nearest ``mine`` (by ratio), among those that break the rule too
    (figure above ``over``, the most the rule allows) and are within ``near`` times ``mine`` either way;
    None when there is none. Ties go to the name; ``others`` counts the rest that near."""
    if not math.isfinite(mine) or mine <= 0:
        return None
    close: list[tuple[float, str, MistakeNote]] = []
    for item in known:
        figure = item.figure
        if figure is None or not math.isfinite(figure) or figure <= over or figure <= 0:
            continue
        distance = abs(math.log(figure / mine))
        if distance <= math.log(near):
            close.append((distance, item.mistake.name, item.mistake))
    if not close:
        return None
    close.sort(key=lambda c: (c[0], c[1]))
    return Match(close[0][2], len(close) - 1)


def _key(problem: Problem, mistake: KnownMistake, case: Case) -> str:
    """What the figures depend on: what the mistake's output does (its source, the case, JAX, XLA flags)."""
    return hashlib.sha256(f"cost/{FIGURES}\0{output_key(problem, mistake, case)}".encode()).hexdigest()[:32]


def mistake_figures(problem: Problem, mistake: KnownMistake, case: Case) -> dict[str, float] | None:
    """The known mistake's cost figures on ``case`` (``flops``, ``bytes_accessed``), from the cache or
    measured and cached; None when it cannot be compiled there."""
    return _CACHE.get(problem.slug, _key(problem, mistake, case), lambda: _measure(problem, mistake, case))


def _measure(problem: Problem, mistake: KnownMistake, case: Case) -> dict[str, float] | None:
    from sandbox.inside.executor import cost_of

    jax = trusted_jax.import_jax()
    try:
        args = _expected.call_arguments(jax, problem, case, problem.menu())
        jitted: Any = jitted_mistake(problem, mistake)  # a jax.jit function: it lowers
        compiled = jitted.lower(*args).compile()
        return cost_of(compiled.runtime_executable())
    except Exception:  # a known mistake that cannot compile here names nothing on this case
        return None


@dataclass
class CostMistakeFinder:
    """For the grader: which known mistake a program the cost rule refuses on case ``i`` looks like, from
    the figure that broke the rule (``"flops"`` or ``"bytes_accessed"``), the learner's value of it and the
    most the rule allows (the bound times the reference's)."""

    problem: Problem
    cases: Sequence[Case]
    _answers: dict[tuple[int, str, float], Match | None] = field(default_factory=dict, init=False)

    def __call__(self, i: int, figure: str, mine: float, over: float) -> Match | None:
        key = (i, figure, mine)
        if key not in self._answers:
            self._answers[key] = self._find(i, figure, mine, over)
        return self._answers[key]

    def _find(self, i: int, figure: str, mine: float, over: float) -> Match | None:
        known = []
        for mistake in known_mistakes_cached(self.problem):
            figures = mistake_figures(self.problem, mistake, self.cases[i])
            known.append(KnownCost(mistake.note, None if figures is None else figures.get(figure)))
        return nearest(mine, known, over=over)
