"""Issue 27 (problem fidelity), what it must show: for each class of the new ``judge check`` checks, a
shipped wrong solution that only the new checks or the cases they demand catch, killed by two or more hidden
cases well outside the tolerance (the margins check's 'strong' kills).

1. hidden cases reach every stated bound (``reach``): pairwise-distances' ``zero_below_small_distance.py``
   returns 0 for distances under 1e-3, which the bounds allow; only the tiny-distance cases, there because
   the smallest nonzero distance must approach its bound 0, reject it.
2. rules held in substance (``require_loop`` decided by perturbing the loops' results): ema-scan's
   ``dummy_scan_beside_closed_form.py`` computes the right values beside a scan that does dummy work; every
   hidden case rejects it by the rule, none by its values, but ``empty_steps``: its output holds no value,
   so no loop result can matter to it and the rule has nothing to hold the dummy loop to.
3. statement requirements backed (``requirements``): pairwise-distances' ``tiny_epsilon_under_sqrt.py``
   breaks "do not add an epsilon" by 1e-6, under the float32 atol; only the bfloat16 cases of identical
   points, the case backers of that requirement, reject it.
4. references as accurate as the best solution (``accuracy``): pairwise-distances' ``expansion_clamped.py``
   is the expansion ``|a|^2 + |b|^2 - 2 a.b``; a reference written that way would match it on every case,
   and the accuracy check fails such a reference on exactly the seven cases that reject it
   (tests/test_check_accuracy.py shows both).

The gradings are each problem's ``judge check`` (the ``seed_check`` fixture, shared with
tests/test_solutions.py), so these tests grade nothing of their own in a full run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from judge.core.verdicts import Verdict, WrongAnswerReason
from tests.conftest import ROOT, SeedCheck, seed_check_group
from tests.test_check_accuracy import EXPANSION_KILLS


@dataclass(frozen=True)
class Representative:
    #: The class of issue 27 and the check that stands for it.
    what: str
    slug: str
    #: ``wrong_answer/<file>.py`` under the problem's solutions/.
    solution: str
    #: The hidden cases that reject it, in case order (None: every hidden case but ``spared``).
    killers: tuple[str, ...] | None
    #: Why every rejecting case rejects it.
    reason: WrongAnswerReason
    #: With ``killers`` None, the hidden cases that do not reject it.
    spared: tuple[str, ...] = ()


REPRESENTATIVES = (
    Representative(
        "class 1, hidden cases reach every stated bound (reach)",
        "pairwise-distances",
        "wrong_answer/zero_below_small_distance.py",
        ("tiny_distances", "tiny_distances_cluster", "bf16_tiny_distances", "bf16_tiny_distances_small"),
        WrongAnswerReason.VALUE,
    ),
    Representative(
        "class 2, rules held in substance (require_loop, loop results perturbed)",
        "ema-scan",
        "wrong_answer/dummy_scan_beside_closed_form.py",
        None,
        WrongAnswerReason.RULE,
        spared=("empty_steps",),
    ),
    Representative(
        "class 3, statement requirements backed (requirements)",
        "pairwise-distances",
        "wrong_answer/tiny_epsilon_under_sqrt.py",
        ("bf16_all_points_identical", "bf16_all_points_identical_small"),
        WrongAnswerReason.VALUE,
    ),
    Representative(
        "class 4, references as accurate as the best solution (accuracy)",
        "pairwise-distances",
        "wrong_answer/expansion_clamped.py",
        EXPANSION_KILLS,
        WrongAnswerReason.VALUE,
    ),
)


def test_every_class_has_a_representative() -> None:
    assert [r.what.split(",")[0] for r in REPRESENTATIVES] == [f"class {n}" for n in range(1, 5)]
    for r in REPRESENTATIVES:
        assert (ROOT / "problems" / r.slug / "solutions" / r.solution).is_file(), r


@pytest.mark.slow
@pytest.mark.parametrize(
    "rep",
    [
        pytest.param(r, id=r.what.split(",")[0].replace(" ", "_"), marks=seed_check_group(r.slug))
        for r in REPRESENTATIVES
    ],
)
def test_the_representative_is_killed_by_two_or_more_hidden_cases_and_only_by_the_new_ones(
    seed_check: SeedCheck, rep: Representative
) -> None:
    report = seed_check(rep.slug)
    (row,) = [row for row in report.margins if row.solution == rep.solution]
    assert row.verdict is Verdict.WRONG_ANSWER and row.strong >= 2 and not row.warning, row
    graded = report.grade_of(ROOT / "problems" / rep.slug / "solutions" / rep.solution)
    assert graded.result is not None, graded.error
    hidden = [c for c in graded.result.cases if c.visibility == "hidden"]
    rejecting = [c for c in hidden if c.verdict is not Verdict.ACCEPTED]
    want = [c.name for c in hidden if c.name not in rep.spared] if rep.killers is None else list(rep.killers)
    assert [c.name for c in rejecting] == want, [(c.name, c.verdict, c.reason) for c in rejecting]
    assert {c.reason for c in rejecting} == {rep.reason}, [(c.name, c.reason, c.message) for c in rejecting]
