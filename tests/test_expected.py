"""Expected outputs on the trusted side: one jit per run, per-case failures, best-effort cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judge.core.errors import InputError, ReferenceFailure
from judge.core.expected import expected_outputs, reference_outputs
from judge.core.problems import Problem, ProblemSet
from tests.conftest import FIXTURE_SLUG, FIXTURES


@pytest.fixture(scope="module")
def problem() -> Problem:
    """The test fixture package: every leaf of ``tree`` times ``factor``."""
    return ProblemSet(FIXTURES).get(FIXTURE_SLUG)


def test_a_read_only_cache_folder_is_no_error(
    problem: Problem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(blocker))  # mkdir under a file fails
    (out,) = expected_outputs(problem, problem.cases[:1])
    assert not isinstance(out, ReferenceFailure)
    assert float(out["b"]) == pytest.approx(1.5)


def test_a_reference_failure_spoils_only_its_case(problem: Problem, monkeypatch: pytest.MonkeyPatch) -> None:
    good = problem.cases[0]
    bad = problem.custom_case({"tree": {"w": [1.0]}, "factor": 2.0})
    # A case whose input the reference cannot handle: a leaf of a dtype it cannot multiply by a float.
    broken = type(bad)(bad.definition, ({"w": np.array(["x"])}, 1.0))
    outputs = reference_outputs(problem, [good, broken, bad])
    assert not isinstance(outputs[0], ReferenceFailure)
    assert isinstance(outputs[1], ReferenceFailure) and "failed on case custom" in str(outputs[1])
    assert outputs[1].__cause__ is not None
    assert float(outputs[2]["w"][0]) == pytest.approx(2.0)


def test_custom_run_panel_input_is_converted_or_rejected_with_its_path(problem: Problem) -> None:
    case = problem.custom_case({"tree": {"layers": [{"w": [3.0, 4.0]}]}, "factor": 2.0})
    assert case.dtype == "float32" and case.visibility == "public"
    assert case.inputs[1] == 2.0
    with pytest.raises(InputError) as info:
        problem.custom_case({"tree": {"layers": [{"w": [3.0, "4"]}]}, "factor": 2.0})
    assert info.value.path.startswith('tree["layers"][0]["w"]')


def test_a_gradients_cache_key_follows_the_code_that_builds_the_cotangent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Changing how the cotangent is built must not serve gradients cached with the old one."""
    from judge.core import expected

    problem = ProblemSet(FIXTURES).get("running-total")
    case = problem.cases[0]
    before = expected.case_key(problem, case, "gradient")
    output = expected.case_key(problem, case, "output")
    monkeypatch.setattr(expected, "_transforms_source", lambda: "another cotangent")
    assert expected.case_key(problem, case, "gradient") != before
    assert expected.case_key(problem, case, "output") == output
