"""The ``float_tuple`` kind end to end: a spec declares it, Run-panel JSON converts to a tuple of floats
(bad JSON is an input error naming the path), the session plan sends it and the real sandbox's function
receives it, ``judge new`` offers it and the statement words it. Added as one module and one registry line
(``judge.kinds``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.authoring.scaffold import ArgDecl, create
from judge.authoring.statement import statement_markdown
from judge.check import run_checks
from judge.core.errors import InputError
from judge.core.grader import build_session
from judge.core.problems import Problem, load_problem
from judge.core.spec import ArgSpec
from judge.core.verdicts import Verdict
from judge.service.catalog import detail
from judge.service.schemas import ArgumentPublic
from judge.web.run_panel import input_layout
from sandbox.inside.tracer import static_value
from tests.program_pool import Grader, pooled_grader

#: Tracer slots of this module's pool.
SLOT_BASE = 1000

#: The trusted reference, and a correct solution: it fails (``runtime_error``) unless ``betas`` arrives as
#: a tuple of Python floats, and its output depends on the fractional values.
REFERENCE = """def adam_step(betas, x):
    if type(betas) is not tuple or not all(type(b) is float for b in betas):
        raise TypeError(f"betas arrived as {betas!r}")
    return x * betas[0] + sum(betas)
"""
#: Reads the betas as ints (what a tracer casting the tuple to ints would hand over).
ROUNDED = "def adam_step(betas, x):\n    return x * int(betas[0]) + sum(int(b) for b in betas)\n"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("float-tuple")
    create(
        "adam-step", root / "problems", args=[ArgDecl.parse("betas:float_tuple"), ArgDecl.parse("x:array")]
    )
    (root / "reference" / "adam_step.py").write_text(REFERENCE)
    return root / "problems" / "adam-step"


@pytest.fixture(scope="module")
def problem(package: Path) -> Problem:
    return load_problem(package)


@pytest.fixture(scope="module")
def graded() -> Iterator[Grader]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


# ------------------------------------------------------------------------------------------- spec


def test_a_spec_declares_it_static_by_default() -> None:
    arg = ArgSpec(name="betas", kind="float_tuple")
    assert arg.traced is False and arg.accepts == ("array",)
    assert arg.describe_kind() == "a tuple of Python floats (static)"
    assert "float_tuple" in ArgumentPublic.model_json_schema()["properties"]["kind"]["enum"]


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"traced": True}, "kind 'float_tuple' is static (passed with static_argnames) and cannot be traced"),
        ({"ndim": [1]}, "dtype and ndim apply to kind 'array' only"),
        ({"choices": ["a"]}, "choices are only for function arguments and str arguments"),
    ],
)
def test_a_spec_refuses_fields_it_does_not_take(fields: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(words)):
        ArgSpec.model_validate({"name": "betas", "kind": "float_tuple", **fields})


def test_the_package_loads_with_it(problem: Problem) -> None:
    assert [(a.name, a.kind, a.traced) for a in problem.spec.args] == [
        ("betas", "float_tuple", False),
        ("x", "array", True),
    ]


# ------------------------------------------------------------------------------------------- JSON


def test_run_panel_json_becomes_a_tuple_of_floats(problem: Problem) -> None:
    case = problem.custom_case({"betas": [0.9, 1], "x": [1.0, 2.0]})
    assert case.inputs[0] == (0.9, 1.0)
    assert [type(b) for b in case.inputs[0]] == [float, float]


@pytest.mark.parametrize(
    ("betas", "path", "reason"),
    [
        (0.9, "betas", "expected an array of numbers, got a number"),
        ({"b": 0.9}, "betas", "expected an array of numbers, got an object"),
        ([0.9, "0.99"], "betas[1]", "expected a number, got a string"),
        ([True], "betas[0]", "expected a number, got a boolean"),
        ([0.5] * 65, "betas", "too many items (65, at most 64)"),
    ],
)
def test_bad_json_is_an_input_error_naming_the_path(
    problem: Problem, betas: Any, path: str, reason: str
) -> None:
    with pytest.raises(InputError) as caught:
        problem.custom_case({"betas": betas, "x": [1.0]})
    assert (caught.value.path, caught.value.reason) == (path, reason)


# ------------------------------------------------------------------------------------- the sandbox


def test_the_session_plan_sends_the_floats_and_the_tracer_rebuilds_the_tuple(problem: Problem) -> None:
    case = problem.custom_case({"betas": [0.9, 0.999], "x": [1.0]})
    job = build_session(problem, REFERENCE, [case], [False], 1 << 20)
    (sig,) = job.sigs
    assert sig.args[0] == {"static": [0.9, 0.999], "tuple": True}
    assert static_value(sig.args[0]) == (0.9, 0.999)


@pytest.mark.slow
def test_a_grading_in_the_real_sandbox_receives_a_tuple_of_floats(problem: Problem, graded: Grader) -> None:
    result = graded(problem, REFERENCE)
    assert result.verdict is Verdict.ACCEPTED, result.message
    assert graded(problem, ROUNDED).verdict is Verdict.WRONG_ANSWER


# ----------------------------------------------------------------------------- judge new, statement


def test_judge_new_offers_it(package: Path, problem: Problem) -> None:
    assert ArgDecl.parse("betas:float_tuple") == ArgDecl("betas", "float_tuple", traced=False)
    assert "CYCLED: dict[str, list[Any]]" in (package / "generate_cases.py").read_text()
    assert all(problem.violations(case) == [] for case in problem.cases)
    tuples = {case.inputs[0] for case in problem.hidden_cases}
    assert {(0.9, 0.999), (0.5, 0.25), (0.8, 0.99, 0.5)} <= tuples


@pytest.mark.slow
def test_the_scaffold_passes_the_checks_it_can(package: Path) -> None:
    report = run_checks([package], separate_runs=False)
    checks = {c.name: c.status for c in report.problems[0].checks}
    for name in ("spec", "statement", "starter", "cases", "reference", "coverage", "lookalikes"):
        assert checks[name] == "passed", (name, checks[name], [str(f) for f in report.findings])
    (note,) = report.problems[0].check("coverage").notes
    assert "`betas`: 3 distinct static values" in note


def test_the_page_lays_it_out_as_a_tuple_of_floats(problem: Problem) -> None:
    # The page reads each argument's layout (web/src/tree.js), never a kind's name: a tuple of floats is
    # shown as the function gets it, ``(0.9, 0.999)``.
    arguments = input_layout(detail(problem))["arguments"]
    assert arguments["betas"] == {"kind": "float_tuple", "dtype": "float", "layout": "tuple"}


def test_the_statement_words_it(problem: Problem) -> None:
    text = statement_markdown(problem)
    assert (
        "`betas` is a tuple of Python floats (the Run panel's JSON array of numbers becomes a tuple" in text
    )
    assert "`betas` is a tuple of finite Python floats." in text
