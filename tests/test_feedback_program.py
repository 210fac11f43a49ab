"""What jit made of the code (issue 25, point 2): the marked lines of a program text, and in the sandbox the
jaxpr and StableHLO of every public case, never of a hidden signature."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, Literal

import numpy as np
import pytest

from judge.core.grader import ProcessesSource, grade
from judge.core.problems import Case, Problem, ProblemSet
from judge.core.results import GradeResult
from judge.core.verdicts import Verdict
from judge.feedback.program_view import Mark, marks
from sandbox.session.monitor import ProgramReport, RawRun, SessionJob, SigPlan
from sandbox.session.reports import ProgramText
from sandbox.session.tracer_messages import keep_views
from sandbox.shared.wire import ProtocolError
from tests.conftest import FIXTURE_SLUG, FIXTURES
from tests.program_pool import default_pool, pool_source

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


def test_marks_are_remembered_by_text_and_dialect_and_each_call_gets_its_own_list() -> None:
    first = marks(JAXPR, "jaxpr")
    first.clear()
    assert marks(JAXPR, "jaxpr") == [Mark(2, "loop"), Mark(4, "convert"), Mark(5, "host_callback")]
    assert marks(JAXPR, "stablehlo") == []  # the same text in the other dialect is scanned as that one
    assert marks(JAXPR + "\n  e:f32[] = while[cond_jaxpr={}]", "jaxpr")[-1] == Mark(9, "loop")
    assert marks("lone \udc80 surrogate", "jaxpr") == []


# ------------------------------------------------------------------------- marks on real JAX programs


def _real_view(function: Callable[..., Any], *args: Any) -> dict[str, str]:
    """The view the tracer would send for ``function`` (``sandbox.inside.tracer._program_view``): the jaxpr
    as JAX prints it and the StableHLO text of the same trace, lowered in this process as the tracer does."""
    import jax

    from sandbox.inside.lowering import Lowerer
    from sandbox.inside.tracer import _program_view

    jaxpr = jax.make_jaxpr(function)(*args)
    lower = Lowerer()
    lower(jaxpr)
    view = _program_view(jaxpr, lower, lower.last)
    assert view is not None and view["stablehlo"], "the program could not be printed"
    return view


def _marked(text: str, dialect: Literal["jaxpr", "stablehlo"]) -> dict[str, list[str]]:
    """The marked lines of ``text`` by kind."""
    lines = text.splitlines()
    found: dict[str, list[str]] = {}
    for mark in marks(text, dialect):
        found.setdefault(mark.kind, []).append(lines[mark.line - 1])
    return found


def test_a_scan_and_a_fori_loop_are_marked_as_loops_in_both_texts() -> None:
    import jax.numpy as jnp
    from jax import lax

    def running_sum(x: Any) -> Any:
        return lax.scan(lambda carry, v: (carry + v, carry * v), jnp.float32(0), x)

    def doubled(x: Any, n: Any) -> Any:  # a traced bound: a while loop
        return lax.fori_loop(0, n, lambda i, a: a * 2.0, x)

    for function, args in ((running_sum, (jnp.ones(3),)), (doubled, (jnp.ones(3), 3))):
        view = _real_view(function, *args)
        jaxpr, stablehlo = _marked(view["jaxpr"], "jaxpr"), _marked(view["stablehlo"], "stablehlo")
        assert jaxpr.get("loop") and all(re.search(r"\b(scan|while)\[", ln) for ln in jaxpr["loop"]), view
        assert stablehlo.get("loop") and all("stablehlo.while" in ln for ln in stablehlo["loop"]), view
        assert "custom_call" not in jaxpr and "custom_call" not in stablehlo
        assert "host_callback" not in jaxpr and "host_callback" not in stablehlo


def test_a_host_callback_is_marked_as_one_in_both_texts() -> None:
    import jax
    import jax.numpy as jnp

    def pure(x: Any) -> Any:
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)  # type: ignore[no-untyped-call]

    def printed(x: Any) -> Any:
        jax.debug.print("x = {}", x)
        return x * 2

    for function, primitive in ((pure, "pure_callback["), (printed, "debug_print[")):
        view = _real_view(function, jnp.ones(3))
        jaxpr, stablehlo = _marked(view["jaxpr"], "jaxpr"), _marked(view["stablehlo"], "stablehlo")
        assert [primitive in ln for ln in jaxpr.get("host_callback", [])] == [True], view["jaxpr"]
        (line,) = stablehlo.get("host_callback", [])
        assert "stablehlo.custom_call @" in line and "callback" in line, view["stablehlo"]
        # A host callback is a custom call in StableHLO, but it is named as what it is, not twice.
        assert "custom_call" not in jaxpr and "custom_call" not in stablehlo


@pytest.mark.parametrize("routine", ["cholesky", "eigh", "qr", "solve_triangular"])
def test_a_linalg_routine_making_a_custom_call_is_marked_in_both_texts(routine: str) -> None:
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    functions: dict[str, Callable[[Any], Any]] = {
        "cholesky": jnp.linalg.cholesky,
        "eigh": jnp.linalg.eigh,
        "qr": jnp.linalg.qr,
        "solve_triangular": lambda a: jsl.solve_triangular(a, a),
    }
    view = _real_view(functions[routine], jnp.eye(3) * 2.0)
    jaxpr, stablehlo = _marked(view["jaxpr"], "jaxpr"), _marked(view["stablehlo"], "stablehlo")
    primitive = "triangular_solve" if routine == "solve_triangular" else routine
    assert jaxpr.get("custom_call"), view["jaxpr"]
    assert all(f"= {primitive}" in ln for ln in jaxpr["custom_call"]), jaxpr["custom_call"]
    # The jit wrapper's ``name=cholesky`` is not the call itself.
    assert not any(f"name={routine}" in ln for ln in jaxpr["custom_call"])
    assert stablehlo.get("custom_call"), view["stablehlo"]
    assert all(re.search(r"stablehlo\.custom_call @lapack_\w+", ln) for ln in stablehlo["custom_call"])
    assert "host_callback" not in jaxpr and "host_callback" not in stablehlo


def test_a_custom_derivative_is_not_a_custom_call() -> None:
    """``jax.nn.relu`` is a ``custom_jvp_call`` in the jaxpr and plain StableHLO: no custom call to mark."""
    import jax
    import jax.numpy as jnp

    view = _real_view(jax.nn.relu, jnp.ones(3))
    assert "custom_jvp_call[" in view["jaxpr"]
    assert "custom_call" not in _marked(view["jaxpr"], "jaxpr")
    assert "stablehlo.custom_call" not in view["stablehlo"]


# --------------------------------------------------------------------- the monitor keeps public views only


def _session_with(sigs: list[SigPlan]) -> Any:
    """What ``keep_views`` reads of a session: the job's signatures and the record of their programs
    (every signature traced, a secret one too, so only the monitor's own filter can drop its view)."""

    class Stub:
        job = SessionJob(code="", function="f", args=[], sigs=sigs, cases=[])
        raw = RawRun(programs={s.id: ProgramReport(sig=s.id) for s in sigs})

    return Stub()


def test_the_monitor_drops_a_view_a_hostile_tracer_claims_for_a_secret_signature() -> None:
    first, second = SigPlan(0, [], [], secret=False), SigPlan(1, [], [], secret=False)
    secret = SigPlan(2, [], [], secret=True)
    session = _session_with([first, second, secret])
    claimed = [
        {"sig": 2, "jaxpr": "{ lambda ; a:bf16[5]. let in (a,) }", "stablehlo": "tensor<5xbf16>"},
        {"sig": 0, "jaxpr": "public jaxpr", "stablehlo": "public hlo", "extra": "x" * 10},
    ]
    keep_views(session.job, session.raw, claimed)
    assert session.raw.programs[2].view is None
    assert session.raw.programs[0].view == ProgramText("public jaxpr", "public hlo")
    assert session.raw.programs[1].view is None
    # Junk, an unknown signature, a second view of a signature and views past one per public signature
    # are ignored; a text that is not a string is shown as nothing.
    session = _session_with([first, second, secret])
    keep_views(
        session.job,
        session.raw,
        [
            {"sig": 0, "jaxpr": ["not text"], "stablehlo": "hlo"},
            {"sig": 0, "jaxpr": "again", "stablehlo": "again"},
            {"sig": 1, "jaxpr": "past the cap", "stablehlo": ""},
        ],
    )
    assert session.raw.programs[0].view == ProgramText("", "hlo")
    assert session.raw.programs[1].view is None and session.raw.programs[2].view is None
    session = _session_with([first, second, secret])
    keep_views(
        session.job, session.raw, ["junk", {"sig": 9, "jaxpr": "unknown"}, {"sig": 2, "jaxpr": "secret"}]
    )
    assert all(report.view is None for report in session.raw.programs.values())
    with pytest.raises(ProtocolError):
        keep_views(session.job, session.raw, {"sig": 0, "jaxpr": "not in a list"})


# --------------------------------------------------------------------------------- in the sandbox


@pytest.fixture(scope="module")
def source() -> Iterator[ProcessesSource]:
    """A one-pair warm pool of the default backend (tracer slots from ``SLOT_BASE``) as a pair source."""
    with default_pool(SLOT_BASE) as pool:
        yield pool_source(pool)


@pytest.fixture(scope="module")
def graded(source: ProcessesSource) -> Callable[[Problem, str], GradeResult]:
    return lambda problem, code: grade(problem, code, source)


def _signature(case: Case) -> tuple[str, ...]:
    """The abstract types of a case's flat inputs as a jaxpr prints them (``f32[2]``; a Python number is
    traced as float32)."""
    import jax
    from jax.core import ShapedArray

    return tuple(
        ShapedArray(np.shape(leaf), jax.dtypes.canonicalize_dtype(np.result_type(leaf))).str_short(  # type: ignore[no-untyped-call]
            short_dtypes=True
        )
        for leaf in jax.tree.leaves(case.inputs)
    )


def _view_signature(jaxpr: str) -> tuple[str, ...]:
    """The input types in a jaxpr's first line, ``{ lambda ; a:f32[] b:f32[2] c:f32[]. let``."""
    header = jaxpr.splitlines()[0]
    assert header.startswith("{ lambda ") and header.endswith(". let"), header
    return tuple(re.findall(r"\w+:(\w+\[[\d,]*\])", header.split(";", 1)[1]))


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
    # Each public case shows the program of its own signature, and the views are exactly the public
    # signatures' (all float32 here: only hidden cases have a bfloat16 signature).
    by_name = {c.name: c for c in problem.cases}
    for case in shown:
        assert case.program is not None
        assert _view_signature(case.program.jaxpr) == _signature(by_name[case.name]), case.name
    public = {_signature(c) for c in problem.public_cases}
    assert {_view_signature(c.program.jaxpr) for c in shown if c.program is not None} == public
    hidden_only = {_signature(c) for c in problem.cases if c.hidden} - public
    assert any("bf16[" in t for s in hidden_only for t in s), "the fixture lost its bfloat16 hidden cases"
    serialized = result.model_dump_json()
    assert "xbf16>" not in serialized and ":bf16[" not in serialized


@pytest.mark.slow
def test_no_hidden_signatures_program_text_reaches_the_result(
    source: ProcessesSource, graded: Callable[[Problem, str], GradeResult]
) -> None:
    """The very text the tracer makes of each hidden-only signature (got by running the same inputs as a
    custom case, whose program is shown) appears nowhere in the result of a grading with the hidden cases."""
    problem = ProblemSet(FIXTURES).get(FIXTURE_SLUG)
    code = (FIXTURES / FIXTURE_SLUG / "solutions" / "accepted" / "float32_then_cast.py").read_text()
    public = {_signature(c) for c in problem.public_cases}
    secret: dict[tuple[str, ...], Case] = {}
    for hidden in problem.hidden_cases:
        if _signature(hidden) not in public:
            secret.setdefault(_signature(hidden), hidden)
    chosen = [c for c in secret.values() if c.dtype == "bfloat16"][:1] + [
        c for c in secret.values() if c.dtype != "bfloat16"
    ][:1]
    assert len(chosen) == 2, secret
    custom = [problem.custom_case(dict(c.definition.args), name=c.name, dtype=c.dtype) for c in chosen]
    probe = grade(problem, code, source, cases=(), custom=custom)
    assert probe.verdict is Verdict.ACCEPTED, probe.message
    texts: list[str] = []
    for shown, original in zip(probe.cases, chosen, strict=True):
        assert shown.visibility == "custom" and shown.program is not None, shown
        assert _view_signature(shown.program.jaxpr) == _signature(original)
        texts += [shown.program.jaxpr, shown.program.stablehlo, shown.program.jaxpr.splitlines()[0]]
    assert any("bf16[" in t for t in texts)
    result = graded(problem, code)
    assert result.verdict is Verdict.ACCEPTED, result.message
    serialized = result.model_dump_json()
    for text in texts:
        assert json.dumps(text, ensure_ascii=False)[1:-1] not in serialized, text[:200]
