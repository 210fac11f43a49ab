"""Function arguments: a case names a function of the problem's menu module; the function itself is passed.

The spec, the Run-panel conversion (path-named errors), the tracer's menu loading, the session plan, the
statement, and gradings in the sandbox, including submissions that call a menu function they were not
given (wrong answer) or try to import the menu module (it is not importable)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from judge.authoring.statement import format_inputs
from judge.core.errors import InputError, ProblemError
from judge.core.grader import build_session
from judge.core.menu import MenuChoice
from judge.core.problems import Problem, ProblemSet, load_problem
from judge.core.results import GradeResult
from judge.core.spec import ArgSpec, ProblemSpec
from judge.core.verdicts import Verdict
from tests.conftest import FIXTURES, PROGRAM_SLUG
from tests.program_pool import pooled_grader

#: The sandbox gradings of the three program-feature modules run in one xdist worker, one pool at a time
#: (on a loaded 2-core host, several pools starting executors at once can exhaust a pool's start timeout).
pytestmark = pytest.mark.xdist_group("program_features")

#: The fixture problem with a function argument (its menu: square, sine).
MENU_PROBLEM = PROGRAM_SLUG
#: Tracer slots of this module's pool.
SLOT_BASE = 460

Grader = Callable[[Problem, str], GradeResult]


@pytest.fixture(scope="module")
def graded() -> Iterator[Grader]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


def _problem() -> Problem:
    return ProblemSet(FIXTURES).get(MENU_PROBLEM)


# ------------------------------------------------------------------------------------- spec


@pytest.mark.parametrize(
    ("arg", "words"),
    [
        ({"name": "f", "kind": "function", "traced": False}, "needs choices"),
        ({"name": "f", "kind": "function", "traced": True, "choices": ["quartic"]}, "traced = false"),
        ({"name": "f", "kind": "pytree", "choices": ["quartic"]}, "only for function arguments"),
        ({"name": "f", "kind": "function", "traced": False, "choices": ["not a name"]}, "pattern"),
    ],
)
def test_malformed_function_arguments_are_refused(arg: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        ArgSpec.model_validate(arg)


def test_a_function_argument_needs_a_menu_module() -> None:
    base = _problem().spec.model_dump()
    ProblemSpec.model_validate(base)
    with pytest.raises(ValidationError, match="needs `functions`"):
        ProblemSpec.model_validate({**base, "functions": None})


def test_a_missing_menu_module_fails_at_load(tmp_path: Path) -> None:
    root = tmp_path / MENU_PROBLEM
    shutil.copytree(FIXTURES / MENU_PROBLEM, root, ignore=shutil.ignore_patterns("solutions"))
    (root / "functions.py").unlink()
    with pytest.raises(ProblemError, match="no menu module"):
        load_problem(root)


# ------------------------------------------------------------------------------------- conversion


def test_a_run_panel_input_names_a_menu_function() -> None:
    case = _problem().custom_case({"f": "sine", "x": [[1.0, 2.0]]})
    assert case.inputs[0] == MenuChoice("sine")


@pytest.mark.parametrize(
    ("f", "words"),
    [
        ("cubic", "unknown function 'cubic' (one of: square, sine)"),
        (3.0, "expected the name of a function as a string"),
        (["square"], "expected the name of a function as a string"),
        ("__import__('os')", "unknown function"),
    ],
)
def test_a_bad_function_name_is_an_input_error_naming_the_argument(f: Any, words: str) -> None:
    with pytest.raises(InputError) as caught:
        _problem().custom_case({"f": f, "x": [[1.0]]})
    assert caught.value.path == "f" and words in caught.value.reason


def test_the_reference_gets_the_menu_function_itself() -> None:
    menu = _problem().menu()
    assert sorted(menu) == ["sine", "square"]
    import jax.numpy as jnp

    assert float(menu["square"](jnp.array(3.0))) == 9.0


# ------------------------------------------------------------------------------------- the plan, the tracer


def test_each_function_gets_its_own_signature_and_the_menu_goes_to_the_tracer() -> None:
    problem = _problem()
    cases = [problem.custom_case({"f": f, "x": [[1.0]]}) for f in ("square", "sine", "square")]
    job = build_session(problem, "code", cases, [False, False, False], max_output_bytes=1 << 20)
    assert [s.args[0] for s in job.sigs] == [{"function": "square"}, {"function": "sine"}]
    assert [c.sig for c in job.cases] == [0, 1, 0]
    # The function adds no input leaf: x is the program's one input.
    assert len(job.cases[0].leaves) == 1
    assert job.functions == (FIXTURES / MENU_PROBLEM / "functions.py").read_text()


def test_the_tracer_loads_the_menu_outside_sys_modules() -> None:
    from sandbox.inside.tracer import load_menu

    before = set(sys.modules)
    menu = load_menu((FIXTURES / MENU_PROBLEM / "functions.py").read_text())
    assert {"square", "sine"} <= set(menu)
    assert "problem_functions" not in sys.modules and "functions" not in set(sys.modules) - before
    assert load_menu(None) == {} and load_menu("") == {}


def test_the_statement_shows_the_function_by_name() -> None:
    problem = _problem()
    assert format_inputs(problem, problem.public_cases[0]).startswith("f = square, x = [")


# ------------------------------------------------------------------------------------- end to end


def _solution(name: str) -> str:
    return (FIXTURES / MENU_PROBLEM / "solutions" / name).read_text()


@pytest.mark.slow
def test_calling_a_menu_function_it_was_not_given_is_a_wrong_answer(graded: Grader) -> None:
    problem = _problem()
    result = graded(problem, _solution("wrong_answer/always_square.py"))
    assert result.verdict is Verdict.WRONG_ANSWER
    # Right exactly where the case's f is the one it always uses.
    given = {c.name: str(c.inputs[0]) for c in problem.cases}
    assert {c.name for c in result.cases if c.verdict is Verdict.ACCEPTED} == {
        name for name, f in given.items() if f == "square"
    }


@pytest.mark.slow
def test_the_menu_module_cannot_be_imported(graded: Grader) -> None:
    code = "import problem_functions\n\n\ndef running_total(f, x):\n    return problem_functions.sine(x)\n"
    result = graded(_problem(), code)
    assert result.verdict is Verdict.RUNTIME_ERROR and "ModuleNotFoundError" in result.message


@pytest.mark.slow
def test_a_correct_solution_is_accepted_on_every_function(graded: Grader) -> None:
    result = graded(_problem(), _solution("accepted/scan_over_rows.py"))
    assert result.verdict is Verdict.ACCEPTED, result.message


def test_each_function_counts_as_its_own_compile_signature() -> None:
    from judge.check.coverage_check import signature

    problem = _problem()
    a, b = (problem.custom_case({"f": f, "x": [[1.0]]}) for f in ("square", "sine"))
    assert signature(problem.spec.args, a.inputs, a.dtype) != signature(problem.spec.args, b.inputs, b.dtype)
