"""Every shipped solution gets the verdict its folder names (golden directories, one test per file).

The gradings come from each problem's ``judge check`` (the ``seed_check`` fixture), so each solution is
graded once per test run; these tests name each file and what it got.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.core.problems import ProblemSet
from judge.core.verdicts import Verdict
from tests.conftest import ROOT, SeedCheck, seed_check_group

_PROBLEMS = ProblemSet(ROOT / "problems")
_SOLUTIONS = [
    pytest.param(
        problem.slug,
        folder,
        file,
        id=f"{problem.slug}/{folder}/{file.name}",
        marks=seed_check_group(problem.slug),
    )
    for problem in _PROBLEMS
    for folder, file in problem.solutions()
]


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "folder", "file"), _SOLUTIONS)
def test_solution_gets_its_folders_verdict(slug: str, folder: str, file: Path, seed_check: SeedCheck) -> None:
    problem = _PROBLEMS.get(slug)
    graded = seed_check(slug).grade_of(file)
    assert graded.result is not None, graded.error
    result = graded.result
    expected = Verdict(folder)
    allowed = {expected, *problem.spec.solutions.also_allow.get(expected, [])}
    detail = f"{result.verdict}: {result.message}"
    assert result.verdict in allowed, detail
    if expected is Verdict.ACCEPTED:
        assert result.passed == result.total
        assert all(c.error_ratio is not None and c.error_ratio <= 1 for c in result.cases)
    else:
        assert result.message, "a rejected submission must say why"
