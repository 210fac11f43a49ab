"""What jit made of the code (issue 25, point 2): the marked lines of a program text, and in the sandbox the
jaxpr and StableHLO of every public case, never of a hidden signature."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from judge.feedback.program_view import Mark, marks
from judge.problems import Problem, ProblemSet
from judge.results import GradeResult
from judge.verdicts import Verdict
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.program_pool import pooled_grader

#: Tracer slots of this module's pool (the feedback tests' range is 1400-1499).
SLOT_BASE = 1440

JAXPR = """{ lambda ; a:bf16[3]. let
    b:f32[] _:f32[3] = scan[
      jaxpr={ lambda ; c:f32[] d:bf16[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          f:f32[] = pure_callback[callback=g] e
        in (f, c) }
    ] 0.0:f32[] a
  in (b,) }"""

STABLEHLO = """module @jit_f {
  func.func public @main(%arg0: tensor<3xbf16>) -> tensor<f32> {
    %0:3 = stablehlo.while(%iterArg = %arg0) : tensor<3xbf16>
    %1 = stablehlo.convert %arg0 : (tensor<3xbf16>) -> tensor<3xf32>
    %2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%1) : (tensor<3xf32>) -> tensor<3xf32>
    %3 = stablehlo.custom_call @lapack_sgesdd_ffi(%1) : (tensor<3xf32>) -> tensor<3xf32>
    return %0#2 : tensor<f32>
  }
}"""


def test_jaxpr_lines_are_marked() -> None:
    assert marks(JAXPR, "jaxpr") == [Mark(2, "loop"), Mark(4, "convert"), Mark(5, "host_callback")]


def test_stablehlo_lines_are_marked() -> None:
    assert marks(STABLEHLO, "stablehlo") == [
        Mark(3, "loop"),
        Mark(4, "convert"),
        Mark(5, "host_callback"),
        Mark(6, "custom_call"),
    ]


def test_a_hostile_text_is_only_text() -> None:
    assert marks("\x1b[2J stablehlo.add\n" * 3, "stablehlo") == []


@pytest.fixture(scope="module")
def graded() -> Iterator[Callable[[Problem, str], GradeResult]]:
    with pooled_grader(SLOT_BASE) as grader:
        yield grader


@pytest.mark.slow
def test_public_cases_show_their_program_and_hidden_signatures_none(
    graded: Callable[[Problem, str], GradeResult],
) -> None:
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    code = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "float32_then_cast.py").read_text()
    result = graded(problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    shown = [c for c in result.cases if c.visibility == "public"]
    assert shown and all(c.program is not None for c in shown)
    for case in shown:
        assert case.program is not None
        assert "convert_element_type" in case.program.jaxpr and "mul" in case.program.jaxpr
        assert "stablehlo.multiply" in case.program.stablehlo
        assert any(m.kind == "convert" for m in case.program.jaxpr_marks)
        assert any(m.kind == "convert" for m in case.program.stablehlo_marks)
    assert all(c.program is None for c in result.cases if c.visibility == "hidden")
    # Only the public signatures' programs: as many distinct views as public signatures at most.
    views = {c.program.jaxpr for c in shown if c.program is not None}
    assert len(views) <= len(shown)
